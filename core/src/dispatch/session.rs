//! One session per thread or connection: reusable parser state and response buffer.

use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use super::async_call::{AsyncResult, block_on};
use super::handler::{Call, ResultWriter, RpcError};
use super::middleware::{Layers, Outcome, Pending, Refusal};
use super::router::{Entry, Handler, Router};
use super::trace;
use crate::connection::{CallRegistration, Cancelled, Connection};
use crate::envelope::{self, HEAD, HEAD_RESULT, RESULT, end_response};
use crate::long::{LongValues, Record};
use crate::parse::{Error, Id, Item, Message, Notification, Parser, Reason, Request, Response};

/// Handles messages against a shared [`Router`], writing each response into a
/// buffer it reuses: after warm-up, a message costs no heap allocation in the core
/// (calls to async methods excepted: each allocates its call, future and result).
/// Not safe for concurrent use: give each thread or connection its own.
///
/// ```
/// use switchboard::{Router, Session};
/// let router = Router::builder().method("ping", |_, out| out.str("pong")).build().unwrap();
/// let mut a = Session::new(router.clone()); // sessions share the router
/// let mut b = Session::new(router);
/// assert_eq!(a.handle(br#"{"jsonrpc":"2.0","method":"ping","id":"x"}"#).unwrap(),
///            br#"{"jsonrpc":"2.0","result":"pong","id":"x"}"#);
/// assert_eq!(b.handle(br#"{"jsonrpc":"2.0","method":"nope","id":2}"#).unwrap(),
///            br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found","data":{"field":"method","reason":"is not registered"}},"id":2}"#);
/// ```
pub struct Session {
    router: Arc<Router>,
    parser: Parser,
    out: Vec<u8>,
    dropped_responses: u64,
    /// The long values of the message being handled ([`crate::long`]).
    long: LongValues,
    /// The connection the messages come on, if attached.
    conn: Option<Connection>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("router", &self.router)
            .field("dropped_responses", &self.dropped_responses)
            .field("connection", &self.conn)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// A session for `router`, with the router's parser limits.
    pub fn new(router: Arc<Router>) -> Self {
        let parser = Parser::with_config(*router.config());
        Session {
            router,
            parser,
            out: Vec::with_capacity(256),
            dropped_responses: 0,
            long: LongValues::default(),
            conn: None,
        }
    }

    /// Attaches the session to the connection its messages come on (replacing
    /// any earlier one): handlers reach it through [`Call::connection`] and
    /// [`OwnedCall::connection`](crate::OwnedCall::connection); the client's
    /// responses go to the connection's pending requests
    /// ([`Connection::deliver`]; unmatched ones then to the router's sink, or
    /// are dropped and counted); the router's cancel notification
    /// ([`RouterBuilder::cancel_notification`](crate::RouterBuilder::cancel_notification))
    /// cancels the calls running on it. A connection's driver does this.
    pub fn attach(&mut self, conn: Connection) {
        self.conn = Some(conn);
    }

    /// Detaches the session from its connection, returning it.
    pub fn detach(&mut self) -> Option<Connection> {
        self.conn.take()
    }

    /// The connection the session is attached to.
    pub fn connection(&self) -> Option<&Connection> {
        self.conn.as_ref()
    }

    /// The router this session dispatches to.
    pub fn router(&self) -> &Arc<Router> {
        &self.router
    }

    /// Gives back the memory of a large response: the response buffer keeps at most
    /// `capacity` bytes (it otherwise keeps up to 1 MiB between messages, and gives
    /// more back only at the next message). A transport that has copied a large
    /// response out calls this so that an idle connection holds a small constant
    /// whatever it answered last. The last response's bytes are gone after it.
    ///
    /// ```
    /// use switchboard::{Router, Session};
    /// let router = Router::builder().method("big", |_, out| out.str(&"x".repeat(1 << 20))).build().unwrap();
    /// let mut session = Session::new(router);
    /// let answer = session.handle(br#"{"jsonrpc":"2.0","method":"big","id":1}"#).unwrap().to_vec();
    /// assert!(answer.len() > 1 << 20);
    /// session.shrink_to(64 << 10); // idle now: keeps 64 KiB at most
    /// assert!(session.handle(br#"{"jsonrpc":"2.0","method":"big","id":2}"#).is_some());
    /// ```
    pub fn shrink_to(&mut self, capacity: usize) {
        if self.out.capacity() > capacity {
            self.out.clear();
            self.out.shrink_to(capacity);
        }
    }

    /// Response objects received without a sink registered, since the session began.
    pub fn dropped_responses(&self) -> u64 {
        self.dropped_responses
    }

    /// Handles one whole message: the complete response bytes, valid until the next
    /// call, or `None` when nothing is to be sent (notifications, responses, a batch
    /// of them). Never panics on any input; a handler that panics is answered -32603.
    ///
    /// Async methods ([`RouterBuilder::method_async`](crate::RouterBuilder::method_async))
    /// are driven to completion here, one after the other, by a tiny executor that
    /// parks this thread while a future is pending. That serves futures that need no
    /// runtime (or that are woken by other threads), but not those that need a
    /// runtime's reactor, such as tokio's I/O and timers: outside their runtime they
    /// panic, which is answered -32603 like any panicking handler; inside a runtime's
    /// thread they would block it. Use [`Session::handle_async`] inside that runtime
    /// for them.
    pub fn handle(&mut self, input: &[u8]) -> Option<&[u8]> {
        if layered(&self.router) {
            return self.handle_layered(input);
        }
        if input.len() >= crate::long::LONG {
            return self.handle_long(input);
        }
        self.handle_with::<false, false>(input)
    }

