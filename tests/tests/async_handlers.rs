//! Async handlers (`method_async`, `typed_async`) through `Session::handle_async` and
//! the blocking `Session::handle`, with hand-rolled executors (the core has no
//! runtime): single calls, typed params refused before any future exists,
//! notifications, a batch whose async calls only finish when polled concurrently,
//! panicking futures, cancellation, and byte-identical answers to `handle` for
//! messages without async methods.
//!
//! This binary installs the counting global allocator of
//! `switchboard_tests::counting` for the allocation checks.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use serde_json::{Value, json};
use switchboard_tests::counting::{Counting, allocations};

use switchboard::{OwnedCall, Router, RouterBuilder, RpcError, Session};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Polls `fut` (with a waker that does nothing) at most `budget` times.
fn poll_within<F: Future>(budget: usize, fut: F) -> Option<F::Output> {
    let mut fut = std::pin::pin!(fut);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..budget {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return Some(v);
        }
    }
    None
}

/// `handle_async` run to completion by the polling executor; its answer as text.
fn handle_async(session: &mut Session, input: &str) -> Option<String> {
    poll_within(1000, session.handle_async(input.as_bytes()))
        .expect("handle_async completes within 1000 polls")
        .map(text)
}

fn handle(session: &mut Session, input: &str) -> Option<String> {
    session.handle(input.as_bytes()).map(text)
}

fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}

fn json_of(s: &str) -> Value {
    serde_json::from_str(s).unwrap()
}

/// Pending once (waking its task), then ready: makes a handler's future really
/// suspend.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

/// Two parties that each wait until the other has arrived: polled one after the
/// other to completion they never finish; polled concurrently they do.
#[derive(Default)]
struct Meeting {
    arrived: [bool; 2],
    waiting: [Option<Waker>; 2],
}

struct Arrive {
    meeting: Arc<Mutex<Meeting>>,
    me: usize,
}

impl Future for Arrive {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut m = self.meeting.lock().unwrap();
        let other = 1 - self.me;
        m.arrived[self.me] = true;
        if let Some(w) = m.waiting[other].take() {
            w.wake();
        }
        if m.arrived[other] {
            Poll::Ready(())
        } else {
            m.waiting[self.me] = Some(cx.waker().clone());
            Poll::Pending
        }
    }
}

