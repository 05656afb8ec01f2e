//! Subscriptions: a subscribe call answered with a fresh id, then notifications
//! pushed to the client under that id until it unsubscribes or goes away
//! (Ethereum's `eth_subscribe` / `eth_subscription` / `eth_unsubscribe`, or any
//! protocol's names: nothing here is Ethereum's).
//!
//! The router registers the three names and the handler
//! ([`RouterBuilder::subscription`](crate::RouterBuilder::subscription)); the
//! handler gets a [`SubscriptionSink`] to keep (move it into a task or a
//! thread) and send to. Each send queues
//! `{"jsonrpc":"2.0","method":NOTIFICATION,"params":{"subscription":ID,"result":…}}`
//! on the connection, after the subscribe call's answer (see *Order* below).
//!
//! **Ids** are `"0x"` and 32 lowercase hex digits (128 bits), like geth's: keyed
//! hashes (std's randomly keyed SipHash) of the connection's number and a counter,
//! so they cannot be guessed from each other, and checked against the
//! connection's live ids, so two never collide on one connection.
//!
//! **Bounded.** A subscription has at most
//! [`ConnectionConfig::subscription_capacity`](super::ConnectionConfig::subscription_capacity)
//! notifications waiting to be written (counted until the driver takes them
//! from [`Outgoing`](super::Outgoing)). A send that finds them all waiting, or the
//! connection's outgoing queue full, is refused ([`SinkError::Overflow`]) and
//! **closes the subscription**: the client gets one last notification with an
//! `error` member instead of `result`,
//! `{"subscription":ID,"error":{"code":-32003,"message":"Subscription closed: the client does not read","data":{"reason":"buffer full","capacity":N}}}`,
//! if the outgoing queue has room for it (otherwise the client only stops
//! hearing; counted in [`Connection::subscriptions_overflowed`](super::Connection::subscriptions_overflowed)).
//! A client that never reads thus costs at most `capacity` notifications per
//! subscription, and at most
//! [`ConnectionConfig::max_subscriptions`](super::ConnectionConfig::max_subscriptions)
//! subscriptions per connection (more are refused -32000).
//! A producer that would rather go at the client's pace awaits
//! [`SubscriptionSink::send_async`] instead: it waits until the subscription
//! has room (and is woken when it closes), and never overflows it.
//!
//! **Closing.** The sink closes when the client unsubscribes, when the
//! connection closes, on overflow, or when [`SubscriptionSink::close`] is called
//! or the sink dropped; [`SubscriptionSink::send`] then fails with
//! [`SinkError::Closed`] saying why, and [`SubscriptionSink::closed`] (a future)
//! completes, for a producing task to stop on.
//!
//! **Order.** The subscribe call's answer comes before the subscription's first
//! notification: what the sink sends before that answer is queued waits in the
//! sink (within its capacity) and follows it. The answer is recognised when the
//! driver queues it with [`Connection::send`](super::Connection::send), the way
//! every driver writes the session's responses: the first message queued
//! that holds the id (a response: the client cannot know the id before).
//!
//! Without a connection that can push (plain HTTP, a connection made by
//! [`Connection::answer_only`](super::Connection::answer_only), or a session
//! attached to none), the subscribe call is answered -32601
//! `Notifications not supported`, geth's answer. The unsubscribe method takes
//! `[ID]` and answers `true` for a live subscription of this connection and
//! registration; for any other id it answers -32000 `Subscription not found`
//! with the id in `data` (geth's answer; jsonrpsee answers `false`).

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::task::Poll;

use serde::Serialize;

use super::{CancellationToken, Cancelled, Connection};
use crate::dispatch::handler::{RpcError, is_one_json_value};
use crate::write;
use room::Room;

/// The error code of the last notification of an overflowed subscription
/// (geth's "response too large" neighbour: an implementation-defined server
/// error).
///
/// ```
/// use std::sync::mpsc;
/// use switchboard::connection::{block_on, CloseReason, Connection, ConnectionConfig, OVERFLOW_CODE, SinkError};
/// use switchboard::{Router, Session};
/// let (tx, sinks) = mpsc::channel();
/// let router = Router::builder()
///     .subscription("subscribe", "unsubscribe", "note", move |_, sink| {
///         tx.send(sink).unwrap();
///         Ok(())
///     })
///     .build()
///     .unwrap();
/// // Room for one waiting notification per subscription.
/// let (conn, outgoing) = Connection::new(ConnectionConfig::new().subscription_capacity(1));
/// let mut session = Session::new(router);
/// session.attach(conn.clone());
/// let answer = session.handle(br#"{"jsonrpc":"2.0","method":"subscribe","id":1}"#).unwrap().to_vec();
/// block_on(conn.send(answer)).unwrap();
/// let sink = sinks.recv().unwrap();
/// sink.send(&1).unwrap();
/// // The client reads nothing: the second notification overflows the subscription.
/// assert_eq!(sink.send(&2), Err(SinkError::Overflow));
/// assert_eq!(sink.close_reason(), Some(CloseReason::Overflow));
/// outgoing.try_recv().unwrap(); // the subscribe answer
/// outgoing.try_recv().unwrap(); // notification 1
/// let last: serde_json::Value = serde_json::from_slice(&outgoing.try_recv().unwrap()).unwrap();
/// assert_eq!(last["params"]["error"]["code"], OVERFLOW_CODE);
/// assert_eq!(last["params"]["subscription"], sink.id());
/// ```
pub const OVERFLOW_CODE: i32 = -32003;

