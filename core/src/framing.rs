//! Stream framing: where one message ends on a byte stream. No I/O, no copies.
//!
//! Two framings, as SPEC.md ("Framing on byte streams") lists them:
//! - [`Ndjson`]: one message per line (MCP's stdio transport); blank lines are skipped,
//!   a `\r` before the `\n` is dropped.
//! - [`ContentLength`]: `Content-Length: N` headers, an empty line, then `N` bytes of
//!   body (the Language Server Protocol's base protocol). Header names are compared
//!   case-insensitively; other headers (`Content-Type`, …) are tolerated and ignored.
//!
//! The caller owns the buffer. It appends what it reads and calls `decode` with the
//! whole unconsumed buffer; the framer answers:
//! - [`Status::Partial`]: more bytes are needed (not an error); keep the buffer, append,
//!   call again;
//! - [`Status::Frame`]: `buf[body]` is one message; drop `consumed` bytes from the
//!   front of the buffer before the next call;
//! - [`Status::Skip`]: drop `consumed` bytes (blank lines, or the rest of a message
//!   refused with [`FramingError::TooLarge`]).
//!
//! Between two non-`Partial` answers the buffer must only grow at its end: the framer
//! remembers how far it has looked, so feeding a message one byte at a time costs
//! linear, not quadratic, time. A message larger than the limit is refused with
//! [`FramingError::TooLarge`] as soon as that is known, without waiting for (or
//! buffering) the rest of it; the framer then skips the rest and recovers.
//!
//! ```
//! use switchboard::framing::{Ndjson, Status};
//!
//! let mut framer = Ndjson::new(1 << 20);
//! let mut buf = Vec::new();
//! let mut frames = Vec::new();
//! for chunk in [&b"{\"a\":"[..], b"1}\n\n{\"b\"", b":2}\r\n"] {
//!     buf.extend_from_slice(chunk);
//!     loop {
//!         match framer.decode(&buf).unwrap() {
//!             Status::Partial => break,
//!             Status::Frame { body, consumed } => {
//!                 frames.push(buf[body].to_vec());
//!                 buf.drain(..consumed);
//!             }
//!             Status::Skip { consumed } => {
//!                 buf.drain(..consumed);
//!             }
//!         }
//!     }
//! }
//! assert_eq!(frames, [&b"{\"a\":1}"[..], b"{\"b\":2}"]);
//! ```

use std::fmt;
use std::ops::Range;

/// What a framer found at the front of the buffer.
///
/// ```
/// use switchboard::framing::{Ndjson, Status};
/// let mut framer = Ndjson::new(1024);
/// let mut buf = b"{\"id\":1}\n\n\n{\"id\"".to_vec();
/// let mut seen = Vec::new();
/// loop {
///     match framer.decode(&buf).unwrap() {
///         Status::Frame { body, consumed } => {
///             seen.push(format!("frame {}", String::from_utf8_lossy(&buf[body])));
///             buf.drain(..consumed);
///         }
///         // Blank lines carry no message: dropped so that they never pile up.
///         Status::Skip { consumed } => {
///             seen.push(format!("skip {consumed}"));
///             buf.drain(..consumed);
///         }
///         // Read more, append it to `buf`, call again.
///         Status::Partial => break,
///     }
/// }
/// assert_eq!(seen, [r#"frame {"id":1}"#, "skip 2"]);
/// assert_eq!(buf, br#"{"id""#);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// More bytes are needed; nothing may be dropped yet.
    Partial,
    /// One message: `buf[body]`. Drop `consumed` bytes (the message and its framing)
    /// from the front of the buffer before the next call.
    Frame {
        /// Where the message is in the buffer given to `decode`.
        body: Range<usize>,
        /// How many bytes at the front of the buffer this frame used.
        consumed: usize,
    },
    /// Bytes that carry no message (blank lines, the rest of a refused message): drop
    /// `consumed` bytes from the front of the buffer.
    Skip {
        /// How many bytes at the front of the buffer to drop.
        consumed: usize,
    },
}

