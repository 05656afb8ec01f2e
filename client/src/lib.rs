//! A JSON-RPC 2.0 client over HTTP and WebSocket whose answers are classified by
//! switchboard's own parser, without copying: a result stays in the message it
//! came in ([`RawResponse`]) until it is deserialized, and answers are matched
//! to requests by the exact bytes of their ids.
//!
//! - [`Client::request`] (typed), [`Client::request_raw`] (a borrowed view),
//!   [`Client::notify`];
//! - [`Client::batch`]: several requests and notifications in one message, the
//!   answers handed back in request order whatever order they came in;
//! - [`Client::subscribe`] (WebSocket): a [`Subscription`] yields each
//!   notification whose `params.subscription` is its id, and unsubscribes when
//!   dropped or on [`Subscription::unsubscribe`];
//! - a timeout per call ([`ClientBuilder::timeout`],
//!   [`Client::request_raw_with_timeout`]);
//! - errors as one enum ([`Error`]): the server's error object, a timeout, the
//!   transport, an invalid response.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # // A server in this process (switchboard-server's HTTP transport), on a free port.
//! # let router = switchboard::Router::builder()
//! #     .typed("subtract", |(a, b): (f64, f64)| Ok(a - b))
//! #     .notification("update", |_| {})
//! #     .build()?;
//! # let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! # let url = format!("http://{}/", listener.local_addr()?);
//! # let service = switchboard_server::http::Switchboard::new(router);
//! # tokio::spawn(switchboard_server::http::serve(listener, service, std::future::pending()));
//! use switchboard_client::{BatchRequest, Client};
//! let client = Client::connect(&url).await?; // "http://127.0.0.1:8080/", say
//! let diff: f64 = client.request("subtract", &[42, 23]).await?;
//! assert_eq!(diff, 19.0);
//! let mut batch = BatchRequest::new();
//! batch.request("subtract", &[1, 2])?;
//! batch.notify("update", &[5])?;
//! let answers = client.batch(&batch).await?;
//! assert_eq!(answers[0].as_ref().unwrap().as_str(), "-1.0");
//! # Ok(()) }
//! ```
//!
//! HTTP is keep-alive HTTP/1.1 connections in a small pool of the client's
//! own, one per call in flight, idle ones reused; the client writes the
//! requests and reads the answers itself (heads parsed with `httparse`;
//! `Content-Length`, chunked or until the connection ends), in the calling
//! future (`http://` only: no TLS). WebSocket (`ws://`) is one connection per
//! [`Client`], its answers read by a task of its own.

mod batch;
mod error;
mod http;
mod message;
mod response;
mod subscription;
mod ws;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use hyper::Uri;
use serde::Serialize;
use serde::de::DeserializeOwned;

pub use batch::BatchRequest;
pub use error::{Error, ErrorObject};
pub use response::RawResponse;
pub use subscription::Subscription;
pub use switchboard::{RawValue, Router};

/// Settings of a [`Client`].
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # // A server in this process that wants the token, on a free port.
/// # let router = switchboard::Router::builder().typed("add", |(a, b): (i64, i64)| Ok(a + b)).build()?;
/// # let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// # let url = format!("http://{}/", listener.local_addr()?);
/// # let service = switchboard_server::http::Switchboard::new(router).bearer_token("secret");
/// # tokio::spawn(switchboard_server::http::serve(listener, service, std::future::pending()));
/// use std::time::Duration;
/// use switchboard_client::{Client, Error};
/// let client = Client::builder()
///     .timeout(Some(Duration::from_secs(5)))
///     .bearer_token("secret")
///     .connect(&url) // "http://127.0.0.1:8080/", say
///     .await?;
/// assert_eq!(client.request::<_, i64>("add", &[2, 3]).await?, 5);
/// // Without the token the server refuses the call before JSON-RPC: HTTP 401.
/// let anonymous = Client::connect(&url).await?;
/// let refused = anonymous.request::<_, i64>("add", &[2, 3]).await.unwrap_err();
/// assert!(matches!(refused, Error::Http { status: 401, .. }));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct ClientBuilder {
    timeout: Option<Duration>,
    token: Option<String>,
    max_response_bytes: usize,
    subscription_buffer: usize,
    server_requests: Option<Arc<Router>>,
}

