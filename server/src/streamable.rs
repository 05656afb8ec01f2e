//! MCP's Streamable HTTP transport (protocol revisions 2025-03-26 to
//! 2025-11-25): one endpoint (by default `/mcp`) where a client POSTs its
//! messages and may GET a stream of the server's, each session one
//! full-duplex [`Connection`] whose handlers talk back through their
//! [`Peer`](switchboard::connection::Peer) as they do over stdio.
//!
//! | request | answer |
//! | --- | --- |
//! | POST `initialize` without `Mcp-Session-Id` | a new session: its id in the `Mcp-Session-Id` header of the answer |
//! | POST without `Mcp-Session-Id`, not `initialize` | 400 |
//! | any request with an unknown or expired `Mcp-Session-Id` | 404 (the client starts a new session) |
//! | POST of notifications or responses only | 202, no body |
//! | POST with requests whose handlers answer without sending anything first | 200 `application/json`, the response |
//! | POST with requests whose handlers send the client notifications or requests before answering | 200 `text/event-stream`: those messages, then the response, then the stream ends |
//! | GET with `Accept: text/event-stream` | a stream of the messages that no POST is open to carry (a newer GET replaces an older one) |
//! | DELETE | the session ends: its pending requests to the client fail, its calls are cancelled; 204 |
//! | another method | 405; another path 404; a wrong or missing bearer token 401; an `Origin` that is not a loopback host, the server's own host or one of [`StreamableConfig::allowed_origins`] 403 |
//!
//! Where each message of the server goes: to the newest POST stream still
//! open, else to the GET stream, else it waits (in the connection's bounded
//! queue: senders wait, [`Peer::try_notify`](switchboard::connection::Peer::try_notify)
//! is refused) until a stream opens. Messages are never duplicated and never
//! dropped while a stream is open; the transport does not resume broken
//! streams (no `Last-Event-ID` replay): a client that drops a POST stream
//! drops the calls it carried (their futures are dropped, their pending
//! requests to the client fail).
//!
//! A session that has no request in flight and no stream open for
//! [`StreamableConfig::session_idle_timeout`] ends as a DELETE ends it; at
//! most [`StreamableConfig::max_sessions`] exist at once (503 beyond).
//!
//! ```no_run
//! use std::sync::Arc;
//! use switchboard::Router;
//! use switchboard_server::streamable::{Streamable, StreamableConfig, serve};
//!
//! # async fn run() -> std::io::Result<()> {
//! let router = Router::builder().method("ping", |_, out| out.raw_json(b"{}")).build().unwrap();
//! let service = Streamable::new(router, StreamableConfig::default());
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
//! serve(listener, service, std::future::pending()).await
//! # }
//! ```

use std::collections::HashMap;
use std::collections::hash_map::RandomState;
use std::convert::Infallible;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body::Body;
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use switchboard::connection::{Connection, ConnectionConfig, Outgoing};
use switchboard::{Router, Session};
use tokio::sync::{Notify, mpsc, oneshot};

use crate::http::ResponseBody;

/// The header that names a session.
pub const SESSION_HEADER: &str = "mcp-session-id";

/// Limits and timeouts of a [`Streamable`] endpoint.
///
/// A stateless endpoint on `/rpc`: a POST without a session is served by a
/// connection of its own (see [`StreamableConfig::stateless`]):
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use http_body_util::{BodyExt, Full};
/// use switchboard::Router;
/// use switchboard_server::streamable::{Streamable, StreamableConfig};
///
/// let config = StreamableConfig {
///     path: "/rpc".into(),
///     stateless: true,
///     ..StreamableConfig::default()
/// };
/// let router = Router::builder().typed("subtract", |(a, b): (i64, i64)| Ok(a - b)).build().unwrap();
/// let endpoint = Streamable::new(router, config);
/// let call = hyper::Request::post("/rpc")
///     .header("content-type", "application/json")
///     .header("accept", "application/json, text/event-stream")
///     .body(Full::new(bytes::Bytes::from_static(
///         br#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#,
///     )))
///     .unwrap();
/// let answer = endpoint.respond(call).await;
/// assert_eq!(answer.status(), 200);
/// let body = answer.into_body().collect().await.unwrap().to_bytes();
/// assert!(String::from_utf8_lossy(&body).contains(r#"{"jsonrpc":"2.0","result":19,"id":1}"#));
/// assert_eq!(endpoint.sessions(), 0); // nothing kept
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct StreamableConfig {
    /// The endpoint's path (default `/mcp`).
    pub path: String,
    /// Sessions at once; an `initialize` beyond is answered 503 (default 1024).
    pub max_sessions: usize,
    /// How long a session with nothing in flight lives on (default 10 min).
    pub session_idle_timeout: Duration,
    /// How long a body may take to arrive (default 30 s).
    pub body_read_timeout: Duration,
    /// The bearer token every request must carry, if any.
    pub token: Option<Vec<u8>>,
    /// Each session's connection: its queue and its requests' timeout.
    pub connection: ConnectionConfig,
    /// A comment line sent on an idle stream this often, so proxies keep it
    /// (default 15 s).
    pub keep_alive: Duration,
    /// What a POST without `Mcp-Session-Id` that is not `initialize` gets:
    /// `false` (MCP's rule, the default), 400; `true`, it is served by a
    /// connection of its own that ends with the POST (a stateless call, as
    /// A2A's streaming methods are): its handlers' notifications stream before
    /// the answer, and their requests to the client fail at once
    /// ([`Connection::notify_only`]), as the client has no session to answer on.
    pub stateless: bool,
    /// Origins admitted besides loopback ones and the request's own `Host` (each
    /// `scheme://host[:port]`, or several separated by commas, compared without
    /// regard to case; `*` admits any): the pages that may call the endpoint from a
    /// browser. The same list as the CORS layer's ([`crate::http::cors`]):
    /// `switchboard serve --cors` sets both, so CORS lets a page's calls through
    /// and this check then admits them (default: none).
    pub allowed_origins: Vec<String>,
}

