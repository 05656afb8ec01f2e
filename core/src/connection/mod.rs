//! Connections that talk both ways: a [`Connection`] is what a transport owns for
//! one client, and what handlers reach through their call ([`Call::connection`],
//! [`OwnedCall::connection`]): its id, typed per-connection state
//! ([`Extensions`]), and a [`Peer`] that sends the client notifications and
//! requests, the requests' answers coming back as futures.
//!
//! Everything here is runtime-neutral (`std` locks and wakers, and `async-channel`
//! for the outgoing queue): the transport's driver moves the bytes. It
//! - writes what [`Outgoing::recv`] yields (whole messages, unframed) to the client;
//! - hands every message it reads to a [`Session`](crate::Session) attached to the
//!   connection ([`Session::attach`](crate::Session::attach)), which delivers the
//!   client's responses to the requests awaiting them (matched by the id's exact
//!   bytes; a response that matches nothing, or comes twice, is dropped and
//!   counted in [`Connection::unmatched_responses`], never answered) and fires
//!   the cancellation token of a call the protocol's cancel notification names;
//! - runs the timer ([`Connection::poll_expire`]) that fails requests the client
//!   does not answer in time;
//! - and calls [`Connection::close`] when the client is gone, which fails every
//!   pending request at once with [`PeerError::Closed`].
//!
//! `switchboard-server`'s `duplex` driver does all of that for any byte stream.
//!
//! ```
//! use switchboard::connection::{Connection, ConnectionConfig, PeerError};
//! use switchboard::{Router, Session};
//!
//! let (conn, outgoing) = Connection::new(&ConnectionConfig::new());
//! let router = Router::builder().method("hello", |call, out| {
//!     // A sync handler notifies its client (the queue has room: no waiting).
//!     let peer = call.connection().expect("attached").peer();
//!     peer.try_notify("greeted", &serde_json::json!({"who": "you"}))?;
//!     out.str("hi")
//! }).build().unwrap();
//! let mut session = Session::new(router);
//! session.attach(conn.clone());
//! let resp = session.handle(br#"{"jsonrpc":"2.0","method":"hello","id":1}"#).unwrap();
//! assert_eq!(resp, br#"{"jsonrpc":"2.0","result":"hi","id":1}"#);
//! assert_eq!(outgoing.try_recv().unwrap(),
//!            br#"{"jsonrpc":"2.0","method":"greeted","params":{"who":"you"}}"#);
//!
//! // A request to the client: its answer comes back through the session.
//! let peer = conn.peer();
//! let answer = std::thread::spawn(move || {
//!     switchboard::connection::block_on(peer.request("roots/list", &serde_json::json!({})))
//! });
//! let sent = loop { if let Some(m) = outgoing.try_recv() { break m } };
//! assert_eq!(sent, br#"{"jsonrpc":"2.0","method":"roots/list","params":{},"id":1}"#);
//! assert_eq!(session.handle(br#"{"jsonrpc":"2.0","result":{"roots":[]},"id":1}"#), None);
//! assert_eq!(answer.join().unwrap().unwrap().as_bytes(), br#"{"roots":[]}"#);
//!
//! // Closing fails what is still pending.
//! conn.close();
//! let late = switchboard::connection::block_on(conn.peer().request("x", &()));
//! assert_eq!(late, Err(PeerError::Closed));
//! ```

mod cancel;
mod pending;
pub mod subscription;

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde::de::DeserializeOwned;

pub use cancel::{CancellationToken, Cancelled};
pub use subscription::{CloseReason, OVERFLOW_CODE, SinkError, SubscriptionSink};
pub(crate) use subscription::{open_subscription, unsubscribe};

use subscription::Queued;

use crate::dispatch::handler::RpcError;
use crate::params::{Kind, RawValue};
use crate::parse::Response;
use crate::write;

#[allow(unused_imports)] // rustdoc links
use crate::{Call, OwnedCall};

/// Runs a future to completion on this thread, parking it while the future is
/// pending: for tests, examples and sync code that awaits a [`Peer`] request
/// from a thread of its own (never from a thread that must read the answer).
///
/// ```
/// use switchboard::connection::{block_on, CancellationToken};
/// assert_eq!(block_on(async { 40 + 2 }), 42);
/// // A future woken from another thread: the calling thread parks until then.
/// let token = CancellationToken::new();
/// let canceller = token.clone();
/// let t = std::thread::spawn(move || canceller.cancel());
/// block_on(token.cancelled());
/// assert!(token.is_cancelled());
/// t.join().unwrap();
/// ```
pub fn block_on<F: Future>(fut: F) -> F::Output {
    crate::dispatch::async_call::block_on(fut)
}

/// A connection's limits.
///
/// ```
/// use std::time::Duration;
/// use switchboard::connection::ConnectionConfig;
/// let mut c = ConnectionConfig::new();
/// c.queue_capacity(64).request_timeout(Some(Duration::from_secs(5)));
/// assert_eq!(c.get_queue_capacity(), 64);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectionConfig {
    queue_capacity: usize,
    request_timeout: Option<Duration>,
    subscription_capacity: usize,
    max_subscriptions: usize,
}