/// Why a stream could not be framed.
///
/// ```
/// use switchboard::framing::{FramingError, Ndjson, Status};
/// let mut framer = Ndjson::new(8);
/// let mut buf = b"[1,2,3,4,5]\n[6]\n".to_vec();
/// // Refused as soon as it is known to be too long; answer it (-32600), then go on.
/// let err = framer.decode(&buf).unwrap_err();
/// assert_eq!(err, FramingError::TooLarge { limit: 8 });
/// assert!(err.is_recoverable());
/// assert_eq!(err.to_string(), "message larger than max_message_bytes (8)");
/// // The next call skips the rest of the refused line; the one after finds the next message.
/// let Status::Skip { consumed } = framer.decode(&buf).unwrap() else { panic!() };
/// buf.drain(..consumed);
/// let Status::Frame { body, .. } = framer.decode(&buf).unwrap() else { panic!() };
/// assert_eq!(&buf[body], b"[6]");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FramingError {
    /// The message is larger than the limit. Recoverable: answer it (SPEC.md: -32600
    /// with `data`), then keep calling `decode`, which skips the rest of it.
    TooLarge {
        /// The limit in force.
        limit: usize,
    },
    /// The header section (Content-Length framing) is longer than
    /// [`ContentLength::MAX_HEADER_BYTES`]. Not recoverable.
    HeadersTooLarge,
    /// A header line without a `:`, or a `Content-Length` that is not a decimal number
    /// of at most 4 294 967 295 (digits only: no sign, no spaces inside; or two that
    /// disagree). Not recoverable.
    BadHeader,
    /// The headers ended without a `Content-Length`. Not recoverable.
    MissingContentLength,
}

impl FramingError {
    /// Whether the framer can go on after this error (only [`FramingError::TooLarge`]).
    #[must_use]
    pub const fn is_recoverable(self) -> bool {
        matches!(self, FramingError::TooLarge { .. })
    }

    /// A short static description.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            FramingError::TooLarge { .. } => "message larger than max_message_bytes",
            FramingError::HeadersTooLarge => "header section too large",
            FramingError::BadHeader => "malformed header",
            FramingError::MissingContentLength => "no Content-Length header",
        }
    }
}

impl fmt::Display for FramingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FramingError::TooLarge { limit } => write!(f, "{} ({limit})", self.as_str()),
            other => f.write_str(other.as_str()),
        }
    }
}

impl std::error::Error for FramingError {}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'))
}

/// Newline-delimited framing: one message per line.
///
/// A line's trailing `\r` is not part of the message; a line of only spaces, tabs and
/// `\r` is skipped. The last line of a stream needs its `\n`: at end of input, call
/// [`Ndjson::finish`] to take an unterminated last line.
///
/// ```
/// use switchboard::framing::{Ndjson, Status};
/// let mut framer = Ndjson::new(1 << 20);
/// // Half a message arrives: not an error, just not a frame yet.
/// let mut buf = br#"{"jsonrpc":"2.0","meth"#.to_vec();
/// assert_eq!(framer.decode(&buf), Ok(Status::Partial));
/// // The rest arrives, appended to the same buffer.
/// buf.extend_from_slice(b"od\":\"ping\"}\r\n{\"jsonrpc\"");
/// let Status::Frame { body, consumed } = framer.decode(&buf).unwrap() else { panic!() };
/// assert_eq!(&buf[body], br#"{"jsonrpc":"2.0","method":"ping"}"#); // without the `\r`
/// buf.drain(..consumed);
/// assert_eq!(framer.decode(&buf), Ok(Status::Partial));
/// // The stream ends without a final newline: `finish` takes the last line.
/// buf.extend_from_slice(br#":"2.0","method":"bye"}"#);
/// assert_eq!(framer.decode(&buf), Ok(Status::Partial));
/// let last = framer.finish(&buf).unwrap().unwrap();
/// assert_eq!(&buf[last], br#"{"jsonrpc":"2.0","method":"bye"}"#);
/// ```
#[derive(Clone, Debug)]
pub struct Ndjson {
    limit: usize,
    /// Bytes of the current line already searched for `\n`.
    scanned: usize,
    /// Skipping the rest of an over-long line.
    skipping: bool,
    /// An over-long but complete line is waiting to be skipped: its length with `\n`.
    pending_skip: Option<usize>,
}

impl Ndjson {
    /// The encoder beside the decoder: appends `message` (one JSON text, which
    /// never holds a raw newline) and its `\n` to `out`.
    ///
    /// ```
    /// let mut out = Vec::new();
    /// switchboard::framing::Ndjson::encode(br#"{"jsonrpc":"2.0","result":1,"id":1}"#, &mut out);
    /// assert_eq!(out, b"{\"jsonrpc\":\"2.0\",\"result\":1,\"id\":1}\n");
    /// ```
    pub fn encode(message: &[u8], out: &mut Vec<u8>) {
        debug_assert!(!message.contains(&b'\n'));
        out.reserve(message.len() + 1);
        out.extend_from_slice(message);
        out.push(b'\n');
    }