impl Default for StreamableConfig {
    fn default() -> Self {
        StreamableConfig {
            path: "/mcp".into(),
            max_sessions: 1024,
            session_idle_timeout: Duration::from_secs(600),
            body_read_timeout: Duration::from_secs(30),
            token: None,
            connection: ConnectionConfig::new(),
            keep_alive: Duration::from_secs(15),
            stateless: false,
            allowed_origins: Vec::new(),
        }
    }
}

/// The Streamable HTTP endpoint: a cheap handle (clone it per connection).
///
/// An `initialize` opens a session, named by the answer's `Mcp-Session-Id`:
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use http_body_util::{BodyExt, Full};
/// use switchboard::Router;
/// use switchboard_server::streamable::{SESSION_HEADER, Streamable, StreamableConfig};
///
/// let router = Router::builder()
///     .method("initialize", |_, out| out.raw_json(br#"{"protocolVersion":"2025-11-25"}"#))
///     .build()
///     .unwrap();
/// let endpoint = Streamable::new(router, StreamableConfig::default());
/// let init = hyper::Request::post("/mcp")
///     .header("content-type", "application/json")
///     .header("accept", "application/json, text/event-stream")
///     .body(Full::new(bytes::Bytes::from_static(
///         br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#,
///     )))
///     .unwrap();
/// let answer = endpoint.respond(init).await;
/// assert_eq!(answer.status(), 200);
/// assert_eq!(answer.headers()[SESSION_HEADER].len(), 32);
/// let body = answer.into_body().collect().await.unwrap().to_bytes();
/// assert_eq!(&body[..], br#"{"jsonrpc":"2.0","result":{"protocolVersion":"2025-11-25"},"id":0}"#);
/// assert_eq!(endpoint.sessions(), 1);
/// endpoint.end_all();
/// assert_eq!(endpoint.sessions(), 0);
/// # }
/// ```
#[derive(Clone)]
pub struct Streamable {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Streamable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Streamable")
            .field("sessions", &self.sessions())
            .finish_non_exhaustive()
    }
}

struct Shared {
    router: Arc<Router>,
    config: StreamableConfig,
    sessions: Mutex<HashMap<Arc<str>, Arc<McpSession>>>,
    sweeper: std::sync::Once,
}

impl Drop for Shared {
    fn drop(&mut self) {
        // The sessions' tasks end with their connections.
        for (_, s) in self.sessions.get_mut().expect("not poisoned").drain() {
            s.end();
        }
    }
}

/// One MCP session: its connection, its dispatcher and where its messages go.
struct McpSession {
    id: Arc<str>,
    conn: Connection,
    session: Mutex<Session>,
    routes: Mutex<Routes>,
    /// A route opened (the pump may go on).
    opened: Notify,
    /// Asks the pump to route every message queued so far, then answer.
    flush: mpsc::UnboundedSender<oneshot::Sender<()>>,
    /// Requests in flight and streams open: the session is not idle.
    busy: AtomicUsize,
    last_used: Mutex<Instant>,
    /// A stateless POST's: it ends when that POST is done.
    ephemeral: bool,
}

