//! `switchboard serve`: options (clap), then HTTP (tokio + hyper), stdio or a Unix socket
//! (both on the duplex driver).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use switchboard::{ParserConfig, Router};
use switchboard_server::duplex::{Duplex, DuplexConfig};
use switchboard_server::http::{ServeConfig, Switchboard, serve_with, serve_with_layer};
use switchboard_server::site::Site;
use switchboard_server::stdio::Framing;
use switchboard_server::streamable::{Streamable, StreamableConfig};
use switchboard_server::ws::WsConfig;
use switchboard_server::{chain, demo};

/// `switchboard serve`'s command line.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("duplex").args(["stdio", "unix"])))]
pub(crate) struct Args {
    /// Answer messages on stdin/stdout until EOF instead of HTTP (one connection, its
    /// calls run concurrently; logs go to stderr)
    #[arg(long)]
    stdio: bool,
    /// Serve on a Unix domain socket instead of HTTP (Ethereum-style IPC), one
    /// connection per client, until Ctrl-C
    #[arg(long, value_name = "PATH")]
    unix: Option<PathBuf>,
    /// The framing of --stdio and --unix: `ndjson` (one message per line) or `lsp`
    /// (Content-Length headers) [default: ndjson]
    #[arg(long, value_name = "FRAMING", requires = "duplex", value_parser = framing)]
    framing: Option<Framing>,
    /// The address to listen on (port 0: any free port; the address is printed)
    #[arg(short, long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    listen: String,
    /// Require `Authorization: Bearer TOKEN` (else 401)
    #[arg(long, env = "SWITCHBOARD_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Larger bodies get 413 (on streams: -32600)
    #[arg(long, value_name = "N", value_parser = max_message_bytes,
          default_value_t = ParserConfig::new().get_max_message_bytes())]
    max_message_bytes: usize,
    /// Longer batches get -32600
    #[arg(long, value_name = "N", value_parser = positive,
          default_value_t = ParserConfig::new().get_max_batch_len())]
    max_batch_len: usize,
    /// Worker threads [default: the number of CPUs; --stdio: 1, --unix: 2]
    #[arg(long, value_name = "N", value_parser = positive)]
    threads: Option<usize>,
    /// Connections served at once; more wait in the listen backlog
    #[arg(long, value_name = "N", value_parser = positive,
          default_value_t = ServeConfig::default().max_connections)]
    max_connections: usize,
    /// Time to send a body, else 408
    #[arg(long, value_name = "SECS", value_parser = secs, default_value = "30")]
    body_timeout: Duration,
    /// Time to send request headers, idle keep-alive connections included, else closed
    #[arg(long, value_name = "SECS", value_parser = secs, default_value = "30")]
    header_timeout: Duration,
    /// Time an answer may wait for the client to read any of it, else closed (HTTP,
    /// WebSocket, --unix)
    #[arg(long, value_name = "SECS", value_parser = secs, default_value = "30")]
    write_timeout: Duration,
    /// WebSocket (GET / with Upgrade: websocket): ping after this much silence
    #[arg(long, value_name = "SECS", value_parser = secs, default_value = "30")]
    ws_ping_interval: Duration,
    /// Close a silent WebSocket (1000)
    #[arg(long, value_name = "SECS", value_parser = secs, default_value = "90")]
    ws_idle_timeout: Duration,
    /// Larger WebSocket frames close 1009 (messages over --max-message-bytes too)
    #[arg(long, value_name = "N", value_parser = positive,
          default_value_t = WsConfig::default().max_frame_bytes)]
    ws_max_frame_bytes: usize,
    /// MCP's Streamable HTTP (server-sent events) at PATH on the same listener:
    /// sessions start with `initialize`, other POSTs are stateless (a handler's
    /// notifications stream before its answer); `off` turns it off
    #[arg(long, value_name = "PATH", value_parser = stream_path, default_value = "/mcp")]
    stream_path: StreamPath,
    /// The demo chain's block time: eth_blockNumber and eth_subscribe newHeads (on
    /// connections that can push: --stdio, --unix, WebSocket, --stream-path)
    #[arg(long, value_name = "SECS", value_parser = heads_interval, default_value = "1")]
    heads_interval: Duration,
    /// Log one line per HTTP request on stderr (method, path, status, duration,
    /// bytes), at info on target switchboard_server::access
    #[arg(long, conflicts_with = "duplex")]
    pub(crate) access_log: bool,
    /// Allow browser calls from ORIGIN (CORS: preflights answered, answers carry
    /// Access-Control-Allow-Origin); repeatable or comma-separated, `*` for any.
    /// The Streamable HTTP path admits the same origins
    #[arg(long, value_name = "ORIGIN", value_delimiter = ',', value_parser = cors_origin,
          conflicts_with = "duplex")]
    cors: Vec<String>,
    /// Answer GET and HEAD of PATH with 200 {"status":"ok"} (before the token
    /// check; no JSON-RPC there)
    #[arg(long, value_name = "PATH", value_parser = health_path, conflicts_with = "duplex")]
    health: Option<String>,
    /// Serve HTTP/1.1 only (no HTTP/2 cleartext)
    #[arg(long, conflicts_with = "duplex")]
    http1_only: bool,
    /// Also serve the static files of DIR on GET (`/`: DIR/index.html; 404 for
    /// other paths): the playground that playground/build.sh builds
    #[arg(long, value_name = "DIR", conflicts_with = "duplex")]
    playground: Option<std::path::PathBuf>,
    /// Also `bench_subscribe [COUNT]`: a subscription sending COUNT notifications
    /// (results 0, 1, ...) as fast as the client reads [default COUNT: 1000000];
    /// `bench_unsubscribe` stops it (benches/ws.sh)
    #[arg(long)]
    bench: bool,
}

