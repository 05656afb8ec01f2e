//! The classifier: bytes in, a [`Message`] out, borrowing from the input.

pub(crate) mod blocks;
mod classify;
mod config;
mod error;
pub(crate) mod ops;
pub(crate) mod scan;
#[cfg(test)]
mod test_json;
pub(crate) mod walk;

use core::fmt;

use bumpalo::Bump;
use smallvec::SmallVec;

pub use config::ParserConfig;
pub use error::{Code, Error, ErrorData, Field, Reason};

use crate::long::LongValues;
use crate::long::Record;
use crate::params::{Params, ParamsBytes, RawValue};
use scan::{ElemSink, ObjSpans, Scanner, Shape};

/// A request or response id, kept as its exact token (`7`, `"abc"`, `1e2`, `null`...),
/// so that it is echoed byte for byte and never converted to a number.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Id<'a> {
    raw: &'a [u8],
}

impl<'a> Id<'a> {
    /// The `null` id, used when no valid id can be echoed.
    pub const NULL: Id<'static> = Id { raw: b"null" };

    pub(crate) const fn new_validated(raw: &'a [u8]) -> Self {
        Id { raw }
    }

    /// The id's exact bytes as received.
    pub const fn as_bytes(&self) -> &'a [u8] {
        self.raw
    }

    /// The id's exact text as received.
    pub fn as_str(&self) -> &'a str {
        core::str::from_utf8(self.raw).unwrap_or("null")
    }

    /// `true` for `null`.
    pub fn is_null(&self) -> bool {
        self.raw == b"null"
    }

    /// `true` for a string id.
    pub fn is_string(&self) -> bool {
        self.raw.first() == Some(&b'"')
    }

    /// `true` for a number id.
    pub fn is_number(&self) -> bool {
        matches!(self.raw.first(), Some(b'-' | b'0'..=b'9'))
    }

    /// The id as a raw JSON value.
    pub fn as_raw(&self) -> RawValue<'a> {
        RawValue::new_validated(self.raw)
    }
}

impl fmt::Debug for Id<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Id({})", String::from_utf8_lossy(self.raw))
    }
}

/// A method name, unescaped.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Method<'a> {
    name: &'a str,
    exact: bool,
}

impl<'a> Method<'a> {
    /// The name after unescaping. A lone surrogate escape (`"\ud800"`, valid
    /// JSON) shows as U+FFFD here and makes the name inexact.
    pub const fn as_str(&self) -> &'a str {
        self.name
    }

    /// `false` when the name held a lone surrogate escape: such a name can never
    /// equal a registered (valid UTF-8) name.
    pub const fn is_exact(&self) -> bool {
        self.exact
    }

    /// The name to look up, or `None` when it can match no registered name.
    pub fn lookup_key(&self) -> Option<&'a str> {
        self.exact.then_some(self.name)
    }

    /// Whether the method starts with the reserved `rpc.` prefix.
    pub fn is_reserved(&self) -> bool {
        self.name.starts_with("rpc.")
    }
}

impl PartialEq<str> for Method<'_> {
    fn eq(&self, other: &str) -> bool {
        self.exact && self.name == other
    }
}

impl PartialEq<&str> for Method<'_> {
    fn eq(&self, other: &&str) -> bool {
        self.exact && self.name == *other
    }
}

impl fmt::Debug for Method<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Method({:?}{})",
            self.name,
            if self.exact { "" } else { ", inexact" }
        )
    }
}

impl fmt::Display for Method<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// A call that expects an answer (it has an `id`, possibly `null`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request<'a> {
    method: Method<'a>,
    params: Option<ParamsBytes<'a>>,
    id: Id<'a>,
}

impl<'a> Request<'a> {
    /// The method name.
    pub fn method(&self) -> Method<'a> {
        self.method
    }

    /// The params; `None` when absent or `null`.
    pub fn params(&self) -> Option<Params<'a>> {
        self.params_in(Record::NONE)
    }

    /// [`Self::params`], in the message `long` records ([`crate::long`]).
    #[inline(always)]
    pub(crate) fn params_in(&self, long: Record<'a>) -> Option<Params<'a>> {
        self.params.map(|p| p.in_message(long))
    }

    /// The id to echo, exactly as received.
    pub fn id(&self) -> Id<'a> {
        self.id
    }
}

/// A call without an `id` member: never answered, not even with an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Notification<'a> {
    method: Method<'a>,
    params: Option<ParamsBytes<'a>>,
}

impl<'a> Notification<'a> {
    /// The method name.
    pub fn method(&self) -> Method<'a> {
        self.method
    }

    /// The params; `None` when absent or `null`.
    pub fn params(&self) -> Option<Params<'a>> {
        self.params_in(Record::NONE)
    }

    /// [`Self::params`], in the message `long` records ([`crate::long`]).
    #[inline(always)]
    pub(crate) fn params_in(&self, long: Record<'a>) -> Option<Params<'a>> {
        self.params.map(|p| p.in_message(long))
    }
}

