//! JSON-RPC over WebSocket on `http::serve_with`'s listener, driven by a raw
//! client (the handshake and frames written by hand, so that bad frames can be
//! sent): calls, batches, notifications, the close codes, the bearer token, the
//! idle timeout, the shared connection limit and a server-to-client request.

use std::sync::Arc;
use std::time::Duration;

use switchboard::{ParserConfig, Router};
use switchboard_server::http::{ServeConfig, Switchboard, serve_with};
use switchboard_server::ws::WsConfig;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const LIMIT: usize = 4096;

fn router() -> Arc<Router> {
    let mut config = ParserConfig::new();
    config.max_message_bytes(LIMIT);
    switchboard_server::demo::register(Router::builder(), Arc::default())
        .method_async("ask", |call| async move {
            let peer = call.connection().expect("served by a driver").peer();
            let answer = peer.request("question", &["ready?"]).await?;
            Ok(answer.as_raw().as_bool() == Some(true))
        })
        .config(config)
        .build()
        .unwrap()
}

struct Server {
    addr: std::net::SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
}

async fn start(token: Option<&str>, ws: WsConfig, max_connections: usize) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let mut service = Switchboard::new(router()).websocket(Some(ws));
    if let Some(t) = token {
        service = service.bearer_token(t);
    }
    let config = ServeConfig {
        max_connections,
        ..ServeConfig::default()
    };
    tokio::spawn(serve_with(listener, service, config, async {
        let _ = stopped.await;
    }));
    Server { addr, stop }
}

async fn default_server() -> Server {
    start(None, WsConfig::default(), 100).await
}

struct Client {
    s: TcpStream,
    buf: Vec<u8>,
}

/// What a read found: a frame (opcode, payload) or the end of the stream.
#[derive(Debug, PartialEq)]
enum Read {
    Frame(u8, Vec<u8>),
    Eof,
}

const HANDSHAKE: &str = "GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n";

/// Sends the handshake; the status line and headers of the answer, and the
/// stream.
async fn handshake(addr: std::net::SocketAddr, extra: &str) -> (String, Client) {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(format!("{HANDSHAKE}{extra}\r\n").as_bytes())
        .await
        .unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
        let n = s.read(&mut chunk).await.unwrap();
        assert!(n > 0, "closed during the handshake: {buf:?}");
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8(buf[..end].to_vec()).unwrap();
    buf.drain(..end);
    (head, Client { s, buf })
}

async fn connect(addr: std::net::SocketAddr) -> Client {
    let (head, c) = handshake(addr, "").await;
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("sec-websocket-accept: s3pplmbitxaq9kygzzhzrbk+xoo="),
        "{head}"
    );
    c
}

fn encode(opcode: u8, fin: bool, payload: &[u8]) -> Vec<u8> {
    let mask = [0x37u8, 0xfa, 0x21, 0x3d];
    let mut out = vec![if fin { 0x80 } else { 0 } | opcode];
    let n = payload.len();
    if n < 126 {
        out.push(0x80 | n as u8);
    } else if n <= 0xffff {
        out.push(0x80 | 126);
        out.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        out.push(0x80 | 127);
        out.extend_from_slice(&(n as u64).to_be_bytes());
    }
    out.extend_from_slice(&mask);
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    out
}

impl Client {
    async fn send(&mut self, opcode: u8, fin: bool, payload: &[u8]) {
        self.s
            .write_all(&encode(opcode, fin, payload))
            .await
            .unwrap();
    }

    async fn text(&mut self, msg: &str) {
        self.send(0x1, true, msg.as_bytes()).await;
    }

    async fn fill(&mut self, n: usize) -> bool {
        let mut chunk = [0u8; 65536];
        while self.buf.len() < n {
            match self.s.read(&mut chunk).await {
                Ok(0) | Err(_) => return false,
                Ok(k) => self.buf.extend_from_slice(&chunk[..k]),
            }
        }
        true
    }