    /// [`Session::handle`] for a message that may hold long values
    /// ([`crate::long`]), out of line: short messages keep the plain path.
    #[inline(never)]
    fn handle_long(&mut self, input: &[u8]) -> Option<&[u8]> {
        self.handle_with::<true, false>(input)
    }

    /// [`Session::handle`] under the router's middleware (or with the calls
    /// traced), out of line: without either, a message pays two branches.
    #[inline(never)]
    fn handle_layered(&mut self, input: &[u8]) -> Option<&[u8]> {
        if input.len() >= crate::long::LONG {
            return self.handle_with::<true, true>(input);
        }
        self.handle_with::<false, true>(input)
    }

    #[inline(always)]
    fn handle_with<const LONG: bool, const L: bool>(&mut self, input: &[u8]) -> Option<&[u8]> {
        let Session {
            router,
            parser,
            long,
            out,
            dropped_responses,
            conn,
        } = self;
        // Nothing is deferred here: no place for futures at all.
        let mut pass = Pass {
            router,
            out,
            dropped: dropped_responses,
            conn: conn.as_ref(),
            deferred: NoDefer,
        };
        let shape = pass.begin::<LONG, L>(parser, long, input);
        if shape.finish(pass.out) {
            Some(&self.out)
        } else {
            None
        }
    }

    /// Like [`Session::handle`], for async callers: the same answers for every
    /// message, but the futures of async methods are awaited instead of blocked on,
    /// so a runtime's reactor (tokio I/O, timers) serves them.
    ///
    /// Sync handlers run inline exactly as in [`Session::handle`], and a message
    /// without async methods is answered without allocating (the returned future
    /// is then ready at its first poll). In a batch, the sync calls are answered
    /// first, in input order, then all the batch's async calls are polled
    /// concurrently (on the task awaiting this future: they interleave, they do not
    /// run in parallel; spawn inside a handler for that) and their responses follow,
    /// in input order. Async calls refused before a future exists (typed params that
    /// do not fit, a handler that panics before returning its future) are answered
    /// with the sync ones. Notifications to async methods run and are never
    /// answered. A future that panics is answered -32603 as a panicking sync handler
    /// is, and the session stays usable.
    ///
    /// The returned future borrows the session (and the input) until it completes;
    /// the response it yields is valid until the session's next call. Dropping the
    /// future early drops the pending handler futures and leaves the session usable.
    ///
    /// ```
    /// use std::future::Future;
    /// use std::task::{Context, Poll, Waker};
    /// use switchboard::{Router, Session};
    ///
    /// let router = Router::builder()
    ///     .method_async("slow_double", |call| async move {
    ///         let (n,): (i64,) = call.params().unwrap().parse()?;
    ///         Ok(n * 2) // an `.await` on real I/O would go here
    ///     })
    ///     .method("ping", |_, out| out.str("pong"))
    ///     .build()
    ///     .unwrap();
    /// let mut session = Session::new(router);
    /// let input = br#"[{"jsonrpc":"2.0","method":"slow_double","params":[21],"id":1},
    ///                  {"jsonrpc":"2.0","method":"ping","id":2}]"#;
    ///
    /// // Inside a runtime this is just `session.handle_async(input).await`; here a
    /// // minimal executor polls it.
    /// let mut fut = std::pin::pin!(session.handle_async(input));
    /// let mut cx = Context::from_waker(Waker::noop());
    /// let resp = loop {
    ///     if let Poll::Ready(r) = fut.as_mut().poll(&mut cx) { break r; }
    /// };
    /// // The sync call first, then the async one (a batch's answers may come in any order).
    /// assert_eq!(resp.unwrap(), br#"[{"jsonrpc":"2.0","result":"pong","id":2},{"jsonrpc":"2.0","result":42,"id":1}]"#);
    /// ```
    pub async fn handle_async(&mut self, input: &[u8]) -> Option<&[u8]> {
        let Session {
            router,
            parser,
            long,
            out,
            dropped_responses,
            conn,
        } = self;
        let mut pass = Pass {
            router,
            out,
            dropped: dropped_responses,
            conn: conn.as_ref(),
            deferred: Vec::new(),
        };
        // The long path whatever the length: a short message notes nothing
        // (and its params carry no record); the async path is not the one to shave.
        let mut shape = pass.begin_any::<true>(parser, long, input);
        if !pass.deferred.is_empty() {
            pass.deferred_calls(&mut shape).await;
        }
        if shape.finish(pass.out) {
            Some(&self.out)
        } else {
            None
        }
    }