/// A Response object received from a peer (it is never answered).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Response<'a> {
    id: Id<'a>,
    outcome: Result<RawValue<'a>, RawValue<'a>>,
}

impl<'a> Response<'a> {
    /// The id, exactly as received.
    pub fn id(&self) -> Id<'a> {
        self.id
    }

    /// `Ok(result)` or `Err(error object)`, as raw values.
    pub fn outcome(&self) -> Result<RawValue<'a>, RawValue<'a>> {
        self.outcome
    }

    /// The `result` member, if this is a success.
    pub fn result(&self) -> Option<RawValue<'a>> {
        self.outcome.ok()
    }

    /// The `error` member (an object with integer `code` and string `message`), if any.
    pub fn error(&self) -> Option<RawValue<'a>> {
        self.outcome.err()
    }
}

/// One element of a batch, classified on its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Item<'a> {
    /// A call to answer.
    Request(Request<'a>),
    /// A call never to answer.
    Notification(Notification<'a>),
    /// A response from the peer.
    Response(Response<'a>),
    /// An element that earns an error response (-32600, with the id when usable).
    Error(Error<'a>),
}

/// A non-empty batch within the configured limits. Its elements are classified
/// one by one as they are iterated (cheap: the scan already recorded their spans).
#[derive(Clone, Copy)]
pub struct Batch<'a> {
    input: &'a [u8],
    elems: &'a [ObjSpans],
    names: &'a [u8],
}

impl<'a> Batch<'a> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.elems.len()
    }

    /// Always `false`: an empty batch is an error, never a `Batch`.
    pub fn is_empty(&self) -> bool {
        self.elems.is_empty()
    }

    /// The `i`-th element, classified.
    pub fn get(&self, i: usize) -> Option<Item<'a>> {
        self.elems
            .get(i)
            .map(|s| classify::classify(self.input, s, self.names))
    }

    /// The `i`-th element's exact bytes.
    pub fn raw(&self, i: usize) -> Option<&'a [u8]> {
        self.elems.get(i).map(|s| s.whole.of(self.input))
    }

    /// The elements, classified, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = Item<'a>> + 'a {
        let (input, names) = (self.input, self.names);
        self.elems
            .iter()
            .map(move |s| classify::classify(input, s, names))
    }
}

impl fmt::Debug for Batch<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl PartialEq for Batch<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

