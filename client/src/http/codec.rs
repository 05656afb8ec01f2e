//! Reading an HTTP/1.1 answer off a connection, in the caller's own future:
//! the head parsed with `httparse` (interim 1xx heads skipped), then the body
//! framed by `Content-Length`, by the chunked transfer coding (extensions and
//! trailers read and ignored) or by the end of the connection.
//!
//! Everything the server says is bounded: a head (status line and headers) of
//! at most [`MAX_HEAD_BYTES`], a chunk-size line of at most
//! [`MAX_CHUNK_LINE_BYTES`], trailers of at most [`MAX_TRAILER_BYTES`], a 200
//! answer's body of at most the client's `max_response_bytes`, and of any other
//! status's body only the first [`ERROR_BODY_BYTES`] are read.

use std::io;
use std::mem::MaybeUninit;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt};

use crate::Error;

/// The largest response head: the status line and the headers (each interim
/// 1xx head counts on its own).
pub(crate) const MAX_HEAD_BYTES: usize = 64 << 10;

/// The most header lines a head may have.
const MAX_HEADERS: usize = 100;

/// The longest chunk-size line (the size, its extensions and the CRLF).
pub(crate) const MAX_CHUNK_LINE_BYTES: usize = 4 << 10;

/// The largest trailer section of a chunked body.
pub(crate) const MAX_TRAILER_BYTES: usize = 64 << 10;

/// How much of an error status's body is kept.
pub(crate) const ERROR_BODY_BYTES: usize = 1024;

/// What a read asks the buffer for, at least.
const READ_BYTES: usize = 8 << 10;

/// Content-Length bodies up to this size are read into the connection's
/// buffer (and split off it without a copy); larger ones into a buffer of
/// their own size, so that the connection's buffer stays small while idle.
const SMALL_BODY_BYTES: usize = 16 << 10;

/// How the body of an answer ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Framing {
    /// No body: 1xx, 204, 304.
    Empty,
    /// `Content-Length` bytes.
    Length(u64),
    /// The chunked transfer coding.
    Chunked,
    /// Until the server closes the connection (neither of the above).
    Close,
}

/// What a response head says.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Head {
    /// The status code.
    pub(crate) status: u16,
    /// How its body ends.
    pub(crate) framing: Framing,
    /// Whether the connection may carry another request once the body is read:
    /// HTTP/1.1 without `Connection: close`, HTTP/1.0 with
    /// `Connection: keep-alive`, and never when the body ends with the
    /// connection.
    pub(crate) keep_alive: bool,
}

fn invalid(why: impl Into<String>) -> Error {
    Error::InvalidResponse(why.into())
}

/// `s` without leading and trailing spaces and tabs.
fn trim(s: &[u8]) -> &[u8] {
    let start = s.iter().position(|&b| b != b' ' && b != b'\t');
    let Some(start) = start else { return &[] };
    let end = s
        .iter()
        .rposition(|&b| b != b' ' && b != b'\t')
        .unwrap_or(start);
    &s[start..=end]
}

/// The elements of a comma-separated header value, trimmed, empty ones left
/// out (RFC 9110 §5.6.1).
fn list(value: &[u8]) -> impl Iterator<Item = &[u8]> {
    value
        .split(|&b| b == b',')
        .map(trim)
        .filter(|e| !e.is_empty())
}

/// A `Content-Length` value: digits only; a list of equal values is that value.
fn content_length(value: &[u8]) -> Result<u64, Error> {
    let mut length = None;
    for element in value.split(|&b| b == b',').map(trim) {
        // At most 19 digits: always below u64::MAX.
        if element.is_empty() || element.len() > 19 || !element.iter().all(u8::is_ascii_digit) {
            return Err(invalid(format!(
                "Content-Length {:?} is not a number",
                String::from_utf8_lossy(value)
            )));
        }
        let n = element
            .iter()
            .fold(0u64, |n, &d| n * 10 + u64::from(d - b'0'));
        if length.is_some_and(|l| l != n) {
            return Err(invalid("two different Content-Length values"));
        }
        length = Some(n);
    }
    length.ok_or_else(|| invalid("an empty Content-Length"))
}