impl Default for ConnectionConfig {
    fn default() -> Self {
        Self::new()
    }
}

impl ConnectionConfig {
    /// The default outgoing queue capacity, in messages.
    pub const DEFAULT_QUEUE_CAPACITY: usize = 1024;
    /// The default time a request to the client waits for its answer.
    pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
    /// The default number of notifications one subscription may have waiting.
    pub const DEFAULT_SUBSCRIPTION_CAPACITY: usize = 256;
    /// The default number of subscriptions one connection may have open.
    pub const DEFAULT_MAX_SUBSCRIPTIONS: usize = 1024;

    /// The defaults: 1024 queued messages, 30 s request timeout, 256
    /// notifications waiting per subscription, 1024 subscriptions.
    pub const fn new() -> Self {
        ConnectionConfig {
            queue_capacity: Self::DEFAULT_QUEUE_CAPACITY,
            request_timeout: Some(Self::DEFAULT_REQUEST_TIMEOUT),
            subscription_capacity: Self::DEFAULT_SUBSCRIPTION_CAPACITY,
            max_subscriptions: Self::DEFAULT_MAX_SUBSCRIPTIONS,
        }
    }

    /// How many notifications one subscription may have waiting to be written
    /// (at least 1); one more closes it (see [`SubscriptionSink`]).
    pub fn subscription_capacity(&mut self, n: usize) -> &mut Self {
        self.subscription_capacity = n.max(1);
        self
    }

    /// How many subscriptions may be open on one connection (at least 1); a
    /// subscribe call above it is answered -32000.
    pub fn max_subscriptions(&mut self, n: usize) -> &mut Self {
        self.max_subscriptions = n.max(1);
        self
    }

    /// See [`ConnectionConfig::subscription_capacity`].
    pub fn get_subscription_capacity(&self) -> usize {
        self.subscription_capacity
    }

    /// See [`ConnectionConfig::max_subscriptions`].
    pub fn get_max_subscriptions(&self) -> usize {
        self.max_subscriptions
    }

    /// How many messages may wait to be written (at least 1). Above it, senders
    /// wait ([`Peer::notify`], responses) or are refused ([`Peer::try_notify`]).
    pub fn queue_capacity(&mut self, n: usize) -> &mut Self {
        self.queue_capacity = n.max(1);
        self
    }

    /// How long a request to the client waits for its answer before it fails
    /// with [`PeerError::TimedOut`] (`None`: for ever, until the connection
    /// closes). Enforced by the driver's timer ([`Connection::poll_expire`]).
    pub fn request_timeout(&mut self, t: Option<Duration>) -> &mut Self {
        self.request_timeout = t;
        self
    }

    /// See [`ConnectionConfig::queue_capacity`].
    pub fn get_queue_capacity(&self) -> usize {
        self.queue_capacity
    }

    /// See [`ConnectionConfig::request_timeout`].
    pub fn get_request_timeout(&self) -> Option<Duration> {
        self.request_timeout
    }
}

/// The protocol's cancel notification, a router option
/// ([`RouterBuilder::cancel_notification`](crate::RouterBuilder::cancel_notification)):
/// its method, the params member that holds the id of the call to cancel, and
/// what a cancelled call answers (by default nothing at all). No protocol is built
/// in; the two common ones:
///
/// ```
/// use switchboard::RpcError;
/// use switchboard::connection::CancelRule;
/// // MCP: `notifications/cancelled {"requestId": …}`; the call is never answered.
/// let mcp = CancelRule::new("notifications/cancelled", "requestId");
/// assert!(mcp.answer_error().is_none());
/// // LSP: `$/cancelRequest {"id": …}`; the call is answered -32800.
/// let lsp = CancelRule::new("$/cancelRequest", "id")
///     .answer(RpcError::new(-32800, "Request cancelled"));
/// assert_eq!(lsp.answer_error().unwrap().code(), -32800);
/// ```
///
/// The id is matched by its exact bytes against the calls still running on the
/// connection; a cancel for an unknown id, or one that arrives after the
/// answer, does nothing. A cancelled call's future is dropped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CancelRule {
    method: Box<str>,
    member: Box<str>,
    answer: Option<RpcError>,
}

impl CancelRule {
    /// Notifications to `method` cancel the call whose id is their params'
    /// `id_member`.
    pub fn new(method: &str, id_member: &str) -> Self {
        CancelRule {
            method: method.into(),
            member: id_member.into(),
            answer: None,
        }
    }

    /// A cancelled call is answered with `error` (instead of not at all).
    pub fn answer(mut self, error: RpcError) -> Self {
        self.answer = Some(error);
        self
    }

    /// The cancel notification's method.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The params member holding the id.
    pub fn id_member(&self) -> &str {
        &self.member
    }

    /// What a cancelled call answers, if anything.
    pub fn answer_error(&self) -> Option<&RpcError> {
        self.answer.as_ref()
    }
}