impl Default for ClientBuilder {
    fn default() -> Self {
        ClientBuilder {
            timeout: Some(Client::DEFAULT_TIMEOUT),
            token: None,
            max_response_bytes: Client::DEFAULT_MAX_RESPONSE_BYTES,
            subscription_buffer: Client::DEFAULT_SUBSCRIPTION_BUFFER,
            server_requests: None,
        }
    }
}

impl ClientBuilder {
    /// How long a call waits for its answer (`None`: for ever) [default: 30 s].
    pub fn timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sends `Authorization: Bearer TOKEN` (with each HTTP request; at the
    /// WebSocket handshake).
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(token.into());
        self
    }

    /// The largest answer [default: 16 MiB]. Over HTTP a larger one fails its
    /// call with [`Error::InvalidResponse`]; over WebSocket it breaks the
    /// connection, failing every pending call with [`Error::Transport`].
    pub fn max_response_bytes(mut self, n: usize) -> Self {
        self.max_response_bytes = n.max(1);
        self
    }

    /// How many notifications of one subscription may wait to be read
    /// (at least 1) [default: 1024]; see [`Subscription`] for what happens past it.
    pub fn subscription_buffer(mut self, n: usize) -> Self {
        self.subscription_buffer = n.max(1);
        self
    }

    /// Answers the requests a WebSocket server sends the client with `router`
    /// (its handlers run on the connection's reading task: one at a time, and
    /// an async one holds the reading up while it runs). Without it every
    /// such request is answered -32601 Method not found.
    pub fn server_requests(mut self, router: Arc<Router>) -> Self {
        self.server_requests = Some(router);
        self
    }

    /// A client for `url` (`http://` or `ws://`). HTTP connects on the first
    /// call (and keeps connections alive in a pool); WebSocket connects now.
    ///
    /// # Errors
    /// [`Error::Unsupported`] for another scheme or a malformed URL,
    /// [`Error::Transport`] when the WebSocket connection fails.
    pub async fn connect(self, url: &str) -> Result<Client, Error> {
        let uri: Uri = url
            .parse()
            .map_err(|e| Error::Unsupported(format!("{url:?} is not a URL: {e}")))?;
        let transport = match uri.scheme_str() {
            Some("http") => Transport::Http(http::Http::new(
                uri,
                self.token.as_deref(),
                self.max_response_bytes,
            )?),
            Some("ws") => Transport::Ws(
                ws::Ws::connect(
                    &uri,
                    self.token.as_deref(),
                    self.max_response_bytes,
                    self.subscription_buffer,
                    self.server_requests,
                )
                .await?,
            ),
            Some(s) => {
                return Err(Error::Unsupported(format!(
                    "{s}:// (this client speaks http:// and ws://)"
                )));
            }
            None => return Err(Error::Unsupported(format!("{url:?} has no scheme"))),
        };
        Ok(Client {
            inner: Arc::new(Inner {
                transport,
                timeout: self.timeout,
                next_id: AtomicU64::new(1),
            }),
        })
    }
}

// One per client, behind its `Arc`: the size difference costs nothing.
#[allow(clippy::large_enum_variant)]
enum Transport {
    Http(http::Http),
    Ws(ws::Ws),
}

struct Inner {
    transport: Transport,
    timeout: Option<Duration>,
    next_id: AtomicU64,
}