    /// Handles one message for a connection's driver, which runs the calls of
    /// one connection concurrently: sync handlers run inline exactly as in
    /// [`Session::handle`] (a message without async methods allocates nothing),
    /// and the message's async calls are handed back as one `'static` future,
    /// [`RunningCalls`], to spawn, instead of being awaited. Its output is what
    /// to send once they complete.
    ///
    /// A request alone is answered either now ([`Handled::response`]) or by its
    /// future. A batch with async calls is answered whole by the future (the
    /// sync calls' answers first, in input order, then the async ones', in input
    /// order); without, now.
    ///
    /// When the session is attached to a connection ([`Session::attach`]), each
    /// async request is registered by its id for the router's cancel
    /// notification: its token ([`OwnedCall::cancellation`](crate::OwnedCall::cancellation))
    /// fires, the future spawned drops the handler's future and answers as the
    /// [`CancelRule`](crate::connection::CancelRule) says (or leaves the call
    /// unanswered).
    ///
    /// ```
    /// use switchboard::connection::block_on;
    /// use switchboard::{Router, Session};
    ///
    /// let router = Router::builder()
    ///     .method_async("later", |_call| async { Ok("done") })
    ///     .method("now", |_, out| out.str("here"))
    ///     .build()
    ///     .unwrap();
    /// let mut session = Session::new(router);
    /// let h = session.handle_concurrent(br#"{"jsonrpc":"2.0","method":"now","id":1}"#);
    /// assert_eq!(h.response.unwrap(), br#"{"jsonrpc":"2.0","result":"here","id":1}"#);
    /// assert!(h.calls.is_none());
    /// let h = session.handle_concurrent(br#"{"jsonrpc":"2.0","method":"later","id":2}"#);
    /// assert!(h.response.is_none());
    /// let running = h.calls.unwrap(); // tokio::spawn(running) in a driver
    /// assert_eq!(block_on(running).unwrap(), br#"{"jsonrpc":"2.0","result":"done","id":2}"#);
    /// ```
    pub fn handle_concurrent(&mut self, input: &[u8]) -> Handled<'_> {
        let Session {
            router,
            parser,
            long,
            out,
            dropped_responses,
            conn,
        } = self;
        let mut pass = Pass {
            router,
            out,
            dropped: dropped_responses,
            conn: conn.as_ref(),
            deferred: Vec::new(),
        };
        let shape = if input.len() >= crate::long::LONG {
            pass.begin_any::<true>(parser, long, input)
        } else {
            pass.begin_any::<false>(parser, long, input)
        };
        if pass.deferred.is_empty() {
            let wrote = shape.finish(pass.out);
            return Handled {
                response: wrote.then_some(&self.out[..]),
                calls: None,
            };
        }
        let calls = pass
            .deferred
            .drain(..)
            .map(|d| (d.id.map(|id| Box::from(id.as_bytes())), d.call))
            .collect();
        // A batch's sync answers so far travel with its async calls.
        let head = if shape.batch {
            pass.out.clone()
        } else {
            Vec::new()
        };
        let cancel_answer = pass
            .router
            .cancel_rule()
            .and_then(|r| r.answer_error())
            .cloned();
        Handled {
            response: None,
            calls: Some(RunningCalls {
                out: head,
                shape,
                calls,
                cancel_answer,
            }),
        }
    }

    /// Like [`Session::handle`], appending the response to `dst` instead; returns
    /// whether anything was appended.
    pub fn handle_into(&mut self, input: &[u8], dst: &mut Vec<u8>) -> bool {
        match self.handle(input) {
            Some(resp) => {
                dst.extend_from_slice(resp);
                true
            }
            None => false,
        }
    }
}

/// Whether a message takes the path that runs middleware and times calls: the
/// router has middleware, or a subscriber wants the per-call events
/// ([`super::trace`]; always `false` without the `tracing` feature).
#[inline(always)]
fn layered(router: &Router) -> bool {
    router.layers().is_some() || trace::wanted()
}

/// The response buffer capacity a session keeps between messages (larger ones are
/// given back at the next message).
const RETAINED_OUT: usize = 1 << 20;

/// Why a call has no result.
enum Failure {
    /// The handler (or its future) returned this error.
    Handler(RpcError),
    /// The handler, its future or its typed params' decoding panicked.
    Panicked,
    /// The call was cancelled (its future dropped).
    Cancelled,
}

impl Failure {
    /// The failure as middleware sees it.
    fn seen(&self) -> Outcome<'_> {
        match self {
            Failure::Handler(e) => Outcome::Error(e),
            Failure::Panicked => Outcome::Panicked,
            Failure::Cancelled => Outcome::Cancelled,
        }
    }
}

/// A failed call's `warn` event, if it failed on the server's side; out of
/// line, so that the error path inlined into every call stays one call.
#[cold]
#[inline(never)]
fn warn_failure(method: &str, failure: &Failure) {
    trace::failure(method, failure.seen());
}

/// Runs `f`, containing a panic: every place the session runs code it does not
/// own (handlers, futures, the response sink, destructors) goes through here.
#[inline(always)]
fn contained<R>(f: impl FnOnce() -> R) -> Result<R, Failure> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|_| Failure::Panicked)
}

/// [`contained`] for a handler that may fail: its error or its panic.
#[inline(always)]
fn contained_call<T>(f: impl FnOnce() -> Result<T, RpcError>) -> Result<T, Failure> {
    match contained(f) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(Failure::Handler(e)),
        Err(panicked) => Err(panicked),
    }
}

/// An async call whose future is awaited after the message's sync calls.
struct Deferred<'a> {
    /// `None` for a notification.
    id: Option<Id<'a>>,
    call: Running,
}

