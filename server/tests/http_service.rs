//! The library API: `Switchboard` as a `tower::Service` called in-process, and
//! `http::serve` on a listener the application owns, stopped by its own future.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, StatusCode};
use switchboard_server::{demo, http::Switchboard};
use tower_service::Service;

const SUBTRACT: &str = r#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#;

fn req(method: &str, ct: Option<&str>, body: &str) -> Request<Full<Bytes>> {
    let mut b = Request::builder().method(method).uri("/rpc");
    if let Some(ct) = ct {
        b = b.header("content-type", ct);
    }
    b.body(Full::new(Bytes::from(body.to_owned()))).unwrap()
}

async fn call(svc: &mut Switchboard, r: Request<Full<Bytes>>) -> (StatusCode, Vec<u8>) {
    let resp = Service::call(svc, r).await.unwrap();
    let status = resp.status();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (status, body.to_vec())
}

#[tokio::test]
async fn tower_service_in_process() {
    let mut svc = Switchboard::new(demo::router());
    let (s, b) = call(&mut svc, req("POST", Some("application/json"), SUBTRACT)).await;
    assert_eq!(
        (s, b.as_slice()),
        (
            StatusCode::OK,
            &br#"{"jsonrpc":"2.0","result":19,"id":1}"#[..]
        )
    );
    let (s, b) = call(
        &mut svc,
        req(
            "POST",
            Some("application/json"),
            r#"{"jsonrpc":"2.0","method":"update"}"#,
        ),
    )
    .await;
    assert_eq!((s, b.len()), (StatusCode::NO_CONTENT, 0));
    let (s, _) = call(&mut svc, req("GET", None, "")).await;
    assert_eq!(s, StatusCode::METHOD_NOT_ALLOWED);
    let (s, _) = call(&mut svc, req("POST", Some("text/json"), SUBTRACT)).await;
    assert_eq!(s, StatusCode::UNSUPPORTED_MEDIA_TYPE);

    // Clones share a pool of sessions; calls at once each get one.
    let calls = (0..16).map(|_| {
        let mut svc = svc.clone();
        tokio::spawn(async move {
            call(&mut svc, req("POST", Some("application/json"), SUBTRACT)).await
        })
    });
    for h in calls {
        assert_eq!(h.await.unwrap().0, StatusCode::OK);
    }

    let mut locked = Switchboard::new(demo::router()).bearer_token("t");
    let (s, _) = call(&mut locked, req("POST", Some("application/json"), SUBTRACT)).await;
    assert_eq!(s, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn serve_on_an_application_listener_until_its_future() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(switchboard_server::http::serve(
        listener,
        Switchboard::new(demo::router()),
        async {
            let _ = stopped.await;
        },
    ));
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{SUBTRACT}",
        SUBTRACT.len()
    );
    s.write_all(request.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).await.unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(text.starts_with("HTTP/1.1 200 OK"), "{text}");
    assert!(
        text.ends_with(r#"{"jsonrpc":"2.0","result":19,"id":1}"#),
        "{text}"
    );
    stop.send(()).unwrap();
    tokio::time::timeout(std::time::Duration::from_secs(5), server)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn idle_and_silent_connections_are_closed_after_the_header_timeout() {
    use switchboard_server::http::{ServeConfig, serve_with};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let config = ServeConfig {
        header_read_timeout: std::time::Duration::from_millis(300),
        ..ServeConfig::default()
    };
    let server = tokio::spawn(serve_with(
        listener,
        Switchboard::new(demo::router()),
        config,
        async {
            let _ = stopped.await;
        },
    ));
    // Kept alive after one call, then idle.
    let mut idle = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{SUBTRACT}",
        SUBTRACT.len()
    );
    idle.write_all(request.as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 4096];
    let n = idle.read(&mut buf).await.unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200"));
    // Never said a word.
    let mut silent = tokio::net::TcpStream::connect(addr).await.unwrap();
    let t = std::time::Instant::now();
    let limit = std::time::Duration::from_secs(5);
    for s in [&mut idle, &mut silent] {
        // EOF (or a 408 hyper writes first, then EOF) within the limit.
        let _ = tokio::time::timeout(limit, s.read_to_end(&mut Vec::new()))
            .await
            .expect("the connection was not closed");
    }
    let took = t.elapsed();
    assert!(took >= std::time::Duration::from_millis(250), "{took:?}");
    assert!(took < limit, "{took:?}");
    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
}

#[tokio::test]
async fn connections_past_the_limit_wait_until_one_closes() {
    use switchboard_server::http::{ServeConfig, serve_with};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let config = ServeConfig {
        max_connections: 2,
        ..ServeConfig::default()
    };
    let server = tokio::spawn(serve_with(
        listener,
        Switchboard::new(demo::router()),
        config,
        async {
            let _ = stopped.await;
        },
    ));
    let request = format!(
        "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{SUBTRACT}",
        SUBTRACT.len()
    );
    let mut buf = vec![0u8; 4096];
    let mut first = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut second = tokio::net::TcpStream::connect(addr).await.unwrap();
    for s in [&mut first, &mut second] {
        s.write_all(request.as_bytes()).await.unwrap();
        let n = s.read(&mut buf).await.unwrap();
        assert!(buf[..n].starts_with(b"HTTP/1.1 200"));
    }
    // The third waits: no answer while the first two stay open.
    let mut third = tokio::net::TcpStream::connect(addr).await.unwrap();
    third.write_all(request.as_bytes()).await.unwrap();
    let waited =
        tokio::time::timeout(std::time::Duration::from_millis(300), third.read(&mut buf)).await;
    assert!(waited.is_err(), "answered past the connection limit");
    // One closes: the third is served.
    drop(first);
    let n = tokio::time::timeout(std::time::Duration::from_secs(5), third.read(&mut buf))
        .await
        .unwrap()
        .unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200"));
    drop((second, third));
    stop.send(()).unwrap();
    server.await.unwrap().unwrap();
}