/// The open streams of a session, the newest POST first in line.
#[derive(Default)]
struct Routes {
    posts: Vec<(u64, mpsc::Sender<Bytes>)>,
    get: Option<(u64, mpsc::Sender<Bytes>)>,
    next: u64,
}

impl Routes {
    fn pick(&self) -> Option<(u64, mpsc::Sender<Bytes>)> {
        self.posts.last().or(self.get.as_ref()).cloned()
    }

    fn remove(&mut self, key: u64) {
        self.posts.retain(|(k, _)| *k != key);
        if self.get.as_ref().is_some_and(|(k, _)| *k == key) {
            self.get = None;
        }
    }
}

/// Counts a request or stream as in flight while it lives.
struct Busy(Arc<McpSession>);

impl Busy {
    fn new(s: &Arc<McpSession>) -> Busy {
        s.busy.fetch_add(1, Ordering::AcqRel);
        Busy(Arc::clone(s))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        *self.0.last_used.lock().expect("not poisoned") = Instant::now();
        if self.0.busy.fetch_sub(1, Ordering::AcqRel) == 1 && self.0.ephemeral {
            self.0.end();
        }
    }
}

impl McpSession {
    /// Opens a route for the pump; its key.
    fn open(&self, tx: mpsc::Sender<Bytes>, get: bool) -> u64 {
        let mut r = self.routes.lock().expect("not poisoned");
        let key = r.next;
        r.next += 1;
        if get {
            r.get = Some((key, tx));
        } else {
            r.posts.push((key, tx));
        }
        drop(r);
        self.opened.notify_one();
        key
    }

    fn close_route(&self, key: u64) {
        self.routes.lock().expect("not poisoned").remove(key);
    }

    /// Ends the session: pending requests to the client fail, calls are
    /// cancelled, the pump stops.
    fn end(&self) {
        self.conn.cancel_all_calls();
        self.conn.close();
        let mut r = self.routes.lock().expect("not poisoned");
        r.posts.clear();
        r.get = None;
    }
}

/// Moves the session's messages to its open streams (see the module docs),
/// and answers flushes ([`settle`]) once it has routed all that was queued
/// before them.
async fn pump(
    s: Weak<McpSession>,
    outgoing: Outgoing,
    mut flushes: mpsc::UnboundedReceiver<oneshot::Sender<()>>,
) {
    let closed = match s.upgrade() {
        Some(s) => s.conn.closed(),
        None => return,
    };
    let mut closed = pin!(closed);
    loop {
        let msg = tokio::select! {
            biased;
            () = &mut closed => return,
            Some(done) = flushes.recv() => {
                // Here no message is in hand: all sent before the flush
                // was asked for is in the queue.
                while let Some(m) = outgoing.try_recv() {
                    if !route(&s, closed.as_mut(), Bytes::from(m)).await {
                        return;
                    }
                }
                let _ = done.send(());
                continue;
            }
            m = outgoing.recv() => match m {
                Some(m) => Bytes::from(m),
                None => return,
            },
        };
        if !route(&s, closed.as_mut(), msg).await {
            return;
        }
    }
}

/// Hands `msg` to the stream that should carry it, waiting for one to open
/// if none is; `false` when the session is gone.
async fn route(
    s: &Weak<McpSession>,
    mut closed: Pin<&mut switchboard::connection::Cancelled>,
    msg: Bytes,
) -> bool {
    let mut msg = Some(msg);
    while let Some(m) = msg.take() {
        let Some(session) = s.upgrade() else {
            return false;
        };
        let route = session.routes.lock().expect("not poisoned").pick();
        match route {
            Some((key, tx)) => {
                drop(session);
                if let Err(mpsc::error::SendError(m)) = tx.send(m).await {
                    // That stream has ended: the next one takes it.
                    if let Some(session) = s.upgrade() {
                        session.close_route(key);
                    }
                    msg = Some(m);
                }
            }
            None => {
                // (Ending the session closes its connection: no wait
                // outlives it.)
                tokio::select! {
                    biased;
                    () = &mut closed => return false,
                    () = session.opened.notified() => {}
                }
                msg = Some(m);
            }
        }
    }
    true
}

/// Closes a POST stream's route once its calls are done, after the pump has
/// routed every message they sent (so none of them comes after the answer);
/// what was routed to it, in order.
async fn settle(s: &McpSession, key: u64, rx: &mut mpsc::Receiver<Bytes>) -> Vec<Bytes> {
    let mut got = Vec::new();
    let (done, mut flushed) = oneshot::channel();
    if s.flush.send(done).is_ok() {
        // Read on while waiting: the pump may be routing to this stream.
        loop {
            tokio::select! {
                biased;
                _ = &mut flushed => break, // done, or the pump is gone
                m = rx.recv() => match m {
                    Some(m) => got.push(m),
                    None => break,
                },
            }
        }
    }
    s.close_route(key);
    rx.close();
    while let Some(m) = rx.recv().await {
        got.push(m);
    }
    got
}