/// An async call's future and, once it completed, its outcome.
struct Running {
    /// Running until `outcome` is set.
    future: Option<AsyncResult>,
    /// The serialized result, or why there is none.
    outcome: Option<Result<Vec<u8>, Failure>>,
    /// Its entry in the connection's in-flight table (and its token).
    reg: Option<CallRegistration>,
    /// Wakes the call's task when the token fires.
    cancelled: Option<Cancelled>,
    /// Under middleware: what its layers' `after` needs, run when it ends.
    pending: Option<Box<Pending>>,
}

impl Running {
    fn new(
        future: AsyncResult,
        reg: Option<CallRegistration>,
        pending: Option<Box<Pending>>,
    ) -> Self {
        Running {
            future: Some(future),
            outcome: None,
            reg,
            cancelled: None,
            pending,
        }
    }

    /// Polls the future unless it completed; whether it has. A cancelled call
    /// completes at once: its future is dropped unpolled.
    fn poll(&mut self, cx: &mut Context<'_>) -> bool {
        let Some(fut) = self.future.as_mut() else {
            return true;
        };
        let token = self.reg.as_ref().map(|r| &r.token);
        if token.is_some_and(|t| t.is_cancelled()) {
            return self.finish(Err(Failure::Cancelled));
        }
        match contained(|| fut.as_mut().poll(cx)) {
            Ok(Poll::Pending) => {
                let Some(token) = token else { return false };
                let cancelled = self.cancelled.get_or_insert_with(|| token.cancelled());
                if Pin::new(cancelled).poll(cx).is_ready() {
                    return self.finish(Err(Failure::Cancelled));
                }
                false
            }
            Ok(Poll::Ready(r)) => self.finish(r.map_err(Failure::Handler)),
            Err(panicked) => self.finish(Err(panicked)),
        }
    }

    fn finish(&mut self, outcome: Result<Vec<u8>, Failure>) -> bool {
        drop_quietly(self.future.take());
        if let Some(pending) = self.pending.take() {
            pending.report(match &outcome {
                Ok(_) => Outcome::Ok,
                Err(failure) => failure.seen(),
            });
        }
        self.outcome = Some(outcome);
        self.cancelled = None;
        // Answered (or about to be): a cancel for it now finds nothing.
        self.reg = None;
        true
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        drop_quietly(self.future.take());
        // Dropped before it completed: its connection or its caller went away.
        if let Some(pending) = self.pending.take() {
            pending.report(Outcome::Cancelled);
        }
    }
}

/// What [`Session::handle_concurrent`] made of a message.
///
/// ```
/// use switchboard::connection::block_on;
/// use switchboard::{Handled, Router, Session};
///
/// /// A driver's step: send what is ready now, spawn what is not (run here at once).
/// fn step(session: &mut Session, input: &[u8], sent: &mut Vec<Vec<u8>>) {
///     let Handled { response, calls } = session.handle_concurrent(input);
///     if let Some(bytes) = response {
///         sent.push(bytes.to_vec());
///     }
///     if let Some(running) = calls {
///         // A tokio driver: `tokio::spawn(async move { if let Some(b) = running.await { ... } })`.
///         if let Some(bytes) = block_on(running) {
///             sent.push(bytes);
///         }
///     }
/// }
///
/// let router = Router::builder()
///     .method("now", |_, out| out.str("here"))
///     .method_async("later", |_call| async { Ok("done") })
///     .build()
///     .unwrap();
/// let mut session = Session::new(router);
/// let mut sent = Vec::new();
/// step(&mut session, br#"{"jsonrpc":"2.0","method":"now","id":1}"#, &mut sent);
/// step(&mut session, br#"{"jsonrpc":"2.0","method":"later","id":2}"#, &mut sent);
/// step(&mut session, br#"{"jsonrpc":"2.0","method":"now"}"#, &mut sent); // a notification
/// assert_eq!(sent, [
///     br#"{"jsonrpc":"2.0","result":"here","id":1}"#.to_vec(),
///     br#"{"jsonrpc":"2.0","result":"done","id":2}"#.to_vec(),
/// ]);
/// ```
#[derive(Debug)]
#[must_use]
pub struct Handled<'s> {
    /// What to send now (valid until the session's next call), if anything.
    pub response: Option<&'s [u8]>,
    /// The message's async calls, to spawn; what they yield is sent when they
    /// complete.
    pub calls: Option<RunningCalls>,
}

/// The async calls of one message, handed out by [`Session::handle_concurrent`]:
/// a `'static` future (spawn it) yielding the bytes to send when all have
/// completed (`None`: nothing to send, e.g. notifications or a cancelled MCP
/// call). A handler's panic is answered -32603; dropping this future drops the
/// handlers' futures and forgets the calls.
///
/// ```
/// use switchboard::connection::block_on;
/// use switchboard::{Router, Session};
/// let router = Router::builder()
///     .method("now", |_, out| out.str("here"))
///     .method_async("later", |_call| async { Ok("done") })
///     .build()
///     .unwrap();
/// let mut session = Session::new(router);
/// let batch = br#"[{"jsonrpc":"2.0","method":"now","id":1},{"jsonrpc":"2.0","method":"later","id":2}]"#;
/// let handled = session.handle_concurrent(batch);
/// // The batch is answered as one array, so it waits for its async call.
/// assert!(handled.response.is_none());
/// let running = handled.calls.unwrap();
/// assert_eq!(running.running(), 1);
/// // A driver would `tokio::spawn(running)` and send what it yields.
/// let answer = block_on(running).unwrap();
/// assert_eq!(
///     answer,
///     br#"[{"jsonrpc":"2.0","result":"here","id":1},{"jsonrpc":"2.0","result":"done","id":2}]"#
/// );
/// ```
#[must_use = "futures do nothing unless polled"]
pub struct RunningCalls {
    /// The answer being written (a batch's sync answers are in it already).
    out: Vec<u8>,
    shape: Shape,
    calls: Vec<(Option<Box<[u8]>>, Running)>,
    cancel_answer: Option<RpcError>,
}

