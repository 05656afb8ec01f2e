//! The classifier: bytes in, a [`Message`] out, borrowing from the input.

pub(crate) mod arrays;
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

pub use config::ParserConfig;
pub use error::{Code, Error, ErrorData, Field, Reason};

use crate::long::LongValues;
use crate::long::Record;
use crate::params::{Params, ParamsBytes, RawValue};
use scan::{ElemSink, ObjSpans, Scanner, Shape};

/// A request or response id, kept as its exact token (`7`, `"abc"`, `1e2`, `null`...),
/// so that it is echoed byte for byte and never converted to a number.
///
/// ```
/// use switchboard::{Message, Parser, envelope};
/// let mut parser = Parser::new();
/// // A number id is not converted: `1.0e2` stays `1.0e2`, not `100`.
/// let Message::Request(req) = parser.parse(br#"{"jsonrpc":"2.0","method":"m","id":1.0e2}"#) else {
///     panic!()
/// };
/// assert!(req.id().is_number());
/// assert_eq!(req.id().as_bytes(), b"1.0e2");
/// let mut out = Vec::new();
/// envelope::response(&mut out, b"true", req.id().as_bytes());
/// assert_eq!(out, br#"{"jsonrpc":"2.0","result":true,"id":1.0e2}"#);
///
/// // A string id keeps its quotes and its escapes, byte for byte.
/// let Message::Request(req) = parser.parse(br#"{"jsonrpc":"2.0","method":"m","id":"a\u0062"}"#) else {
///     panic!()
/// };
/// assert!(req.id().is_string());
/// assert_eq!(req.id().as_str(), r#""a\u0062""#);
/// ```
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
///
/// ```
/// use switchboard::{Message, Parser};
/// let mut parser = Parser::new();
/// // Compared after unescaping: `"sub\u0074ract"` is the method `subtract`.
/// let Message::Request(req) = parser.parse(br#"{"jsonrpc":"2.0","method":"sub\u0074ract","id":1}"#) else {
///     panic!()
/// };
/// let method = req.method();
/// assert_eq!(method, "subtract");
/// assert_eq!(method.lookup_key(), Some("subtract"));
/// assert!(!method.is_reserved());
///
/// // A lone surrogate is valid JSON but can name no registered method.
/// let Message::Request(req) = parser.parse(br#"{"jsonrpc":"2.0","method":"\ud800","id":1}"#) else {
///     panic!()
/// };
/// assert_eq!(req.method().lookup_key(), None);
/// ```
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
///
/// ```
/// use switchboard::{Message, Parser};
/// let mut parser = Parser::new();
/// let input = br#"{"jsonrpc":"2.0","method":"transfer","params":{"to":"bob","amount":5},"id":"t-1"}"#;
/// let Message::Request(req) = parser.parse(input) else { panic!("not a request") };
/// assert_eq!(req.method(), "transfer");
/// assert_eq!(req.id().as_bytes(), br#""t-1""#);
/// let params = req.params().unwrap();
/// assert_eq!(params.get("to").unwrap().as_plain_str(), Some("bob"));
/// assert_eq!(params.get("amount").unwrap().as_u64(), Some(5));
///
/// // `"id":null` is still a request: it is answered, with `"id":null`.
/// let Message::Request(req) = parser.parse(br#"{"jsonrpc":"2.0","method":"ping","id":null}"#) else {
///     panic!()
/// };
/// assert!(req.id().is_null());
/// assert!(req.params().is_none());
/// ```
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
///
/// ```
/// use switchboard::{Message, Parser};
/// let mut parser = Parser::new();
/// let input = br#"{"jsonrpc":"2.0","method":"log","params":["started"]}"#;
/// let Message::Notification(n) = parser.parse(input) else { panic!("not a notification") };
/// assert_eq!(n.method(), "log");
/// assert_eq!(n.params().unwrap().index(0).unwrap().as_plain_str(), Some("started"));
/// ```
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
///
/// ```
/// use switchboard::{Message, Parser};
/// let mut parser = Parser::new();
/// let Message::Response(r) = parser.parse(br#"{"jsonrpc":"2.0","result":{"ok":true},"id":3}"#) else {
///     panic!()
/// };
/// assert_eq!(r.id().as_bytes(), b"3");
/// assert_eq!(r.outcome().unwrap().as_bytes(), br#"{"ok":true}"#);
///
/// let input = br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":4}"#;
/// let Message::Response(r) = parser.parse(input) else { panic!() };
/// let error = r.error().unwrap();
/// assert!(r.result().is_none());
/// assert_eq!(error.get("code").unwrap().as_i64(), Some(-32601));
/// ```
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
///
/// ```
/// use switchboard::{Code, Item, Message, Parser};
/// let mut parser = Parser::new();
/// let input = br#"[{"jsonrpc":"2.0","method":"a","id":1},{"jsonrpc":"2.0","method":"b"},{"jsonrpc":"2.0","result":0,"id":9},7]"#;
/// let Message::Batch(batch) = parser.parse(input) else { panic!() };
/// let mut answered = Vec::new();
/// for item in batch.iter() {
///     match item {
///         Item::Request(req) => answered.push(req.id().as_str().to_owned()),
///         Item::Notification(n) => assert_eq!(n.method(), "b"),
///         Item::Response(r) => assert_eq!(r.id().as_bytes(), b"9"),
///         // One bad element earns its own error; the others are still served.
///         Item::Error(e) => assert_eq!(e.code(), Code::InvalidRequest),
///     }
/// }
/// assert_eq!(answered, ["1"]);
/// ```
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
///
/// ```
/// use switchboard::{Item, Message, Parser};
/// let mut parser = Parser::new();
/// let input = br#"[{"jsonrpc":"2.0","method":"sum","params":[1,2],"id":1}, {"jsonrpc":"2.0","method":"x"}]"#;
/// let Message::Batch(batch) = parser.parse(input) else { panic!("not a batch") };
/// assert_eq!(batch.len(), 2);
/// assert_eq!(batch.raw(1), Some(br#"{"jsonrpc":"2.0","method":"x"}"#.as_slice()));
/// let Some(Item::Request(req)) = batch.get(0) else { panic!() };
/// assert_eq!(req.method(), "sum");
/// assert!(matches!(batch.get(1), Some(Item::Notification(_))));
/// assert!(batch.get(2).is_none());
///
/// // An empty batch is not a `Batch` but an error.
/// assert!(matches!(parser.parse(b"[]"), Message::Error(_)));
/// ```
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
///
/// ```
/// use switchboard::{Message, Parser};
///
/// /// What a server does with each kind of message.
/// fn describe(message: Message<'_>) -> String {
///     match message {
///         Message::Request(req) => format!("answer {} to id {}", req.method(), req.id().as_str()),
///         Message::Notification(n) => format!("run {}, answer nothing", n.method()),
///         Message::Response(r) => format!("a response to {}: not answered", r.id().as_str()),
///         Message::Batch(b) => format!("a batch of {}", b.len()),
///         Message::Error(e) => format!("answer error {} with id {}", e.code().as_i32(), e.id().as_str()),
///     }
/// }
///
/// let mut parser = Parser::new();
/// let cases: [(&[u8], &str); 5] = [
///     (br#"{"jsonrpc":"2.0","method":"add","id":1}"#, "answer add to id 1"),
///     (br#"{"jsonrpc":"2.0","method":"tick"}"#, "run tick, answer nothing"),
///     (br#"{"jsonrpc":"2.0","result":1,"id":"r"}"#, r#"a response to "r": not answered"#),
///     (br#"[{"jsonrpc":"2.0","method":"tick"},{"jsonrpc":"2.0","method":"tick"}]"#, "a batch of 2"),
///     (br#"{"jsonrpc":"1.0","method":"add","id":5}"#, "answer error -32600 with id 5"),
/// ];
/// for (input, expected) in cases {
///     assert_eq!(describe(parser.parse(input)), expected);
/// }
/// ```
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

/// Reusable batch element storage: allocated at the first batch, grown for a
/// larger one, and then reused. Not inline: a parser lives in every session, so
/// in every idle connection, and 16 inline elements were 1.2 KB of each.
struct Elems(Vec<ObjSpans>);

// Every session and idle connection holds a parser: kept small (it was 1.6 KB
// with 16 batch elements inline).
const _: () = assert!(size_of::<Parser>() <= 384);

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
            elems: Elems(Vec::new()),
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

    /// [`Parser::parse`], noting the long values it validates in `long` (with
    /// `None`, nothing is noted: nothing would read it).
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
        let note = long.is_some();
        classify_message(
            *config,
            top,
            elems,
            stack,
            arena,
            (long.unwrap_or(own), note),
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
        .noting(false)
        .validate()
    }
}

/// [`Parser::parse`] on the parser's parts, the long values noted in `long`
/// if its flag says they are read.
#[inline(always)]
fn classify_message<'a>(
    cfg: ParserConfig,
    top: &'a mut ObjSpans,
    elems: &'a mut Elems,
    stack: &mut [u64],
    arena: &'a mut Bump,
    (long, note): (&mut LongValues, bool),
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
    let mut scanner = Scanner::new(input, cfg.max_depth, stack, long).noting(note);
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
