//! JSON-RPC over any reader and writer, framed by [`switchboard::framing`]:
//! newline-delimited (MCP's stdio transport: one message per line, blank lines skipped,
//! each response on its own line) or `Content-Length` headers (the Language Server
//! Protocol's base protocol: each response framed the same way).

use std::io::{self, BufRead, Write};

use switchboard::framing::{ContentLength, FramingError, Ndjson, Status};
use switchboard::{Error, Id, Reason, Session, envelope};

/// How messages are delimited on the stream. Parsed from `ndjson`, `lsp` or
/// `content-length` (what `switchboard serve --stdio --framing` takes).
///
/// ```
/// use switchboard_server::stdio::Framing;
/// assert_eq!("lsp".parse::<Framing>(), Ok(Framing::Lsp));
/// assert_eq!("content-length".parse::<Framing>(), Ok(Framing::Lsp));
/// assert_eq!(Framing::default(), Framing::Ndjson);
/// assert!("xml".parse::<Framing>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Framing {
    /// One message per line.
    #[default]
    Ndjson,
    /// `Content-Length: N` headers, an empty line, `N` bytes of body.
    Lsp,
}

impl std::str::FromStr for Framing {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "ndjson" => Ok(Framing::Ndjson),
            "lsp" | "content-length" => Ok(Framing::Lsp),
            other => Err(format!("unknown framing {other:?} (ndjson or lsp)")),
        }
    }
}

/// The response SPEC.md prescribes for a message over `max_message_bytes` on a
/// stream: -32600 with `data` saying the limit (the same bytes the core writes when
/// it is handed such a message whole), written into `out`.
pub(crate) fn write_too_large(out: &mut Vec<u8>, limit: usize) {
    let error = Error::new(Reason::TooLarge, Id::NULL).with_limit(limit);
    envelope::core_error_response(out, &error);
}