/// Locks `m`; every update under these locks is a few field writes, so a
/// poisoned lock is taken as it is.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Why a subscription is closed.
///
/// ```
/// use std::sync::mpsc;
/// use switchboard::connection::{block_on, CloseReason, Connection, ConnectionConfig};
/// use switchboard::{Router, Session};
/// let (tx, sinks) = mpsc::channel();
/// let router = Router::builder()
///     .subscription("subscribe", "unsubscribe", "note", move |_, sink| {
///         tx.send(sink).unwrap();
///         Ok(())
///     })
///     .build()
///     .unwrap();
/// let (conn, _outgoing) = Connection::new(&ConnectionConfig::new());
/// let mut session = Session::new(router);
/// session.attach(conn.clone());
/// for id in 1..=3 {
///     let subscribe = format!(r#"{{"jsonrpc":"2.0","method":"subscribe","id":{id}}}"#);
///     let answer = session.handle(subscribe.as_bytes()).unwrap().to_vec();
///     block_on(conn.send(answer)).unwrap();
/// }
/// let [a, b, c] = [(); 3].map(|()| sinks.recv().unwrap());
/// assert_eq!(a.close_reason(), None);
/// // The server ends one...
/// a.close();
/// assert_eq!(a.close_reason(), Some(CloseReason::Ended));
/// // ... the client unsubscribes from another...
/// let unsubscribe = format!(r#"{{"jsonrpc":"2.0","method":"unsubscribe","params":["{}"],"id":9}}"#, b.id());
/// assert_eq!(session.handle(unsubscribe.as_bytes()).unwrap(), br#"{"jsonrpc":"2.0","result":true,"id":9}"#);
/// assert_eq!(b.close_reason(), Some(CloseReason::Unsubscribed));
/// // ... and the connection goes, with the last one.
/// conn.close();
/// assert_eq!(c.close_reason(), Some(CloseReason::Disconnected));
/// block_on(c.closed()); // what a producer waits on to stop
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CloseReason {
    /// The client called the unsubscribe method.
    Unsubscribed,
    /// The connection closed (the client went away, or the server shut it).
    Disconnected,
    /// The client did not read: the subscription's buffer was full.
    Overflow,
    /// The server closed it ([`SubscriptionSink::close`], or the sink dropped).
    Ended,
}

impl CloseReason {
    fn from_u8(v: u8) -> Option<Self> {
        Some(match v {
            1 => CloseReason::Unsubscribed,
            2 => CloseReason::Disconnected,
            3 => CloseReason::Overflow,
            4 => CloseReason::Ended,
            _ => return None,
        })
    }

    fn as_u8(self) -> u8 {
        match self {
            CloseReason::Unsubscribed => 1,
            CloseReason::Disconnected => 2,
            CloseReason::Overflow => 3,
            CloseReason::Ended => 4,
        }
    }
}

impl fmt::Display for CloseReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CloseReason::Unsubscribed => "the client unsubscribed",
            CloseReason::Disconnected => "the connection is closed",
            CloseReason::Overflow => "the client did not read and the buffer was full",
            CloseReason::Ended => "the server closed it",
        })
    }
}

/// Why [`SubscriptionSink::send`] did not queue a notification.
///
/// ```
/// use std::sync::mpsc;
/// use switchboard::connection::{block_on, CloseReason, Connection, ConnectionConfig, SinkError};
/// use switchboard::{Router, Session};
/// let (tx, sinks) = mpsc::channel();
/// let router = Router::builder()
///     .subscription("subscribe", "unsubscribe", "note", move |_, sink| {
///         tx.send(sink).unwrap();
///         Ok(())
///     })
///     .build()
///     .unwrap();
/// let (conn, outgoing) = Connection::new(&ConnectionConfig::new());
/// let mut session = Session::new(router);
/// session.attach(conn.clone());
/// let answer = session.handle(br#"{"jsonrpc":"2.0","method":"subscribe","id":1}"#).unwrap().to_vec();
/// block_on(conn.send(answer)).unwrap();
/// let sink = sinks.recv().unwrap();
/// // Not one JSON value: refused, and the subscription stays open.
/// assert!(matches!(sink.send_raw(b"{\"unterminated\":"), Err(SinkError::InvalidJson(_))));
/// sink.send_raw(br#"{"block":1}"#).unwrap();
/// // Closed: nothing more is sent, and the error says why.
/// conn.close();
/// assert_eq!(sink.send(&2), Err(SinkError::Closed(CloseReason::Disconnected)));
/// outgoing.try_recv().unwrap(); // the subscribe answer
/// let note = outgoing.try_recv().unwrap();
/// assert!(note.ends_with(br#""result":{"block":1}}}"#));
/// assert!(outgoing.try_recv().is_none());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SinkError {
    /// The subscription is closed, for this reason: nothing more is sent.
    Closed(CloseReason),
    /// This notification found the buffer full: it is dropped and the
    /// subscription is now closed (the client was told, room permitting).
    Overflow,
    /// The value could not be serialized, or the raw bytes are not one JSON
    /// value; the subscription stays open.
    InvalidJson(String),
}