impl RunningCalls {
    /// The calls still running.
    pub fn running(&self) -> usize {
        self.calls
            .iter()
            .filter(|(_, c)| c.future.is_some())
            .count()
    }
}

impl std::fmt::Debug for RunningCalls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunningCalls")
            .field("calls", &self.calls.len())
            .field("running", &self.running())
            .finish_non_exhaustive()
    }
}

impl Future for RunningCalls {
    type Output = Option<Vec<u8>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let mut all_done = true;
        for (_, call) in &mut this.calls {
            all_done &= call.poll(cx);
        }
        if !all_done {
            return Poll::Pending;
        }
        for (id, mut call) in std::mem::take(&mut this.calls) {
            // Notifications are never answered.
            if let (Some(id), Some(outcome)) = (id, call.outcome.take()) {
                let answer = this.cancel_answer.as_ref();
                write_deferred(&mut this.out, &mut this.shape, &id, outcome, answer);
            }
        }
        let wrote = this.shape.finish(&mut this.out);
        this.shape.batch = false; // finished: a second poll adds no `]`
        Poll::Ready(wrote.then(|| std::mem::take(&mut this.out)))
    }
}

/// Where a [`Pass`] puts the async calls it defers.
trait DeferTo<'a> {
    /// Whether calls are deferred at all: without, an async handler's future is
    /// blocked on where it is called, and the deferring paths are compiled out.
    const DEFERS: bool;

    fn defer(&mut self, d: Deferred<'a>);
}

/// [`Session::handle_async`]'s: the futures are awaited after the sync pass.
impl<'a> DeferTo<'a> for Vec<Deferred<'a>> {
    const DEFERS: bool = true;

    #[inline]
    fn defer(&mut self, d: Deferred<'a>) {
        self.push(d);
    }
}

/// [`Session::handle`]'s: a call is never deferred.
struct NoDefer;

impl<'a> DeferTo<'a> for NoDefer {
    const DEFERS: bool = false;

    #[inline]
    fn defer(&mut self, d: Deferred<'a>) {
        debug_assert!(false, "a call deferred without DEFERS");
        drop(d);
    }
}

/// What the sync pass over a message left to finish.
#[derive(Clone, Copy, Debug)]
struct Shape {
    /// A batch: `[` is written, `]` is not yet.
    batch: bool,
    /// Whether a response has been written.
    wrote: bool,
}

impl Shape {
    /// Prepares `out` for one more response: a `,` after an earlier one in a batch.
    fn open_response(&mut self, out: &mut Vec<u8>) {
        if self.batch && self.wrote {
            out.push(b',');
        }
        self.wrote = true;
    }

    /// Closes a batch; returns whether there is anything to send.
    fn finish(&self, out: &mut Vec<u8>) -> bool {
        if self.batch {
            out.push(b']');
        }
        self.wrote
    }
}

/// One pass over a message: answers every item whose handler is sync, in input
/// order, appending the responses to `out`; async calls go to `deferred`
/// ([`DeferTo`]), or are blocked on where they are called.
struct Pass<'s, D> {
    router: &'s Router,
    out: &'s mut Vec<u8>,
    /// Response objects received without a sink registered.
    dropped: &'s mut u64,
    /// The connection the message came on.
    conn: Option<&'s Connection>,
    deferred: D,
}