/// A JSON-RPC client; cheap to clone (the clones share the connection pool or
/// the WebSocket connection and its ids).
///
/// Here against a server in the same process (`switchboard-server`'s HTTP
/// transport on a free port):
///
/// ```
/// use switchboard::{Router, RpcError};
/// use switchboard_client::{BatchRequest, Client, Error};
/// use switchboard_server::http::{Switchboard, serve};
///
/// #[tokio::main(flavor = "current_thread")]
/// async fn main() -> Result<(), Box<dyn std::error::Error>> {
///     let router = Router::builder()
///         .typed("subtract", |(a, b): (i64, i64)| Ok(a - b))
///         .typed("withdraw", |(amount,): (u64,)| {
///             Err::<u64, _>(RpcError::new(42, "insufficient funds").with_data(&amount))
///         })
///         .build()?;
///     let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
///     let url = format!("http://{}/", listener.local_addr()?);
///     tokio::spawn(serve(listener, Switchboard::new(router), std::future::pending()));
///
///     let client = Client::connect(&url).await?;
///     // Typed: params serialized, the result deserialized.
///     let diff: i64 = client.request("subtract", &[42, 23]).await?;
///     assert_eq!(diff, 19);
///     // Raw: the result's bytes as the server wrote them (a clone shares the pool).
///     let raw = client.clone().request_raw("subtract", &[1, 2]).await?;
///     assert_eq!(raw.as_str(), "-1");
///     // The server's error object, as it sent it.
///     match client.request::<_, u64>("withdraw", &[5]).await {
///         Err(Error::Rpc(e)) => {
///             assert_eq!((e.code(), e.message()), (42, "insufficient funds"));
///             assert_eq!(e.data_json(), Some("5"));
///         }
///         other => panic!("expected the server's error, got {other:?}"),
///     }
///     // A batch: the answers in request order; a notification gets none.
///     let mut batch = BatchRequest::new();
///     batch.request("subtract", &[10, 1])?;
///     batch.notify("subtract", &[0, 0])?;
///     batch.request("withdraw", &[1])?;
///     let answers = client.batch(&batch).await?;
///     assert_eq!(answers.len(), 2);
///     assert_eq!(answers[0].as_ref().unwrap().parse::<i64>()?, 9);
///     assert_eq!(answers[1].as_ref().unwrap_err().rpc().unwrap().code(), 42);
///     Ok(())
/// }
/// ```
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let t = match self.inner.transport {
            Transport::Http(_) => "http",
            Transport::Ws(_) => "ws",
        };
        f.debug_struct("Client").field("transport", &t).finish()
    }
}

/// Waits for `fut` at most `timeout`.
async fn within<T>(
    timeout: Option<Duration>,
    fut: impl Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    match timeout {
        Some(t) => tokio::time::timeout(t, fut)
            .await
            .unwrap_or(Err(Error::Timeout)),
        None => fut.await,
    }
}

impl Client {
    /// The default time a call waits for its answer.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
    /// The default largest answer.
    pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 16 << 20;
    /// The default subscription buffer, in notifications.
    pub const DEFAULT_SUBSCRIPTION_BUFFER: usize = 1024;

    /// Settings other than the defaults.
    pub fn builder() -> ClientBuilder {
        ClientBuilder::default()
    }

    /// A client for `url` with the default settings ([`ClientBuilder::connect`]).
    ///
    /// # Errors
    /// See [`ClientBuilder::connect`].
    pub async fn connect(url: &str) -> Result<Client, Error> {
        ClientBuilder::default().connect(url).await
    }

    fn ids(&self, n: u64) -> u64 {
        self.inner.next_id.fetch_add(n, Ordering::Relaxed)
    }

    /// Calls `method` and deserializes its result.
    ///
    /// `params` must serialize to a JSON array or object; `()` (or `None`)
    /// sends none.
    ///
    /// # Errors
    /// [`Error::Rpc`] with the server's error object; [`Error::InvalidResponse`]
    /// when the result does not fit `R`; see [`Error`] for the rest.
    pub async fn request<P, R>(&self, method: &str, params: &P) -> Result<R, Error>
    where
        P: Serialize + ?Sized,
        R: DeserializeOwned,
    {
        self.request_raw(method, params).await?.parse()
    }

    /// Calls `method`; its result as received, borrowed from the answer.
    ///
    /// # Errors
    /// See [`Client::request`].
    pub async fn request_raw<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<RawResponse, Error> {
        self.request_raw_with_timeout(method, params, self.inner.timeout)
            .await
    }