/// `--stream-path`: where Streamable HTTP is mounted (`None`: nowhere).
#[derive(Clone, Debug)]
pub(crate) struct StreamPath(Option<String>);

fn cors_origin(v: &str) -> Result<String, String> {
    let _valid = switchboard_server::http::cors(&[v]).map_err(|e| e.to_string())?;
    Ok(v.to_owned())
}

fn health_path(v: &str) -> Result<String, String> {
    if v.starts_with('/') {
        Ok(v.to_owned())
    } else {
        Err("takes a path starting with /".into())
    }
}

fn framing(v: &str) -> Result<Framing, String> {
    v.parse()
}

fn positive(v: &str) -> Result<usize, String> {
    v.parse::<usize>()
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| "not a positive integer".into())
}

fn max_message_bytes(v: &str) -> Result<usize, String> {
    let n = positive(v)?;
    if n > ParserConfig::MAX_MESSAGE_BYTES_CAP {
        return Err(format!("at most {}", ParserConfig::MAX_MESSAGE_BYTES_CAP));
    }
    Ok(n)
}

fn secs(v: &str) -> Result<Duration, String> {
    v.parse()
        .ok()
        .filter(|s: &f64| s.is_finite() && *s > 0.0 && *s < 1e9)
        .map(Duration::from_secs_f64)
        .ok_or_else(|| "not a positive number of seconds".into())
}

fn heads_interval(v: &str) -> Result<Duration, String> {
    let d = secs(v)?;
    if d < Duration::from_millis(1) {
        return Err("at least 0.001 seconds".into());
    }
    Ok(d)
}

fn stream_path(v: &str) -> Result<StreamPath, String> {
    match v {
        "off" => Ok(StreamPath(None)),
        p if p.starts_with('/') => Ok(StreamPath(Some(p.into()))),
        _ => Err("a path starting with / (or off)".into()),
    }
}

struct Options {
    stdio: bool,
    unix: Option<PathBuf>,
    framing: Framing,
    listen: String,
    token: Option<String>,
    config: ParserConfig,
    threads: Option<usize>,
    body_timeout: Duration,
    header_timeout: Duration,
    write_timeout: Duration,
    max_connections: usize,
    ws: WsConfig,
    heads_interval: Duration,
    /// Where Streamable HTTP is mounted (`None`: nowhere).
    stream_path: Option<String>,
    /// `--access-log`: each HTTP request's line at info.
    access_log: bool,
    /// `--bench`: the load tool's subscription too ([`crate::bench`]).
    bench: bool,
    /// `--playground DIR`: the static site served on `GET` ([`switchboard_server::site`]).
    playground: Option<std::path::PathBuf>,
    /// `--cors`: the origins allowed (tower-http's CORS layer), `*` for any.
    cors: Vec<String>,
    /// `--health`: the path answered 200 on GET and HEAD.
    health: Option<String>,
    /// `--http1-only`: no HTTP/2 ([`ServeConfig::http2`]).
    http1_only: bool,
}