impl<'a, D: DeferTo<'a>> Pass<'_, D> {
    /// Clears `out`, parses `input` and answers its items ([`Pass::message`]).
    /// With `LONG` (a message of [`crate::long::LONG`] bytes or more), the
    /// message's long values are noted in `long`, and the params its handlers
    /// get carry a [`Record`] of them ([`crate::long`]), which borrows `long`
    /// as long as they live.
    #[inline(always)]
    fn begin<const LONG: bool, const L: bool>(
        &mut self,
        parser: &'a mut Parser,
        long: &'a mut LongValues,
        input: &'a [u8],
    ) -> Shape {
        self.out.clear();
        if self.out.capacity() > RETAINED_OUT {
            // A huge response is not kept around for the small ones that follow.
            self.out.shrink_to(RETAINED_OUT);
        }
        if !LONG {
            let message = parser.parse(input);
            return self.message::<L>(message, Record::NONE);
        }
        long.clear();
        let message = parser.parse_noting(input, Some(&mut *long));
        self.message::<L>(message, long.record(input))
    }

    /// [`Pass::begin`], under the router's middleware if it has any.
    #[inline(always)]
    fn begin_any<const LONG: bool>(
        &mut self,
        parser: &'a mut Parser,
        long: &'a mut LongValues,
        input: &'a [u8],
    ) -> Shape {
        if layered(self.router) {
            self.begin::<LONG, true>(parser, long, input)
        } else {
            self.begin::<LONG, false>(parser, long, input)
        }
    }

    /// Answers every item of `message` whose handler is sync; the params of
    /// its calls carry `long`, the record of its long values.
    #[inline(always)]
    fn message<const L: bool>(&mut self, message: Message<'a>, long: Record<'a>) -> Shape {
        let wrote = match message {
            Message::Batch(batch) => {
                self.out.push(b'[');
                let mut any = false;
                for item in batch.iter() {
                    let mark = self.out.len();
                    if any {
                        self.out.push(b',');
                    }
                    if self.item::<L>(item, long) {
                        any = true;
                    } else {
                        self.out.truncate(mark);
                    }
                }
                return Shape {
                    batch: true,
                    wrote: any,
                };
            }
            Message::Request(r) => self.request::<L>(r, long),
            Message::Notification(n) => self.notification::<L>(n, long),
            Message::Response(r) => self.response(r),
            Message::Error(e) => self.error(e),
        };
        Shape {
            batch: false,
            wrote,
        }
    }

    /// Answers one item; whether it wrote a response (a deferred call did not).
    #[inline(always)]
    fn item<const L: bool>(&mut self, item: Item<'a>, long: Record<'a>) -> bool {
        match item {
            Item::Request(r) => self.request::<L>(r, long),
            Item::Notification(n) => self.notification::<L>(n, long),
            Item::Response(r) => self.response(r),
            Item::Error(e) => self.error(e),
        }
    }

    /// Answers a request, or defers it.
    #[inline(always)]
    fn request<const L: bool>(&mut self, r: Request<'a>, long: Record<'a>) -> bool {
        let call = Call {
            method: r.method(),
            id: Some(r.id()),
            params: r.params_in(long),
            conn: self.conn,
            token: None,
        };
        let mark = self.out.len();
        // The head and the result's name in one copy; `call_into` replaces
        // the name with the error member if there is no result.
        self.out.extend_from_slice(HEAD_RESULT);
        let start = self.out.len() - RESULT.len();
        let deferred = self.call_into::<L>(&call, Some(r.id()), start);
        // Without `DEFERS` nothing is ever deferred: the branch is compiled out.
        if D::DEFERS && deferred {
            self.out.truncate(mark);
            return false;
        }
        end_response(self.out, r.id().as_bytes());
        true
    }

    /// Runs a notification's handler, or defers it; never answered, not even
    /// with an error.
    #[inline(always)]
    fn notification<const L: bool>(&mut self, n: Notification<'a>, long: Record<'a>) -> bool {
        if let Some(conn) = self.conn {
            cancel_named(conn, self.router, &n);
        }
        let call = Call {
            method: n.method(),
            id: None,
            params: n.params_in(long),
            conn: self.conn,
            token: None,
        };
        let mark = self.out.len();
        self.call_into::<L>(&call, None, mark);
        self.out.truncate(mark);
        false
    }

    /// Hands a response object to the router's sink (or counts it dropped).
    #[inline(always)]
    fn response(&mut self, r: Response<'a>) -> bool {
        if let Some(conn) = self.conn
            && conn.deliver(&r)
        {
            return false;
        }
        match self.router.response_sink() {
            // A panicking sink must not take the session down.
            Some(sink) => drop(contained(|| sink(&r))),
            None => *self.dropped += 1,
        }
        false
    }

    /// Answers an item the parser refused.
    #[inline(always)]
    fn error(&mut self, e: Error<'a>) -> bool {
        envelope::core_error_response(self.out, &e);
        true
    }

    /// Looks the method up and runs its handler, appending the result's value
    /// after `out[start..]` (`"result":`, written by the caller: for a
    /// notification, whose answer is discarded, nothing) or replacing
    /// `out[start..]` with `"error":…`. With `DEFERS`, an async handler's future
    /// is deferred instead, under `id` (`out` cut back to `start`; returns
    /// `true`); without, it is driven to completion here. (Returning the future
    /// instead cost every sync call its drop check: +30 instructions.)
    #[inline(always)]
    fn call_into<const L: bool>(
        &mut self,
        call: &Call<'_>,
        id: Option<Id<'a>>,
        start: usize,
    ) -> bool {
        let router = self.router;
        let entry = call
            .method
            .lookup_key()
            .and_then(|name| router.lookup(name));
        let Some(entry) = entry else {
            self.out.truncate(start);
            envelope::core_error_member(self.out, &Error::new(Reason::UnknownMethod, Id::NULL));
            return false;
        };
        // `L`: the router has middleware, or the calls are traced (checked
        // once per message).
        if L {
            return self.call_layered(router.layers(), entry, call, id, start);
        }
        // Untraced: a failure's `warn` event, if any, comes from `run`'s error
        // path (a closure here cost every call 15 instructions: not inlined).
        self.run(entry, call, id, start, None, true, |_| {})
    }

    /// [`Pass::call_into`] under the router's middleware, if any, and traced
    /// if a subscriber wants it: the layers' `before`, the handler, then their
    /// `after` and the call's event (for a deferred call, when its future
    /// completes). Out of line.
    #[inline(never)]
    fn call_layered(
        &mut self,
        layers: Option<&Arc<Layers>>,
        entry: &Entry,
        call: &Call<'_>,
        id: Option<Id<'a>>,
        start: usize,
    ) -> bool {
        let started = Instant::now();
        let method = &*entry.name;
        let traced = trace::wanted();
        if let Some(layers) = layers
            && let Err(refusal) = layers.before(call, method, started)
        {
            let failure = match refusal {
                Refusal::Error(e) => Failure::Handler(e),
                Refusal::Panicked => Failure::Panicked,
            };
            trace::ended(traced, method, failure.seen(), started);
            write_failure(self.out, start, failure);
            return false;
        }
        let pending = (D::DEFERS && matches!(entry.handler, Handler::Async(_))).then(|| {
            Box::new(Pending {
                layers: layers.cloned(),
                traced,
                method: method.into(),
                connection: self.conn.cloned(),
                notification: call.is_notification(),
                started,
            })
        });
        let conn = self.conn;
        self.run(entry, call, id, start, pending, false, |outcome| {
            let seen = match outcome {
                Ok(()) => Outcome::Ok,
                Err(failure) => failure.seen(),
            };
            if let Some(layers) = layers {
                layers.after(method, conn, call.is_notification(), seen, started);
            }
            trace::ended(traced, method, seen, started);
        })
    }

    /// Runs `entry`'s handler, appending the result's value after
    /// `out[start..]` (`"result":`, written by the caller: for a notification,
    /// whose answer is discarded, nothing) or replacing `out[start..]` with
    /// `"error":…`; `done` sees the outcome first. With `DEFERS`, an async
    /// handler's future is deferred instead, under `id`, carrying `pending`
    /// (`out` cut back to `start`; returns `true`); without, it is driven to
    /// completion here. (Returning the future instead cost every sync call its
    /// drop check: +30 instructions.) `untraced`: `done` emits no event for the
    /// call, so a failure on the server's side gets its `warn` one here
    /// ([`trace::failure`]).
    #[expect(
        clippy::too_many_arguments,
        reason = "inlined into its two callers, each passing constants"
    )]
    #[inline(always)]
    fn run(
        &mut self,
        entry: &Entry,
        call: &Call<'_>,
        id: Option<Id<'a>>,
        start: usize,
        pending: Option<Box<Pending>>,
        untraced: bool,
        done: impl FnOnce(&Result<(), Failure>),
    ) -> bool {
        let conn = self.conn;
        let out = &mut *self.out;
        let outcome = match &entry.handler {
            Handler::Call(f) => contained_call(|| {
                let mut w = ResultWriter {
                    out: &mut *out,
                    written: false,
                };
                f(call, &mut w).map(|()| w.written)
            })
            .map(|written| {
                if !written {
                    out.extend_from_slice(b"null");
                }
            }),
            Handler::Notify(f) => contained(|| f(call)).map(|()| out.extend_from_slice(b"null")),
            Handler::Async(f) if D::DEFERS => {
                // Registered before the future exists, so that the handler's
                // call carries the token a cancel notification fires.
                let reg = conn.map(|c| c.register_call(call.id.map(|id| id.as_bytes())));
                let call = Call {
                    token: reg.as_ref().map(|r| &r.token),
                    ..*call
                };
                match contained_call(|| f(&call)) {
                    Ok(future) => {
                        out.truncate(start);
                        // Untraced, no middleware: the name still goes along
                        // for a failure's `warn` event, if one is wanted.
                        let pending = pending.or_else(|| {
                            trace::failures_wanted().then(|| {
                                Box::new(Pending {
                                    layers: None,
                                    traced: false,
                                    method: (*entry.name).into(),
                                    connection: None,
                                    notification: call.is_notification(),
                                    started: Instant::now(),
                                })
                            })
                        });
                        let call = Running::new(future, reg, pending);
                        self.deferred.defer(Deferred { id, call });
                        return true;
                    }
                    Err(failure) => Err(failure),
                }
            }
            Handler::Async(f) => match contained_call(|| f(call)) {
                Ok(future) => {
                    contained_call(|| block_on(future)).map(|result| out.extend_from_slice(&result))
                }
                Err(failure) => Err(failure),
            },
            Handler::Discover => {
                out.extend_from_slice(self.router.discover_document());
                Ok(())
            }
        };
        done(&outcome);
        if let Err(failure) = outcome {
            if untraced && cfg!(feature = "tracing") {
                warn_failure(&entry.name, &failure);
            }
            write_failure(out, start, failure);
        }
        false
    }
}