/// Why a [`Peer`] could not send, or a request got no result.
///
/// ```
/// use switchboard::connection::{block_on, Connection, ConnectionConfig, PeerError};
/// use switchboard::{Router, RpcError, Session};
/// let (conn, outgoing) = Connection::new(ConnectionConfig::new().queue_capacity(1));
/// let peer = conn.peer();
/// // The queue holds one message: a second notification finds it full.
/// peer.try_notify("progress", &[1]).unwrap();
/// assert_eq!(peer.try_notify("progress", &[2]), Err(PeerError::Full));
/// // Params are an array or an object.
/// assert!(matches!(peer.try_notify("progress", &3), Err(PeerError::InvalidParams(_))));
/// assert_eq!(outgoing.try_recv().unwrap(), br#"{"jsonrpc":"2.0","method":"progress","params":[1]}"#);
///
/// // The client answers a request with an error object: `Rejected`, which a
/// // handler's `?` passes on to its own caller as it is.
/// let mut session = Session::new(Router::builder().build().unwrap());
/// session.attach(conn.clone());
/// let asking = std::thread::spawn(move || block_on(peer.request("confirm", &["delete?"])));
/// let sent = block_on(outgoing.recv()).unwrap();
/// assert_eq!(sent, br#"{"jsonrpc":"2.0","method":"confirm","params":["delete?"],"id":1}"#);
/// session.handle(br#"{"jsonrpc":"2.0","error":{"code":7,"message":"declined"},"id":1}"#);
/// let err = asking.join().unwrap().unwrap_err();
/// assert_eq!(err, PeerError::Rejected(RpcError::new(7, "declined")));
/// assert_eq!(RpcError::from(err).code(), 7);
///
/// // Once the connection is closed, every send fails.
/// conn.close();
/// assert_eq!(conn.peer().try_notify("progress", &[3]), Err(PeerError::Closed));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PeerError {
    /// The connection is closed (or closed while the request waited).
    Closed,
    /// The client did not answer within the request's timeout.
    TimedOut,
    /// The outgoing queue is full ([`Peer::try_notify`] only; the async senders wait).
    Full,
    /// The params are not a JSON array or object (or could not be serialized).
    InvalidParams(String),
    /// The client answered with an error object.
    Rejected(RpcError),
    /// This transport cannot send to the client: it only answers (plain HTTP;
    /// a connection made by [`Connection::answer_only`]).
    Unsupported,
}

impl fmt::Display for PeerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PeerError::Closed => f.write_str("the connection is closed"),
            PeerError::TimedOut => f.write_str("the client did not answer in time"),
            PeerError::Full => f.write_str("the outgoing queue is full"),
            PeerError::InvalidParams(why) => write!(f, "invalid params: {why}"),
            PeerError::Rejected(e) => write!(f, "the client answered with an error: {e}"),
            PeerError::Unsupported => {
                f.write_str("this transport cannot send to the client (it only answers)")
            }
        }
    }
}

impl std::error::Error for PeerError {}

impl From<PeerError> for RpcError {
    /// The error a handler answers with when its request to the client failed:
    /// the client's own error object as it is, otherwise -32603 saying why.
    fn from(e: PeerError) -> Self {
        match e {
            PeerError::Rejected(e) => e,
            other => RpcError::internal(other),
        }
    }
}

/// One JSON value, owned: a client's result.
///
/// ```
/// use switchboard::connection::{block_on, Connection, ConnectionConfig, OwnedValue};
/// use switchboard::{Router, Session};
/// let (conn, outgoing) = Connection::new(&ConnectionConfig::new());
/// let mut session = Session::new(Router::builder().build().unwrap());
/// session.attach(conn.clone());
/// let peer = conn.peer();
/// let asking = std::thread::spawn(move || block_on(peer.request("workspace/configuration", &[()])));
/// block_on(outgoing.recv()).unwrap(); // the request, written to the client
/// session.handle(br#"{"jsonrpc":"2.0","result":[{"tabSize":4,"name":"a\u00e9"}],"id":1}"#);
/// let value: OwnedValue = asking.join().unwrap().unwrap();
/// // The client's exact bytes, kept after the message they came in is gone...
/// assert_eq!(value.as_bytes(), br#"[{"tabSize":4,"name":"a\u00e9"}]"#);
/// // ... read in place, or deserialized.
/// assert_eq!(value.as_raw().array_iter().unwrap().next().unwrap().get("tabSize").unwrap().as_u64(), Some(4));
/// let parsed: Vec<serde_json::Value> = value.parse().unwrap();
/// assert_eq!(parsed[0]["name"], "a\u{e9}");
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct OwnedValue {
    /// INVARIANT: exactly one JSON value validated by the scanner.
    bytes: Box<[u8]>,
}

impl OwnedValue {
    fn from_raw(v: RawValue<'_>) -> Self {
        OwnedValue {
            bytes: v.as_bytes().into(),
        }
    }

    /// The value's exact bytes as the client sent them.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// A borrowed view, with the accessors of [`RawValue`].
    pub fn as_raw(&self) -> RawValue<'_> {
        RawValue::new_validated(&self.bytes)
    }

    /// Deserializes the value.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, crate::ParamsError> {
        self.as_raw().parse()
    }
}

impl fmt::Debug for OwnedValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.as_raw(), f)
    }
}

