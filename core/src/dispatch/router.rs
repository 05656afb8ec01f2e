//! The router: methods registered once, then frozen into an immutable,
//! shareable table.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::async_call::{AsyncResult, OwnedCall};
use super::handler::{Call, ResultWriter, RpcError};
use super::method_table::MethodTable;
use super::middleware::{Layers, Middleware};
use super::typed::{BorrowedParams, BorrowedResult, BorrowingFn};
use crate::connection::{CancelRule, SubscriptionSink};
use crate::parse::{ParserConfig, Response};

type CallFn = dyn Fn(&Call<'_>, &mut ResultWriter<'_>) -> Result<(), RpcError> + Send + Sync;
type NotifyFn = dyn Fn(&Call<'_>) + Send + Sync;
type ResponseFn = dyn Fn(&Response<'_>) + Send + Sync;
/// Starts an async call: its future, or an error answered at once (params that do
/// not fit are refused before any future exists).
type AsyncFn = dyn Fn(&Call<'_>) -> Result<AsyncResult, RpcError> + Send + Sync;

pub(crate) enum Handler {
    /// Answers with a result or an error.
    Call(Box<CallFn>),
    /// Dispatched, never answered (a request to it gets `"result":null`).
    Notify(Box<NotifyFn>),
    /// Answers with the result of a future (serialized when it completes).
    Async(Box<AsyncFn>),
    /// The built-in `rpc.discover`.
    Discover,
}

pub(crate) struct Entry {
    pub(crate) name: Box<str>,
    pub(crate) handler: Handler,
    params_schema: Option<serde_json::Value>,
    result_schema: Option<serde_json::Value>,
    /// OpenRPC's `paramStructure`, when known (`by-position`, `by-name`).
    param_structure: Option<&'static str>,
    /// `x-params-schema`: the whole params value's schema, when given.
    params_whole: Option<serde_json::Value>,
}

/// A method's description for `rpc.discover`, as given to the builder.
struct Described {
    name: String,
    params: Option<String>,
    result: Option<String>,
    /// OpenRPC's `paramStructure`.
    structure: Option<&'static str>,
    /// The whole params value's schema (`x-params-schema`), for params that
    /// are neither positional nor named members.
    whole: Option<serde_json::Value>,
}

/// Why a router could not be built.
///
/// ```
/// use switchboard::{BuildError, Router};
/// let err = Router::builder()
///     .method("ping", |_, out| out.str("pong"))
///     .method("ping", |_, out| out.str("again"))
///     .build()
///     .unwrap_err();
/// assert_eq!(err, BuildError::Duplicate("ping".into()));
/// assert_eq!(err.to_string(), "method `ping` is registered twice");
///
/// let err = Router::builder().method("rpc.mine", |_, out| out.null()).build().unwrap_err();
/// assert_eq!(err, BuildError::Reserved("rpc.mine".into()));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildError {
    /// A method name was registered twice.
    Duplicate(String),
    /// A method name was empty.
    EmptyName,
    /// A method name starts with `rpc.`, reserved for extensions.
    Reserved(String),
    /// A schema given for `rpc.discover` is not valid JSON of the right shape.
    InvalidSchema(String),
    /// A schema was given for a method that is not registered.
    UnknownMethod(String),
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Duplicate(n) => write!(f, "method `{n}` is registered twice"),
            BuildError::EmptyName => f.write_str("a method name is empty"),
            BuildError::Reserved(n) => {
                write!(f, "method `{n}`: names starting `rpc.` are reserved")
            }
            BuildError::InvalidSchema(n) => write!(f, "method `{n}`: invalid schema"),
            BuildError::UnknownMethod(n) => write!(f, "schema for unregistered method `{n}`"),
        }
    }
}

impl std::error::Error for BuildError {}