impl From<Args> for Options {
    fn from(a: Args) -> Options {
        let mut config = ParserConfig::new();
        config
            .max_message_bytes(a.max_message_bytes)
            .max_batch_len(a.max_batch_len);
        let mut ws = WsConfig {
            ping_interval: a.ws_ping_interval,
            idle_timeout: a.ws_idle_timeout,
            max_frame_bytes: a.ws_max_frame_bytes,
            ..WsConfig::default()
        };
        ws.duplex.write_timeout = a.write_timeout;
        Options {
            stdio: a.stdio,
            unix: a.unix,
            framing: a.framing.unwrap_or_default(),
            listen: a.listen,
            token: a.token.filter(|t| !t.is_empty()),
            config,
            threads: a.threads,
            body_timeout: a.body_timeout,
            header_timeout: a.header_timeout,
            write_timeout: a.write_timeout,
            max_connections: a.max_connections,
            ws,
            heads_interval: a.heads_interval,
            stream_path: a.stream_path.0,
            access_log: a.access_log,
            bench: a.bench,
            playground: a.playground,
            cors: a.cors,
            health: a.health,
            http1_only: a.http1_only,
        }
    }
}

fn router(o: &Options) -> Arc<Router> {
    let chain = Arc::new(chain::Chain::new(o.heads_interval));
    let demo = demo::register(Router::builder(), Arc::new(demo::Counters::default()));
    let demo = demo::register_countdown(demo, Duration::from_millis(100));
    let demo = if o.bench {
        crate::bench::register(demo)
    } else {
        demo
    };
    chain::register(demo, chain)
        .config(o.config)
        .build()
        .expect("the demo registrations are valid")
}

/// `switchboard serve`.
pub(crate) fn run(args: Args) -> ExitCode {
    let o = Options::from(args);
    if o.stdio || o.unix.is_some() {
        return duplex(o);
    }
    http(o)
}

/// `--stdio` and `--unix`: the duplex driver, calls of a connection concurrent.
fn duplex(o: Options) -> ExitCode {
    // stdio is one connection: one thread serves it best (no cross-thread
    // wake-ups); a socket serves many, on `--threads` workers.
    let built = if o.unix.is_none() && o.threads.is_none() {
        tokio::runtime::Builder::new_current_thread()
            .on_thread_park(crate::alloc::on_park)
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(o.threads.unwrap_or(2))
            .on_thread_park(crate::alloc::on_park)
            .enable_all()
            .build()
    };
    let runtime = match built {
        Ok(r) => r,
        Err(e) => {
            fatal(format_args!("cannot start the runtime: {e}"));
            return ExitCode::from(1);
        }
    };
    let config = DuplexConfig {
        framing: o.framing,
        write_timeout: o.write_timeout,
        ..DuplexConfig::default()
    };
    let router = router(&o);
    let code = runtime.block_on(async move {
        match &o.unix {
            None => {
                let (stdin, stdout) = switchboard_server::duplex::stdio();
                let served = Duplex::new(router, config).serve(stdin, stdout).await;
                match served {
                    Ok(_) => ExitCode::SUCCESS,
                    Err(e) => {
                        fatal(format_args!("stdio: {e}"));
                        ExitCode::from(1)
                    }
                }
            }
            Some(path) => unix(path, router, config).await,
        }
    });
    // stdin's reader thread may be blocked in read(2): do not wait for it.
    runtime.shutdown_background();
    code
}