/// Per-connection state, one value per type: an authenticated identity, the
/// client's capabilities, whatever the transport or an `initialize` handler
/// stores for the handlers that follow.
///
/// ```
/// use switchboard::connection::{Connection, ConnectionConfig};
/// #[derive(Debug, PartialEq)]
/// struct User(&'static str);
/// let (conn, _out) = Connection::new(&ConnectionConfig::new());
/// assert!(conn.extensions().get::<User>().is_none());
/// conn.extensions().insert(User("ada"));
/// assert_eq!(*conn.extensions().get::<User>().unwrap(), User("ada"));
/// ```
#[derive(Default)]
pub struct Extensions {
    map: Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
}

impl Extensions {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<TypeId, Arc<dyn Any + Send + Sync>>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stores `value`, replacing (and returning) the one of its type.
    pub fn insert<T: Any + Send + Sync>(&self, value: T) -> Option<Arc<T>> {
        self.map()
            .insert(TypeId::of::<T>(), Arc::new(value))
            .and_then(|old| old.downcast().ok())
    }

    /// The value of type `T`, if one is stored.
    pub fn get<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.map()
            .get(&TypeId::of::<T>())
            .cloned()
            .and_then(|v| v.downcast().ok())
    }

    /// Removes and returns the value of type `T`.
    pub fn remove<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        self.map()
            .remove(&TypeId::of::<T>())
            .and_then(|v| v.downcast().ok())
    }
}

impl fmt::Debug for Extensions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Extensions")
            .field("len", &self.map().len())
            .finish()
    }
}

struct Inner {
    id: u64,
    queue: async_channel::Sender<Queued>,
    pending: pending::Pending,
    subs: subscription::Table,
    in_flight: pending::InFlight,
    extensions: Extensions,
    closed: CancellationToken,
    next_request: AtomicU64,
    request_timeout: Option<Duration>,
    unmatched: AtomicU64,
    /// Whether anything reads the outgoing queue ([`Connection::answer_only`]).
    push: bool,
    /// Whether the client can answer requests ([`Connection::notify_only`]).
    requests: bool,
}

impl Inner {
    fn new(config: &ConnectionConfig, queue: async_channel::Sender<Queued>) -> Self {
        Inner {
            id: CONNECTIONS.fetch_add(1, Ordering::Relaxed),
            queue,
            pending: pending::Pending::default(),
            subs: subscription::Table::new(config.subscription_capacity, config.max_subscriptions),
            in_flight: pending::InFlight::default(),
            extensions: Extensions::default(),
            closed: CancellationToken::new(),
            next_request: AtomicU64::new(1),
            request_timeout: config.request_timeout,
            unmatched: AtomicU64::new(0),
            push: true,
            requests: true,
        }
    }
}

/// The numbering of connections in this process.
static CONNECTIONS: AtomicU64 = AtomicU64::new(1);

/// One client's connection (see the [module docs](self)): cheap to clone, shared
/// by the transport's driver, the session and the handlers.
///
/// ```
/// use switchboard::connection::{block_on, Connection, ConnectionConfig};
/// use switchboard::{Router, Session};
/// let router = Router::builder()
///     .method("whoami", |call, out| out.u64(call.connection().expect("attached").id()))
///     .build()
///     .unwrap();
/// // What a transport does per client: a connection, a session attached to it...
/// let (conn, outgoing) = Connection::new(&ConnectionConfig::new());
/// let mut session = Session::new(router);
/// session.attach(conn.clone());
/// // ... each message read handed to the session, each answer queued...
/// let answer = session.handle(br#"{"jsonrpc":"2.0","method":"whoami","id":1}"#).unwrap().to_vec();
/// block_on(conn.send(answer)).unwrap();
/// // ... and written by the driver, which owns `outgoing`.
/// let written = block_on(outgoing.recv()).unwrap();
/// assert_eq!(written, format!(r#"{{"jsonrpc":"2.0","result":{},"id":1}}"#, conn.id()).as_bytes());
/// // The client went away: close, which the connection's users can await.
/// conn.close();
/// assert!(conn.is_closed());
/// block_on(conn.closed());
/// ```
#[derive(Clone)]
pub struct Connection {
    inner: Arc<Inner>,
}

/// The write side of a [`Connection`]: the messages to send the client, in order,
/// each a whole JSON-RPC message without framing. The transport's driver owns it.
///
/// ```
/// use switchboard::connection::{block_on, Connection, ConnectionConfig};
/// let (conn, outgoing) = Connection::new(&ConnectionConfig::new());
/// let peer = conn.peer();
/// peer.try_notify("a", &()).unwrap();
/// peer.try_notify("b", &[1]).unwrap();
/// assert_eq!(outgoing.len(), 2);
/// // Whole messages, in order, without framing: the driver frames and writes them.
/// assert_eq!(outgoing.try_recv().unwrap(), br#"{"jsonrpc":"2.0","method":"a"}"#);
/// assert_eq!(block_on(outgoing.recv()).unwrap(), br#"{"jsonrpc":"2.0","method":"b","params":[1]}"#);
/// assert!(outgoing.is_empty());
/// // A driver that is finishing refuses more.
/// outgoing.close();
/// assert!(peer.try_notify("c", &()).is_err());
/// assert_eq!(block_on(outgoing.recv()), None);
/// ```
#[derive(Debug)]
pub struct Outgoing {
    queue: async_channel::Receiver<Queued>,
}

