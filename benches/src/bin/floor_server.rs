//! The floor of the HTTP load test (`benches/load.sh`, issue #7): what a server on
//! this machine costs per request when it does only what the load's system calls
//! force, so that the ratios of the real servers can be read against it.
//!
//! ```text
//! floor_server [--listen ADDR] [--threads N] [--canned]
//! ```
//!
//! Not a server to use: a measuring stick. Each keep-alive connection is one tokio
//! task (same runtime as `switchboard serve` and `jsonrpsee_server`: multi-thread,
//! `--threads` workers, `TCP_NODELAY`); it reads what the client sent, frames the
//! requests by their `Content-Length` (no other header is looked at: no method,
//! content-type or token checks, no chunked bodies), answers every complete request
//! with switchboard's [`Session`] and the benches' demo router, and writes the
//! answers of everything it read in one `write`. With `--canned` the answer to a
//! body equal to the previous one is copied from the previous answer: no JSON-RPC
//! work at all, just the framing and the system calls. The gap between `floor` and
//! `floor_canned` is switchboard's JSON-RPC work; the gap between `switchboard` and
//! `floor` is hyper's HTTP/1 (and the full HTTP mapping of SPEC.md).
//!
//! Prints `floor listening on http://ADDR/` once it accepts connections; serves until
//! killed.

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;

use mimalloc::MiMalloc;
use switchboard::{Router, Session};
use switchboard_benches::dispatch;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

#[global_allocator]
static GLOBAL: MiMalloc = MiMalloc;

const USAGE: &str = "usage: floor_server [--listen ADDR] [--threads N] [--canned]\n";

/// Requests and headers over this are refused (the connection is closed).
const MAX_REQUEST: usize = 8 << 20;

fn main() -> ExitCode {
    let mut listen = "127.0.0.1:8082".to_owned();
    let mut threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut canned = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--listen" => match args.next() {
                Some(v) => listen = v,
                None => return usage(),
            },
            "--threads" => match args.next().and_then(|v| v.parse::<usize>().ok()) {
                Some(n) if n > 0 => threads = n,
                _ => return usage(),
            },
            "--canned" => canned = true,
            _ => return usage(),
        }
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("floor_server: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    runtime.block_on(async move {
        let listener = match TcpListener::bind(&listen).await {
            Ok(l) => l,
            Err(e) => {
                eprintln!("floor_server: cannot listen on {listen}: {e}");
                return ExitCode::from(1);
            }
        };
        match listener.local_addr() {
            Ok(a) => println!("floor listening on http://{a}/"),
            Err(e) => {
                eprintln!("floor_server: {e}");
                return ExitCode::from(1);
            }
        }
        let router = dispatch::router();
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    tokio::spawn(connection(stream, router.clone(), canned));
                }
                Err(e) => eprintln!("floor_server: accept: {e}"),
            }
        }
    })
}

fn usage() -> ExitCode {
    eprint!("{USAGE}");
    ExitCode::from(2)
}

/// Serves one connection until the client closes it or sends something unframeable.
async fn connection(mut stream: TcpStream, router: Arc<Router>, canned: bool) {
    if stream.set_nodelay(true).is_err() {
        return;
    }
    let mut session = Session::new(router);
    let mut input: Vec<u8> = Vec::with_capacity(16 << 10);
    let mut out: Vec<u8> = Vec::with_capacity(16 << 10);
    // `--canned`: the last body answered and its whole HTTP response.
    let mut last: Option<(Vec<u8>, Vec<u8>)> = None;
    loop {
        let mut at = 0;
        loop {
            match frame(&input[at..]) {
                Frame::Request { head, body } => {
                    let b = &input[at + head..at + head + body];
                    match &last {
                        Some((lb, resp)) if canned && lb.as_slice() == b => {
                            out.extend_from_slice(resp);
                        }
                        _ => {
                            let start = out.len();
                            respond(&mut session, b, &mut out);
                            if canned {
                                last = Some((b.to_vec(), out[start..].to_vec()));
                            }
                        }
                    }
                    at += head + body;
                }
                Frame::Partial => break,
                Frame::Bad => return,
            }
        }
        if !out.is_empty() {
            if stream.write_all(&out).await.is_err() {
                return;
            }
            out.clear();
        }
        input.drain(..at);
        match stream.read_buf(&mut input).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
    }
}

enum Frame {
    /// A whole request: `head` bytes of request line and headers, then `body` bytes.
    Request { head: usize, body: usize },
    /// More bytes are needed.
    Partial,
    /// Too large or not HTTP with a `Content-Length`.
    Bad,
}

fn frame(b: &[u8]) -> Frame {
    let Some(end) = b.windows(4).position(|w| w == b"\r\n\r\n") else {
        return if b.len() > MAX_REQUEST {
            Frame::Bad
        } else {
            Frame::Partial
        };
    };
    let head = end + 4;
    let mut body = None;
    for line in b[..end].split(|&c| c == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Some(colon) = line.iter().position(|&c| c == b':')
            && line[..colon].eq_ignore_ascii_case(b"content-length")
        {
            body = std::str::from_utf8(&line[colon + 1..])
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok());
        }
    }
    match body {
        Some(n) if n <= MAX_REQUEST => {
            if b.len() >= head + n {
                Frame::Request { head, body: n }
            } else {
                Frame::Partial
            }
        }
        _ => Frame::Bad,
    }
}

/// Appends the HTTP response to `body`: 200 with the JSON-RPC answer, or 204.
fn respond(session: &mut Session, body: &[u8], out: &mut Vec<u8>) {
    match session.handle(body) {
        Some(answer) => {
            out.extend_from_slice(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ",
            );
            // Writing into a Vec cannot fail.
            let _ = write!(out, "{}\r\n\r\n", answer.len());
            out.extend_from_slice(answer);
        }
        None => out.extend_from_slice(b"HTTP/1.1 204 No Content\r\n\r\n"),
    }
}
