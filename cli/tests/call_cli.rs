//! `switchboard call` and `switchboard subscribe`: stdout and exit codes against
//! the real HTTP server in-process and the client's in-test WebSocket server.

#[path = "../../client/tests/support/ws_server.rs"]
mod ws_server;

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;

use serde_json::json;
use switchboard::Router;
use switchboard_server::demo;
use switchboard_server::http::{ServeConfig, Switchboard, serve_with};
use tokio::sync::mpsc;
use ws_server::Peers;

fn router() -> Arc<Router> {
    demo::register(Router::builder(), Arc::default())
        .method_async("never", |_| async {
            std::future::pending::<()>().await;
            Ok(())
        })
        .method("pretty", |_, out| out.raw_json(b"{\n  \"a\": [1,\n 2]\n}"))
        .build()
        .unwrap()
}

async fn http_server(token: Option<&str>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut svc = Switchboard::new(router());
    if let Some(t) = token {
        svc = svc.bearer_token(t);
    }
    tokio::spawn(serve_with(
        listener,
        svc,
        ServeConfig::default(),
        std::future::pending(),
    ));
    format!("http://{addr}/")
}

/// The WebSocket server: the demo methods and `test_subscribe` (records its
/// peer, answers `"0x5"`) / `test_unsubscribe` (reports its params).
async fn ws_server(peers: Peers, unsubscribed: mpsc::UnboundedSender<String>) -> String {
    let router = demo::register(Router::builder(), Arc::default())
        .method("test_subscribe", move |call, out| {
            peers
                .lock()
                .unwrap()
                .push(call.connection().unwrap().peer());
            out.str("0x5")
        })
        .method("test_unsubscribe", move |call, out| {
            let _ = unsubscribed.send(call.params().unwrap().as_str().to_owned());
            out.bool(true)
        })
        .build()
        .unwrap();
    ws_server::start(router, None).await
}

