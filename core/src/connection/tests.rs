//! The connection alone: peer requests and their answers, timeouts, close, the
//! outgoing queue. (With a session and concurrent calls: `tests/` and the
//! session's tests.)

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use super::*;
use crate::{Message, Parser};

struct Count(AtomicUsize);
impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn counting() -> (Arc<Count>, Waker) {
    let c = Arc::new(Count(AtomicUsize::new(0)));
    let w = Waker::from(c.clone());
    (c, w)
}

/// Polls once.
fn poll<F: Future + ?Sized>(f: Pin<&mut F>, w: &Waker) -> Poll<F::Output> {
    f.poll(&mut Context::from_waker(w))
}

/// Delivers `json` (a response) to `conn`; whether it matched.
fn deliver(conn: &Connection, json: &str) -> bool {
    let mut p = Parser::new();
    let Message::Response(r) = p.parse(json.as_bytes()) else {
        panic!("not a response: {json}")
    };
    conn.deliver(&r)
}

fn config(timeout: Option<Duration>) -> ConnectionConfig {
    let mut c = ConnectionConfig::new();
    c.request_timeout(timeout).queue_capacity(8);
    c
}

#[test]
fn requests_get_their_answers_by_exact_id_bytes() {
    let (conn, out) = Connection::new(&config(None));
    let peer = conn.peer();
    let (wakes, w) = counting();
    let mut a = Box::pin(peer.request("a", &[1]));
    let mut b = Box::pin(peer.request("b", &serde_json::json!({"k": "v"})));
    assert!(poll(a.as_mut(), &w).is_pending());
    assert!(poll(b.as_mut(), &w).is_pending());
    assert_eq!(
        out.try_recv().unwrap(),
        br#"{"jsonrpc":"2.0","method":"a","params":[1],"id":1}"#
    );
    assert_eq!(
        out.try_recv().unwrap(),
        br#"{"jsonrpc":"2.0","method":"b","params":{"k":"v"},"id":2}"#
    );
    assert_eq!(conn.pending_requests(), 2);
    // Same number, other bytes: a string "2", 2.0: never a match.
    assert!(!deliver(&conn, r#"{"jsonrpc":"2.0","result":0,"id":"2"}"#));
    assert!(!deliver(&conn, r#"{"jsonrpc":"2.0","result":0,"id":2.0}"#));
    assert!(deliver(
        &conn,
        r#"{"jsonrpc":"2.0","error":{"code":-5,"message":"no","data":[1]},"id":2}"#
    ));
    // Answered twice: the first answer stands, the second is unmatched.
    assert!(!deliver(
        &conn,
        r#"{"jsonrpc":"2.0","result":"late","id":2}"#
    ));
    assert!(deliver(
        &conn,
        r#"{"jsonrpc":"2.0","result":{"x":[true]},"id":1}"#
    ));
    assert!(wakes.0.load(Ordering::SeqCst) >= 2);
    let Poll::Ready(Ok(v)) = poll(a.as_mut(), &w) else {
        panic!()
    };
    assert_eq!(v.as_bytes(), br#"{"x":[true]}"#);
    let Poll::Ready(Err(PeerError::Rejected(e))) = poll(b.as_mut(), &w) else {
        panic!()
    };
    assert_eq!(
        (e.code(), e.message(), e.data_json()),
        (-5, "no", Some("[1]"))
    );
    assert_eq!(conn.unmatched_responses(), 3);
    assert_eq!(conn.pending_requests(), 0);
}

#[test]
fn a_dropped_request_is_forgotten_and_its_late_answer_unmatched() {
    let (conn, out) = Connection::new(&config(None));
    let mut r = Box::pin(conn.peer().request("x", &()));
    let (_, w) = counting();
    assert!(poll(r.as_mut(), &w).is_pending());
    assert_eq!(
        out.try_recv().unwrap(),
        br#"{"jsonrpc":"2.0","method":"x","id":1}"#
    );
    drop(r);
    assert_eq!(conn.pending_requests(), 0);
    assert!(!deliver(&conn, r#"{"jsonrpc":"2.0","result":1,"id":1}"#));
}

#[test]
fn a_request_dropped_before_its_first_poll_leaves_nothing_pending() {
    let (conn, _out) = Connection::new(&config(None));
    let r = conn.peer().request("x", &());
    assert_eq!(conn.pending_requests(), 1);
    drop(r);
    assert_eq!(conn.pending_requests(), 0);
    let r = conn.peer().request_raw("x", Some(b"[1]"));
    drop(r);
    assert_eq!(conn.pending_requests(), 0);
}

#[test]
fn close_fails_every_pending_request_at_once() {
    let (conn, _out) = Connection::new(&config(None));
    let (wakes, w) = counting();
    let mut reqs: Vec<_> = (0..5)
        .map(|_| Box::pin(conn.peer().request("m", &())))
        .collect();
    for r in &mut reqs {
        assert!(poll(r.as_mut(), &w).is_pending());
    }
    conn.close();
    assert_eq!(wakes.0.load(Ordering::SeqCst), 5);
    for r in &mut reqs {
        assert_eq!(poll(r.as_mut(), &w), Poll::Ready(Err(PeerError::Closed)));
    }
    assert_eq!(conn.pending_requests(), 0);
    // After close: refused at once, notifications too.
    let mut late = Box::pin(conn.peer().request("m", &()));
    assert_eq!(poll(late.as_mut(), &w), Poll::Ready(Err(PeerError::Closed)));
    assert_eq!(conn.peer().try_notify("n", &()), Err(PeerError::Closed));
    assert!(conn.is_closed());
    let mut closed = Box::pin(conn.closed());
    assert!(poll(closed.as_mut(), &w).is_ready());
}

#[test]
fn the_timer_fails_late_requests_and_hears_of_earlier_deadlines() {
    let (conn, _out) = Connection::new(&config(Some(Duration::from_secs(60))));
    let (timer_wakes, tw) = counting();
    let (_, w) = counting();
    let now = Instant::now();
    let mut cx = Context::from_waker(&tw);
    assert_eq!(conn.poll_expire(&mut cx, now), None);
    let mut long = Box::pin(conn.peer().request("long", &()));
    assert!(poll(long.as_mut(), &w).is_pending());
    // A first deadline wakes the timer (it slept with none).
    assert_eq!(timer_wakes.0.load(Ordering::SeqCst), 1);
    let next = conn.poll_expire(&mut cx, Instant::now()).unwrap();
    assert!(next > now + Duration::from_secs(59));
    let mut short = Box::pin(conn.peer().request_with_timeout(
        "short",
        &(),
        Some(Duration::from_millis(1)),
    ));
    assert!(poll(short.as_mut(), &w).is_pending());
    // An earlier deadline wakes it again; a later one would not.
    assert_eq!(timer_wakes.0.load(Ordering::SeqCst), 2);
    let next = conn
        .poll_expire(&mut cx, Instant::now() + Duration::from_millis(2))
        .unwrap();
    assert!(next > now + Duration::from_secs(59)); // only `long` is left
    assert_eq!(
        poll(short.as_mut(), &w),
        Poll::Ready(Err(PeerError::TimedOut))
    );
    assert!(poll(long.as_mut(), &w).is_pending());
    // The client's answer after the timeout matches nothing.
    assert!(!deliver(&conn, r#"{"jsonrpc":"2.0","result":1,"id":2}"#));
    let mut never = Box::pin(conn.peer().request_with_timeout("never", &(), None));
    assert!(poll(never.as_mut(), &w).is_pending());
    assert_eq!(timer_wakes.0.load(Ordering::SeqCst), 2);
    conn.close();
    assert_eq!(timer_wakes.0.load(Ordering::SeqCst), 3); // so that it can end
}

#[test]
fn params_must_be_an_array_or_object() {
    let (conn, out) = Connection::new(&config(None));
    let peer = conn.peer();
    assert!(matches!(
        peer.try_notify("n", &5),
        Err(PeerError::InvalidParams(_))
    ));
    assert!(matches!(
        block_on(peer.notify_raw("n", Some(b"[1,"))),
        Err(PeerError::InvalidParams(_))
    ));
    assert!(matches!(
        block_on(peer.request_raw("n", Some(b"\"s\""))),
        Err(PeerError::InvalidParams(_))
    ));
    assert_eq!(conn.pending_requests(), 0);
    block_on(peer.notify_raw("n", Some(b"{\"a\":[1, 2]}"))).unwrap();
    block_on(peer.notify("m\"q", &())).unwrap();
    assert_eq!(
        out.try_recv().unwrap(),
        br#"{"jsonrpc":"2.0","method":"n","params":{"a":[1, 2]}}"#
    );
    assert_eq!(
        out.try_recv().unwrap(),
        br#"{"jsonrpc":"2.0","method":"m\"q"}"#
    );
}

#[test]
fn the_queue_is_bounded() {
    let (conn, out) = Connection::new(&config(None));
    let peer = conn.peer();
    for _ in 0..8 {
        peer.try_notify("n", &()).unwrap();
    }
    assert_eq!(peer.try_notify("n", &()), Err(PeerError::Full));
    // The async sender waits for room.
    let (_, w) = counting();
    let mut waiting = Box::pin(peer.notify("n", &()));
    assert!(poll(waiting.as_mut(), &w).is_pending());
    assert!(out.try_recv().is_some());
    assert_eq!(poll(waiting.as_mut(), &w), Poll::Ready(Ok(())));
    assert_eq!(out.len(), 8);
    // A finishing driver closes the queue: what is queued can still be read.
    out.close();
    assert_eq!(peer.try_notify("n", &()), Err(PeerError::Closed));
    assert_eq!(std::iter::from_fn(|| out.try_recv()).count(), 8);
}

#[test]
fn calls_register_and_cancel_by_id_bytes() {
    let (conn, _out) = Connection::new(&config(None));
    let a = conn.register_call(Some(b"1"));
    let b = conn.register_call(Some(b"\"1\""));
    let n = conn.register_call(None);
    assert_eq!(conn.calls_in_flight(), 2);
    assert!(!conn.cancel_call(b"2"));
    assert!(conn.cancel_call(b"1"));
    assert!(a.token.is_cancelled() && !b.token.is_cancelled());
    // A reused id: the later call is the one cancelled, and the first one's
    // end does not remove the second's entry.
    let a2 = conn.register_call(Some(b"1"));
    drop(a);
    assert_eq!(conn.calls_in_flight(), 2);
    assert!(conn.cancel_call(b"1"));
    assert!(a2.token.is_cancelled());
    drop((a2, b));
    assert_eq!(conn.calls_in_flight(), 0);
    conn.cancel_all_calls();
    assert!(!n.token.is_cancelled()); // not in the table: no id
}

mod with_a_session {
    use super::*;
    use crate::{OwnedCall, Router, RpcError, RunningCalls, Session};
    use std::sync::Mutex;

    /// A router whose `wait` never completes by itself (it keeps its token in
    /// `seen`), `ask` asks the client, `now` is sync.
    fn router(rule: CancelRule, seen: Arc<Mutex<Vec<CancellationToken>>>) -> Arc<Router> {
        Router::builder()
            .method_async("wait", move |call: OwnedCall| {
                seen.lock().unwrap().push(call.cancellation().clone());
                async { std::future::pending::<Result<(), RpcError>>().await }
            })
            .method_async("ask", |call: OwnedCall| async move {
                let peer = call.connection().unwrap().peer();
                let v = peer.request("q", &[1]).await?;
                Ok(v.as_raw().as_i64().unwrap_or(-1) * 2)
            })
            .method_async("boom", |_call: OwnedCall| async {
                panic!("boom") as Result<(), _>
            })
            .method("now", |_, out| out.str("now"))
            .cancel_notification(rule)
            .build()
            .unwrap()
    }

    fn session(
        rule: CancelRule,
    ) -> (
        Session,
        Connection,
        Outgoing,
        Arc<Mutex<Vec<CancellationToken>>>,
    ) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (conn, out) = Connection::new(&config(Some(Duration::from_secs(60))));
        let mut s = Session::new(router(rule, seen.clone()));
        s.attach(conn.clone());
        (s, conn, out, seen)
    }

    fn text(v: Option<Vec<u8>>) -> Option<String> {
        v.map(|v| String::from_utf8(v).unwrap())
    }

    /// Handles `m`, which must be answered later; its calls.
    fn later(s: &mut Session, m: &str) -> RunningCalls {
        let h = s.handle_concurrent(m.as_bytes());
        assert!(h.response.is_none(), "{m}");
        h.calls.expect(m)
    }

    /// Handles `m`, which must be answered (or not) at once.
    fn now(s: &mut Session, m: &str) -> Option<String> {
        let h = s.handle_concurrent(m.as_bytes());
        assert!(h.calls.is_none(), "{m}");
        h.response.map(|r| String::from_utf8(r.to_vec()).unwrap())
    }

    const LSP_CANCEL: &str = r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":5}}"#;

    #[test]
    fn the_cancel_notification_cancels_the_call_it_names() {
        let lsp = CancelRule::new("$/cancelRequest", "id")
            .answer(RpcError::new(-32800, "Request cancelled"));
        let (mut s, conn, _out, seen) = session(lsp);
        let (_, w) = counting();
        let mut a = later(&mut s, r#"{"jsonrpc":"2.0","method":"wait","id":5}"#);
        let mut b = later(&mut s, r#"{"jsonrpc":"2.0","method":"wait","id":"5"}"#);
        assert!(poll(Pin::new(&mut a), &w).is_pending());
        assert!(poll(Pin::new(&mut b), &w).is_pending());
        assert_eq!(conn.calls_in_flight(), 2);
        // Unknown ids, a cancel without params, a sync call meanwhile: no effect.
        for m in [
            r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":6}}"#,
            r#"{"jsonrpc":"2.0","method":"$/cancelRequest"}"#,
            r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":[5]}"#,
        ] {
            assert_eq!(now(&mut s, m), None);
        }
        assert_eq!(
            now(&mut s, r#"{"jsonrpc":"2.0","method":"now","id":1}"#).unwrap(),
            r#"{"jsonrpc":"2.0","result":"now","id":1}"#
        );
        assert!(poll(Pin::new(&mut a), &w).is_pending());
        assert_eq!(now(&mut s, LSP_CANCEL), None);
        let tokens = seen.lock().unwrap().clone();
        assert!(tokens[0].is_cancelled() && !tokens[1].is_cancelled());
        assert_eq!(
            text(block_on(&mut a)).unwrap(),
            r#"{"jsonrpc":"2.0","error":{"code":-32800,"message":"Request cancelled"},"id":5}"#
        );
        assert_eq!(conn.calls_in_flight(), 1);
        // After the answer, a cancel finds nothing.
        assert_eq!(now(&mut s, LSP_CANCEL), None);
        assert!(!conn.cancel_call(b"5"));
        drop(b); // dropping the calls forgets them
        assert_eq!(conn.calls_in_flight(), 0);
    }

    #[test]
    fn mcp_cancelled_calls_are_never_answered() {
        let mcp = CancelRule::new("notifications/cancelled", "requestId");
        let (mut s, conn, _out, _seen) = session(mcp);
        let mut a = later(&mut s, r#"{"jsonrpc":"2.0","method":"wait","id":"x"}"#);
        let (_, w) = counting();
        assert!(poll(Pin::new(&mut a), &w).is_pending());
        // LSP's cancel means nothing to this router.
        assert_eq!(
            now(
                &mut s,
                r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"x"}}"#
            ),
            None
        );
        assert!(poll(Pin::new(&mut a), &w).is_pending());
        let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x","reason":"user"}}"#;
        assert_eq!(now(&mut s, cancel), None);
        assert_eq!(block_on(&mut a), None);
        assert_eq!(conn.calls_in_flight(), 0);
    }

    #[test]
    fn a_handler_awaits_the_clients_answer() {
        let (mut s, conn, out, _) = session(CancelRule::new("c", "id"));
        let mut a = later(&mut s, r#"{"jsonrpc":"2.0","method":"ask","id":9}"#);
        let (_, w) = counting();
        assert!(poll(Pin::new(&mut a), &w).is_pending());
        assert_eq!(
            out.try_recv().unwrap(),
            br#"{"jsonrpc":"2.0","method":"q","params":[1],"id":1}"#
        );
        assert_eq!(conn.pending_requests(), 1);
        // Unknown and repeated answers are dropped, never answered.
        assert_eq!(now(&mut s, r#"{"jsonrpc":"2.0","result":1,"id":2}"#), None);
        assert_eq!(now(&mut s, r#"{"jsonrpc":"2.0","result":21,"id":1}"#), None);
        assert_eq!(now(&mut s, r#"{"jsonrpc":"2.0","result":22,"id":1}"#), None);
        assert_eq!(
            text(block_on(&mut a)).unwrap(),
            r#"{"jsonrpc":"2.0","result":42,"id":9}"#
        );
        assert_eq!(conn.unmatched_responses(), 2);
        assert_eq!(s.dropped_responses(), 2);
        assert_eq!((conn.pending_requests(), conn.calls_in_flight()), (0, 0));
        // The client goes away with a request pending: it fails at once.
        let mut b = later(&mut s, r#"{"jsonrpc":"2.0","method":"ask","id":10}"#);
        assert!(poll(Pin::new(&mut b), &w).is_pending());
        conn.close();
        let answer = text(block_on(&mut b)).unwrap();
        assert!(
            answer.starts_with(r#"{"jsonrpc":"2.0","error":{"code":-32603"#)
                && answer.contains("the connection is closed")
                && answer.ends_with(r#""id":10}"#),
            "{answer}"
        );
        assert_eq!((conn.pending_requests(), conn.calls_in_flight()), (0, 0));
    }

    #[test]
    #[cfg_attr(
        target_os = "wasi",
        ignore = "a handler panics (`boom`): needs unwinding: a panic aborts on wasm32-wasip1"
    )]
    fn a_batch_is_answered_whole_when_its_async_calls_complete() {
        let (mut s, conn, out, _) = session(CancelRule::new("c", "id"));
        let batch = r#"[{"jsonrpc":"2.0","method":"ask","id":1},{"jsonrpc":"2.0","method":"now","id":2},
            {"jsonrpc":"2.0","method":"now"},{"jsonrpc":"2.0","method":"boom","id":3},{"jsonrpc":"2.0","method":"c","params":{"id":99}}]"#;
        let mut calls = later(&mut s, batch);
        // The session's buffer is free for the next message meanwhile.
        assert!(now(&mut s, r#"{"jsonrpc":"2.0","method":"now","id":"n"}"#).is_some());
        let (_, w) = counting();
        assert!(poll(Pin::new(&mut calls), &w).is_pending());
        assert_eq!(calls.running(), 1); // boom has panicked already
        let req = out.try_recv().unwrap();
        assert_eq!(
            req,
            br#"{"jsonrpc":"2.0","method":"q","params":[1],"id":1}"#
        );
        assert_eq!(now(&mut s, r#"{"jsonrpc":"2.0","result":5,"id":1}"#), None);
        assert_eq!(
            text(block_on(&mut calls)).unwrap(),
            concat!(
                r#"[{"jsonrpc":"2.0","result":"now","id":2},"#,
                r#"{"jsonrpc":"2.0","result":10,"id":1},"#,
                r#"{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error","data":{"reason":"the handler panicked"}},"id":3}]"#
            )
        );
        assert_eq!(conn.calls_in_flight(), 0);
    }

    #[test]
    fn unmatched_responses_still_reach_the_routers_sink() {
        let got = Arc::new(Mutex::new(Vec::new()));
        let sink = got.clone();
        let router = Router::builder()
            .response_sink(move |r| sink.lock().unwrap().push(r.id().as_bytes().to_vec()))
            .build()
            .unwrap();
        let (conn, _out) = Connection::new(&config(None));
        let mut s = Session::new(router);
        s.attach(conn.clone());
        let mut r = Box::pin(conn.peer().request("m", &()));
        let (_, w) = counting();
        assert!(poll(r.as_mut(), &w).is_pending());
        assert!(
            s.handle(br#"{"jsonrpc":"2.0","result":1,"id":1}"#)
                .is_none()
        );
        assert!(
            s.handle(br#"{"jsonrpc":"2.0","result":1,"id":7}"#)
                .is_none()
        );
        assert_eq!(*got.lock().unwrap(), vec![b"7".to_vec()]);
        assert!(matches!(poll(r.as_mut(), &w), Poll::Ready(Ok(_))));
        assert_eq!(s.detach().map(|c| c.id()), Some(conn.id()));
    }
}
