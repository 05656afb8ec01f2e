//! One async driver for a full-duplex JSON-RPC connection over any byte stream
//! (stdin/stdout, a Unix socket, a TCP stream): NDJSON or `Content-Length`
//! framing, the client's calls running concurrently, and the server talking back
//! through the [`Connection`]'s peer.
//!
//! What it does, per connection:
//! - **Reads** frames and hands each to a [`Session`] attached to the connection.
//!   Sync handlers run inline in the read loop (no allocation in the core); the
//!   answers are queued for the writer. Async calls are spawned on the tokio
//!   runtime, each answered when it completes, so a `ping` is answered while a
//!   slow call runs. At most [`DuplexConfig::max_in_flight`] run at once: above
//!   it, reading pauses until one completes (backpressure, not memory). The
//!   client's responses go to the requests awaiting them; its cancel notification
//!   (the router's [`RouterBuilder::cancel_notification`](switchboard::RouterBuilder::cancel_notification))
//!   cancels the call it names.
//! - **Writes** everything queued on the connection (responses, the peer's
//!   notifications and requests) in order, framed, coalescing what is queued into
//!   one write. The queue is bounded ([`ConnectionConfig::queue_capacity`]):
//!   senders wait when it is full, and so does reading.
//! - **Times out** requests to the client ([`ConnectionConfig::request_timeout`]).
//! - A message over the router's `max_message_bytes` is answered -32600 without
//!   being buffered whole, as `serve --stdio` always did; a `Content-Length`
//!   header section that cannot be framed ends the connection with `InvalidData`.
//!
//! **How it ends.** On EOF, on [`Connection::close`] (the shutdown handle: an LSP
//! `exit` handler calls it) or when writing fails: reading stops; every request
//! to the client still pending fails at once with
//! [`PeerError::Closed`](switchboard::connection::PeerError::Closed); the calls
//! still running are awaited for up to [`DuplexConfig::drain_timeout`] (their
//! answers are written), then cancelled (futures dropped; answered as the
//! router's cancel rule says, or not at all); what is queued is written, and
//! [`Duplex::serve`] returns.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! use switchboard::Router;
//! use switchboard_server::duplex::{Duplex, DuplexConfig};
//!
//! let router = Router::builder()
//!     .method_async("ask", |call| async move {
//!         // A request to the client, answered through the same stream.
//!         let peer = call.connection().expect("served by a driver").peer();
//!         let answer = peer.request("question", &["ready?"]).await?;
//!         Ok(answer.as_raw().as_bool() == Some(true))
//!     })
//!     .build()
//!     .unwrap();
//! let (client, server) = tokio::io::duplex(4096);
//! let (server_read, server_write) = tokio::io::split(server);
//! let serving = tokio::spawn(Duplex::new(router, DuplexConfig::default()).serve(server_read, server_write));
//!
//! use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
//! let (client_read, mut client_write) = tokio::io::split(client);
//! let mut lines = BufReader::new(client_read).lines();
//! client_write.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"ask\",\"id\":7}\n").await.unwrap();
//! let request = lines.next_line().await.unwrap().unwrap();
//! assert_eq!(request, r#"{"jsonrpc":"2.0","method":"question","params":["ready?"],"id":1}"#);
//! client_write.write_all(b"{\"jsonrpc\":\"2.0\",\"result\":true,\"id\":1}\n").await.unwrap();
//! let response = lines.next_line().await.unwrap().unwrap();
//! assert_eq!(response, r#"{"jsonrpc":"2.0","result":true,"id":7}"#);
//! client_write.shutdown().await.unwrap(); // EOF: the driver ends
//! let summary = serving.await.unwrap().unwrap();
//! assert_eq!(summary.messages, 2);
//! # }
//! ```

use std::future::{Future, poll_fn};
use std::io;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use switchboard::connection::{Connection, ConnectionConfig, Outgoing};
use switchboard::framing::{FramingError, Status};
use switchboard::{Router, Session};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use crate::stdio::{Framer, Framing, Last, encode, write_too_large};