/// Parses the response head at the start of `buf`: its length and what it
/// says, or `None` when it is not complete yet.
///
/// # Errors
/// [`Error::InvalidResponse`] when it is not an HTTP/1.x response head, has
/// more than 100 headers, a `Content-Length` that is not a number (or two
/// different ones), a `Transfer-Encoding` other than `chunked`, both
/// `Transfer-Encoding` and `Content-Length`, or `Transfer-Encoding` in an
/// HTTP/1.0 answer (RFC 9112 §6.1: faulty framing).
pub(crate) fn parse_head(buf: &[u8]) -> Result<Option<(usize, Head)>, Error> {
    let mut headers = [const { MaybeUninit::uninit() }; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut []);
    let len = match httparse::ParserConfig::default().parse_response_with_uninit_headers(
        &mut response,
        buf,
        &mut headers,
    ) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(invalid(format!("the response head: {e}"))),
    };
    // Both are set on a complete parse.
    let version = response.version.unwrap_or(1);
    let status = response.code.unwrap_or(0);
    let mut length = None;
    let mut transfer_encoding = false;
    let mut chunked = false;
    let mut close = false;
    let mut keep_alive = false;
    for h in response.headers.iter() {
        if h.name.eq_ignore_ascii_case("content-length") {
            let n = content_length(h.value)?;
            if length.is_some_and(|l| l != n) {
                return Err(invalid("two different Content-Length values"));
            }
            length = Some(n);
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            transfer_encoding = true;
            for coding in list(h.value) {
                // The client asks for no coding: `chunked`, once, is the only
                // one it reads.
                if chunked || !coding.eq_ignore_ascii_case(b"chunked") {
                    return Err(invalid(format!(
                        "Transfer-Encoding {:?} (only chunked is read)",
                        String::from_utf8_lossy(h.value)
                    )));
                }
                chunked = true;
            }
        } else if h.name.eq_ignore_ascii_case("connection") {
            for option in list(h.value) {
                close |= option.eq_ignore_ascii_case(b"close");
                keep_alive |= option.eq_ignore_ascii_case(b"keep-alive");
            }
        }
    }
    if transfer_encoding && length.is_some() {
        return Err(invalid("both Transfer-Encoding and Content-Length"));
    }
    if transfer_encoding && version == 0 {
        return Err(invalid("Transfer-Encoding in an HTTP/1.0 answer"));
    }
    if transfer_encoding && !chunked {
        return Err(invalid("an empty Transfer-Encoding"));
    }
    let framing = match (status, length) {
        (100..=199 | 204 | 304, _) => Framing::Empty,
        _ if chunked => Framing::Chunked,
        (_, Some(n)) => Framing::Length(n),
        (_, None) => Framing::Close,
    };
    let keep_alive = !close && (version == 1 || keep_alive) && framing != Framing::Close;
    Ok(Some((
        len,
        Head {
            status,
            framing,
            keep_alive,
        },
    )))
}

/// Whether `window` holds the end of a head: an empty line after a line end.
fn ends_head(window: &[u8]) -> bool {
    window.windows(2).any(|w| w == b"\n\n") || window.windows(3).any(|w| w == b"\n\r\n")
}

/// Where a chunked body's decoder is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ChunkState {
    /// Before a chunk-size line.
    Size,
    /// In a chunk's data, this much of it left.
    Data(u64),
    /// After a chunk's data: its CRLF.
    DataEnd,
    /// After the last (zero-size) chunk: trailer lines, then an empty line.
    Trailers,
    /// Past the body's end.
    Done,
}

/// What [`Chunked::decode`] got to.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Decoded {
    /// It needs more bytes.
    More,
    /// The body (and its trailers) ended.
    Done,
    /// The body is larger than the limit: the output holds its first `limit`
    /// bytes (when a prefix is kept) or less.
    Over,
}

/// The chunked transfer coding's decoder (RFC 9112 §7.1), with no I/O.
#[derive(Debug)]
pub(crate) struct Chunked {
    state: ChunkState,
    trailer_bytes: usize,
    limit: usize,
    keep_prefix: bool,
}

impl Chunked {
    /// A decoder of a body of at most `limit` bytes; over it, `keep_prefix`
    /// says whether its first `limit` bytes are still wanted.
    pub(crate) fn new(limit: usize, keep_prefix: bool) -> Self {
        Chunked {
            state: ChunkState::Size,
            trailer_bytes: 0,
            limit,
            keep_prefix,
        }
    }