/// Sync methods used by several tests.
fn sync_methods(b: RouterBuilder) -> RouterBuilder {
    b.typed("subtract", |(a, b): (i64, i64)| {
        a.checked_sub(b).ok_or(RpcError::new(1, "overflow"))
    })
    .method("ping", |_, out| out.str("pong"))
    .method("echo", |call, out| {
        out.raw_json(call.params().map_or(&b"null"[..], |p| p.as_bytes()))
    })
    .method("app_error", |_, _| {
        Err(RpcError::new(7, "nope").with_data_json(r#"{"why":"static"}"#))
    })
    .method("boom_sync", |_, _| {
        panic!("sync handler panics (expected by the test)")
    })
    .notification("update", |_| {})
}

#[test]
fn single_async_request_sees_an_owned_call() {
    let router = Router::builder()
        .method_async("inspect", |call: OwnedCall| async move {
            YieldOnce(false).await;
            Ok(json!({
                "method": call.method(),
                "id": call.id().map(|id| id.as_str().to_owned()),
                "params": call.params().map(|p| p.as_str().to_owned()),
                "second": call.params().and_then(|p| p.index(1)).and_then(|v| v.as_i64()),
                "notification": call.is_notification(),
            }))
        })
        .build()
        .unwrap();
    let mut session = Session::new(router);
    let input = r#"{"jsonrpc":"2.0","method":"in\u0073pect","params":[ 1 , 2 ],"id":1e2}"#;
    let expected = r#"{"jsonrpc":"2.0","result":{"id":"1e2","method":"inspect","notification":false,"params":"[ 1 , 2 ]","second":2},"id":1e2}"#;
    assert_eq!(handle_async(&mut session, input).as_deref(), Some(expected));
    // The blocking path gives the same answer.
    assert_eq!(handle(&mut session, input).as_deref(), Some(expected));
    // No params, string id.
    let input = r#"{"jsonrpc":"2.0","method":"inspect","id":"x"}"#;
    let expected = r#"{"jsonrpc":"2.0","result":{"id":"\"x\"","method":"inspect","notification":false,"params":null,"second":null},"id":"x"}"#;
    assert_eq!(handle_async(&mut session, input).as_deref(), Some(expected));
}

#[test]
fn owned_call_is_one_allocation() {
    let counts = Arc::new(Mutex::new(Vec::new()));
    let seen = counts.clone();
    let router = Router::builder()
        .method("own", move |call, out| {
            let (owned, n) = allocations(|| OwnedCall::from(call));
            seen.lock().unwrap().push(n);
            assert_eq!(owned.method(), "own");
            assert_eq!(
                owned.id().map(|i| i.as_bytes()),
                call.id().map(|i| i.as_bytes())
            );
            assert_eq!(owned.params(), call.params());
            assert_eq!(owned.is_notification(), call.is_notification());
            drop(owned);
            out.null()
        })
        .build()
        .unwrap();
    let mut session = Session::new(router);
    handle(
        &mut session,
        r#"{"jsonrpc":"2.0","method":"own","params":{"a":[1,"\u00e9"]},"id":"q"}"#,
    );
    handle(
        &mut session,
        r#"{"jsonrpc":"2.0","method":"own","id":null}"#,
    );
    handle(
        &mut session,
        r#"{"jsonrpc":"2.0","method":"own","params":[]}"#,
    );
    assert_eq!(*counts.lock().unwrap(), [1, 1, 1]);
}

#[test]
fn async_errors_and_unserializable_results_match_the_sync_path() {
    let router = sync_methods(Router::builder())
        .method_async("app_error_async", |_| async {
            YieldOnce(false).await;
            Err::<(), _>(RpcError::new(7, "nope").with_data_json(r#"{"why":"static"}"#))
        })
        .method_async("bad_result_async", |_| async {
            Ok(BTreeMap::from([(vec![1u8], 1)])) // JSON keys must be strings
        })
        .typed("bad_result", |()| Ok(BTreeMap::from([(vec![1u8], 1)])))
        .build()
        .unwrap();
    let mut session = Session::new(router);
    for (sync, asynchronous) in [
        ("app_error", "app_error_async"),
        ("bad_result", "bad_result_async"),
    ] {
        let call = |m: &str| format!(r#"{{"jsonrpc":"2.0","method":"{m}","id":5}}"#);
        let want = handle(&mut session, &call(sync)).unwrap();
        assert_eq!(
            handle_async(&mut session, &call(asynchronous)),
            Some(want.clone())
        );
        assert_eq!(handle(&mut session, &call(asynchronous)), Some(want));
    }
    let v = json_of(
        &handle_async(
            &mut session,
            r#"{"jsonrpc":"2.0","method":"bad_result_async","id":5}"#,
        )
        .unwrap(),
    );
    assert_eq!(v["error"]["code"], -32603);
    assert!(
        v["error"]["data"]["detail"]
            .as_str()
            .unwrap()
            .starts_with("the result could not be serialized"),
        "{v}"
    );
}

#[test]
fn typed_async_params_mismatch_is_refused_before_any_future() {
    let calls = Arc::new(AtomicUsize::new(0));
    let made = calls.clone();
    let router = Router::builder()
        .typed("add_sync", |(a, b): (i64, i64)| Ok(a + b))
        .typed_async("add", move |(a, b): (i64, i64)| {
            made.fetch_add(1, Ordering::SeqCst);
            async move {
                YieldOnce(false).await;
                Ok(a + b)
            }
        })
        .build()
        .unwrap();
    let mut session = Session::new(router);
    let call = |m: &str, params: &str| {
        let params = if params.is_empty() {
            String::new()
        } else {
            format!(r#","params":{params}"#)
        };
        format!(r#"{{"jsonrpc":"2.0","method":"{m}"{params},"id":1}}"#)
    };
    for bad in [r#"["x",1]"#, "[1]", r#"{"a":1,"a":2}"#, ""] {
        let want = handle(&mut session, &call("add_sync", bad)).unwrap();
        assert!(want.contains(r#""code":-32602"#), "{want}");
        assert!(want.contains(r#""data":{"detail":"#), "{want}");
        assert_eq!(
            handle_async(&mut session, &call("add", bad)),
            Some(want.clone()),
            "{bad}"
        );
        assert_eq!(handle(&mut session, &call("add", bad)), Some(want), "{bad}");
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "the handler ran on bad params"
    );
    assert_eq!(
        handle_async(&mut session, &call("add", "[2,3]")).as_deref(),
        Some(r#"{"jsonrpc":"2.0","result":5,"id":1}"#)
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[test]
fn notifications_to_async_methods_run_and_are_not_answered() {
    let ran = Arc::new(AtomicUsize::new(0));
    let counter = ran.clone();
    let router = sync_methods(Router::builder())
        .method_async("tick", move |_| {
            let counter = counter.clone();
            async move {
                YieldOnce(false).await; // counted only once the future really runs
                counter.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }
        })
        .build()
        .unwrap();
    let mut session = Session::new(router);
    let tick = r#"{"jsonrpc":"2.0","method":"tick","params":[1]}"#;
    assert_eq!(handle_async(&mut session, tick), None);
    assert_eq!(ran.load(Ordering::SeqCst), 1);
    assert_eq!(
        handle_async(&mut session, &format!("[{tick},{tick}]")),
        None
    );
    assert_eq!(ran.load(Ordering::SeqCst), 3);
    assert_eq!(handle(&mut session, tick), None);
    assert_eq!(handle(&mut session, &format!("[{tick},{tick}]")), None);
    assert_eq!(ran.load(Ordering::SeqCst), 6);
    // Mixed with a request: only the request is answered.
    let mixed = format!(r#"[{tick},{{"jsonrpc":"2.0","method":"tick","id":9}},{tick}]"#);
    let want = r#"[{"jsonrpc":"2.0","result":null,"id":9}]"#;
    assert_eq!(handle_async(&mut session, &mixed).as_deref(), Some(want));
    assert_eq!(ran.load(Ordering::SeqCst), 9);
    assert_eq!(handle(&mut session, &mixed).as_deref(), Some(want));
    assert_eq!(ran.load(Ordering::SeqCst), 12);
}

#[test]
fn a_batchs_async_calls_are_polled_concurrently() {
    let meeting = Arc::new(Mutex::new(Meeting::default()));
    let router = sync_methods(Router::builder())
        .method_async("meet", move |call| {
            let meeting = meeting.clone();
            async move {
                let (me,): (usize,) = call.params().unwrap().parse()?;
                Arrive { meeting, me }.await;
                Ok(me)
            }
        })
        .build()
        .unwrap();
    let mut session = Session::new(router);
    let batch = r#"[
        {"jsonrpc":"2.0","method":"meet","params":[0],"id":"a"},
        {"jsonrpc":"2.0","method":"ping","id":1},
        {"jsonrpc":"2.0","method":"update"},
        {"jsonrpc":"2.0","method":"meet","params":[1],"id":"b"},
        {"foo":"boo"},
        {"jsonrpc":"2.0","method":"nope","id":2}
    ]"#;
    // Awaiting the two calls one after the other would never finish: the budget
    // turns that into a failure instead of a hang.
    let resp = poll_within(100, session.handle_async(batch.as_bytes()))
        .expect("the batch's async calls were not polled concurrently")
        .map(text)
        .unwrap();
    let v = json_of(&resp);
    let ids: Vec<&Value> = v.as_array().unwrap().iter().map(|r| &r["id"]).collect();
    // Sync answers first in input order, then the async ones in input order.
    assert_eq!(
        ids,
        [&json!(1), &Value::Null, &json!(2), &json!("a"), &json!("b")],
        "{resp}"
    );
    assert_eq!(v[0]["result"], "pong");
    assert_eq!(v[1]["error"]["code"], -32600);
    assert_eq!(v[2]["error"]["code"], -32601);
    assert_eq!(v[3]["result"], 0);
    assert_eq!(v[4]["result"], 1);
    assert!(
        resp.ends_with(
            r#"{"jsonrpc":"2.0","result":0,"id":"a"},{"jsonrpc":"2.0","result":1,"id":"b"}]"#
        ),
        "{resp}"
    );
}

#[test]
fn panicking_futures_are_internal_errors_and_the_session_survives() {
    let router = sync_methods(Router::builder())
        .method_async("boom_later", |_| async {
            YieldOnce(false).await;
            panic!("future panics when polled (expected by the test)");
            #[allow(unreachable_code)]
            Ok(())
        })
        .method_async(
            "boom_now",
            |_| -> std::future::Ready<Result<(), RpcError>> {
                panic!("handler panics before making its future (expected by the test)")
            },
        )
        .method_async("fine", |_| async {
            YieldOnce(false).await;
            Ok("fine")
        })
        .build()
        .unwrap();
    let mut session = Session::new(router);
    let call = |m: &str| format!(r#"{{"jsonrpc":"2.0","method":"{m}","id":3}}"#);
    let want = handle(&mut session, &call("boom_sync")).unwrap();
    assert!(
        want.contains(r#""code":-32603"#)
            && want.contains(r#""data":{"reason":"the handler panicked"}"#),
        "{want}"
    );
    for m in ["boom_later", "boom_now"] {
        assert_eq!(
            handle_async(&mut session, &call(m)),
            Some(want.clone()),
            "{m}"
        );
        assert_eq!(handle(&mut session, &call(m)), Some(want.clone()), "{m}");
        assert_eq!(
            handle_async(&mut session, &call("fine")).as_deref(),
            Some(r#"{"jsonrpc":"2.0","result":"fine","id":3}"#)
        );
    }
    // In a batch, next to a call that completes, and as notifications.
    let batch = r#"[{"jsonrpc":"2.0","method":"boom_later","id":1},{"jsonrpc":"2.0","method":"fine","id":2},{"jsonrpc":"2.0","method":"boom_now","id":3},{"jsonrpc":"2.0","method":"boom_later"}]"#;
    let v = json_of(&handle_async(&mut session, batch).unwrap());
    // `boom_now` fails before any future exists: answered with the sync calls, first.
    assert_eq!(
        v,
        json!([
            {"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error","data":{"reason":"the handler panicked"}},"id":3},
            {"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error","data":{"reason":"the handler panicked"}},"id":1},
            {"jsonrpc":"2.0","result":"fine","id":2},
        ])
    );
    assert_eq!(
        handle_async(&mut session, &call("ping")).as_deref(),
        Some(r#"{"jsonrpc":"2.0","result":"pong","id":3}"#)
    );
}

/// A future completed by another thread after `delay`: it needs a real wake-up.
struct WokenLater {
    shared: Arc<Mutex<(bool, Option<Waker>)>>,
    delay: Option<Duration>,
}

impl Future for WokenLater {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let mut s = self.shared.lock().unwrap();
        if s.0 {
            return Poll::Ready(());
        }
        s.1 = Some(cx.waker().clone());
        drop(s);
        if let Some(delay) = self.delay.take() {
            let shared = self.shared.clone();
            std::thread::spawn(move || {
                std::thread::sleep(delay);
                let mut s = shared.lock().unwrap();
                s.0 = true;
                if let Some(w) = s.1.take() {
                    w.wake();
                }
            });
        }
        Poll::Pending
    }
}

#[test]
fn sync_handle_blocks_on_async_methods() {
    let router = sync_methods(Router::builder())
        .typed_async("later", |(ms,): (u64,)| async move {
            WokenLater {
                shared: Arc::default(),
                delay: Some(Duration::from_millis(ms)),
            }
            .await;
            Ok(ms)
        })
        .build()
        .unwrap();
    // On a thread of its own, so that a lost wake-up fails the test instead of hanging it.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut session = Session::new(router);
        let one = handle(
            &mut session,
            r#"{"jsonrpc":"2.0","method":"later","params":[20],"id":1}"#,
        );
        let batch = handle(
            &mut session,
            r#"[{"jsonrpc":"2.0","method":"later","params":[10],"id":1},{"jsonrpc":"2.0","method":"ping","id":2},{"jsonrpc":"2.0","method":"later","params":[5]}]"#,
        );
        tx.send((one, batch)).unwrap();
    });
    let (one, batch) = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("handle did not return");
    assert_eq!(
        one.as_deref(),
        Some(r#"{"jsonrpc":"2.0","result":20,"id":1}"#)
    );
    // `handle` answers a batch in input order, async calls included.
    assert_eq!(
        batch.as_deref(),
        Some(r#"[{"jsonrpc":"2.0","result":10,"id":1},{"jsonrpc":"2.0","result":"pong","id":2}]"#)
    );
}

#[test]
fn dropping_handle_async_midway_leaves_the_session_usable() {
    struct Flag(Arc<AtomicUsize>);
    impl Drop for Flag {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
    let dropped = Arc::new(AtomicUsize::new(0));
    let d = dropped.clone();
    let router = sync_methods(Router::builder())
        .method_async("forever", move |_| {
            let flag = Flag(d.clone());
            async move {
                std::future::pending::<()>().await;
                drop(flag);
                Ok(())
            }
        })
        .build()
        .unwrap();
    let mut session = Session::new(router);
    let input = br#"[{"jsonrpc":"2.0","method":"ping","id":1},{"jsonrpc":"2.0","method":"forever","id":2}]"#;
    assert!(poll_within(5, session.handle_async(input)).is_none());
    assert_eq!(
        dropped.load(Ordering::SeqCst),
        1,
        "the pending future was not dropped"
    );
    assert_eq!(
        handle_async(
            &mut session,
            r#"{"jsonrpc":"2.0","method":"subtract","params":[3,1],"id":4}"#
        )
        .as_deref(),
        Some(r#"{"jsonrpc":"2.0","result":2,"id":4}"#)
    );
}

/// Messages without async methods, of every shape.
fn sync_messages() -> Vec<String> {
    let call = r#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#;
    let mut m: Vec<String> = [
        call,
        r#"{"jsonrpc":"2.0","method":"subtract","params":{"minuend":42,"subtrahend":23},"id":3}"#,
        r#"{"jsonrpc":"2.0","method":"su\u0062tract","params":[1,2],"id":"\u0041"}"#,
        r#"{"jsonrpc":"2.0","method":"subtract","params":["x"],"id":1}"#,
        r#"{"jsonrpc":"2.0","method":"echo","params":{"a":[1,2,{"b":null}]},"id":-0}"#,
        r#"{"jsonrpc":"2.0","method":"app_error","id":7}"#,
        r#"{"jsonrpc":"2.0","method":"boom_sync","id":8}"#,
        r#"{"jsonrpc":"2.0","method":"update","params":[1,2,3,4,5]}"#,
        r#"{"jsonrpc":"2.0","method":"nope"}"#,
        r#"{"jsonrpc":"2.0","method":"nope","id":1}"#,
        r#"{"jsonrpc":"2.0","method":"rpc.discover","id":1}"#,
        r#"[{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"1"},{"jsonrpc":"2.0","method":"notify_hello","params":[7]},{"foo":"boo"},{"jsonrpc":"2.0","method":"foo.get","id":"5"}]"#,
        r#"[{"jsonrpc":"2.0","method":"update"},{"jsonrpc":"2.0","method":"update"}]"#,
        r#"[{"jsonrpc":"2.0","method":"ping","id":1},{"jsonrpc":"2.0","result":19,"id":1},{"jsonrpc":"2.0","method":"boom_sync","id":2}]"#,
        r#"{"jsonrpc":"2.0","result":19,"id":1}"#,
        r#"{"jsonrpc":"2.0","method":"foobar, "params":"bar","baz]"#,
        r#"{"jsonrpc":"2.0","method":1,"params":"bar"}"#,
        r#"{"jsonrpc":"2.0","method":"a","method":"b","id":1}"#,
        r#"{"jsonrpc":"1.0","method":"x","id":1}"#,
        "[]",
        "[1]",
        "[1,2,3]",
        "",
        "\u{feff}{}",
    ]
    .map(String::from)
    .to_vec();
    m.push(format!("[{}]", vec![call; 20].join(",")));
    m.push(format!("{}{}", "[".repeat(200), "]".repeat(200)));
    m
}

fn router_with_both() -> Arc<Router> {
    sync_methods(Router::builder())
        .method_async("later", |_| async {
            YieldOnce(false).await;
            Ok(1)
        })
        .build()
        .unwrap()
}

#[test]
fn handle_async_answers_sync_messages_exactly_like_handle() {
    let router = router_with_both();
    let mut sync = Session::new(router.clone());
    let mut asynchronous = Session::new(router);
    for m in sync_messages() {
        let want = handle(&mut sync, &m);
        // Ready at the first poll: no async method is involved.
        let got = poll_within(1, asynchronous.handle_async(m.as_bytes()))
            .expect("ready at once")
            .map(text);
        assert_eq!(got, want, "{m}");
    }
}

#[test]
fn handle_async_allocates_no_more_than_handle_for_sync_messages() {
    let router = router_with_both();
    let mut sync = Session::new(router.clone());
    let mut asynchronous = Session::new(router);
    // `boom_sync` is left out: a panic allocates its payload (and maybe a backtrace).
    let messages: Vec<String> = sync_messages()
        .into_iter()
        .filter(|m| !m.contains("boom_sync"))
        .collect();
    for m in &messages {
        // Warm-up.
        sync.handle(m.as_bytes());
        poll_within(1, asynchronous.handle_async(m.as_bytes())).unwrap();
    }
    let mut zero = 0;
    for m in &messages {
        let (_, want) = allocations(|| sync.handle(m.as_bytes()).is_some());
        let (done, n) =
            allocations(|| poll_within(1, asynchronous.handle_async(m.as_bytes())).is_some());
        assert!(done);
        // The same work: only the error paths of serde (a -32602 detail) allocate.
        assert_eq!(n, want, "{m}");
        zero += usize::from(n == 0);
    }
    assert!(
        zero + 2 >= messages.len(),
        "{zero} of {} allocate nothing",
        messages.len()
    );
}

#[test]
fn handle_async_future_is_send() {
    fn assert_send<T: Send>(_: &T) {}
    let mut session = Session::new(router_with_both());
    let fut = session.handle_async(b"{}");
    assert_send(&fut);
}

#[test]
fn discover_lists_async_methods() {
    let router = Router::builder()
        .method_async("a", |_| async { Ok(()) })
        .typed_async("b", |(): ()| async { Ok(()) })
        .notification("n", |_| {})
        .schema("b", Some("[]"), Some(r#"{"name":"r","schema":{}}"#))
        .build()
        .unwrap();
    let doc = json_of(std::str::from_utf8(router.discover_document()).unwrap());
    let methods = doc["methods"].as_array().unwrap();
    let names: Vec<&str> = methods
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b", "n"]);
    assert_eq!(methods[0].get("x-notification"), None);
    assert_eq!(methods[1]["result"]["name"], "r");
    assert_eq!(methods[2]["x-notification"], true);
    let mut session = Session::new(router);
    let v = json_of(
        &handle_async(
            &mut session,
            r#"{"jsonrpc":"2.0","method":"rpc.discover","id":1}"#,
        )
        .unwrap(),
    );
    assert_eq!(v["result"], doc);
}
