//! The client over WebSocket, against a small in-test server on the same
//! WebSocket crate running a switchboard `Session` per connection.

mod support;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::json;
use support::ws_server::{self, Peers};
use switchboard::Router;
use switchboard::connection::{Peer, PeerError};
use switchboard_client::{BatchRequest, Client, Error};
use switchboard_server::demo;
use tokio::sync::mpsc;

/// The demo methods; `test_subscribe` (answers `"0xfeed"`, records its peer),
/// `test_unsubscribe` (reports its params to `unsubscribed`, answers `true`),
/// `close_me` (closes the connection), `never` (never answers).
fn router(
    counters: Arc<demo::Counters>,
    peers: Peers,
    unsubscribed: mpsc::UnboundedSender<String>,
) -> Arc<Router> {
    demo::register(Router::builder(), counters)
        .method("test_subscribe", move |call, out| {
            peers
                .lock()
                .unwrap()
                .push(call.connection().unwrap().peer());
            out.str("0xfeed")
        })
        .method("test_unsubscribe", move |call, out| {
            let _ = unsubscribed.send(call.params().unwrap().as_str().to_owned());
            out.bool(true)
        })
        .method("close_me", |call, out| {
            call.connection().unwrap().close();
            out.null()
        })
        .method_async("never", |_| async {
            std::future::pending::<()>().await;
            Ok(())
        })
        .build()
        .unwrap()
}

struct Fixture {
    url: String,
    counters: Arc<demo::Counters>,
    peers: Peers,
    unsubscribed: mpsc::UnboundedReceiver<String>,
}

async fn fixture() -> Fixture {
    let counters = Arc::new(demo::Counters::default());
    let peers: Peers = Arc::default();
    let (tx, unsubscribed) = mpsc::unbounded_channel();
    let url = ws_server::start(router(counters.clone(), peers.clone(), tx), None).await;
    Fixture {
        url,
        counters,
        peers,
        unsubscribed,
    }
}

fn peer(f: &Fixture) -> Peer {
    f.peers.lock().unwrap().last().unwrap().clone()
}

fn push(peer: &Peer, sub: &str, result: serde_json::Value) {
    peer.try_notify(
        "test_subscription",
        &json!({"subscription": sub, "result": result}),
    )
    .unwrap();
}

#[tokio::test]
async fn calls_notifications_and_batches() {
    let f = fixture().await;
    let client = Client::connect(&f.url).await.unwrap();
    let diff: f64 = client.request("subtract", &[42, 23]).await.unwrap();
    assert_eq!(diff, 19.0);
    let e = client.request_raw("nope", &()).await.unwrap_err();
    assert_eq!(e.rpc().unwrap().code(), -32601);
    client.notify("update", &[1]).await.unwrap();
    let mut b = BatchRequest::new();
    b.request("sum", &[1, 2]).unwrap();
    b.notify("update", &[2]).unwrap();
    b.request("nope", &()).unwrap();
    b.request("subtract", &[5, 3]).unwrap();
    let out = client.batch(&b).await.unwrap();
    assert_eq!(out[0].as_ref().unwrap().as_str(), "3");
    assert_eq!(out[1].as_ref().unwrap_err().rpc().unwrap().code(), -32601);
    assert_eq!(out[2].as_ref().unwrap().as_str(), "2");
    // Messages are handled in order: both notifications were before the
    // batch's answer.
    assert_eq!(f.counters.update.load(Ordering::Relaxed), 2);
    let mut only = BatchRequest::new();
    only.notify("update", &[3]).unwrap();
    assert!(client.batch(&only).await.unwrap().is_empty());
    assert_eq!(client.request::<_, f64>("sum", &[1]).await.unwrap(), 1.0);
    assert_eq!(f.counters.update.load(Ordering::Relaxed), 3);
    assert_eq!(client.unmatched_responses(), 0);
}

#[tokio::test]
async fn concurrent_calls_on_one_connection() {
    let f = fixture().await;
    let client = Client::connect(&f.url).await.unwrap();
    let calls: Vec<_> = (0..100)
        .map(|i| {
            let c = client.clone();
            tokio::spawn(async move { c.request::<_, f64>("subtract", &[i, 1]).await })
        })
        .collect();
    for (i, h) in calls.into_iter().enumerate() {
        assert_eq!(h.await.unwrap().unwrap(), i as f64 - 1.0);
    }
}