    /// Decodes what it can of `buf` (consuming it) into `out`.
    ///
    /// # Errors
    /// [`Error::InvalidResponse`] on a malformed chunk-size line, a chunk not
    /// followed by CRLF, or a chunk-size line or trailers over their bounds.
    pub(crate) fn decode(
        &mut self,
        buf: &mut BytesMut,
        out: &mut BytesMut,
    ) -> Result<Decoded, Error> {
        loop {
            match self.state {
                ChunkState::Size => match httparse::parse_chunk_size(buf) {
                    // `parse_chunk_size` takes a line without digits for 0.
                    Ok(httparse::Status::Complete((n, size)))
                        if buf.first().is_some_and(u8::is_ascii_hexdigit) =>
                    {
                        buf.advance(n);
                        if size == 0 {
                            self.state = ChunkState::Trailers;
                        } else if (out.len() as u64).saturating_add(size) > self.limit as u64
                            && !self.keep_prefix
                        {
                            return Ok(Decoded::Over);
                        } else {
                            self.state = ChunkState::Data(size);
                        }
                    }
                    Ok(httparse::Status::Partial) if buf.len() <= MAX_CHUNK_LINE_BYTES => {
                        return Ok(Decoded::More);
                    }
                    Ok(httparse::Status::Partial) => {
                        return Err(invalid(format!(
                            "a chunk-size line longer than {MAX_CHUNK_LINE_BYTES} bytes"
                        )));
                    }
                    _ => {
                        let line = &buf[..buf.len().min(32)];
                        return Err(invalid(format!(
                            "a malformed chunk size {:?}",
                            String::from_utf8_lossy(line)
                        )));
                    }
                },
                ChunkState::Data(left) => {
                    if buf.is_empty() {
                        return Ok(Decoded::More);
                    }
                    // Bounded by `buf.len()`: fits a usize.
                    let take = left.min(buf.len() as u64) as usize;
                    let room = self.limit - out.len();
                    if take > room {
                        out.extend_from_slice(&buf[..room]);
                        return Ok(Decoded::Over);
                    }
                    out.extend_from_slice(&buf[..take]);
                    buf.advance(take);
                    self.state = match left - take as u64 {
                        0 => ChunkState::DataEnd,
                        left => ChunkState::Data(left),
                    };
                }
                ChunkState::DataEnd => match buf.get(..2) {
                    None if buf.first().is_none_or(|&b| b == b'\r') => return Ok(Decoded::More),
                    Some([b'\r', b'\n']) => {
                        buf.advance(2);
                        self.state = ChunkState::Size;
                    }
                    _ => return Err(invalid("a chunk's data is not followed by CRLF")),
                },
                ChunkState::Trailers => {
                    let Some(end) = buf.iter().position(|&b| b == b'\n') else {
                        if self.trailer_bytes + buf.len() > MAX_TRAILER_BYTES {
                            return Err(invalid(format!(
                                "trailers larger than {MAX_TRAILER_BYTES} bytes"
                            )));
                        }
                        return Ok(Decoded::More);
                    };
                    if end == 0 || buf[end - 1] != b'\r' {
                        return Err(invalid("a trailer line not ended by CRLF"));
                    }
                    self.trailer_bytes += end + 1;
                    if self.trailer_bytes > MAX_TRAILER_BYTES {
                        return Err(invalid(format!(
                            "trailers larger than {MAX_TRAILER_BYTES} bytes"
                        )));
                    }
                    buf.advance(end + 1);
                    // The empty line ends them (and the body).
                    if end == 1 {
                        self.state = ChunkState::Done;
                    }
                }
                ChunkState::Done => return Ok(Decoded::Done),
            }
        }
    }
}

/// An answer read from a connection.
#[derive(Debug)]
pub(crate) struct Answer {
    /// Its status (never 1xx).
    pub(crate) status: u16,
    /// Its body: the whole of a 200's; at most [`ERROR_BODY_BYTES`] of
    /// another status's.
    pub(crate) body: Bytes,
    /// Whether the connection may carry the next request: the answer was read
    /// to its end, nothing came after it, and the server keeps it alive.
    pub(crate) reusable: bool,
}

/// Why no answer could be read.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The connection was closed (end of stream, reset) before any byte of
    /// the answer arrived, or the request could not be written whole: on a
    /// reused connection, the server closed it while it was idle.
    Unanswered(Error),
    /// Anything else.
    Failed(Error),
}

impl Failure {
    /// The error to report.
    pub(crate) fn into_error(self) -> Error {
        match self {
            Failure::Unanswered(e) | Failure::Failed(e) => e,
        }
    }
}

fn ended_early() -> Failure {
    Failure::Failed(Error::Transport(
        "the connection closed before the end of the answer".into(),
    ))
}

fn read_error(e: &io::Error) -> Failure {
    Failure::Failed(Error::Transport(format!("reading the answer: {e}")))
}

/// Reads more of the answer into `buf` (growing it if it has little room);
/// 0 at the end of the stream.
async fn read_some<S: AsyncRead + Unpin>(io: &mut S, buf: &mut BytesMut) -> io::Result<usize> {
    if buf.capacity() - buf.len() < READ_BYTES / 8 {
        buf.reserve(READ_BYTES);
    }
    io.read_buf(buf).await
}

/// A body as read: whole, or cut at a limit (the connection is then not
/// reusable).
enum Body {
    Whole(Bytes),
    Cut(Bytes),
}