/// Drives the session's request timeouts.
async fn timer(s: Weak<McpSession>) {
    let Some(conn) = s.upgrade().map(|s| s.conn.clone()) else {
        return;
    };
    crate::duplex::timer(&conn).await;
}

/// One server-sent event carrying `message` (its lines as `data:` lines: a
/// message with line breaks stays one event).
pub(crate) fn sse_event(message: &[u8]) -> Bytes {
    let mut e = Vec::with_capacity(message.len() + 24);
    e.extend_from_slice(b"event: message\n");
    for line in message.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        e.extend_from_slice(b"data: ");
        e.extend_from_slice(line);
        e.push(b'\n');
    }
    e.push(b'\n');
    Bytes::from(e)
}

type Answer = Response<ResponseBody>;

/// A request named a session that does not exist (any more).
struct Unknown;

fn unknown() -> Answer {
    plain(StatusCode::NOT_FOUND, "unknown or expired session\n")
}

fn plain(status: StatusCode, text: &'static str) -> Answer {
    let mut r = Response::new(ResponseBody::Full(Some(Bytes::from_static(
        text.as_bytes(),
    ))));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

fn json(bytes: Vec<u8>) -> Answer {
    let mut r = Response::new(ResponseBody::Full(Some(Bytes::from(bytes))));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

fn events(rx: mpsc::Receiver<Bytes>) -> Answer {
    let mut r = Response::new(ResponseBody::Events(rx));
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    r
}

/// Whether `Accept` admits `kind` (`type/subtype`), `type/*` or `*/*`; a
/// missing header admits everything.
fn accepts(headers: &HeaderMap, kind: &str) -> bool {
    let all = headers.get_all(header::ACCEPT);
    let mut any = false;
    for v in all {
        any = true;
        let Ok(v) = v.to_str() else { continue };
        for item in v.split(',') {
            let essence = item.split(';').next().unwrap_or_default().trim();
            let (t, _) = kind.split_once('/').unwrap_or((kind, ""));
            if essence.eq_ignore_ascii_case(kind)
                || essence == "*/*"
                || essence
                    .strip_suffix("/*")
                    .is_some_and(|p| p.eq_ignore_ascii_case(t))
            {
                return true;
            }
        }
    }
    !any
}

/// An `Origin` other than a loopback host, the `Host` the request was sent to, or
/// one of `allowed` ([`StreamableConfig::allowed_origins`]) is refused (MCP asks
/// servers to guard against DNS rebinding).
fn origin_allowed(headers: &HeaderMap, allowed: &[String]) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    if origin == "null" {
        return false;
    }
    let listed = allowed
        .iter()
        .flat_map(|a| a.split(','))
        .map(str::trim)
        .any(|a| a == "*" || a.eq_ignore_ascii_case(origin));
    if listed {
        return true;
    }
    let host_port = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        .unwrap_or("");
    let same_host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .is_some_and(|h| h.eq_ignore_ascii_case(host_port));
    let host = match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host_port.split(':').next().unwrap_or(""),
    };
    same_host || matches!(host, "localhost" | "127.0.0.1" | "::1")
}

/// Whether `body` is an `initialize` request (the one message that may start a
/// session), read with the core's parser.
fn is_initialize(router: &Router, body: &[u8]) -> bool {
    let mut parser = switchboard::Parser::with_config(*router.config());
    matches!(
        parser.parse(body),
        switchboard::Message::Request(r) if r.method() == "initialize"
    )
}

impl Streamable {
    /// An endpoint serving `router`'s methods, one connection per session.
    pub fn new(router: Arc<Router>, config: StreamableConfig) -> Self {
        Streamable {
            shared: Arc::new(Shared {
                router,
                config,
                sessions: Mutex::new(HashMap::new()),
                sweeper: std::sync::Once::new(),
            }),
        }
    }

    /// The endpoint's path ([`StreamableConfig::path`]).
    pub fn path(&self) -> &str {
        &self.shared.config.path
    }

    /// Sessions open now.
    pub fn sessions(&self) -> usize {
        self.shared.sessions.lock().expect("not poisoned").len()
    }

