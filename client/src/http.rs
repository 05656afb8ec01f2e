//! The HTTP transport: one POST per message, each on a keep-alive HTTP/1.1
//! connection of a small pool of our own (hyper's `client::conn::http1`
//! handshake over a `TcpStream`).
//!
//! A call takes an idle connection (or opens one), sends, reads the whole
//! answer and puts the connection back: concurrent calls each use a
//! connection of their own. A connection that failed, timed out (the call's
//! future dropped) or whose answer was not read to its end is dropped, never
//! reused. A request that a reused connection could not send at all (the
//! server had closed it while idle) is sent again once on a fresh one.

use std::sync::{Mutex, MutexGuard};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::client::conn::http1::{self, SendRequest};
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HOST, HeaderValue};
use hyper::{Method, Request, StatusCode, Uri};
use hyper_util::rt::TokioIo;

use crate::Error;

/// How much of an error status's body is kept.
const ERROR_BODY_BYTES: usize = 1024;

/// How many idle connections are kept; more are closed when their call ends.
const MAX_IDLE: usize = 64;

type Conn = SendRequest<Full<Bytes>>;

pub(crate) struct Http {
    /// Where to connect (the host without IPv6 brackets) and the `Host` header.
    host: String,
    port: u16,
    authority: HeaderValue,
    /// The request target (origin form).
    path: Uri,
    auth: Option<HeaderValue>,
    max_response_bytes: usize,
    idle: Mutex<Vec<Conn>>,
}

impl Http {
    pub(crate) fn new(
        uri: Uri,
        token: Option<&str>,
        max_response_bytes: usize,
    ) -> Result<Self, Error> {
        let auth = token
            .map(|t| {
                HeaderValue::try_from(format!("Bearer {t}"))
                    .map_err(|_| Error::Unsupported("the token is not a valid header value".into()))
            })
            .transpose()?;
        let host = uri
            .host()
            .ok_or_else(|| Error::Unsupported(format!("{uri} has no host")))?;
        let port = uri.port_u16().unwrap_or(80);
        let authority = uri.authority().map_or(host, |a| a.as_str());
        let authority = HeaderValue::try_from(authority)
            .map_err(|_| Error::Unsupported(format!("{uri}: the host is not a header value")))?;
        let path: Uri = uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .parse()
            .map_err(|e| Error::Unsupported(format!("{uri}: the path: {e}")))?;
        Ok(Http {
            host: host.trim_start_matches('[').trim_end_matches(']').into(),
            port,
            authority,
            path,
            auth,
            max_response_bytes,
            idle: Mutex::new(Vec::new()),
        })
    }

    fn idle(&self) -> MutexGuard<'_, Vec<Conn>> {
        // Each change under the lock is one push or pop: a panic leaves it whole.
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// An idle connection that is still open, if there is one.
    async fn reuse(&self) -> Option<Conn> {
        loop {
            let mut conn = self.idle().pop()?;
            if conn.is_closed() {
                continue;
            }
            // Ready at once, or as soon as its task has seen the last answer's end.
            if conn.ready().await.is_ok() {
                return Some(conn);
            }
        }
    }

    /// A new connection; its task runs on tokio until the connection closes
    /// or the [`SendRequest`] is dropped.
    async fn open(&self) -> Result<Conn, Error> {
        let describe_addr = || format!("connecting to {}", self.authority.to_str().unwrap_or("?"));
        let stream = tokio::net::TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(|e| Error::Transport(format!("{}: {e}", describe_addr())))?;
        let _ = stream.set_nodelay(true);
        let (conn, task) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| Error::Transport(format!("{}: {}", describe_addr(), describe(&e))))?;
        tokio::spawn(task);
        Ok(conn)
    }

    /// Sends `req` on a new connection.
    async fn send_fresh(
        &self,
        req: Request<Full<Bytes>>,
    ) -> Result<(Conn, hyper::Response<hyper::body::Incoming>), Error> {
        let mut conn = self.open().await?;
        let resp = conn
            .send_request(req)
            .await
            .map_err(|e| Error::Transport(describe(&e)))?;
        Ok((conn, resp))
    }

    /// Keeps `conn` for the next call (if there is room).
    fn put_back(&self, conn: Conn) {
        let mut idle = self.idle();
        if idle.len() < MAX_IDLE && !conn.is_closed() {
            idle.push(conn);
        }
    }

    /// Posts `body`; the answer's body, or `None` for 204 No Content (what a
    /// server answers to notifications only).
    pub(crate) async fn post(&self, body: Vec<u8>) -> Result<Option<Bytes>, Error> {
        // Built in place rather than with `Request::builder` (which moves
        // itself with each header: fewer instructions per call).
        let mut req = Request::new(Full::new(Bytes::from(body)));
        *req.method_mut() = Method::POST;
        *req.uri_mut() = self.path.clone();
        let headers = req.headers_mut();
        headers.reserve(3);
        headers.insert(HOST, self.authority.clone());
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(a) = &self.auth {
            headers.insert(AUTHORIZATION, a.clone());
        }
        let (conn, resp) = match self.reuse().await {
            Some(mut conn) => match conn.try_send_request(req).await {
                Ok(resp) => (conn, resp),
                // Not sent at all (closed while idle): once more on a fresh one.
                Err(mut e) => match e.take_message() {
                    Some(req) => self.send_fresh(req).await?,
                    None => return Err(Error::Transport(describe(e.error()))),
                },
            },
            None => self.send_fresh(req).await?,
        };
        let status = resp.status();
        if status == StatusCode::NO_CONTENT {
            // No body: the connection is ready for the next request.
            self.put_back(conn);
            return Ok(None);
        }
        if status != StatusCode::OK {
            let body = Limited::new(resp.into_body(), ERROR_BODY_BYTES)
                .collect()
                .await
                .map(|b| b.to_bytes());
            let read_whole = body.is_ok();
            if read_whole {
                self.put_back(conn);
            }
            return Err(Error::Http {
                status: status.as_u16(),
                body: String::from_utf8_lossy(&body.unwrap_or_default()).into_owned(),
            });
        }
        let body = Limited::new(resp.into_body(), self.max_response_bytes)
            .collect()
            .await
            .map_err(|e| {
                if e.is::<http_body_util::LengthLimitError>() {
                    Error::InvalidResponse(format!(
                        "the response is larger than {} bytes",
                        self.max_response_bytes
                    ))
                } else {
                    Error::Transport(format!("reading the response: {e}"))
                }
            })?;
        // Read to its end: hyper's task makes the connection ready again (the
        // next call's `ready()` waits for it).
        self.put_back(conn);
        Ok(Some(body.to_bytes()))
    }
}

/// The error and its causes, one after the other (hyper's own message is
/// terse: "client error (Connect)").
fn describe(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cause = c.source();
    }
    s
}
