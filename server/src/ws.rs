//! JSON-RPC over WebSocket: one full-duplex connection per socket, on the same
//! listener and endpoint as HTTP (a `GET` with `Upgrade: websocket`, answered by
//! [`Switchboard`](crate::http::Switchboard) after the bearer token check), served
//! by the [`duplex`](crate::duplex) driver's machinery: the client's calls run
//! concurrently, answers and the server's own notifications and requests (a
//! handler's [`call.connection().peer()`](switchboard::connection::Connection::peer))
//! go out in the order they are queued, requests to the client time out, and on
//! disconnect pending requests fail and running calls are drained, then cancelled.
//!
//! Frames are read with [`fastwebsockets`] (chosen by measurement: 1 394
//! instructions per echoed message against tokio-tungstenite's 2 275); the
//! server's frames (unmasked) are written by this module into one coalesced
//! write, like the byte-stream driver.
//!
//! | the client sends | the server |
//! | --- | --- |
//! | a text frame (or a fragmented text message) | handles it as one JSON-RPC message (a batch included); answers in one text frame, none for notifications |
//! | a binary frame | the same as text: the payload must be UTF-8 JSON; answered in text frames |
//! | text or binary that is not UTF-8 | closes with 1007 |
//! | a frame over [`WsConfig::max_frame_bytes`], or a message over the router's `max_message_bytes` (fragments counted as they arrive) | closes with 1009 |
//! | a ping | answers pong (only the latest ping is answered when several wait) |
//! | nothing for [`WsConfig::idle_timeout`] (pings are sent every [`WsConfig::ping_interval`] of silence; any frame, a pong included, counts) | closes with 1000 `idle timeout` |
//! | a close frame | answers what is still running (drain), then echoes the close |
//! | a protocol error (reserved bits, a bad continuation, a bad close code) | closes with 1002 |
//!
//! When the server shuts down it closes with 1001.
//!
//! ```no_run
//! # async fn run() -> std::io::Result<()> {
//! use switchboard_server::http::{Switchboard, serve};
//! use switchboard_server::ws::WsConfig;
//! // WebSocket is on by default; `websocket` sets its limits.
//! let service = Switchboard::new(switchboard::Router::builder().build().unwrap()).websocket(Some(WsConfig::default()));
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! serve(listener, service, async { tokio::signal::ctrl_c().await.ok(); }).await
//! # }
//! ```

use std::future::Future;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fastwebsockets::{OpCode, Role, WebSocketError};
use switchboard::Router;
use switchboard::connection::Outgoing;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::Notify;

use crate::duplex::{Dispatcher, Duplex, DuplexConfig, End, Summary, calls_reaped, log_unmatched};

/// A WebSocket connection's limits and keep-alive.
///
/// A client silent for `idle_timeout` is closed with 1000 and a reason:
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use std::time::Duration;
/// use switchboard_server::ws::{WsConfig, serve};
/// use tokio::io::AsyncReadExt;
///
/// let config = WsConfig {
///     ping_interval: Duration::from_secs(3600),
///     idle_timeout: Duration::from_millis(100),
///     ..WsConfig::default()
/// };
/// let router = switchboard::Router::builder().build().unwrap();
/// let (mut client, server) = tokio::io::duplex(4096);
/// let _serving = tokio::spawn(serve(router, config, server, std::future::pending()));
/// let mut close = [0; 16];
/// client.read_exact(&mut close).await.unwrap();
/// assert_eq!(close[..4], [0x88, 14, 0x03, 0xe8]); // a close frame: 1000,
/// assert_eq!(&close[4..], b"idle timeout"); // and why
/// # }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct WsConfig {
    /// Calls in flight, the outgoing queue, the request timeout and the drain
    /// timeout, as for the byte-stream driver (its framing is not used).
    pub duplex: DuplexConfig,
    /// A ping is sent after this much silence from the client, and again every
    /// this much while the silence lasts.
    pub ping_interval: Duration,
    /// The connection is closed (1000) after this much silence from the client.
    pub idle_timeout: Duration,
    /// The largest frame accepted (its payload); the message limit is the
    /// router's `max_message_bytes`, and a frame is never allowed more than that.
    pub max_frame_bytes: usize,
}

impl Default for WsConfig {
    fn default() -> Self {
        let mut connection = switchboard::connection::ConnectionConfig::new();
        // Many sockets sit idle: the queue's slots are allocated up front (32
        // bytes each), 128 of them are 4 KB where the default 1024 are 32 KB.
        connection.queue_capacity(WS_QUEUE_CAPACITY);
        WsConfig {
            duplex: DuplexConfig {
                connection,
                ..DuplexConfig::default()
            },
            ping_interval: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(90),
            max_frame_bytes: 16 << 20,
        }
    }
}