/// The reader of standard input, boxed.
pub type StdinReader = Box<dyn AsyncRead + Unpin + Send>;
/// The writer of standard output, boxed.
pub type StdoutWriter = Box<dyn AsyncWrite + Unpin + Send>;

/// Standard input and output as async streams for [`Duplex::serve`]. When they
/// are pipes (a client that spawned this process: MCP, LSP), they are driven
/// non-blocking by the runtime's reactor (tokio's `unix::pipe`); otherwise (a
/// file, a terminal) through tokio's `stdin()`/`stdout()`, whose blocking
/// thread costs a thread hop per read (about 3x slower on a pipe).
pub fn stdio() -> (StdinReader, StdoutWriter) {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        use tokio::net::unix::pipe;
        let reader = std::io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .ok()
            .and_then(|fd| pipe::Receiver::from_owned_fd(fd).ok());
        let writer = std::io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .ok()
            .and_then(|fd| pipe::Sender::from_owned_fd(fd).ok());
        let reader: StdinReader = match reader {
            Some(r) => Box::new(r),
            None => Box::new(tokio::io::stdin()),
        };
        let writer: StdoutWriter = match writer {
            Some(w) => Box::new(w),
            None => Box::new(tokio::io::stdout()),
        };
        (reader, writer)
    }
    #[cfg(not(unix))]
    {
        (Box::new(tokio::io::stdin()), Box::new(tokio::io::stdout()))
    }
}

/// A driver's limits and framing.
///
/// LSP's framing (`Content-Length` headers), the other settings as default:
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use switchboard::Router;
/// use switchboard_server::duplex::{Duplex, DuplexConfig};
/// use switchboard_server::stdio::Framing;
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
///
/// let config = DuplexConfig { framing: Framing::Lsp, ..DuplexConfig::default() };
/// let (mut client, server) = tokio::io::duplex(4096);
/// let (read, write) = tokio::io::split(server);
/// let serving = tokio::spawn(Duplex::new(Router::builder().typed("subtract", |(a, b): (i64, i64)| Ok(a - b)).build().unwrap(), config).serve(read, write));
///
/// let call = r#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#;
/// client.write_all(format!("Content-Length: {}\r\n\r\n{call}", call.len()).as_bytes()).await.unwrap();
/// client.shutdown().await.unwrap(); // EOF: the driver answers, then ends
/// let mut answer = String::new();
/// client.read_to_string(&mut answer).await.unwrap();
/// assert_eq!(answer, "Content-Length: 36\r\n\r\n{\"jsonrpc\":\"2.0\",\"result\":19,\"id\":1}");
/// assert_eq!(serving.await.unwrap().unwrap().messages, 1);
/// # }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct DuplexConfig {
    /// How messages are delimited on the stream.
    pub framing: Framing,
    /// Async calls running at once on the connection; above it reading pauses.
    pub max_in_flight: usize,
    /// The connection's outgoing queue and request timeout.
    pub connection: ConnectionConfig,
    /// How long the calls still running at the end are awaited before they are
    /// cancelled.
    pub drain_timeout: Duration,
    /// How long a write may wait for the client to take any of it (a client that
    /// sends and never reads); past it the connection ends as on a write error, so
    /// its queue and calls are not held for ever.
    pub write_timeout: Duration,
}

impl Default for DuplexConfig {
    fn default() -> Self {
        DuplexConfig {
            framing: Framing::Ndjson,
            max_in_flight: 64,
            connection: ConnectionConfig::new(),
            drain_timeout: Duration::from_secs(5),
            write_timeout: Duration::from_secs(30),
        }
    }
}

/// Why a connection ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The client closed its side of the stream.
    Eof,
    /// [`Connection::close`] was called (a shutdown), or writing failed.
    Closed,
}

