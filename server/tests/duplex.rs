//! The duplex driver end to end over in-memory streams: concurrent calls,
//! backpressure, the server's requests to the client and their failures, the
//! cancel rules, framing, and how a connection ends. No timing assertions: waits
//! are bounded, and a "nothing arrives" check waits a short while for nothing.

use std::sync::Arc;
use std::time::Duration;

use switchboard::connection::{CancelRule, Connection, ConnectionConfig};
use switchboard::{OwnedCall, Router, RpcError};
use switchboard_server::duplex::{Duplex, DuplexConfig, End, Summary};
use switchboard_server::stdio::Framing;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

/// A gate that `gated` calls wait at; the test lets them through one by one.
fn router(gate: Arc<Semaphore>) -> Arc<Router> {
    Router::builder()
        .method("ping", |_, out| out.str("pong"))
        .method_async("gated", move |_call: OwnedCall| {
            let gate = gate.clone();
            async move {
                gate.acquire().await.expect("open").forget();
                Ok("through")
            }
        })
        .method_async("forever", |_call: OwnedCall| async {
            std::future::pending::<Result<(), RpcError>>().await
        })
        .method_async("ask", |call: OwnedCall| async move {
            let peer = call.connection().expect("a connection").peer();
            let answer = peer.request("question", &["?"]).await?;
            Ok(answer.as_raw().as_str().to_owned())
        })
        .method_async("remember", |call: OwnedCall| async move {
            // A peer kept by a background task, notifying after the call ended.
            let peer = call.connection().expect("a connection").peer();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                let _ = peer.notify("later", &["from a task"]).await;
            });
            Ok(true)
        })
        .notification("exit", |call| {
            call.connection().expect("a connection").close()
        })
        .cancel_notification(
            CancelRule::new("$/cancelRequest", "id")
                .answer(RpcError::new(-32800, "Request cancelled")),
        )
        .build()
        .unwrap()
}

struct Client {
    write: tokio::io::WriteHalf<DuplexStream>,
    lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
    conn: Connection,
    serving: JoinHandle<std::io::Result<Summary>>,
    gate: Arc<Semaphore>,
}

impl Client {
    fn start(config: DuplexConfig) -> Client {
        let gate = Arc::new(Semaphore::new(0));
        let (client, server) = tokio::io::duplex(1 << 16);
        let duplex = Duplex::new(router(gate.clone()), config);
        let conn = duplex.connection().clone();
        let (r, w) = tokio::io::split(server);
        let serving = tokio::spawn(duplex.serve(r, w));
        let (cr, cw) = tokio::io::split(client);
        Client {
            write: cw,
            lines: BufReader::new(cr).lines(),
            conn,
            serving,
            gate,
        }
    }

    async fn send(&mut self, line: &str) {
        self.write.write_all(line.as_bytes()).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
    }

    /// The next line, within 10 s.
    async fn next(&mut self) -> String {
        tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("a line within 10 s")
            .unwrap()
            .expect("the stream is open")
    }

    /// Nothing arrives for a while.
    async fn quiet(&mut self) {
        let r = tokio::time::timeout(Duration::from_millis(150), self.lines.next_line()).await;
        assert!(r.is_err(), "unexpected {r:?}");
    }

    /// EOF from the client; the driver's summary.
    async fn end(mut self) -> (Summary, Connection) {
        self.write.shutdown().await.unwrap();
        drop(self.write);
        let summary = tokio::time::timeout(Duration::from_secs(10), self.serving)
            .await
            .expect("the driver ends")
            .unwrap()
            .unwrap();
        (summary, self.conn)
    }
}