    /// Ends every session (as a DELETE of each would).
    pub fn end_all(&self) {
        let all: Vec<_> = self
            .shared
            .sessions
            .lock()
            .expect("not poisoned")
            .drain()
            .collect();
        for (_, s) in all {
            s.end();
        }
    }

    /// The session the request names (`Ok(None)`: it names none; `Err`: an
    /// unknown or expired one).
    fn session(&self, headers: &HeaderMap) -> Result<Option<Arc<McpSession>>, Unknown> {
        let Some(id) = headers.get(SESSION_HEADER) else {
            return Ok(None);
        };
        let id = id.to_str().unwrap_or("");
        match self.shared.sessions.lock().expect("not poisoned").get(id) {
            Some(s) => Ok(Some(Arc::clone(s))),
            None => Err(Unknown),
        }
    }

    /// A new session, in the table (`None`: the table is full).
    fn create(&self) -> Option<Arc<McpSession>> {
        let sh = &self.shared;
        let mut sessions = sh.sessions.lock().expect("not poisoned");
        if sessions.len() >= sh.config.max_sessions {
            return None;
        }
        let id: Arc<str> = loop {
            let id: Arc<str> = new_session_id().into();
            if !sessions.contains_key(&id) {
                break id;
            }
        };
        let s = self.start(id, false);
        sessions.insert(Arc::clone(&s.id), Arc::clone(&s));
        drop(sessions);
        let weak = Arc::downgrade(&self.shared);
        sh.sweeper.call_once(|| {
            tokio::spawn(sweep(weak));
        });
        tracing::debug!(session = %s.id, "mcp session opened");
        Some(s)
    }

    /// A session and its tasks; an `ephemeral` one (a stateless POST's) is
    /// in no table, and its peer cannot send requests.
    fn start(&self, id: Arc<str>, ephemeral: bool) -> Arc<McpSession> {
        let sh = &self.shared;
        let (conn, outgoing) = if ephemeral {
            Connection::notify_only(&sh.config.connection)
        } else {
            Connection::new(&sh.config.connection)
        };
        let mut session = Session::new(Arc::clone(&sh.router));
        session.attach(conn.clone());
        let (flush, flushes) = mpsc::unbounded_channel();
        let s = Arc::new(McpSession {
            id,
            conn,
            session: Mutex::new(session),
            routes: Mutex::new(Routes::default()),
            opened: Notify::new(),
            flush,
            busy: AtomicUsize::new(0),
            last_used: Mutex::new(Instant::now()),
            ephemeral,
        });
        tokio::spawn(pump(Arc::downgrade(&s), outgoing, flushes));
        tokio::spawn(timer(Arc::downgrade(&s)));
        s
    }

    fn remove(&self, id: &str) {
        let s = self
            .shared
            .sessions
            .lock()
            .expect("not poisoned")
            .remove(id);
        if let Some(s) = s {
            s.end();
            tracing::debug!(session = %id, "mcp session ended");
        }
    }

    /// Answers one HTTP request (the whole mapping of the [module docs](self)).
    pub async fn respond<B>(&self, req: Request<B>) -> Answer
    where
        B: Body + Send,
        B::Data: Send,
    {
        let sh = &*self.shared;
        if let Some(token) = &sh.config.token
            && !crate::http::authorized(req.headers(), token)
        {
            let mut r = plain(StatusCode::UNAUTHORIZED, "missing or wrong bearer token\n");
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return r;
        }
        if req.uri().path() != sh.config.path {
            return plain(StatusCode::NOT_FOUND, "not found\n");
        }
        if !origin_allowed(req.headers(), &sh.config.allowed_origins) {
            return plain(StatusCode::FORBIDDEN, "origin not allowed\n");
        }
        match *req.method() {
            Method::POST => self.post(req).await,
            Method::GET => self.get(req.headers()),
            Method::DELETE => match self.session(req.headers()) {
                Ok(Some(s)) => {
                    self.remove(&s.id);
                    let mut r = Response::new(ResponseBody::Full(None));
                    *r.status_mut() = StatusCode::NO_CONTENT;
                    r
                }
                Ok(None) => plain(StatusCode::BAD_REQUEST, "Mcp-Session-Id header required\n"),
                Err(Unknown) => unknown(),
            },
            _ => {
                let mut r = plain(StatusCode::METHOD_NOT_ALLOWED, "use POST, GET or DELETE\n");
                r.headers_mut()
                    .insert(header::ALLOW, HeaderValue::from_static("POST, GET, DELETE"));
                r
            }
        }
    }