/// What a connection did, returned when it ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Summary {
    /// Messages read (an over-long one counts).
    pub messages: u64,
    /// Responses from the client that matched no pending request.
    pub unmatched_responses: u64,
    /// Calls still running after the drain timeout, cancelled.
    pub cancelled_at_end: usize,
    /// Why it ended.
    pub end: End,
}

/// One connection's driver: build it, optionally prepare its [`Connection`]
/// (per-connection state, a clone of it as the shutdown handle), then
/// [`Duplex::serve`] a stream.
///
/// A clone of its connection, taken before serving, ends it from elsewhere:
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use switchboard::Router;
/// use switchboard_server::duplex::{Duplex, DuplexConfig, End};
/// use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
///
/// let duplex = Duplex::new(Router::builder().typed("subtract", |(a, b): (i64, i64)| Ok(a - b)).build().unwrap(), DuplexConfig::default());
/// let shutdown = duplex.connection().clone();
/// let (client, server) = tokio::io::duplex(4096);
/// let (read, write) = tokio::io::split(server);
/// let serving = tokio::spawn(duplex.serve(read, write));
///
/// let (client_read, mut client_write) = tokio::io::split(client);
/// let mut lines = BufReader::new(client_read).lines();
/// client_write.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":[42,23],\"id\":1}\n").await.unwrap();
/// assert_eq!(lines.next_line().await.unwrap().unwrap(), r#"{"jsonrpc":"2.0","result":19,"id":1}"#);
/// shutdown.close(); // the client is still there: the server ends it
/// let summary = serving.await.unwrap().unwrap();
/// assert_eq!(summary.end, End::Closed);
/// # }
/// ```
pub struct Duplex {
    session: Session,
    conn: Connection,
    outgoing: Outgoing,
    config: DuplexConfig,
}

impl std::fmt::Debug for Duplex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Duplex")
            .field("connection", &self.conn)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Bytes coalesced into one write at most (one message may be larger).
const WRITE_CHUNK: usize = 64 << 10;

impl Duplex {
    /// A driver for a new connection to `router`'s methods.
    pub fn new(router: Arc<Router>, config: DuplexConfig) -> Self {
        let (conn, outgoing) = Connection::new(&config.connection);
        let mut session = Session::new(router);
        session.attach(conn.clone());
        Duplex {
            session,
            conn,
            outgoing,
            config,
        }
    }

