//! The HTTP transport: one POST per message, each on a keep-alive HTTP/1.1
//! connection of a small pool of our own: plain `TcpStream`s, the request
//! written by us and the answer read by us ([`codec`]), in the caller's own
//! future (no task per connection, no channel between the call and its
//! connection).
//!
//! A call takes an idle connection (or opens one), writes the whole request
//! at once, reads the whole answer and puts the connection back: concurrent
//! calls each use a connection of their own (one request at a time on each:
//! no pipelining). A connection that failed, timed out (the call's future
//! dropped midway), whose answer was not read to its end, or that the server
//! does not keep alive (`Connection: close`, HTTP/1.0 without keep-alive, a
//! body that ends with the connection) is dropped, never reused.
//!
//! A request is never sent twice: a JSON-RPC call may act (a transfer, a
//! tool with effects), and a server that read it and closed without a byte
//! of answer may have acted on it. So an idle connection is looked at before
//! it is reused (one that has ended, or on which the server wrote anything,
//! is dropped: servers close idle connections); only a request that a reused
//! connection could not take whole (the server had closed it) is sent again,
//! once, on a fresh one. A request written whole and then met by the end of
//! the connection fails with [`Error::Transport`] (`the server closed the
//! connection without answering`): the caller decides whether it may be sent
//! again. This is the rule of Go's `net/http` for requests that are not
//! idempotent; hyper's client (which this replaces) retried only unsent
//! requests too.

mod codec;

use std::io::{self, IoSlice};
use std::mem::MaybeUninit;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use hyper::Uri;
use hyper::header::HeaderValue;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::Error;
use codec::Failure;

/// How many idle connections are kept; more are closed when their call ends.
const MAX_IDLE: usize = 64;

/// The read buffer a new connection starts with.
const READ_BUFFER_BYTES: usize = 8 << 10;

/// How long a connection may have been idle and still be taken on the
/// reactor's word that nothing came on it; longer, it is asked with a
/// system call (a peek) whether the server closed it. Servers close idle
/// connections after seconds; between the quick calls of a busy client the
/// reactor has seen everything that mattered, and the peek would cost each
/// call a system call.
const PROBE_AFTER: Duration = Duration::from_millis(50);

/// One keep-alive connection.
struct Conn {
    stream: TcpStream,
    /// What was read and not used yet (empty between answers).
    buf: BytesMut,
    /// The request head being written (kept for its allocation).
    head: Vec<u8>,
    /// When it was put back in the pool.
    idle_since: Instant,
}

pub(crate) struct Http {
    /// Where to connect (the host without IPv6 brackets).
    host: String,
    port: u16,
    /// The URL's authority, for messages.
    authority: String,
    /// The request head up to the `Content-Length` value: the request line,
    /// `Host`, `Content-Type` and `Authorization`.
    head: Vec<u8>,
    max_response_bytes: usize,
    idle: Mutex<Vec<Conn>>,
}

impl Http {
    pub(crate) fn new(
        uri: Uri,
        token: Option<&str>,
        max_response_bytes: usize,
    ) -> Result<Self, Error> {
        let host = uri
            .host()
            .ok_or_else(|| Error::Unsupported(format!("{uri} has no host")))?;
        let port = uri.port_u16().unwrap_or(80);
        let authority = uri.authority().map_or(host, |a| a.as_str());
        // Checked as header values: no control characters (CR, LF) in the head.
        HeaderValue::try_from(authority)
            .map_err(|_| Error::Unsupported(format!("{uri}: the host is not a header value")))?;
        let auth = token
            .map(|t| {
                let v = format!("Bearer {t}");
                HeaderValue::try_from(v.as_str()).map_err(|_| {
                    Error::Unsupported("the token is not a valid header value".into())
                })?;
                Ok(v)
            })
            .transpose()?;
        // The URI parser leaves no space or control character in the path.
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        let path = if path.is_empty() { "/" } else { path };
        let mut head = format!(
            "POST {path} HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n"
        );
        if let Some(a) = auth {
            head.push_str("Authorization: ");
            head.push_str(&a);
            head.push_str("\r\n");
        }
        head.push_str("Content-Length: ");
        Ok(Http {
            host: host.trim_start_matches('[').trim_end_matches(']').into(),
            port,
            authority: authority.into(),
            head: head.into_bytes(),
            max_response_bytes,
            idle: Mutex::new(Vec::new()),
        })
    }