/// What a message is, per JSON-RPC 2.0 and SPEC.md.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Message<'a> {
    /// A call to answer.
    Request(Request<'a>),
    /// A call never to answer.
    Notification(Notification<'a>),
    /// A Response object from the peer: never answered.
    Response(Response<'a>),
    /// A valid, non-empty batch within limits.
    Batch(Batch<'a>),
    /// The message as a whole earns this single error response.
    Error(Error<'a>),
}

impl<'a> From<Item<'a>> for Message<'a> {
    fn from(item: Item<'a>) -> Self {
        match item {
            Item::Request(r) => Message::Request(r),
            Item::Notification(n) => Message::Notification(n),
            Item::Response(r) => Message::Response(r),
            Item::Error(e) => Message::Error(e),
        }
    }
}

/// Decodes the escaped method names of `objs` into one block of the arena, once
/// per message, recording each name's span in that block. The arena is reset per
/// message and sized so the block always fits its current chunk: after the first
/// message of a given size, this allocates nothing.
fn decode_names<'a>(arena: &'a mut Bump, input: &[u8], objs: &mut [ObjSpans]) -> &'a [u8] {
    // Decoding never makes a JSON string longer.
    let needed: usize = objs
        .iter()
        .filter_map(|o| o.escaped_method(input))
        .map(<[u8]>::len)
        .sum();
    if needed == 0 {
        return &[];
    }
    arena.reset();
    if arena.chunk_capacity() < needed {
        *arena = Bump::with_capacity(needed.next_power_of_two());
    }
    let arena: &'a Bump = arena;
    let block = arena.alloc_slice_fill_copy(needed, 0u8);
    let mut at = 0usize;
    for o in objs.iter_mut() {
        if let Some(raw) = o.escaped_method(input) {
            let (n, exact) = crate::unescape::decode_into(raw, &mut block[at..]);
            o.decoded_method = scan::Span {
                start: at as u32,
                end: (at + n) as u32,
            };
            o.method_inexact = !exact;
            at += n;
        }
    }
    &block[..at]
}

/// Reusable batch element storage: inline for small batches, growing once for
/// large ones and then reused.
struct Elems(SmallVec<[ObjSpans; 16]>);

impl ElemSink for Elems {
    #[inline]
    fn clear(&mut self) {
        self.0.clear();
    }

    #[inline]
    fn push(&mut self, spans: ObjSpans) {
        self.0.push(spans);
    }
}

/// The classifier and its reusable state (one per thread or connection).
///
/// Parsing borrows the input: method, id and params point into it. After the
/// first message of a given shape, parsing allocates nothing.
///
/// ```
/// use switchboard::{Message, Parser};
/// let mut parser = Parser::new();
/// let msg = parser.parse(br#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#);
/// let Message::Request(req) = msg else { panic!("not a request") };
/// assert_eq!(req.method(), "subtract");
/// assert_eq!(req.id().as_bytes(), b"1");
/// assert_eq!(req.params().unwrap().as_bytes(), b"[42,23]");
/// ```
pub struct Parser {
    config: ParserConfig,
    top: ObjSpans,
    elems: Elems,
    stack: Vec<u64>,
    arena: Bump,
    long: LongValues,
}

impl Default for Parser {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for Parser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Parser")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Parser {
    /// A parser with the default limits of SPEC.md.
    pub fn new() -> Self {
        Self::with_config(ParserConfig::new())
    }

    /// A parser with the given limits.
    pub fn with_config(config: ParserConfig) -> Self {
        Parser {
            config,
            top: ObjSpans::default(),
            elems: Elems(SmallVec::new()),
            stack: vec![0; config.max_depth / 64 + 1],
            arena: Bump::new(),
            long: LongValues::default(),
        }
    }

    /// The limits in force.
    pub fn config(&self) -> &ParserConfig {
        &self.config
    }

    /// Classifies one whole message. Never panics, whatever the bytes.
    #[inline(always)]
    pub fn parse<'a>(&'a mut self, input: &'a [u8]) -> Message<'a> {
        self.parse_noting(input, None)
    }

    /// [`Parser::parse`], noting the long values it validates in `long` (else
    /// in the parser's own record, which nothing reads).
    #[inline(always)]
    pub(crate) fn parse_noting<'a>(
        &'a mut self,
        input: &'a [u8],
        long: Option<&mut LongValues>,
    ) -> Message<'a> {
        let Parser {
            config,
            top,
            elems,
            stack,
            arena,
            long: own,
        } = self;
        classify_message(
            *config,
            top,
            elems,
            stack,
            arena,
            long.unwrap_or(own),
            input,
        )
    }

    /// Validates that `input` is exactly one JSON text (RFC 8259, UTF-8, within
    /// `max_depth` and `max_message_bytes`), whatever its shape.
    ///
    /// ```
    /// let mut p = switchboard::Parser::new();
    /// assert!(p.validate(br#"{"a":[1,2,{"b":null}]}"#).is_ok());
    /// assert_eq!(p.validate(b"[1,]").unwrap_err().code(), switchboard::Code::ParseError);
    /// ```
    pub fn validate(&mut self, input: &[u8]) -> Result<(), Error<'static>> {
        if input.len() > self.config.max_message_bytes {
            return Err(
                Error::new(Reason::TooLarge, Id::NULL).with_limit(self.config.max_message_bytes)
            );
        }
        Scanner::new(
            input,
            self.config.max_depth,
            &mut self.stack,
            &mut self.long,
        )
        .validate()
    }
}

/// [`Parser::parse`] on the parser's parts, the long values noted in `long`.
#[inline(always)]
fn classify_message<'a>(
    cfg: ParserConfig,
    top: &'a mut ObjSpans,
    elems: &'a mut Elems,
    stack: &mut [u64],
    arena: &'a mut Bump,
    long: &mut LongValues,
    input: &'a [u8],
) -> Message<'a> {
    if input.len() > cfg.max_message_bytes {
        return Message::Error(
            Error::new(Reason::TooLarge, Id::NULL).with_limit(cfg.max_message_bytes),
        );
    }
    // Record one element past the limit at most: the count is all that matters then.
    let record = if cfg.allow_batches {
        cfg.max_batch_len
    } else {
        0
    };
    let mut scanner = Scanner::new(input, cfg.max_depth, stack, long);
    let shape = match scanner.scan_message(top, elems, record) {
        Ok(shape) => shape,
        Err(e) => return Message::Error(e),
    };
    match shape {
        Shape::Object if top.compact => classify::classify_compact(input, top).into(),
        Shape::Object => {
            let names: &[u8] = if top.escaped & (1 << Field::Method as u8) == 0 {
                &[]
            } else {
                decode_names(arena, input, core::slice::from_mut(top))
            };
            classify::classify(input, top, names).into()
        }
        Shape::Scalar => Message::Error(Error::new(Reason::NotAnObject, Id::NULL)),
        Shape::Batch { len: 0 } => Message::Error(Error::new(Reason::EmptyBatch, Id::NULL)),
        Shape::Batch { .. } if !cfg.allow_batches => {
            Message::Error(Error::new(Reason::BatchesDisabled, Id::NULL))
        }
        Shape::Batch { len } if len > cfg.max_batch_len => {
            Message::Error(Error::new(Reason::BatchTooLong, Id::NULL).with_limit(cfg.max_batch_len))
        }
        Shape::Batch { .. } => {
            let names = decode_names(arena, input, &mut elems.0);
            Message::Batch(Batch {
                input,
                elems: &elems.0,
                names,
            })
        }
    }
}

#[cfg(test)]
mod linear_tests;
#[cfg(test)]
mod tests;