    /// The connection this driver serves.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// Serves the stream until it ends (see the [module docs](self)).
    ///
    /// # Errors
    /// I/O errors from reading or writing, and `InvalidData` for a
    /// `Content-Length` header section that cannot be framed or a stream that
    /// ends inside a message; the connection is wound up first either way.
    pub async fn serve<R, W>(self, reader: R, writer: W) -> io::Result<Summary>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        let (framing, limit) = (self.config.framing, self.config.write_timeout);
        self.drive(
            "duplex",
            async move |d: &mut Dispatcher<'_>| read_loop(d, reader, framing).await,
            async move |out: &Outgoing| write_loop(out, writer, framing, limit).await,
        )
        .await
    }

    /// The connection's life for any transport: `read` reads messages and hands
    /// each to the [`Dispatcher`] until the client is gone or the connection
    /// closes; `write` writes what the [`Outgoing`] queue yields until it ends;
    /// the request timer runs beside them; then the wind-up of the
    /// [module docs](self) (pending requests failed, calls drained, then
    /// cancelled, the queue written out). `transport` names the connection's
    /// kind in its `debug` events (opened, closed).
    pub(crate) async fn drive<RL, WL>(
        self,
        transport: &'static str,
        read: RL,
        write: WL,
    ) -> io::Result<Summary>
    where
        RL: AsyncFnOnce(&mut Dispatcher<'_>) -> io::Result<(u64, End)>,
        WL: AsyncFnOnce(&Outgoing) -> io::Result<()>,
    {
        let Duplex {
            mut session,
            conn,
            outgoing,
            config,
        } = self;
        tracing::debug!(transport, conn = conn.id(), "connection opened");
        let read = async {
            let mut calls = JoinSet::new();
            let permits = Arc::new(Semaphore::new(config.max_in_flight.max(1)));
            let mut d = Dispatcher {
                session: &mut session,
                conn: &conn,
                calls: &mut calls,
                permits: &permits,
                handled: 0,
            };
            let result = read(&mut d).await;
            // The client is gone or the server shuts down: nothing more will
            // answer the requests still pending.
            conn.close();
            let cancelled = drain(&conn, &mut calls, config.drain_timeout).await;
            outgoing.close();
            (result, cancelled)
        };
        let write = async {
            let r = write(&outgoing).await;
            if r.is_err() {
                // Nobody reads what is queued: senders must not wait for room.
                outgoing.close();
                conn.close();
            }
            r
        };
        let ((read, cancelled), write, ()) = tokio::join!(read, write, timer(&conn));
        let summary = read.and_then(|(messages, end)| {
            write?;
            Ok(Summary {
                messages,
                unmatched_responses: conn.unmatched_responses(),
                cancelled_at_end: cancelled,
                end,
            })
        });
        match &summary {
            Ok(s) => tracing::debug!(
                transport,
                conn = conn.id(),
                messages = s.messages,
                end = ?s.end,
                cancelled = s.cancelled_at_end,
                "connection closed"
            ),
            Err(e) => tracing::debug!(transport, conn = conn.id(), error = %e, "connection closed"),
        }
        summary
    }
}

/// Reads and dispatches until EOF or close; the number of messages read.
async fn read_loop<R: AsyncRead + Unpin>(
    d: &mut Dispatcher<'_>,
    mut reader: R,
    framing: Framing,
) -> io::Result<(u64, End)> {
    let conn = d.conn;
    let limit = d.session.router().config().get_max_message_bytes();
    let mut framer = Framer::new(framing, limit);
    let mut closed = pin!(conn.closed());
    let mut buf: Vec<u8> = Vec::with_capacity(8 << 10);
    let mut start = 0;
    let mut messages = 0u64;
    let mut unmatched_logged_at = 0u64;
    loop {
        loop {
            match framer.decode(&buf[start..]) {
                Ok(Status::Partial) => break,
                Ok(Status::Frame { body, consumed }) => {
                    messages += 1;
                    let msg = start + body.start..start + body.end;
                    if !d.message(&buf[msg]).await {
                        return Ok((messages, End::Closed));
                    }
                    start += consumed;
                }
                Ok(Status::Skip { consumed }) => start += consumed,
                Err(FramingError::TooLarge { limit }) => {
                    messages += 1;
                    let mut resp = Vec::new();
                    write_too_large(&mut resp, limit);
                    if conn.send(resp).await.is_err() {
                        return Ok((messages, End::Closed));
                    }
                }
                Err(e) => {
                    // Unframeable: the peer is told why before the stream ends.
                    let mut resp = Vec::new();
                    crate::stdio::write_framing_error(&mut resp, e);
                    let _ = conn.send(resp).await;
                    return Err(io::Error::new(io::ErrorKind::InvalidData, e));
                }
            }
        }
        log_unmatched(conn, &mut unmatched_logged_at);
        if start == buf.len() {
            buf.clear();
            if buf.capacity() > RETAINED_RESPONSE {
                buf.shrink_to(8 << 10); // a large message does not pin its memory
            }
            start = 0;
        } else if start > 0 {
            buf.drain(..start);
            start = 0;
        }
        crate::stdio::reserve_within(
            &mut buf,
            8 << 10,
            limit.saturating_add(switchboard::framing::ContentLength::MAX_HEADER_BYTES),
        );
        tokio::select! {
            biased;
            () = &mut closed => return Ok((messages, End::Closed)),
            r = reader.read_buf(&mut buf) => match r {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            },
        }
        // Reap the calls that finished (their permits are back already).
        while calls_reaped(d.calls) {}
    }
    // EOF: a last NDJSON line without its newline is still a message.
    match framer.finish(&buf)? {
        Last::Message(body) => {
            messages += 1;
            d.message(&buf[body]).await;
        }
        Last::TooLarge(limit) => {
            messages += 1;
            let mut resp = Vec::new();
            write_too_large(&mut resp, limit);
            let _ = conn.send(resp).await;
        }
        Last::Nothing => {}
    }
    Ok((messages, End::Eof))
}

