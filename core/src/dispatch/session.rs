//! One session per thread or connection: reusable parser state and response buffer.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::task::Poll;

use super::async_call::{AsyncResult, block_on};
use super::handler::{Call, ResultWriter, RpcError};
use super::router::{Handler, Router};
use crate::envelope::{self, HEAD, HEAD_RESULT, RESULT, end_response};
use crate::long::LongValues;
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
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("router", &self.router)
            .field("dropped_responses", &self.dropped_responses)
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
        }
    }

    /// The router this session dispatches to.
    pub fn router(&self) -> &Arc<Router> {
        &self.router
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
        if input.len() >= crate::long::LONG {
            return self.handle_long(input);
        }
        self.handle_with::<false>(input)
    }

    /// [`Session::handle`] for a message that may hold long values
    /// ([`crate::long`]), out of line: short messages keep the plain path.
    #[inline(never)]
    fn handle_long(&mut self, input: &[u8]) -> Option<&[u8]> {
        self.handle_with::<true>(input)
    }

    #[inline(always)]
    fn handle_with<const LONG: bool>(&mut self, input: &[u8]) -> Option<&[u8]> {
        let Session {
            router,
            parser,
            long,
            out,
            dropped_responses,
        } = self;
        // Nothing is deferred here: no place for futures at all.
        let mut pass = Pass {
            router,
            out,
            dropped: dropped_responses,
            deferred: NoDefer,
        };
        let shape = pass.begin::<LONG>(parser, long, input);
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
        } = self;
        let mut pass = Pass {
            router,
            out,
            dropped: dropped_responses,
            deferred: Vec::new(),
        };
        // The long path whatever the length: a short message notes nothing
        // (and installs nothing); the async path is not the one to shave.
        let mut shape = pass.begin::<true>(parser, long, input);
        if !pass.deferred.is_empty() {
            pass.deferred_calls(&mut shape).await;
        }
        if shape.finish(pass.out) {
            Some(&self.out)
        } else {
            None
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

/// The response buffer capacity a session keeps between messages (larger ones are
/// given back at the next message).
const RETAINED_OUT: usize = 1 << 20;

/// Why a call has no result.
enum Failure {
    /// The handler (or its future) returned this error.
    Handler(RpcError),
    /// The handler, its future or its typed params' decoding panicked.
    Panicked,
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
    /// Running until `outcome` is set.
    future: Option<AsyncResult>,
    /// The serialized result, or why there is none.
    outcome: Option<Result<Vec<u8>, Failure>>,
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
    fn finish(self, out: &mut Vec<u8>) -> bool {
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
    deferred: D,
}

impl<'a, D: DeferTo<'a>> Pass<'_, D> {
    /// Clears `out`, parses `input` and answers its items ([`Pass::message`]).
    /// With `LONG` (a message of [`crate::long::LONG`] bytes or more), the
    /// message's long values are noted in `long` and installed for its handlers'
    /// walks over their params ([`crate::long`]) while the pass runs: `input`
    /// stays borrowed meanwhile, and the deferred futures run after it, without.
    #[inline(always)]
    fn begin<const LONG: bool>(
        &mut self,
        parser: &'a mut Parser,
        long: &mut LongValues,
        input: &'a [u8],
    ) -> Shape {
        self.out.clear();
        if self.out.capacity() > RETAINED_OUT {
            // A huge response is not kept around for the small ones that follow.
            self.out.shrink_to(RETAINED_OUT);
        }
        if !LONG {
            let message = parser.parse(input);
            return self.message(message);
        }
        long.clear();
        let message = parser.parse_noting(input, Some(long));
        let _installed = if long.is_empty() {
            None
        } else {
            crate::long::install(input, long)
        };
        self.message(message)
    }

    /// Answers every item of `message` whose handler is sync.
    #[inline(always)]
    fn message(&mut self, message: Message<'a>) -> Shape {
        let wrote = match message {
            Message::Batch(batch) => {
                self.out.push(b'[');
                let mut any = false;
                for item in batch.iter() {
                    let mark = self.out.len();
                    if any {
                        self.out.push(b',');
                    }
                    if self.item(item) {
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
            Message::Request(r) => self.request(r),
            Message::Notification(n) => self.notification(n),
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
    fn item(&mut self, item: Item<'a>) -> bool {
        match item {
            Item::Request(r) => self.request(r),
            Item::Notification(n) => self.notification(n),
            Item::Response(r) => self.response(r),
            Item::Error(e) => self.error(e),
        }
    }

    /// Answers a request, or defers it.
    #[inline(always)]
    fn request(&mut self, r: Request<'a>) -> bool {
        let call = Call {
            method: r.method(),
            id: Some(r.id()),
            params: r.params(),
        };
        let mark = self.out.len();
        // The head and the result's name in one copy; `call_into` replaces
        // the name with the error member if there is no result.
        self.out.extend_from_slice(HEAD_RESULT);
        let start = self.out.len() - RESULT.len();
        let future = self.call_into(&call, start);
        // Without `DEFERS` there is never a future: the branch is compiled out.
        if D::DEFERS
            && let Some(future) = future
        {
            self.out.truncate(mark);
            self.deferred.defer(Deferred {
                id: Some(r.id()),
                future: Some(future),
                outcome: None,
            });
            return false;
        }
        end_response(self.out, r.id().as_bytes());
        true
    }

    /// Runs a notification's handler, or defers it; never answered, not even
    /// with an error.
    #[inline(always)]
    fn notification(&mut self, n: Notification<'a>) -> bool {
        let call = Call {
            method: n.method(),
            id: None,
            params: n.params(),
        };
        let mark = self.out.len();
        let future = self.call_into(&call, mark);
        self.out.truncate(mark);
        // Without `DEFERS` there is never a future: compiled out.
        if D::DEFERS
            && let Some(future) = future
        {
            self.deferred.defer(Deferred {
                id: None,
                future: Some(future),
                outcome: None,
            });
        }
        false
    }

    /// Hands a response object to the router's sink (or counts it dropped).
    #[inline(always)]
    fn response(&mut self, r: Response<'a>) -> bool {
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
    /// is returned instead (`out` cut back to `start`); without, it is driven to
    /// completion here.
    fn call_into(&mut self, call: &Call<'_>, start: usize) -> Option<AsyncResult> {
        let router = self.router;
        let out = &mut *self.out;
        let entry = call
            .method
            .lookup_key()
            .and_then(|name| router.lookup(name));
        let Some(entry) = entry else {
            out.truncate(start);
            envelope::core_error_member(out, &Error::new(Reason::UnknownMethod, Id::NULL));
            return None;
        };
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
            Handler::Async(f) => match contained_call(|| f(call)) {
                Ok(future) if D::DEFERS => {
                    out.truncate(start);
                    return Some(future);
                }
                Ok(future) => {
                    contained_call(|| block_on(future)).map(|result| out.extend_from_slice(&result))
                }
                Err(failure) => Err(failure),
            },
            Handler::Discover => {
                out.extend_from_slice(router.discover_document());
                Ok(())
            }
        };
        if let Err(failure) = outcome {
            write_failure(out, start, failure);
        }
        None
    }
}

impl<'a> Pass<'_, Vec<Deferred<'a>>> {
    /// Awaits the deferred calls, then answers the requests among them, in
    /// input order, after the sync pass's responses.
    async fn deferred_calls(&mut self, shape: &mut Shape) {
        join(&mut self.deferred).await;
        for d in self.deferred.drain(..) {
            let (Some(id), Some(outcome)) = (d.id, d.outcome) else {
                continue; // a notification: never answered
            };
            shape.open_response(self.out);
            match outcome {
                Ok(result) => envelope::response(self.out, &result, id.as_bytes()),
                Err(failure) => {
                    self.out.extend_from_slice(HEAD);
                    let start = self.out.len();
                    write_failure(self.out, start, failure);
                    end_response(self.out, id.as_bytes());
                }
            }
        }
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
            let Some(fut) = d.future.as_mut() else {
                continue;
            };
            let outcome = match contained(|| fut.as_mut().poll(cx)) {
                Ok(Poll::Pending) => {
                    all_done = false;
                    continue;
                }
                Ok(Poll::Ready(r)) => r.map_err(Failure::Handler),
                Err(panicked) => Err(panicked),
            };
            d.outcome = Some(outcome);
            drop_quietly(d.future.take());
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
            vec![1, 2, 7, 8, 9, 14, 15, 16, 17, 31, 32, 33, 40]
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
