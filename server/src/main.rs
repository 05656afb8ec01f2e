//! The `switchboard` binary.

use std::io::{Read, Write};
use std::process::ExitCode;

use mimalloc::MiMalloc;
use switchboard::{Parser, Session};

#[global_allocator]
static GLOBAL: MiMalloc = MiMalloc;

const USAGE: &str = "\
switchboard: a zero-copy JSON-RPC 2.0 core

Usage:
  switchboard inspect [FILE]   describe what the parser sees in one message
                               (reads standard input when FILE is absent or -)
  switchboard respond [FILE]   answer one message with the demo methods; prints the
                               response bytes (nothing when there is no response)
  switchboard serve [OPTIONS]  JSON-RPC over HTTP with the demo methods, until Ctrl-C
                               (HTTP/1.1, and HTTP/2 cleartext with prior knowledge;
                               Content-Type application/json, application/json-rpc
                               or application/jsonrequest)
      --listen ADDR              address to listen on [default: 127.0.0.1:8080]
                                 (port 0: any free port; the address is printed)
      --token TOKEN              require `Authorization: Bearer TOKEN` (else 401);
                                 also read from SWITCHBOARD_TOKEN
      --max-message-bytes N      larger bodies get 413 [default: 8388608]
      --max-batch-len N          longer batches get -32600 [default: 1000]
      --threads N                worker threads [default: the number of CPUs]
      --max-connections N        connections served at once; more wait in the
                                 listen backlog [default: 10000]
      --body-timeout SECS        time to send a body, else 408 [default: 30]
      --header-timeout SECS      time to send request headers, idle keep-alive
                                 connections included, else closed [default: 30]
      --write-timeout SECS       time an answer may wait for the client to read
                                 any of it, else closed (HTTP, WebSocket, --unix)
                                 [default: 30]
      --ws-ping-interval SECS    WebSocket (GET / with Upgrade: websocket): ping
                                 after this much silence [default: 30]
      --ws-idle-timeout SECS     close a silent WebSocket (1000) [default: 90]
      --ws-max-frame-bytes N     larger frames close 1009 (messages over
                                 --max-message-bytes too) [default: 16777216]
      --http1-only               no HTTP/2: hyper's HTTP/1.1 connection alone (a
                                 connection opening with HTTP/2's preface is closed)
      --cors ORIGIN              CORS for browser pages from ORIGIN (scheme://host
                                 [:port]; repeatable or comma-separated; * for any):
                                 preflights answered, Access-Control-Allow-Origin on
                                 answers to those origins only; /mcp admits them too
      --health PATH              answer GET and HEAD of PATH with 200
                                 {\"status\":\"ok\"} (no token asked; no JSON-RPC there)
      --stream-path PATH         MCP's Streamable HTTP (server-sent events) at PATH
                                 on the same listener: sessions start with
                                 `initialize`, other POSTs are stateless (a handler's
                                 notifications stream before its answer); `off`
                                 turns it off [default: /mcp]
      --heads-interval SECS      the demo chain's block time: eth_blockNumber and
                                 eth_subscribe newHeads (on connections that can
                                 push: --stdio, --unix, WebSocket, --stream-path)
                                 [default: 1]
      --bench                    also `bench_subscribe [COUNT]`: a subscription
                                 sending COUNT notifications (results 0, 1, …) as
                                 fast as the client reads [default COUNT: 1000000];
                                 `bench_unsubscribe` stops it (benches/ws.sh)
  switchboard call [OPTIONS] URL METHOD [PARAMS]
                               call METHOD at URL (http:// or ws://) with PARAMS (a JSON
                               array or object); prints the result on one line. Exit 1
                               with the error object on stdout when the server answers
                               one, 2 on usage errors, 3 on transport errors or timeouts
      --timeout SECS             time to wait for the answer, 0 for ever [default: 30]
      --token TOKEN              send `Authorization: Bearer TOKEN` (also read from
                                 SWITCHBOARD_TOKEN)
  switchboard subscribe [OPTIONS] URL METHOD [PARAMS]
                               subscribe over WebSocket (ws:// only); prints each
                               notification's result on a line until Ctrl-C, then
                               unsubscribes. --timeout and --token as for call, and
      --unsubscribe METHOD       the unsubscribe method [default: METHOD with its last
                                 `subscribe` made `unsubscribe`: eth_unsubscribe]
      --count N                  stop after N notifications
  switchboard serve --stdio [--framing ndjson|lsp] [--max-message-bytes N]
                    [--max-batch-len N]
                               answer messages on stdin/stdout with the demo methods
                               until EOF: one per line (ndjson, the default) or
                               Content-Length framed (lsp); calls of the connection
                               run concurrently
  switchboard serve --unix PATH [--framing ndjson|lsp] [--max-message-bytes N]
                    [--max-batch-len N] [--threads N]
                               the same on a Unix domain socket (Ethereum-style
                               IPC), one connection per client, until Ctrl-C

Environment:
  SWITCHBOARD_LOG or RUST_LOG  log level on stderr: off, error, warn, info (default),
                               debug, trace
  switchboard --version
  switchboard --help
";

/// Reads the input, or reports on stderr why it could not.
fn read_input_or_report(path: Option<&str>) -> Option<Vec<u8>> {
    read_input(path)
        .map_err(|e| eprintln!("switchboard: cannot read {}: {e}", path.unwrap_or("stdin")))
        .ok()
}

fn read_input(path: Option<&str>) -> std::io::Result<Vec<u8>> {
    match path {
        None | Some("-") => {
            let mut buf = Vec::new();
            std::io::stdin().lock().read_to_end(&mut buf)?;
            Ok(buf)
        }
        Some(p) => std::fs::read(p),
    }
}

mod bench;
mod call;
mod serve;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["inspect", rest @ ..] if rest.len() <= 1 => {
            let Some(input) = read_input_or_report(rest.first().copied()) else {
                return ExitCode::from(2);
            };
            let mut parser = Parser::new();
            let line = switchboard_server::inspect::describe(&mut parser, &input);
            let mut out = std::io::stdout().lock();
            if writeln!(out, "{line}").is_err() {
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        ["respond", rest @ ..] if rest.len() <= 1 => {
            let Some(input) = read_input_or_report(rest.first().copied()) else {
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
        ["serve", rest @ ..] => serve::run(rest),
        ["call", rest @ ..] => call::call(rest, USAGE),
        ["subscribe", rest @ ..] => call::subscribe(rest, USAGE),
        ["--version" | "-V"] => {
            println!("switchboard {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        ["--help" | "-h" | "help"] => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => {
            eprint!("{USAGE}");
            ExitCode::from(2)
        }
    }
}