    fn idle(&self) -> MutexGuard<'_, Vec<Conn>> {
        // Each change under the lock is one push or pop: a panic leaves it whole.
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// An idle connection that is not known to be closed, if there is one.
    fn reuse(&self) -> Option<Conn> {
        loop {
            let conn = self.idle().pop()?;
            // Nothing may come on an idle connection: its end (the server
            // closed it) or stray bytes rule it out. Recently used: no system
            // call unless the reactor has seen it readable; idle for longer:
            // a peek (the socket is non-blocking) asks the kernel itself.
            let quiet = if conn.idle_since.elapsed() < PROBE_AFTER {
                let mut probe = [0u8; 1];
                conn.stream.try_read(&mut probe)
            } else {
                let mut probe = [MaybeUninit::<u8>::uninit(); 1];
                socket2::SockRef::from(&conn.stream).peek(&mut probe)
            };
            match quiet {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Some(conn),
                _ => continue,
            }
        }
    }

    /// A new connection.
    async fn open(&self) -> Result<Conn, Error> {
        let stream = TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(|e| Error::Transport(format!("connecting to {}: {e}", self.authority)))?;
        let _ = stream.set_nodelay(true);
        Ok(Conn {
            stream,
            buf: BytesMut::with_capacity(READ_BUFFER_BYTES),
            head: Vec::with_capacity(self.head.len() + 24),
            idle_since: Instant::now(),
        })
    }

    /// Sends `body` on `conn` and reads the answer.
    async fn exchange(&self, conn: &mut Conn, body: &[u8]) -> Result<codec::Answer, Failure> {
        conn.head.clear();
        conn.head.extend_from_slice(&self.head);
        conn.head
            .extend_from_slice(itoa::Buffer::new().format(body.len()).as_bytes());
        conn.head.extend_from_slice(b"\r\n\r\n");
        let Err(e) = write_all(&mut conn.stream, &conn.head, body).await else {
            // Written whole: the server may have acted on it, whatever follows.
            return codec::read_answer(&mut conn.stream, &mut conn.buf, self.max_response_bytes)
                .await
                .map_err(|f| Failure::Failed(f.into_error()));
        };
        // Not sent whole: the server cannot have taken it. It may have
        // answered first, though, and stopped reading (413 to a body over its
        // limit, then closed): that answer, if it arrived whole (the broken
        // connection gives what it received, then its end or error).
        let sending = || Error::Transport(format!("sending the request: {e}"));
        match codec::read_answer(&mut conn.stream, &mut conn.buf, self.max_response_bytes).await {
            Ok(answer) => Ok(codec::Answer {
                reusable: false,
                ..answer
            }),
            Err(Failure::Unanswered(_)) => Err(Failure::Unanswered(sending())),
            Err(Failure::Failed(_)) => Err(Failure::Failed(sending())),
        }
    }

    /// Sends `body` on a new connection.
    async fn exchange_fresh(&self, body: &[u8]) -> Result<(Conn, codec::Answer), Error> {
        let mut conn = self.open().await?;
        let answer = self
            .exchange(&mut conn, body)
            .await
            .map_err(Failure::into_error)?;
        Ok((conn, answer))
    }

    /// Keeps `conn` for the next call (if there is room).
    fn put_back(&self, mut conn: Conn) {
        conn.idle_since = Instant::now();
        let mut idle = self.idle();
        if idle.len() < MAX_IDLE {
            idle.push(conn);
        }
    }

    /// Posts `body`; the answer's body, or `None` for 204 No Content (what a
    /// server answers to notifications only).
    pub(crate) async fn post(&self, body: Vec<u8>) -> Result<Option<Bytes>, Error> {
        let (conn, answer) = match self.reuse() {
            Some(mut conn) => match self.exchange(&mut conn, &body).await {
                // 408 on a connection that was idle: the server gave up waiting
                // for a request as this one came (408 says it received no
                // complete request, RFC 9110 15.5.9), so it did not act on it:
                // once more on a fresh connection, as Go's net/http does.
                Ok(answer) if answer.status == 408 => {
                    drop(conn);
                    self.exchange_fresh(&body).await?
                }
                Ok(answer) => (conn, answer),
                // Not taken whole (the server had closed it while idle):
                // once more on a fresh one.
                Err(Failure::Unanswered(_)) => {
                    drop(conn);
                    self.exchange_fresh(&body).await?
                }
                Err(Failure::Failed(e)) => return Err(e),
            },
            None => self.exchange_fresh(&body).await?,
        };
        if answer.reusable {
            self.put_back(conn);
        }
        match answer.status {
            200 => Ok(Some(answer.body)),
            204 => Ok(None),
            status => Err(Error::Http {
                status,
                body: String::from_utf8_lossy(&answer.body).into_owned(),
            }),
        }
    }
}

/// Writes `head` then `body`, in one system call when the socket takes them.
async fn write_all(stream: &mut TcpStream, head: &[u8], body: &[u8]) -> io::Result<()> {
    let mut slices = [IoSlice::new(head), IoSlice::new(body)];
    let mut slices = &mut slices[..];
    while !slices.is_empty() {
        let n = stream.write_vectored(slices).await?;
        if n == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        IoSlice::advance_slices(&mut slices, n);
    }
    Ok(())
}