/// The response to a stream that cannot be framed (a malformed or missing
/// `Content-Length`, a header section too large), written into `out` before the
/// stream is ended: -32700 with `data` saying why, so the peer sees more than a
/// closed pipe.
pub(crate) fn write_framing_error(out: &mut Vec<u8>, error: FramingError) {
    let mut data = Vec::with_capacity(48);
    data.extend_from_slice(br#"{"reason":""#);
    data.extend_from_slice(error.as_str().as_bytes()); // static ASCII, nothing to escape
    data.extend_from_slice(br#""}"#);
    envelope::error_response(out, -32700, "Parse error", Some(&data), b"null");
}

/// Grows `buf` (a stream's read buffer) for `additional` more bytes. Past 64 KiB it
/// reserves at once all that a message may take (`limit` plus one read): address
/// space only, the pages become memory as bytes arrive, and no later growth copies
/// the buffer. A message over the limit is refused once `limit` is passed, so its
/// bytes never take more than that; growing by doubling would hold twice the limit
/// at the moment of a copy.
pub(crate) fn reserve_within(buf: &mut Vec<u8>, additional: usize, limit: usize) {
    let need = buf.len().saturating_add(additional);
    if need <= buf.capacity() {
        return;
    }
    let target = if need <= 64 << 10 {
        need.max(buf.capacity().saturating_mul(2)).min(64 << 10)
    } else {
        limit.saturating_add(additional).saturating_add(2).max(need)
    };
    buf.reserve_exact(target - buf.len());
}

/// Answers newline-delimited messages from `input` on `output` until EOF.
/// A line longer than the session's `max_message_bytes` is answered with the
/// -32600 size error without being buffered whole (memory stays bounded).
/// Returns the number of messages handled.
///
/// ```
/// let mut session = switchboard::Session::new(switchboard::Router::builder().typed("subtract", |(a, b): (i64, i64)| Ok(a - b)).build().unwrap());
/// let input = b"{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":[42,23],\"id\":1}\n\n{\"jsonrpc\":\"2.0\",\"method\":\"update\"}\n";
/// let mut out = Vec::new();
/// let n = switchboard_server::stdio::serve_ndjson(&mut session, &input[..], &mut out).unwrap();
/// assert_eq!(n, 2);
/// assert_eq!(out, b"{\"jsonrpc\":\"2.0\",\"result\":19,\"id\":1}\n");
/// ```
pub fn serve_ndjson<R: BufRead, W: Write>(
    session: &mut Session,
    input: R,
    output: W,
) -> io::Result<u64> {
    serve(session, Framing::Ndjson, input, output)
}

/// Answers `Content-Length`-framed messages from `input` on `output` until EOF, each
/// response framed the same way (`Content-Length: N\r\n\r\n` then the body).
/// Returns the number of messages handled.
///
/// # Errors
/// I/O errors, and `InvalidData` for a header section that cannot be framed (the
/// stream cannot be resynchronised after it) or a stream that ends inside a message.
///
/// ```
/// let mut session = switchboard::Session::new(switchboard::Router::builder().typed("subtract", |(a, b): (i64, i64)| Ok(a - b)).build().unwrap());
/// let input = b"content-length: 61\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":[42,23],\"id\":1}";
/// let mut out = Vec::new();
/// switchboard_server::stdio::serve_lsp(&mut session, &input[..], &mut out).unwrap();
/// assert_eq!(out, b"Content-Length: 36\r\n\r\n{\"jsonrpc\":\"2.0\",\"result\":19,\"id\":1}");
/// ```
pub fn serve_lsp<R: BufRead, W: Write>(
    session: &mut Session,
    input: R,
    output: W,
) -> io::Result<u64> {
    serve(session, Framing::Lsp, input, output)
}

/// Either framing's decoder, and its encoder: the one framer of this crate's
/// stream transports (this blocking one and [`crate::duplex`]).
pub(crate) enum Framer {
    Ndjson(Ndjson),
    Lsp(ContentLength),
}

/// What is left in the buffer at the end of the stream.
pub(crate) enum Last {
    /// Nothing (or blank lines).
    Nothing,
    /// A last NDJSON line without its newline: `buf[range]`.
    Message(std::ops::Range<usize>),
    /// A last line over the limit.
    TooLarge(usize),
}

impl Framer {
    pub(crate) fn new(framing: Framing, limit: usize) -> Self {
        match framing {
            Framing::Ndjson => Framer::Ndjson(Ndjson::new(limit)),
            Framing::Lsp => Framer::Lsp(ContentLength::new(limit)),
        }
    }

    pub(crate) fn decode(&mut self, buf: &[u8]) -> Result<Status, FramingError> {
        match self {
            Framer::Ndjson(f) => f.decode(buf),
            Framer::Lsp(f) => f.decode(buf),
        }
    }

    /// The end of the stream with `buf` unconsumed: `UnexpectedEof` inside a
    /// `Content-Length` message, `InvalidData` for unframeable headers.
    pub(crate) fn finish(&mut self, buf: &[u8]) -> io::Result<Last> {
        match self {
            Framer::Ndjson(f) => match f.finish(buf) {
                Ok(Some(body)) => Ok(Last::Message(body)),
                Ok(None) => Ok(Last::Nothing),
                Err(FramingError::TooLarge { limit }) => Ok(Last::TooLarge(limit)),
                Err(e) => Err(io::Error::new(io::ErrorKind::InvalidData, e)),
            },
            Framer::Lsp(f) if f.is_idle() && buf.is_empty() => Ok(Last::Nothing),
            Framer::Lsp(_) => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the stream ended inside a message",
            )),
        }
    }
}

/// Appends `msg` framed by `framing` to `out`.
pub(crate) fn encode(framing: Framing, msg: &[u8], out: &mut Vec<u8>) {
    match framing {
        Framing::Ndjson => Ndjson::encode(msg, out),
        Framing::Lsp => ContentLength::encode(msg, out),
    }
}