impl fmt::Display for SinkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SinkError::Closed(why) => write!(f, "the subscription is closed: {why}"),
            SinkError::Overflow => f.write_str(
                "the subscription's buffer is full (the client does not read): it is now closed",
            ),
            SinkError::InvalidJson(why) => write!(f, "the notification is not valid JSON: {why}"),
        }
    }
}

impl std::error::Error for SinkError {}

/// One message on the outgoing queue; a subscription's notification carries its
/// subscription, whose count of waiting notifications drops when the driver
/// takes it (or the message is dropped unsent).
pub(crate) struct Queued {
    bytes: Vec<u8>,
    sub: Option<Arc<Shared>>,
}

impl Queued {
    pub(crate) fn plain(bytes: Vec<u8>) -> Self {
        Queued { bytes, sub: None }
    }

    pub(crate) fn into_bytes(mut self) -> Vec<u8> {
        std::mem::take(&mut self.bytes)
    }
}

impl Drop for Queued {
    fn drop(&mut self) {
        if let Some(s) = &self.sub {
            s.waiting.fetch_sub(1, Ordering::SeqCst);
            // Room for one more: the first waiting `send_async` may go.
            s.room.wake_front();
        }
    }
}

/// One subscription's state, shared by its sink, the connection's table and its
/// queued notifications. INVARIANT: holds nothing of the connection (the table
/// lives in the connection: no reference cycle).
pub(crate) struct Shared {
    /// The id as a JSON string, quotes included: `"0x…"`.
    id_json: Box<str>,
    /// Which registration made it (its unsubscribe only closes its own).
    registration: usize,
    /// `{"jsonrpc":"2.0","method":…,"params":{"subscription":"0x…",`
    head: Box<[u8]>,
    capacity: usize,
    /// Notifications queued or held, not yet taken by the driver.
    waiting: AtomicUsize,
    /// 0 while open, else a [`CloseReason`].
    reason: AtomicU8,
    closed: CancellationToken,
    /// The `send_async` calls waiting for room, in order.
    room: Room,
    state: Mutex<State>,
}

struct State {
    /// Until the subscribe answer is queued, notifications wait here.
    held: Option<VecDeque<Vec<u8>>>,
}

impl Shared {
    fn reason(&self) -> Option<CloseReason> {
        CloseReason::from_u8(self.reason.load(Ordering::Acquire))
    }

    /// Marks it closed (the first reason wins); whether this call closed it.
    fn close(&self, why: CloseReason) -> bool {
        let first = self
            .reason
            .compare_exchange(0, why.as_u8(), Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        self.closed.cancel();
        // The waiting `send_async` calls all finish: closed.
        self.room.wake_all();
        first
    }

    fn id(&self) -> &str {
        &self.id_json[1..self.id_json.len() - 1]
    }
}

/// A connection's subscriptions.
pub(crate) struct Table {
    state: Mutex<TableState>,
    /// Subscriptions whose subscribe answer is not queued yet (read without the
    /// lock on every [`Connection::send`](super::Connection::send)).
    held: AtomicUsize,
    counter: AtomicU64,
    overflowed: AtomicU64,
    capacity: usize,
    max: usize,
}

#[derive(Default)]
struct TableState {
    /// Open subscriptions by id (without quotes).
    live: HashMap<Box<str>, Arc<Shared>>,
    /// Subscriptions whose answer is not queued yet.
    held: Vec<Arc<Shared>>,
    closed: bool,
}

impl Table {
    pub(crate) fn new(capacity: usize, max: usize) -> Self {
        Table {
            state: Mutex::default(),
            held: AtomicUsize::new(0),
            counter: AtomicU64::new(0),
            overflowed: AtomicU64::new(0),
            capacity: capacity.max(1),
            max: max.max(1),
        }
    }

    pub(crate) fn len(&self) -> usize {
        lock(&self.state).live.len()
    }

    pub(crate) fn overflowed(&self) -> u64 {
        self.overflowed.load(Ordering::Relaxed)
    }