/// The outgoing queue's capacity by default (messages; senders wait above it).
pub const WS_QUEUE_CAPACITY: usize = 128;

/// Control frames waiting for the writer: bounded by construction (one pong,
/// one ping, one close), whatever the client floods.
#[derive(Default)]
struct Control {
    pong: Option<Vec<u8>>,
    ping: bool,
    close: Option<(u16, &'static str)>,
}

#[derive(Default)]
struct Controls {
    state: Mutex<Control>,
    wake: Notify,
}

impl Controls {
    fn with<T>(&self, f: impl FnOnce(&mut Control) -> T) -> T {
        let mut g = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut g)
    }

    fn pong(&self, payload: &[u8]) {
        self.with(|c| c.pong = Some(payload.to_vec()));
        self.wake.notify_one();
    }

    fn ping(&self) {
        self.with(|c| c.ping = true);
        self.wake.notify_one();
    }

    /// The close frame sent once the answers still coming are written; the
    /// first reason given wins.
    fn close(&self, code: u16, reason: &'static str) {
        self.with(|c| {
            c.close.get_or_insert((code, reason));
        });
    }
}

/// Serves one upgraded socket until it closes (see the [module docs](self)).
/// `stop` completing closes it with 1001 (the server shutting down). The
/// handshake is done already (hyper's upgrade, as [`Switchboard`](crate::http::Switchboard)
/// does it); `io` carries frames from here on.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use switchboard::Router;
/// use tokio::io::{AsyncReadExt, AsyncWriteExt};
/// use switchboard_server::ws::{WsConfig, serve};
///
/// let (mut client, server) = tokio::io::duplex(4096);
/// let serving = tokio::spawn(serve(
///     Router::builder().typed("subtract", |(a, b): (i64, i64)| Ok(a - b)).build().unwrap(),
///     WsConfig::default(),
///     server,
///     std::future::pending(),
/// ));
/// // A client's text frame is masked: here with the key 0, which leaves it as is.
/// let call = br#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#;
/// let mut frame = vec![0x81, 0x80 | call.len() as u8, 0, 0, 0, 0];
/// frame.extend_from_slice(call);
/// client.write_all(&frame).await.unwrap();
/// let answer = br#"{"jsonrpc":"2.0","result":19,"id":1}"#;
/// let mut got = vec![0; 2 + answer.len()];
/// client.read_exact(&mut got).await.unwrap();
/// assert_eq!(got[..2], [0x81, answer.len() as u8]); // one text frame, unmasked
/// assert_eq!(&got[2..], answer);
/// // A close frame (1000): the server answers what runs, echoes it and ends.
/// client.write_all(&[0x88, 0x82, 0, 0, 0, 0, 0x03, 0xe8]).await.unwrap();
/// let mut close = [0; 4];
/// client.read_exact(&mut close).await.unwrap();
/// assert_eq!(close, [0x88, 2, 0x03, 0xe8]);
/// let summary = serving.await.unwrap().unwrap();
/// assert_eq!(summary.messages, 1);
/// # }
/// ```
///
/// # Errors
/// I/O errors writing to the socket; the connection is wound up first.
pub async fn serve<S, F>(
    router: Arc<Router>,
    config: WsConfig,
    io: S,
    stop: F,
) -> io::Result<Summary>
where
    S: AsyncRead + AsyncWrite + Unpin,
    F: Future<Output = ()>,
{
    let (read, write) = tokio::io::split(io);
    let (mut frames, _) =
        fastwebsockets::after_handshake_split(read, tokio::io::sink(), Role::Server);
    frames.set_auto_close(false);
    frames.set_auto_pong(false);
    let message_limit = router.config().get_max_message_bytes();
    // fastwebsockets refuses a payload of `max` bytes or more.
    let frame_limit = config.max_frame_bytes.min(message_limit);
    frames.set_max_message_size(frame_limit.saturating_add(1));
    let controls = Controls::default();
    let duplex = Duplex::new(router, config.duplex);
    let ctl = &controls;
    duplex
        .drive(
            "websocket",
            async move |d: &mut Dispatcher<'_>| {
                let activity = AtomicU64::new(0);
                let messages = AtomicU64::new(0);
                let conn = d.conn.clone();
                let reading = read_loop(d, &mut frames, ctl, message_limit, &activity, &messages);
                let keepalive =
                    keepalive(ctl, &activity, config.ping_interval, config.idle_timeout);
                // Reading is not cancelled midway otherwise: a frame half read
                // is lost only when the connection ends anyway.
                let end = tokio::select! {
                    r = reading => r?,
                    () = keepalive => {
                        ctl.close(1000, "idle timeout");
                        End::Closed
                    }
                    () = conn.closed() => {
                        ctl.close(1001, "server closing");
                        End::Closed
                    }
                    () = stop => {
                        ctl.close(1001, "server shutting down");
                        End::Closed
                    }
                };
                Ok((messages.load(Ordering::Relaxed), end))
            },
            async move |out: &Outgoing| {
                write_loop(out, write, ctl, config.duplex.write_timeout).await
            },
        )
        .await
}

