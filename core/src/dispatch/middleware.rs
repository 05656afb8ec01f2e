//! RPC middleware: code that runs around every call of registered methods
//! ([`RouterBuilder::middleware`](crate::RouterBuilder::middleware)), for
//! per-method authorization, rate limits, metrics and logging.
//!
//! A [`Middleware`] sees each call twice: [`Middleware::before`] gets the
//! [`Call`] (method, id, params view, connection) before the handler runs and
//! may refuse it with an error, which is then the answer; [`Middleware::after`]
//! gets the [`Done`] call (its method, connection, [`Outcome`] and duration)
//! once its outcome is known: at once for sync handlers, when the future
//! completes (or is cancelled, or dropped) for async ones.
//!
//! Several layers run as an onion: `before` in the order they were added,
//! `after` in the reverse order. A layer whose `before` let the call through
//! always gets its `after`, also when a later layer refused the call (its
//! [`Outcome`] is then that error); the layer that refused does not, nor do
//! the layers after it. A layer that panics is contained like a panicking handler: the
//! call is answered -32603.
//!
//! What middleware does not see: calls to unregistered methods (answered
//! -32601 before any layer runs, so that a client's made-up names cannot grow a
//! metrics label set), and messages the parser refused (answered -32700 or
//! -32600). With no middleware added, a call pays one branch.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::handler::{Call, RpcError};
use crate::connection::Connection;

/// Code run around every call of registered methods; see the [module
/// docs](self). Both methods have defaults that do nothing.
///
/// A per-method authorization layer, reading what the transport stored on
/// the connection:
///
/// ```
/// use switchboard::connection::{Connection, ConnectionConfig};
/// use switchboard::middleware::Middleware;
/// use switchboard::{Call, Router, RpcError, Session};
///
/// struct Admin; // put in the connection's extensions by the transport
///
/// struct AdminOnly(&'static [&'static str]);
///
/// impl Middleware for AdminOnly {
///     fn before(&self, call: &Call<'_>) -> Result<(), RpcError> {
///         let admin = call
///             .connection()
///             .is_some_and(|c| c.extensions().get::<Admin>().is_some());
///         let name = call.method().lookup_key().unwrap_or("");
///         if self.0.contains(&name) && !admin {
///             return Err(RpcError::new(-32001, "Unauthorized"));
///         }
///         Ok(())
///     }
/// }
///
/// let router = Router::builder()
///     .method("status", |_, out| out.str("ok"))
///     .method("shutdown", |_, out| out.bool(true))
///     .middleware(AdminOnly(&["shutdown"]))
///     .build()
///     .unwrap();
/// let mut session = Session::new(router);
/// let (conn, _outgoing) = Connection::new(&ConnectionConfig::new());
/// session.attach(conn);
/// let resp = session.handle(br#"{"jsonrpc":"2.0","method":"shutdown","id":1}"#).unwrap();
/// assert_eq!(resp, br#"{"jsonrpc":"2.0","error":{"code":-32001,"message":"Unauthorized"},"id":1}"#);
/// let resp = session.handle(br#"{"jsonrpc":"2.0","method":"status","id":2}"#).unwrap();
/// assert_eq!(resp, br#"{"jsonrpc":"2.0","result":"ok","id":2}"#);
/// session.connection().unwrap().extensions().insert(Admin);
/// let resp = session.handle(br#"{"jsonrpc":"2.0","method":"shutdown","id":3}"#).unwrap();
/// assert_eq!(resp, br#"{"jsonrpc":"2.0","result":true,"id":3}"#);
/// ```
pub trait Middleware: Send + Sync + 'static {
    /// Runs before the handler. An error refuses the call: it is the answer
    /// (a notification is answered nothing), the handler does not run, and the
    /// layers after this one are skipped.
    fn before(&self, call: &Call<'_>) -> Result<(), RpcError> {
        let _ = call;
        Ok(())
    }

    /// Runs once the call's outcome is known.
    fn after(&self, done: &Done<'_>) {
        let _ = done;
    }
}

/// A call whose outcome is known, as [`Middleware::after`] sees it.
#[derive(Debug)]
pub struct Done<'a> {
    method: &'a str,
    connection: Option<&'a Connection>,
    notification: bool,
    outcome: Outcome<'a>,
    elapsed: Duration,
}