impl Outgoing {
    /// The next message to write; waits while the queue is empty, `None` once
    /// the connection has ended and the queue is drained.
    pub async fn recv(&self) -> Option<Vec<u8>> {
        self.queue.recv().await.ok().map(Queued::into_bytes)
    }

    /// The next message if one is queued.
    pub fn try_recv(&self) -> Option<Vec<u8>> {
        self.queue.try_recv().ok().map(Queued::into_bytes)
    }

    /// Refuses further messages (senders get [`PeerError::Closed`]); those
    /// already queued can still be received. For a driver that is finishing.
    pub fn close(&self) {
        self.queue.close();
    }

    /// Messages waiting to be written.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether no message waits.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}

impl Drop for Outgoing {
    /// Nothing will write what is queued: it is dropped now, not when the last
    /// [`Connection`] goes, so the subscriptions' counts of waiting
    /// notifications fall and their waiting senders finish (refused: closed).
    fn drop(&mut self) {
        self.queue.close();
        while self.queue.try_recv().is_ok() {}
    }
}

impl Connection {
    /// A new connection with `config`'s limits, and its write side.
    pub fn new(config: &ConnectionConfig) -> (Connection, Outgoing) {
        let (tx, rx) = async_channel::bounded(config.queue_capacity);
        (
            Connection {
                inner: Arc::new(Inner::new(config, tx)),
            },
            Outgoing { queue: rx },
        )
    }

    /// A connection for a transport that can only answer (HTTP without a
    /// stream): handlers get its id and state, and every [`Peer`] send fails
    /// with [`PeerError::Unsupported`].
    ///
    /// ```
    /// use switchboard::connection::{Connection, PeerError};
    /// let conn = Connection::answer_only();
    /// assert_eq!(conn.peer().try_notify("x", &()), Err(PeerError::Unsupported));
    /// ```
    pub fn answer_only() -> Connection {
        // Nothing reads such a connection's queue: they all share one closed queue
        // (every send is refused at once, as by a queue of their own closed) instead
        // of allocating one each (about 1 KB per HTTP connection, with the events
        // its closing allocated).
        static CLOSED: OnceLock<async_channel::Sender<Queued>> = OnceLock::new();
        let queue = CLOSED.get_or_init(|| {
            let (tx, rx) = async_channel::bounded(1);
            rx.close();
            tx
        });
        let mut inner = Inner::new(&ConnectionConfig::new(), queue.clone());
        inner.push = false;
        inner.requests = false;
        Connection {
            inner: Arc::new(inner),
        }
    }

    /// A connection whose peer sends notifications (subscriptions included) but
    /// no requests, for a transport where the client has no way to answer (a
    /// stateless HTTP POST answered as a stream of server-sent events): every
    /// request fails at once with [`PeerError::Unsupported`] instead of waiting
    /// for an answer that cannot come.
    ///
    /// ```
    /// use switchboard::connection::{Connection, ConnectionConfig, PeerError};
    /// let (conn, outgoing) = Connection::notify_only(&ConnectionConfig::new());
    /// conn.peer().try_notify("progress", &[1]).unwrap();
    /// assert!(outgoing.try_recv().is_some());
    /// let asked = switchboard::connection::block_on(conn.peer().request("roots/list", &()));
    /// assert_eq!(asked.unwrap_err(), PeerError::Unsupported);
    /// ```
    pub fn notify_only(config: &ConnectionConfig) -> (Connection, Outgoing) {
        let (conn, outgoing) = Connection::new(config);
        let mut inner = Arc::into_inner(conn.inner).expect("not shared yet");
        inner.requests = false;
        (
            Connection {
                inner: Arc::new(inner),
            },
            outgoing,
        )
    }

    /// Whether the peer can send to the client (see [`Connection::answer_only`]).
    pub fn can_push(&self) -> bool {
        self.inner.push
    }

    /// This connection's number, unique in the process.
    pub fn id(&self) -> u64 {
        self.inner.id
    }

    /// The per-connection state.
    pub fn extensions(&self) -> &Extensions {
        &self.inner.extensions
    }

    /// A handle that sends to the client; it may be kept (by a background task,
    /// say) as long as wanted: once the connection closes it fails with
    /// [`PeerError::Closed`].
    pub fn peer(&self) -> Peer {
        Peer {
            inner: Arc::clone(&self.inner),
        }
    }

    /// Ends the connection for everyone: every pending request to the client
    /// fails at once with [`PeerError::Closed`], new ones and notifications are
    /// refused, and [`Connection::closed`] completes (the driver stops reading:
    /// this is the shutdown handle, LSP's `exit`). The responses of calls still
    /// running may still be queued; the driver decides how long it waits for
    /// them. Closing again does nothing.
    pub fn close(&self) {
        self.inner.pending.close();
        self.inner.subs.close_all();
        self.inner.closed.cancel();
    }

    /// The subscriptions open on this connection
    /// ([`RouterBuilder::subscription`](crate::RouterBuilder::subscription));
    /// 0 once it is closed.
    pub fn subscriptions(&self) -> usize {
        self.inner.subs.len()
    }

