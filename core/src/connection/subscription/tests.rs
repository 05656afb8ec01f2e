use std::sync::Mutex as StdMutex;
use std::sync::atomic::Ordering;

use super::*;
use crate::connection::{ConnectionConfig, Outgoing, block_on};
use crate::{Router, Session};

#[test]
fn ids_are_distinct_and_shaped_like_geths() {
    let mut seen = std::collections::HashSet::new();
    // Under Miri (which takes minutes for 10 000 ids) a sample.
    let count = if cfg!(miri) { 50 } else { 10_000 };
    for n in 0..count {
        let id = fresh_id(7, n);
        assert_eq!(id.len(), 34);
        assert!(id.starts_with("0x"));
        assert!(
            id[2..]
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        );
        assert!(seen.insert(id));
    }
    // Another connection's counter 0 is another id.
    assert!(seen.insert(fresh_id(8, 0)));
}

#[test]
fn contains_finds_needles() {
    assert!(contains(b"abc\"0x1\"def", b"\"0x1\""));
    assert!(!contains(b"\"0x", b"\"0x1\""));
    assert!(!contains(b"", b"x"));
}

/// The sinks the handler got, kept by the test (as a producer task would).
type Kept = Arc<StdMutex<Vec<SubscriptionSink>>>;

fn router(kept: &Kept) -> Arc<Router> {
    let kept = Arc::clone(kept);
    Router::builder()
        .subscription("sub", "unsub", "note", move |call, sink| {
            let kind: (String,) = call
                .params()
                .ok_or(RpcError::invalid_params("a kind"))?
                .parse()?;
            if kind.0 != "ok" {
                return Err(RpcError::invalid_params("unknown kind"));
            }
            lock(&kept).push(sink);
            Ok(())
        })
        .subscription("other_sub", "other_unsub", "other_note", |_, sink| {
            drop(sink);
            Ok(())
        })
        .build()
        .unwrap()
}

struct Fixture {
    kept: Kept,
    conn: Connection,
    outgoing: Outgoing,
    session: Session,
}

fn fixture(config: &ConnectionConfig) -> Fixture {
    let kept = Kept::default();
    let (conn, outgoing) = Connection::new(config);
    let mut session = Session::new(router(&kept));
    session.attach(conn.clone());
    Fixture {
        kept,
        conn,
        outgoing,
        session,
    }
}

impl Fixture {
    /// Handles `msg` and queues its answer as a driver does.
    fn call(&mut self, msg: &str) -> Option<String> {
        let resp = self.session.handle(msg.as_bytes())?.to_vec();
        block_on(self.conn.send(resp.clone())).unwrap();
        Some(String::from_utf8(resp).unwrap())
    }

    fn subscribe(&mut self, id: u32) -> String {
        let resp = self
            .call(&format!(
                r#"{{"jsonrpc":"2.0","method":"sub","params":["ok"],"id":{id}}}"#
            ))
            .unwrap();
        let v: serde_json::Value = serde_json::from_str(&resp).unwrap();
        assert_eq!(self.outgoing.try_recv().unwrap(), resp.as_bytes());
        v["result"].as_str().unwrap().to_owned()
    }

    fn sink(&self, i: usize) -> std::sync::MutexGuard<'_, Vec<SubscriptionSink>> {
        let g = lock(&self.kept);
        assert!(g.len() > i);
        g
    }

    fn drain(&self) -> Vec<String> {
        std::iter::from_fn(|| self.outgoing.try_recv())
            .map(|m| String::from_utf8(m).unwrap())
            .collect()
    }
}

fn note(id: &str, result: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"note","params":{{"subscription":"{id}","result":{result}}}}}"#
    )
}