/// Registers methods; [`RouterBuilder::build`] freezes them into a [`Router`].
///
/// ```
/// use switchboard::{Router, RpcError, Session};
///
/// let router = Router::builder()
///     .typed("subtract", |(a, b): (i64, i64)| a.checked_sub(b).ok_or(RpcError::new(1, "overflow")))
///     .notification("update", |_call| {})
///     .method("raw", |call, out| out.raw_json(call.params().map_or(b"null", |p| p.as_bytes())))
///     .build()
///     .expect("valid registrations");
///
/// let mut session = Session::new(router);
/// let resp = session.handle(br#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#);
/// assert_eq!(resp.unwrap(), br#"{"jsonrpc":"2.0","result":19,"id":1}"#);
/// assert_eq!(session.handle(br#"{"jsonrpc":"2.0","method":"update"}"#), None);
/// ```
#[must_use]
pub struct RouterBuilder {
    entries: Vec<Entry>,
    schemas: Vec<Described>,
    /// Schemas the described methods refer to (`components.schemas`).
    components: serde_json::Map<String, serde_json::Value>,
    /// Whether `rpc.discover` is served.
    discover: bool,
    config: ParserConfig,
    response_sink: Option<Box<ResponseFn>>,
    cancel: Option<CancelRule>,
    title: String,
    /// Subscription registrations so far (each one's number tells its
    /// subscriptions apart from the others').
    subscriptions: usize,
    layers: Vec<Box<dyn Middleware>>,
}

impl RouterBuilder {
    fn push(mut self, name: &str, handler: Handler) -> Self {
        self.entries.push(Entry {
            name: name.into(),
            handler,
            params_schema: None,
            result_schema: None,
            param_structure: None,
            params_whole: None,
        });
        self
    }

    /// Registers a raw handler: it receives the [`Call`] (method, id, params view) and
    /// writes its result into the [`ResultWriter`], or returns an error.
    pub fn method<F>(self, name: &str, f: F) -> Self
    where
        F: Fn(&Call<'_>, &mut ResultWriter<'_>) -> Result<(), RpcError> + Send + Sync + 'static,
    {
        self.push(name, Handler::Call(Box::new(f)))
    }

    /// Registers a typed handler: params are deserialized into `P` (absent params
    /// deserialize from `null`, so `()` and `Option<_>` accept them); a mismatch is
    /// answered -32602 with a `data` object saying what did not fit (and where:
    /// line and column in the params); `R` is serialized straight into the
    /// response buffer.
    ///
    /// The params are read once, by a serde deserializer over the bytes the
    /// parser validated ([`Params::parse`](crate::Params::parse)), numbers
    /// mapped as serde_json maps them. For params that borrow from the message
    /// (`&str`, `Cow<str>`, [`RawValue`](crate::RawValue)) use
    /// [`RouterBuilder::typed_ref`].
    pub fn typed<P, R, F>(self, name: &str, f: F) -> Self
    where
        P: DeserializeOwned,
        R: Serialize,
        F: Fn(P) -> Result<R, RpcError> + Send + Sync + 'static,
    {
        self.method(name, move |call, out| {
            let r = f(typed_params(call)?)?;
            out.serialize(&r)
        })
    }