    /// A framer refusing messages over `limit` bytes (the `\n` and a trailing `\r` not
    /// counted).
    #[must_use]
    pub const fn new(limit: usize) -> Self {
        Ndjson {
            limit,
            scanned: 0,
            skipping: false,
            pending_skip: None,
        }
    }

    /// The size limit.
    #[must_use]
    pub const fn limit(&self) -> usize {
        self.limit
    }

    /// Finds the next message in `buf` (see the [module docs](self)).
    ///
    /// # Errors
    /// [`FramingError::TooLarge`] once per over-long line; later calls skip the rest.
    pub fn decode(&mut self, buf: &[u8]) -> Result<Status, FramingError> {
        if let Some(n) = self.pending_skip.take() {
            self.scanned = 0;
            return Ok(Status::Skip { consumed: n });
        }
        if self.skipping {
            return Ok(match memchr_nl(buf) {
                Some(i) => {
                    self.skipping = false;
                    self.scanned = 0;
                    Status::Skip { consumed: i + 1 }
                }
                None if buf.is_empty() => Status::Partial,
                None => Status::Skip {
                    consumed: buf.len(),
                },
            });
        }
        let mut start = 0;
        loop {
            let from = start + self.scanned.min(buf.len() - start);
            match memchr_nl(&buf[from..]) {
                Some(i) => {
                    let nl = from + i;
                    let line = &buf[start..nl];
                    self.scanned = 0;
                    if is_blank(line) {
                        start = nl + 1;
                        continue;
                    }
                    let body_end = if line.last() == Some(&b'\r') {
                        nl - 1
                    } else {
                        nl
                    };
                    if body_end - start > self.limit {
                        if start > 0 {
                            // Drop the blank lines first; the long line comes next.
                            return Ok(Status::Skip { consumed: start });
                        }
                        self.pending_skip = Some(nl + 1);
                        return Err(FramingError::TooLarge { limit: self.limit });
                    }
                    return Ok(Status::Frame {
                        body: start..body_end,
                        consumed: nl + 1,
                    });
                }
                None => {
                    let seen = buf.len() - start;
                    // `limit + 1`: a line of exactly `limit` bytes may still get its `\r`.
                    // (A whitespace-only line that long is refused too.)
                    if seen > self.limit.saturating_add(1) {
                        if start > 0 {
                            self.scanned = 0;
                            return Ok(Status::Skip { consumed: start });
                        }
                        self.skipping = true;
                        self.scanned = 0;
                        return Err(FramingError::TooLarge { limit: self.limit });
                    }
                    if start > 0 {
                        // Blank lines: drop them now so they never accumulate.
                        self.scanned = 0;
                        return Ok(Status::Skip { consumed: start });
                    }
                    self.scanned = seen;
                    return Ok(Status::Partial);
                }
            }
        }
    }

    /// At end of input: the unterminated last line of `buf` as a message, if it is not
    /// blank (`buf` is what `decode` last answered `Partial` for).
    ///
    /// # Errors
    /// [`FramingError::TooLarge`] when that line is over the limit.
    pub fn finish(&mut self, buf: &[u8]) -> Result<Option<Range<usize>>, FramingError> {
        let skipping = std::mem::replace(&mut self.skipping, false);
        self.scanned = 0;
        self.pending_skip = None;
        if skipping || is_blank(buf) {
            return Ok(None);
        }
        let end = if buf.last() == Some(&b'\r') {
            buf.len() - 1
        } else {
            buf.len()
        };
        if end > self.limit {
            return Err(FramingError::TooLarge { limit: self.limit });
        }
        Ok(Some(0..end))
    }
}

