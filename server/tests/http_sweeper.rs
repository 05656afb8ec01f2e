//! The connection sweeper of `http::serve_with` (one task for all of a server's
//! connections), which replaced hyper's per-request header timer and
//! graceful-shutdown wrapper: an idle connection is closed after
//! `header_read_timeout`, but a call in progress is not cut off however long it
//! takes, nor is an answer a client is still reading; on shutdown a call in progress
//! is answered before its connection closes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use switchboard::{Router, RpcError};
use switchboard_server::http::{ServeConfig, Switchboard, serve_with};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The size of `big`'s answer: more than the socket buffers of both ends hold, so
/// the server writes for as long as the client takes to read.
const BIG: usize = 8 << 20;

fn router() -> Arc<Router> {
    Router::builder()
        .typed_async("sleep", |(ms,): (u64,)| async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok::<_, RpcError>(ms)
        })
        .method("big", |_, out| out.str(&"x".repeat(BIG)))
        .method("ping", |_, out| out.str("pong"))
        .build()
        .unwrap()
}

/// Serves on a loopback port until the returned sender fires (or is dropped).
async fn start(
    header_read_timeout: Duration,
) -> (
    std::net::SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let config = ServeConfig {
        header_read_timeout,
        ..ServeConfig::default()
    };
    let server = tokio::spawn(serve_with(
        listener,
        Switchboard::new(router()),
        config,
        async {
            let _ = stopped.await;
        },
    ));
    (addr, stop, server)
}

fn request(body: &str) -> Vec<u8> {
    format!(
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Reads one response with a `Content-Length` body: the head and the body.
async fn read_response(s: &mut TcpStream) -> (String, Vec<u8>) {
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = s.read(&mut chunk).await.unwrap();
        assert!(n > 0, "closed inside a response head: {buf:?}");
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8(buf[..head_end].to_vec()).unwrap();
    let len: usize = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse().unwrap())
        })
        .expect("a content-length");
    let mut body = buf[head_end..].to_vec();
    while body.len() < len {
        let n = s.read(&mut chunk).await.unwrap();
        assert!(n > 0, "closed after {} of {len} body bytes", body.len());
        body.extend_from_slice(&chunk[..n]);
    }
    (head, body)
}

/// Whether the server closed the connection (EOF or reset) within `limit`.
async fn closed_within(s: &mut TcpStream, limit: Duration) -> bool {
    let mut rest = Vec::new();
    // EOF, or an error (a reset), within the limit.
    tokio::time::timeout(limit, s.read_to_end(&mut rest))
        .await
        .is_ok()
}

#[tokio::test]
async fn a_call_longer_than_the_header_timeout_is_answered_then_the_idle_connection_closed() {
    let limit = Duration::from_millis(150);
    let (addr, stop, server) = start(limit).await;
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(&request(
        r#"{"jsonrpc":"2.0","method":"sleep","params":[500],"id":1}"#,
    ))
    .await
    .unwrap();
    let (head, body) = read_response(&mut s).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(body, br#"{"jsonrpc":"2.0","result":500,"id":1}"#);
    // Still usable at once; then idle, and closed after the limit (at most 1.25x).
    s.write_all(&request(r#"{"jsonrpc":"2.0","method":"ping","id":2}"#))
        .await
        .unwrap();
    let (head, _) = read_response(&mut s).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let t = Instant::now();
    assert!(closed_within(&mut s, Duration::from_secs(5)).await);
    let took = t.elapsed();
    assert!(took >= limit - Duration::from_millis(20), "{took:?}");
    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
}

#[tokio::test]
async fn an_answer_read_slowly_is_not_cut_off() {
    let limit = Duration::from_millis(200);
    let (addr, stop, server) = start(limit).await;
    // A small receive buffer: the server can only write as fast as we read.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(64 << 10).unwrap();
    let mut s = socket.connect(addr).await.unwrap();
    s.write_all(&request(r#"{"jsonrpc":"2.0","method":"big","id":1}"#))
        .await
        .unwrap();
    let t = Instant::now();
    let mut got = Vec::with_capacity(BIG + 1024);
    let mut chunk = vec![0u8; 64 << 10];
    let expected_len = BIG + r#"{"jsonrpc":"2.0","result":"","id":1}"#.len();
    loop {
        let n = s.read(&mut chunk).await.unwrap();
        if n == 0 {
            break;
        }
        got.extend_from_slice(&chunk[..n]);
        if got.ends_with(b"\"id\":1}") && got.len() >= expected_len {
            break;
        }
        // About 3 MB/s: the transfer outlasts the limit several times over.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let took = t.elapsed();
    let head_end = got.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    assert_eq!(got.len() - head_end, expected_len, "cut off after {took:?}");
    assert!(took > limit * 2, "the test read too fast to tell: {took:?}");
    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
}

#[tokio::test]
async fn shutdown_answers_the_call_in_progress_then_closes() {
    let (addr, stop, server) = start(Duration::from_secs(30)).await;
    let mut busy = TcpStream::connect(addr).await.unwrap();
    let mut idle = TcpStream::connect(addr).await.unwrap();
    idle.write_all(&request(r#"{"jsonrpc":"2.0","method":"ping","id":1}"#))
        .await
        .unwrap();
    let (head, _) = read_response(&mut idle).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    busy.write_all(&request(
        r#"{"jsonrpc":"2.0","method":"sleep","params":[400],"id":2}"#,
    ))
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let t = Instant::now();
    stop.send(()).unwrap();
    // The idle connection closes at once; the busy one gets its answer, then closes.
    assert!(closed_within(&mut idle, Duration::from_secs(2)).await);
    let (head, body) = read_response(&mut busy).await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(body, br#"{"jsonrpc":"2.0","result":400,"id":2}"#);
    assert!(closed_within(&mut busy, Duration::from_secs(2)).await);
    tokio::time::timeout(Duration::from_secs(5), server)
        .await
        .expect("serve_with returns once the call is answered")
        .unwrap()
        .unwrap();
    assert!(t.elapsed() < Duration::from_secs(5));
    assert!(TcpStream::connect(addr).await.is_err());
}
