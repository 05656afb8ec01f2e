//! HTTP on the ecosystem's parts (issue 22): HTTP/2 cleartext with prior knowledge on
//! `serve_with` (hyper's HTTP/2 client), and tower layers around each connection's
//! service (`serve_with_layer`), tower-http's CORS layer among them.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Frame, SizeHint};
use http_body_util::BodyExt;
use hyper::client::conn::http2::SendRequest;
use hyper::header::{HeaderMap, HeaderValue};
use hyper::{Request, StatusCode, Version};
use hyper_util::rt::{TokioExecutor, TokioIo};
use serde_json::{Value, json};
use switchboard::{ParserConfig, Router};
use switchboard_server::demo;
use switchboard_server::http::{ServeConfig, Switchboard, cors, serve_with, serve_with_layer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const SUBTRACT: &str = r#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#;

struct Server {
    addr: std::net::SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Server {
    async fn stop(mut self) {
        let _ = self.stop.take().unwrap().send(());
        self.task.await.unwrap().unwrap();
    }
}

async fn start(service: Switchboard, config: ServeConfig) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(serve_with(listener, service, config, async {
        let _ = stopped.await;
    }));
    Server {
        addr,
        stop: Some(stop),
        task,
    }
}

/// The demo methods with a 1000-byte message limit.
fn small_router() -> Arc<Router> {
    let mut config = ParserConfig::new();
    config.max_message_bytes(1000);
    demo::register(Router::builder(), Arc::default())
        .config(config)
        .build()
        .unwrap()
}

/// An HTTP/2 connection with prior knowledge (the preface first, no `Upgrade`).
async fn h2(addr: std::net::SocketAddr) -> SendRequest<Body> {
    let stream = TcpStream::connect(addr).await.unwrap();
    let (send, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(conn);
    send
}

/// A request body in given pieces; its size is declared (`Content-Length`) only
/// when `exact`.
struct Body {
    pieces: VecDeque<Bytes>,
    exact: bool,
}

impl Body {
    fn whole(s: &str) -> Body {
        Body {
            pieces: VecDeque::from([Bytes::from(s.to_owned())]),
            exact: true,
        }
    }
}

impl http_body::Body for Body {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        Poll::Ready(self.pieces.pop_front().map(|b| Ok(Frame::data(b))))
    }

    fn is_end_stream(&self) -> bool {
        self.pieces.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        if self.exact {
            SizeHint::with_exact(self.pieces.iter().map(|b| b.len() as u64).sum())
        } else {
            SizeHint::default()
        }
    }
}

fn request(addr: std::net::SocketAddr, method: &str, body: Body) -> Request<Body> {
    Request::builder()
        .method(method)
        .uri(format!("http://{addr}/"))
        .header("content-type", "application/json")
        .body(body)
        .unwrap()
}

async fn send(c: &mut SendRequest<Body>, r: Request<Body>) -> (StatusCode, HeaderMap, Bytes) {
    c.ready().await.unwrap();
    let resp = c.send_request(r).await.unwrap();
    assert_eq!(resp.version(), Version::HTTP_2);
    let (parts, body) = resp.into_parts();
    (
        parts.status,
        parts.headers,
        body.collect().await.unwrap().to_bytes(),
    )
}

fn json_of(b: &Bytes) -> Value {
    serde_json::from_slice(b).unwrap()
}

/// One HTTP/1.1 exchange on a connection of its own (`Connection: close`).
async fn h1(addr: std::net::SocketAddr, head: &str, body: &str) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    let req = format!(
        "{head}\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h2c_with_prior_knowledge_gets_the_same_answers() {
    let server = start(Switchboard::new(demo::router()), ServeConfig::default()).await;
    let addr = server.addr;
    let mut c = h2(addr).await;
    let (status, headers, body) = send(&mut c, request(addr, "POST", Body::whole(SUBTRACT))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(&body[..], br#"{"jsonrpc":"2.0","result":19,"id":1}"#);
    // The same bytes as over HTTP/1.1.
    let over_h1 = h1(
        addr,
        "POST / HTTP/1.1\r\nContent-Type: application/json",
        SUBTRACT,
    )
    .await;
    assert!(over_h1.starts_with("HTTP/1.1 200 OK\r\n"), "{over_h1}");
    assert!(over_h1.ends_with(std::str::from_utf8(&body).unwrap()));

    // A batch, on the same connection.
    let batch = r#"[{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1},
        {"jsonrpc":"2.0","method":"update","params":[1]},
        {"jsonrpc":"2.0","method":"subtract","params":{"minuend":5,"subtrahend":7},"id":"b"},
        {"jsonrpc":"2.0","method":"nope","id":3}]"#;
    let (status, _, body) = send(&mut c, request(addr, "POST", Body::whole(batch))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        json_of(&body),
        json!([
            {"jsonrpc": "2.0", "result": 19, "id": 1},
            {"jsonrpc": "2.0", "result": -2, "id": "b"},
            {"jsonrpc": "2.0", "error": {"code": -32601, "message": "Method not found",
                "data": {"field": "method", "reason": "is not registered"}}, "id": 3}
        ])
    );
    // A notification: 204; a GET: 405 (WebSocket is HTTP/1.1's upgrade).
    let note = r#"{"jsonrpc":"2.0","method":"update","params":[1]}"#;
    let (status, _, body) = send(&mut c, request(addr, "POST", Body::whole(note))).await;
    assert_eq!((status, body.len()), (StatusCode::NO_CONTENT, 0));
    let (status, headers, _) = send(&mut c, request(addr, "GET", Body::whole(""))).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(headers["allow"], "POST");
    // Another content type: 415, the stream's answer alone.
    let mut r = request(addr, "POST", Body::whole(SUBTRACT));
    r.headers_mut()
        .insert("content-type", HeaderValue::from_static("text/plain"));
    assert_eq!(send(&mut c, r).await.0, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    drop(c);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h2_bodies_over_the_limit_are_413_and_the_connection_goes_on() {
    let server = start(Switchboard::new(small_router()), ServeConfig::default()).await;
    let addr = server.addr;
    let mut c = h2(addr).await;
    let big = format!(
        r#"{{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":"{}"}}"#,
        "x".repeat(1500)
    );
    // Declared too long (content-length): refused before reading.
    let (status, _, body) = send(&mut c, request(addr, "POST", Body::whole(&big))).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body:?}");
    // Far more than the stream's flow-control window: answered 413 before the
    // client has sent it, the rest refused with RST_STREAM(NO_ERROR) (RFC 9113
    // 8.1), which hyper's client takes as the end of a complete answer.
    let huge = " ".repeat(4 << 20);
    let (status, _, _) = send(&mut c, request(addr, "POST", Body::whole(&huge))).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    // No length declared, found too long while reading.
    let (a, b) = big.split_at(800);
    let pieces = Body {
        pieces: VecDeque::from([Bytes::from(a.to_owned()), Bytes::from(b.to_owned())]),
        exact: false,
    };
    let (status, _, _) = send(&mut c, request(addr, "POST", pieces)).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    // The same connection still answers: a stream's 413 ends that stream only.
    let (status, _, body) = send(&mut c, request(addr, "POST", Body::whole(SUBTRACT))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(json_of(&body)["result"], 19);
    // A body in pieces within the limit is collected and answered.
    let (a, b) = SUBTRACT.split_at(20);
    let pieces = Body {
        pieces: VecDeque::from([Bytes::from(a.to_owned()), Bytes::from(b.to_owned())]),
        exact: false,
    };
    let (status, _, body) = send(&mut c, request(addr, "POST", pieces)).await;
    assert_eq!(
        (status, json_of(&body)["result"].clone()),
        (StatusCode::OK, json!(19))
    );
    drop(c);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h2_streams_at_once_then_idle_connection_closed_by_the_header_timeout() {
    let config = ServeConfig {
        header_read_timeout: Duration::from_millis(300),
        ..ServeConfig::default()
    };
    let server = start(Switchboard::new(demo::router()), config).await;
    let addr = server.addr;
    let c = h2(addr).await;
    // 40 calls in flight on one connection (more than the 64-stream cap is not
    // needed: every one is answered, with its own id).
    let calls = (0..40).map(|i| {
        let mut c = c.clone();
        tokio::spawn(async move {
            let body =
                format!(r#"{{"jsonrpc":"2.0","method":"subtract","params":[{i},1],"id":{i}}}"#);
            let (status, _, body) = send(&mut c, request(addr, "POST", Body::whole(&body))).await;
            (i, status, json_of(&body))
        })
    });
    for call in calls {
        let (i, status, v) = call.await.unwrap();
        assert_eq!(status, StatusCode::OK);
        assert_eq!(v, json!({"jsonrpc": "2.0", "result": i - 1, "id": i}));
    }
    // Every call counted finished (on the streams' tasks, other threads): the
    // connection is idle, and the sweeper closes it (between 300 and 375 ms).
    let mut c = c;
    let closed = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            if c.ready().await.is_err() || c.is_closed() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(closed.is_ok(), "an idle HTTP/2 connection was not closed");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_false_serves_http1_only() {
    let config = ServeConfig {
        http2: false,
        ..ServeConfig::default()
    };
    let server = start(Switchboard::new(demo::router()), config).await;
    let addr = server.addr;
    let stream = TcpStream::connect(addr).await.unwrap();
    let handshake =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream)).await;
    // hyper's client sends its preface and request at once; HTTP/1.1 refuses it.
    if let Ok((mut c, conn)) = handshake {
        tokio::spawn(conn);
        let r = c.send_request(request(addr, "POST", Body::whole(SUBTRACT)));
        assert!(r.await.is_err());
    }
    let over_h1 = h1(
        addr,
        "POST / HTTP/1.1\r\nContent-Type: application/json",
        SUBTRACT,
    )
    .await;
    assert!(
        over_h1.ends_with(r#"{"jsonrpc":"2.0","result":19,"id":1}"#),
        "{over_h1}"
    );
    server.stop().await;
}

/// `serve_with_layer`'s service: the layers' and `start`'s in one.
async fn start_layered<L, B>(service: Switchboard, layer: L, config: ServeConfig) -> Server
where
    L: tower::Layer<Switchboard> + Send + Sync + 'static,
    L::Service: tower::Service<Request<hyper::body::Incoming>, Response = hyper::Response<B>>
        + Clone
        + Send
        + 'static,
    <L::Service as tower::Service<Request<hyper::body::Incoming>>>::Future: Send + 'static,
    <L::Service as tower::Service<Request<hyper::body::Incoming>>>::Error:
        Into<Box<dyn std::error::Error + Send + Sync>>,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(serve_with_layer(listener, service, layer, config, async {
        let _ = stopped.await;
    }));
    Server {
        addr,
        stop: Some(stop),
        task,
    }
}

/// A layer of the application's own: answers 403 itself unless `x-key: k`.
#[derive(Clone)]
struct Keyed<S>(S);

impl<S, B> tower::Service<Request<B>> for Keyed<S>
where
    S: tower::Service<
            Request<B>,
            Response = hyper::Response<switchboard_server::http::ResponseBody>,
        >,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        if req.headers().get("x-key").is_none_or(|k| k != "k") {
            let mut r = hyper::Response::new(switchboard_server::http::ResponseBody::Full(None));
            *r.status_mut() = StatusCode::FORBIDDEN;
            return Box::pin(async move { Ok(r) });
        }
        Box::pin(self.0.call(req))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tower_layers_wrap_each_connection_on_http1_and_http2() {
    let layers = tower::ServiceBuilder::new()
        .map_response(|mut r: hyper::Response<_>| {
            r.headers_mut()
                .insert("x-layer", HeaderValue::from_static("outer"));
            r
        })
        .concurrency_limit(4)
        .layer(tower::layer::layer_fn(Keyed));
    let config = ServeConfig {
        header_read_timeout: Duration::from_millis(300),
        ..ServeConfig::default()
    };
    let server = start_layered(Switchboard::new(demo::router()), layers, config).await;
    let addr = server.addr;
    // HTTP/1.1: refused by the inner layer, then let through; the outer layer's
    // header on both.
    let refused = h1(
        addr,
        "POST / HTTP/1.1\r\nContent-Type: application/json",
        SUBTRACT,
    )
    .await;
    assert!(
        refused.starts_with("HTTP/1.1 403 Forbidden\r\n"),
        "{refused}"
    );
    assert!(refused.contains("x-layer: outer\r\n"), "{refused}");
    let ok = h1(
        addr,
        "POST / HTTP/1.1\r\nx-key: k\r\nContent-Type: application/json",
        SUBTRACT,
    )
    .await;
    assert!(ok.contains("x-layer: outer\r\n"), "{ok}");
    assert!(
        ok.ends_with(r#"{"jsonrpc":"2.0","result":19,"id":1}"#),
        "{ok}"
    );
    // HTTP/2: the same layers; 8 calls at once through a limit of 4 in flight.
    let c = h2(addr).await;
    let calls = (0..8).map(|i| {
        let mut c = c.clone();
        tokio::spawn(async move {
            let body =
                format!(r#"{{"jsonrpc":"2.0","method":"subtract","params":[{i},1],"id":{i}}}"#);
            let mut r = request(addr, "POST", Body::whole(&body));
            r.headers_mut()
                .insert("x-key", HeaderValue::from_static("k"));
            let (status, headers, body) = send(&mut c, r).await;
            (i, status, headers, json_of(&body))
        })
    });
    for call in calls {
        let (i, status, headers, v) = call.await.unwrap();
        assert_eq!(status, StatusCode::OK);
        assert_eq!(headers["x-layer"], "outer");
        assert_eq!(v["result"], i - 1);
    }
    drop(c);
    // The sweeper still sees the layered calls: an idle keep-alive connection
    // is closed after the header timeout.
    let mut s = TcpStream::connect(addr).await.unwrap();
    let req = format!(
        "POST / HTTP/1.1\r\nHost: x\r\nx-key: k\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{SUBTRACT}",
        SUBTRACT.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 4096];
    let n = s.read(&mut buf).await.unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200 OK\r\n"));
    let eof = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf)).await;
    assert!(matches!(eof, Ok(Ok(0)) | Ok(Err(_))), "{eof:?}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cors_layer_on_http2_and_websocket_upgrades_through_layers() {
    let server = start_layered(
        Switchboard::new(demo::router()),
        cors(&["https://app.example"]).unwrap(),
        ServeConfig::default(),
    )
    .await;
    let addr = server.addr;
    let mut c = h2(addr).await;
    let mut pre = request(addr, "OPTIONS", Body::whole(""));
    let h = pre.headers_mut();
    h.insert("origin", HeaderValue::from_static("https://app.example"));
    h.insert(
        "access-control-request-method",
        HeaderValue::from_static("POST"),
    );
    let (status, headers, _) = send(&mut c, pre).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        headers["access-control-allow-origin"],
        "https://app.example"
    );
    let mut post = request(addr, "POST", Body::whole(SUBTRACT));
    post.headers_mut()
        .insert("origin", HeaderValue::from_static("https://evil.example"));
    let (status, headers, body) = send(&mut c, post).await;
    assert_eq!(status, StatusCode::OK);
    assert!(headers.get("access-control-allow-origin").is_none());
    assert_eq!(json_of(&body)["result"], 19);
    drop(c);
    // A WebSocket upgrade through the layer: 101, then JSON-RPC over the socket.
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(
        b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
          Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\
          Origin: https://app.example\r\n\r\n",
    )
    .await
    .unwrap();
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut b = [0u8; 1];
        assert_eq!(s.read(&mut b).await.unwrap(), 1);
        head.push(b[0]);
    }
    let head = String::from_utf8(head).unwrap();
    assert!(head.starts_with("HTTP/1.1 101 "), "{head}");
    // One masked text frame (client to server), answered by one text frame.
    let payload = SUBTRACT.as_bytes();
    let mask = [1u8, 2, 3, 4];
    let mut frame = vec![0x81, 0x80 | payload.len() as u8];
    frame.extend_from_slice(&mask);
    frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    s.write_all(&frame).await.unwrap();
    let mut h = [0u8; 2];
    s.read_exact(&mut h).await.unwrap();
    assert_eq!(h[0], 0x81);
    let mut answer = vec![0u8; usize::from(h[1] & 0x7f)];
    s.read_exact(&mut answer).await.unwrap();
    assert_eq!(&answer[..], br#"{"jsonrpc":"2.0","result":19,"id":1}"#);
    drop(s);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_bytes_in_pieces_are_told_apart_and_a_stalled_preface_is_closed() {
    let config = ServeConfig {
        header_read_timeout: Duration::from_millis(300),
        ..ServeConfig::default()
    };
    let server = start(Switchboard::new(demo::router()), config).await;
    // HTTP/1.1 whose first byte comes alone (a prefix of the HTTP/2 preface too).
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    s.write_all(b"P").await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let rest = format!(
        "OST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{SUBTRACT}",
        SUBTRACT.len()
    );
    s.write_all(rest.as_bytes()).await.unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    assert!(
        out.ends_with(r#"{"jsonrpc":"2.0","result":19,"id":1}"#),
        "{out}"
    );
    // Half of the preface, then silence: closed by the header timeout.
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    s.write_all(b"PRI * HTTP/2.0\r\n").await.unwrap();
    let mut buf = [0u8; 64];
    let eof = tokio::time::timeout(Duration::from_secs(5), s.read(&mut buf)).await;
    assert!(matches!(eof, Ok(Ok(0)) | Ok(Err(_))), "{eof:?}");
    server.stop().await;
}