    fn get(&self, headers: &HeaderMap) -> Answer {
        if !accepts(headers, "text/event-stream") {
            return plain(StatusCode::NOT_ACCEPTABLE, "Accept: text/event-stream\n");
        }
        let s = match self.session(headers) {
            Ok(Some(s)) => s,
            Ok(None) => {
                return plain(StatusCode::BAD_REQUEST, "Mcp-Session-Id header required\n");
            }
            Err(Unknown) => return unknown(),
        };
        let (route_tx, mut route_rx) = mpsc::channel::<Bytes>(16);
        let (body_tx, body_rx) = mpsc::channel::<Bytes>(16);
        let key = s.open(route_tx, true);
        let busy = Busy::new(&s);
        let keep_alive = self.shared.config.keep_alive;
        tokio::spawn(async move {
            let s = &busy.0;
            let mut closed = pin!(s.conn.closed());
            let mut tick = tokio::time::interval(keep_alive);
            tick.tick().await;
            loop {
                let event = tokio::select! {
                    biased;
                    () = &mut closed => break,
                    () = body_tx.closed() => break,
                    m = route_rx.recv() => match m {
                        Some(m) => sse_event(&m),
                        None => break,
                    },
                    _ = tick.tick() => Bytes::from_static(b": keep-alive\n\n"),
                };
                if body_tx.send(event).await.is_err() {
                    break;
                }
            }
            s.close_route(key);
            route_rx.close();
            // What was routed here and not yet written goes to the next stream.
            while let Some(m) = route_rx.recv().await {
                if s.conn.send(m.to_vec()).await.is_err() {
                    break;
                }
            }
        });
        let mut r = events(body_rx);
        r.headers_mut().insert(
            SESSION_HEADER,
            HeaderValue::from_str(&s.id).expect("a session id is a header value"),
        );
        r
    }

    async fn post<B>(&self, req: Request<B>) -> Answer
    where
        B: Body + Send,
        B::Data: Send,
    {
        let sh = &*self.shared;
        if !crate::http::is_json(req.headers().get(header::CONTENT_TYPE)) {
            return plain(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Content-Type must be application/json (UTF-8)\n",
            );
        }
        if !accepts(req.headers(), "application/json")
            && !accepts(req.headers(), "text/event-stream")
        {
            return plain(
                StatusCode::NOT_ACCEPTABLE,
                "Accept: application/json, text/event-stream\n",
            );
        }
        let found = self.session(req.headers());
        let limit = sh.router.config().get_max_message_bytes();
        if req.body().size_hint().lower() > limit as u64 {
            return crate::http::too_large();
        }
        let deadline = tokio::time::Instant::now() + sh.config.body_read_timeout;
        let mut buf = Vec::new();
        let body = match crate::http::read_body(req.into_body(), limit, deadline, &mut buf).await {
            Ok(b) => b,
            Err(r) => return r,
        };
        let input: &[u8] = match &body {
            Some(b) => b,
            None => &buf,
        };
        let (s, created) = match found {
            Err(Unknown) => return unknown(),
            Ok(Some(s)) => (s, false),
            Ok(None) if is_initialize(&sh.router, input) => match self.create() {
                Some(s) => (s, true),
                None => {
                    return plain(StatusCode::SERVICE_UNAVAILABLE, "too many sessions\n");
                }
            },
            Ok(None) if sh.config.stateless => (self.start(Arc::from(""), true), false),
            Ok(None) => {
                return plain(StatusCode::BAD_REQUEST, "Mcp-Session-Id header required\n");
            }
        };
        let busy = Busy::new(&s);
        let (now, running) = {
            let mut session = s.session.lock().expect("not poisoned");
            let h = session.handle_concurrent(input);
            (h.response.map(<[u8]>::to_vec), h.calls)
        };
        let mut answer = match (now, running) {
            (Some(resp), _) => json(resp),
            (None, None) => {
                let mut r = Response::new(ResponseBody::Full(None));
                *r.status_mut() = StatusCode::ACCEPTED;
                r
            }
            (None, Some(running)) => stream_calls(busy, running).await,
        };
        if created {
            answer.headers_mut().insert(
                SESSION_HEADER,
                HeaderValue::from_str(&s.id).expect("a session id is a header value"),
            );
        }
        answer
    }
}

