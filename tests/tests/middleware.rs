//! RPC middleware (`RouterBuilder::middleware`): order, refusals, panics,
//! notifications, batches, unregistered methods, async calls that complete,
//! fail, are cancelled or dropped, and no allocation on sync calls.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use switchboard::connection::{CancelRule, Connection, ConnectionConfig, block_on};
use switchboard::middleware::{Done, Middleware, Outcome};
use switchboard::{Call, Router, RouterBuilder, RpcError, Session};
use switchboard_tests::counting::{Counting, allocations};

#[global_allocator]
static GLOBAL: Counting = Counting;

type Log = Arc<Mutex<Vec<String>>>;

/// Records `before NAME method` and `after NAME method outcome`; refuses the
/// methods in `refuse`, panics on those in `panic`.
struct Recorder {
    name: &'static str,
    log: Log,
    refuse: &'static [&'static str],
    panic: &'static [&'static str],
}

fn outcome_text(o: Outcome<'_>) -> String {
    match o {
        Outcome::Ok => "ok".into(),
        Outcome::Error(e) => format!("error {}", e.code()),
        Outcome::Panicked => "panicked".into(),
        Outcome::Cancelled => "cancelled".into(),
        _ => "other".into(),
    }
}

impl Middleware for Recorder {
    fn before(&self, call: &Call<'_>) -> Result<(), RpcError> {
        let m = call.method().lookup_key().unwrap_or("?").to_owned();
        let kind = if call.is_notification() { " (n)" } else { "" };
        self.log
            .lock()
            .unwrap()
            .push(format!("before {} {m}{kind}", self.name));
        if self.panic.contains(&m.as_str()) {
            panic!("layer {} panics", self.name);
        }
        if self.refuse.contains(&m.as_str()) {
            return Err(RpcError::new(-32001, "refused"));
        }
        Ok(())
    }

    fn after(&self, done: &Done<'_>) {
        let kind = if done.is_notification() { " (n)" } else { "" };
        self.log.lock().unwrap().push(format!(
            "after {} {}{kind} {}",
            self.name,
            done.method(),
            outcome_text(done.outcome())
        ));
    }
}

fn layer(name: &'static str, log: &Log) -> Recorder {
    Recorder {
        name,
        log: log.clone(),
        refuse: &[],
        panic: &[],
    }
}

fn methods(log: &Log) -> RouterBuilder {
    let ran = log.clone();
    Router::builder()
        .method("ok", move |_, out| {
            ran.lock().unwrap().push("handler ok".into());
            out.str("fine")
        })
        .method("fails", |_, _| Err(RpcError::new(7, "no")))
        .method("boom", |_, _| panic!("handler panics"))
        .typed("add", |(a, b): (i64, i64)| Ok(a + b))
        .notification("note", |_| {})
        .method_async("later", |_call| async { Ok("done") })
        .method_async("later_fails", |_call| async {
            Err::<(), _>(RpcError::new(9, "later no"))
        })
        .method_async("forever", |_call| {
            std::future::pending::<Result<(), RpcError>>()
        })
}

fn take(log: &Log) -> Vec<String> {
    std::mem::take(&mut *log.lock().unwrap())
}

fn text(r: Option<&[u8]>) -> Option<String> {
    r.map(|r| String::from_utf8(r.to_vec()).unwrap())
}