/// Logs the client's responses that matched no pending request, at 1, 2, 4,
/// 8, … in all: a flood costs a few lines, not one each.
pub(crate) fn log_unmatched(conn: &Connection, logged_at: &mut u64) {
    let now_unmatched = conn.unmatched_responses();
    if now_unmatched >= logged_at.saturating_mul(2).max(1) {
        tracing::warn!(
            conn = conn.id(),
            "{now_unmatched} response(s) from the client so far matched no pending request (dropped)"
        );
        *logged_at = now_unmatched;
    }
}

pub(crate) fn calls_reaped(calls: &mut JoinSet<()>) -> bool {
    calls.try_join_next().is_some()
}

/// The response buffer a connection's session keeps between messages; a larger
/// answer's memory is given back once it is copied into the outgoing queue.
const RETAINED_RESPONSE: usize = 64 << 10;

/// Hands messages to the session and the spawned calls to the runtime.
pub(crate) struct Dispatcher<'a> {
    pub(crate) session: &'a mut Session,
    pub(crate) conn: &'a Connection,
    pub(crate) calls: &'a mut JoinSet<()>,
    permits: &'a Arc<Semaphore>,
    /// Messages handled, for the yields of [`Dispatcher::message`].
    handled: u64,
}

/// Messages a connection handles between two yields of its task to the I/O driver.
const YIELD_EVERY: u64 = 256;

impl Dispatcher<'_> {
    /// Handles one message; `false` once the connection can take no more.
    pub(crate) async fn message(&mut self, msg: &[u8]) -> bool {
        // Fairness: messages already read are handled without waiting on the socket,
        // and the task's other wake-ups (its outgoing queue full) wake it at once,
        // before the runtime polls the I/O driver again (every 61 task polls); tokio's
        // `yield_now` wakes it only after the driver has been polled, so other
        // connections' messages are seen every `YIELD_EVERY` of this one's. (256: a
        // yield costs about 2 700 instructions, +0.5% on a message of about 2 480; 64
        // cost +1.7%.)
        self.handled = self.handled.wrapping_add(1);
        if self.handled.is_multiple_of(YIELD_EVERY) {
            tokio::task::yield_now().await;
        }
        let handled = self.session.handle_concurrent(msg);
        let response = handled.response.map(<[u8]>::to_vec);
        let running = handled.calls;
        if response
            .as_ref()
            .is_some_and(|r| r.len() > RETAINED_RESPONSE)
        {
            // Copied out: an idle connection does not keep a large answer's memory.
            self.session.shrink_to(RETAINED_RESPONSE);
        }
        if let Some(r) = response
            && self.conn.send(r).await.is_err()
        {
            return false;
        }
        let Some(mut running) = running else {
            return true;
        };
        // A call that completes at its first poll (no I/O awaited) is answered
        // here, without a task; one that waits goes on in a task of its own.
        if let Poll::Ready(done) = poll_fn(|cx| Poll::Ready(Pin::new(&mut running).poll(cx))).await
        {
            return match done {
                Some(bytes) => self.conn.send(bytes).await.is_ok(),
                None => true,
            };
        }
        // Backpressure: at most `max_in_flight` calls run; reading waits.
        let permit = tokio::select! {
            biased;
            () = self.conn.closed() => None,
            p = Arc::clone(self.permits).acquire_owned() => p.ok(),
        };
        let conn = self.conn.clone();
        self.calls.spawn(async move {
            // Without a permit (closing) the call still runs: the drain decides.
            let _permit = permit;
            if let Some(bytes) = running.await {
                let _ = conn.send(bytes).await;
            }
        });
        true
    }
}