/// The answer to a POST whose calls are still running: JSON if they answer
/// before sending anything, else a stream of what they send, then the answer.
async fn stream_calls(busy: Busy, running: switchboard::RunningCalls) -> Answer {
    let s = Arc::clone(&busy.0);
    let (route_tx, mut route_rx) = mpsc::channel::<Bytes>(16);
    let key = s.open(route_tx, false);
    let mut running = Box::pin(running);
    let first = tokio::select! {
        biased;
        done = &mut running => {
            // Done first: what the calls sent meanwhile still decides.
            let sent = settle(&s, key, &mut route_rx).await;
            if sent.is_empty() {
                return match done {
                    Some(resp) => json(resp),
                    None => {
                        let mut r = Response::new(ResponseBody::Full(None));
                        *r.status_mut() = StatusCode::ACCEPTED;
                        r
                    }
                };
            }
            let (body_tx, body_rx) = mpsc::channel::<Bytes>(sent.len() + 1);
            for m in sent {
                let _ = body_tx.try_send(sse_event(&m));
            }
            if let Some(resp) = done {
                let _ = body_tx.try_send(sse_event(&resp));
            }
            return events(body_rx);
        }
        m = route_rx.recv() => m,
    };
    let (body_tx, body_rx) = mpsc::channel::<Bytes>(16);
    tokio::spawn(async move {
        let _busy = busy;
        let mut next = first;
        let done = loop {
            if let Some(m) = next.take()
                && body_tx.send(sse_event(&m)).await.is_err()
            {
                break None; // the client went: its calls go with it
            }
            tokio::select! {
                biased;
                done = &mut running => break Some(done),
                () = body_tx.closed() => break None,
                m = route_rx.recv() => next = m,
            }
        };
        let Some(done) = done else {
            drop(running);
            s.close_route(key);
            route_rx.close();
            while let Some(m) = route_rx.recv().await {
                if s.conn.send(m.to_vec()).await.is_err() {
                    break;
                }
            }
            return;
        };
        for m in settle(&s, key, &mut route_rx).await {
            let _ = body_tx.send(sse_event(&m)).await;
        }
        if let Some(resp) = done {
            let _ = body_tx.send(sse_event(&resp)).await;
        }
    });
    events(body_rx)
}

/// Ends the sessions idle longer than their timeout, until the endpoint goes.
async fn sweep(shared: Weak<Shared>) {
    loop {
        let every = match shared.upgrade() {
            Some(sh) => (sh.config.session_idle_timeout / 4)
                .clamp(Duration::from_millis(10), Duration::from_secs(30)),
            None => return,
        };
        tokio::time::sleep(every).await;
        let Some(sh) = shared.upgrade() else { return };
        let idle = sh.config.session_idle_timeout;
        let expired: Vec<_> = {
            let mut sessions = sh.sessions.lock().expect("not poisoned");
            let ids: Vec<_> = sessions
                .iter()
                .filter(|(_, s)| {
                    s.busy.load(Ordering::Acquire) == 0
                        && s.last_used.lock().expect("not poisoned").elapsed() >= idle
                })
                .map(|(id, _)| Arc::clone(id))
                .collect();
            ids.iter().filter_map(|id| sessions.remove(id)).collect()
        };
        for s in expired {
            tracing::debug!(session = %s.id, "mcp session expired");
            s.end();
        }
    }
}

/// 32 hex digits (visible ASCII, as MCP asks): two hashes of a counter under
/// keys std draws from the operating system once (the subscription ids' way,
/// `switchboard::connection::subscription`).
fn new_session_id() -> String {
    use std::hash::BuildHasher;
    use std::sync::OnceLock;
    static KEYS: OnceLock<(RandomState, RandomState)> = OnceLock::new();
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let (a, b) = KEYS.get_or_init(|| (RandomState::new(), RandomState::new()));
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{:016x}{:016x}", a.hash_one(n), b.hash_one(n))
}

