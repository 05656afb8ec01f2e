//! Async handlers over real HTTP: a method that sleeps on tokio's timer, served by
//! `http::serve` on a loopback port. Calls on two connections overlap in time, and a
//! batch's async calls run concurrently. Also: the blocking `Session::handle`, used
//! outside any runtime, answers -32603 for a future that needs tokio's reactor.
//!
//! The server runs on a runtime of its own, on a thread of its own, and the client is
//! plain `std::net` with read timeouts, so that a server that serializes the calls (or
//! blocks its workers) fails these tests rather than hanging them.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use switchboard::{Router, RpcError, Session};
use switchboard_server::http::{Switchboard, serve};

/// How long the `sleep` method sleeps in these tests.
const NAP: Duration = Duration::from_millis(300);

fn router() -> Arc<Router> {
    Router::builder()
        .typed_async("sleep", |(ms,): (u64,)| async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok::<_, RpcError>(ms)
        })
        .method("ping", |_, out| out.str("pong"))
        .build()
        .unwrap()
}

/// Starts `http::serve` on a loopback port, on a two-worker runtime on its own
/// thread; it serves until the test process exits.
fn start() -> SocketAddr {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            let _ = serve(listener, Switchboard::new(router()), std::future::pending()).await;
        });
    });
    rx.recv_timeout(Duration::from_secs(10)).unwrap()
}

/// One POST on a fresh connection (`Connection: close`): the status and the body.
fn post(addr: SocketAddr, body: &str) -> (u16, Value) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.set_nodelay(true).unwrap();
    let req = format!(
        "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).unwrap();
    let mut resp = Vec::new();
    s.read_to_end(&mut resp)
        .expect("the server answers within the read timeout");
    let resp = String::from_utf8(resp).unwrap();
    let (head, body) = resp.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, serde_json::from_str(body).unwrap())
}

fn sleep_call(id: u64) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"sleep","params":[{}],"id":{id}}}"#,
        NAP.as_millis()
    )
}

#[test]
fn slow_async_calls_on_two_connections_overlap() {
    let addr = start();
    // Warm-up: the server is up and answers.
    let (s, v) = post(addr, r#"{"jsonrpc":"2.0","method":"ping","id":0}"#);
    assert_eq!(
        (s, v),
        (200, json!({"jsonrpc":"2.0","result":"pong","id":0}))
    );

    let barrier = Arc::new(Barrier::new(3));
    let clients: Vec<_> = (1..=2)
        .map(|id| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                let t = Instant::now();
                let r = post(addr, &sleep_call(id));
                (r, t.elapsed())
            })
        })
        .collect();
    barrier.wait();
    let t = Instant::now();
    for (id, c) in (1..=2).zip(clients) {
        let ((status, v), took) = c.join().unwrap();
        assert_eq!(status, 200);
        assert_eq!(
            v,
            json!({"jsonrpc":"2.0","result":NAP.as_millis() as u64,"id":id})
        );
        assert!(took >= NAP, "answered before the sleep ended: {took:?}");
    }
    let both = t.elapsed();
    // One after the other would take 600 ms.
    assert!(
        both < Duration::from_millis(550),
        "two {NAP:?} calls on two connections took {both:?}: not concurrent"
    );
}

#[test]
fn a_batchs_async_calls_run_concurrently_over_http() {
    let addr = start();
    post(addr, r#"{"jsonrpc":"2.0","method":"ping","id":0}"#); // warm-up
    let batch = format!(
        r#"[{},{{"jsonrpc":"2.0","method":"ping","id":2}},{}]"#,
        sleep_call(1),
        sleep_call(3)
    );
    let t = Instant::now();
    let (status, v) = post(addr, &batch);
    let took = t.elapsed();
    assert_eq!(status, 200);
    let ms = NAP.as_millis() as u64;
    assert_eq!(
        v,
        json!([
            {"jsonrpc":"2.0","result":"pong","id":2},
            {"jsonrpc":"2.0","result":ms,"id":1},
            {"jsonrpc":"2.0","result":ms,"id":3},
        ])
    );
    assert!(took >= NAP, "answered before the sleeps ended: {took:?}");
    assert!(
        took < NAP * 3 / 2,
        "a batch of two {NAP:?} calls took {took:?}: not concurrent"
    );
}

#[test]
fn blocking_handle_outside_a_runtime_answers_internal_error() {
    // No runtime here: tokio's timer panics when the future is polled, which is
    // answered like any panicking handler; the session stays usable.
    let mut session = Session::new(router());
    let resp = session
        .handle(br#"{"jsonrpc":"2.0","method":"sleep","params":[1],"id":1}"#)
        .unwrap();
    assert_eq!(
        resp,
        br#"{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error","data":{"reason":"the handler panicked"}},"id":1}"#
    );
    assert_eq!(
        session
            .handle(br#"{"jsonrpc":"2.0","method":"ping","id":2}"#)
            .unwrap(),
        br#"{"jsonrpc":"2.0","result":"pong","id":2}"#
    );
}

#[tokio::test]
async fn handle_async_inside_a_runtime_serves_tokio_timers() {
    let mut session = Session::new(router());
    let resp = session
        .handle_async(br#"{"jsonrpc":"2.0","method":"sleep","params":[5],"id":1}"#)
        .await
        .unwrap();
    assert_eq!(resp, br#"{"jsonrpc":"2.0","result":5,"id":1}"#);
}