async fn run(args: &[&str]) -> Output {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_switchboard"))
            .args(&args)
            .env_remove("SWITCHBOARD_TOKEN")
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

fn stdout(o: &Output) -> &str {
    std::str::from_utf8(&o.stdout).unwrap()
}

fn stderr(o: &Output) -> &str {
    std::str::from_utf8(&o.stderr).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_prints_the_result_or_the_error_object() {
    let url = http_server(None).await;
    let o = run(&["call", &url, "subtract", "[42, 23]"]).await;
    assert_eq!(
        (o.status.code(), stdout(&o)),
        (Some(0), "19\n"),
        "{}",
        stderr(&o)
    );
    let o = run(&[
        "call",
        &url,
        "subtract",
        r#"{"minuend": 1, "subtrahend": 3}"#,
    ])
    .await;
    assert_eq!((o.status.code(), stdout(&o)), (Some(0), "-2\n"));
    let o = run(&["call", &url, "get_data"]).await;
    assert_eq!((o.status.code(), stdout(&o)), (Some(0), "[\"hello\",5]\n"));
    let o = run(&["call", &url, "pretty"]).await;
    assert_eq!(stdout(&o), "{\"a\":[1,2]}\n", "one line");
    let o = run(&["call", &url, "nope", "[]"]).await;
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        "{\"code\":-32601,\"message\":\"Method not found\",\"data\":{\"field\":\"method\",\"reason\":\"is not registered\"}}\n"
    );
    let o = run(&["call", &url, "subtract", r#"["x"]"#]).await;
    assert_eq!(o.status.code(), Some(1));
    let e: serde_json::Value = serde_json::from_str(stdout(&o)).unwrap();
    assert_eq!(e["code"], -32602);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_usage_transport_and_timeout_exit_codes() {
    let url = http_server(None).await;
    for params in ["5", "[1,", "\"s\"", "null"] {
        let o = run(&["call", &url, "subtract", params]).await;
        assert_eq!(o.status.code(), Some(2), "{params}: {}", stderr(&o));
        assert!(stderr(&o).contains("PARAMS"), "{}", stderr(&o));
        assert!(o.stdout.is_empty());
    }
    let o = run(&["call", &url]).await;
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["call", "ftp://x/", "m"]).await;
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = run(&["call", "--timeout", "0.05", &url, "never"]).await;
    assert_eq!(o.status.code(), Some(3));
    assert!(stderr(&o).contains("no answer in time"), "{}", stderr(&o));
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let o = run(&["call", &format!("http://{closed}/"), "subtract", "[1,2]"]).await;
    assert_eq!(o.status.code(), Some(3), "{}", stderr(&o));
    assert!(stderr(&o).contains("transport"), "{}", stderr(&o));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_sends_the_token() {
    let url = http_server(Some("s3cret")).await;
    let o = run(&["call", "--token", "s3cret", &url, "sum", "[1,2]"]).await;
    assert_eq!((o.status.code(), stdout(&o)), (Some(0), "3\n"));
    let o = run(&["call", &url, "sum", "[1,2]"]).await;
    assert_eq!(o.status.code(), Some(3));
    assert!(stderr(&o).contains("401"), "{}", stderr(&o));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_over_websocket() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let url = ws_server(Peers::default(), tx).await;
    let o = run(&["call", &url, "subtract", "[42, 23]"]).await;
    assert_eq!(
        (o.status.code(), stdout(&o)),
        (Some(0), "19\n"),
        "{}",
        stderr(&o)
    );
    let o = run(&["call", &url, "nope"]).await;
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        "{\"code\":-32601,\"message\":\"Method not found\",\"data\":{\"field\":\"method\",\"reason\":\"is not registered\"}}\n"
    );
}

/// Waits until the server has seen `n` subscriptions; the last one's peer.
async fn subscribed(peers: &Peers, n: usize) -> switchboard::connection::Peer {
    loop {
        if let Some(p) = peers.lock().unwrap().get(n - 1) {
            return p.clone();
        }
        tokio::task::yield_now().await;
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}

fn push(peer: &switchboard::connection::Peer, sub: &str, result: serde_json::Value) {
    peer.try_notify(
        "test_subscription",
        &json!({"subscription": sub, "result": result}),
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribe_prints_each_notification_then_unsubscribes() {
    let peers = Peers::default();
    let (tx, mut unsubscribed) = mpsc::unbounded_channel();
    let url = ws_server(peers.clone(), tx).await;
    let run = tokio::spawn({
        let url = url.clone();
        async move {
            run(&[
                "subscribe",
                "--count",
                "2",
                &url,
                "test_subscribe",
                "[\"newHeads\"]",
            ])
            .await
        }
    });
    let p = subscribed(&peers, 1).await;
    push(&p, "0x6", json!("someone else's"));
    push(&p, "0x5", json!({"number": "0x1"}));
    push(&p, "0x5", json!({"number": "0x2"}));
    let o = run.await.unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "{\"number\":\"0x1\"}\n{\"number\":\"0x2\"}\n");
    assert_eq!(unsubscribed.recv().await.unwrap(), r#"["0x5"]"#);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribe_runs_until_ctrl_c() {
    let peers = Peers::default();
    let (tx, mut unsubscribed) = mpsc::unbounded_channel();
    let url = ws_server(peers.clone(), tx).await;
    let mut child = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["subscribe", &url, "test_subscribe"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let p = subscribed(&peers, 1).await;
    push(&p, "0x5", json!(1));
    let stdout = child.stdout.take().unwrap();
    let (line, child) = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        (line, child)
    })
    .await
    .unwrap();
    assert_eq!(line, "1\n");
    let pid = child.id().to_string();
    let status = tokio::task::spawn_blocking(move || {
        let mut child = child;
        assert!(
            Command::new("kill")
                .args(["-INT", &pid])
                .status()
                .unwrap()
                .success()
        );
        child.wait().unwrap()
    })
    .await
    .unwrap();
    assert_eq!(status.code(), Some(0));
    assert_eq!(unsubscribed.recv().await.unwrap(), r#"["0x5"]"#);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribe_needs_a_websocket_url() {
    let url = http_server(None).await;
    let o = run(&["subscribe", &url, "eth_subscribe", "[\"newHeads\"]"]).await;
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("WebSocket"), "{}", stderr(&o));
    let o = run(&["subscribe", "ws://127.0.0.1:9/", "watch"]).await;
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--unsubscribe"), "{}", stderr(&o));
}