/// Adds one to a counter written by one task only (a load and a store, no
/// locked instruction); atomics only so that the driver's future stays `Send`.
fn bump(counter: &AtomicU64) {
    counter.store(
        counter.load(Ordering::Relaxed).wrapping_add(1),
        Ordering::Relaxed,
    );
}

/// Why reading stopped with a close to send.
fn protocol_close(e: &WebSocketError) -> (u16, &'static str) {
    match e {
        WebSocketError::InvalidUTF8 => (1007, "invalid UTF-8"),
        WebSocketError::FrameTooLarge => (1009, "frame too large"),
        _ => (1002, "protocol error"),
    }
}

/// Reads frames and dispatches messages until the client closes or goes away,
/// or a frame breaks the rules (the close to send is set on `ctl`).
async fn read_loop<R: AsyncRead + Unpin>(
    d: &mut Dispatcher<'_>,
    frames: &mut fastwebsockets::WebSocketRead<R>,
    ctl: &Controls,
    limit: usize,
    activity: &AtomicU64,
    messages: &AtomicU64,
) -> io::Result<End> {
    let mut unmatched_logged_at = 0u64;
    // A fragmented message being collected (text and binary alike).
    let mut partial: Option<Vec<u8>> = None;
    let mut no_obligations = |_| async { Ok::<(), io::Error>(()) };
    loop {
        let frame = match frames.read_frame(&mut no_obligations).await {
            Ok(f) => f,
            Err(WebSocketError::UnexpectedEOF) => return Ok(End::Eof),
            Err(WebSocketError::IoError(e)) => {
                tracing::debug!(conn = d.conn.id(), error = %e, "websocket read");
                return Ok(End::Eof);
            }
            Err(e) => {
                let (code, reason) = protocol_close(&e);
                ctl.close(code, reason);
                return Ok(End::Closed);
            }
        };
        bump(activity);
        let payload: &[u8] = &frame.payload;
        let message: Option<Vec<u8>> = match frame.opcode {
            OpCode::Text | OpCode::Binary if frame.fin => {
                if partial.is_some() {
                    ctl.close(1002, "a new message inside a fragmented one");
                    return Ok(End::Closed);
                }
                if frame.opcode == OpCode::Binary && std::str::from_utf8(payload).is_err() {
                    ctl.close(1007, "invalid UTF-8");
                    return Ok(End::Closed);
                }
                // An unfragmented text frame is UTF-8 (fastwebsockets checked).
                bump(messages);
                if !d.message(payload).await {
                    return Ok(End::Closed);
                }
                None
            }
            OpCode::Text | OpCode::Binary => {
                if partial.is_some() {
                    ctl.close(1002, "a new message inside a fragmented one");
                    return Ok(End::Closed);
                }
                partial = Some(payload.to_vec());
                None
            }
            OpCode::Continuation => {
                let Some(buf) = partial.as_mut() else {
                    ctl.close(1002, "a continuation without a message");
                    return Ok(End::Closed);
                };
                if buf.len().saturating_add(payload.len()) > limit {
                    ctl.close(1009, "message too large");
                    return Ok(End::Closed);
                }
                buf.extend_from_slice(payload);
                if frame.fin { partial.take() } else { None }
            }
            OpCode::Ping => {
                ctl.pong(payload);
                None
            }
            OpCode::Pong => None,
            OpCode::Close => {
                let code = match payload.len() {
                    0 => 1000,
                    1 => 1002,
                    _ => {
                        let code = u16::from_be_bytes([payload[0], payload[1]]);
                        let allowed = matches!(code, 1000..=1003 | 1007..=1014 | 3000..=4999);
                        if !allowed || std::str::from_utf8(&payload[2..]).is_err() {
                            1002
                        } else {
                            code
                        }
                    }
                };
                ctl.close(code, if code == 1002 { "protocol error" } else { "" });
                return Ok(End::Eof);
            }
        };
        if let Some(msg) = message {
            if std::str::from_utf8(&msg).is_err() {
                ctl.close(1007, "invalid UTF-8");
                return Ok(End::Closed);
            }
            bump(messages);
            if !d.message(&msg).await {
                return Ok(End::Closed);
            }
        }
        log_unmatched(d.conn, &mut unmatched_logged_at);
        while calls_reaped(d.calls) {}
    }
}