    /// Subscriptions closed because the client did not read (their buffer was
    /// full), since the connection began.
    pub fn subscriptions_overflowed(&self) -> u64 {
        self.inner.subs.overflowed()
    }

    /// Whether [`Connection::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.inner.closed.is_cancelled()
    }

    /// A future that completes when the connection is closed.
    pub fn closed(&self) -> Cancelled {
        self.inner.closed.cancelled()
    }

    /// Queues a whole message (valid JSON-RPC, unframed) for the client, waiting
    /// while the queue is full: for transports and drivers, which write the
    /// session's responses this way. Accepted after [`Connection::close`] (the
    /// answers of calls still running), refused once the driver dropped
    /// [`Outgoing`].
    ///
    /// Drivers write the session's responses this way, and that is what a
    /// subscription's notifications wait for: the first message queued that
    /// holds a new subscription's id (its subscribe answer) releases them,
    /// this future waiting for room for them too if the queue is full (they
    /// were accepted: no full policy applies).
    pub async fn send(&self, message: Vec<u8>) -> Result<(), PeerError> {
        let answered = self.inner.subs.answered_in(&message);
        let sent = self
            .inner
            .queue
            .send(Queued::plain(message))
            .await
            .map_err(|_| PeerError::Closed);
        if !answered.is_empty() {
            // Waits for room rather than overflow the notifications it frees.
            subscription::release(self, answered).await;
        }
        sent
    }

    /// Delivers a response from the client to the request awaiting it; `false`
    /// (and counted) when none awaits these exact id bytes.
    ///
    /// ```
    /// use switchboard::connection::{block_on, Connection, ConnectionConfig};
    /// use switchboard::{Message, Parser};
    /// let (conn, _outgoing) = Connection::new(&ConnectionConfig::new());
    /// let asked = conn.peer().request("ping", &()); // id 1, pending from now
    /// // A driver without a session parses what the client sent and delivers it.
    /// let mut parser = Parser::new();
    /// let Message::Response(r) = parser.parse(br#"{"jsonrpc":"2.0","result":"pong","id":1}"#) else {
    ///     panic!()
    /// };
    /// assert!(conn.deliver(&r));
    /// assert!(!conn.deliver(&r)); // the same answer again: dropped, and counted
    /// assert_eq!(conn.unmatched_responses(), 1);
    /// assert_eq!(block_on(asked).unwrap().as_bytes(), br#""pong""#);
    /// ```
    pub fn deliver(&self, response: &Response<'_>) -> bool {
        let outcome = || match response.outcome() {
            Ok(result) => Ok(OwnedValue::from_raw(result)),
            Err(error) => Err(PeerError::Rejected(error_object(error))),
        };
        let matched = self
            .inner
            .pending
            .complete(response.id().as_bytes(), outcome);
        if !matched {
            self.inner.unmatched.fetch_add(1, Ordering::Relaxed);
        }
        matched
    }

    /// Responses from the client that matched no waiting request (unknown ids,
    /// answers that came twice or too late), since the connection began.
    pub fn unmatched_responses(&self) -> u64 {
        self.inner.unmatched.load(Ordering::Relaxed)
    }

    /// Requests to the client still awaiting their answer.
    pub fn pending_requests(&self) -> usize {
        self.inner.pending.len()
    }

    /// The client's async calls still running (registered by
    /// [`Session::handle_concurrent`](crate::Session::handle_concurrent)).
    pub fn calls_in_flight(&self) -> usize {
        self.inner.in_flight.len()
    }

    /// Cancels the running call whose id has these exact bytes; `false` when
    /// there is none (finished already, or never seen).
    pub fn cancel_call(&self, id: &[u8]) -> bool {
        self.inner.in_flight.cancel(id)
    }

    /// Cancels every running call (a driver that stops waiting for them).
    pub fn cancel_all_calls(&self) {
        self.inner.in_flight.cancel_all();
    }

    /// The timer's step, for drivers: fails the requests whose deadline is `now`
    /// or earlier with [`PeerError::TimedOut`], returns the next deadline, and
    /// registers `cx`'s waker to be woken when an earlier one is set or the
    /// connection closes. A driver sleeps until the deadline it returns (or
    /// until woken) and calls it again.
    ///
    /// ```
    /// use std::task::{Context, Waker};
    /// use std::time::{Duration, Instant};
    /// use switchboard::connection::{block_on, Connection, ConnectionConfig, PeerError};
    /// let (conn, _outgoing) = Connection::new(&ConnectionConfig::new());
    /// let asked = conn.peer().request_with_timeout("ping", &(), Some(Duration::from_secs(30)));
    /// let mut cx = Context::from_waker(Waker::noop()); // a driver passes its task's
    /// // Nothing is due yet: the driver sleeps until the deadline it is given.
    /// let deadline = conn.poll_expire(&mut cx, Instant::now()).expect("a request waits");
    /// assert_eq!(conn.pending_requests(), 1);
    /// // At the deadline the request fails, and nothing else waits.
    /// assert_eq!(conn.poll_expire(&mut cx, deadline), None);
    /// assert_eq!(block_on(asked), Err(PeerError::TimedOut));
    /// ```
    pub fn poll_expire(&self, cx: &mut Context<'_>, now: Instant) -> Option<Instant> {
        self.inner.pending.poll_expire(cx, now)
    }