    /// Closes every subscription (the connection closed).
    pub(crate) fn close_all(&self) {
        let (live, held) = {
            let mut t = lock(&self.state);
            t.closed = true;
            self.held.store(0, Ordering::Release);
            (std::mem::take(&mut t.live), std::mem::take(&mut t.held))
        };
        for s in live.values().chain(held.iter()) {
            s.close(CloseReason::Disconnected);
        }
    }

    fn remove(&self, s: &Shared) {
        let mut t = lock(&self.state);
        if t.live.get(s.id()).is_some_and(|x| std::ptr::eq(&**x, s)) {
            t.live.remove(s.id());
        }
    }

    /// The held subscriptions whose id `message` holds (taken off the list).
    pub(crate) fn answered_in(&self, message: &[u8]) -> Vec<Arc<Shared>> {
        if self.held.load(Ordering::Acquire) == 0 {
            return Vec::new();
        }
        let mut t = lock(&self.state);
        let mut found = Vec::new();
        t.held.retain(|s| {
            let hit = contains(message, s.id_json.as_bytes());
            if hit {
                found.push(Arc::clone(s));
            }
            !hit
        });
        self.held.store(t.held.len(), Ordering::Release);
        found
    }

    /// Makes a subscription (held until its answer is queued).
    fn open(
        &self,
        registration: usize,
        conn_id: u64,
        notification: &str,
    ) -> Result<Arc<Shared>, RpcError> {
        let mut t = lock(&self.state);
        if t.closed {
            return Err(RpcError::internal("the connection is closed"));
        }
        // Held entries whose subscription is closed and empty need no answer.
        t.held.retain(|s| {
            s.reason().is_none() || lock(&s.state).held.as_ref().is_some_and(|h| !h.is_empty())
        });
        if t.live.len() >= self.max || t.held.len() >= self.max {
            return Err(RpcError::new(-32000, "Too many subscriptions").with_data(
                &serde_json::json!({"reason": "the connection has the most subscriptions allowed", "max": self.max}),
            ));
        }
        let id = loop {
            let n = self.counter.fetch_add(1, Ordering::Relaxed);
            let id = fresh_id(conn_id, n);
            if !t.live.contains_key(id.as_str()) {
                break id;
            }
        };
        let mut id_json = String::with_capacity(id.len() + 2);
        id_json.push('"');
        id_json.push_str(&id);
        id_json.push('"');
        let mut head = Vec::with_capacity(80 + notification.len());
        head.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":");
        write::write_str_escaped(&mut head, notification);
        head.extend_from_slice(b",\"params\":{\"subscription\":");
        head.extend_from_slice(id_json.as_bytes());
        head.push(b',');
        let s = Arc::new(Shared {
            id_json: id_json.into(),
            registration,
            head: head.into(),
            capacity: self.capacity,
            waiting: AtomicUsize::new(0),
            reason: AtomicU8::new(0),
            closed: CancellationToken::new(),
            room: Room::default(),
            state: Mutex::new(State {
                held: Some(VecDeque::new()),
            }),
        });
        t.live.insert(id.into(), Arc::clone(&s));
        t.held.push(Arc::clone(&s));
        self.held.store(t.held.len(), Ordering::Release);
        Ok(s)
    }

    /// Closes the subscription `id` of `registration`; whether there was one.
    fn unsubscribe(&self, registration: usize, id: &str) -> bool {
        let s = {
            let mut t = lock(&self.state);
            match t.live.get(id) {
                Some(s) if s.registration == registration => t.live.remove(id),
                _ => None,
            }
        };
        match s {
            Some(s) => {
                s.close(CloseReason::Unsubscribed);
                true
            }
            None => false,
        }
    }
}

/// Whether `needle` occurs in `hay`.
fn contains(hay: &[u8], needle: &[u8]) -> bool {
    needle.len() <= hay.len() && hay.windows(needle.len()).any(|w| w == needle)
}

/// `0x` and 32 hex digits: two keyed hashes of the connection and a counter.
fn fresh_id(conn_id: u64, n: u64) -> String {
    static KEYS: OnceLock<(RandomState, RandomState)> = OnceLock::new();
    let (a, b) = KEYS.get_or_init(|| (RandomState::new(), RandomState::new()));
    let hi = a.hash_one((conn_id, n));
    let lo = b.hash_one((n, conn_id));
    format!("0x{hi:016x}{lo:016x}")
}

/// Starts a subscription on `conn` for a registration: the sink to hand the
/// handler, or the error to answer (no push, too many, closed).
pub(crate) fn open_subscription(
    conn: Option<&Connection>,
    registration: usize,
    notification: &str,
) -> Result<SubscriptionSink, RpcError> {
    let Some(conn) = conn.filter(|c| c.can_push()) else {
        return Err(not_supported());
    };
    let shared = conn
        .inner
        .subs
        .open(registration, conn.id(), notification)?;
    Ok(SubscriptionSink {
        conn: conn.clone(),
        shared,
    })
}

