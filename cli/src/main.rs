//! The `switchboard` binary: `inspect`, `respond`, `serve`, `call`, `subscribe`.
//!
//! The command line is clap's (derive): `switchboard help`, `switchboard
//! SUBCOMMAND --help` and `--version`; a usage error names what is wrong and
//! exits 2. The library's events go to stderr through `tracing-subscriber`
//! (stdout is `serve --stdio`'s protocol channel).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser as _, Subcommand};
use mimalloc::MiMalloc;
use switchboard::Session;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::LevelFilter;

#[global_allocator]
static GLOBAL: MiMalloc = MiMalloc;

mod alloc;
mod bench;
mod call;
mod describe;
mod inspect;
mod serve;

const ENVIRONMENT: &str = "\
Environment:
  SWITCHBOARD_LOG, else RUST_LOG   what is logged on stderr, as tracing-subscriber's
                                   EnvFilter reads it: a level (off, error, warn,
                                   info, debug, trace) or target=level directives,
                                   e.g. `warn,switchboard_server=debug` [default: info]
  SWITCHBOARD_TOKEN                the bearer token of `serve`, `call`, `subscribe`
                                   when --token is not given";

/// switchboard: a zero-copy JSON-RPC 2.0 core
#[derive(clap::Parser, Debug)]
#[command(name = "switchboard", version, after_help = ENVIRONMENT, propagate_version = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Describe what the parser sees: a JSON line per message (exit 1 when one is
    /// rejected)
    Inspect(inspect::Args),
    /// Answer one message with the demo methods; prints the response bytes
    /// (nothing when there is no response)
    Respond {
        /// The message (standard input when absent or -)
        file: Option<PathBuf>,
    },
    /// JSON-RPC over HTTP and WebSocket (or --stdio, --unix) with the demo methods,
    /// until Ctrl-C
    Serve(Box<serve::Args>),
    /// Call METHOD at URL (http:// or ws://); prints the result on one line. Exit 1
    /// with the error object on stdout when the server answers one, 2 on usage
    /// errors, 3 on transport errors or timeouts
    Call(call::CallArgs),
    /// Subscribe over WebSocket (ws:// only); prints each notification's result on
    /// a line until Ctrl-C or --count, then unsubscribes. Exit codes as for call
    Subscribe(call::SubscribeArgs),
}

fn main() -> ExitCode {
    alloc::tune();
    let cli = Cli::parse();
    let access_log = matches!(&cli.command, Command::Serve(a) if a.access_log);
    init_logging(access_log);
    match cli.command {
        Command::Inspect(args) => inspect::run(args),
        Command::Respond { file } => respond(file.as_deref()),
        Command::Serve(args) => serve::run(*args),
        Command::Call(args) => call::call(args),
        Command::Subscribe(args) => call::subscribe(args),
    }
}

/// The filter: `SWITCHBOARD_LOG`, else `RUST_LOG`, else `info`; `--access-log`
/// turns the access log's target on at `info` unless the filter names it.
fn filter(spec: Option<&str>, access_log: bool) -> EnvFilter {
    let spec = spec.unwrap_or("");
    let mut filter = EnvFilter::builder()
        .with_default_directive(LevelFilter::INFO.into())
        .parse_lossy(spec);
    let target = switchboard_server::http::ACCESS_TARGET;
    if access_log && !spec.contains(target) {
        filter = filter.add_directive(format!("{target}=info").parse().expect("a valid directive"));
    }
    filter
}

/// Events on stderr, with timestamps; colours only on a terminal.
fn init_logging(access_log: bool) {
    use std::io::IsTerminal;
    let spec = ["SWITCHBOARD_LOG", "RUST_LOG"]
        .iter()
        .find_map(|v| std::env::var(v).ok());
    tracing_subscriber::fmt()
        .with_env_filter(filter(spec.as_deref(), access_log))
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
}

/// `switchboard respond`.
fn respond(file: Option<&Path>) -> ExitCode {
    let Some(input) = read_input_or_report(file) else {
        return ExitCode::from(2);
    };
    let mut session = Session::new(switchboard_server::demo::router());
    if let Some(resp) = session.handle(&input) {
        let mut out = std::io::stdout().lock();
        if out.write_all(resp).and_then(|()| out.flush()).is_err() {
            return ExitCode::from(1);
        }
    }
    ExitCode::SUCCESS
}

/// Reads the input, or reports on stderr why it could not.
fn read_input_or_report(path: Option<&Path>) -> Option<Vec<u8>> {
    read_input(path)
        .map_err(|e| {
            let name = path.map_or_else(|| "stdin".to_owned(), |p| p.display().to_string());
            eprintln!("switchboard: cannot read {name}: {e}");
        })
        .ok()
}

/// The file's bytes, or standard input's when there is no file or it is `-`.
fn read_input(path: Option<&Path>) -> std::io::Result<Vec<u8>> {
    match path {
        Some(p) if p != Path::new("-") => std::fs::read(p),
        _ => {
            let mut buf = Vec::new();
            std::io::stdin().lock().read_to_end(&mut buf)?;
            Ok(buf)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory as _;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn filters() {
        let show = |spec: Option<&str>, access| filter(spec, access).to_string();
        assert_eq!(show(None, false), "info");
        assert_eq!(show(Some("warn"), false), "warn");
        assert!(show(Some("warn"), true).contains("switchboard_server::access=info"));
        // Named by the filter: left as it says.
        assert_eq!(
            show(Some("switchboard_server::access=off"), true),
            "switchboard_server::access=off"
        );
    }
}