    /// [`Client::request_raw`] with a timeout of its own (`None`: wait for ever).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # // A server in this process whose `never` never answers, on a free port.
    /// # let router = switchboard::Router::builder()
    /// #     .method_async("never", |_| async {
    /// #         std::future::pending::<()>().await;
    /// #         Ok(())
    /// #     })
    /// #     .typed("ping", |(): ()| Ok("pong"))
    /// #     .build()?;
    /// # let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    /// # let url = format!("http://{}/", listener.local_addr()?);
    /// # let service = switchboard_server::http::Switchboard::new(router);
    /// # tokio::spawn(switchboard_server::http::serve(listener, service, std::future::pending()));
    /// use std::time::Duration;
    /// use switchboard_client::{Client, Error};
    /// let client = Client::connect(&url).await?; // the default timeout: 30 s
    /// let quick = Some(Duration::from_millis(50));
    /// let late = client.request_raw_with_timeout("never", &(), quick).await;
    /// assert!(matches!(late, Err(Error::Timeout)));
    /// // The client is still usable: the broken connection is not reused.
    /// assert_eq!(client.request_raw("ping", &()).await?.as_str(), r#""pong""#);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// See [`Client::request`].
    pub async fn request_raw_with_timeout<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
        timeout: Option<Duration>,
    ) -> Result<RawResponse, Error> {
        let id = self.ids(1);
        let msg = message::request(method, params, id)?;
        match &self.inner.transport {
            Transport::Http(h) => {
                within(timeout, async {
                    match h.post(msg).await? {
                        Some(body) => response::single(body, id),
                        None => Err(Error::InvalidResponse(
                            "no content (204) in answer to a request".into(),
                        )),
                    }
                })
                .await
            }
            Transport::Ws(w) => w.call(id, msg, None, timeout).await,
        }
    }

    /// Sends a notification (never answered). Over HTTP it returns once the
    /// server has taken it (204); over WebSocket once it is queued.
    ///
    /// # Errors
    /// [`Error::InvalidParams`]; the transport's errors.
    pub async fn notify<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
    ) -> Result<(), Error> {
        let msg = message::notification(method, params)?;
        match &self.inner.transport {
            Transport::Http(h) => {
                within(self.inner.timeout, async {
                    match h.post(msg).await? {
                        None => Ok(()),
                        // A server that answers a notification with a body (an
                        // error object about it): not an error of the call.
                        Some(_) => Ok(()),
                    }
                })
                .await
            }
            Transport::Ws(w) => w.send(msg),
        }
    }

    /// Sends `batch` as one message; the answers to its requests, in the order
    /// they were added (an empty `Vec` when it holds only notifications).
    ///
    /// # Errors
    /// The whole batch fails on the transport's errors, a timeout, an invalid
    /// answer, or the server's refusal of the batch as a whole (an error
    /// object with a null id, e.g. too long); an error of one request is in
    /// its own slot.
    pub async fn batch(
        &self,
        batch: &BatchRequest,
    ) -> Result<Vec<Result<RawResponse, Error>>, Error> {
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        let n = batch.requests();
        let base = self.ids(n as u64);
        let msg = batch.encode(base);
        match &self.inner.transport {
            Transport::Http(h) => {
                within(self.inner.timeout, async {
                    match h.post(msg).await? {
                        Some(body) if n > 0 => response::batch(body, base, n),
                        None if n == 0 => Ok(Vec::new()),
                        Some(_) => Ok(Vec::new()),
                        None => Err(Error::InvalidResponse(
                            "no content (204) in answer to a batch with requests".into(),
                        )),
                    }
                })
                .await
            }
            Transport::Ws(w) if n == 0 => w.send(msg).map(|()| Vec::new()),
            Transport::Ws(w) => w.batch(base, n, msg, self.inner.timeout).await,
        }
    }

    /// Subscribes: calls `method` (`eth_subscribe`), whose result is the
    /// subscription id, then yields each notification whose
    /// `params.subscription` is that id. `unsubscribe` is the method that ends
    /// it (`eth_unsubscribe`), called with `[id]` when the [`Subscription`] is
    /// dropped or on [`Subscription::unsubscribe`]. WebSocket only.
    ///
    /// # Errors
    /// [`Error::Unsupported`] over HTTP; as [`Client::request`] otherwise.
    pub async fn subscribe<P: Serialize + ?Sized>(
        &self,
        method: &str,
        params: &P,
        unsubscribe: &str,
    ) -> Result<Subscription, Error> {
        let Transport::Ws(w) = &self.inner.transport else {
            return Err(Error::Unsupported(
                "subscriptions need a WebSocket connection (ws://)".into(),
            ));
        };
        let id = self.ids(1);
        let msg = message::request(method, params, id)?;
        let (slot, rx) = w.slot();
        let lagged = slot.lagged.clone();
        let sub_id = w.call(id, msg, Some(slot), self.inner.timeout).await?;
        Ok(Subscription::new(
            self.clone(),
            sub_id,
            unsubscribe,
            rx,
            lagged,
        ))
    }

    /// Answers the server sent that matched no call of this client (unknown or
    /// repeated ids, answers to calls that timed out, to dropped
    /// subscriptions' unsubscribe calls); always 0 over HTTP, where an answer
    /// that does not match is the call's [`Error::InvalidResponse`].
    pub fn unmatched_responses(&self) -> u64 {
        match &self.inner.transport {
            Transport::Http(_) => 0,
            Transport::Ws(w) => w.unmatched(),
        }
    }
}

/// The crate README's examples (the crates.io page), compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