#[tokio::test]
async fn a_subscription_yields_its_own_notifications_and_unsubscribes_on_drop() {
    let mut f = fixture().await;
    let client = Client::connect(&f.url).await.unwrap();
    let mut sub = client
        .subscribe("test_subscribe", &["newHeads"], "test_unsubscribe")
        .await
        .unwrap();
    assert_eq!(sub.id(), "\"0xfeed\"");
    let p = peer(&f);
    push(&p, "0xother", json!("not ours"));
    for i in 0..3 {
        push(&p, "0xfeed", json!({"number": i}));
    }
    for i in 0..3 {
        let n = sub.next().await.unwrap().unwrap();
        assert_eq!(n.as_str(), format!(r#"{{"number":{i}}}"#));
        assert_eq!(n.as_raw().get("number").unwrap().as_i64(), Some(i));
    }
    drop(sub);
    assert_eq!(f.unsubscribed.recv().await.unwrap(), r#"["0xfeed"]"#);
    // Explicitly, waiting for the answer.
    let sub = client
        .subscribe("test_subscribe", &["newHeads"], "test_unsubscribe")
        .await
        .unwrap();
    assert_eq!(sub.unsubscribe().await.unwrap().as_str(), "true");
    assert_eq!(f.unsubscribed.recv().await.unwrap(), r#"["0xfeed"]"#);
    // Notifications for it now match nothing; the connection goes on.
    push(&p, "0xfeed", json!(1));
    assert_eq!(client.request::<_, f64>("sum", &[1, 1]).await.unwrap(), 2.0);
}

#[tokio::test]
async fn a_consumer_that_does_not_keep_up_is_told_and_the_subscription_ends() {
    let f = fixture().await;
    let client = Client::builder()
        .subscription_buffer(2)
        .connect(&f.url)
        .await
        .unwrap();
    let mut sub = client
        .subscribe("test_subscribe", &(), "test_unsubscribe")
        .await
        .unwrap();
    let p = peer(&f);
    for i in 0..5 {
        push(&p, "0xfeed", json!(i));
    }
    // Written before this answer, so read before it.
    assert_eq!(client.request::<_, f64>("sum", &[1]).await.unwrap(), 1.0);
    assert_eq!(sub.next().await.unwrap().unwrap().as_str(), "0");
    assert_eq!(sub.next().await.unwrap().unwrap().as_str(), "1");
    assert!(matches!(sub.next().await, Some(Err(Error::Lagged))));
    assert!(sub.next().await.is_none());
}

#[tokio::test]
async fn server_requests_get_method_not_found_unless_routed() {
    let f = fixture().await;
    let client = Client::connect(&f.url).await.unwrap();
    let _sub = client
        .subscribe("test_subscribe", &(), "test_unsubscribe")
        .await
        .unwrap();
    let answer = peer(&f).request("roots/list", &json!({})).await;
    match answer {
        Err(PeerError::Rejected(e)) => assert_eq!(e.code(), -32601),
        other => panic!("{other:?}"),
    }
    let router = Router::builder()
        .method("roots/list", |_, out| out.raw_json(br#"{"roots":[]}"#))
        .build()
        .unwrap();
    let routed = Client::builder()
        .server_requests(router)
        .connect(&f.url)
        .await
        .unwrap();
    let _sub = routed
        .subscribe("test_subscribe", &(), "test_unsubscribe")
        .await
        .unwrap();
    let answer = peer(&f).request("roots/list", &json!({})).await.unwrap();
    assert_eq!(answer.as_bytes(), br#"{"roots":[]}"#);
}

#[tokio::test]
async fn a_closed_connection_fails_its_calls() {
    let f = fixture().await;
    let client = Client::connect(&f.url).await.unwrap();
    let mut sub = client
        .subscribe("test_subscribe", &(), "test_unsubscribe")
        .await
        .unwrap();
    // Answered or not, the connection is gone after it.
    let _ = client.request_raw("close_me", &()).await;
    assert!(
        sub.next().await.is_none(),
        "the subscription ends with the connection"
    );
    let e = client.request_raw("sum", &[1]).await.unwrap_err();
    assert!(matches!(e, Error::Transport(_)), "{e}");
    let e = client.notify("update", &[1]).await;
    assert!(e.is_ok() || matches!(e, Err(Error::Transport(_))));
}

#[tokio::test]
async fn timeouts_and_the_handshake() {
    let f = fixture().await;
    let client = Client::builder()
        .timeout(Some(Duration::from_millis(50)))
        .connect(&f.url)
        .await
        .unwrap();
    assert!(matches!(
        client.request_raw("never", &()).await,
        Err(Error::Timeout)
    ));
    // The token at the upgrade.
    let (tx, _rx) = mpsc::unbounded_channel();
    let guarded =
        ws_server::start(router(Arc::default(), Arc::default(), tx), Some("s3cret")).await;
    match Client::connect(&guarded).await {
        Err(Error::Http { status: 401, .. }) => {}
        other => panic!("{other:?}"),
    }
    let ok = Client::builder()
        .bearer_token("s3cret")
        .connect(&guarded)
        .await
        .unwrap();
    assert_eq!(ok.request::<_, f64>("sum", &[2]).await.unwrap(), 2.0);
    // Nobody listening.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    assert!(matches!(
        Client::connect(&format!("ws://{closed}/")).await,
        Err(Error::Transport(_))
    ));
}

#[tokio::test]
async fn subscriptions_need_a_websocket() {
    let client = Client::connect("http://127.0.0.1:9/").await.unwrap();
    let e = client
        .subscribe("eth_subscribe", &["newHeads"], "eth_unsubscribe")
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Unsupported(_)), "{e}");
}

#[tokio::test]
async fn an_answer_larger_than_the_limit_ends_the_connection_with_a_clear_error() {
    let f = fixture().await;
    let client = Client::builder()
        .max_response_bytes(16)
        .connect(&f.url)
        .await
        .unwrap();
    match client.request_raw("subtract", &[42, 23]).await {
        Err(Error::Transport(why)) => assert!(why.contains("broke"), "{why}"),
        other => panic!("{other:?}"),
    }
}
