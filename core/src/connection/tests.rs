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
