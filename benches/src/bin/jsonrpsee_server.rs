//! jsonrpsee's HTTP server with the demo methods (the same registration as the
//! dispatch benches: [`dispatch::jsonrpsee_module`]), the peer of `switchboard serve`
//! in the load test (`benches/load.sh`).
//!
//! ```text
//! jsonrpsee_server [--listen ADDR] [--threads N] [--max-connections N] [--ws]
//! ```
//! `--ws`: WebSocket only (the peer of `switchboard serve`'s WebSocket in
//! `benches/ws.sh`), otherwise HTTP only. Over WebSocket it also has the
//! subscription of `switchboard serve --bench`: `bench_subscribe [COUNT]` sends
//! COUNT notifications `bench_subscription` (results 0, 1, …) as fast as the
//! client reads (jsonrpsee's `SubscriptionSink::send` waits for room, as
//! switchboard's `send_async` does), `bench_unsubscribe` stops it.
//! `--listen` defaults to 127.0.0.1:8081 (port 0: any free port); `--threads` is the
//! tokio worker count (default: the number of CPUs); `--max-connections` the
//! connection cap (default 10 000, as `switchboard serve`'s). Prints
//! `jsonrpsee listening on http://ADDR/` on stdout once it accepts connections, then
//! serves until Ctrl-C or SIGTERM.
//!
//! Set up as close to `switchboard serve`'s defaults as jsonrpsee allows: HTTP only
//! (no WebSocket upgrade checks), bodies up to 8 MiB, batches up to 1000 calls,
//! 10 000 connections, `TCP_NODELAY`, mimalloc as the global allocator (as the
//! `switchboard` binary has). The responses are the same JSON as switchboard's
//! (member order aside; `load.sh` checks them).

use std::process::ExitCode;

use jsonrpsee::core::SubscriptionResult;
use jsonrpsee::server::{
    BatchRequestConfig, PendingSubscriptionSink, RpcModule, Server, ServerConfig,
};
use jsonrpsee::types::Params;
use mimalloc::MiMalloc;
use switchboard_benches::dispatch;

#[global_allocator]
static GLOBAL: MiMalloc = MiMalloc;

const USAGE: &str =
    "usage: jsonrpsee_server [--listen ADDR] [--threads N] [--max-connections N] [--ws]\n";

fn main() -> ExitCode {
    let mut listen = "127.0.0.1:8081".to_owned();
    let mut threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut ws = false;
    let mut max_connections: u32 = 10_000;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        if arg == "--ws" {
            ws = true;
            continue;
        }
        let (name, inline) = match arg.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v.to_owned())),
            _ => (arg.as_str(), None),
        };
        let value = inline.or_else(|| it.next().cloned());
        match (name, value) {
            ("--listen", Some(v)) => listen = v,
            ("--threads", Some(v)) => match v.parse::<usize>() {
                Ok(n) if n > 0 => threads = n,
                _ => {
                    eprint!(
                        "jsonrpsee_server: --threads: {v:?} is not a positive integer\n{USAGE}"
                    );
                    return ExitCode::from(2);
                }
            },
            ("--max-connections", Some(v)) => match v.parse::<u32>() {
                Ok(n) if n > 0 => max_connections = n,
                _ => {
                    eprint!(
                        "jsonrpsee_server: --max-connections: {v:?} is not a positive integer\n{USAGE}"
                    );
                    return ExitCode::from(2);
                }
            },
            _ => {
                eprint!("{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("jsonrpsee_server: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    runtime.block_on(async move {
        let builder = ServerConfig::builder();
        let builder = if ws {
            builder.ws_only()
        } else {
            builder.http_only()
        };
        let config = builder
            .max_request_body_size(8 << 20)
            .max_connections(max_connections)
            .set_batch_request_config(BatchRequestConfig::Limit(1000))
            .build();
        let server = match Server::builder().set_config(config).build(&listen).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("jsonrpsee_server: cannot listen on {listen}: {e}");
                return ExitCode::from(1);
            }
        };
        let addr = match server.local_addr() {
            Ok(a) => a,
            Err(e) => {
                eprintln!("jsonrpsee_server: cannot read the bound address: {e}");
                return ExitCode::from(1);
            }
        };
        let mut module = dispatch::jsonrpsee_module();
        if ws {
            register_bench(&mut module);
        }
        let handle = server.start(module);
        let scheme = if ws { "ws" } else { "http" };
        println!("jsonrpsee listening on {scheme}://{addr}/ ({threads} thread(s))");
        shutdown_signal().await;
        let _ = handle.stop();
        handle.stopped().await;
        ExitCode::SUCCESS
    })
}

/// COUNT when the params give none (as `switchboard serve --bench`).
const DEFAULT_COUNT: u64 = 1_000_000;

/// `bench_subscribe [COUNT]`: COUNT notifications at the client's pace.
fn register_bench(module: &mut RpcModule<()>) {
    module
        .register_subscription(
            "bench_subscribe",
            "bench_subscription",
            "bench_unsubscribe",
            |params: Params<'static>, pending: PendingSubscriptionSink, _, _| async move {
                let count = if params.as_str().is_some() {
                    match params.sequence().next::<u64>() {
                        Ok(n) => n,
                        Err(e) => {
                            pending.reject(e).await;
                            return Ok(());
                        }
                    }
                } else {
                    DEFAULT_COUNT
                };
                let sink = pending.accept().await?;
                for k in 0..count {
                    let msg = serde_json::value::to_raw_value(&k)?;
                    if sink.send(msg).await.is_err() {
                        break; // unsubscribed, or the client went
                    }
                }
                // Done: open until the client unsubscribes or goes (as switchboard's).
                sink.closed().await;
                SubscriptionResult::Ok(())
            },
        )
        .expect("fresh names");
}

/// Ctrl-C (SIGINT), or SIGTERM on Unix.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
