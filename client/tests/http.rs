//! The client over HTTP against the real server (`switchboard_server::http`).

use std::sync::Arc;
use std::time::Duration;

use switchboard::Router;
use switchboard_client::{BatchRequest, Client, Error};
use switchboard_server::demo;
use switchboard_server::http::{ServeConfig, Switchboard, serve_with};

/// The demo methods plus `never` (answers never) and `echo` (its params).
fn router() -> Arc<Router> {
    demo::register(Router::builder(), Arc::default())
        .method_async("never", |_| async {
            std::future::pending::<()>().await;
            Ok(())
        })
        .method("echo", |call, out| {
            out.raw_json(call.params().map_or(b"null".as_slice(), |p| p.as_bytes()))
        })
        .build()
        .unwrap()
}

/// Serves on a free port; the URL.
async fn server(token: Option<&str>) -> String {
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

#[tokio::test]
async fn typed_and_raw_requests() {
    let client = Client::connect(&server(None).await).await.unwrap();
    let diff: f64 = client.request("subtract", &[42, 23]).await.unwrap();
    assert_eq!(diff, 19.0);
    let diff: f64 = client
        .request(
            "subtract",
            &serde_json::json!({"subtrahend": 23, "minuend": 42}),
        )
        .await
        .unwrap();
    assert_eq!(diff, 19.0);
    let raw = client.request_raw("get_data", &()).await.unwrap();
    assert_eq!(raw.as_str(), r#"["hello",5]"#);
    let (s, n): (&str, u8) = raw.parse().unwrap();
    assert_eq!((s, n), ("hello", 5));
    // Borrowed: the string is a slice of the received message.
    let echoed = client
        .request_raw("echo", &["a \"quoted\" word"])
        .await
        .unwrap();
    let inner = echoed.as_raw().array_iter().unwrap().next().unwrap();
    assert_eq!(inner.as_str(), r#""a \"quoted\" word""#);
    // The wrong type for the result.
    let e = client
        .request::<_, String>("subtract", &[1, 2])
        .await
        .unwrap_err();
    assert!(
        matches!(&e, Error::InvalidResponse(w) if w.contains("invalid type")),
        "{e}"
    );
}

#[tokio::test]
async fn errors_carry_the_servers_error_object() {
    let client = Client::connect(&server(None).await).await.unwrap();
    let e = client.request_raw("nope", &[1]).await.unwrap_err();
    let o = e.rpc().expect("an error object");
    assert_eq!((o.code(), o.message()), (-32601, "Method not found"));
    let e = client.request_raw("subtract", &["x"]).await.unwrap_err();
    let o = e.rpc().expect("an error object");
    assert_eq!(o.code(), -32602);
    assert!(o.data_json().unwrap().contains("minuend"), "{o}");
    // Params that are not an array or object are never sent.
    let e = client.request_raw("subtract", &7).await.unwrap_err();
    assert!(matches!(e, Error::InvalidParams(_)), "{e}");
}

#[tokio::test]
async fn notifications_and_batches() {
    let client = Client::connect(&server(None).await).await.unwrap();
    client.notify("update", &[1, 2]).await.unwrap();
    let mut b = BatchRequest::new();
    b.request("subtract", &[42, 23]).unwrap();
    b.notify("update", &[1]).unwrap();
    b.request("nope", &()).unwrap();
    b.request("sum", &[1, 2, 4]).unwrap();
    let out = client.batch(&b).await.unwrap();
    assert_eq!(out.len(), 3);
    assert_eq!(out[0].as_ref().unwrap().as_str(), "19");
    assert_eq!(out[1].as_ref().unwrap_err().rpc().unwrap().code(), -32601);
    assert_eq!(out[2].as_ref().unwrap().as_str(), "7");
    // Notifications only: no answer at all.
    let mut b = BatchRequest::new();
    b.notify("update", &[1]).unwrap();
    b.notify("update", &[2]).unwrap();
    assert!(client.batch(&b).await.unwrap().is_empty());
    assert!(client.batch(&BatchRequest::new()).await.unwrap().is_empty());
    // Too long for the server: refused as a whole.
    let mut b = BatchRequest::new();
    for _ in 0..1001 {
        b.request("sum", &[1]).unwrap();
    }
    let e = client.batch(&b).await.unwrap_err();
    assert_eq!(e.rpc().map(|o| o.code()), Some(-32600), "{e}");
}

#[tokio::test]
async fn concurrent_calls_share_the_pool() {
    let client = Client::connect(&server(None).await).await.unwrap();
    let calls = (0..64).map(|i| {
        let c = client.clone();
        tokio::spawn(async move { c.request::<_, f64>("subtract", &[i, 1]).await })
    });
    for (i, h) in calls.enumerate() {
        assert_eq!(h.await.unwrap().unwrap(), i as f64 - 1.0);
    }
}

#[tokio::test]
async fn timeouts_token_and_transport_errors() {
    let url = server(Some("s3cret")).await;
    let client = Client::builder()
        .bearer_token("s3cret")
        .timeout(Some(Duration::from_millis(100)))
        .connect(&url)
        .await
        .unwrap();
    assert_eq!(
        client.request::<_, f64>("subtract", &[2, 1]).await.unwrap(),
        1.0
    );
    assert!(matches!(
        client.request_raw("never", &()).await,
        Err(Error::Timeout)
    ));
    let e = client
        .request_raw_with_timeout("never", &(), Some(Duration::from_millis(10)))
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Timeout), "{e}");
    // No token: 401.
    let anonymous = Client::connect(&url).await.unwrap();
    match anonymous.request_raw("subtract", &[2, 1]).await {
        Err(Error::Http { status: 401, body }) => assert!(body.contains("bearer"), "{body}"),
        other => panic!("{other:?}"),
    }
    // Nobody listening.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let gone = Client::connect(&format!("http://{closed}/")).await.unwrap();
    let e = gone.request_raw("subtract", &[2, 1]).await.unwrap_err();
    assert!(matches!(e, Error::Transport(_)), "{e}");
    assert!(e.is_transport());
    // Not a scheme this client speaks.
    assert!(matches!(
        Client::connect("ftp://x/").await,
        Err(Error::Unsupported(_))
    ));
    assert!(matches!(
        Client::connect("not a url").await,
        Err(Error::Unsupported(_))
    ));
}

#[tokio::test]
async fn an_answer_larger_than_the_limit_is_refused() {
    let client = Client::builder()
        .max_response_bytes(64)
        .connect(&server(None).await)
        .await
        .unwrap();
    let big = vec!["x".repeat(100)];
    let e = client.request_raw("echo", &big).await.unwrap_err();
    assert!(
        matches!(&e, Error::InvalidResponse(w) if w.contains("larger than 64")),
        "{e}"
    );
}

#[tokio::test]
async fn connections_the_server_closed_or_a_timeout_broke_are_not_reused() {
    // The server closes connections idle past 100 ms.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let config = ServeConfig {
        header_read_timeout: Duration::from_millis(100),
        ..ServeConfig::default()
    };
    tokio::spawn(serve_with(
        listener,
        Switchboard::new(router()),
        config,
        std::future::pending(),
    ));
    let client = Client::builder()
        .timeout(Some(Duration::from_secs(5)))
        .connect(&format!("http://{addr}/"))
        .await
        .unwrap();
    let calls = (0..8).map(|i| {
        let c = client.clone();
        tokio::spawn(async move { c.request::<_, f64>("subtract", &[i, 1]).await })
    });
    for h in calls {
        h.await.unwrap().unwrap();
    }
    // Every idle connection is closed by now: the calls open new ones.
    tokio::time::sleep(Duration::from_millis(400)).await;
    for i in 0..3 {
        assert_eq!(
            client.request::<_, f64>("subtract", &[i, 1]).await.unwrap(),
            i as f64 - 1.0
        );
    }
    // A call that timed out leaves its connection half used: it is dropped,
    // and the next call does not read the stale answer.
    let e = client
        .request_raw_with_timeout("never", &(), Some(Duration::from_millis(20)))
        .await
        .unwrap_err();
    assert!(matches!(e, Error::Timeout), "{e}");
    assert_eq!(
        client.request::<_, f64>("subtract", &[5, 1]).await.unwrap(),
        4.0
    );
    let mut b = BatchRequest::new();
    b.request("sum", &[1, 2]).unwrap();
    assert_eq!(
        client.batch(&b).await.unwrap()[0]
            .as_ref()
            .unwrap()
            .as_str(),
        "3"
    );
}

#[tokio::test]
async fn a_body_over_the_servers_limit_gets_its_413() {
    let mut config = switchboard::ParserConfig::new();
    config.max_message_bytes(1000);
    let router = demo::register(Router::builder(), Arc::default())
        .config(config)
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    tokio::spawn(serve_with(
        listener,
        Switchboard::new(router),
        ServeConfig::default(),
        std::future::pending(),
    ));
    let client = Client::connect(&url).await.unwrap();
    // Small enough to be sent whole before the answer, and so large that the
    // server closes the connection while it is still being written.
    for len in [2000, 32 << 20] {
        match client.request_raw("sum", &["x".repeat(len)]).await {
            Err(Error::Http { status: 413, .. }) => {}
            other => panic!("{len} bytes: {other:?}"),
        }
        assert_eq!(client.request::<_, i64>("sum", &[1, 2]).await.unwrap(), 3);
    }
}