    /// The next frame from the server (never masked), or the end.
    async fn read(&mut self) -> Read {
        if !self.fill(2).await {
            return Read::Eof;
        }
        let opcode = self.buf[0] & 0x0f;
        assert_eq!(self.buf[0] & 0x80, 0x80, "the server sends whole frames");
        assert_eq!(self.buf[1] & 0x80, 0, "the server does not mask");
        let (len, head) = match self.buf[1] & 0x7f {
            126 => {
                assert!(self.fill(4).await);
                (u16::from_be_bytes([self.buf[2], self.buf[3]]) as usize, 4)
            }
            127 => {
                assert!(self.fill(10).await);
                let b: [u8; 8] = self.buf[2..10].try_into().unwrap();
                (u64::from_be_bytes(b) as usize, 10)
            }
            n => (n as usize, 2),
        };
        assert!(self.fill(head + len).await, "closed inside a frame");
        let payload = self.buf[head..head + len].to_vec();
        self.buf.drain(..head + len);
        Read::Frame(opcode, payload)
    }

    /// The next text message, skipping pings.
    async fn message(&mut self) -> String {
        loop {
            match self.read().await {
                Read::Frame(0x1, p) => return String::from_utf8(p).unwrap(),
                Read::Frame(0x9, _) => {}
                other => panic!("expected a text frame, got {other:?}"),
            }
        }
    }

    /// The close frame's code (pings and text skipped), then the end.
    async fn close_code(&mut self) -> u16 {
        loop {
            match self.read().await {
                Read::Frame(0x8, p) => {
                    assert!(p.len() >= 2, "{p:?}");
                    let code = u16::from_be_bytes([p[0], p[1]]);
                    assert_eq!(self.read().await, Read::Eof, "nothing after the close");
                    return code;
                }
                Read::Frame(_, _) => {}
                Read::Eof => panic!("the stream ended without a close frame"),
            }
        }
    }
}