impl<'a> Pass<'_, Vec<Deferred<'a>>> {
    /// Awaits the deferred calls, then answers the requests among them, in
    /// input order, after the sync pass's responses.
    async fn deferred_calls(&mut self, shape: &mut Shape) {
        join(&mut self.deferred).await;
        let answer = self.router.cancel_rule().and_then(|r| r.answer_error());
        for mut d in self.deferred.drain(..) {
            let (Some(id), Some(outcome)) = (d.id, d.call.outcome.take()) else {
                continue; // a notification: never answered
            };
            write_deferred(self.out, shape, id.as_bytes(), outcome, answer);
        }
    }
}

/// Appends the answer to a deferred request `id` (none for a cancelled call
/// unless the cancel rule gives one).
fn write_deferred(
    out: &mut Vec<u8>,
    shape: &mut Shape,
    id: &[u8],
    outcome: Result<Vec<u8>, Failure>,
    cancel_answer: Option<&RpcError>,
) {
    match outcome {
        Ok(result) => {
            shape.open_response(out);
            envelope::response(out, &result, id);
        }
        Err(Failure::Cancelled) => {
            if let Some(e) = cancel_answer {
                shape.open_response(out);
                out.extend_from_slice(HEAD);
                e.write_member(out);
                end_response(out, id);
            }
        }
        Err(failure) => {
            shape.open_response(out);
            out.extend_from_slice(HEAD);
            let start = out.len();
            write_failure(out, start, failure);
            end_response(out, id);
        }
    }
}