    /// [`RouterBuilder::typed`] for params that borrow from the message:
    /// `&str`, `Cow<str>` (strings without escapes are not copied),
    /// [`RawValue`](crate::RawValue), structs of your own with borrowed
    /// fields. `P` names the params type by its `'static` form
    /// ([`BorrowedParams`]); the handler gets it for the message's lifetime, so
    /// a handler with only borrowed or `Copy` params allocates nothing.
    ///
    /// Why a second method: `typed`'s `P` is one type, fixed when the method is
    /// registered, while each message borrows for a lifetime of its own; a
    /// handler taking `(&'de str,)` for every `'de` needs a family of types
    /// (`for<'de> Fn(P::Of<'de>)`), and Rust cannot infer the family from a
    /// closure's annotation (`|(a, b): (&str, &str)|` could come from many), so
    /// `P` is given: `typed_ref::<(&str, &str), _, _>`.
    ///
    /// The result `R` cannot borrow from the params (it is one type for every
    /// message, and a closure's return type cannot name its argument's
    /// lifetime): return owned values, or use [`RouterBuilder::typed_borrowed`],
    /// which names the result's family too, for a result that borrows.
    ///
    /// ```
    /// use switchboard::{RawValue, Router, RpcError, Session};
    /// let router = Router::builder()
    ///     .typed_ref::<(&str, &str), _, _>("greet", |(greeting, name)| {
    ///         Ok(format!("{greeting}, {name}!"))
    ///     })
    ///     .typed_ref::<(&str, RawValue), _, _>("size", |(_, body)| Ok(body.as_bytes().len()))
    ///     .build()
    ///     .unwrap();
    /// let mut session = Session::new(router);
    /// let resp = session.handle(br#"{"jsonrpc":"2.0","method":"greet","params":["hello","ada"],"id":1}"#);
    /// assert_eq!(resp.unwrap(), br#"{"jsonrpc":"2.0","result":"hello, ada!","id":1}"#);
    /// let resp = session.handle(br#"{"jsonrpc":"2.0","method":"size","params":["x",[1, 2]],"id":2}"#);
    /// assert_eq!(resp.unwrap(), br#"{"jsonrpc":"2.0","result":6,"id":2}"#);
    /// ```
    pub fn typed_ref<P, R, F>(self, name: &str, f: F) -> Self
    where
        P: BorrowedParams,
        R: Serialize,
        F: for<'de> Fn(P::Of<'de>) -> Result<R, RpcError> + Send + Sync + 'static,
    {
        self.method(name, move |call, out| {
            let p: P::Of<'_> = crate::params::parse_or_null(call.params())?;
            out.serialize(&f(p)?)
        })
    }

    /// [`RouterBuilder::typed_ref`] for handlers that also need their call.
    ///
    /// ```
    /// use switchboard::{Router, Session};
    /// let router = Router::builder()
    ///     .typed_ref_with::<(&str,), _, _>("echo", |(s,), call| {
    ///         Ok(format!("{s} {}", call.method().as_str()))
    ///     })
    ///     .build()
    ///     .unwrap();
    /// let mut session = Session::new(router);
    /// let resp = session.handle(br#"{"jsonrpc":"2.0","method":"echo","params":["hi"],"id":1}"#);
    /// assert_eq!(resp.unwrap(), br#"{"jsonrpc":"2.0","result":"hi echo","id":1}"#);
    /// ```
    pub fn typed_ref_with<P, R, F>(self, name: &str, f: F) -> Self
    where
        P: BorrowedParams,
        R: Serialize,
        F: for<'de> Fn(P::Of<'de>, &Call<'_>) -> Result<R, RpcError> + Send + Sync + 'static,
    {
        self.method(name, move |call, out| {
            let p: P::Of<'_> = crate::params::parse_or_null(call.params())?;
            out.serialize(&f(p, call)?)
        })
    }

    /// [`RouterBuilder::typed_ref`] whose result may borrow from the params: an
    /// echo or a lookup answers with the message's own strings, copying nothing
    /// (a handler with only borrowed or `Copy` params and result allocates
    /// nothing). `R` names the result type by its `'static` form
    /// ([`BorrowedResult`]), as `P` names the params; the handler returns
    /// `R::Of<'de>` for the params' `'de`. Both are given, the closure needs no
    /// annotations: `typed_borrowed::<(&str, u32), (&str, u32), _>`.
    ///
    /// ```
    /// use switchboard::{BorrowedParams, BorrowedResult, Router, RpcError, Session};
    /// #[derive(serde::Deserialize)]
    /// struct Call<'a> {
    ///     name: &'a str,
    ///     #[serde(default)]
    ///     verbose: bool,
    /// }
    /// impl BorrowedParams for Call<'static> {
    ///     type Of<'de> = Call<'de>;
    /// }
    /// #[derive(serde::Serialize)]
    /// struct Answer<'a> {
    ///     tool: &'a str,
    ///     verbose: bool,
    /// }
    /// impl BorrowedResult for Answer<'static> {
    ///     type Of<'de> = Answer<'de>;
    /// }
    /// let router = Router::builder()
    ///     .typed_borrowed::<(&str,), &str, _>("echo", |(s,)| Ok(s))
    ///     .typed_borrowed::<Call, Answer, _>("call", |c| {
    ///         if c.name.is_empty() {
    ///             return Err(RpcError::new(1, "no name"));
    ///         }
    ///         Ok(Answer { tool: c.name, verbose: c.verbose })
    ///     })
    ///     .build()
    ///     .unwrap();
    /// let mut session = Session::new(router);
    /// let resp = session.handle(br#"{"jsonrpc":"2.0","method":"echo","params":["hi"],"id":1}"#);
    /// assert_eq!(resp.unwrap(), br#"{"jsonrpc":"2.0","result":"hi","id":1}"#);
    /// let resp = session.handle(br#"{"jsonrpc":"2.0","method":"call","params":{"name":"ls"},"id":2}"#);
    /// assert_eq!(resp.unwrap(), br#"{"jsonrpc":"2.0","result":{"tool":"ls","verbose":false},"id":2}"#);
    /// ```
    pub fn typed_borrowed<P, R, F>(self, name: &str, f: F) -> Self
    where
        P: BorrowedParams,
        R: BorrowedResult,
        F: for<'de> BorrowingFn<'de, P, R> + Send + Sync + 'static,
    {
        self.method(name, move |call, out| {
            let p: P::Of<'_> = crate::params::parse_or_null(call.params())?;
            out.serialize(&f(p)?)
        })
    }

    /// [`RouterBuilder::typed`] for handlers that also need their call: the
    /// connection it came on ([`Call::connection`]), its id, its method.
    ///
    /// ```
    /// use switchboard::connection::{Connection, ConnectionConfig};
    /// use switchboard::{Router, Session};
    /// let router = Router::builder()
    ///     .typed_with("hello", |(name,): (String,), call| {
    ///         let conn = call.connection().map_or(0, |c| c.id());
    ///         Ok(format!("hello {name} on connection {conn}"))
    ///     })
    ///     .build()
    ///     .unwrap();
    /// let mut session = Session::new(router);
    /// let resp = session.handle(br#"{"jsonrpc":"2.0","method":"hello","params":["ada"],"id":1}"#);
    /// assert_eq!(resp.unwrap(), br#"{"jsonrpc":"2.0","result":"hello ada on connection 0","id":1}"#);
    /// ```
    pub fn typed_with<P, R, F>(self, name: &str, f: F) -> Self
    where
        P: DeserializeOwned,
        R: Serialize,
        F: Fn(P, &Call<'_>) -> Result<R, RpcError> + Send + Sync + 'static,
    {
        self.method(name, move |call, out| {
            let r = f(typed_params(call)?, call)?;
            out.serialize(&r)
        })
    }

    /// Registers an async handler, for methods that do I/O: it receives the call as
    /// an [`OwnedCall`] and returns a `'static` future (so it may `tokio::spawn`
    /// work); the future's `R` is serialized when it completes (a serialization
    /// failure is answered -32603, as for sync handlers).
    ///
    /// [`Session::handle_async`](crate::Session::handle_async) awaits the future
    /// (the async calls of one batch concurrently); [`Session::handle`](crate::Session::handle)
    /// drives it on the calling thread with a tiny blocking executor, which serves
    /// futures that need no runtime reactor (see there). A notification to the
    /// method runs the future and answers nothing. Sync handlers are unaffected:
    /// a message without async methods allocates nothing.
    ///
    /// ```
    /// use switchboard::{OwnedCall, Router, RpcError, Session};
    ///
    /// let router = Router::builder()
    ///     .method_async("lookup", |call: OwnedCall| async move {
    ///         // The call is owned: the future may outlive the message.
    ///         let key: (String,) = call.params().ok_or(RpcError::new(1, "no key"))?.parse()?;
    ///         // ... I/O here (a database, another service) ...
    ///         Ok(format!("value of {}", key.0))
    ///     })
    ///     .build()
    ///     .unwrap();
    /// let mut session = Session::new(router);
    /// // `handle` blocks until the future completes (no runtime needed here).
    /// let resp = session.handle(br#"{"jsonrpc":"2.0","method":"lookup","params":["k"],"id":1}"#);
    /// assert_eq!(resp.unwrap(), br#"{"jsonrpc":"2.0","result":"value of k","id":1}"#);
    /// ```
    pub fn method_async<F, Fut, R>(self, name: &str, f: F) -> Self
    where
        F: Fn(OwnedCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, RpcError>> + Send + 'static,
        R: Serialize + 'static,
    {
        self.push(
            name,
            Handler::Async(Box::new(move |call| {
                Ok(serialized(f(OwnedCall::from(call))))
            })),
        )
    }

    /// Registers a typed async handler: params are deserialized into `P` exactly as
    /// for [`RouterBuilder::typed`] (a mismatch is answered -32602 at once, before
    /// `f` is called, so no future is made), then `f`'s future is awaited as for
    /// [`RouterBuilder::method_async`].
    ///
    /// ```
    /// use switchboard::{Router, RpcError, Session};
    ///
    /// let router = Router::builder()
    ///     .typed_async("add", |(a, b): (i64, i64)| async move {
    ///         a.checked_add(b).ok_or(RpcError::new(1, "overflow"))
    ///     })
    ///     .build()
    ///     .unwrap();
    /// let mut session = Session::new(router);
    /// let resp = session.handle(br#"{"jsonrpc":"2.0","method":"add","params":[2,3],"id":1}"#);
    /// assert_eq!(resp.unwrap(), br#"{"jsonrpc":"2.0","result":5,"id":1}"#);
    /// let resp = session.handle(br#"{"jsonrpc":"2.0","method":"add","params":["x"],"id":2}"#);
    /// assert!(resp.unwrap().starts_with(br#"{"jsonrpc":"2.0","error":{"code":-32602"#));
    /// ```
    pub fn typed_async<P, R, F, Fut>(self, name: &str, f: F) -> Self
    where
        P: DeserializeOwned,
        R: Serialize + 'static,
        F: Fn(P) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, RpcError>> + Send + 'static,
    {
        self.push(
            name,
            Handler::Async(Box::new(move |call| Ok(serialized(f(typed_params(call)?))))),
        )
    }

    /// [`RouterBuilder::typed_async`] for handlers that also need their call:
    /// the [`OwnedCall`] (connection, cancellation token, id) comes with the
    /// typed params.
    ///
    /// ```
    /// use switchboard::{Router, Session};
    /// let router = Router::builder()
    ///     .typed_async_with("echo_id", |(): (), call| async move {
    ///         Ok(call.id().map(|id| id.as_str().to_owned()))
    ///     })
    ///     .build()
    ///     .unwrap();
    /// let mut session = Session::new(router);
    /// let resp = session.handle(br#"{"jsonrpc":"2.0","method":"echo_id","id":"x"}"#);
    /// assert_eq!(resp.unwrap(), br#"{"jsonrpc":"2.0","result":"\"x\"","id":"x"}"#);
    /// ```
    pub fn typed_async_with<P, R, F, Fut>(self, name: &str, f: F) -> Self
    where
        P: DeserializeOwned,
        R: Serialize + 'static,
        F: Fn(P, OwnedCall) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<R, RpcError>> + Send + 'static,
    {
        self.push(
            name,
            Handler::Async(Box::new(move |call| {
                let p = typed_params(call)?;
                Ok(serialized(f(p, OwnedCall::from(call))))
            })),
        )
    }

    /// Registers a notification handler: dispatched, never answered. (A request with
    /// an id to such a method is answered `"result":null` once the handler ran.)
    pub fn notification<F>(self, name: &str, f: F) -> Self
    where
        F: Fn(&Call<'_>) + Send + Sync + 'static,
    {
        self.push(name, Handler::Notify(Box::new(f)))
    }

    /// Registers a subscription: `subscribe` (a method) answers a fresh
    /// subscription id and hands `f` the call and a [`SubscriptionSink`] to
    /// keep and send to; each send reaches the client as a `notification`
    /// `{"subscription": id, "result": …}`; `unsubscribe` (a method taking
    /// `[id]`) closes it and answers `true`. Ethereum's names are
    /// `("eth_subscribe", "eth_unsubscribe", "eth_subscription")`; nothing else
    /// here is Ethereum's.
    ///
    /// `f` runs inline (it must not block): it checks the params (an error it
    /// returns is the answer, and the subscription is dropped) and typically
    /// moves the sink into a task or a thread that produces the notifications
    /// until [`SubscriptionSink::closed`] completes. Ids, the bounded buffer and
    /// what happens when it is full, closing, order, and the answers without a
    /// connection that can push (-32601) or for an unknown id (-32000) are in
    /// [`connection::subscription`](crate::connection::subscription).
    ///
    /// ```
    /// use switchboard::{Router, Session};
    /// let router = Router::builder()
    ///     .subscription("eth_subscribe", "eth_unsubscribe", "eth_subscription", |_call, sink| {
    ///         std::thread::spawn(move || { let _ = sink.send(&1); });
    ///         Ok(())
    ///     })
    ///     .build()
    ///     .unwrap();
    /// // A session attached to no connection cannot push: -32601, as geth over HTTP.
    /// let mut session = Session::new(router);
    /// let resp = session.handle(br#"{"jsonrpc":"2.0","method":"eth_subscribe","params":["newHeads"],"id":1}"#).unwrap();
    /// assert!(resp.starts_with(br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Notifications not supported""#));
    /// ```
    pub fn subscription<F>(
        mut self,
        subscribe: &str,
        unsubscribe: &str,
        notification: &str,
        f: F,
    ) -> Self
    where
        F: Fn(&Call<'_>, SubscriptionSink) -> Result<(), RpcError> + Send + Sync + 'static,
    {
        let registration = self.subscriptions;
        self.subscriptions += 1;
        let notification: Box<str> = notification.into();
        self.method(subscribe, move |call, out| {
            if call.is_notification() {
                // Nobody would learn the id: nothing to subscribe.
                return Ok(());
            }
            let sink = crate::connection::open_subscription(
                call.connection(),
                registration,
                &notification,
            )?;
            let id = sink.id().to_owned();
            f(call, sink)?;
            out.str(&id)
        })
        .method(unsubscribe, move |call, out| {
            let (id,): (std::borrow::Cow<'_, str>,) = crate::params::parse_or_null(call.params())?;
            out.bool(crate::connection::unsubscribe(
                call.connection(),
                registration,
                &id,
            )?)
        })
    }

    /// Describes a registered method for `rpc.discover`: `params` is a JSON array of
    /// OpenRPC content descriptors, `result` one content descriptor.
    pub fn schema(mut self, name: &str, params: Option<&str>, result: Option<&str>) -> Self {
        self.schemas.push(Described {
            name: name.into(),
            params: params.map(Into::into),
            result: result.map(Into::into),
            structure: None,
            whole: None,
        });
        self
    }

    /// Describes `name` with generated schemas (`crate::dispatch::schema`):
    /// `params` a JSON array of content descriptors, `result` one, and the
    /// schemas they refer to.
    #[cfg(feature = "schemars")]
    pub(crate) fn push_described(
        mut self,
        name: &str,
        params: serde_json::Value,
        result: serde_json::Value,
        (structure, whole): (Option<&'static str>, Option<serde_json::Value>),
        components: serde_json::Map<String, serde_json::Value>,
    ) -> Self {
        self.schemas.push(Described {
            name: name.into(),
            params: Some(params.to_string()),
            result: Some(result.to_string()),
            structure,
            whole,
        });
        self.components.extend(components);
        self
    }

    /// Whether the built-in `rpc.discover` method is served (default `true`).
    /// Off, a call to it is answered -32601 like any unregistered method;
    /// [`Router::discover_document`] still has the document, to serve
    /// elsewhere.
    ///
    /// ```
    /// use switchboard::{Router, Session};
    /// let router = Router::builder().method("ping", |_, out| out.str("pong")).discover(false).build().unwrap();
    /// let doc: serde_json::Value = serde_json::from_slice(router.discover_document()).unwrap();
    /// assert_eq!(doc["methods"][0]["name"], "ping");
    /// let mut session = Session::new(router);
    /// let resp = session.handle(br#"{"jsonrpc":"2.0","method":"rpc.discover","id":1}"#).unwrap();
    /// assert!(resp.starts_with(br#"{"jsonrpc":"2.0","error":{"code":-32601"#));
    /// ```
    pub fn discover(mut self, on: bool) -> Self {
        self.discover = on;
        self
    }

    /// Adds a [`Middleware`] layer around every call of the registered methods
    /// (`rpc.discover` and subscription methods included): its `before` runs
    /// after the layers added earlier, its `after` before theirs. See
    /// [`middleware`](crate::middleware) for what layers see and an example;
    /// without any, a call pays one branch.
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use std::sync::Arc;
    /// use switchboard::middleware::{Done, Middleware};
    /// use switchboard::{Router, RpcError, Session};
    ///
    /// #[derive(Default)]
    /// struct Counts { calls: AtomicU64, errors: AtomicU64 }
    /// struct Count(Arc<Counts>);
    /// impl Middleware for Count {
    ///     fn after(&self, done: &Done<'_>) {
    ///         self.0.calls.fetch_add(1, Ordering::Relaxed);
    ///         if done.outcome().error_code().is_some() {
    ///             self.0.errors.fetch_add(1, Ordering::Relaxed);
    ///         }
    ///     }
    /// }
    /// let counts = Arc::new(Counts::default());
    /// let router = Router::builder()
    ///     .typed("div", |(a, b): (i64, i64)| a.checked_div(b).ok_or(RpcError::new(1, "by zero")))
    ///     .middleware(Count(counts.clone()))
    ///     .build()
    ///     .unwrap();
    /// let mut session = Session::new(router);
    /// session.handle(br#"{"jsonrpc":"2.0","method":"div","params":[6,3],"id":1}"#);
    /// session.handle(br#"{"jsonrpc":"2.0","method":"div","params":[6,0],"id":2}"#);
    /// session.handle(br#"{"jsonrpc":"2.0","method":"nope","id":3}"#); // unregistered: not seen
    /// assert_eq!(counts.calls.load(Ordering::Relaxed), 2);
    /// assert_eq!(counts.errors.load(Ordering::Relaxed), 1);
    /// ```
    pub fn middleware(mut self, layer: impl Middleware) -> Self {
        self.layers.push(Box::new(layer));
        self
    }

    /// The parser limits sessions of this router use.
    pub fn config(mut self, config: ParserConfig) -> Self {
        self.config = config;
        self
    }

    /// The title `rpc.discover` reports (default `switchboard`).
    pub fn title(mut self, title: &str) -> Self {
        self.title = title.into();
        self
    }

    /// Where well-formed Response objects from the peer go (they are never answered).
    /// Without a sink they are dropped and counted ([`crate::Session::dropped_responses`]).
    pub fn response_sink<F>(mut self, f: F) -> Self
    where
        F: Fn(&Response<'_>) + Send + Sync + 'static,
    {
        self.response_sink = Some(Box::new(f));
        self
    }

    /// The protocol's cancel notification ([`CancelRule`]): on a connection
    /// ([`Session::attach`](crate::Session::attach)), a notification to its
    /// method cancels the running async call whose id its params name: the
    /// call's token fires, its future is dropped, and it is answered as the rule
    /// says (or not at all). The notification also reaches a handler registered
    /// under the same name, if there is one.
    pub fn cancel_notification(mut self, rule: CancelRule) -> Self {
        self.cancel = Some(rule);
        self
    }

    /// Validates the registrations and freezes them: the method table is built once.
    pub fn build(mut self) -> Result<Arc<Router>, BuildError> {
        let mut seen = std::collections::HashSet::new();
        for e in &self.entries {
            if e.name.is_empty() {
                return Err(BuildError::EmptyName);
            }
            if e.name.starts_with("rpc.") {
                return Err(BuildError::Reserved(e.name.to_string()));
            }
            if !seen.insert(e.name.clone()) {
                return Err(BuildError::Duplicate(e.name.to_string()));
            }
        }
        for d in std::mem::take(&mut self.schemas) {
            let name = d.name;
            let Some(e) = self.entries.iter_mut().find(|e| *e.name == *name) else {
                return Err(BuildError::UnknownMethod(name));
            };
            let parse = |s: Option<String>| -> Result<Option<serde_json::Value>, BuildError> {
                s.map(|s| {
                    serde_json::from_str(&s).map_err(|_| BuildError::InvalidSchema(name.clone()))
                })
                .transpose()
            };
            e.params_schema = parse(d.params)?;
            if e.params_schema.as_ref().is_some_and(|p| !p.is_array()) {
                return Err(BuildError::InvalidSchema(name));
            }
            e.result_schema = parse(d.result)?;
            e.param_structure = d.structure;
            e.params_whole = d.whole;
        }
        let discover = discover_document(&self.title, &self.entries, &self.components);
        if self.discover {
            self.entries.push(Entry {
                name: "rpc.discover".into(),
                handler: Handler::Discover,
                params_schema: None,
                result_schema: None,
                param_structure: None,
                params_whole: None,
            });
        }
        let names: Vec<&str> = self.entries.iter().map(|e| &*e.name).collect();
        let table = MethodTable::build(&names);
        debug_assert_eq!(table.len(), names.len());
        Ok(Arc::new(Router {
            table,
            entries: self.entries.into_boxed_slice(),
            config: self.config,
            response_sink: self.response_sink,
            cancel: self.cancel,
            discover: discover.into_boxed_slice(),
            layers: (!self.layers.is_empty()).then(|| Arc::new(Layers(self.layers.into()))),
        }))
    }
}

/// A typed handler's params: absent params deserialize from `null`; a mismatch is
/// -32602 with a `data` object saying what did not fit.
fn typed_params<P: DeserializeOwned>(call: &Call<'_>) -> Result<P, RpcError> {
    Ok(crate::params::parse_or_null(call.params())?)
}

/// Boxes a handler's future, serializing its result when it completes.
fn serialized<Fut, R>(fut: Fut) -> AsyncResult
where
    Fut: Future<Output = Result<R, RpcError>> + Send + 'static,
    R: Serialize + 'static,
{
    Box::pin(async move {
        let r = fut.await?;
        // serde_json::to_vec's initial capacity.
        let mut out = Vec::with_capacity(128);
        match crate::write::to_vec_into(&mut out, &r) {
            Ok(()) => Ok(out),
            Err(e) => Err(RpcError::internal(format_args!(
                "the result could not be serialized: {e}"
            ))),
        }
    })
}

fn discover_document(
    title: &str,
    entries: &[Entry],
    components: &serde_json::Map<String, serde_json::Value>,
) -> Vec<u8> {
    let methods: Vec<serde_json::Value> = entries
        .iter()
        .map(|e| {
            let mut m = serde_json::json!({
                "name": &*e.name,
                "params": e.params_schema.clone().unwrap_or_else(|| serde_json::json!([])),
            });
            if let Some(r) = &e.result_schema {
                m["result"] = r.clone();
            }
            if let Some(p) = e.param_structure {
                m["paramStructure"] = p.into();
            }
            if let Some(w) = &e.params_whole {
                m["x-params-schema"] = w.clone();
            }
            if matches!(e.handler, Handler::Notify(_)) {
                m["x-notification"] = serde_json::Value::Bool(true);
            }
            m
        })
        .collect();
    let mut doc = serde_json::json!({
        "openrpc": "1.3.2",
        "info": { "title": title, "version": env!("CARGO_PKG_VERSION") },
        "methods": methods,
    });
    if !components.is_empty() {
        doc["components"] = serde_json::json!({ "schemas": components });
    }
    serde_json::to_vec(&doc).expect("a JSON value always serializes")
}

/// The frozen method table: immutable, `Send + Sync`, shared by every session.
///
/// ```
/// use std::sync::Arc;
/// use switchboard::{Router, Session};
/// let router: Arc<Router> = Router::builder()
///     .typed("double", |(n,): (i64,)| Ok(n * 2))
///     .build()
///     .unwrap();
/// assert!(router.methods().any(|m| m == "double"));
/// // Built once, shared: one session per thread (or connection), the router behind an `Arc`.
/// let workers: Vec<_> = (1..=2)
///     .map(|n| {
///         let router = Arc::clone(&router);
///         std::thread::spawn(move || {
///             let mut session = Session::new(router);
///             let req = format!(r#"{{"jsonrpc":"2.0","method":"double","params":[{n}],"id":{n}}}"#);
///             session.handle(req.as_bytes()).unwrap().to_vec()
///         })
///     })
///     .collect();
/// let answers: Vec<Vec<u8>> = workers.into_iter().map(|w| w.join().unwrap()).collect();
/// assert_eq!(answers[0], br#"{"jsonrpc":"2.0","result":2,"id":1}"#);
/// assert_eq!(answers[1], br#"{"jsonrpc":"2.0","result":4,"id":2}"#);
/// ```
#[must_use]
pub struct Router {
    table: MethodTable,
    entries: Box<[Entry]>,
    config: ParserConfig,
    response_sink: Option<Box<ResponseFn>>,
    cancel: Option<CancelRule>,
    discover: Box<[u8]>,
    /// The middleware layers, if any were added.
    layers: Option<Arc<Layers>>,
}

impl fmt::Debug for Router {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Router")
            .field(
                "methods",
                &self.entries.iter().map(|e| &*e.name).collect::<Vec<_>>(),
            )
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Router {
    /// Starts registering methods.
    pub fn builder() -> RouterBuilder {
        RouterBuilder {
            entries: Vec::new(),
            schemas: Vec::new(),
            components: serde_json::Map::new(),
            discover: true,
            config: ParserConfig::new(),
            response_sink: None,
            cancel: None,
            title: "switchboard".into(),
            subscriptions: 0,
            layers: Vec::new(),
        }
    }

    /// The parser limits of this router's sessions.
    pub fn config(&self) -> &ParserConfig {
        &self.config
    }

    /// The registered method names (the built-in `rpc.discover` included).
    pub fn methods(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| &*e.name)
    }

    /// The OpenRPC document `rpc.discover` answers.
    pub fn discover_document(&self) -> &[u8] {
        &self.discover
    }

    #[inline]
    pub(crate) fn lookup(&self, name: &str) -> Option<&Entry> {
        self.table.get(name).map(|i| &self.entries[i as usize])
    }

    /// The middleware layers, if any.
    #[inline(always)]
    pub(crate) fn layers(&self) -> Option<&Arc<Layers>> {
        self.layers.as_ref()
    }

    pub(crate) fn response_sink(&self) -> Option<&ResponseFn> {
        self.response_sink.as_deref()
    }

    /// The cancel notification this router's sessions act on, if any.
    pub fn cancel_rule(&self) -> Option<&CancelRule> {
        self.cancel.as_ref()
    }
}