impl<'a> Done<'a> {
    /// The method, as registered (unescaped).
    pub fn method(&self) -> &'a str {
        self.method
    }

    /// The connection the call came on, if the session is attached to one.
    pub fn connection(&self) -> Option<&'a Connection> {
        self.connection
    }

    /// Whether the call was a notification (its outcome is not sent).
    pub fn is_notification(&self) -> bool {
        self.notification
    }

    /// How the call ended.
    pub fn outcome(&self) -> Outcome<'a> {
        self.outcome
    }

    /// Time from the first layer's `before` to the outcome (for an async
    /// call, to its future's completion).
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }
}

/// How a call ended.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum Outcome<'a> {
    /// A result was written.
    Ok,
    /// The handler, its typed params or a middleware layer answered this error.
    Error(&'a RpcError),
    /// The handler (or its future, or a layer) panicked: answered -32603.
    Panicked,
    /// An async call was cancelled (the protocol's cancel notification), or its
    /// future was dropped before it completed (its connection went away).
    Cancelled,
}

impl Outcome<'_> {
    /// The error code the client was answered, if the call failed (-32603 for
    /// a panic; none for a cancelled call, whose answer depends on the
    /// [`CancelRule`](crate::connection::CancelRule)).
    pub fn error_code(&self) -> Option<i32> {
        match self {
            Outcome::Ok | Outcome::Cancelled => None,
            Outcome::Error(e) => Some(e.code()),
            Outcome::Panicked => Some(crate::parse::Code::InternalError.as_i32()),
        }
    }
}

/// The layers a router runs, in the order they were added.
pub(crate) struct Layers(pub(crate) Box<[Box<dyn Middleware>]>);

impl Layers {
    /// Runs the layers' `before` in order; on a refusal (or a panic), the
    /// `after` of those that ran, and the refusal.
    pub(crate) fn before(
        &self,
        call: &Call<'_>,
        method: &str,
        started: Instant,
    ) -> Result<(), Refusal> {
        for (i, layer) in self.0.iter().enumerate() {
            let refused = match catch_unwind(AssertUnwindSafe(|| layer.before(call))) {
                Ok(Ok(())) => continue,
                Ok(Err(e)) => Refusal::Error(e),
                Err(_) => Refusal::Panicked,
            };
            let outcome = match &refused {
                Refusal::Error(e) => Outcome::Error(e),
                Refusal::Panicked => Outcome::Panicked,
            };
            self.after_upto(
                i,
                method,
                call.connection(),
                call.is_notification(),
                outcome,
                started,
            );
            return Err(refused);
        }
        Ok(())
    }

    /// Runs every layer's `after`, last added first.
    pub(crate) fn after(
        &self,
        method: &str,
        connection: Option<&Connection>,
        notification: bool,
        outcome: Outcome<'_>,
        started: Instant,
    ) {
        self.after_upto(
            self.0.len(),
            method,
            connection,
            notification,
            outcome,
            started,
        );
    }

    /// Runs the `after` of the first `n` layers, last first; a panic in one is
    /// contained and the others still run.
    fn after_upto(
        &self,
        n: usize,
        method: &str,
        connection: Option<&Connection>,
        notification: bool,
        outcome: Outcome<'_>,
        started: Instant,
    ) {
        let done = Done {
            method,
            connection,
            notification,
            outcome,
            elapsed: started.elapsed(),
        };
        for layer in self.0[..n].iter().rev() {
            let _ = catch_unwind(AssertUnwindSafe(|| layer.after(&done)));
        }
    }
}

/// Why a layer refused a call.
pub(crate) enum Refusal {
    Error(RpcError),
    Panicked,
}

/// What an async call under middleware (or traced, [`super::trace`]) carries
/// until its future completes: enough to run the layers' `after` and emit its
/// event then.
pub(crate) struct Pending {
    pub(crate) layers: Option<Arc<Layers>>,
    /// Its `debug` event is wanted (else only a failure's `warn` one).
    pub(crate) traced: bool,
    pub(crate) method: Box<str>,
    pub(crate) connection: Option<Connection>,
    pub(crate) notification: bool,
    pub(crate) started: Instant,
}

impl Pending {
    /// Runs the layers' `after` with `outcome`, and emits the call's event.
    pub(crate) fn report(self, outcome: Outcome<'_>) {
        if let Some(layers) = &self.layers {
            layers.after(
                &self.method,
                self.connection.as_ref(),
                self.notification,
                outcome,
                self.started,
            );
        }
        super::trace::ended(self.traced, &self.method, outcome, self.started);
    }
}
