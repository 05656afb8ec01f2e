//! Calls per second of this client and of jsonrpsee's HTTP client against the same
//! switchboard HTTP server (in-process, its own runtime thread), one run, side by
//! side: `subtract [42, 23]`, one call at a time and 32 in flight.
//!
//! `cargo run --release -p switchboard-client --example calls_per_second [SECONDS]`

use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonrpsee_core::client::ClientT;
use jsonrpsee_core::rpc_params;
use switchboard_client::Client;
use switchboard_server::demo;
use switchboard_server::http::{ServeConfig, Switchboard, serve_with};

fn server() -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            let svc = Switchboard::new(demo::router());
            serve_with(
                listener,
                svc,
                ServeConfig::default(),
                std::future::pending(),
            )
            .await
        })
    });
    format!("http://{}/", rx.recv().unwrap())
}

/// Calls per second of `call` run by `tasks` tasks for `secs`.
async fn rate<F, Fut>(secs: f64, tasks: usize, call: F) -> f64
where
    F: Fn() -> Fut + Send + Sync + 'static,
    Fut: Future<Output = f64> + Send,
{
    let call = Arc::new(call);
    let until = Instant::now() + Duration::from_secs_f64(secs);
    let start = Instant::now();
    let handles: Vec<_> = (0..tasks)
        .map(|_| {
            let call = call.clone();
            tokio::spawn(async move {
                let mut n = 0u64;
                while Instant::now() < until {
                    assert_eq!(call().await, 19.0);
                    n += 1;
                }
                n
            })
        })
        .collect();
    let mut total = 0;
    for h in handles {
        total += h.await.unwrap();
    }
    total as f64 / start.elapsed().as_secs_f64()
}

fn main() {
    let secs: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(3.0);
    let url = server();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let ours = Client::connect(&url).await.unwrap();
        let theirs = Arc::new(
            jsonrpsee_http_client::HttpClientBuilder::default()
                .build(&url)
                .unwrap(),
        );
        println!("client, HTTP, subtract [42, 23], {secs} s each, server: switchboard serve_with in-process");
        for tasks in [1, 32] {
            let c = ours.clone();
            let a = rate(secs, tasks, move || {
                let c = c.clone();
                async move { c.request::<_, f64>("subtract", &[42, 23]).await.unwrap() }
            })
            .await;
            let t = theirs.clone();
            let b = rate(secs, tasks, move || {
                let t = t.clone();
                async move { t.request::<f64, _>("subtract", rpc_params![42, 23]).await.unwrap() }
            })
            .await;
            println!(
                "{tasks:>2} in flight: switchboard-client {a:>9.0} calls/s, jsonrpsee HttpClient {b:>9.0} calls/s, ratio {:.2}x",
                a / b
            );
        }
    });
}
