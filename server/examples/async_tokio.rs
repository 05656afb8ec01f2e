//! Async handlers on tokio: `typed_async` and `method_async` futures that
//! await tokio's timers, a time limit, and blocking work moved off the
//! runtime's threads; served over HTTP with `serve`.
//!
//! ```text
//! cargo run -p switchboard-server --example async_tokio
//! ```
//!
//! It binds 127.0.0.1 on a free port, makes its own calls, checks the answers
//! and exits 0. The calls of one batch run concurrently: three 200 ms sleeps
//! are answered together after about 200 ms, not 600.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use switchboard::{OwnedCall, ResultExt, Router, RpcError};
use switchboard_server::http::{Switchboard, serve};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[derive(Deserialize)]
struct Fetch {
    key: String,
    /// How long the "backend" takes.
    delay_ms: u64,
}

/// A slow backend: answers after `delay`.
async fn backend(key: &str, delay: Duration) -> String {
    tokio::time::sleep(delay).await;
    format!("value of {key}")
}

fn router() -> Arc<Router> {
    Router::builder()
        // Typed params, then a future: a mismatch is answered -32602 before
        // any future is made.
        .typed_async("sleep", |(ms,): (u64,)| async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok(ms)
        })
        // A time limit of the method's own: past 100 ms, an error object.
        .typed_async("fetch", |f: Fetch| async move {
            tokio::time::timeout(
                Duration::from_millis(100),
                backend(&f.key, Duration::from_millis(f.delay_ms)),
            )
            .await
            .map_err(|_| RpcError::new(-32000, "backend timed out"))
        })
        // CPU-bound or blocking work goes to tokio's blocking pool, not the
        // threads that serve connections.
        .method_async("digest", |call: OwnedCall| async move {
            let (text,): (String,) = call
                .params()
                .ok_or(RpcError::invalid_params("text"))?
                .parse()?;
            tokio::task::spawn_blocking(move || text.bytes().map(u64::from).sum::<u64>())
                .await
                .internal_error()
        })
        .build()
        .expect("valid registrations")
}

/// One JSON-RPC message over HTTP/1.1 (by hand, to keep the example's
/// dependencies to the server's); the response body.
async fn post(addr: SocketAddr, body: &str) -> String {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "POST / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).await.unwrap();
    let (_, body) = answer.split_once("\r\n\r\n").expect("a whole answer");
    body.to_owned()
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(serve(listener, Switchboard::new(router()), async {
        let _ = stopped.await;
    }));

    // A batch of three sleeps: awaited concurrently, answered in input order.
    let batch = r#"[{"jsonrpc":"2.0","method":"sleep","params":[200],"id":1},
                    {"jsonrpc":"2.0","method":"sleep","params":[200],"id":2},
                    {"jsonrpc":"2.0","method":"sleep","params":[200],"id":3}]"#;
    let started = Instant::now();
    let answer = post(addr, batch).await;
    let took = started.elapsed();
    println!("<-- {answer} ({took:?})");
    assert_eq!(
        answer,
        r#"[{"jsonrpc":"2.0","result":200,"id":1},{"jsonrpc":"2.0","result":200,"id":2},{"jsonrpc":"2.0","result":200,"id":3}]"#
    );
    assert!(took >= Duration::from_millis(200), "{took:?}");
    assert!(
        took < Duration::from_millis(550),
        "not one after the other: {took:?}"
    );

    // Calls on separate connections run at once too: a slow one does not hold
    // up a quick one.
    let slow = post(
        addr,
        r#"{"jsonrpc":"2.0","method":"sleep","params":[300],"id":4}"#,
    );
    let quick = async {
        let answer = post(
            addr,
            r#"{"jsonrpc":"2.0","method":"sleep","params":[1],"id":5}"#,
        )
        .await;
        (answer, Instant::now())
    };
    let ((slow, slow_done), (quick, quick_done)) =
        tokio::join!(async { (slow.await, Instant::now()) }, quick);
    assert_eq!(slow, r#"{"jsonrpc":"2.0","result":300,"id":4}"#);
    assert_eq!(quick, r#"{"jsonrpc":"2.0","result":1,"id":5}"#);
    assert!(quick_done < slow_done);

    let checks = [
        (
            r#"{"jsonrpc":"2.0","method":"fetch","params":{"key":"k","delay_ms":10},"id":6}"#,
            r#"{"jsonrpc":"2.0","result":"value of k","id":6}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"fetch","params":{"key":"k","delay_ms":5000},"id":7}"#,
            r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"backend timed out"},"id":7}"#,
        ),
        (
            r#"{"jsonrpc":"2.0","method":"digest","params":["abc"],"id":8}"#,
            r#"{"jsonrpc":"2.0","result":294,"id":8}"#,
        ),
    ];
    for (request, expected) in checks {
        let answer = post(addr, request).await;
        println!("--> {request}\n<-- {answer}");
        assert_eq!(answer, expected);
    }
    // Params that do not fit: -32602 at once, no future made.
    let answer = post(
        addr,
        r#"{"jsonrpc":"2.0","method":"sleep","params":["soon"],"id":9}"#,
    )
    .await;
    assert!(answer.contains(r#""code":-32602"#), "{answer}");

    stop.send(()).expect("the server runs");
    server.await.expect("the server task")
}

#[cfg(test)]
mod tests {
    /// The example runs to completion: its own assertions pass.
    #[test]
    fn runs() {
        super::main().unwrap();
    }
}