/// Serves `service` on `listener` (HTTP/1.1) until `shutdown` completes, then
/// ends its sessions.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> std::io::Result<()> {
/// use switchboard::Router;
/// use switchboard_server::streamable::{Streamable, StreamableConfig, serve};
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
/// let router = Router::builder()
///     .method("initialize", |_, out| out.raw_json(br#"{"protocolVersion":"2025-11-25"}"#))
///     .build()
///     .unwrap();
/// let endpoint = Streamable::new(router, StreamableConfig::default());
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
/// let addr = listener.local_addr()?;
/// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
/// let server = tokio::spawn(serve(listener, endpoint.clone(), async {
///     let _ = stopped.await;
/// }));
///
/// let body = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#;
/// let mut s = tokio::net::TcpStream::connect(addr).await?;
/// s.write_all(format!("POST /mcp HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
///     Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
///     Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes()).await?;
/// let mut answer = String::new();
/// s.read_to_string(&mut answer).await?;
/// assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"));
/// assert!(answer.contains("mcp-session-id: "));
/// assert_eq!(endpoint.sessions(), 1);
/// stop.send(()).unwrap();
/// server.await.unwrap()?;
/// assert_eq!(endpoint.sessions(), 0); // ended at shutdown
/// # Ok(())
/// # }
/// ```
///
/// # Errors
/// Only an error of the listener itself; a connection's error ends that
/// connection.
pub async fn serve<F>(
    listener: tokio::net::TcpListener,
    service: Streamable,
    shutdown: F,
) -> std::io::Result<()>
where
    F: Future<Output = ()>,
{
    let mut shutdown = pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            r = listener.accept() => match r {
                Ok(c) => c,
                Err(e) if is_transient(&e) => {
                    tracing::warn!(error = %e, "accept");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
                Err(e) => return Err(e),
            },
        };
        let _ = stream.set_nodelay(true);
        let svc = service.clone();
        tokio::spawn(async move {
            let handler = hyper::service::service_fn(move |req: Request<Incoming>| {
                let svc = svc.clone();
                async move { Ok::<_, Infallible>(svc.respond(req).await) }
            });
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(Duration::from_secs(30))
                .serve_connection(TokioIo::new(stream), handler);
            tracing::debug!(%peer, "connection opened");
            match conn.await {
                Ok(()) => tracing::debug!(%peer, "connection closed"),
                Err(e) => tracing::debug!(%peer, error = %e, "connection closed"),
            }
        });
    }
    service.end_all();
    Ok(())
}

fn is_transient(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(
        e.kind(),
        ConnectionAborted | ConnectionReset | Interrupted | WouldBlock
    ) || e.raw_os_error() == Some(24) // EMFILE: wait for descriptors to free up
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_keep_multi_line_messages_whole() {
        assert_eq!(&sse_event(b"{}")[..], b"event: message\ndata: {}\n\n");
        assert_eq!(
            &sse_event(b"{\r\n\"a\":1\n}")[..],
            b"event: message\ndata: {\ndata: \"a\":1\ndata: }\n\n"
        );
    }

    #[test]
    fn accept_lists() {
        let h = |v: &str| {
            let mut m = HeaderMap::new();
            m.insert(header::ACCEPT, HeaderValue::from_str(v).unwrap());
            m
        };
        assert!(accepts(&HeaderMap::new(), "text/event-stream"));
        assert!(accepts(
            &h("application/json, text/event-stream"),
            "text/event-stream"
        ));
        assert!(accepts(&h("text/*;q=0.5"), "text/event-stream"));
        assert!(accepts(&h("*/*"), "application/json"));
        assert!(!accepts(&h("application/json"), "text/event-stream"));
    }

    #[test]
    fn origins() {
        let h = |o: &str, host: &str| {
            let mut m = HeaderMap::new();
            m.insert(header::ORIGIN, HeaderValue::from_str(o).unwrap());
            m.insert(header::HOST, HeaderValue::from_str(host).unwrap());
            m
        };
        assert!(origin_allowed(&HeaderMap::new(), &[]));
        assert!(origin_allowed(
            &h("http://localhost:3000", "127.0.0.1:8000"),
            &[]
        ));
        assert!(origin_allowed(
            &h("http://[::1]:3000", "127.0.0.1:8000"),
            &[]
        ));
        assert!(origin_allowed(
            &h("https://mcp.example", "mcp.example"),
            &[]
        ));
        assert!(!origin_allowed(
            &h("https://evil.example", "127.0.0.1:8000"),
            &[]
        ));
        assert!(!origin_allowed(&h("null", "127.0.0.1:8000"), &[]));
        let listed = ["https://a.example, https://App.Example:8443".to_owned()];
        assert!(origin_allowed(
            &h("https://app.example:8443", "127.0.0.1:8000"),
            &listed
        ));
        assert!(origin_allowed(
            &h("https://a.example", "127.0.0.1:8000"),
            &listed
        ));
        assert!(!origin_allowed(
            &h("https://b.example", "127.0.0.1:8000"),
            &listed
        ));
        assert!(!origin_allowed(&h("null", "127.0.0.1:8000"), &listed));
        let any = ["*".to_owned()];
        assert!(origin_allowed(
            &h("https://b.example", "127.0.0.1:8000"),
            &any
        ));
    }

    #[test]
    fn session_ids_are_distinct_visible_ascii() {
        let ids: std::collections::HashSet<String> = (0..1000).map(|_| new_session_id()).collect();
        assert_eq!(ids.len(), 1000);
        assert!(
            ids.iter()
                .all(|i| i.len() == 32 && i.bytes().all(|b| b.is_ascii_hexdigit()))
        );
    }
}
