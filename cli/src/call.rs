//! `switchboard call` and `switchboard subscribe`: the client on the command line.
//!
//! Exit codes: 0 answered (or, for `subscribe`, ended by Ctrl-C or `--count`),
//! 1 the server answered with an error object (printed on stdout), 2 usage
//! (bad options, PARAMS not a JSON array or object, an unsupported URL), 3 the
//! transport, a timeout or an invalid answer (said on stderr).

use std::borrow::Cow;
use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::value::RawValue;
use switchboard_client::{Client, Error};

const USAGE: u8 = 2;
const RPC: u8 = 1;
const TRANSPORT: u8 = 3;

/// `switchboard call`'s command line.
#[derive(clap::Args, Debug)]
pub(crate) struct CallArgs {
    /// http://HOST:PORT/PATH or ws://HOST:PORT/PATH
    url: String,
    /// The method to call
    method: String,
    /// The params: a JSON array or object
    #[arg(value_parser = params)]
    params: Option<Box<RawValue>>,
    /// Time to wait for the answer, 0 for ever
    #[arg(short, long, value_name = "SECS", value_parser = timeout, default_value = "30",
          allow_hyphen_values = true)]
    timeout: Timeout,
    /// Send `Authorization: Bearer TOKEN`
    #[arg(long, env = "SWITCHBOARD_TOKEN", hide_env_values = true)]
    token: Option<String>,
}

/// `switchboard subscribe`'s command line.
#[derive(clap::Args, Debug)]
pub(crate) struct SubscribeArgs {
    #[command(flatten)]
    call: CallArgs,
    /// The unsubscribe method [default: METHOD with its last `subscribe` made
    /// `unsubscribe`: eth_subscribe → eth_unsubscribe]
    #[arg(long, value_name = "METHOD")]
    unsubscribe: Option<String>,
    /// Stop after N notifications
    #[arg(short = 'n', long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    count: Option<u64>,
}

/// `--timeout`: `None` waits for ever.
#[derive(Clone, Copy, Debug)]
struct Timeout(Option<Duration>);

fn timeout(v: &str) -> Result<Timeout, String> {
    let secs: f64 = v
        .parse()
        .ok()
        .filter(|s: &f64| s.is_finite() && *s >= 0.0)
        .ok_or("not a number of seconds")?;
    Ok(Timeout((secs > 0.0).then(|| Duration::from_secs_f64(secs))))
}

fn params(v: &str) -> Result<Box<RawValue>, String> {
    let raw: Box<RawValue> =
        serde_json::from_str(v).map_err(|e| format!("PARAMS is not JSON: {e}"))?;
    if !matches!(raw.get().as_bytes().first(), Some(b'[' | b'{')) {
        return Err(format!(
            "PARAMS must be a JSON array or object, not {}",
            raw.get()
        ));
    }
    Ok(raw)
}

struct Options {
    url: String,
    method: String,
    params: Option<Box<RawValue>>,
    timeout: Option<Duration>,
    token: Option<String>,
    unsubscribe: Option<String>,
    count: Option<u64>,
}

impl From<CallArgs> for Options {
    fn from(a: CallArgs) -> Options {
        Options {
            url: a.url,
            method: a.method,
            params: a.params,
            timeout: a.timeout.0,
            token: a.token.filter(|t| !t.is_empty()),
            unsubscribe: None,
            count: None,
        }
    }
}

impl TryFrom<SubscribeArgs> for Options {
    type Error = String;
    fn try_from(a: SubscribeArgs) -> Result<Options, String> {
        let mut o = Options::from(a.call);
        o.count = a.count;
        o.unsubscribe = match a.unsubscribe {
            Some(u) => Some(u),
            None => Some(unsubscribe_for(&o.method).ok_or_else(|| {
                format!(
                    "{}: no unsubscribe method by convention; give --unsubscribe METHOD",
                    o.method
                )
            })?),
        };
        Ok(o)
    }
}