/// -32601 `Notifications not supported`, as geth answers a subscribe over HTTP.
fn not_supported() -> RpcError {
    RpcError::new(-32601, "Notifications not supported").with_data_json(
        r#"{"reason":"this transport only answers; subscribe over a connection that can push (WebSocket, IPC, stdio)"}"#,
    )
}

/// The unsubscribe method's answer for `id` on `conn`.
pub(crate) fn unsubscribe(
    conn: Option<&Connection>,
    registration: usize,
    id: &str,
) -> Result<bool, RpcError> {
    let Some(conn) = conn.filter(|c| c.can_push()) else {
        return Err(not_supported());
    };
    if conn.inner.subs.unsubscribe(registration, id) {
        Ok(true)
    } else {
        Err(RpcError::new(-32000, "Subscription not found")
            .with_data(&serde_json::json!({ "subscription": id })))
    }
}

/// Queues what the subscriptions in `found` held, now that their answer is
/// queued: waiting while the outgoing queue is full (these notifications were
/// accepted already: the full policy does not apply to them). What the sinks
/// send meanwhile joins the end of what is held, so the order stays. If the
/// future is dropped before it is done, the rest is queued without waiting
/// (the full policy then applies).
pub(crate) async fn release(conn: &Connection, found: Vec<Arc<Shared>>) {
    let mut rest = Release {
        conn,
        rest: found.into(),
    };
    while let Some(s) = rest.rest.front().cloned() {
        loop {
            let msg = {
                let mut st = lock(&s.state);
                let Some(held) = st.held.as_mut() else { break };
                match held.pop_front() {
                    Some(msg) => msg,
                    None => {
                        st.held = None;
                        break;
                    }
                }
            };
            // Counted in `waiting` when it was held; the queued message carries it.
            let q = Queued {
                bytes: msg,
                sub: Some(Arc::clone(&s)),
            };
            let sent = match conn.inner.queue.try_send(q) {
                Ok(()) => Ok(()),
                Err(async_channel::TrySendError::Full(q)) => {
                    conn.inner.queue.send(q).await.map_err(drop)
                }
                Err(async_channel::TrySendError::Closed(_)) => Err(()),
            };
            if sent.is_err() {
                forget_held(&s);
                finish(conn, &s, CloseReason::Disconnected);
                break;
            }
        }
        rest.rest.pop_front();
    }
}

/// The subscriptions a dropped [`release`] had not finished.
struct Release<'a> {
    conn: &'a Connection,
    rest: VecDeque<Arc<Shared>>,
}

impl Drop for Release<'_> {
    fn drop(&mut self) {
        for s in self.rest.drain(..) {
            release_now(self.conn, &s);
        }
    }
}

/// Queues what `s` holds without waiting: a full queue overflows it.
fn release_now(conn: &Connection, s: &Arc<Shared>) {
    let mut st = lock(&s.state);
    let Some(mut held) = st.held.take() else {
        return;
    };
    while let Some(msg) = held.pop_front() {
        let q = Queued {
            bytes: msg,
            sub: Some(Arc::clone(s)),
        };
        if let Err(e) = conn.inner.queue.try_send(q) {
            let full = matches!(e, async_channel::TrySendError::Full(_));
            drop(e);
            // The rest is never queued: no longer waiting.
            s.waiting.fetch_sub(held.len(), Ordering::SeqCst);
            drop(st);
            s.room.wake_front();
            if full {
                overflow(conn, s);
            } else {
                finish(conn, s, CloseReason::Disconnected);
            }
            return;
        }
    }
}

/// Drops what `s` holds (it will never be queued).
fn forget_held(s: &Shared) {
    let n = lock(&s.state).held.take().map_or(0, |h| h.len());
    s.waiting.fetch_sub(n, Ordering::SeqCst);
    s.room.wake_front();
}

/// Closes `s` for `why` and takes it off the table.
fn finish(conn: &Connection, s: &Shared, why: CloseReason) {
    s.close(why);
    conn.inner.subs.remove(s);
}

