//! The HTTP transport against hand-written servers: raw bytes on a
//! `TcpListener`, for the answers a real server rarely gives (chunked bodies
//! cut anywhere, interim answers, framing errors, connections closed at the
//! worst moment) and for what the client does with its connections after.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::Value;
use switchboard_client::{Client, Error};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

/// A request as the server read it.
struct Request {
    head: String,
    body: Value,
}

impl Request {
    fn id(&self) -> u64 {
        self.body["id"].as_u64().expect("a request id")
    }

    /// The answer a JSON-RPC server would give: the first param as the result.
    fn answer(&self) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","result":{},"id":{}}}"#,
            self.body["params"][0],
            self.id()
        )
    }
}

/// One accepted connection, seen from the server.
struct Peer {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Peer {
    /// The next request; `None` at the end of the stream.
    async fn request(&mut self) -> Option<Request> {
        loop {
            if let Some(end) = self.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8(self.buf[..end + 4].to_vec()).unwrap();
                let len: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("Content-Length: "))
                    .expect("a Content-Length")
                    .parse()
                    .unwrap();
                while self.buf.len() < end + 4 + len {
                    self.read().await?;
                }
                let body = serde_json::from_slice(&self.buf[end + 4..end + 4 + len]).unwrap();
                self.buf.drain(..end + 4 + len);
                return Some(Request { head, body });
            }
            self.read().await?;
        }
    }

    async fn read(&mut self) -> Option<()> {
        let mut chunk = [0u8; 4096];
        match self.stream.read(&mut chunk).await {
            Ok(0) | Err(_) => None,
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Some(())
            }
        }
    }

    async fn send(&mut self, bytes: impl AsRef<[u8]>) {
        self.stream.write_all(bytes.as_ref()).await.unwrap();
    }

    /// One write per byte, the runtime given a turn after each.
    async fn send_bytewise(&mut self, bytes: impl AsRef<[u8]>) {
        for b in bytes.as_ref() {
            self.stream.write_all(&[*b]).await.unwrap();
            tokio::task::yield_now().await;
        }
    }

    /// Waits for the client to close the connection (whatever it sends).
    async fn until_closed(mut self) {
        while self.read().await.is_some() {}
    }
}

/// A server on a free port that runs `script` on each connection (with its
/// index, from 0): its URL and the number of connections accepted so far.
async fn serve<F, Fut>(script: F) -> (String, Arc<AtomicUsize>)
where
    F: Fn(usize, Peer) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            stream.set_nodelay(true).unwrap();
            let i = count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(script(
                i,
                Peer {
                    stream,
                    buf: Vec::new(),
                },
            ));
        }
    });
    (format!("http://{addr}/"), accepted)
}

/// A 200 with `body` and a Content-Length.
fn ok(body: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// A server that answers every request on every connection properly.
async fn answer_all(mut peer: Peer) {
    while let Some(req) = peer.request().await {
        peer.send(ok(&req.answer())).await;
    }
}

async fn call(client: &Client, n: i64) -> Result<i64, Error> {
    client.request("echo", &[n]).await
}

fn connections(accepted: &AtomicUsize) -> usize {
    accepted.load(Ordering::SeqCst)
}

fn client_with_timeout(url: &str) -> impl Future<Output = Result<Client, Error>> + '_ {
    Client::builder()
        .timeout(Some(Duration::from_secs(10)))
        .connect(url)
}