/// The conventional unsubscribe method: `eth_subscribe` → `eth_unsubscribe`
/// (the last `subscribe` in the name becomes `unsubscribe`).
pub(crate) fn unsubscribe_for(method: &str) -> Option<String> {
    let at = method.rfind("subscribe")?;
    if method[..at].ends_with("un") {
        return None;
    }
    Some(format!("{}un{}", &method[..at], &method[at..]))
}

/// `json` on one line: the whitespace outside strings removed (a JSON string
/// holds no raw line break).
pub(crate) fn one_line(json: &str) -> Cow<'_, str> {
    if !json.contains(['\n', '\r']) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
        if in_string {
            out.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
        } else if !matches!(c, ' ' | '\t' | '\n' | '\r') {
            in_string = c == '"';
            out.push(c);
        }
    }
    Cow::Owned(out)
}

fn fail(e: &Error) -> ExitCode {
    match e {
        Error::Rpc(o) => {
            println!("{}", one_line(&o.to_json()));
            ExitCode::from(RPC)
        }
        Error::Unsupported(_) | Error::InvalidParams(_) => {
            eprintln!("switchboard: {e}");
            ExitCode::from(USAGE)
        }
        _ => {
            eprintln!("switchboard: {e}");
            ExitCode::from(TRANSPORT)
        }
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread runtime builds")
}

async fn connect(o: &Options) -> Result<Client, Error> {
    let mut b = Client::builder().timeout(o.timeout);
    if let Some(t) = &o.token {
        b = b.bearer_token(t.clone());
    }
    b.connect(&o.url).await
}

/// `switchboard call URL METHOD [PARAMS]`.
pub(crate) fn call(args: CallArgs) -> ExitCode {
    let o = Options::from(args);
    runtime().block_on(async {
        let client = match connect(&o).await {
            Ok(c) => c,
            Err(e) => return fail(&e),
        };
        match client.request_raw(&o.method, &o.params).await {
            Ok(r) => {
                let mut out = std::io::stdout().lock();
                match writeln!(out, "{}", one_line(r.as_str())).and_then(|()| out.flush()) {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(_) => ExitCode::from(TRANSPORT),
                }
            }
            Err(e) => fail(&e),
        }
    })
}

/// `switchboard subscribe URL METHOD [PARAMS]`.
pub(crate) fn subscribe(args: SubscribeArgs) -> ExitCode {
    let o = match Options::try_from(args) {
        Ok(o) => o,
        Err(why) => {
            eprintln!("switchboard subscribe: {why}");
            return ExitCode::from(USAGE);
        }
    };
    if !o.url.starts_with("ws://") {
        eprintln!(
            "switchboard subscribe: {}: subscriptions need a WebSocket URL (ws://HOST:PORT/)",
            o.url
        );
        return ExitCode::from(USAGE);
    }
    let unsubscribe = o.unsubscribe.clone().expect("set by parse");
    runtime().block_on(async {
        let client = match connect(&o).await {
            Ok(c) => c,
            Err(e) => return fail(&e),
        };
        let mut sub = match client.subscribe(&o.method, &o.params, &unsubscribe).await {
            Ok(s) => s,
            Err(e) => return fail(&e),
        };
        let mut seen = 0u64;
        let ctrl_c = tokio::signal::ctrl_c();
        tokio::pin!(ctrl_c);
        loop {
            let next = tokio::select! {
                n = sub.next() => n,
                _ = &mut ctrl_c => break,
            };
            match next {
                Some(Ok(n)) => {
                    let mut out = std::io::stdout().lock();
                    if writeln!(out, "{}", one_line(n.as_str()))
                        .and_then(|()| out.flush())
                        .is_err()
                    {
                        // Nobody reads any more: unsubscribe and stop.
                        break;
                    }
                    seen += 1;
                    if o.count == Some(seen) {
                        break;
                    }
                }
                Some(Err(e)) => return fail(&e),
                None => {
                    eprintln!("switchboard subscribe: the connection closed");
                    return ExitCode::from(TRANSPORT);
                }
            }
        }
        match sub.unsubscribe().await {
            Ok(_) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("switchboard subscribe: unsubscribing: {e}");
                ExitCode::SUCCESS
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unsubscribe_convention() {
        assert_eq!(
            unsubscribe_for("eth_subscribe").as_deref(),
            Some("eth_unsubscribe")
        );
        assert_eq!(unsubscribe_for("subscribe").as_deref(), Some("unsubscribe"));
        assert_eq!(
            unsubscribe_for("parity_subscribe").as_deref(),
            Some("parity_unsubscribe")
        );
        assert_eq!(unsubscribe_for("eth_unsubscribe"), None);
        assert_eq!(unsubscribe_for("watch"), None);
    }

    #[test]
    fn one_line_removes_whitespace_outside_strings_only() {
        assert_eq!(one_line("[1, 2]"), "[1, 2]");
        assert_eq!(
            one_line("{\n  \"a b\": [1,\n 2],\r\n \"c\": \"x\\\" \\\\\"\n}"),
            "{\"a b\":[1,2],\"c\":\"x\\\" \\\\\"}"
        );
    }

    fn parse(args: &[&str], subscribe: bool) -> Result<Options, String> {
        use clap::Parser as _;
        let command = if subscribe { "subscribe" } else { "call" };
        let cli = crate::Cli::try_parse_from(["switchboard", command].iter().chain(args))
            .map_err(|e| e.to_string())?;
        match cli.command {
            crate::Command::Call(a) => Ok(Options::from(a)),
            crate::Command::Subscribe(a) => Options::try_from(a),
            _ => unreachable!("parsed as {command}"),
        }
    }

    #[test]
    fn options_and_params() {
        let o = parse(
            &["--timeout", "2.5", "http://x/", "m", "[1]", "--token=t"],
            false,
        )
        .unwrap();
        assert_eq!(o.timeout, Some(Duration::from_millis(2500)));
        assert_eq!(o.token.as_deref(), Some("t"));
        assert_eq!(o.params.unwrap().get(), "[1]");
        assert_eq!(
            parse(&["http://x/", "m", "-t", "0"], false)
                .unwrap()
                .timeout,
            None
        );
        assert_eq!(
            parse(&["http://x/", "m"], false).unwrap().timeout,
            Some(Client::DEFAULT_TIMEOUT)
        );
        for bad in [
            &["http://x/"][..],
            &["http://x/", "m", "5"],
            &["http://x/", "m", "[1,"],
            &["http://x/", "m", "[]", "extra"],
            &["--timeout", "-1", "http://x/", "m"],
            &["--bogus", "http://x/", "m"],
            &["--unsubscribe", "u", "http://x/", "m"],
        ] {
            assert!(parse(bad, false).is_err(), "{bad:?}");
        }
        let why = parse(&["--timeout", "-1", "http://x/", "m"], false)
            .err()
            .unwrap();
        assert!(why.contains("not a number of seconds"), "{why}");
        let o = parse(&["ws://x/", "eth_subscribe", "[\"newHeads\"]"], true).unwrap();
        assert_eq!(o.unsubscribe.as_deref(), Some("eth_unsubscribe"));
        assert!(parse(&["ws://x/", "watch"], true).is_err());
        let o = parse(
            &["ws://x/", "watch", "--unsubscribe", "unwatch", "-n", "3"],
            true,
        )
        .unwrap();
        assert_eq!(
            (o.unsubscribe.as_deref(), o.count),
            (Some("unwatch"), Some(3))
        );
        assert!(
            parse(
                &["ws://x/", "watch", "--unsubscribe", "u", "--count", "0"],
                true
            )
            .is_err()
        );
    }
}