    /// Registers a running call for cancellation by id (`None`: no id to cancel
    /// it by); the guard removes it.
    pub(crate) fn register_call(&self, id: Option<&[u8]>) -> CallRegistration {
        let token = CancellationToken::new();
        let entry = id.map(|id| {
            let seq = self.inner.in_flight.register(id, token.clone());
            (Box::<[u8]>::from(id), seq)
        });
        CallRegistration {
            conn: self.clone(),
            token,
            entry,
        }
    }
}

impl fmt::Debug for Connection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Connection")
            .field("id", &self.inner.id)
            .field("closed", &self.is_closed())
            .field("pending_requests", &self.pending_requests())
            .field("calls_in_flight", &self.calls_in_flight())
            .finish_non_exhaustive()
    }
}

/// A running call's entry in the in-flight table, removed when dropped.
pub(crate) struct CallRegistration {
    conn: Connection,
    pub(crate) token: CancellationToken,
    entry: Option<(Box<[u8]>, u64)>,
}

impl Drop for CallRegistration {
    fn drop(&mut self) {
        if let Some((id, seq)) = &self.entry {
            self.conn.inner.in_flight.remove(id, *seq);
        }
    }
}

/// An error object from the client as an [`RpcError`]: its code (0 if it is not
/// an integer in range), message and data as sent.
fn error_object(error: RawValue<'_>) -> RpcError {
    let mut code = 0i32;
    let mut message = String::new();
    let mut data = None;
    if let Some(members) = error.object_iter() {
        for (key, value) in members {
            if key.eq_str("code") {
                code = value
                    .as_i64()
                    .and_then(|c| i32::try_from(c).ok())
                    .unwrap_or(0);
            } else if key.eq_str("message") {
                message = value.parse::<String>().unwrap_or_default();
            } else if key.eq_str("data") {
                data = Some(value.as_str().to_owned());
            }
        }
    }
    let e = RpcError::new(code, message);
    match data {
        Some(d) => e.with_data_json(d),
        None => e,
    }
}

/// Sends to the client of one connection: notifications, and requests whose
/// answers come back as futures. Clone and keep it as long as wanted.
///
/// ```
/// use switchboard::connection::{Connection, ConnectionConfig};
/// use switchboard::{Router, Session};
/// let router = Router::builder()
///     .method_async("slow_job", |call| async move {
///         // Kept by the handler (moved into its future), the peer reports progress.
///         let peer = call.connection().expect("attached").peer();
///         for pct in [50, 100] {
///             peer.notify("progress", &serde_json::json!({ "pct": pct })).await?;
///         }
///         Ok("finished")
///     })
///     .build()
///     .unwrap();
/// let (conn, outgoing) = Connection::new(&ConnectionConfig::new());
/// let mut session = Session::new(router);
/// session.attach(conn.clone());
/// let answer = session.handle(br#"{"jsonrpc":"2.0","method":"slow_job","id":1}"#).unwrap();
/// assert_eq!(answer, br#"{"jsonrpc":"2.0","result":"finished","id":1}"#);
/// assert_eq!(outgoing.try_recv().unwrap(), br#"{"jsonrpc":"2.0","method":"progress","params":{"pct":50}}"#);
/// assert_eq!(outgoing.try_recv().unwrap(), br#"{"jsonrpc":"2.0","method":"progress","params":{"pct":100}}"#);
/// assert_eq!(conn.peer().connection_id(), conn.id());
/// ```
#[derive(Clone)]
pub struct Peer {
    inner: Arc<Inner>,
}

impl fmt::Debug for Peer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Peer")
            .field("connection", &self.inner.id)
            .finish()
    }
}

/// The params' JSON text, which must be an array or an object (`()` and other
/// values that serialize to `null` mean none).
fn params_json<P: Serialize + ?Sized>(params: &P) -> Result<Option<Vec<u8>>, PeerError> {
    let mut json = Vec::with_capacity(64);
    write::to_vec_into(&mut json, params)
        .map_err(|e| PeerError::InvalidParams(format!("could not be serialized: {e}")))?;
    match json.first() {
        Some(b'[' | b'{') => Ok(Some(json)),
        Some(b'n') => Ok(None),
        _ => Err(PeerError::InvalidParams(
            "must be an array or an object".into(),
        )),
    }
}

/// Checks raw params: one JSON array or object.
fn raw_params(params: Option<&[u8]>) -> Result<Option<&[u8]>, PeerError> {
    let Some(p) = params else { return Ok(None) };
    match RawValue::from_validated(p) {
        Some(v)
            if crate::dispatch::handler::is_one_json_value(p)
                && matches!(v.kind(), Kind::Array | Kind::Object) =>
        {
            Ok(Some(p))
        }
        _ => Err(PeerError::InvalidParams(
            "must be one JSON array or object".into(),
        )),
    }
}

impl Peer {
    /// The connection's number ([`Connection::id`]).
    pub fn connection_id(&self) -> u64 {
        self.inner.id
    }

    /// Whether the connection is closed (every send fails).
    pub fn is_closed(&self) -> bool {
        self.inner.closed.is_cancelled()
    }