#[tokio::test]
async fn the_request_is_a_post_with_its_headers_and_body() {
    let (tx, rx) = oneshot::channel();
    let tx = std::sync::Mutex::new(Some(tx));
    let (url, _) = serve(move |_, mut peer| {
        let tx = tx.lock().unwrap().take();
        async move {
            let req = peer.request().await.unwrap();
            peer.send(ok(&req.answer())).await;
            tx.unwrap().send(req).ok();
        }
    })
    .await;
    let url = format!("{}rpc?x=1", url);
    let client = Client::builder()
        .bearer_token("t0ken")
        .connect(&url)
        .await
        .unwrap();
    assert_eq!(call(&client, 7).await.unwrap(), 7);
    let req = rx.await.unwrap();
    let host = url.trim_start_matches("http://").split('/').next().unwrap();
    let body = serde_json::to_string(&req.body).unwrap();
    assert_eq!(
        req.head,
        format!(
            "POST /rpc?x=1 HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
             Authorization: Bearer t0ken\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
    );
    assert_eq!(req.body["method"], "echo");
    assert_eq!(req.body["params"], serde_json::json!([7]));
}

#[tokio::test]
async fn chunked_answers_in_any_pieces_keep_the_connection() {
    let (url, accepted) = serve(|_, mut peer| async move {
        let mut bytewise = false;
        while let Some(req) = peer.request().await {
            let answer = req.answer();
            let (a, b) = answer.split_at(answer.len() / 2);
            let wire = format!(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
                 {:x};ext=1;quoted=\"a;b\"\r\n{a}\r\n{:X}\r\n{b}\r\n0\r\nX-Trailer: yes\r\nX-More: 2\r\n\r\n",
                a.len(),
                b.len()
            );
            if bytewise {
                peer.send_bytewise(wire).await;
            } else {
                peer.send(wire).await;
            }
            bytewise = !bytewise;
        }
    })
    .await;
    let client = client_with_timeout(&url).await.unwrap();
    for n in 0..6 {
        assert_eq!(call(&client, 1000 + n).await.unwrap(), 1000 + n);
    }
    assert_eq!(connections(&accepted), 1);
}

#[tokio::test]
async fn interim_answers_are_skipped() {
    let (url, accepted) = serve(|_, mut peer| async move {
        while let Some(req) = peer.request().await {
            peer.send("HTTP/1.1 100 Continue\r\n\r\n").await;
            peer.send_bytewise("HTTP/1.1 102 Processing\r\n\r\n").await;
            peer.send(ok(&req.answer())).await;
        }
    })
    .await;
    let client = client_with_timeout(&url).await.unwrap();
    assert_eq!(call(&client, 1).await.unwrap(), 1);
    assert_eq!(call(&client, 2).await.unwrap(), 2);
    assert_eq!(connections(&accepted), 1);
}

/// A server whose first answer on a connection has `headers` and which then
/// answers any further request on that connection with a 500: a client that
/// reuses the connection fails its next call.
async fn not_to_be_reused(
    status_line: &'static str,
    headers: &'static str,
) -> (String, Arc<AtomicUsize>) {
    serve(move |_, mut peer| async move {
        let Some(req) = peer.request().await else {
            return;
        };
        let body = req.answer();
        peer.send(format!(
            "{status_line}\r\n{headers}Content-Length: {}\r\n\r\n{body}",
            body.len()
        ))
        .await;
        while peer.request().await.is_some() {
            peer.send("HTTP/1.1 500 Reused\r\nContent-Length: 6\r\n\r\nreused")
                .await;
        }
    })
    .await
}

#[tokio::test]
async fn connections_the_server_does_not_keep_alive_are_not_reused() {
    for (status_line, headers) in [
        ("HTTP/1.1 200 OK", "Connection: close\r\n"),
        ("HTTP/1.1 200 OK", "Connection: Upgrade, Close\r\n"),
        ("HTTP/1.0 200 OK", ""),
    ] {
        let (url, accepted) = not_to_be_reused(status_line, headers).await;
        let client = client_with_timeout(&url).await.unwrap();
        for n in 0..3 {
            assert_eq!(
                call(&client, n).await.unwrap(),
                n,
                "{status_line} {headers:?}"
            );
        }
        assert_eq!(connections(&accepted), 3, "{status_line} {headers:?}");
    }
    // HTTP/1.0 that says keep-alive is kept.
    let (url, accepted) = serve(|_, mut peer| async move {
        while let Some(req) = peer.request().await {
            let body = req.answer();
            peer.send(format!(
                "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            ))
            .await;
        }
    })
    .await;
    let client = client_with_timeout(&url).await.unwrap();
    for n in 0..3 {
        assert_eq!(call(&client, n).await.unwrap(), n);
    }
    assert_eq!(connections(&accepted), 1);
}

#[tokio::test]
async fn a_body_that_ends_with_the_connection() {
    let (url, accepted) = serve(|_, mut peer| async move {
        let req = peer.request().await.unwrap();
        peer.send("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n")
            .await;
        peer.send_bytewise(req.answer()).await;
        // Dropped: the end of the body.
    })
    .await;
    let client = client_with_timeout(&url).await.unwrap();
    assert_eq!(call(&client, 5).await.unwrap(), 5);
    assert_eq!(call(&client, 6).await.unwrap(), 6);
    assert_eq!(connections(&accepted), 2);
}

#[tokio::test]
async fn bodies_over_the_limit_are_refused_and_the_connection_dropped() {
    for chunked in [false, true] {
        let (url, accepted) = serve(move |_, mut peer| async move {
            while let Some(req) = peer.request().await {
                let n = req.body["params"][0].as_i64().unwrap();
                let body = if n == 0 {
                    let big = "x".repeat(200);
                    format!(r#"{{"jsonrpc":"2.0","result":"{big}","id":{}}}"#, req.id())
                } else {
                    req.answer()
                };
                if chunked {
                    peer.send(format!(
                        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{body}\r\n0\r\n\r\n",
                        body.len()
                    ))
                    .await;
                } else {
                    peer.send(ok(&body)).await;
                }
            }
        })
        .await;
        let client = Client::builder()
            .max_response_bytes(100)
            .connect(&url)
            .await
            .unwrap();
        let e = client.request::<_, String>("echo", &[0]).await.unwrap_err();
        assert!(
            matches!(&e, Error::InvalidResponse(w) if w == "the response is larger than 100 bytes"),
            "chunked {chunked}: {e}"
        );
        // The rest of that answer is never read as the next one's.
        assert_eq!(call(&client, 3).await.unwrap(), 3);
        assert_eq!(connections(&accepted), 2, "chunked {chunked}");
    }
}

#[tokio::test]
async fn malformed_answers_are_invalid_responses() {
    let cases = [
        (
            "HTTP/1.1 200 OK\r\nContent-Length: 12a\r\n\r\n",
            "not a number",
        ),
        (
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
            "two different Content-Length",
        ),
        (
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 7\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
            "both Transfer-Encoding and Content-Length",
        ),
        (
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
            "malformed chunk size",
        ),
        (
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
            "only chunked",
        ),
        ("HTTP/9.9 200 OK\r\n\r\n", "the response head"),
        ("HTTP/1.1 101 Switching Protocols\r\n\r\n", "101"),
    ];
    for (wire, expected) in cases {
        let (url, accepted) = serve(move |_, mut peer| async move {
            if peer.request().await.is_some() {
                peer.send(wire).await;
            }
            peer.until_closed().await;
        })
        .await;
        let client = client_with_timeout(&url).await.unwrap();
        let e = call(&client, 1).await.unwrap_err();
        assert!(
            matches!(&e, Error::InvalidResponse(w) if w.contains(expected)),
            "{wire:?}: {e}"
        );
        assert_eq!(connections(&accepted), 1, "{wire:?}: not sent again");
    }
}

#[tokio::test]
async fn a_head_over_64_kib_is_refused() {
    let (url, _) = serve(|_, mut peer| async move {
        peer.request().await.unwrap();
        peer.send("HTTP/1.1 200 OK\r\n").await;
        let header = format!("X-Filler: {}\r\n", "y".repeat(1000));
        // The end of the head never comes: the client stops at 64 KiB.
        for _ in 0..1000 {
            if peer.stream.write_all(header.as_bytes()).await.is_err() {
                return;
            }
        }
        peer.until_closed().await;
    })
    .await;
    let client = client_with_timeout(&url).await.unwrap();
    let e = call(&client, 1).await.unwrap_err();
    assert!(
        matches!(&e, Error::InvalidResponse(w) if w == "the response head is larger than 65536 bytes"),
        "{e}"
    );
}

#[tokio::test]
async fn an_answer_cut_short_is_a_transport_error_and_not_sent_again() {
    let cuts = [
        "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{\"jsonrpc\"",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n",
        "HTTP/1.1 200 OK\r\nContent-Le",
        "H",
    ];
    for cut in cuts {
        // On a reused connection: the first answer whole, the second cut.
        let (url, accepted) = serve(move |_, mut peer| async move {
            let req = peer.request().await.unwrap();
            peer.send(ok(&req.answer())).await;
            peer.request().await.unwrap();
            peer.send(cut).await;
        })
        .await;
        let client = client_with_timeout(&url).await.unwrap();
        assert_eq!(call(&client, 1).await.unwrap(), 1);
        let e = call(&client, 2).await.unwrap_err();
        assert!(
            matches!(&e, Error::Transport(w) if w.contains("before the end of the answer")),
            "{cut:?}: {e}"
        );
        assert_eq!(
            connections(&accepted),
            1,
            "{cut:?}: some of the answer came: not sent again"
        );
    }
}

#[tokio::test]
async fn a_request_taken_whole_and_left_unanswered_is_not_sent_again() {
    // The server reads the second request on the first connection and closes
    // it without a byte of answer: it may have acted on it (or its idle
    // timeout fired as the request came: the client cannot tell), so the call
    // fails and the request is not sent again; the next call gets a fresh
    // connection.
    let (url, accepted) = serve(|i, mut peer| async move {
        if i == 0 {
            let req = peer.request().await.unwrap();
            peer.send(ok(&req.answer())).await;
            peer.request().await.unwrap();
            return;
        }
        answer_all(peer).await;
    })
    .await;
    let client = client_with_timeout(&url).await.unwrap();
    assert_eq!(call(&client, 1).await.unwrap(), 1);
    let e = call(&client, 2).await.unwrap_err();
    assert!(
        matches!(&e, Error::Transport(w) if w.contains("without answering")),
        "{e}"
    );
    assert_eq!(connections(&accepted), 1, "not sent again");
    assert_eq!(call(&client, 3).await.unwrap(), 3);
    assert_eq!(connections(&accepted), 2);

    // A fresh connection closed without an answer is not retried either.
    let (url, accepted) = serve(|_, mut peer| async move {
        peer.request().await.unwrap();
    })
    .await;
    let client = client_with_timeout(&url).await.unwrap();
    let e = call(&client, 1).await.unwrap_err();
    assert!(
        matches!(&e, Error::Transport(w) if w.contains("without answering")),
        "{e}"
    );
    assert_eq!(connections(&accepted), 1);
}

#[tokio::test]
async fn a_connection_idle_for_a_while_is_asked_whether_it_was_closed() {
    // The server answers, then closes the connection at once; the client
    // calls again after the probe delay, without yielding to the reactor in
    // between (a sleep of the thread, not of the task): only the peek can tell
    // the connection ended, and the call goes on a new one.
    let (url, accepted) = serve(|_, mut peer| async move {
        let req = peer.request().await.unwrap();
        peer.send(ok(&req.answer())).await;
        peer.stream.shutdown().await.unwrap();
    })
    .await;
    let client = client_with_timeout(&url).await.unwrap();
    for n in 0..3 {
        assert_eq!(call(&client, n).await.unwrap(), n);
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert_eq!(connections(&accepted), 3);
}

#[tokio::test]
async fn a_connection_closed_while_idle_is_not_used() {
    // The server answers, then closes the idle connection; the client calls
    // again only once it has (whether it sees the close before sending or
    // after, the call succeeds on a new connection).
    let (closed_tx, mut closed) = tokio::sync::mpsc::unbounded_channel();
    let (url, accepted) = serve(move |_, mut peer| {
        let closed_tx = closed_tx.clone();
        async move {
            let req = peer.request().await.unwrap();
            peer.send(ok(&req.answer())).await;
            peer.stream.shutdown().await.unwrap();
            drop(peer);
            closed_tx.send(()).unwrap();
        }
    })
    .await;
    let client = client_with_timeout(&url).await.unwrap();
    for n in 0..3 {
        assert_eq!(call(&client, n).await.unwrap(), n);
        closed.recv().await.unwrap();
    }
    assert_eq!(connections(&accepted), 3);
}

#[tokio::test]
async fn a_call_dropped_midway_does_not_leave_its_connection_in_the_pool() {
    // The first connection answers its first request with `partial` only; if
    // the client sent another request on it, it would get the rest of that
    // stale answer (another id).
    for partial in [
        "",
        "HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n{\"jsonrpc\":",
    ] {
        let (url, accepted) = serve(move |i, mut peer| async move {
            if i == 0 {
                let stale = peer.request().await.unwrap();
                peer.send(partial).await;
                if peer.request().await.is_some() {
                    let body = stale.answer();
                    peer.send(format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    ))
                    .await;
                }
                return;
            }
            answer_all(peer).await;
        })
        .await;
        let client = client_with_timeout(&url).await.unwrap();
        let e = client
            .request_raw_with_timeout("echo", &[1], Some(Duration::from_millis(50)))
            .await
            .unwrap_err();
        assert!(matches!(e, Error::Timeout), "{e}");
        assert_eq!(call(&client, 2).await.unwrap(), 2, "{partial:?}");
        assert_eq!(connections(&accepted), 2, "{partial:?}");
    }
}

#[tokio::test]
async fn error_statuses_keep_the_start_of_their_body() {
    let long = "e".repeat(5000);
    let (url, accepted) = serve(move |_, mut peer| {
        let long = long.clone();
        async move {
            while let Some(req) = peer.request().await {
                match req.body["params"][0].as_i64().unwrap() {
                    1 => {
                        peer.send(
                            "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\noops",
                        )
                        .await
                    }
                    2 => {
                        peer.send(format!(
                            "HTTP/1.1 503 Busy\r\nContent-Length: {}\r\n\r\n{long}",
                            long.len()
                        ))
                        .await
                    }
                    _ => peer.send(ok(&req.answer())).await,
                }
            }
        }
    })
    .await;
    let client = client_with_timeout(&url).await.unwrap();
    match call(&client, 1).await {
        Err(Error::Http { status: 500, body }) => assert_eq!(body, "oops"),
        other => panic!("{other:?}"),
    }
    // A short error body is read whole: the connection is kept.
    assert_eq!(call(&client, 3).await.unwrap(), 3);
    assert_eq!(connections(&accepted), 1);
    match call(&client, 2).await {
        Err(Error::Http { status: 503, body }) => assert_eq!(body, "e".repeat(1024)),
        other => panic!("{other:?}"),
    }
    // A long one is not: the rest of it is never read as the next answer.
    assert_eq!(call(&client, 4).await.unwrap(), 4);
    assert_eq!(connections(&accepted), 2);
}

#[tokio::test]
async fn notifications_answered_204_keep_the_connection() {
    let (url, accepted) = serve(|_, mut peer| async move {
        while let Some(req) = peer.request().await {
            if req.body.get("id").is_some() {
                peer.send(ok(&req.answer())).await;
            } else {
                peer.send("HTTP/1.1 204 No Content\r\n\r\n").await;
            }
        }
    })
    .await;
    let client = client_with_timeout(&url).await.unwrap();
    client.notify("update", &[1]).await.unwrap();
    client.notify("update", &[2]).await.unwrap();
    assert_eq!(call(&client, 3).await.unwrap(), 3);
    assert_eq!(connections(&accepted), 1);
}

#[tokio::test]
async fn an_idle_connection_the_server_wrote_on_is_not_used() {
    // Some servers answer 408 on a keep-alive connection when they give up on
    // it: that is no answer to the next request. The server writes it once
    // the client has read the first answer (told by `go`).
    let (go_tx, go) = oneshot::channel::<()>();
    let go = std::sync::Mutex::new(Some(go));
    let (sent_tx, sent) = oneshot::channel();
    let sent_tx = std::sync::Mutex::new(Some(sent_tx));
    let (url, accepted) = serve(move |i, mut peer| {
        let go = go.lock().unwrap().take();
        let sent_tx = sent_tx.lock().unwrap().take();
        async move {
            let req = peer.request().await.unwrap();
            peer.send(ok(&req.answer())).await;
            if i == 0 {
                go.unwrap().await.unwrap();
                peer.send(
                    "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
                )
                .await;
                sent_tx.unwrap().send(()).unwrap();
                peer.until_closed().await;
            } else {
                answer_all(peer).await;
            }
        }
    })
    .await;
    let client = client_with_timeout(&url).await.unwrap();
    assert_eq!(call(&client, 1).await.unwrap(), 1);
    go_tx.send(()).unwrap();
    sent.await.unwrap();
    // The runtime parks (and its reactor sees the connection readable).
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(call(&client, 2).await.unwrap(), 2);
    assert_eq!(connections(&accepted), 2);
}

#[tokio::test]
async fn a_408_to_a_request_on_an_idle_connection_is_sent_again_on_a_new_one() {
    // The server's idle timeout fires as the second request arrives: it
    // answers 408 (it received no complete request, so it did not act on it)
    // and closes. The call goes again on a fresh connection and succeeds.
    let (url, accepted) = serve(|i, mut peer| async move {
        if i == 0 {
            let req = peer.request().await.unwrap();
            peer.send(ok(&req.answer())).await;
            peer.request().await.unwrap();
            peer.send(
                "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
            )
            .await;
            return;
        }
        answer_all(peer).await;
    })
    .await;
    let client = client_with_timeout(&url).await.unwrap();
    assert_eq!(call(&client, 1).await.unwrap(), 1);
    assert_eq!(call(&client, 2).await.unwrap(), 2);
    assert_eq!(connections(&accepted), 2);

    // On a fresh connection a 408 is the answer: reported, not sent again.
    let (url, accepted) = serve(|_, mut peer| async move {
        peer.request().await.unwrap();
        peer.send(
            "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 4\r\n\r\nslow",
        )
        .await;
    })
    .await;
    let client = client_with_timeout(&url).await.unwrap();
    match call(&client, 1).await {
        Err(Error::Http { status: 408, body }) => assert_eq!(body, "slow"),
        other => panic!("{other:?}"),
    }
    assert_eq!(connections(&accepted), 1);
}

#[tokio::test]
async fn an_answer_sent_before_the_request_was_read_whole_is_reported() {
    // A server refuses a body over its limit from the head alone, answers 413
    // and closes with the body unread (a reset): the client's write fails,
    // but the answer came first.
    let (url, accepted) = serve(|_, mut peer| async move {
        while !peer.buf.windows(4).any(|w| w == b"\r\n\r\n") {
            if peer.read().await.is_none() {
                return;
            }
        }
        peer.send("HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\nContent-Length: 9\r\n\r\ntoo large")
            .await;
    })
    .await;
    let client = client_with_timeout(&url).await.unwrap();
    let big = "x".repeat(32 << 20);
    match client.request_raw("echo", &[big]).await {
        Err(Error::Http { status: 413, body }) => assert_eq!(body, "too large"),
        other => panic!("{other:?}"),
    }
    assert_eq!(connections(&accepted), 1);
}
