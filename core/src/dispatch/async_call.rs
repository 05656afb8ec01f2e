//! What an async handler receives ([`OwnedCall`]), the boxed future it becomes,
//! and the tiny thread-parking executor [`crate::Session::handle`] drives such
//! futures with. No runtime: `std::task` only.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};

use super::handler::{Call, RpcError};
use crate::connection::{CancellationToken, Connection};
use crate::params::Params;
use crate::parse::Id;

/// An async handler's future: the serialized result, or the error to answer.
pub(crate) type AsyncResult = Pin<Box<dyn Future<Output = Result<Vec<u8>, RpcError>> + Send>>;

/// One call, owned: what [`crate::RouterBuilder::method_async`] hands its handler,
/// so that the handler's future is `'static` (it may be moved into
/// `tokio::spawn` or kept past the message it came from).
///
/// The method name (unescaped), the id's exact bytes and the params' exact bytes are
/// copied into one buffer: one allocation per call. Make one yourself from a
/// [`Call`] with `OwnedCall::from(&call)`.
///
/// ```
/// use switchboard::{OwnedCall, Router, Session};
///
/// let router = Router::builder()
///     .method("keep", |call, out| {
///         let owned = OwnedCall::from(call); // outlives the message
///         assert_eq!(owned.method(), "keep");
///         assert_eq!(owned.id().unwrap().as_bytes(), b"\"a\"");
///         assert_eq!(owned.params().unwrap().index(0).unwrap().as_i64(), Some(7));
///         assert!(!owned.is_notification());
///         out.str(owned.method())
///     })
///     .build()
///     .unwrap();
/// let mut session = Session::new(router);
/// let resp = session.handle(br#"{"jsonrpc":"2.0","method":"k\u0065ep","params":[7],"id":"a"}"#);
/// assert_eq!(resp.unwrap(), br#"{"jsonrpc":"2.0","result":"keep","id":"a"}"#);
/// ```
///
/// Under a connection's driver the call also carries its connection
/// ([`OwnedCall::connection`]) and its cancellation token
/// ([`OwnedCall::cancellation`]). Equality and hashing look at the call's
/// bytes only.
#[derive(Clone)]
pub struct OwnedCall {
    /// INVARIANT: `buf[..method_end]` is the method name (UTF-8),
    /// `buf[method_end..id_end]` the id's validated token (empty: no id), and
    /// `buf[id_end..]` the params' validated array or object (empty: no params).
    buf: Box<[u8]>,
    method_end: usize,
    id_end: usize,
    conn: Option<Connection>,
    token: Option<CancellationToken>,
}

impl PartialEq for OwnedCall {
    fn eq(&self, other: &Self) -> bool {
        (&self.buf, self.method_end, self.id_end) == (&other.buf, other.method_end, other.id_end)
    }
}

impl Eq for OwnedCall {}

impl std::hash::Hash for OwnedCall {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (&self.buf, self.method_end, self.id_end).hash(state);
    }
}

impl OwnedCall {
    /// The method name, unescaped.
    pub fn method(&self) -> &str {
        // The first part is copied from a `&str`; fall back to "" rather than
        // trusting that blindly (no unsafe in this module).
        std::str::from_utf8(&self.buf[..self.method_end]).unwrap_or("")
    }

    /// The id (its exact bytes as received), or `None` for a notification.
    pub fn id(&self) -> Option<Id<'_>> {
        let raw = &self.buf[self.method_end..self.id_end];
        (!raw.is_empty()).then(|| Id::new_validated(raw))
    }

    /// The params, as the same borrowed view a [`Call`] gives; `None` when absent
    /// or `null`.
    pub fn params(&self) -> Option<Params<'_>> {
        let raw = &self.buf[self.id_end..];
        // The bytes were validated by the scanner when the message was parsed.
        (!raw.is_empty()).then(|| Params::new_validated(raw))
    }

    /// Whether this call is a notification (its answer is discarded).
    pub fn is_notification(&self) -> bool {
        self.method_end == self.id_end
    }

    /// The connection this call came on ([`Call::connection`]); the handle may
    /// be cloned into work that outlives the call.
    pub fn connection(&self) -> Option<&Connection> {
        self.conn.as_ref()
    }

    /// The call's cancellation token: cancelled when the client's cancel
    /// notification names this call (see
    /// [`RouterBuilder::cancel_notification`](crate::RouterBuilder::cancel_notification))
    /// or when the driver gives up on it at the connection's end. The future is
    /// dropped then anyway; check or await the token to stop work the future
    /// handed elsewhere. A call not run by a connection's driver has a token
    /// nobody cancels.
    ///
    /// ```
    /// use switchboard::{OwnedCall, Router, Session};
    /// let router = Router::builder()
    ///     .method_async("work", |call: OwnedCall| async move {
    ///         let token = call.cancellation().clone();
    ///         Ok(token.is_cancelled())
    ///     })
    ///     .build()
    ///     .unwrap();
    /// let mut session = Session::new(router);
    /// let resp = session.handle(br#"{"jsonrpc":"2.0","method":"work","id":1}"#).unwrap();
    /// assert_eq!(resp, br#"{"jsonrpc":"2.0","result":false,"id":1}"#);
    /// ```
    pub fn cancellation(&self) -> &CancellationToken {
        static NEVER: OnceLock<CancellationToken> = OnceLock::new();
        self.token
            .as_ref()
            .unwrap_or_else(|| NEVER.get_or_init(CancellationToken::new))
    }
}

impl From<&Call<'_>> for OwnedCall {
    fn from(call: &Call<'_>) -> Self {
        let method = call.method.as_str().as_bytes();
        let id = call.id.map_or(&b""[..], |id| id.as_bytes());
        let params = call.params.map_or(&b""[..], |p| p.as_bytes());
        let mut buf = Vec::with_capacity(method.len() + id.len() + params.len());
        buf.extend_from_slice(method);
        buf.extend_from_slice(id);
        buf.extend_from_slice(params);
        OwnedCall {
            // Exact capacity: `into_boxed_slice` does not reallocate.
            buf: buf.into_boxed_slice(),
            method_end: method.len(),
            id_end: method.len() + id.len(),
            conn: call.conn.cloned(),
            token: call.token.cloned(),
        }
    }
}

impl From<Call<'_>> for OwnedCall {
    fn from(call: Call<'_>) -> Self {
        OwnedCall::from(&call)
    }
}

impl fmt::Debug for OwnedCall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OwnedCall")
            .field("method", &self.method())
            .field("id", &self.id())
            .field("params", &self.params())
            .finish()
    }
}

/// Wakes the thread that [`block_on`] parks.
struct Unparker(Thread);

impl Wake for Unparker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

thread_local! {
    /// This thread's waker for [`block_on`], made once (no allocation per call).
    static UNPARK: Waker = Waker::from(Arc::new(Unparker(thread::current())));
}

/// Polls `fut` on this thread until it completes, parking the thread while it is
/// pending. Futures that need a runtime's reactor (tokio I/O, timers) are not
/// served here: they panic or never wake, as they would outside their runtime.
pub(crate) fn block_on<F: Future>(fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    UNPARK.with(|waker| {
        let mut cx = Context::from_waker(waker);
        loop {
            match fut.as_mut().poll(&mut cx) {
                Poll::Ready(v) => return v,
                // A wake-up before the park leaves a token: the park returns at once.
                // Spurious returns only cost one more poll.
                Poll::Pending => thread::park(),
            }
        }
    })
}