/// Closes `s` for overflow and tells the client, if the queue has room.
fn overflow(conn: &Connection, s: &Arc<Shared>) {
    if !s.close(CloseReason::Overflow) {
        return;
    }
    conn.inner.subs.remove(s);
    conn.inner.subs.overflowed.fetch_add(1, Ordering::Relaxed);
    let mut msg = Vec::with_capacity(s.head.len() + 160);
    msg.extend_from_slice(&s.head);
    msg.extend_from_slice(b"\"error\":");
    let data = format!(r#"{{"reason":"buffer full","capacity":{}}}"#, s.capacity);
    crate::envelope::error_object(
        &mut msg,
        OVERFLOW_CODE,
        "Subscription closed: the client does not read",
        Some(data.as_bytes()),
    );
    msg.extend_from_slice(b"}}");
    let mut st = lock(&s.state);
    match st.held.as_mut() {
        // Not answered yet: the notice follows the answer, alone.
        Some(held) => {
            s.waiting.fetch_sub(held.len(), Ordering::SeqCst);
            held.clear();
            held.push_back(msg);
            s.waiting.fetch_add(1, Ordering::SeqCst);
        }
        None => {
            drop(st);
            let _ = conn.inner.queue.try_send(Queued::plain(msg));
        }
    }
}

/// Where a subscription's notifications go: keep it (move it into a task or a
/// thread) and [`send`](SubscriptionSink::send) to it; see the [module
/// docs](self) for ids, bounds and closing. Dropping it closes the
/// subscription.
///
/// ```
/// use switchboard::connection::{block_on, Connection, ConnectionConfig, SinkError, CloseReason};
/// use switchboard::{Router, Session};
///
/// let router = Router::builder()
///     .subscription("eth_subscribe", "eth_unsubscribe", "eth_subscription", |call, sink| {
///         let (kind,): (String,) = call.params().ok_or(switchboard::RpcError::invalid_params("a kind"))?.parse()?;
///         std::thread::spawn(move || {
///             // A producer: here three notifications, then waiting for the end.
///             for n in 1..=3 {
///                 sink.send(&serde_json::json!({ "kind": &kind, "n": n })).unwrap();
///             }
///             block_on(sink.closed());
///             assert_eq!(sink.send(&4), Err(SinkError::Closed(CloseReason::Unsubscribed)));
///         });
///         Ok(())
///     })
///     .build()
///     .unwrap();
/// let (conn, outgoing) = Connection::new(&ConnectionConfig::new());
/// let mut session = Session::new(router);
/// session.attach(conn.clone());
/// // A driver queues each answer on the connection (this is what releases the
/// // notifications held until the client knows the id).
/// let answer = |s: &mut Session, msg: &[u8]| {
///     let resp = s.handle(msg).unwrap().to_vec();
///     block_on(conn.send(resp)).unwrap();
/// };
/// answer(&mut session, br#"{"jsonrpc":"2.0","method":"eth_subscribe","params":["ticks"],"id":1}"#);
/// let first: serde_json::Value = serde_json::from_slice(&outgoing.try_recv().unwrap()).unwrap();
/// let id = first["result"].as_str().unwrap().to_owned(); // "0x" and 32 hex digits
/// assert_eq!(id.len(), 34);
/// for n in 1..=3 {
///     let note = block_on(outgoing.recv()).unwrap();
///     let want = format!(r#"{{"jsonrpc":"2.0","method":"eth_subscription","params":{{"subscription":"{id}","result":{{"kind":"ticks","n":{n}}}}}}}"#);
///     assert_eq!(String::from_utf8(note).unwrap(), want);
/// }
/// let unsub = format!(r#"{{"jsonrpc":"2.0","method":"eth_unsubscribe","params":["{id}"],"id":2}}"#);
/// assert_eq!(session.handle(unsub.as_bytes()).unwrap(), br#"{"jsonrpc":"2.0","result":true,"id":2}"#);
/// ```
pub struct SubscriptionSink {
    conn: Connection,
    shared: Arc<Shared>,
}

impl fmt::Debug for SubscriptionSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SubscriptionSink")
            .field("id", &self.id())
            .field("connection", &self.conn.id())
            .field("closed", &self.shared.reason())
            .finish()
    }
}

impl SubscriptionSink {
    /// The subscription's id, as the client got it (`0x` and 32 hex digits).
    pub fn id(&self) -> &str {
        self.shared.id()
    }

    /// The connection it sends on.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Sends `value` as the notification's `result`, without waiting. Fails
    /// with [`SinkError::Closed`] once the subscription is closed, with
    /// [`SinkError::Overflow`] when the buffer is full (which closes it).
    /// [`SubscriptionSink::send_async`] waits for room instead.
    pub fn send<T: Serialize + ?Sized>(&self, value: &T) -> Result<(), SinkError> {
        self.push(self.message(value)?)
    }

    /// [`SubscriptionSink::send`] with the result given as JSON text (checked:
    /// exactly one JSON value).
    pub fn send_raw(&self, json: &[u8]) -> Result<(), SinkError> {
        self.push(self.raw_message(json)?)
    }