#[cfg(unix)]
async fn unix(path: &std::path::Path, router: Arc<Router>, config: DuplexConfig) -> ExitCode {
    use std::os::unix::fs::FileTypeExt;
    // A socket left by an earlier run is replaced; any other file is not touched.
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            fatal(format_args!(
                "{} exists and is not a socket",
                path.display()
            ));
            return ExitCode::from(1);
        }
        let _ = std::fs::remove_file(path);
    }
    let shutdown = shutdown_signal();
    let listener = match tokio::net::UnixListener::bind(path) {
        Ok(l) => l,
        Err(e) => {
            fatal(format_args!("cannot listen on {}: {e}", path.display()));
            return ExitCode::from(1);
        }
    };
    println!("switchboard listening on unix:{}", path.display());
    tracing::info!(
        "unix socket {} ({:?} framing), demo methods",
        path.display(),
        config.framing
    );
    let mut shutdown = std::pin::pin!(shutdown);
    let mut connections = tokio::task::JoinSet::new();
    let mut open: Vec<switchboard::connection::Connection> = Vec::new();
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let duplex = Duplex::new(router.clone(), config);
                    open.retain(|c| !c.is_closed());
                    open.push(duplex.connection().clone());
                    let (r, w) = stream.into_split();
                    connections.spawn(async move {
                        if let Err(e) = duplex.serve(r, w).await {
                            tracing::warn!("unix connection: {e}");
                        }
                    });
                }
                Err(e) => {
                    tracing::warn!("accept: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    // Graceful: every connection winds up (calls drained, then cancelled).
    for c in &open {
        c.close();
    }
    while connections.join_next().await.is_some() {}
    let _ = std::fs::remove_file(path);
    tracing::info!("stopped");
    ExitCode::SUCCESS
}

#[cfg(not(unix))]
async fn unix(_: &std::path::Path, _: Arc<Router>, _: DuplexConfig) -> ExitCode {
    fatal(format_args!("--unix needs a Unix system"));
    ExitCode::from(2)
}

fn http(o: Options) -> ExitCode {
    let threads = o
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .on_thread_park(crate::alloc::on_park)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            fatal(format_args!("cannot start the runtime: {e}"));
            return ExitCode::from(1);
        }
    };
    runtime.block_on(async move {
        // The signal handlers are installed now, before anyone can connect: a
        // Ctrl-C right after the first answer must stop the server gracefully,
        // not kill it by default action.
        let shutdown = shutdown_signal();
        let listener = match tokio::net::TcpListener::bind(&o.listen).await {
            Ok(l) => l,
            Err(e) => {
                fatal(format_args!("cannot listen on {}: {e}", o.listen));
                return ExitCode::from(1);
            }
        };
        let addr: SocketAddr = match listener.local_addr() {
            Ok(a) => a,
            Err(e) => {
                fatal(format_args!("cannot read the bound address: {e}"));
                return ExitCode::from(1);
            }
        };
        let router = router(&o);
        let stream = o.stream_path.as_ref().map(|path| {
            let config = StreamableConfig {
                path: path.clone(),
                body_read_timeout: o.body_timeout,
                stateless: true,
                allowed_origins: o.cors.clone(),
                ..StreamableConfig::default()
            };
            Streamable::new(router.clone(), config)
        });
        let site = match o.playground.as_deref().map(Site::load).transpose() {
            Ok(site) => site,
            Err(e) => {
                fatal(format_args!("--playground: {e}"));
                return ExitCode::from(1);
            }
        };
        let has_site = site.is_some();
        let mut service = Switchboard::new(router)
            .access_log(o.access_log)
            .body_read_timeout(o.body_timeout)
            .websocket(Some(o.ws))
            .streamable(stream)
            .site(site)
            .health(o.health.as_deref());
        if let Some(t) = &o.token {
            service = service.bearer_token(t);
        }
        let auth = if o.token.is_some() {
            " -H \"Authorization: Bearer $SWITCHBOARD_TOKEN\""
        } else {
            ""
        };
        // stdout: what a person (or a test) needs; stderr: the one startup log line.
        println!("switchboard listening on http://{addr}/");
        println!(
            "try: curl -s{auth} -H 'Content-Type: application/json' -d '{{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":[42,23],\"id\":1}}' http://{addr}/"
        );
        println!("websocket: ws://{addr}/ (the same endpoint)");
        if has_site {
            println!("playground: http://{addr}/ (GET; the page posts to the same endpoint)");
        }
        if let Some(p) = &o.stream_path {
            println!("streamable http (server-sent events): http://{addr}{p}");
        }
        tracing::info!(
            "http on {addr}: {threads} thread(s), max_message_bytes {}, max_batch_len {}, token {}, demo methods",
            o.config.get_max_message_bytes(),
            o.config.get_max_batch_len(),
            if o.token.is_some() { "required" } else { "off" },
        );
        let config = ServeConfig {
            header_read_timeout: o.header_timeout,
            write_timeout: o.write_timeout,
            max_connections: o.max_connections,
            http2: !o.http1_only,
            ..ServeConfig::default()
        };
        let result = if o.cors.is_empty() {
            serve_with(listener, service, config, shutdown).await
        } else {
            match switchboard_server::http::cors(&o.cors) {
                Ok(cors) => serve_with_layer(listener, service, cors, config, shutdown).await,
                Err(e) => {
                    fatal(format_args!("--cors: {e}"));
                    return ExitCode::from(2);
                }
            }
        };
        match result {
            Ok(()) => {
                tracing::info!("stopped");
                ExitCode::SUCCESS
            }
            Err(e) => {
                fatal(format_args!("{e}"));
                ExitCode::from(1)
            }
        }
    })
}