#[inline]
fn memchr_nl(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

/// `Content-Length` framing (the Language Server Protocol's base protocol):
///
/// ```text
/// Content-Length: 52\r\n
/// Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n
/// \r\n
/// {"jsonrpc":"2.0","method":"subtract","params":[3,1]}
/// ```
///
/// Header names are case-insensitive; headers other than `Content-Length` are ignored.
/// Lines end with `\r\n`; a bare `\n` is accepted too. Two `Content-Length` headers
/// must agree.
///
/// ```
/// use switchboard::framing::{ContentLength, Status};
/// let mut framer = ContentLength::new(1 << 20);
/// let mut buf = Vec::new();
/// // The headers arrive in two reads, the body in a third.
/// buf.extend_from_slice(b"Content-Type: application/vscode-jsonrpc\r\ncontent-len");
/// assert_eq!(framer.decode(&buf), Ok(Status::Partial));
/// buf.extend_from_slice(b"gth: 33\r\n\r\n{\"jsonrpc\":");
/// assert_eq!(framer.decode(&buf), Ok(Status::Partial));
/// buf.extend_from_slice(br#""2.0","method":"exit"}"#);
/// let Status::Frame { body, consumed } = framer.decode(&buf).unwrap() else { panic!() };
/// assert_eq!(&buf[body], br#"{"jsonrpc":"2.0","method":"exit"}"#);
/// assert_eq!(consumed, buf.len());
/// buf.drain(..consumed);
/// assert!(framer.is_idle()); // a stream ending here ended cleanly
/// ```
#[derive(Clone, Debug)]
pub struct ContentLength {
    limit: usize,
    state: LspState,
}

#[derive(Clone, Copy, Debug)]
enum LspState {
    /// Reading headers: `line` is where the current header line starts, `scanned` how
    /// far the buffer has been searched for its `\n`.
    Headers {
        line: usize,
        scanned: usize,
        length: Option<usize>,
    },
    /// Headers done (`head` bytes); waiting for `length` body bytes.
    Body { head: usize, length: usize },
    /// Skipping `left` body bytes of a refused message.
    Skipping { left: usize },
}

const HEADERS_START: LspState = LspState::Headers {
    line: 0,
    scanned: 0,
    length: None,
};

impl ContentLength {
    /// The encoder beside the decoder: appends `Content-Length: N\r\n\r\n` and
    /// `message` to `out`.
    ///
    /// ```
    /// let mut out = Vec::new();
    /// switchboard::framing::ContentLength::encode(b"{}", &mut out);
    /// assert_eq!(out, b"Content-Length: 2\r\n\r\n{}");
    /// ```
    pub fn encode(message: &[u8], out: &mut Vec<u8>) {
        out.reserve(message.len() + 40);
        out.extend_from_slice(b"Content-Length: ");
        crate::write::write_u64(out, message.len() as u64);
        out.extend_from_slice(b"\r\n\r\n");
        out.extend_from_slice(message);
    }

    /// The longest header section accepted.
    pub const MAX_HEADER_BYTES: usize = 8 << 10;

    /// A framer refusing bodies over `limit` bytes.
    #[must_use]
    pub const fn new(limit: usize) -> Self {
        ContentLength {
            limit,
            state: HEADERS_START,
        }
    }

    /// The size limit.
    #[must_use]
    pub const fn limit(&self) -> usize {
        self.limit
    }

    /// Whether the framer is between messages (nothing of a next one seen yet): a
    /// stream that ends here ended cleanly.
    #[must_use]
    pub const fn is_idle(&self) -> bool {
        matches!(
            self.state,
            LspState::Headers {
                line: 0,
                scanned: 0,
                length: None
            }
        )
    }

    /// Finds the next message in `buf` (see the [module docs](self)).
    ///
    /// # Errors
    /// [`FramingError::TooLarge`] when `Content-Length` is over the limit (recoverable:
    /// later calls skip the body); the other errors mean the stream cannot be
    /// resynchronised.
    pub fn decode(&mut self, buf: &[u8]) -> Result<Status, FramingError> {
        loop {
            match self.state {
                LspState::Skipping { left } => {
                    if buf.is_empty() {
                        return Ok(Status::Partial);
                    }
                    let n = left.min(buf.len());
                    self.state = if n == left {
                        HEADERS_START
                    } else {
                        LspState::Skipping { left: left - n }
                    };
                    return Ok(Status::Skip { consumed: n });
                }
                LspState::Body { head, length } => {
                    return Ok(if buf.len() - head >= length {
                        self.state = HEADERS_START;
                        Status::Frame {
                            body: head..head + length,
                            consumed: head + length,
                        }
                    } else {
                        Status::Partial
                    });
                }
                LspState::Headers {
                    line,
                    scanned,
                    length,
                } => {
                    let from = scanned.max(line).min(buf.len());
                    let Some(i) = memchr_nl(&buf[from..]) else {
                        if buf.len() > Self::MAX_HEADER_BYTES {
                            return Err(FramingError::HeadersTooLarge);
                        }
                        self.state = LspState::Headers {
                            line,
                            scanned: buf.len(),
                            length,
                        };
                        return Ok(Status::Partial);
                    };
                    let nl = from + i;
                    if nl + 1 > Self::MAX_HEADER_BYTES {
                        return Err(FramingError::HeadersTooLarge);
                    }
                    let text = &buf[line..nl];
                    let text = text.strip_suffix(b"\r").unwrap_or(text);
                    if text.is_empty() {
                        // End of the header section.
                        let Some(length) = length else {
                            return Err(FramingError::MissingContentLength);
                        };
                        let head = nl + 1;
                        if length > self.limit {
                            // The headers are still at the front of the caller's
                            // buffer: skip them together with the body.
                            self.state = LspState::Skipping {
                                left: head.saturating_add(length),
                            };
                            return Err(FramingError::TooLarge { limit: self.limit });
                        }
                        self.state = LspState::Body { head, length };
                        continue;
                    }
                    let length = match parse_header(text)? {
                        Some(n) if length.is_some_and(|l| l != n) => {
                            return Err(FramingError::BadHeader);
                        }
                        Some(n) => Some(n),
                        None => length,
                    };
                    self.state = LspState::Headers {
                        line: nl + 1,
                        scanned: nl + 1,
                        length,
                    };
                }
            }
        }
    }
}

/// The largest `Content-Length` read as a length (4 GiB - 1): above it the header
/// is malformed, not a message over the limit to skip.
const MAX_CONTENT_LENGTH: u64 = u32::MAX as u64;

/// `Some(n)` for a `Content-Length: n` line, `None` for any other well-formed header.
fn parse_header(line: &[u8]) -> Result<Option<usize>, FramingError> {
    let colon = line
        .iter()
        .position(|&b| b == b':')
        .ok_or(FramingError::BadHeader)?;
    let (name, value) = (&line[..colon], &line[colon + 1..]);
    if !name.eq_ignore_ascii_case(b"content-length") {
        return if name.is_empty() || name.iter().any(|b| matches!(b, b' ' | b'\t')) {
            Err(FramingError::BadHeader)
        } else {
            Ok(None)
        };
    }
    let value = value.trim_ascii();
    if value.is_empty() || value.len() > 10 || !value.iter().all(u8::is_ascii_digit) {
        return Err(FramingError::BadHeader);
    }
    let n = value
        .iter()
        .fold(0u64, |acc, &d| acc * 10 + u64::from(d - b'0'));
    if n > MAX_CONTENT_LENGTH {
        // Not a message too large to take (skipped, the stream goes on) but a broken
        // peer: skipping it would swallow the rest of the stream.
        return Err(FramingError::BadHeader);
    }
    Ok(Some(usize::try_from(n).unwrap_or(usize::MAX)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a driver sees: each message, or `Err(e)` for each error, in order.
    type Event = Result<Vec<u8>, FramingError>;

    /// Feeds `input` in chunks of `chunk` bytes (the last chunk may be shorter) through
    /// `decode`, the way a reader would, and collects what comes out. Also checks the
    /// framer never asks to drop more than the buffer holds.
    fn drive<F>(input: &[u8], chunks: &[usize], mut decode: F) -> (Vec<Event>, Vec<u8>)
    where
        F: FnMut(&[u8]) -> Result<Status, FramingError>,
    {
        let mut events = Vec::new();
        let mut buf = Vec::new();
        let mut pos = 0;
        let mut ci = 0;
        let mut calls = 0usize;
        while pos < input.len() {
            let n = chunks[ci % chunks.len()].min(input.len() - pos);
            ci += 1;
            buf.extend_from_slice(&input[pos..pos + n]);
            pos += n;
            loop {
                calls += 1;
                assert!(calls < 100 * (input.len() + 10), "no progress");
                match decode(&buf) {
                    Ok(Status::Partial) => break,
                    Ok(Status::Frame { body, consumed }) => {
                        assert!(body.end <= consumed && consumed <= buf.len());
                        events.push(Ok(buf[body].to_vec()));
                        buf.drain(..consumed);
                    }
                    Ok(Status::Skip { consumed }) => {
                        assert!(consumed > 0 && consumed <= buf.len());
                        buf.drain(..consumed);
                    }
                    Err(e) => {
                        events.push(Err(e));
                        if !e.is_recoverable() {
                            return (events, buf);
                        }
                    }
                }
            }
        }
        (events, buf)
    }

    fn ok(s: &[u8]) -> Event {
        Ok(s.to_vec())
    }

    const NDJSON: &[u8] = b"{\"id\":1}\n\n  \r\n{\"id\":2}\r\n\t\n{\"a\":\"x\\ny\"}\n";

    fn ndjson_expected() -> Vec<Event> {
        vec![
            ok(b"{\"id\":1}"),
            ok(b"{\"id\":2}"),
            ok(b"{\"a\":\"x\\ny\"}"),
        ]
    }

    #[test]
    fn ndjson_whole_and_byte_at_a_time() {
        for chunks in [&[usize::MAX][..], &[1], &[2], &[3, 1, 7], &[5]] {
            let mut f = Ndjson::new(64);
            let (events, rest) = drive(NDJSON, chunks, |b| f.decode(b));
            assert_eq!(events, ndjson_expected(), "chunks {chunks:?}");
            assert!(rest.is_empty());
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
    fn ndjson_split_at_every_position() {
        for split in 0..=NDJSON.len() {
            let mut f = Ndjson::new(64);
            let mut events = Vec::new();
            let mut buf = Vec::new();
            for part in [&NDJSON[..split], &NDJSON[split..]] {
                buf.extend_from_slice(part);
                loop {
                    match f.decode(&buf).unwrap() {
                        Status::Partial => break,
                        Status::Frame { body, consumed } => {
                            events.push(ok(&buf[body]));
                            buf.drain(..consumed);
                        }
                        Status::Skip { consumed } => {
                            buf.drain(..consumed);
                        }
                    }
                }
            }
            assert_eq!(events, ndjson_expected(), "split at {split}");
        }
    }

    #[test]
    fn ndjson_finish_takes_the_unterminated_last_line() {
        let mut f = Ndjson::new(64);
        assert_eq!(f.decode(b"{\"id\":3}\r").unwrap(), Status::Partial);
        assert_eq!(f.finish(b"{\"id\":3}\r").unwrap(), Some(0..8));
        assert_eq!(f.finish(b"  \r").unwrap(), None);
        assert_eq!(f.finish(b"").unwrap(), None);
        assert_eq!(
            Ndjson::new(3).finish(b"abcd"),
            Err(FramingError::TooLarge { limit: 3 })
        );
    }

    #[test]
    fn ndjson_limit_is_exact_and_crlf_does_not_count() {
        for chunks in [&[usize::MAX][..], &[1]] {
            let mut f = Ndjson::new(4);
            let input = b"abcd\nabcd\r\nabcde\nabcde\r\nxy\n";
            let (events, _) = drive(input, chunks, |b| f.decode(b));
            let too = Err(FramingError::TooLarge { limit: 4 });
            assert_eq!(
                events,
                vec![ok(b"abcd"), ok(b"abcd"), too.clone(), too, ok(b"xy")],
                "chunks {chunks:?}"
            );
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
    fn ndjson_oversized_refused_early_and_skipped_in_bounded_memory() {
        let limit = 100;
        let mut f = Ndjson::new(limit);
        let mut input = b"{\"id\":1}\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 100_000));
        input.extend_from_slice(b"\n{\"id\":2}\n");
        let mut max_buf = 0;
        let mut seen_error_at = None;
        let mut fed = 0;
        let (events, _) = drive(&input, &[7], |b| {
            fed += 1;
            max_buf = max_buf.max(b.len());
            let r = f.decode(b);
            if r.is_err() {
                seen_error_at.get_or_insert(fed);
            }
            r
        });
        assert_eq!(
            events,
            vec![
                ok(b"{\"id\":1}"),
                Err(FramingError::TooLarge { limit }),
                ok(b"{\"id\":2}")
            ]
        );
        assert!(max_buf <= limit + 2 + 7, "buffer grew to {max_buf}");
        assert!(seen_error_at.unwrap() < 40, "refused late");
    }

    #[test]
    #[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
    fn ndjson_blank_lines_never_accumulate() {
        let mut f = Ndjson::new(8);
        let input = b"\n \r\n\t\n".repeat(1000);
        let mut max_buf = 0;
        let (events, rest) = drive(&input, &[3], |b| {
            max_buf = max_buf.max(b.len());
            f.decode(b)
        });
        assert!(events.is_empty());
        assert!(max_buf < 16, "{max_buf}");
        assert!(rest.len() < 16);
    }

    #[test]
    #[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
    fn ndjson_one_byte_at_a_time_is_linear() {
        // 1 MiB line fed a byte at a time: a rescan from the start each time would be
        // 5 * 10^11 byte visits; count calls instead of timing.
        let n = 1 << 20;
        let mut f = Ndjson::new(n);
        let mut buf = Vec::with_capacity(n + 1);
        let mut visits = 0usize;
        for _ in 0..n {
            buf.push(b'x');
            let before = f.scanned;
            assert_eq!(f.decode(&buf).unwrap(), Status::Partial);
            visits += buf.len() - before;
        }
        buf.push(b'\n');
        assert!(matches!(f.decode(&buf).unwrap(), Status::Frame { .. }));
        assert_eq!(visits, n);
    }

    fn lsp(body: &[u8], extra: &str) -> Vec<u8> {
        let mut v = format!("Content-Length: {}\r\n{extra}\r\n", body.len()).into_bytes();
        v.extend_from_slice(body);
        v
    }

    fn lsp_input() -> (Vec<u8>, Vec<Event>) {
        let a = br#"{"jsonrpc":"2.0","method":"subtract","params":[3,1],"id":1}"#;
        let b = b"{\"x\":\"line\r\nbreaks\nin body\"}";
        let c = b"[]";
        let mut input = lsp(a, "");
        input.extend(lsp(
            b,
            "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n",
        ));
        input.extend_from_slice(b"content-type: x\r\nCONTENT-LENGTH:2\r\n\r\n[]");
        input.extend_from_slice(b"X-Other: 1\ncontent-Length:   0  \n\n");
        (input, vec![ok(a), ok(b), ok(c), ok(b"")])
    }

    #[test]
    fn lsp_whole_byte_at_a_time_and_chunked() {
        let (input, expected) = lsp_input();
        for chunks in [&[usize::MAX][..], &[1], &[2], &[3, 1, 7], &[16]] {
            let mut f = ContentLength::new(1024);
            let (events, rest) = drive(&input, chunks, |b| f.decode(b));
            assert_eq!(events, expected, "chunks {chunks:?}");
            assert!(rest.is_empty());
            assert!(f.is_idle());
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
    fn lsp_split_at_every_position() {
        let (input, expected) = lsp_input();
        for split in 0..=input.len() {
            let mut f = ContentLength::new(1024);
            let mut events = Vec::new();
            let mut buf = Vec::new();
            for part in [&input[..split], &input[split..]] {
                buf.extend_from_slice(part);
                loop {
                    match f.decode(&buf).unwrap() {
                        Status::Partial => break,
                        Status::Frame { body, consumed } => {
                            events.push(ok(&buf[body]));
                            buf.drain(..consumed);
                        }
                        Status::Skip { consumed } => {
                            buf.drain(..consumed);
                        }
                    }
                }
            }
            assert_eq!(events, expected, "split at {split}");
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
    fn lsp_oversized_refused_from_the_header_and_skipped() {
        let big = vec![b' '; 5000];
        let mut input = lsp(b"{}", "");
        input.extend(lsp(&big, ""));
        input.extend(lsp(b"[1]", ""));
        for chunks in [&[usize::MAX][..], &[1], &[100]] {
            let mut f = ContentLength::new(100);
            let mut max_buf = 0;
            let (events, _) = drive(&input, chunks, |b| {
                max_buf = max_buf.max(b.len());
                f.decode(b)
            });
            assert_eq!(
                events,
                vec![
                    ok(b"{}"),
                    Err(FramingError::TooLarge { limit: 100 }),
                    ok(b"[1]")
                ]
            );
            if chunks[0] < 200 {
                assert!(max_buf < 300, "{max_buf}");
            }
        }
        // Exactly at the limit passes.
        let mut f = ContentLength::new(3);
        let (events, _) = drive(&lsp(b"[1]", ""), &[1], |b| f.decode(b));
        assert_eq!(events, vec![ok(b"[1]")]);
    }

    #[test]
    fn lsp_errors() {
        let cases: &[(&[u8], FramingError)] = &[
            (b"Content-Length 3\r\n\r\n[1]", FramingError::BadHeader),
            (b"Content-Length: x\r\n\r\n[1]", FramingError::BadHeader),
            (b"Content-Length: -3\r\n\r\n[1]", FramingError::BadHeader),
            (b"Content-Length: \r\n\r\n[1]", FramingError::BadHeader),
            (b": 3\r\n\r\n[1]", FramingError::BadHeader),
            (
                b"Content-Length: 3\r\nContent-Length: 4\r\n\r\n[1]",
                FramingError::BadHeader,
            ),
            (
                b"Content-Type: a\r\n\r\n[1]",
                FramingError::MissingContentLength,
            ),
            (b"\r\n", FramingError::MissingContentLength),
            (
                b"Content-Length: 99999999999999999999999\r\n\r\n",
                FramingError::BadHeader,
            ),
            (
                b"Content-Length: 1000000000000000000\r\n\r\n",
                FramingError::BadHeader,
            ),
            (
                b"Content-Length: 4294967296\r\n\r\n",
                FramingError::BadHeader,
            ),
            (b"Content-Length: +3\r\n\r\n[1]", FramingError::BadHeader),
            (b"Content-Length: 3 4\r\n\r\n[1]", FramingError::BadHeader),
        ];
        for (input, err) in cases {
            for chunks in [&[usize::MAX][..], &[1]] {
                let mut f = ContentLength::new(100);
                let (events, _) = drive(input, chunks, |b| f.decode(b));
                assert_eq!(
                    events.last(),
                    Some(&Err(*err)),
                    "{}",
                    String::from_utf8_lossy(input)
                );
                assert!(!err.is_recoverable());
            }
        }
        // Agreeing duplicates are fine.
        let mut f = ContentLength::new(100);
        let (events, _) = drive(
            b"Content-Length: 2\r\ncontent-length: 2\r\n\r\n[]",
            &[1],
            |b| f.decode(b),
        );
        assert_eq!(events, vec![ok(b"[]")]);
    }

    #[test]
    #[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
    fn lsp_header_section_is_bounded() {
        let mut input = b"X-Pad: ".to_vec();
        input.extend(std::iter::repeat_n(b'a', 20_000));
        for chunks in [&[usize::MAX][..], &[64]] {
            let mut f = ContentLength::new(100);
            let mut max_buf = 0;
            let (events, _) = drive(&input, chunks, |b| {
                max_buf = max_buf.max(b.len());
                f.decode(b)
            });
            assert_eq!(events, vec![Err(FramingError::HeadersTooLarge)]);
            if chunks[0] == 64 {
                assert!(max_buf <= ContentLength::MAX_HEADER_BYTES + 64);
            }
        }
        // Many short headers add up too.
        let input = b"X-A: b\r\n".repeat(2000);
        let mut f = ContentLength::new(100);
        let (events, _) = drive(&input, &[1], |b| f.decode(b));
        assert_eq!(events, vec![Err(FramingError::HeadersTooLarge)]);
    }

    #[test]
    #[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
    fn lsp_one_byte_at_a_time_is_linear() {
        // Headers: each call searches only the bytes it has not seen (the recorded scan
        // position is the buffer's end after every `Partial`). Body: never scanned,
        // O(1) per call.
        let body = vec![b' '; 1 << 20];
        let input = lsp(
            &body,
            "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n",
        );
        let mut f = ContentLength::new(1 << 20);
        let mut buf = Vec::new();
        let mut frames = 0;
        for &b in &input {
            buf.push(b);
            match f.decode(&buf).unwrap() {
                Status::Frame { body, .. } => {
                    assert_eq!(body.len(), 1 << 20);
                    frames += 1;
                }
                Status::Partial => match f.state {
                    LspState::Headers { scanned, line, .. } => {
                        assert!(scanned == buf.len() || (line == buf.len() && scanned == line));
                    }
                    LspState::Body { .. } => {}
                    LspState::Skipping { .. } => unreachable!(),
                },
                Status::Skip { .. } => unreachable!(),
            }
        }
        assert_eq!(frames, 1);
    }

    #[test]
    fn display() {
        assert_eq!(
            FramingError::TooLarge { limit: 5 }.to_string(),
            "message larger than max_message_bytes (5)"
        );
        assert_eq!(FramingError::BadHeader.to_string(), "malformed header");
    }
}