/// Cancels the running call a cancel notification names (its params' id
/// member, by exact bytes); nothing when there is none.
#[cold]
#[inline(never)]
fn cancel_named(conn: &Connection, router: &Router, n: &Notification<'_>) {
    let Some(rule) = router.cancel_rule() else {
        return;
    };
    if n.method().lookup_key() != Some(rule.method()) {
        return;
    }
    if let Some(id) = n.params().and_then(|p| p.get(rule.id_member())) {
        conn.cancel_call(id.as_bytes());
    }
}

/// Polls every running deferred future until all have completed; a future that
/// panics is dropped and its outcome recorded as a panic.
///
/// One waker (the caller's) serves them all, so a wake re-polls every future still
/// running: fine for the calls of one message (a batch is bounded by
/// `max_batch_len`).
async fn join(deferred: &mut [Deferred<'_>]) {
    std::future::poll_fn(|cx| {
        let mut all_done = true;
        for d in deferred.iter_mut() {
            all_done &= d.call.poll(cx);
        }
        if all_done {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
}

/// Drops a finished or panicked future; a panic in its destructor is contained.
fn drop_quietly(fut: Option<AsyncResult>) {
    let _ = contained(move || drop(fut));
}

/// Replaces what was appended since `start` with the error member for `failure`:
/// the handler's error, or the one for a panic.
#[cold]
#[inline(never)]
fn write_failure(out: &mut Vec<u8>, start: usize, failure: Failure) {
    out.truncate(start);
    match failure {
        Failure::Handler(e) => e.write_member(out),
        // Answered by the caller, per the cancel rule.
        Failure::Cancelled => {}
        Failure::Panicked => {
            // A static data object: no allocation.
            let code = Reason::HandlerFailed.code();
            envelope::error_member(
                out,
                code.as_i32(),
                code.message(),
                Some(b"{\"reason\":\"the handler panicked\"}"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn router() -> Arc<Router> {
        Router::builder()
            .method("ok", |_, out| out.str("fine"))
            .method("none", |_, _| Ok(()))
            .method("fails", |_, _| Err(RpcError::new(7, "no")))
            .notification("note", |_| {})
            .build()
            .unwrap()
    }

    /// Every kind of answer (a result, none written, a notification handler's
    /// `null`, the handler's error, an unknown method: the head written with the
    /// result's name, then cut back to the error member) ends with the id echoed byte for byte, for ids of every
    /// length around the 16-byte fixed copy, alone and in batches.
    #[test]
    fn responses_echo_ids_of_every_length() {
        let mut ids = vec![r#""a\"b\\c\u00e9""#.to_owned(), "-1.5e3".to_owned()];
        // Under Miri, only lengths around the 16-byte fixed copy (for numbers,
        // quoted ASCII and two-byte characters) and a few longer ones.
        let lens: Vec<usize> = if cfg!(miri) {
            vec![1, 8, 15, 16, 17, 33]
        } else {
            (1..=40).collect()
        };
        for len in lens {
            ids.push("9".repeat(len));
            ids.push(format!("\"{}\"", "x".repeat(len - 1)));
            ids.push(format!("\"{}\"", "é".repeat(len)));
        }
        let answers = [
            ("ok", r#""result":"fine""#),
            ("none", r#""result":null"#),
            ("fails", r#""error":{"code":7,"message":"no"}"#),
            (
                "nope",
                r#""error":{"code":-32601,"message":"Method not found","data":{"field":"method","reason":"is not registered"}}"#,
            ),
            ("note", r#""result":null"#),
        ];
        let mut s = Session::new(router());
        let text = |r: Option<&[u8]>| r.map(|r| String::from_utf8(r.to_vec()).unwrap());
        for id in &ids {
            for (method, member) in answers {
                let req = format!(r#"{{"jsonrpc":"2.0","method":"{method}","id":{id}}}"#);
                let want = format!(r#"{{"jsonrpc":"2.0",{member},"id":{id}}}"#);
                assert_eq!(text(s.handle(req.as_bytes())), Some(want.clone()), "{req}");
                let note = format!(r#"{{"jsonrpc":"2.0","method":"{method}"}}"#);
                let batch = format!("[{req},{note},{req}]");
                assert_eq!(
                    text(s.handle(batch.as_bytes())),
                    Some(format!("[{want},{want}]")),
                    "{batch}"
                );
                assert_eq!(text(s.handle(note.as_bytes())), None, "{note}");
            }
        }
    }
}