/// Reads one answer from `io`: the bytes already in `buf` first, then more
/// into it. A 200's body may be at most `max_body` bytes; of another status's
/// body the first [`ERROR_BODY_BYTES`] are kept and the rest read only when
/// it ends within them. What is left in `buf` is what came after the answer.
///
/// # Errors
/// [`Failure::Unanswered`] when the stream ends (or is reset) before any byte
/// of the answer; else [`Error::Transport`] when it breaks or ends before the
/// answer does, [`Error::InvalidResponse`] on a malformed answer, a head over
/// [`MAX_HEAD_BYTES`], a `101 Switching Protocols`, or a 200's body over
/// `max_body` (`the response is larger than N bytes`).
pub(crate) async fn read_answer<S: AsyncRead + Unpin>(
    io: &mut S,
    buf: &mut BytesMut,
    max_body: usize,
) -> Result<Answer, Failure> {
    let mut received = !buf.is_empty();
    // How much of `buf` was seen not to hold a whole head (0: parse it anyway).
    let mut seen: usize = 0;
    let head = loop {
        let parsed = if seen == 0 || ends_head(&buf[seen.saturating_sub(3)..]) {
            parse_head(buf).map_err(Failure::Failed)?
        } else {
            None
        };
        match parsed {
            Some((len, head)) => {
                buf.advance(len);
                seen = 0;
                match head.status {
                    101 => {
                        return Err(Failure::Failed(invalid(
                            "101 Switching Protocols in answer to a POST",
                        )));
                    }
                    // Interim (100 Continue, 103 Early Hints): the answer follows.
                    100..=199 => continue,
                    _ => break head,
                }
            }
            None if buf.len() > MAX_HEAD_BYTES => {
                return Err(Failure::Failed(invalid(format!(
                    "the response head is larger than {MAX_HEAD_BYTES} bytes"
                ))));
            }
            None => {
                seen = buf.len();
                match read_some(io, buf).await {
                    Ok(0) if !received => {
                        return Err(Failure::Unanswered(Error::Transport(
                            "the server closed the connection without answering".into(),
                        )));
                    }
                    // A last look: a malformed head says more than its end.
                    Ok(0) => {
                        return Err(parse_head(buf)
                            .err()
                            .map_or_else(ended_early, Failure::Failed));
                    }
                    Ok(_) => received = true,
                    Err(e) if !received && is_closed(&e) => {
                        return Err(Failure::Unanswered(Error::Transport(format!(
                            "the server closed the connection without answering: {e}"
                        ))));
                    }
                    Err(e) => return Err(read_error(&e)),
                }
            }
        }
    };
    let (limit, keep_prefix) = match head.status {
        200 => (max_body, false),
        _ => (ERROR_BODY_BYTES, true),
    };
    let body = match head.framing {
        Framing::Empty => Body::Whole(Bytes::new()),
        Framing::Length(n) => read_length(io, buf, n, limit, keep_prefix).await?,
        Framing::Chunked => read_chunked(io, buf, limit, keep_prefix).await?,
        Framing::Close => read_to_end(io, buf, limit, keep_prefix).await?,
    };
    let (body, whole) = match body {
        Body::Whole(b) => (b, true),
        Body::Cut(_) if !keep_prefix => {
            return Err(Failure::Failed(invalid(format!(
                "the response is larger than {max_body} bytes"
            ))));
        }
        Body::Cut(b) => (b, false),
    };
    Ok(Answer {
        status: head.status,
        body,
        reusable: whole && head.keep_alive && buf.is_empty(),
    })
}

/// Whether a read error means the peer closed the connection.
fn is_closed(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::UnexpectedEof
    )
}

/// A body of `n` bytes, of which at most `limit` are read (none if
/// `!keep_prefix`).
async fn read_length<S: AsyncRead + Unpin>(
    io: &mut S,
    buf: &mut BytesMut,
    n: u64,
    limit: usize,
    keep_prefix: bool,
) -> Result<Body, Failure> {
    if n > limit as u64 && !keep_prefix {
        return Ok(Body::Cut(Bytes::new()));
    }
    // At most `limit`: fits a usize.
    let want = n.min(limit as u64) as usize;
    if buf.len() < want && want > SMALL_BODY_BYTES {
        // A buffer of its own, filled to the body's end and no further.
        let mut body = BytesMut::with_capacity(want);
        body.extend_from_slice(buf);
        buf.clear();
        while body.len() < want {
            let room = want - body.len();
            match io.read_buf(&mut (&mut body).limit(room)).await {
                Ok(0) => return Err(ended_early()),
                Ok(_) => {}
                Err(e) => return Err(read_error(&e)),
            }
        }
        return Ok(finish(body.freeze(), want as u64 == n));
    }
    if buf.len() < want {
        buf.reserve(want - buf.len());
    }
    while buf.len() < want {
        match read_some(io, buf).await {
            Ok(0) => return Err(ended_early()),
            Ok(_) => {}
            Err(e) => return Err(read_error(&e)),
        }
    }
    // Split off the connection's buffer: no copy.
    Ok(finish(buf.split_to(want).freeze(), want as u64 == n))
}

fn finish(body: Bytes, whole: bool) -> Body {
    if whole {
        Body::Whole(body)
    } else {
        Body::Cut(body)
    }
}

/// A chunked body.
async fn read_chunked<S: AsyncRead + Unpin>(
    io: &mut S,
    buf: &mut BytesMut,
    limit: usize,
    keep_prefix: bool,
) -> Result<Body, Failure> {
    let mut decoder = Chunked::new(limit, keep_prefix);
    let mut body = BytesMut::new();
    loop {
        match decoder.decode(buf, &mut body).map_err(Failure::Failed)? {
            Decoded::Done => return Ok(Body::Whole(body.freeze())),
            Decoded::Over => return Ok(Body::Cut(body.freeze())),
            Decoded::More => match read_some(io, buf).await {
                Ok(0) => return Err(ended_early()),
                Ok(_) => {}
                Err(e) => return Err(read_error(&e)),
            },
        }
    }
}