/// A reason to stop, for the person who started the server: on stderr whatever
/// the log filter says.
fn fatal(args: std::fmt::Arguments<'_>) {
    eprintln!("switchboard: {args}");
}

/// Ctrl-C (SIGINT), or SIGTERM on Unix. The handlers are installed when this is
/// called (inside the runtime), not when the future is first polled.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let int = signal(SignalKind::interrupt());
        let term = signal(SignalKind::terminate());
        async move {
            match (int, term) {
                (Ok(mut i), Ok(mut t)) => {
                    tokio::select! {
                        _ = i.recv() => {}
                        _ = t.recv() => {}
                    }
                }
                (Ok(mut i), Err(_)) => {
                    i.recv().await;
                }
                (Err(_), Ok(mut t)) => {
                    t.recv().await;
                }
                (Err(_), Err(_)) => {
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser as _;

    fn options(args: &[&str]) -> Result<Options, clap::Error> {
        let cli = crate::Cli::try_parse_from(["switchboard", "serve"].iter().chain(args))?;
        match cli.command {
            crate::Command::Serve(a) => Ok(Options::from(*a)),
            _ => unreachable!("parsed as serve"),
        }
    }

    /// The defaults the help shows are the library's.
    #[test]
    fn defaults_are_the_librarys() {
        let o = options(&[]).unwrap();
        let (serve, ws) = (ServeConfig::default(), WsConfig::default());
        assert_eq!(o.body_timeout, Switchboard::DEFAULT_BODY_READ_TIMEOUT);
        assert_eq!(o.header_timeout, serve.header_read_timeout);
        assert_eq!(o.write_timeout, serve.write_timeout);
        assert_eq!(o.max_connections, serve.max_connections);
        assert_eq!(o.ws.ping_interval, ws.ping_interval);
        assert_eq!(o.ws.idle_timeout, ws.idle_timeout);
        assert_eq!(o.ws.max_frame_bytes, ws.max_frame_bytes);
        assert_eq!(o.ws.duplex.write_timeout, ws.duplex.write_timeout);
        assert_eq!(o.stream_path, Some(StreamableConfig::default().path));
        assert_eq!(o.framing, Framing::Ndjson);
        assert_eq!(o.listen, "127.0.0.1:8080");
        assert_eq!(o.heads_interval, Duration::from_secs(1));
        assert!(!o.stdio && o.unix.is_none() && !o.bench && !o.access_log);
    }

    #[test]
    fn options_keep_their_meaning() {
        let o = options(&[
            "--unix=/tmp/s",
            "--framing",
            "lsp",
            "--write-timeout",
            "2.5",
            "--max-message-bytes",
            "100",
            "--max-batch-len",
            "3",
            "--stream-path",
            "off",
            "--threads",
            "4",
        ])
        .unwrap();
        assert_eq!(o.unix.as_deref(), Some(std::path::Path::new("/tmp/s")));
        assert_eq!(o.framing, Framing::Lsp);
        assert_eq!(o.write_timeout, Duration::from_millis(2500));
        assert_eq!(o.ws.duplex.write_timeout, Duration::from_millis(2500));
        assert_eq!(o.config.get_max_message_bytes(), 100);
        assert_eq!(o.config.get_max_batch_len(), 3);
        assert_eq!((o.stream_path, o.threads), (None, Some(4)));
        assert_eq!(
            options(&["-l", "0.0.0.0:1", "--token", ""]).unwrap().token,
            None
        );
        for bad in [
            &["--max-message-bytes", "4294967295"][..],
            &["--body-timeout", "0"],
            &["--heads-interval", "0.0001"],
            &["--framing", "xml", "--stdio"],
            &["--access-log", "--unix", "/tmp/s"],
        ] {
            assert!(options(bad).is_err(), "{bad:?}");
        }
    }
}