/// Awaits the running calls for up to `timeout`, then cancels what is left;
/// returns how many were cancelled.
async fn drain(conn: &Connection, calls: &mut JoinSet<()>, timeout: Duration) -> usize {
    let all = async { while calls.join_next().await.is_some() {} };
    if tokio::time::timeout(timeout, all).await.is_ok() {
        return 0;
    }
    let left = calls.len();
    tracing::warn!(
        conn = conn.id(),
        "{left} call(s) still running after {timeout:?}: cancelled"
    );
    conn.cancel_all_calls();
    // Cancelled calls answer at their next poll; a future that does not yield
    // is aborted after a second grace period.
    let rest = async { while calls.join_next().await.is_some() {} };
    if tokio::time::timeout(Duration::from_millis(100), rest)
        .await
        .is_err()
    {
        calls.abort_all();
        while calls.join_next().await.is_some() {}
    }
    left
}

/// Writes what the connection queues until the queue is closed and drained.
async fn write_loop<W: AsyncWrite + Unpin>(
    outgoing: &Outgoing,
    mut writer: W,
    framing: Framing,
    limit: Duration,
) -> io::Result<()> {
    let mut frame = Vec::with_capacity(8 << 10);
    while let Some(msg) = outgoing.recv().await {
        frame.clear();
        encode(framing, &msg, &mut frame);
        while frame.len() < WRITE_CHUNK {
            let Some(more) = outgoing.try_recv() else {
                break;
            };
            encode(framing, &more, &mut frame);
        }
        write_all_within(&mut writer, &frame, limit).await?;
        if frame.capacity() > 2 * WRITE_CHUNK {
            frame = Vec::with_capacity(8 << 10); // nor does a large answer, once written
        }
    }
    within(limit, writer.flush()).await?;
    let _ = within(limit, writer.shutdown()).await;
    Ok(())
}

/// Runs `io`, failing with `TimedOut` if it is still pending after `limit`. The
/// timer is armed only when `io` does not complete at its first poll (a write to
/// a socket with room never pays for one).
pub(crate) async fn within<T>(
    limit: Duration,
    io: impl Future<Output = io::Result<T>>,
) -> io::Result<T> {
    let mut io = pin!(io);
    if let Poll::Ready(r) = poll_fn(|cx| Poll::Ready(io.as_mut().poll(cx))).await {
        return r;
    }
    tokio::time::timeout(limit, io).await.unwrap_or_else(|_| {
        Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the client read nothing within the write timeout",
        ))
    })
}

/// Writes and flushes all of `buf`, failing with `TimedOut` when the client takes
/// none of it for `limit` (a slow client that reads goes on: each write that makes
/// progress restarts the clock).
pub(crate) async fn write_all_within<W: AsyncWrite + Unpin>(
    writer: &mut W,
    mut buf: &[u8],
    limit: Duration,
) -> io::Result<()> {
    while !buf.is_empty() {
        let n = within(limit, writer.write(buf)).await?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        buf = &buf[n..];
    }
    within(limit, writer.flush()).await
}

/// Fails the requests to the client that are not answered in time, until the
/// connection closes.
pub(crate) async fn timer(conn: &Connection) {
    let mut sleep = pin!(tokio::time::sleep(Duration::from_secs(3600)));
    poll_fn(|cx| {
        loop {
            if conn.is_closed() {
                return Poll::Ready(());
            }
            let Some(next) = conn.poll_expire(cx, Instant::now()) else {
                return Poll::Pending; // woken when a deadline is set
            };
            sleep.as_mut().reset(next.into());
            if sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
        }
    })
    .await;
}