    /// Sends a notification (`params`: anything that serializes to a JSON array
    /// or object; `()` for none), waiting while the outgoing queue is full.
    pub async fn notify<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<(), PeerError> {
        let msg = self.notification(method, params_json(params)?.as_deref())?;
        self.enqueue(msg).await
    }

    /// [`Peer::notify`] without waiting, for sync code: [`PeerError::Full`] when
    /// the outgoing queue is full.
    pub fn try_notify<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<(), PeerError> {
        let msg = self.notification(method, params_json(params)?.as_deref())?;
        self.inner
            .queue
            .try_send(Queued::plain(msg))
            .map_err(|e| match e {
                async_channel::TrySendError::Full(_) => PeerError::Full,
                async_channel::TrySendError::Closed(_) => PeerError::Closed,
            })
    }

    /// [`Peer::notify`] with params given as JSON text (checked).
    pub async fn notify_raw(&self, method: &str, params: Option<&[u8]>) -> Result<(), PeerError> {
        let msg = self.notification(method, raw_params(params)?)?;
        self.enqueue(msg).await
    }

    fn notification(&self, method: &str, params: Option<&[u8]>) -> Result<Vec<u8>, PeerError> {
        if !self.inner.push {
            return Err(PeerError::Unsupported);
        }
        if self.is_closed() {
            return Err(PeerError::Closed);
        }
        let mut msg = Vec::with_capacity(48 + method.len() + params.map_or(0, <[u8]>::len));
        crate::envelope::notification(&mut msg, method, params);
        Ok(msg)
    }

    async fn enqueue(&self, msg: Vec<u8>) -> Result<(), PeerError> {
        self.inner
            .queue
            .send(Queued::plain(msg))
            .await
            .map_err(|_| PeerError::Closed)
    }

    /// Sends a request and awaits the client's answer: its result, or
    /// [`PeerError::Rejected`] with its error object, [`PeerError::TimedOut`]
    /// after the connection's request timeout, [`PeerError::Closed`] if the
    /// connection closes first. The id is the connection's to allocate: never
    /// one another pending request has. Dropping the future forgets the
    /// request (a late answer is then unmatched).
    pub fn request<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
    ) -> impl Future<Output = Result<OwnedValue, PeerError>> + Send + 'static + use<P> {
        self.request_with_timeout(method, params, self.inner.request_timeout)
    }

    /// [`Peer::request`] with its own timeout (`None`: none).
    pub fn request_with_timeout<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
        timeout: Option<Duration>,
    ) -> impl Future<Output = Result<OwnedValue, PeerError>> + Send + 'static + use<P> {
        let start =
            params_json(params).and_then(|p| self.start_request(method, p.as_deref(), timeout));
        self.finish_request(start)
    }

    /// [`Peer::request`] with params given as JSON text (checked).
    pub fn request_raw(
        &self,
        method: &str,
        params: Option<&[u8]>,
    ) -> impl Future<Output = Result<OwnedValue, PeerError>> + Send + 'static + use<> {
        let timeout = self.inner.request_timeout;
        let start = raw_params(params).and_then(|p| self.start_request(method, p, timeout));
        self.finish_request(start)
    }

    /// Queues a started request and awaits its answer (it is pending from its
    /// start: an answer cannot come before it is awaited).
    fn finish_request(
        &self,
        start: Result<(Box<[u8]>, Vec<u8>), PeerError>,
    ) -> impl Future<Output = Result<OwnedValue, PeerError>> + Send + 'static + use<> {
        // The guard exists before the future is first polled: dropping the
        // future unpolled still forgets the request.
        let started = start.map(|(id, msg)| {
            let inner = Arc::clone(&self.inner);
            (Waiting { inner, id }, msg)
        });
        async move {
            let (waiting, msg) = started?;
            waiting
                .inner
                .queue
                .send(Queued::plain(msg))
                .await
                .map_err(|_| PeerError::Closed)?;
            waiting.await
        }
    }

    /// Allocates the id, registers it as pending and writes the request.
    fn start_request(
        &self,
        method: &str,
        params: Option<&[u8]>,
        timeout: Option<Duration>,
    ) -> Result<(Box<[u8]>, Vec<u8>), PeerError> {
        if !self.inner.requests {
            return Err(PeerError::Unsupported);
        }
        let n = self.inner.next_request.fetch_add(1, Ordering::Relaxed);
        let mut id = Vec::with_capacity(20);
        write::write_u64(&mut id, n);
        let id: Box<[u8]> = id.into();
        let deadline = timeout.map(|t| Instant::now() + t);
        self.inner.pending.insert(id.clone(), deadline)?;
        let mut msg = Vec::with_capacity(56 + method.len() + params.map_or(0, <[u8]>::len));
        crate::envelope::request(&mut msg, method, params, &id);
        Ok((id, msg))
    }
}

/// A request's wait for its answer; dropping it forgets the request.
struct Waiting {
    inner: Arc<Inner>,
    id: Box<[u8]>,
}

impl Future for Waiting {
    type Output = Result<OwnedValue, PeerError>;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.inner.pending.poll(&self.id, cx)
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        self.inner.pending.remove(&self.id);
    }
}

#[cfg(test)]
mod tests;