    /// Sends `value` as the notification's `result`, waiting while the
    /// subscription has no room (its capacity reached, or the connection's
    /// outgoing queue full) instead of closing it: for a producer that can go
    /// at the client's pace. Resolves as [`SubscriptionSink::send`] returns,
    /// except that it is never [`SinkError::Overflow`]: `Ok` once queued,
    /// [`SinkError::Closed`] if the subscription is closed or closes while it
    /// waits (unsubscribed, disconnected), [`SinkError::InvalidJson`] if the
    /// value cannot be serialized (done before it waits). Calls waiting on one
    /// sink are served in the order they were made. Dropping the future
    /// withdraws the notification.
    ///
    /// ```
    /// use switchboard::connection::{block_on, CloseReason, Connection, ConnectionConfig, SinkError};
    /// use switchboard::{Router, Session};
    ///
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// let router = Router::builder()
    ///     .subscription("count", "uncount", "counted", move |_, sink| {
    ///         let tx = tx.clone();
    ///         std::thread::spawn(move || {
    ///             // Ten notifications through a subscription of capacity 2:
    ///             // each waits for the client to take the one before.
    ///             for n in 0..10 {
    ///                 block_on(sink.send_async(&n)).unwrap();
    ///             }
    ///             block_on(sink.closed());
    ///             let after = block_on(sink.send_async(&10));
    ///             tx.send(after).unwrap();
    ///         });
    ///         Ok(())
    ///     })
    ///     .build()
    ///     .unwrap();
    /// let (conn, outgoing) = Connection::new(ConnectionConfig::new().subscription_capacity(2));
    /// let mut session = Session::new(router);
    /// session.attach(conn.clone());
    /// let answer = session
    ///     .handle(br#"{"jsonrpc":"2.0","method":"count","id":1}"#)
    ///     .unwrap()
    ///     .to_vec();
    /// block_on(conn.send(answer)).unwrap();
    /// block_on(outgoing.recv()).unwrap(); // the answer
    /// for n in 0..10 {
    ///     let note: serde_json::Value = serde_json::from_slice(&block_on(outgoing.recv()).unwrap()).unwrap();
    ///     assert_eq!(note["params"]["result"], n);
    /// }
    /// conn.close();
    /// assert_eq!(rx.recv().unwrap(), Err(SinkError::Closed(CloseReason::Disconnected)));
    /// ```
    pub fn send_async<T: Serialize + ?Sized>(
        &self,
        value: &T,
    ) -> impl Future<Output = Result<(), SinkError>> + Send + use<'_, T> {
        let msg = self.message(value);
        async move { self.push_async(msg?).await }
    }

    /// [`SubscriptionSink::send_async`] with the result given as JSON text
    /// (checked: exactly one JSON value).
    ///
    /// ```
    /// use switchboard::connection::{block_on, Connection, ConnectionConfig, SinkError};
    /// use switchboard::{Router, Session};
    ///
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// let router = Router::builder()
    ///     .subscription("s", "u", "n", move |_, sink| {
    ///         tx.send(sink).unwrap();
    ///         Ok(())
    ///     })
    ///     .build()
    ///     .unwrap();
    /// let (conn, outgoing) = Connection::new(&ConnectionConfig::new());
    /// let mut session = Session::new(router);
    /// session.attach(conn.clone());
    /// let answer = session.handle(br#"{"jsonrpc":"2.0","method":"s","id":1}"#).unwrap().to_vec();
    /// block_on(conn.send(answer)).unwrap();
    /// let sink = rx.recv().unwrap();
    /// block_on(sink.send_raw_async(b" [1,2] ")).unwrap();
    /// assert!(matches!(block_on(sink.send_raw_async(b"{")), Err(SinkError::InvalidJson(_))));
    /// outgoing.try_recv().unwrap(); // the answer
    /// let want = format!(r#"{{"jsonrpc":"2.0","method":"n","params":{{"subscription":"{}","result":[1,2]}}}}"#, sink.id());
    /// assert_eq!(outgoing.try_recv().unwrap(), want.as_bytes());
    /// ```
    pub fn send_raw_async<'a>(
        &'a self,
        json: &[u8],
    ) -> impl Future<Output = Result<(), SinkError>> + Send + use<'a> {
        let msg = self.raw_message(json);
        async move { self.push_async(msg?).await }
    }

    /// The whole notification for `value`.
    fn message<T: Serialize + ?Sized>(&self, value: &T) -> Result<Vec<u8>, SinkError> {
        if let Some(why) = self.shared.reason() {
            return Err(SinkError::Closed(why));
        }
        let mut msg = Vec::with_capacity(self.shared.head.len() + 128);
        msg.extend_from_slice(&self.shared.head);
        msg.extend_from_slice(crate::envelope::RESULT);
        write::to_vec_into(&mut msg, value).map_err(|e| SinkError::InvalidJson(e.to_string()))?;
        msg.extend_from_slice(b"}}");
        Ok(msg)
    }

    /// The whole notification for the JSON text `json`.
    fn raw_message(&self, json: &[u8]) -> Result<Vec<u8>, SinkError> {
        if let Some(why) = self.shared.reason() {
            return Err(SinkError::Closed(why));
        }
        if !is_one_json_value(json) {
            return Err(SinkError::InvalidJson("not exactly one JSON value".into()));
        }
        let ws = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
        let start = json.iter().position(|b| !ws(b)).unwrap_or(json.len());
        let end = json.iter().rposition(|b| !ws(b)).map_or(start, |i| i + 1);
        let mut msg = Vec::with_capacity(self.shared.head.len() + 12 + end - start);
        msg.extend_from_slice(&self.shared.head);
        msg.extend_from_slice(crate::envelope::RESULT);
        msg.extend_from_slice(&json[start..end]);
        msg.extend_from_slice(b"}}");
        Ok(msg)
    }

    fn push(&self, msg: Vec<u8>) -> Result<(), SinkError> {
        let s = &self.shared;
        let mut st = lock(&s.state);
        // Checked again under the lock: a close in between is seen here.
        if let Some(why) = s.reason() {
            return Err(SinkError::Closed(why));
        }
        if s.waiting.load(Ordering::SeqCst) >= s.capacity {
            drop(st);
            overflow(&self.conn, s);
            return Err(SinkError::Overflow);
        }
        s.waiting.fetch_add(1, Ordering::SeqCst);
        if let Some(held) = st.held.as_mut() {
            held.push_back(msg);
            return Ok(());
        }
        let q = Queued {
            bytes: msg,
            sub: Some(Arc::clone(s)),
        };
        match self.conn.inner.queue.try_send(q) {
            Ok(()) => Ok(()),
            Err(async_channel::TrySendError::Full(q)) => {
                drop(q);
                drop(st);
                overflow(&self.conn, s);
                Err(SinkError::Overflow)
            }
            Err(async_channel::TrySendError::Closed(q)) => {
                drop(q);
                drop(st);
                finish(&self.conn, s, CloseReason::Disconnected);
                Err(SinkError::Closed(CloseReason::Disconnected))
            }
        }
    }

    /// Queues `msg` once this call is first in the sink's line and the
    /// subscription has room; see [`SubscriptionSink::send_async`].
    async fn push_async(&self, msg: Vec<u8>) -> Result<(), SinkError> {
        let s = &self.shared;
        let ticket = s.room.enter();
        let room = || s.reason().is_some() || s.waiting.load(Ordering::SeqCst) < s.capacity;
        let mut msg = Some(msg);
        let q = loop {
            std::future::poll_fn(|cx| s.room.poll_turn(&ticket, cx, room)).await;
            let mut st = lock(&s.state);
            if let Some(why) = s.reason() {
                return Err(SinkError::Closed(why));
            }
            if s.waiting.load(Ordering::SeqCst) >= s.capacity {
                // A `send` took the room in between: wait again.
                continue;
            }
            s.waiting.fetch_add(1, Ordering::SeqCst);
            let Some(msg) = msg.take() else {
                unreachable!("queued once: the loop ends here");
            };
            if let Some(held) = st.held.as_mut() {
                held.push_back(msg);
                return Ok(());
            }
            let q = Queued {
                bytes: msg,
                sub: Some(Arc::clone(s)),
            };
            match self.conn.inner.queue.try_send(q) {
                Ok(()) => return Ok(()),
                Err(async_channel::TrySendError::Full(q)) => break q,
                Err(async_channel::TrySendError::Closed(q)) => {
                    drop(q);
                    drop(st);
                    finish(&self.conn, s, CloseReason::Disconnected);
                    return Err(SinkError::Closed(CloseReason::Disconnected));
                }
            }
        };
        // The outgoing queue is full: wait for room in it, still first in this
        // sink's line (the order holds), or for the subscription to close
        // (dropping `q` unsent).
        let mut send = std::pin::pin!(self.conn.inner.queue.send(q));
        let mut closed = std::pin::pin!(s.closed.cancelled());
        std::future::poll_fn(|cx| {
            if let Poll::Ready(r) = send.as_mut().poll(cx) {
                return Poll::Ready(match r {
                    Ok(()) => Ok(()),
                    Err(_) => {
                        finish(&self.conn, s, CloseReason::Disconnected);
                        Err(SinkError::Closed(CloseReason::Disconnected))
                    }
                });
            }
            if closed.as_mut().poll(cx).is_ready() {
                let why = s.reason().unwrap_or(CloseReason::Ended);
                return Poll::Ready(Err(SinkError::Closed(why)));
            }
            Poll::Pending
        })
        .await
    }

    /// Why the subscription is closed, or `None` while it is open.
    pub fn close_reason(&self) -> Option<CloseReason> {
        self.shared.reason()
    }

    /// Whether the subscription is closed.
    pub fn is_closed(&self) -> bool {
        self.shared.reason().is_some()
    }

    /// A future that completes when the subscription closes (at once if it
    /// is): a producing task awaits it next to its source, and stops.
    pub fn closed(&self) -> Cancelled {
        self.shared.closed.cancelled()
    }

    /// Notifications waiting to be written (at most the capacity).
    pub fn waiting(&self) -> usize {
        self.shared.waiting.load(Ordering::Acquire)
    }

    /// Closes the subscription from the server's side ([`CloseReason::Ended`]);
    /// notifications already queued are still written. The client is not told
    /// (Ethereum has no message for it); its unsubscribe then answers
    /// `Subscription not found`.
    pub fn close(&self) {
        finish(&self.conn, &self.shared, CloseReason::Ended);
    }
}

impl Drop for SubscriptionSink {
    fn drop(&mut self) {
        self.close();
    }
}

mod room;
#[cfg(test)]
mod tests;