/// A body that ends with the connection.
async fn read_to_end<S: AsyncRead + Unpin>(
    io: &mut S,
    buf: &mut BytesMut,
    limit: usize,
    keep_prefix: bool,
) -> Result<Body, Failure> {
    loop {
        if buf.len() > limit {
            if !keep_prefix {
                return Ok(Body::Cut(Bytes::new()));
            }
            return Ok(Body::Cut(buf.split_to(limit).freeze()));
        }
        match read_some(io, buf).await {
            Ok(0) => return Ok(Body::Whole(buf.split().freeze())),
            Ok(_) => {}
            Err(e) => return Err(read_error(&e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use tokio::io::ReadBuf;

    use super::*;

    fn head(s: &str) -> Result<Option<(usize, Head)>, Error> {
        parse_head(s.as_bytes())
    }

    /// The head `s` says, which must be complete and valid.
    fn says(s: &str) -> Head {
        let (len, h) = head(s).unwrap().unwrap();
        assert_eq!(len, s.len(), "{s:?}");
        h
    }

    /// The `InvalidResponse` message of the head `s`.
    fn refused(s: &str) -> String {
        match head(s) {
            Err(Error::InvalidResponse(why)) => why,
            other => panic!("{s:?}: {other:?}"),
        }
    }

    #[test]
    fn heads_say_status_framing_and_keep_alive() {
        let h = says("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n");
        assert_eq!(
            (h.status, h.framing, h.keep_alive),
            (200, Framing::Length(12), true)
        );
        // Bare LF line ends, no reason phrase, names and values in any case.
        let h = says("HTTP/1.1 200\nTRANSFER-ENCODING: Chunked\n\n");
        assert_eq!((h.framing, h.keep_alive), (Framing::Chunked, true));
        // Neither length nor chunked: until the connection ends, never reused.
        let h = says("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n");
        assert_eq!((h.framing, h.keep_alive), (Framing::Close, false));
        // No body, whatever Content-Length says (304: the representation's).
        for s in [
            "HTTP/1.1 100 Continue\r\n\r\n",
            "HTTP/1.1 204 No Content\r\n\r\n",
            "HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n",
        ] {
            let h = says(s);
            assert_eq!((h.framing, h.keep_alive), (Framing::Empty, true), "{s:?}");
        }
        // Connection: close, among other options.
        let h = says("HTTP/1.1 200 OK\r\nConnection: Upgrade, CLOSE\r\nContent-Length: 2\r\n\r\n");
        assert!(!h.keep_alive);
        // HTTP/1.0: kept alive only when it says so.
        assert!(!says("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n").keep_alive);
        let h = says("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n");
        assert!(h.keep_alive);
        let h = says("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\n");
        assert_eq!((h.framing, h.keep_alive), (Framing::Close, false));
        // The same length twice, in one header or two.
        let h = says("HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\nContent-Length: 5\r\n\r\n");
        assert_eq!(h.framing, Framing::Length(5));
        // Lines before the status line are skipped (RFC 9112 §2.2).
        assert_eq!(
            says("\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n").status,
            200
        );
    }

    #[test]
    fn incomplete_heads_ask_for_more() {
        let whole = "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n";
        for end in 0..whole.len() {
            assert!(
                head(&whole[..end]).unwrap().is_none(),
                "{:?}",
                &whole[..end]
            );
        }
        // What follows the head is not part of it.
        let (len, _) = head("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
            .unwrap()
            .unwrap();
        assert_eq!(len, 38);
    }

    #[test]
    fn malformed_heads_are_refused() {
        for cl in [
            "12a",
            "+5",
            "-1",
            "",
            " ",
            "0x10",
            "1 2",
            "99999999999999999999",
            "5,",
        ] {
            let s = format!("HTTP/1.1 200 OK\r\nContent-Length: {cl}\r\n\r\n");
            let why = refused(&s);
            assert!(why.contains("Content-Length"), "{cl:?}: {why}");
        }
        let two = "two different Content-Length values";
        assert_eq!(
            refused("HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n"),
            two
        );
        assert_eq!(
            refused("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n"),
            two
        );
        assert_eq!(
            refused("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n"),
            "both Transfer-Encoding and Content-Length"
        );
        assert_eq!(
            refused("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"),
            "Transfer-Encoding in an HTTP/1.0 answer"
        );
        for te in ["gzip", "gzip, chunked", "chunked, chunked", "chunked, gzip"] {
            let why = refused(&format!(
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: {te}\r\n\r\n"
            ));
            assert!(why.contains("only chunked"), "{te}: {why}");
        }
        assert_eq!(
            refused("HTTP/1.1 200 OK\r\nTransfer-Encoding:\r\n\r\n"),
            "an empty Transfer-Encoding"
        );
        for s in [
            "HTTP/2 200 OK\r\n\r\n",
            "SSH-2.0-OpenSSH\r\n\r\n",
            "HTTP/1.1 2000 OK\r\n\r\n",
        ] {
            assert!(refused(s).starts_with("the response head"), "{s:?}");
        }
        let many: String = (0..=MAX_HEADERS).map(|i| format!("X-{i}: y\r\n")).collect();
        let why = refused(&format!("HTTP/1.1 200 OK\r\n{many}\r\n"));
        assert!(why.contains("too many headers"), "{why}");
    }

    /// Decodes `wire` fed `step` bytes at a time: what it got to and the body.
    fn dechunk(
        wire: &[u8],
        step: usize,
        limit: usize,
        keep_prefix: bool,
    ) -> (Result<Decoded, Error>, Vec<u8>, BytesMut) {
        let mut decoder = Chunked::new(limit, keep_prefix);
        let mut buf = BytesMut::new();
        let mut out = BytesMut::new();
        let mut fed = 0;
        loop {
            let got = decoder.decode(&mut buf, &mut out);
            match got {
                Ok(Decoded::More) if fed < wire.len() => {
                    let end = (fed + step).min(wire.len());
                    buf.extend_from_slice(&wire[fed..end]);
                    fed = end;
                }
                _ => {
                    // What was fed and not consumed, then what was never fed.
                    buf.extend_from_slice(&wire[fed..]);
                    return (got, out.to_vec(), buf);
                }
            }
        }
    }

    const CHUNKED: &[u8] =
        b"5\r\nhello\r\n1;name=value;other\r\n \r\na; ext=\"q;uoted\"\r\nchunked!!!\r\n\
        000\r\nExpires: never\r\nX-Trailer: 1\r\n\r\nNEXT";

    #[test]
    fn chunks_with_extensions_and_trailers_fed_in_any_pieces() {
        for step in [1, 2, 3, 7, CHUNKED.len()] {
            let (got, body, rest) = dechunk(CHUNKED, step, 1000, false);
            assert_eq!(got.unwrap(), Decoded::Done, "step {step}");
            assert_eq!(body, b"hello chunked!!!", "step {step}");
            // It stops at the body's end.
            assert_eq!(&rest[..], b"NEXT", "step {step}");
        }
        // No trailers; upper-case hex.
        let (got, body, _) = dechunk(b"A\r\n0123456789\r\n0\r\n\r\n", 1, 1000, false);
        assert_eq!(
            (got.unwrap(), &body[..]),
            (Decoded::Done, &b"0123456789"[..])
        );
        // An empty body.
        let (got, body, _) = dechunk(b"0\r\n\r\n", 1, 1000, false);
        assert_eq!((got.unwrap(), body.len()), (Decoded::Done, 0));
    }

    #[test]
    fn chunked_bodies_over_the_limit() {
        // Refused at the chunk size that passes the limit, before its data.
        let (got, body, rest) = dechunk(b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", 1, 10, false);
        assert_eq!(got.unwrap(), Decoded::Over);
        assert_eq!(body, b"hello");
        assert!(rest.starts_with(b" world"), "{rest:?}");
        // Exactly at the limit is fine.
        let (got, body, _) = dechunk(b"5\r\nhello\r\n5\r\n worl\r\n0\r\n\r\n", 1, 10, false);
        assert_eq!(
            (got.unwrap(), &body[..]),
            (Decoded::Done, &b"hello worl"[..])
        );
        // Keeping a prefix: the first `limit` bytes.
        for step in [1, 100] {
            let (got, body, _) = dechunk(b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", step, 8, true);
            assert_eq!((got.unwrap(), &body[..]), (Decoded::Over, &b"hello wo"[..]));
        }
        // A size too large for any body.
        let (got, _, _) = dechunk(b"ffffffffffffffff\r\n", 1, 10, false);
        assert_eq!(got.unwrap(), Decoded::Over);
    }

    #[test]
    fn malformed_chunks_are_refused() {
        let cases: [(&[u8], &str); 7] = [
            (b"zz\r\n", "malformed chunk size"),
            (b"\r\nhello\r\n", "malformed chunk size"),
            (b" 5\r\nhello\r\n", "malformed chunk size"),
            (b"5\nhello\r\n", "malformed chunk size"),
            (b"5\r\nhelloXY0\r\n\r\n", "not followed by CRLF"),
            (b"5\r\nhello\n0\r\n\r\n", "not followed by CRLF"),
            (b"0\r\nExpires: never\n\r\n", "not ended by CRLF"),
        ];
        for (wire, expected) in cases {
            for step in [1, wire.len()] {
                match dechunk(wire, step, 1000, false).0 {
                    Err(Error::InvalidResponse(why)) => {
                        assert!(why.contains(expected), "{wire:?}: {why}")
                    }
                    other => panic!("{wire:?}: {other:?}"),
                }
            }
        }
        let long_line = [b"5;".as_slice(), &[b'x'; MAX_CHUNK_LINE_BYTES]].concat();
        match dechunk(&long_line, 1000, 1000, false).0 {
            Err(Error::InvalidResponse(why)) => {
                assert!(why.contains("chunk-size line longer"), "{why}")
            }
            other => panic!("{other:?}"),
        }
        let trailer = format!("X: {}\r\n", "y".repeat(1000));
        let trailers = format!(
            "0\r\n{}\r\n",
            trailer.repeat(MAX_TRAILER_BYTES / trailer.len() + 1)
        );
        for step in [1000, trailers.len()] {
            match dechunk(trailers.as_bytes(), step, 1000, false).0 {
                Err(Error::InvalidResponse(why)) => {
                    assert!(why.contains("trailers larger"), "{why}")
                }
                other => panic!("{other:?}"),
            }
        }
    }

    /// A stream that yields the given reads, one at a time (each cut to the
    /// reader's buffer), then its end.
    struct Reads(VecDeque<Result<Vec<u8>, io::ErrorKind>>);

    impl Reads {
        fn of(pieces: &[&[u8]]) -> Self {
            Reads(pieces.iter().map(|p| Ok(p.to_vec())).collect())
        }

        /// One byte per read.
        fn bytewise(wire: &[u8]) -> Self {
            Reads(wire.iter().map(|&b| Ok(vec![b])).collect())
        }
    }

    impl AsyncRead for Reads {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            match self.0.pop_front() {
                None => Poll::Ready(Ok(())),
                Some(Err(kind)) => Poll::Ready(Err(kind.into())),
                Some(Ok(piece)) => {
                    let n = piece.len().min(buf.remaining());
                    buf.put_slice(&piece[..n]);
                    if n < piece.len() {
                        self.0.push_front(Ok(piece[n..].to_vec()));
                    }
                    Poll::Ready(Ok(()))
                }
            }
        }
    }

    async fn answer(mut reads: Reads, max_body: usize) -> Result<Answer, Failure> {
        read_answer(&mut reads, &mut BytesMut::new(), max_body).await
    }

    fn failed(r: Result<Answer, Failure>) -> Error {
        match r {
            Err(Failure::Failed(e)) => e,
            other => panic!("expected a failure, got {other:?}"),
        }
    }

    const ANSWER: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";

    #[tokio::test]
    async fn answers_in_one_read_or_byte_by_byte() {
        for reads in [Reads::of(&[ANSWER]), Reads::bytewise(ANSWER)] {
            let a = answer(reads, 100).await.unwrap();
            assert_eq!(
                (a.status, &a.body[..], a.reusable),
                (200, &b"hello"[..], true)
            );
        }
        let chunked = [
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".as_slice(),
            CHUNKED,
        ]
        .concat();
        let chunked = &chunked[..chunked.len() - b"NEXT".len()];
        for reads in [Reads::of(&[chunked]), Reads::bytewise(chunked)] {
            let a = answer(reads, 100).await.unwrap();
            assert_eq!((&a.body[..], a.reusable), (&b"hello chunked!!!"[..], true));
        }
        // Interim answers are skipped, however they arrive.
        let interim = [
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
                .as_slice(),
            ANSWER,
        ]
        .concat();
        for reads in [Reads::of(&[&interim]), Reads::bytewise(&interim)] {
            let a = answer(reads, 100).await.unwrap();
            assert_eq!(
                (a.status, &a.body[..], a.reusable),
                (200, &b"hello"[..], true)
            );
        }
        // A body larger than the read buffer's growth, in odd pieces.
        let big: Vec<u8> = (0..100_000u32).map(|i| b'a' + (i % 26) as u8).collect();
        let wire = [
            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", big.len()).as_bytes(),
            &big,
        ]
        .concat();
        let pieces: Vec<&[u8]> = wire.chunks(999).collect();
        let mut buf = BytesMut::new();
        let a = read_answer(&mut Reads::of(&pieces), &mut buf, big.len())
            .await
            .unwrap();
        assert_eq!((&a.body[..] == big.as_slice(), a.reusable), (true, true));
        // Read into a buffer of its own: the connection's stays small.
        assert!(buf.capacity() < SMALL_BODY_BYTES, "{}", buf.capacity());
    }

    #[tokio::test]
    async fn when_the_connection_is_not_reusable() {
        // The server closes it.
        let wire = b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}";
        assert!(!answer(Reads::of(&[wire]), 100).await.unwrap().reusable);
        // HTTP/1.0 without keep-alive.
        let wire = b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}";
        assert!(!answer(Reads::of(&[wire]), 100).await.unwrap().reusable);
        // Bytes after the answer: nothing was asked for them.
        let wire = [ANSWER, b"HTTP/1.1 200 OK\r\n"].concat();
        let a = answer(Reads::of(&[&wire]), 100).await.unwrap();
        assert_eq!((&a.body[..], a.reusable), (&b"hello"[..], false));
        // The body ends with the connection.
        let wire = b"HTTP/1.1 200 OK\r\n\r\n{\"a\":";
        let a = answer(Reads::of(&[wire, b"1}"]), 100).await.unwrap();
        assert_eq!((&a.body[..], a.reusable), (&b"{\"a\":1}"[..], false));
    }

    #[tokio::test]
    async fn bodies_over_the_limit() {
        let over = "the response is larger than 4 bytes";
        let e = failed(answer(Reads::of(&[ANSWER]), 4).await);
        assert!(matches!(&e, Error::InvalidResponse(w) if w == over), "{e}");
        let wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        let e = failed(answer(Reads::bytewise(wire), 4).await);
        assert!(matches!(&e, Error::InvalidResponse(w) if w == over), "{e}");
        let wire = b"HTTP/1.1 200 OK\r\n\r\nhello";
        let e = failed(answer(Reads::bytewise(wire), 4).await);
        assert!(matches!(&e, Error::InvalidResponse(w) if w == over), "{e}");
        // At the limit.
        let a = answer(Reads::of(&[ANSWER]), 5).await.unwrap();
        assert_eq!(&a.body[..], b"hello");
    }

    #[tokio::test]
    async fn error_statuses_keep_the_start_of_their_body() {
        let wire = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\nbusy";
        let a = answer(Reads::of(&[wire]), 100).await.unwrap();
        assert_eq!(
            (a.status, &a.body[..], a.reusable),
            (503, &b"busy"[..], true)
        );
        // Larger than what is kept: its start; the rest is not read.
        let long = "x".repeat(5000);
        for wire in [
            format!("HTTP/1.1 500 Oops\r\nContent-Length: 5000\r\n\r\n{long}"),
            format!(
                "HTTP/1.1 500 Oops\r\nTransfer-Encoding: chunked\r\n\r\n1388\r\n{long}\r\n0\r\n\r\n"
            ),
            format!("HTTP/1.1 500 Oops\r\n\r\n{long}"),
        ] {
            // Even when the limit for 200s is lower.
            let a = answer(Reads::of(&[wire.as_bytes()]), 10).await.unwrap();
            assert_eq!(
                (a.status, a.body.len(), a.reusable),
                (500, ERROR_BODY_BYTES, false),
                "{wire:.60}"
            );
        }
    }

    #[tokio::test]
    async fn answers_that_end_early_or_never_start() {
        // Nothing at all: the end, or a reset.
        assert!(matches!(
            answer(Reads::of(&[]), 100).await,
            Err(Failure::Unanswered(_))
        ));
        let reset = Reads(VecDeque::from([Err(io::ErrorKind::ConnectionReset)]));
        assert!(matches!(
            answer(reset, 100).await,
            Err(Failure::Unanswered(_))
        ));
        // Another error is not a close.
        let other = Reads(VecDeque::from([Err(io::ErrorKind::PermissionDenied)]));
        assert!(matches!(
            failed(answer(other, 100).await),
            Error::Transport(_)
        ));
        // Cut anywhere after its first byte: a transport error.
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n";
        for wire in [ANSWER, chunked.as_slice()] {
            for end in 1..wire.len() {
                let e = failed(answer(Reads::of(&[&wire[..end]]), 100).await);
                assert!(
                    matches!(&e, Error::Transport(w) if w.contains("before the end of the answer")),
                    "{:?}: {e}",
                    String::from_utf8_lossy(&wire[..end])
                );
            }
        }
        // A reset after the first byte.
        let reads = Reads(VecDeque::from([
            Ok(b"HTTP/1.1 2".to_vec()),
            Err(io::ErrorKind::ConnectionReset),
        ]));
        assert!(matches!(
            failed(answer(reads, 100).await),
            Error::Transport(_)
        ));
        // A garbled head says so, even when the connection then ends.
        let e = failed(answer(Reads::bytewise(b"HTTP/1.1 200 OK\r\nBad Header\r\n"), 100).await);
        assert!(
            matches!(&e, Error::InvalidResponse(w) if w.starts_with("the response head")),
            "{e}"
        );
    }

    #[tokio::test]
    async fn heads_larger_than_64_kib_and_switching_protocols_are_refused() {
        let header = format!("X-Filler: {}\r\n", "y".repeat(1000));
        let wire = format!("HTTP/1.1 200 OK\r\n{}", header.repeat(70));
        let e = failed(answer(Reads::of(&[wire.as_bytes()]), 100).await);
        assert!(
            matches!(&e, Error::InvalidResponse(w) if w.contains("head is larger than 65536")),
            "{e}"
        );
        // The same, in many reads (the end of the head is looked for in each).
        let pieces: Vec<&[u8]> = wire.as_bytes().chunks(100).collect();
        let e = failed(answer(Reads::of(&pieces), 100).await);
        assert!(
            matches!(&e, Error::InvalidResponse(w) if w.contains("head is larger than 65536")),
            "{e}"
        );
        let wire = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n";
        let e = failed(answer(Reads::of(&[wire]), 100).await);
        assert!(
            matches!(&e, Error::InvalidResponse(w) if w.contains("101")),
            "{e}"
        );
    }

    #[test]
    fn the_end_of_a_head_is_found() {
        assert!(ends_head(b"a\r\n\r\n"));
        assert!(ends_head(b"\n\n"));
        assert!(ends_head(b"\n\r\n"));
        assert!(!ends_head(b"a\r\nb\r\n"));
        assert!(!ends_head(b"\r\n\r"));
    }
}