fn req(method: &str, id: u64) -> String {
    format!(r#"{{"jsonrpc":"2.0","method":"{method}","id":{id}}}"#)
}

fn result(r: &str, id: u64) -> String {
    format!(r#"{{"jsonrpc":"2.0","result":{r},"id":{id}}}"#)
}

#[tokio::test]
async fn calls_of_one_connection_run_concurrently() {
    let mut c = Client::start(DuplexConfig::default());
    c.send(&req("gated", 1)).await;
    c.send(&req("ping", 2)).await;
    // The ping is answered while the first call waits.
    assert_eq!(c.next().await, result(r#""pong""#, 2));
    assert_eq!(c.conn.calls_in_flight(), 1);
    c.gate.add_permits(1);
    assert_eq!(c.next().await, result(r#""through""#, 1));
    let (summary, conn) = c.end().await;
    assert_eq!(summary.messages, 2);
    assert_eq!(summary.end, End::Eof);
    assert_eq!((conn.calls_in_flight(), conn.pending_requests()), (0, 0));
}

#[tokio::test]
async fn above_the_bound_reading_pauses() {
    let mut c = Client::start(DuplexConfig {
        max_in_flight: 2,
        ..DuplexConfig::default()
    });
    for id in 1..=3 {
        c.send(&req("gated", id)).await;
    }
    c.send(&req("ping", 9)).await;
    // Two calls run; the third (parsed, registered) waits for a slot, and
    // nothing after it is read.
    c.quiet().await;
    assert_eq!(c.conn.calls_in_flight(), 3);
    c.gate.add_permits(1);
    let mut got = vec![c.next().await, c.next().await];
    got.sort();
    assert_eq!(got, [result(r#""pong""#, 9), result(r#""through""#, 1)]);
    c.gate.add_permits(2);
    let mut got = vec![c.next().await, c.next().await];
    got.sort();
    assert_eq!(got, [result(r#""through""#, 2), result(r#""through""#, 3)]);
    let (summary, conn) = c.end().await;
    assert_eq!((summary.messages, conn.calls_in_flight()), (4, 0));
}

#[tokio::test]
async fn the_server_asks_and_the_client_answers() {
    let mut c = Client::start(DuplexConfig::default());
    c.send(&req("ask", 1)).await;
    assert_eq!(
        c.next().await,
        r#"{"jsonrpc":"2.0","method":"question","params":["?"],"id":1}"#
    );
    // Answers that match nothing are dropped, never answered.
    c.send(r#"{"jsonrpc":"2.0","result":"no","id":99}"#).await;
    c.send(r#"{"jsonrpc":"2.0","result":"no","id":"1"}"#).await;
    c.send(r#"{"jsonrpc":"2.0","result":"yes","id":1}"#).await;
    assert_eq!(c.next().await, result(r#""\"yes\"""#, 1));
    c.send(r#"{"jsonrpc":"2.0","result":"twice","id":1}"#).await;
    c.send(&req("ping", 2)).await;
    assert_eq!(c.next().await, result(r#""pong""#, 2));
    let (summary, conn) = c.end().await;
    assert_eq!(summary.unmatched_responses, 3);
    assert_eq!(conn.pending_requests(), 0);
}

#[tokio::test]
async fn a_client_that_never_answers_makes_the_request_time_out() {
    let mut config = DuplexConfig::default();
    config
        .connection
        .request_timeout(Some(Duration::from_millis(50)));
    let mut c = Client::start(config);
    c.send(&req("ask", 1)).await;
    assert!(c.next().await.contains(r#""method":"question""#));
    let answer = c.next().await;
    assert!(
        answer.starts_with(r#"{"jsonrpc":"2.0","error":{"code":-32603"#)
            && answer.contains("did not answer in time")
            && answer.ends_with(r#","id":1}"#),
        "{answer}"
    );
    // Its late answer matches nothing.
    c.send(r#"{"jsonrpc":"2.0","result":"late","id":1}"#).await;
    let (summary, conn) = c.end().await;
    assert_eq!(summary.unmatched_responses, 1);
    assert_eq!((conn.pending_requests(), conn.calls_in_flight()), (0, 0));
}

#[tokio::test]
async fn eof_fails_the_pending_requests_at_once() {
    let mut c = Client::start(DuplexConfig::default());
    for id in 1..=3 {
        c.send(&req("ask", id)).await;
    }
    for _ in 1..=3 {
        assert!(c.next().await.contains(r#""method":"question""#));
    }
    let Client {
        mut write,
        mut lines,
        conn,
        serving,
        ..
    } = c;
    write.shutdown().await.unwrap(); // EOF with three requests pending
    let summary = tokio::time::timeout(Duration::from_secs(10), serving)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(summary.cancelled_at_end, 0); // failed, so answered: nothing left to cancel
    let mut answers = 0;
    while let Ok(Some(line)) = lines.next_line().await {
        assert!(line.contains("the connection is closed"), "{line}");
        answers += 1;
    }
    assert_eq!(answers, 3);
    assert_eq!((conn.pending_requests(), conn.calls_in_flight()), (0, 0));
}

#[tokio::test]
async fn calls_still_running_after_the_drain_are_cancelled() {
    let mut c = Client::start(DuplexConfig {
        drain_timeout: Duration::from_millis(50),
        ..DuplexConfig::default()
    });
    c.send(&req("forever", 1)).await;
    c.send(&req("ping", 2)).await;
    assert_eq!(c.next().await, result(r#""pong""#, 2));
    let Client {
        mut write,
        mut lines,
        serving,
        conn,
        ..
    } = c;
    write.shutdown().await.unwrap();
    let summary = serving.await.unwrap().unwrap();
    assert_eq!(summary.cancelled_at_end, 1);
    // Answered as the router's cancel rule says.
    assert_eq!(
        lines.next_line().await.unwrap().unwrap(),
        r#"{"jsonrpc":"2.0","error":{"code":-32800,"message":"Request cancelled"},"id":1}"#
    );
    assert_eq!(lines.next_line().await.unwrap(), None);
    assert_eq!(conn.calls_in_flight(), 0);
}

#[tokio::test]
async fn cancel_notifications_for_running_finished_and_unknown_calls() {
    let mut c = Client::start(DuplexConfig::default());
    c.send(&req("forever", 1)).await;
    c.send(&req("ping", 2)).await;
    assert_eq!(c.next().await, result(r#""pong""#, 2));
    // Unknown ids and the finished ping: no effect, no output.
    c.send(r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":2}}"#)
        .await;
    c.send(r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"1"}}"#)
        .await;
    c.quiet().await;
    assert_eq!(c.conn.calls_in_flight(), 1);
    c.send(r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}"#)
        .await;
    assert_eq!(
        c.next().await,
        r#"{"jsonrpc":"2.0","error":{"code":-32800,"message":"Request cancelled"},"id":1}"#
    );
    // Twice: the call is gone.
    c.send(r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}"#)
        .await;
    c.send(&req("ping", 3)).await;
    assert_eq!(c.next().await, result(r#""pong""#, 3));
    let (summary, conn) = c.end().await;
    assert_eq!((summary.cancelled_at_end, conn.calls_in_flight()), (0, 0));
}

#[tokio::test]
async fn a_flood_of_notifications_and_stray_responses_is_absorbed() {
    let mut c = Client::start(DuplexConfig::default());
    let mut flood = String::new();
    for i in 0..10_000 {
        match i % 3 {
            0 => flood.push_str(
                r#"{"jsonrpc":"2.0","method":"notifications/whatever","params":{"n":1}}"#,
            ),
            1 => flood
                .push_str(r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":12345}}"#),
            _ => flood.push_str(r#"{"jsonrpc":"2.0","result":null,"id":777}"#),
        }
        flood.push('\n');
    }
    // Written while the server reads (the in-memory pipe holds 64 KB).
    let (mut w, r) = (c.write, c.lines);
    let writer = tokio::spawn(async move {
        w.write_all(flood.as_bytes()).await.unwrap();
        w.write_all(req("ping", 1).as_bytes()).await.unwrap();
        w.write_all(b"\n").await.unwrap();
        w
    });
    c.write = writer.await.unwrap();
    c.lines = r;
    assert_eq!(c.next().await, result(r#""pong""#, 1));
    let (summary, conn) = c.end().await;
    assert_eq!(summary.messages, 10_001);
    assert_eq!(summary.unmatched_responses, 3_333);
    assert_eq!((conn.pending_requests(), conn.calls_in_flight()), (0, 0));
}

#[tokio::test]
async fn a_peer_kept_by_a_task_notifies_after_the_call() {
    let mut c = Client::start(DuplexConfig::default());
    c.send(&req("remember", 1)).await;
    assert_eq!(c.next().await, result("true", 1));
    assert_eq!(
        c.next().await,
        r#"{"jsonrpc":"2.0","method":"later","params":["from a task"]}"#
    );
    let (_, conn) = c.end().await;
    // After the end, the kept peer is refused.
    assert!(conn.peer().try_notify("x", &()).is_err());
}

#[tokio::test]
async fn close_is_the_shutdown_handle() {
    let mut c = Client::start(DuplexConfig::default());
    c.send(r#"{"jsonrpc":"2.0","method":"exit"}"#).await;
    // The client keeps its side open; the driver ends by itself.
    let summary = tokio::time::timeout(Duration::from_secs(10), &mut c.serving)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(summary.end, End::Closed);
    assert_eq!(c.lines.next_line().await.unwrap(), None);
}

#[tokio::test]
async fn over_long_messages_are_refused_and_the_stream_goes_on() {
    let router = Router::builder()
        .method("ping", |_, out| out.str("pong"))
        .config(*switchboard::ParserConfig::new().max_message_bytes(64))
        .build()
        .unwrap();
    let (client, server) = tokio::io::duplex(1 << 16);
    let (r, w) = tokio::io::split(server);
    let serving = tokio::spawn(Duplex::new(router, DuplexConfig::default()).serve(r, w));
    let (cr, mut cw) = tokio::io::split(client);
    let mut lines = BufReader::new(cr).lines();
    let long = format!(
        r#"{{"jsonrpc":"2.0","method":"ping","params":["{}"],"id":1}}"#,
        "x".repeat(1000)
    );
    cw.write_all(format!("{long}\n{}\n", req("ping", 2)).as_bytes())
        .await
        .unwrap();
    assert_eq!(
        lines.next_line().await.unwrap().unwrap(),
        r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request","data":{"reason":"message larger than max_message_bytes","limit":64}},"id":null}"#
    );
    assert_eq!(
        lines.next_line().await.unwrap().unwrap(),
        result(r#""pong""#, 2)
    );
    cw.shutdown().await.unwrap();
    assert_eq!(serving.await.unwrap().unwrap().messages, 2);
}

#[tokio::test]
async fn content_length_framing_both_ways() {
    let gate = Arc::new(Semaphore::new(0));
    let (client, server) = tokio::io::duplex(1 << 16);
    let (r, w) = tokio::io::split(server);
    let config = DuplexConfig {
        framing: Framing::Lsp,
        ..DuplexConfig::default()
    };
    let serving = tokio::spawn(Duplex::new(router(gate), config).serve(r, w));
    let (mut cr, mut cw) = tokio::io::split(client);
    let frame = |body: &str| format!("Content-Length: {}\r\n\r\n{body}", body.len());
    cw.write_all(frame(&req("ask", 1)).as_bytes())
        .await
        .unwrap();
    let want = frame(r#"{"jsonrpc":"2.0","method":"question","params":["?"],"id":1}"#);
    let mut got = vec![0; want.len()];
    cr.read_exact(&mut got).await.unwrap();
    assert_eq!(String::from_utf8(got).unwrap(), want);
    cw.write_all(frame(r#"{"jsonrpc":"2.0","result":"ok","id":1}"#).as_bytes())
        .await
        .unwrap();
    let want = frame(&result(r#""\"ok\"""#, 1));
    let mut got = vec![0; want.len()];
    cr.read_exact(&mut got).await.unwrap();
    assert_eq!(String::from_utf8(got).unwrap(), want);
    // A header section that cannot be framed ends the connection: InvalidData,
    // after a -32700 telling the client why.
    cw.write_all(b"Content-Length: x\r\n\r\n").await.unwrap();
    let err = serving.await.unwrap().unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
    let mut rest = Vec::new();
    cr.read_to_end(&mut rest).await.unwrap();
    let want = frame(
        r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error","data":{"reason":"malformed header"}},"id":null}"#,
    );
    assert_eq!(String::from_utf8(rest).unwrap(), want);
}

#[tokio::test]
async fn a_client_that_stops_reading_cannot_hang_the_driver() {
    // A tiny pipe and queue: the client never reads, then goes away.
    let mut config = DuplexConfig::default();
    config.connection.queue_capacity(4);
    let gate = Arc::new(Semaphore::new(0));
    let (client, server) = tokio::io::duplex(256);
    let (r, w) = tokio::io::split(server);
    let serving = tokio::spawn(Duplex::new(router(gate), config).serve(r, w));
    let (cr, mut cw) = tokio::io::split(client);
    let writer = tokio::spawn(async move {
        for id in 0..10_000u64 {
            if cw
                .write_all(format!("{}\n", req("ping", id)).as_bytes())
                .await
                .is_err()
            {
                break;
            }
        }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    // The client goes away (both halves): the server's writes now fail.
    writer.abort();
    let _ = writer.await;
    drop(cr);
    let result = tokio::time::timeout(Duration::from_secs(10), serving)
        .await
        .expect("the driver ends")
        .unwrap();
    assert!(result.is_err(), "{result:?}");
}

#[tokio::test]
async fn http_handlers_see_an_answer_only_connection() {
    let conn = Connection::answer_only();
    assert!(!conn.can_push());
    let (full, _out) = Connection::new(&ConnectionConfig::new());
    assert!(full.can_push());
    assert_ne!(conn.id(), full.id());
}

#[tokio::test]
async fn a_client_that_never_reads_is_ended_by_the_write_timeout() {
    // The client keeps its end open, sends calls and reads nothing: once the pipe
    // and the queue are full, no write makes progress, and after the write timeout
    // the connection ends (TimedOut), its calls and queue let go.
    let mut config = DuplexConfig {
        write_timeout: Duration::from_millis(300),
        ..DuplexConfig::default()
    };
    config.connection.queue_capacity(4);
    let gate = Arc::new(Semaphore::new(0));
    let (client, server) = tokio::io::duplex(256);
    let (r, w) = tokio::io::split(server);
    let serving = tokio::spawn(Duplex::new(router(gate), config).serve(r, w));
    let (_cr, mut cw) = tokio::io::split(client); // `_cr` kept open, never read
    let writer = tokio::spawn(async move {
        for id in 0..100_000u64 {
            let line = format!("{}\n", req("ping", id));
            if cw.write_all(line.as_bytes()).await.is_err() {
                break;
            }
        }
    });
    let result = tokio::time::timeout(Duration::from_secs(10), serving)
        .await
        .expect("the driver ends while the client is still there")
        .unwrap();
    let err = result.unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::TimedOut, "{err}");
    writer.abort();
}

/// Fairness on a socket: one connection writes 10 000 messages back to back (handled
/// from the read buffer, no socket wait); a second connection's message, in its
/// socket from the first one's first call on, is answered within a few of the first
/// connection's yields to the I/O driver (one every 256 messages; at most three are
/// needed: the accept, the new socket's readiness, its message), not once the 10 000
/// are done, as when the task only woke itself at its full outgoing queue. Counted by
/// the calls answered before the second connection's, not by time.
#[cfg(unix)]
#[tokio::test(flavor = "current_thread")]
async fn a_flooding_connection_yields_to_another_within_a_few_hundred_messages() {
    use std::io::{BufRead, Read, Write};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::{Mutex, mpsc};
    const FLOOD: u64 = 10_000;
    let answered = Arc::new(AtomicU64::new(0));
    // The flood's first call holds the server (this runtime's only thread) until
    // the second connection's message has been written.
    let (go, gone) = mpsc::channel::<()>();
    let (written, wait_written) = mpsc::channel::<()>();
    let wait_written = Mutex::new(wait_written);
    let (count, peek) = (answered.clone(), answered.clone());
    let router = Router::builder()
        .method("count", move |_, out| {
            let n = count.fetch_add(1, Ordering::Relaxed) + 1;
            if n == 1 {
                go.send(()).unwrap();
                wait_written.lock().unwrap().recv().unwrap();
            }
            out.u64(n)
        })
        .method("peek", move |_, out| out.u64(peek.load(Ordering::Relaxed)))
        .build()
        .unwrap();
    let dir = std::env::temp_dir().join(format!("sb-fair-{}", std::process::id()));
    let _ = std::fs::remove_file(&dir);
    let listener = tokio::net::UnixListener::bind(&dir).unwrap();
    let accept = tokio::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.unwrap();
            let duplex = Duplex::new(router.clone(), DuplexConfig::default());
            let (r, w) = stream.into_split();
            tokio::spawn(async move {
                let _ = duplex.serve(r, w).await;
            });
        }
    });
    let flood = std::os::unix::net::UnixStream::connect(&dir).unwrap();
    let (mut reader, mut writer) = (flood.try_clone().unwrap(), flood.try_clone().unwrap());
    std::thread::spawn(move || {
        let line = b"{\"jsonrpc\":\"2.0\",\"method\":\"count\",\"id\":1}\n";
        let _ = writer.write_all(&line.repeat(FLOOD as usize));
    });
    std::thread::spawn(move || {
        let mut sink = [0u8; 65536];
        while matches!(reader.read(&mut sink), Ok(n) if n > 0) {}
    });
    let path = dir.clone();
    let (seen, saw) = tokio::sync::oneshot::channel::<String>();
    std::thread::spawn(move || {
        gone.recv().unwrap();
        let mut s = std::os::unix::net::UnixStream::connect(&path).unwrap();
        s.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"peek\",\"id\":2}\n")
            .unwrap();
        written.send(()).unwrap();
        let mut line = String::new();
        std::io::BufReader::new(s).read_line(&mut line).unwrap();
        let _ = seen.send(line);
    });
    let line = saw.await.unwrap();
    let value: serde_json::Value = serde_json::from_str(&line).unwrap();
    let before = value["result"].as_u64().unwrap();
    // At most three yields of 256 messages: 768; without them, all 10 000.
    assert!(
        (1..=768).contains(&before),
        "the second connection was answered after {before} messages of the flood"
    );
    drop(flood);
    accept.abort();
    let _ = std::fs::remove_file(&dir);
}