#[test]
fn notifications_carry_the_id_and_stop_after_unsubscribe() {
    let mut f = fixture(&ConnectionConfig::new());
    let id = f.subscribe(1);
    assert_eq!(f.conn.subscriptions(), 1);
    {
        let sinks = f.sink(0);
        assert_eq!(sinks[0].id(), id);
        sinks[0].send(&serde_json::json!({"n": 1})).unwrap();
        sinks[0].send_raw(b" [1, 2] ").unwrap();
        assert_eq!(
            sinks[0].send_raw(b"{oops"),
            Err(SinkError::InvalidJson("not exactly one JSON value".into()))
        );
    }
    assert_eq!(f.drain(), [note(&id, r#"{"n":1}"#), note(&id, "[1, 2]")]);
    let resp = f
        .call(&format!(
            r#"{{"jsonrpc":"2.0","method":"unsub","params":["{id}"],"id":2}}"#
        ))
        .unwrap();
    assert_eq!(resp, r#"{"jsonrpc":"2.0","result":true,"id":2}"#);
    assert_eq!(f.drain(), [resp]);
    let sinks = f.sink(0);
    assert_eq!(
        sinks[0].send(&3),
        Err(SinkError::Closed(CloseReason::Unsubscribed))
    );
    assert!(sinks[0].is_closed());
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    assert!(std::pin::pin!(sinks[0].closed()).poll(&mut cx).is_ready());
    drop(sinks);
    assert!(f.outgoing.try_recv().is_none());
    assert_eq!(f.conn.subscriptions(), 0);
    // A second unsubscribe: geth's error.
    let resp = f
        .call(&format!(
            r#"{{"jsonrpc":"2.0","method":"unsub","params":["{id}"],"id":3}}"#
        ))
        .unwrap();
    assert_eq!(
        resp,
        format!(
            r#"{{"jsonrpc":"2.0","error":{{"code":-32000,"message":"Subscription not found","data":{{"subscription":"{id}"}}}},"id":3}}"#
        )
    );
}

use std::future::Future;

#[test]
fn what_is_sent_before_the_answer_is_queued_follows_it() {
    let kept = Kept::default();
    let k = Arc::clone(&kept);
    let router = Router::builder()
        .subscription("sub", "unsub", "note", move |_, sink| {
            sink.send(&"early").unwrap();
            lock(&k).push(sink);
            Ok(())
        })
        .method("ping", |_, out| out.str("pong"))
        .build()
        .unwrap();
    let (conn, outgoing) = Connection::new(&ConnectionConfig::new());
    let mut session = Session::new(router);
    session.attach(conn.clone());
    let resp = session
        .handle(br#"{"jsonrpc":"2.0","method":"sub","id":1}"#)
        .unwrap()
        .to_vec();
    // Held: nothing is queued before the answer.
    assert!(outgoing.try_recv().is_none());
    lock(&kept)[0].send(&"second").unwrap();
    assert_eq!(lock(&kept)[0].waiting(), 2);
    // Another response queued first does not release them.
    let pong = session
        .handle(br#"{"jsonrpc":"2.0","method":"ping","id":2}"#)
        .unwrap()
        .to_vec();
    block_on(conn.send(pong.clone())).unwrap();
    assert_eq!(outgoing.try_recv().unwrap(), pong);
    assert!(outgoing.try_recv().is_none());
    block_on(conn.send(resp.clone())).unwrap();
    let id = lock(&kept)[0].id().to_owned();
    let got: Vec<_> = std::iter::from_fn(|| outgoing.try_recv()).collect();
    assert_eq!(
        got,
        [
            resp,
            note(&id, r#""early""#).into_bytes(),
            note(&id, r#""second""#).into_bytes()
        ]
    );
    // Taken by the driver: no longer waiting.
    assert_eq!(lock(&kept)[0].waiting(), 0);
}

#[test]
fn a_client_that_never_reads_closes_the_subscription_with_a_notice() {
    let mut config = ConnectionConfig::new();
    config.subscription_capacity(8);
    let mut f = fixture(&config);
    let id = f.subscribe(1);
    let sent = {
        let sinks = f.sink(0);
        let mut sent = 0;
        // The client never reads: the sends stop at the bound, not before.
        let err = loop {
            match sinks[0].send(&sent) {
                Ok(()) => sent += 1,
                Err(e) => break e,
            }
            assert!(sent <= 8, "more than the capacity was queued");
        };
        assert_eq!(err, SinkError::Overflow);
        assert_eq!(
            sinks[0].send(&0),
            Err(SinkError::Closed(CloseReason::Overflow))
        );
        sent
    };
    assert_eq!(sent, 8);
    assert_eq!(f.conn.subscriptions(), 0);
    assert_eq!(f.conn.subscriptions_overflowed(), 1);
    // What the queue holds: the 8 notifications, then the notice (bounded).
    assert_eq!(f.outgoing.len(), 9);
    let got = f.drain();
    for (n, m) in got[..8].iter().enumerate() {
        assert_eq!(*m, note(&id, &n.to_string()));
    }
    assert_eq!(
        got[8],
        format!(
            r#"{{"jsonrpc":"2.0","method":"note","params":{{"subscription":"{id}","error":{{"code":-32003,"message":"Subscription closed: the client does not read","data":{{"reason":"buffer full","capacity":8}}}}}}}}"#
        )
    );
    // Its unsubscribe then finds nothing.
    let resp = f
        .call(&format!(
            r#"{{"jsonrpc":"2.0","method":"unsub","params":["{id}"],"id":2}}"#
        ))
        .unwrap();
    assert!(resp.contains("Subscription not found"));
}

#[test]
fn a_full_connection_queue_closes_the_subscription_too() {
    let mut config = ConnectionConfig::new();
    config.queue_capacity(4);
    let mut f = fixture(&config);
    let id = f.subscribe(1);
    let sinks = f.sink(0);
    for n in 0..4 {
        sinks[0].send(&n).unwrap();
    }
    assert_eq!(sinks[0].send(&4), Err(SinkError::Overflow));
    // No room for the notice: the client only stops hearing.
    assert_eq!(f.outgoing.len(), 4);
    drop(sinks);
    assert_eq!(f.drain().last().unwrap(), &note(&id, "3"));
}

#[test]
#[cfg_attr(target_os = "wasi", ignore = "spawns threads: wasm32-wasip1 has none")]
fn closing_the_connection_closes_every_sink() {
    let mut f = fixture(&ConnectionConfig::new());
    f.subscribe(1);
    f.subscribe(2);
    assert_eq!(f.conn.subscriptions(), 2);
    let waiter = {
        let sinks = f.sink(1);
        sinks[1].closed()
    };
    let t = std::thread::spawn(move || block_on(waiter));
    f.conn.close();
    t.join().unwrap();
    assert_eq!(f.conn.subscriptions(), 0);
    for s in lock(&f.kept).iter() {
        assert_eq!(
            s.send(&1),
            Err(SinkError::Closed(CloseReason::Disconnected))
        );
    }
    // No new ones on a closed connection.
    let resp = f
        .session
        .handle(br#"{"jsonrpc":"2.0","method":"sub","params":["ok"],"id":3}"#)
        .unwrap();
    assert!(resp.starts_with(br#"{"jsonrpc":"2.0","error":{"code":-32603"#));
}

#[test]
fn dropping_the_sink_ends_the_subscription_and_frees_its_entry() {
    let mut f = fixture(&ConnectionConfig::new());
    let id = f.subscribe(1);
    let sink = lock(&f.kept).pop().unwrap();
    let weak = Arc::downgrade(&sink.shared);
    drop(sink);
    assert_eq!(f.conn.subscriptions(), 0);
    assert_eq!(weak.strong_count(), 0, "the table kept the subscription");
    let resp = f
        .call(&format!(
            r#"{{"jsonrpc":"2.0","method":"unsub","params":["{id}"],"id":2}}"#
        ))
        .unwrap();
    assert!(resp.contains("Subscription not found"));
}

#[test]
fn one_registrations_unsubscribe_does_not_close_anothers() {
    let mut f = fixture(&ConnectionConfig::new());
    let id = f.subscribe(1);
    let resp = f
        .call(&format!(
            r#"{{"jsonrpc":"2.0","method":"other_unsub","params":["{id}"],"id":2}}"#
        ))
        .unwrap();
    assert!(resp.contains("Subscription not found"));
    assert_eq!(f.conn.subscriptions(), 1);
}

#[test]
fn bad_params_and_handler_errors_open_nothing() {
    let mut f = fixture(&ConnectionConfig::new());
    let resp = f
        .call(r#"{"jsonrpc":"2.0","method":"sub","params":["nope"],"id":1}"#)
        .unwrap();
    assert!(resp.starts_with(r#"{"jsonrpc":"2.0","error":{"code":-32602"#));
    let resp = f
        .call(r#"{"jsonrpc":"2.0","method":"unsub","params":[7],"id":2}"#)
        .unwrap();
    assert!(resp.starts_with(r#"{"jsonrpc":"2.0","error":{"code":-32602"#));
    let resp = f
        .call(r#"{"jsonrpc":"2.0","method":"unsub","id":3}"#)
        .unwrap();
    assert!(resp.starts_with(r#"{"jsonrpc":"2.0","error":{"code":-32602"#));
    // A notification to the subscribe method subscribes nothing.
    assert!(
        f.session
            .handle(br#"{"jsonrpc":"2.0","method":"sub","params":["ok"]}"#)
            .is_none()
    );
    assert_eq!(f.conn.subscriptions(), 0);
    assert!(lock(&f.kept).is_empty());
}

#[test]
fn the_number_of_subscriptions_is_bounded() {
    let mut config = ConnectionConfig::new();
    config.max_subscriptions(3);
    let mut f = fixture(&config);
    for i in 0..3 {
        f.subscribe(i);
    }
    let resp = f
        .call(r#"{"jsonrpc":"2.0","method":"sub","params":["ok"],"id":9}"#)
        .unwrap();
    assert_eq!(
        resp,
        r#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Too many subscriptions","data":{"max":3,"reason":"the connection has the most subscriptions allowed"}},"id":9}"#
    );
}

#[test]
fn without_a_connection_that_pushes_subscribe_is_not_supported() {
    let kept = Kept::default();
    let mut session = Session::new(router(&kept));
    session.attach(Connection::answer_only());
    for msg in [
        &br#"{"jsonrpc":"2.0","method":"sub","params":["ok"],"id":1}"#[..],
        br#"{"jsonrpc":"2.0","method":"unsub","params":["0x1"],"id":1}"#,
    ] {
        assert_eq!(
            session.handle(msg).unwrap(),
            br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Notifications not supported","data":{"reason":"this transport only answers; subscribe over a connection that can push (WebSocket, IPC, stdio)"}},"id":1}"#
        );
    }
    assert!(lock(&kept).is_empty());
}

#[test]
fn a_batch_answer_releases_its_subscriptions() {
    let mut f = fixture(&ConnectionConfig::new());
    let resp = f
        .call(r#"[{"jsonrpc":"2.0","method":"sub","params":["ok"],"id":1},{"jsonrpc":"2.0","method":"sub","params":["ok"],"id":2}]"#)
        .unwrap();
    assert_eq!(f.drain(), [resp]);
    let sinks = f.sink(1);
    sinks[0].send(&1).unwrap();
    sinks[1].send(&2).unwrap();
    let (a, b) = (sinks[0].id().to_owned(), sinks[1].id().to_owned());
    drop(sinks);
    assert_eq!(f.drain(), [note(&a, "1"), note(&b, "2")]);
}

/// A waker that counts its wakes.
#[derive(Default)]
struct Flag(std::sync::atomic::AtomicUsize);

impl std::task::Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

impl Flag {
    fn woken(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// Polls `fut` once with `flag`'s waker.
fn poll_once<F: Future + ?Sized>(
    fut: std::pin::Pin<&mut F>,
    flag: &Arc<Flag>,
) -> std::task::Poll<F::Output> {
    let waker = std::task::Waker::from(Arc::clone(flag));
    fut.poll(&mut std::task::Context::from_waker(&waker))
}

#[test]
fn send_async_waits_for_room_and_is_woken_when_the_driver_takes_one() {
    let mut config = ConnectionConfig::new();
    config.subscription_capacity(2);
    let mut f = fixture(&config);
    let id = f.subscribe(1);
    let sink = lock(&f.kept).pop().unwrap();
    sink.send(&0).unwrap();
    block_on(sink.send_async(&1)).unwrap();
    // Full: the sync send would close it; the async one waits.
    let flag = Arc::new(Flag::default());
    let mut fut = std::pin::pin!(sink.send_async(&2));
    assert!(poll_once(fut.as_mut(), &flag).is_pending());
    assert!(poll_once(fut.as_mut(), &flag).is_pending());
    assert_eq!(flag.woken(), 0);
    assert_eq!(sink.waiting(), 2);
    assert_eq!(f.outgoing.try_recv().unwrap(), note(&id, "0").as_bytes());
    assert_eq!(flag.woken(), 1, "taking a notification wakes the waiter");
    assert_eq!(
        poll_once(fut.as_mut(), &flag),
        std::task::Poll::Ready(Ok(()))
    );
    assert_eq!(f.drain(), [note(&id, "1"), note(&id, "2")]);
    assert!(!sink.is_closed());
    assert_eq!(f.conn.subscriptions_overflowed(), 0);
}

#[test]
fn send_async_waits_for_room_in_a_full_outgoing_queue() {
    let mut config = ConnectionConfig::new();
    config.queue_capacity(2);
    let mut f = fixture(&config);
    let id = f.subscribe(1);
    let sink = lock(&f.kept).pop().unwrap();
    f.conn.peer().try_notify("other", &[1]).unwrap();
    sink.send(&0).unwrap();
    let flag = Arc::new(Flag::default());
    let mut fut = std::pin::pin!(sink.send_async(&1));
    assert!(poll_once(fut.as_mut(), &flag).is_pending());
    // Room made by another message is room too.
    assert!(f.outgoing.try_recv().is_some());
    assert!(flag.woken() >= 1);
    assert_eq!(
        poll_once(fut.as_mut(), &flag),
        std::task::Poll::Ready(Ok(()))
    );
    assert_eq!(f.drain(), [note(&id, "0"), note(&id, "1")]);
}

#[test]
fn send_async_waiters_finish_closed_on_unsubscribe_and_disconnect() {
    let mut config = ConnectionConfig::new();
    config.subscription_capacity(1);
    let mut f = fixture(&config);
    let a = f.subscribe(1);
    f.subscribe(2);
    let (sa, sb) = {
        let mut k = lock(&f.kept);
        let sb = k.pop().unwrap();
        (k.pop().unwrap(), sb)
    };
    sa.send(&0).unwrap();
    sb.send(&0).unwrap();
    let (fa, fb) = (Arc::new(Flag::default()), Arc::new(Flag::default()));
    let mut wa = std::pin::pin!(sa.send_async(&1));
    let mut wb = std::pin::pin!(sb.send_async(&1));
    assert!(poll_once(wa.as_mut(), &fa).is_pending());
    assert!(poll_once(wb.as_mut(), &fb).is_pending());
    let resp = f
        .call(&format!(
            r#"{{"jsonrpc":"2.0","method":"unsub","params":["{a}"],"id":3}}"#
        ))
        .unwrap();
    assert!(resp.contains("true"));
    assert_eq!(fa.woken(), 1);
    assert_eq!(
        poll_once(wa.as_mut(), &fa),
        std::task::Poll::Ready(Err(SinkError::Closed(CloseReason::Unsubscribed)))
    );
    assert_eq!(fb.woken(), 0);
    f.conn.close();
    assert_eq!(fb.woken(), 1);
    assert_eq!(
        poll_once(wb.as_mut(), &fb),
        std::task::Poll::Ready(Err(SinkError::Closed(CloseReason::Disconnected)))
    );
    // Nothing left in line.
    assert_eq!(sa.shared.room.len(), 0);
    assert_eq!(sb.shared.room.len(), 0);
}

#[test]
fn send_async_waiting_on_the_queue_finishes_when_the_driver_goes() {
    let mut config = ConnectionConfig::new();
    config.queue_capacity(1);
    let Fixture {
        kept,
        conn,
        outgoing,
        mut session,
    } = fixture(&config);
    let resp = session
        .handle(br#"{"jsonrpc":"2.0","method":"sub","params":["ok"],"id":1}"#)
        .unwrap()
        .to_vec();
    block_on(conn.send(resp)).unwrap();
    let sink = lock(&kept).pop().unwrap();
    let flag = Arc::new(Flag::default());
    let mut fut = std::pin::pin!(sink.send_async(&1));
    // The queue holds the answer: no room.
    assert!(poll_once(fut.as_mut(), &flag).is_pending());
    drop(outgoing);
    assert!(flag.woken() >= 1);
    assert_eq!(
        poll_once(fut.as_mut(), &flag),
        std::task::Poll::Ready(Err(SinkError::Closed(CloseReason::Disconnected)))
    );
    // A sink at its capacity when the driver goes is not left waiting either.
    let mut config = ConnectionConfig::new();
    config.subscription_capacity(1);
    let Fixture {
        kept,
        conn,
        outgoing,
        mut session,
    } = fixture(&config);
    let resp = session
        .handle(br#"{"jsonrpc":"2.0","method":"sub","params":["ok"],"id":1}"#)
        .unwrap()
        .to_vec();
    block_on(conn.send(resp)).unwrap();
    let sink = lock(&kept).pop().unwrap();
    sink.send(&0).unwrap();
    let mut fut = std::pin::pin!(sink.send_async(&1));
    let flag = Arc::new(Flag::default());
    assert!(poll_once(fut.as_mut(), &flag).is_pending());
    drop(outgoing);
    assert_eq!(
        poll_once(fut.as_mut(), &flag),
        std::task::Poll::Ready(Err(SinkError::Closed(CloseReason::Disconnected)))
    );
}

#[test]
fn send_async_waiters_on_one_sink_go_in_the_order_they_came() {
    let mut config = ConnectionConfig::new();
    config.subscription_capacity(1);
    let mut f = fixture(&config);
    let id = f.subscribe(1);
    let sink = lock(&f.kept).pop().unwrap();
    sink.send(&0).unwrap();
    let flags: Vec<_> = (0..5).map(|_| Arc::new(Flag::default())).collect();
    let mut futs: Vec<_> = (1..=5)
        .map(|n| Some(Box::pin(sink.send_async(&n))))
        .collect();
    for (fut, flag) in futs.iter_mut().zip(&flags) {
        assert!(poll_once(fut.as_mut().unwrap().as_mut(), flag).is_pending());
    }
    let mut got = Vec::new();
    for n in 1..=5 {
        got.extend(f.drain());
        // Polled last first: only the first in line may take the room.
        let mut done = 0;
        for (slot, flag) in futs.iter_mut().zip(&flags).rev() {
            if let Some(fut) = slot
                && let std::task::Poll::Ready(r) = poll_once(fut.as_mut(), flag)
            {
                r.unwrap();
                *slot = None;
                done += 1;
            }
        }
        assert_eq!(done, 1, "one at a time (capacity 1), round {n}");
        assert!(futs[n - 1].is_none(), "the first in line went, round {n}");
        assert_eq!(sink.waiting(), 1);
    }
    got.extend(f.drain());
    let want: Vec<_> = (0..=5).map(|n| note(&id, &n.to_string())).collect();
    assert_eq!(got, want);
}

#[test]
#[cfg_attr(target_os = "wasi", ignore = "spawns threads: wasm32-wasip1 has none")]
fn send_async_loses_no_wakeup_with_many_waiters() {
    const SUBS: usize = 6;
    const PER_SINK_THREADS: usize = 3;
    // Under Miri (every interleaving costs ~1000x), a few per thread still race.
    const EACH: usize = if cfg!(miri) { 10 } else { 500 };
    let mut config = ConnectionConfig::new();
    config.subscription_capacity(2).queue_capacity(3);
    let mut f = fixture(&config);
    let ids: Vec<String> = (0..SUBS).map(|i| f.subscribe(i as u32)).collect();
    let sinks: Vec<Arc<SubscriptionSink>> = lock(&f.kept).drain(..).map(Arc::new).collect();
    let mut producers = Vec::new();
    for sink in &sinks {
        for t in 0..PER_SINK_THREADS {
            let sink = Arc::clone(sink);
            producers.push(std::thread::spawn(move || {
                for n in 0..EACH {
                    block_on(sink.send_async(&[t, n])).unwrap();
                }
            }));
        }
    }
    // The driver: takes every notification (a lost wakeup would hang here).
    let mut last = HashMap::new();
    for _ in 0..SUBS * PER_SINK_THREADS * EACH {
        let m = block_on(f.outgoing.recv()).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&m).unwrap();
        let sub = v["params"]["subscription"].as_str().unwrap().to_owned();
        assert!(ids.contains(&sub));
        let (t, n) = (
            v["params"]["result"][0].as_u64().unwrap(),
            v["params"]["result"][1].as_i64().unwrap(),
        );
        // Each producer's notifications in its order.
        let prev = last.insert((sub, t), n).unwrap_or(-1);
        assert_eq!(n, prev + 1);
    }
    for p in producers {
        p.join().unwrap();
    }
    assert!(f.outgoing.try_recv().is_none());
    for s in &sinks {
        assert!(!s.is_closed());
        assert_eq!(s.waiting(), 0);
    }
    assert_eq!(f.conn.subscriptions_overflowed(), 0);
}

#[test]
fn held_notifications_wait_for_room_when_the_answer_fills_the_queue() {
    let mut config = ConnectionConfig::new();
    config.queue_capacity(2);
    let Fixture {
        kept,
        conn,
        outgoing,
        mut session,
    } = fixture(&config);
    let resp = session
        .handle(br#"{"jsonrpc":"2.0","method":"sub","params":["ok"],"id":1}"#)
        .unwrap()
        .to_vec();
    let sink = lock(&kept).pop().unwrap();
    // Held (the answer is not queued yet): more than the queue can take.
    for n in 0..4 {
        sink.send(&n).unwrap();
    }
    let id = sink.id().to_owned();
    let flag = Arc::new(Flag::default());
    let mut fut = std::pin::pin!(conn.send(resp.clone()));
    assert!(poll_once(fut.as_mut(), &flag).is_pending());
    // A send meanwhile goes behind what is held.
    sink.send(&4).unwrap();
    let mut got = Vec::new();
    while poll_once(fut.as_mut(), &flag).is_pending() {
        got.push(
            outgoing
                .try_recv()
                .expect("the queue is full while it waits"),
        );
    }
    got.extend(std::iter::from_fn(|| outgoing.try_recv()));
    let mut want = vec![resp];
    want.extend((0..5).map(|n| note(&id, &n.to_string()).into_bytes()));
    assert_eq!(got, want);
    assert!(!sink.is_closed());
    assert_eq!(conn.subscriptions_overflowed(), 0);
    assert_eq!(sink.waiting(), 0);
}
