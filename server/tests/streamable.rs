//! MCP's Streamable HTTP transport (`switchboard_server::streamable`), driven
//! through `Streamable::respond` with hand-built requests: sessions, JSON and
//! event-stream answers, a request to the client answered by a later POST, a
//! client that drops its stream mid-call, expiry and the session cap, the
//! order of a call's messages and its answer, stateless POSTs, and the endpoint
//! mounted on the JSON-RPC service (`Switchboard::streamable`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, Response, StatusCode};
use switchboard::{Router, RpcError};
use switchboard_server::http::ResponseBody;
use switchboard_server::streamable::{Streamable, StreamableConfig};

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#;

/// Counts the handler futures dropped before they finished.
struct Dropped(Arc<AtomicUsize>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn router(dropped: Arc<AtomicUsize>) -> Arc<Router> {
    switchboard_server::demo::register_countdown(Router::builder(), Duration::ZERO)
        .method("initialize", |_, out| {
            out.raw_json(br#"{"protocolVersion":"2025-11-25"}"#)
        })
        .method("ping", |_, out| out.raw_json(b"{}"))
        .method("poke", |call, out| {
            let peer = call.connection().expect("a session's connection").peer();
            peer.try_notify("poked", &())?;
            out.raw_json(b"{}")
        })
        .method_async("ask", |call| async move {
            let peer = call.connection().expect("a session's connection").peer();
            let answer = peer
                .request("sampling/createMessage", &serde_json::json!({"q": 1}))
                .await
                .map_err(|e| RpcError::new(-32603, e.to_string()))?;
            Ok(answer.parse::<serde_json::Value>().expect("JSON")["text"].clone())
        })
        .method_async("hang", move |call| {
            let guard = Dropped(Arc::clone(&dropped));
            async move {
                let _guard = guard;
                let peer = call.connection().expect("a session's connection").peer();
                peer.notify("started", &()).await.expect("open");
                // Never answered: only the client going away ends this.
                let _ = peer.request("never", &()).await;
                Ok("unreachable")
            }
        })
        .build()
        .unwrap()
}

fn service(config: StreamableConfig) -> (Streamable, Arc<AtomicUsize>) {
    let dropped = Arc::new(AtomicUsize::new(0));
    (
        Streamable::new(router(Arc::clone(&dropped)), config),
        dropped,
    )
}

fn request(method: &str, session: Option<&str>, body: &str) -> Request<Full<Bytes>> {
    let mut b = Request::builder()
        .method(method)
        .uri("/mcp")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(s) = session {
        b = b.header("mcp-session-id", s);
    }
    b.body(Full::new(Bytes::from(body.to_owned()))).unwrap()
}

/// A POST of `body` in the session `sid`.
async fn post(svc: &Streamable, sid: &str, body: &str) -> Response<ResponseBody> {
    svc.respond(request("POST", Some(sid), body)).await
}

async fn body_text(r: Response<ResponseBody>) -> String {
    let bytes = r.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8(bytes.to_vec()).unwrap()
}

/// The next server-sent event's data from a streaming answer.
async fn next_event(body: &mut ResponseBody) -> String {
    let mut text = String::new();
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(10), body.frame())
            .await
            .expect("an event in time")
            .expect("the stream goes on")
            .unwrap();
        text.push_str(std::str::from_utf8(&frame.into_data().unwrap()).unwrap());
        if let Some(data) = text.strip_prefix("event: message\ndata: ")
            && let Some(d) = data.strip_suffix("\n\n")
        {
            return d.to_owned();
        }
    }
}

async fn initialize(svc: &Streamable) -> String {
    let r = svc.respond(request("POST", None, INIT)).await;
    assert_eq!(r.status(), StatusCode::OK);
    let id = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    assert_eq!(r.headers()["content-type"], "application/json");
    assert_eq!(
        body_text(r).await,
        r#"{"jsonrpc":"2.0","result":{"protocolVersion":"2025-11-25"},"id":0}"#
    );
    id
}

async fn until(what: &str, mut f: impl FnMut() -> bool) {
    for _ in 0..500 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{what}: not within 5 s");
}