/// Pings after `ping_interval` of silence, and completes after `idle_timeout`
/// of it. Silence is measured in ticks of a quarter of the shorter of the two:
/// closed between 1 and 1.25 times `idle_timeout` after the last frame.
async fn keepalive(
    ctl: &Controls,
    activity: &AtomicU64,
    ping_interval: Duration,
    idle_timeout: Duration,
) {
    let tick = (ping_interval.min(idle_timeout) / 4).max(Duration::from_millis(1));
    let mut ticker = tokio::time::interval(tick);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticker.tick().await; // the first tick is at once
    let mut seen = activity.load(Ordering::Relaxed);
    let mut quiet = Duration::ZERO;
    let mut since_ping = Duration::ZERO;
    loop {
        ticker.tick().await;
        let now = activity.load(Ordering::Relaxed);
        if now == seen {
            quiet += tick;
            since_ping += tick;
        } else {
            seen = now;
            quiet = Duration::ZERO;
            since_ping = Duration::ZERO;
        }
        if quiet >= idle_timeout {
            return;
        }
        if since_ping >= ping_interval {
            since_ping = Duration::ZERO;
            ctl.ping();
        }
    }
}

/// Bytes coalesced into one write at most (one message may be larger).
const WRITE_CHUNK: usize = 64 << 10;

/// Appends a server frame (FIN, unmasked) to `out`.
fn frame(opcode: u8, payload: &[u8], out: &mut Vec<u8>) {
    out.push(0x80 | opcode);
    let n = payload.len();
    if n < 126 {
        out.push(n as u8);
    } else if let Ok(n) = u16::try_from(n) {
        out.push(126);
        out.extend_from_slice(&n.to_be_bytes());
    } else {
        out.push(127);
        out.extend_from_slice(&(n as u64).to_be_bytes());
    }
    out.extend_from_slice(payload);
}

fn controls_into(ctl: &Controls, out: &mut Vec<u8>) {
    let (pong, ping) = ctl.with(|c| (c.pong.take(), std::mem::take(&mut c.ping)));
    if let Some(p) = pong {
        frame(0xA, &p, out);
    }
    if ping {
        frame(0x9, b"", out);
    }
}

/// Writes the queued messages as text frames, and the pongs and pings, until
/// the queue ends; then the close frame.
async fn write_loop<W: AsyncWrite + Unpin>(
    outgoing: &Outgoing,
    mut writer: W,
    ctl: &Controls,
    limit: Duration,
) -> io::Result<()> {
    // Allocated at the first write (an idle socket holds none), kept while small.
    let mut buf = Vec::new();
    loop {
        if buf.capacity() > WRITE_CHUNK * 2 {
            buf = Vec::new(); // a large answer does not pin its memory
        }
        buf.clear();
        let next = tokio::select! {
            biased;
            () = ctl.wake.notified() => None,
            m = outgoing.recv() => match m {
                Some(m) => Some(m),
                None => break,
            },
        };
        controls_into(ctl, &mut buf);
        if let Some(m) = next {
            frame(0x1, &m, &mut buf);
            while buf.len() < WRITE_CHUNK {
                let Some(more) = outgoing.try_recv() else {
                    break;
                };
                frame(0x1, &more, &mut buf);
            }
        }
        if !buf.is_empty() {
            crate::duplex::write_all_within(&mut writer, &buf, limit).await?;
        }
    }
    buf.clear();
    let (code, reason) = ctl.with(|c| c.close).unwrap_or((1000, ""));
    let mut payload = code.to_be_bytes().to_vec();
    payload.extend_from_slice(reason.as_bytes());
    frame(0x8, &payload, &mut buf);
    // The client may be gone already, or not reading: the close is a courtesy.
    let _ = crate::duplex::write_all_within(&mut writer, &buf, limit).await;
    let _ = crate::duplex::within(limit, writer.shutdown()).await;
    Ok(())
}