#[test]
fn layers_run_as_an_onion_around_the_handler() {
    let log = Log::default();
    let router = methods(&log)
        .middleware(layer("outer", &log))
        .middleware(layer("inner", &log))
        .build()
        .unwrap();
    let mut s = Session::new(router);
    let resp = s.handle(br#"{"jsonrpc":"2.0","method":"ok","id":1}"#);
    assert_eq!(
        text(resp).unwrap(),
        r#"{"jsonrpc":"2.0","result":"fine","id":1}"#
    );
    assert_eq!(
        take(&log),
        [
            "before outer ok",
            "before inner ok",
            "handler ok",
            "after inner ok ok",
            "after outer ok ok"
        ]
    );
    // Errors, panics and typed mismatches are outcomes too.
    s.handle(br#"{"jsonrpc":"2.0","method":"fails","id":2}"#);
    s.handle(br#"{"jsonrpc":"2.0","method":"boom","id":3}"#);
    let resp = s.handle(br#"{"jsonrpc":"2.0","method":"add","params":["x"],"id":4}"#);
    assert!(text(resp).unwrap().contains(r#""code":-32602"#));
    let after: Vec<_> = take(&log)
        .into_iter()
        .filter(|l| l.starts_with("after outer"))
        .collect();
    assert_eq!(
        after,
        [
            "after outer fails error 7",
            "after outer boom panicked",
            "after outer add error -32602"
        ]
    );
}

#[test]
fn a_refusal_is_the_answer_and_the_handler_does_not_run() {
    let log = Log::default();
    let router = methods(&log)
        .middleware(layer("outer", &log))
        .middleware(Recorder {
            refuse: &["ok", "note"],
            ..layer("auth", &log)
        })
        .middleware(layer("inner", &log))
        .build()
        .unwrap();
    let mut s = Session::new(router);
    let resp = s.handle(br#"{"jsonrpc":"2.0","method":"ok","id":"a"}"#);
    assert_eq!(
        text(resp).unwrap(),
        r#"{"jsonrpc":"2.0","error":{"code":-32001,"message":"refused"},"id":"a"}"#
    );
    // The outer layer sees the refusal; the refusing and inner ones get no `after`.
    assert_eq!(
        take(&log),
        [
            "before outer ok",
            "before auth ok",
            "after outer ok error -32001"
        ]
    );
    // A refused notification is answered nothing.
    assert_eq!(s.handle(br#"{"jsonrpc":"2.0","method":"note"}"#), None);
    assert_eq!(
        take(&log),
        [
            "before outer note (n)",
            "before auth note (n)",
            "after outer note (n) error -32001"
        ]
    );
    // In a batch each call goes through the layers on its own.
    let resp = s.handle(
        br#"[{"jsonrpc":"2.0","method":"ok","id":1},{"jsonrpc":"2.0","method":"add","params":[1,2],"id":2}]"#,
    );
    assert_eq!(
        text(resp).unwrap(),
        r#"[{"jsonrpc":"2.0","error":{"code":-32001,"message":"refused"},"id":1},{"jsonrpc":"2.0","result":3,"id":2}]"#
    );
    assert_eq!(take(&log).len(), 3 + 6);
}

#[test]
fn a_panicking_layer_is_answered_internal_error() {
    let log = Log::default();
    let router = methods(&log)
        .middleware(layer("outer", &log))
        .middleware(Recorder {
            panic: &["ok"],
            ..layer("bad", &log)
        })
        .build()
        .unwrap();
    let mut s = Session::new(router);
    let resp = text(s.handle(br#"{"jsonrpc":"2.0","method":"ok","id":1}"#)).unwrap();
    assert!(resp.contains(r#""code":-32603"#), "{resp}");
    assert_eq!(
        take(&log),
        [
            "before outer ok",
            "before bad ok",
            "after outer ok panicked"
        ]
    );
    // The session stays usable.
    let resp = text(s.handle(br#"{"jsonrpc":"2.0","method":"add","params":[1,2],"id":2}"#));
    assert_eq!(resp.unwrap(), r#"{"jsonrpc":"2.0","result":3,"id":2}"#);
}

#[test]
fn unregistered_methods_and_refused_messages_are_not_seen() {
    let log = Log::default();
    let router = methods(&log).middleware(layer("m", &log)).build().unwrap();
    let mut s = Session::new(router);
    assert!(
        text(s.handle(br#"{"jsonrpc":"2.0","method":"nope","id":1}"#))
            .unwrap()
            .contains("-32601")
    );
    assert!(text(s.handle(b"{oops")).unwrap().contains("-32700"));
    assert!(
        text(s.handle(br#"{"jsonrpc":"2.0","id":1}"#))
            .unwrap()
            .contains("-32600")
    );
    assert!(take(&log).is_empty());
    // rpc.discover is a registered method.
    s.handle(br#"{"jsonrpc":"2.0","method":"rpc.discover","id":2}"#);
    assert_eq!(
        take(&log),
        ["before m rpc.discover", "after m rpc.discover ok"]
    );
}

/// Polls `fut` until it is ready (its wakers are ignored: the futures here are
/// ready, pending for ever, or cancelled by another poll).
fn poll_once<F: Future + Unpin>(fut: &mut F) -> Poll<F::Output> {
    Pin::new(fut).poll(&mut Context::from_waker(Waker::noop()))
}

#[test]
fn async_calls_report_when_their_future_ends() {
    let log = Log::default();
    let router = methods(&log)
        .middleware(layer("m", &log))
        .cancel_notification(CancelRule::new("cancel", "id"))
        .build()
        .unwrap();
    let mut s = Session::new(router);
    let (conn, _outgoing) = Connection::new(&ConnectionConfig::new());
    s.attach(conn);

    // Completes: `after` runs when the future does, not when it is made.
    let mut calls = s
        .handle_concurrent(br#"{"jsonrpc":"2.0","method":"later","id":1}"#)
        .calls
        .unwrap();
    assert_eq!(take(&log), ["before m later"]);
    let out = block_on(&mut calls).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        r#"{"jsonrpc":"2.0","result":"done","id":1}"#
    );
    assert_eq!(take(&log), ["after m later ok"]);

    // Fails.
    let calls = s
        .handle_concurrent(br#"{"jsonrpc":"2.0","method":"later_fails","id":2}"#)
        .calls
        .unwrap();
    block_on(calls);
    assert_eq!(
        take(&log),
        ["before m later_fails", "after m later_fails error 9"]
    );

    // Cancelled by the protocol's cancel notification.
    let mut calls = s
        .handle_concurrent(br#"{"jsonrpc":"2.0","method":"forever","id":3}"#)
        .calls
        .unwrap();
    assert!(poll_once(&mut calls).is_pending());
    assert!(
        s.handle(br#"{"jsonrpc":"2.0","method":"cancel","params":{"id":3}}"#)
            .is_none()
    );
    assert!(poll_once(&mut calls).is_ready());
    assert_eq!(
        take(&log),
        ["before m forever", "after m forever cancelled"]
    );

    // Dropped before it completed (its connection went away, say).
    let mut calls = s
        .handle_concurrent(br#"{"jsonrpc":"2.0","method":"forever","id":4}"#)
        .calls
        .unwrap();
    assert!(poll_once(&mut calls).is_pending());
    drop(calls);
    assert_eq!(
        take(&log),
        ["before m forever", "after m forever cancelled"]
    );

    // `handle` drives async calls to completion where it is called.
    let resp = text(s.handle(br#"{"jsonrpc":"2.0","method":"later","id":5}"#));
    assert_eq!(resp.unwrap(), r#"{"jsonrpc":"2.0","result":"done","id":5}"#);
    assert_eq!(take(&log), ["before m later", "after m later ok"]);
}

/// A layer that reads the call and measures it, allocating nothing.
struct Quiet;

impl Middleware for Quiet {
    fn before(&self, call: &Call<'_>) -> Result<(), RpcError> {
        std::hint::black_box(call.method().lookup_key());
        Ok(())
    }

    fn after(&self, done: &Done<'_>) {
        std::hint::black_box((done.method(), done.elapsed() > Duration::ZERO));
    }
}

#[test]
fn a_layer_that_allocates_nothing_adds_no_allocation_to_sync_calls() {
    let router = Router::builder()
        .typed("add", |(a, b): (i64, i64)| Ok(a + b))
        .middleware(Quiet)
        .build()
        .unwrap();
    let mut s = Session::new(router);
    let input = br#"{"jsonrpc":"2.0","method":"add","params":[2,3],"id":1}"#;
    for round in 0..3 {
        let (ok, n) = allocations(|| s.handle(input).is_some());
        assert!(ok);
        if round > 0 {
            assert_eq!(n, 0, "round {round} allocated {n} times");
        }
    }
}