#[tokio::test]
async fn sessions_start_at_initialize_and_end_at_delete() {
    let (svc, _) = service(StreamableConfig::default());
    let r = svc
        .respond(request(
            "POST",
            None,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        ))
        .await;
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let r = svc.respond(request("POST", Some("nope"), INIT)).await;
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    let sid = initialize(&svc).await;
    assert_eq!(svc.sessions(), 1);
    let r = post(&svc, &sid, r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#).await;
    assert_eq!(
        body_text(r).await,
        r#"{"jsonrpc":"2.0","result":{},"id":2}"#
    );
    let r = post(&svc, &sid, r#"{"jsonrpc":"2.0","method":"ping"}"#).await;
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    assert_eq!(body_text(r).await, "");
    let r = svc.respond(request("POST", Some(&sid), "[1,")).await;
    assert!(body_text(r).await.contains("-32700"));
    let r = svc.respond(request("DELETE", Some(&sid), "")).await;
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    assert_eq!(svc.sessions(), 0);
    let r = post(&svc, &sid, r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#).await;
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_request_to_the_client_streams_and_its_answer_comes_by_post() {
    let (svc, _) = service(StreamableConfig::default());
    let sid = initialize(&svc).await;
    let r = post(&svc, &sid, r#"{"jsonrpc":"2.0","id":"a","method":"ask"}"#).await;
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let mut body = r.into_body();
    let asked: serde_json::Value = serde_json::from_str(&next_event(&mut body).await).unwrap();
    assert_eq!(asked["method"], "sampling/createMessage");
    let answer = serde_json::json!({"jsonrpc":"2.0","id":asked["id"],"result":{"text":"42"}});
    let r = post(&svc, &sid, &answer.to_string()).await;
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    assert_eq!(
        next_event(&mut body).await,
        r#"{"jsonrpc":"2.0","result":"42","id":"a"}"#
    );
    assert!(
        body.frame().await.is_none(),
        "the stream ends after the answer"
    );
}

#[tokio::test]
async fn a_client_that_drops_its_stream_drops_the_call() {
    let (svc, dropped) = service(StreamableConfig::default());
    let sid = initialize(&svc).await;
    let r = post(&svc, &sid, r#"{"jsonrpc":"2.0","id":7,"method":"hang"}"#).await;
    let mut body = r.into_body();
    assert!(
        next_event(&mut body)
            .await
            .contains(r#""method":"started""#)
    );
    assert!(next_event(&mut body).await.contains(r#""method":"never""#));
    assert_eq!(dropped.load(Ordering::SeqCst), 0);
    drop(body); // the client hangs up
    until("the call's future dropped", || {
        dropped.load(Ordering::SeqCst) == 1
    })
    .await;
    // The session lives on.
    let r = post(&svc, &sid, r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#).await;
    assert_eq!(
        body_text(r).await,
        r#"{"jsonrpc":"2.0","result":{},"id":8}"#
    );
}

#[tokio::test]
async fn ending_a_session_fails_what_its_calls_await() {
    let (svc, dropped) = service(StreamableConfig::default());
    let sid = initialize(&svc).await;
    let r = post(&svc, &sid, r#"{"jsonrpc":"2.0","id":7,"method":"hang"}"#).await;
    let mut body = r.into_body();
    next_event(&mut body).await;
    let r = svc.respond(request("DELETE", Some(&sid), "")).await;
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    // The stream ends and the call is gone (cancelled, its request failed).
    let rest = tokio::time::timeout(Duration::from_secs(10), body.collect())
        .await
        .expect("the stream ends")
        .unwrap()
        .to_bytes();
    assert!(!rest.windows(6).any(|w| w == b"result"), "{rest:?}");
    until("the call's future dropped", || {
        dropped.load(Ordering::SeqCst) == 1
    })
    .await;
}

#[tokio::test]
async fn idle_sessions_expire_and_the_cap_holds() {
    let (svc, _) = service(StreamableConfig {
        session_idle_timeout: Duration::from_millis(50),
        max_sessions: 1,
        ..StreamableConfig::default()
    });
    let sid = initialize(&svc).await;
    let r = svc.respond(request("POST", None, INIT)).await;
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    until("the idle session expired", || svc.sessions() == 0).await;
    let r = post(&svc, &sid, r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).await;
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    initialize(&svc).await;
}

#[tokio::test]
async fn get_opens_a_stream_for_what_no_post_carries() {
    let (svc, _) = service(StreamableConfig::default());
    let sid = initialize(&svc).await;
    let get = Request::builder()
        .method("GET")
        .uri("/mcp")
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &sid)
        .body(Full::new(Bytes::new()))
        .unwrap();
    let r = svc.respond(get).await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let mut stream = r.into_body();
    // A sync call that notifies: answered as JSON at once (no POST stream),
    // its notification carried by the GET stream.
    let r = post(&svc, &sid, r#"{"jsonrpc":"2.0","id":9,"method":"poke"}"#).await;
    assert_eq!(r.headers()["content-type"], "application/json");
    assert_eq!(
        body_text(r).await,
        r#"{"jsonrpc":"2.0","result":{},"id":9}"#
    );
    assert_eq!(
        next_event(&mut stream).await,
        r#"{"jsonrpc":"2.0","method":"poked"}"#
    );
    let r = svc.respond(request("DELETE", Some(&sid), "")).await;
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    assert!(
        stream.frame().await.is_none(),
        "the GET stream ends with the session"
    );
}

/// The events of a whole event-stream answer, or the one JSON answer.
async fn messages(r: Response<ResponseBody>) -> Vec<String> {
    let sse = r.headers()["content-type"] == "text/event-stream";
    let text = body_text(r).await;
    if !sse {
        return vec![text];
    }
    text.split("\n\n")
        .filter(|e| !e.is_empty())
        .map(|e| {
            e.strip_prefix("event: message\ndata: ")
                .unwrap_or_else(|| panic!("one data line: {e:?}"))
                .to_owned()
        })
        .collect()
}

/// `countdown [n]`'s messages as they must come: `n` notifications, then the answer.
fn countdown(n: u64, id: u64) -> Vec<String> {
    let mut m: Vec<String> = (0..n)
        .rev()
        .map(|left| {
            format!(r#"{{"jsonrpc":"2.0","method":"countdown","params":{{"left":{left}}}}}"#)
        })
        .collect();
    m.push(format!(r#"{{"jsonrpc":"2.0","result":{n},"id":{id}}}"#));
    m
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_calls_notifications_all_come_before_its_answer() {
    // Sent the instant before the handler returns: the pump must have routed
    // them to the POST's stream before the answer closes it.
    let (svc, _) = service(StreamableConfig::default());
    let sid = initialize(&svc).await;
    for i in 0..50 {
        let n = i % 7 + 1;
        let body = format!(r#"{{"jsonrpc":"2.0","method":"countdown","params":[{n}],"id":{i}}}"#);
        let got = messages(post(&svc, &sid, &body).await).await;
        assert_eq!(got, countdown(n, i), "call {i}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_posts_are_served_by_a_connection_of_their_own() {
    let config = StreamableConfig {
        stateless: true,
        ..StreamableConfig::default()
    };
    let (svc, _) = service(config);
    for i in 0..20 {
        let body = format!(r#"{{"jsonrpc":"2.0","method":"countdown","params":[3],"id":{i}}}"#);
        let r = svc.respond(request("POST", None, &body)).await;
        assert_eq!(r.status(), StatusCode::OK);
        assert!(r.headers().get("mcp-session-id").is_none());
        assert_eq!(messages(r).await, countdown(3, i));
    }
    // A request to the client fails at once: it has no session to answer on.
    let ask = r#"{"jsonrpc":"2.0","method":"ask","id":1}"#;
    let r = tokio::time::timeout(
        Duration::from_secs(10),
        svc.respond(request("POST", None, ask)),
    )
    .await
    .expect("not left waiting for an answer");
    let text = body_text(r).await;
    assert_eq!(
        text,
        r#"{"jsonrpc":"2.0","error":{"code":-32603,"message":"this transport cannot send to the client (it only answers)"},"id":1}"#
    );
    // Plain calls answer as JSON; nothing is left behind.
    let r = svc
        .respond(request(
            "POST",
            None,
            r#"{"jsonrpc":"2.0","method":"ping","id":2}"#,
        ))
        .await;
    assert_eq!(r.headers()["content-type"], "application/json");
    assert_eq!(
        body_text(r).await,
        r#"{"jsonrpc":"2.0","result":{},"id":2}"#
    );
    assert_eq!(svc.sessions(), 0);
    // `initialize` still opens a session.
    let sid = initialize(&svc).await;
    assert_eq!(svc.sessions(), 1);
    let got = messages(
        post(
            &svc,
            &sid,
            r#"{"jsonrpc":"2.0","method":"countdown","params":[2],"id":9}"#,
        )
        .await,
    )
    .await;
    assert_eq!(got, countdown(2, 9));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mounted_on_the_json_rpc_service_with_its_token() {
    use switchboard_server::http::Switchboard;
    let (mcp, _) = service(StreamableConfig::default());
    let plain = Switchboard::new(mcp_router())
        .bearer_token("s3cret")
        .streamable(Some(mcp.clone()));
    let with_token = |mut r: Request<Full<Bytes>>| {
        r.headers_mut()
            .insert("authorization", "Bearer s3cret".parse().unwrap());
        r
    };
    // The token guards the mounted path too.
    let r = plain.respond(request("POST", None, INIT)).await;
    assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(mcp.sessions(), 0);
    let r = plain.respond(with_token(request("POST", None, INIT))).await;
    assert_eq!(r.status(), StatusCode::OK);
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_owned();
    assert_eq!(mcp.sessions(), 1);
    let body = r#"{"jsonrpc":"2.0","method":"countdown","params":[2],"id":1}"#;
    let r = plain
        .respond(with_token(request("POST", Some(&sid), body)))
        .await;
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    assert_eq!(messages(r).await, countdown(2, 1));
    // Another path is the plain endpoint, where the peer cannot send.
    let mut r = with_token(request("POST", None, body));
    *r.uri_mut() = "/".parse().unwrap();
    let r = plain.respond(r).await;
    assert_eq!(r.headers()["content-type"], "application/json");
    assert_eq!(
        body_text(r).await,
        r#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Notifications not supported"},"id":1}"#
    );
    let r = plain
        .respond(with_token(request("DELETE", Some(&sid), "")))
        .await;
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    assert_eq!(mcp.sessions(), 0);
}

fn mcp_router() -> Arc<Router> {
    router(Arc::new(AtomicUsize::new(0)))
}