/// Answers messages framed by `framing` from `input` on `output` until EOF.
/// Returns the number of messages handled (an over-long one counts).
///
/// ```
/// use switchboard::{Router, Session};
/// use switchboard_server::stdio::{Framing, serve};
///
/// let mut session = Session::new(Router::builder().typed("subtract", |(a, b): (i64, i64)| Ok(a - b)).build().unwrap());
/// let framing: Framing = "ndjson".parse().unwrap(); // from a flag, say
/// let input = b"{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":[42,23],\"id\":1}\n";
/// let mut out = Vec::new();
/// assert_eq!(serve(&mut session, framing, &input[..], &mut out).unwrap(), 1);
/// assert_eq!(out, b"{\"jsonrpc\":\"2.0\",\"result\":19,\"id\":1}\n");
/// ```
///
/// # Errors
/// See [`serve_lsp`]; newline framing fails on I/O errors only.
pub fn serve<R: BufRead, W: Write>(
    session: &mut Session,
    framing: Framing,
    mut input: R,
    mut output: W,
) -> io::Result<u64> {
    let limit = session.router().config().get_max_message_bytes();
    let mut framer = Framer::new(framing, limit);
    let mut scratch = Vec::new();
    let mut framed = Vec::new();
    let mut buf: Vec<u8> = Vec::new();
    let mut start = 0; // bytes at the front of `buf` already consumed
    let mut handled = 0u64;
    loop {
        // Frame everything the buffer holds.
        loop {
            match framer.decode(&buf[start..]) {
                Ok(Status::Partial) => break,
                Ok(Status::Frame { body, consumed }) => {
                    handled += 1;
                    let msg = &buf[start + body.start..start + body.end];
                    if let Some(resp) = session.handle(msg) {
                        write_framed(&mut output, framing, resp, &mut framed)?;
                    }
                    start += consumed;
                }
                Ok(Status::Skip { consumed }) => start += consumed,
                Err(FramingError::TooLarge { limit }) => {
                    handled += 1;
                    scratch.clear();
                    write_too_large(&mut scratch, limit);
                    write_framed(&mut output, framing, &scratch, &mut framed)?;
                }
                Err(e) => {
                    scratch.clear();
                    write_framing_error(&mut scratch, e);
                    write_framed(&mut output, framing, &scratch, &mut framed)?;
                    return Err(io::Error::new(io::ErrorKind::InvalidData, e));
                }
            }
        }
        if start == buf.len() {
            buf.clear();
            if buf.capacity() > 64 << 10 {
                buf.shrink_to(8 << 10); // a large message does not pin its memory
            }
            start = 0;
        } else if start > 0 {
            buf.drain(..start);
            start = 0;
        }
        let chunk = input.fill_buf()?;
        if chunk.is_empty() {
            break;
        }
        let n = chunk.len();
        reserve_within(
            &mut buf,
            n,
            limit.saturating_add(ContentLength::MAX_HEADER_BYTES),
        );
        buf.extend_from_slice(chunk);
        input.consume(n);
    }
    match framer.finish(&buf)? {
        Last::Message(body) => {
            handled += 1;
            if let Some(resp) = session.handle(&buf[body]) {
                write_framed(&mut output, framing, resp, &mut framed)?;
            }
        }
        Last::TooLarge(limit) => {
            handled += 1;
            scratch.clear();
            write_too_large(&mut scratch, limit);
            write_framed(&mut output, framing, &scratch, &mut framed)?;
        }
        Last::Nothing => {}
    }
    Ok(handled)
}

fn write_framed<W: Write>(
    output: &mut W,
    framing: Framing,
    resp: &[u8],
    framed: &mut Vec<u8>,
) -> io::Result<()> {
    framed.clear();
    encode(framing, resp, framed);
    output.write_all(framed)?;
    output.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use switchboard::{ParserConfig, Router};

    #[test]
    fn too_large_matches_the_core() {
        let mut c = ParserConfig::new();
        c.max_message_bytes(10);
        let mut s = Session::new(
            crate::demo::register(Router::builder(), Default::default())
                .config(c)
                .build()
                .unwrap(),
        );
        let core = s.handle(b"[          ]").unwrap().to_vec();
        let mut ours = Vec::new();
        write_too_large(&mut ours, 10);
        assert_eq!(String::from_utf8(ours), String::from_utf8(core));
    }

    #[test]
    fn a_framing_error_says_why() {
        let mut out = Vec::new();
        write_framing_error(&mut out, FramingError::BadHeader);
        assert_eq!(
            out,
            br#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error","data":{"reason":"malformed header"}},"id":null}"#
        );
    }

    #[test]
    fn a_read_buffer_grows_to_the_limit_and_one_read_only() {
        let (limit, read) = (1_000_000, 64 << 10);
        let mut buf = Vec::new();
        let mut max = 0;
        // An endless line, read by 64 KiB: refused once past the limit.
        while buf.len() <= limit + 1 {
            reserve_within(&mut buf, read, limit);
            buf.resize(buf.len() + read, b'x');
            max = max.max(buf.capacity());
        }
        assert!(max <= limit + 2 * read + 2, "{max}");
        // Past 64 KiB, one reservation: no copy of what has arrived.
        let mut grown = vec![0u8; 64 << 10];
        reserve_within(&mut grown, read, limit);
        let at = grown.as_ptr();
        grown.resize(limit, 0);
        reserve_within(&mut grown, 1, limit);
        assert_eq!(grown.as_ptr(), at);
        // Under the limit it still doubles (amortised), and always fits the read.
        let mut small = vec![0u8; 10];
        reserve_within(&mut small, 100, limit);
        assert!(small.capacity() >= 110);
        let mut big = vec![0u8; limit + read + 2];
        reserve_within(&mut big, 5 * read, limit);
        assert!(big.capacity() >= big.len() + 5 * read);
    }
}