#[tokio::test]
async fn a_call_and_a_batch_are_answered_one_text_frame_each() {
    let server = default_server().await;
    let mut c = connect(server.addr).await;
    c.text(r#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#)
        .await;
    assert_eq!(c.message().await, r#"{"jsonrpc":"2.0","result":19,"id":1}"#);
    c.text(r#"[{"jsonrpc":"2.0","method":"subtract","params":[1,2],"id":"a"},{"jsonrpc":"2.0","method":"update","params":[1]},{"jsonrpc":"2.0","method":"nope","id":3}]"#).await;
    let batch: serde_json::Value = serde_json::from_str(&c.message().await).unwrap();
    let batch = batch
        .as_array()
        .expect("one frame with the batch's answers");
    assert_eq!(batch.len(), 2);
    assert_eq!(batch[0]["result"], -1);
    assert_eq!(batch[1]["error"]["code"], -32601);
}

#[tokio::test]
async fn a_notification_gets_no_frame() {
    let server = default_server().await;
    let mut c = connect(server.addr).await;
    c.text(r#"{"jsonrpc":"2.0","method":"update","params":[1]}"#)
        .await;
    c.text(r#"{"jsonrpc":"2.0","method":"get_data","id":2}"#)
        .await;
    // The first frame that comes is the call's: the notification had none.
    assert_eq!(
        c.message().await,
        r#"{"jsonrpc":"2.0","result":["hello",5],"id":2}"#
    );
}

#[tokio::test]
async fn invalid_json_is_answered_parse_error() {
    let server = default_server().await;
    let mut c = connect(server.addr).await;
    c.text(r#"{"jsonrpc":"2.0","method":"#).await;
    let v: serde_json::Value = serde_json::from_str(&c.message().await).unwrap();
    assert_eq!(v["error"]["code"], -32700);
    assert_eq!(v["id"], serde_json::Value::Null);
}

#[tokio::test]
async fn invalid_utf8_closes_1007() {
    let server = default_server().await;
    let mut c = connect(server.addr).await;
    c.send(
        0x1,
        true,
        b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\",\"id\":1}",
    )
    .await;
    assert_eq!(c.close_code().await, 1007);
    // Split across fragments, checked on the whole message.
    let mut c = connect(server.addr).await;
    c.send(0x1, false, b"[\"\xe2").await;
    c.send(0x0, true, b"\x28\xa1\"]").await;
    assert_eq!(c.close_code().await, 1007);
}

#[tokio::test]
async fn a_binary_frame_is_handled_as_text_and_answered_in_text() {
    let server = default_server().await;
    let mut c = connect(server.addr).await;
    c.send(
        0x2,
        true,
        br#"{"jsonrpc":"2.0","method":"subtract","params":[5,3],"id":9}"#,
    )
    .await;
    assert_eq!(c.message().await, r#"{"jsonrpc":"2.0","result":2,"id":9}"#);
    c.send(0x2, true, b"\xc3\x28").await;
    assert_eq!(c.close_code().await, 1007);
}

#[tokio::test]
async fn a_fragmented_message_is_one_message() {
    let server = default_server().await;
    let mut c = connect(server.addr).await;
    c.send(0x1, false, br#"{"jsonrpc":"2.0","#).await;
    c.send(0x9, true, b"in between").await; // a control frame between fragments
    c.send(0x0, false, br#""method":"subtract","#).await;
    c.send(0x0, true, br#""params":[10,4],"id":5}"#).await;
    assert_eq!(c.read().await, Read::Frame(0xA, b"in between".to_vec()));
    assert_eq!(c.message().await, r#"{"jsonrpc":"2.0","result":6,"id":5}"#);
}

#[tokio::test]
async fn oversize_messages_and_frames_close_1009() {
    let server = start(
        None,
        WsConfig {
            max_frame_bytes: 1024,
            ..WsConfig::default()
        },
        100,
    )
    .await;
    // One frame over the frame limit.
    let mut c = connect(server.addr).await;
    c.send(0x1, true, &vec![b' '; 2000]).await;
    assert_eq!(c.close_code().await, 1009);
    // Fragments, each within the frame limit, adding up past max_message_bytes:
    // closed when the sum passes it.
    let mut c = connect(server.addr).await;
    c.send(0x1, false, &[b' '; 1000]).await;
    for _ in 0..4 {
        c.send(0x0, false, &[b' '; 1000]).await;
    }
    assert_eq!(c.close_code().await, 1009);
}

#[tokio::test]
async fn the_token_is_checked_before_upgrading() {
    let server = start(Some("s3cret"), WsConfig::default(), 100).await;
    let (head, _) = handshake(server.addr, "").await;
    assert!(head.starts_with("HTTP/1.1 401"), "{head}");
    let (head, _) = handshake(server.addr, "Authorization: Bearer wrong\r\n").await;
    assert!(head.starts_with("HTTP/1.1 401"), "{head}");
    let (head, mut c) = handshake(server.addr, "Authorization: Bearer s3cret\r\n").await;
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    c.text(r#"{"jsonrpc":"2.0","method":"subtract","params":[2,1],"id":1}"#)
        .await;
    assert_eq!(c.message().await, r#"{"jsonrpc":"2.0","result":1,"id":1}"#);
}

#[tokio::test]
async fn a_bad_handshake_is_400_and_websocket_off_is_405() {
    let server = default_server().await;
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n").await.unwrap();
    let mut head = [0u8; 12];
    s.read_exact(&mut head).await.unwrap();
    assert_eq!(&head, b"HTTP/1.1 400");

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let service = Switchboard::new(router()).websocket(None);
    tokio::spawn(serve_with(
        listener,
        service,
        ServeConfig::default(),
        std::future::pending(),
    ));
    let (head, _) = handshake(addr, "").await;
    assert!(head.starts_with("HTTP/1.1 405"), "{head}");
}

#[tokio::test]
async fn a_silent_client_is_pinged_then_closed() {
    let server = start(
        None,
        WsConfig {
            ping_interval: Duration::from_millis(40),
            idle_timeout: Duration::from_millis(200),
            ..WsConfig::default()
        },
        100,
    )
    .await;
    let mut c = connect(server.addr).await;
    // A ping comes first; not answering it, the client is closed as idle.
    assert_eq!(c.read().await, Read::Frame(0x9, Vec::new()));
    assert_eq!(c.close_code().await, 1000);
}

#[tokio::test]
async fn the_client_closing_is_echoed() {
    let server = default_server().await;
    let mut c = connect(server.addr).await;
    c.send(0x8, true, &[0x03, 0xe8]).await; // 1000
    assert_eq!(c.close_code().await, 1000);
}

/// With one connection slot, the next client is served only once the previous
/// one's slot is back: an abrupt disconnect mid-frame leaves nothing held, and
/// an open WebSocket holds the slot HTTP connections share.
#[tokio::test]
async fn the_connection_limit_is_shared_and_released_on_abrupt_disconnect() {
    let server = start(None, WsConfig::default(), 1).await;
    let mut c = connect(server.addr).await;
    c.text(r#"{"jsonrpc":"2.0","method":"subtract","params":[3,1],"id":1}"#)
        .await;
    assert_eq!(c.message().await, r#"{"jsonrpc":"2.0","result":2,"id":1}"#);
    // While it is open, an HTTP client waits in the backlog.
    let mut http = TcpStream::connect(server.addr).await.unwrap();
    let body = r#"{"jsonrpc":"2.0","method":"subtract","params":[9,1],"id":2}"#;
    http.write_all(
        format!(
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let mut first = [0u8; 12];
    let waited =
        tokio::time::timeout(Duration::from_millis(300), http.read_exact(&mut first)).await;
    assert!(
        waited.is_err(),
        "served while the WebSocket held the only slot"
    );
    // Half a frame, then the socket drops.
    let frame = encode(
        0x1,
        true,
        br#"{"jsonrpc":"2.0","method":"subtract","params":[3,1],"id":1}"#,
    );
    c.s.write_all(&frame[..frame.len() / 2]).await.unwrap();
    drop(c);
    http.read_exact(&mut first).await.unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    drop(http);
    let mut c = connect(server.addr).await;
    c.text(r#"{"jsonrpc":"2.0","method":"subtract","params":[4,1],"id":3}"#)
        .await;
    assert_eq!(c.message().await, r#"{"jsonrpc":"2.0","result":3,"id":3}"#);
}

#[tokio::test]
async fn a_handler_requests_the_client_and_awaits_its_answer() {
    let server = default_server().await;
    let mut c = connect(server.addr).await;
    c.text(r#"{"jsonrpc":"2.0","method":"ask","id":7}"#).await;
    let request: serde_json::Value = serde_json::from_str(&c.message().await).unwrap();
    assert_eq!(request["method"], "question");
    assert_eq!(request["params"], serde_json::json!(["ready?"]));
    // A call in between is answered while `ask` waits.
    c.text(r#"{"jsonrpc":"2.0","method":"subtract","params":[1,1],"id":8}"#)
        .await;
    assert_eq!(c.message().await, r#"{"jsonrpc":"2.0","result":0,"id":8}"#);
    let answer = format!(
        r#"{{"jsonrpc":"2.0","result":true,"id":{}}}"#,
        request["id"]
    );
    c.text(&answer).await;
    assert_eq!(
        c.message().await,
        r#"{"jsonrpc":"2.0","result":true,"id":7}"#
    );
}

/// A flood of pings from a client that does not read: the server keeps one
/// pong to send (the latest), so it neither blocks reading nor queues one per
/// ping; far fewer pongs than pings arrive, and a call after is answered.
#[tokio::test]
async fn a_ping_flood_is_answered_by_the_latest_pong_only() {
    let server = default_server().await;
    let mut c = connect(server.addr).await;
    const PINGS: usize = 200_000;
    let mut all = Vec::with_capacity(PINGS * 131);
    for i in 0..PINGS {
        let mut p = [b'p'; 125];
        p[..8].copy_from_slice(&(i as u64).to_be_bytes());
        all.extend_from_slice(&encode(0x9, true, &p));
    }
    all.extend_from_slice(&encode(
        0x1,
        true,
        br#"{"jsonrpc":"2.0","method":"subtract","params":[7,7],"id":1}"#,
    ));
    // Written while nothing is read: 26 MB, more than the socket buffers hold.
    c.s.write_all(&all).await.unwrap();
    let mut pongs = 0usize;
    let mut last = 0u64;
    let answer = loop {
        match c.read().await {
            Read::Frame(0xA, p) => {
                pongs += 1;
                let n = u64::from_be_bytes(p[..8].try_into().unwrap());
                assert!(n >= last, "pongs in order");
                last = n;
            }
            Read::Frame(0x1, p) => break String::from_utf8(p).unwrap(),
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(answer, r#"{"jsonrpc":"2.0","result":0,"id":1}"#);
    assert_eq!(last, PINGS as u64 - 1, "the last ping is answered");
    assert!(pongs < PINGS / 2, "{pongs} pongs for {PINGS} pings");
}

#[tokio::test]
async fn server_shutdown_closes_1001_after_answering_what_runs() {
    let server = default_server().await;
    let mut c = connect(server.addr).await;
    c.text(r#"{"jsonrpc":"2.0","method":"subtract","params":[2,2],"id":1}"#)
        .await;
    assert_eq!(c.message().await, r#"{"jsonrpc":"2.0","result":0,"id":1}"#);
    server.stop.send(()).unwrap();
    assert_eq!(c.close_code().await, 1001);
}

#[tokio::test]
async fn a_thousand_idle_sockets_are_held_and_served() {
    let server = start(None, WsConfig::default(), 1000).await;
    let mut clients = Vec::new();
    for _ in 0..1000 {
        clients.push(connect(server.addr).await);
    }
    for i in [0, 499, 999] {
        let c = &mut clients[i];
        c.text(&format!(
            r#"{{"jsonrpc":"2.0","method":"subtract","params":[{i},1],"id":{i}}}"#
        ))
        .await;
        let want = format!(r#"{{"jsonrpc":"2.0","result":{},"id":{i}}}"#, i as i64 - 1);
        assert_eq!(c.message().await, want);
    }
}

/// A request to the client still waiting when the client goes away fails with
/// `PeerError::Closed` at once (not at its timeout), and the server's slot is
/// back.
#[tokio::test]
async fn a_disconnect_fails_the_pending_request_to_the_client() {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let router = Router::builder()
        .method_async("ask", move |call| {
            let tx = tx.clone();
            async move {
                let peer = call.connection().expect("served by a driver").peer();
                let outcome = peer.request("question", &["ready?"]).await;
                let _ = tx.send(format!("{outcome:?}"));
                Ok(true)
            }
        })
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let config = ServeConfig {
        max_connections: 1,
        ..ServeConfig::default()
    };
    tokio::spawn(serve_with(
        listener,
        Switchboard::new(router),
        config,
        std::future::pending(),
    ));
    let mut c = connect(addr).await;
    c.text(r#"{"jsonrpc":"2.0","method":"ask","id":1}"#).await;
    let request: serde_json::Value = serde_json::from_str(&c.message().await).unwrap();
    assert_eq!(request["method"], "question");
    drop(c);
    let outcome = rx.recv().await.unwrap();
    assert!(outcome.contains("Closed"), "{outcome}");
    // The only slot is free again.
    let mut c = connect(addr).await;
    c.text(r#"{"jsonrpc":"2.0","method":"nope","id":2}"#).await;
    assert!(c.message().await.contains("-32601"));
}

#[tokio::test]
async fn a_client_that_never_reads_is_closed_by_the_write_timeout() {
    // Over an in-memory pipe of 256 bytes: the client sends calls and reads
    // nothing; once the pipe and the queue are full, after the write timeout the
    // server ends the connection instead of holding it for ever.
    let mut ws = WsConfig::default();
    ws.duplex.write_timeout = Duration::from_millis(300);
    ws.duplex.connection.queue_capacity(4);
    let (client, server) = tokio::io::duplex(256);
    let serving = tokio::spawn(switchboard_server::ws::serve(
        router(),
        ws,
        server,
        std::future::pending(),
    ));
    let (_cr, mut cw) = tokio::io::split(client); // `_cr` kept open, never read
    let call = br#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#;
    let writer = tokio::spawn(async move {
        for _ in 0..100_000 {
            if cw.write_all(&encode(0x1, true, call)).await.is_err() {
                break;
            }
        }
    });
    let result = tokio::time::timeout(Duration::from_secs(10), serving)
        .await
        .expect("the connection ends while the client is still there")
        .unwrap();
    assert_eq!(
        result.unwrap_err().kind(),
        std::io::ErrorKind::TimedOut,
        "ended by the write timeout"
    );
    writer.abort();
}
