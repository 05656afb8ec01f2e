//! A serde [`Deserializer`](serde::Deserializer) over JSON the scanner has
//! already validated: the typed path ([`RawValue::parse`], [`Params::parse`],
//! the `typed*` handlers) reads the bytes once, without checking the grammar or
//! the UTF-8 again.
//!
//! Reads assume the grammar (a value starts where one must, a string ends at
//! its quote) but only ever index the slice, with bounds checks: bytes that are
//! not valid JSON (an internal bug) give wrong answers or an error, never a
//! read outside them. The bytes are UTF-8 as a whole (the scanner checked
//! them; bytes it did not see, `RawValue::from_validated`'s, are checked once
//! here first), so a string between two quotes is text without a second look,
//! and any other piece is text when both its ends are char boundaries (two
//! byte tests, `str::get`).
//!
//! Values are mapped exactly as serde_json maps them: a non-negative integer is
//! `visit_u64`, a negative one `visit_i64`, any other number (a fraction, an
//! exponent, `-0`, an integer beyond `u64`/`i64`) `visit_f64`, correctly
//! rounded; a string without escapes is borrowed (`visit_borrowed_str`), one
//! with escapes is decoded into a scratch buffer (`visit_str`); map keys that
//! an integer, float or bool type asks for are read from the key's text, as
//! serde_json does. [`RawValue`] (switchboard's) and serde_json's own
//! `&RawValue` / `Box<RawValue>` borrow or copy a value's exact text.
//!
//! Member names repeated at the top level of an object are refused, as
//! [`ParamsError::duplicate`] always did: during the walk of the top-level
//! object when the target walks it, else (and on any error) by a walk over its
//! names.

use core::fmt;

use serde::de::value::BorrowedStrDeserializer as BorrowedStr;
use serde::de::{self, DeserializeSeed, Expected, IntoDeserializer, Unexpected, Visitor};
use serde::{Deserialize, forward_to_deserialize_any};

use super::{Key, Members, ParamsError, RawValue, check_unique, skip_string, skip_value, skip_ws};
use crate::long::Record;
use crate::unescape;

/// The newtype-struct name [`RawValue`]'s `Deserialize` asks for.
const RAW_TOKEN: &str = "$switchboard::private::RawValue";
/// serde_json's name for its own `RawValue` (`serde_json::value::RawValue`).
const SERDE_JSON_RAW_TOKEN: &str = "$serde_json::private::RawValue";
/// The key of the one-member map this deserializer hands [`RawValue`]'s
/// visitor: a `static`, so its address is unique, and a key at that address
/// can only come from here (with the exact text of a validated value as its
/// value). A map from any other deserializer has its value validated first.
static RAW_KEY: [u8; 31] = *b"$switchboard::private::RawValue";

/// As serde_json: nesting deeper than this is refused (a configured
/// `max_depth` may let deeper JSON through the scanner; serde recursion here
/// costs stack per level).
const RECURSION_LIMIT: usize = 128;

/// Why deserializing failed: serde's message, and where (an offset into the
/// bytes being read, once known).
/// (Boxed: a `Result` of this stays a word or two wide on the success path.)
#[derive(Debug)]
pub(crate) struct Error(Box<ErrorInner>);

#[derive(Debug)]
struct ErrorInner {
    msg: String,
    at: Option<usize>,
}

impl Error {
    #[cold]
    fn at(msg: impl fmt::Display, at: usize) -> Self {
        Error(Box::new(ErrorInner {
            msg: msg.to_string(),
            at: Some(at),
        }))
    }

    /// The error placed at `at`.
    #[cold]
    fn placed(mut self, at: usize) -> Self {
        self.0.at = Some(at);
        self
    }

    /// The message with its place: `... at line L column C`, as serde_json
    /// words it (lines and columns of the params text, from 1).
    pub(crate) fn describe(&self, b: &[u8]) -> String {
        let Some(at) = self.0.at else {
            return self.0.msg.clone();
        };
        let before = &b[..at.min(b.len())];
        let line = 1 + before.iter().filter(|&&c| c == b'\n').count();
        let column = before.len()
            - before
                .iter()
                .rposition(|&c| c == b'\n')
                .map_or(0, |i| i + 1);
        format!("{} at line {line} column {column}", self.0.msg)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.msg)
    }
}

impl std::error::Error for Error {}

impl de::Error for Error {
    #[cold]
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error(Box::new(ErrorInner {
            msg: msg.to_string(),
            at: None,
        }))
    }
}

type Result<T> = core::result::Result<T, Error>;

/// Deserializes `T` from `b`, exactly one validated JSON value (surrounding
/// whitespace allowed) in the message `long` records, refusing member names
/// repeated at its top level.
pub(crate) fn from_validated<'de, T: Deserialize<'de>>(
    b: &'de [u8],
    long: Record<'de>,
) -> core::result::Result<T, ParamsError> {
    let text = if long.is_foreign() {
        // Bytes switchboard's scanner did not see: UTF-8 is the one property
        // the reads below rely on for soundness, so it is checked (once).
        core::str::from_utf8(b).map_err(|e| {
            ParamsError::mismatch(
                Error::at("invalid unicode code point", e.valid_up_to()).describe(b),
            )
        })?
    } else {
        // SAFETY: not foreign, so `b` is (part of) a message switchboard's
        // scanner validated, UTF-8 included, cut at a value's first and last
        // bytes, which are ASCII (`[`, `{`, `"`, a digit, a literal's letter,
        // and their closing bytes): valid UTF-8. Every non-foreign view is
        // made from the scanner's output or a copy of it (`RawValue::new_validated`,
        // `Params::new_validated`, the session's records), and `from_validated`,
        // the public constructor, marks its views foreign.
        unsafe { core::str::from_utf8_unchecked(b) }
    };
    let mut de = Deserializer {
        text,
        b,
        long,
        pos: 0,
        scratch: Vec::new(),
        depth: 0,
        top_checked: false,
        seen: Seen::default(),
    };
    let start = skip_ws(b, 0);
    let is_object = b.get(start) == Some(&b'{');
    let r = T::deserialize(&mut de);
    // The duplicate refusal comes first, as it always did: on an error, and
    // when the target did not walk the whole top-level object (a tuple refusing
    // a map, `IgnoredAny`), walk its names.
    let names = || {
        let members = Members {
            b: &b[start..],
            long,
            pos: 1,
        };
        check_unique(members)
    };
    match r {
        Ok(v) => {
            if is_object && !de.top_checked {
                names()?;
            }
            Ok(v)
        }
        Err(mut e) => {
            if is_object {
                names()?;
            }
            e.0.at.get_or_insert(de.pos);
            Err(ParamsError::mismatch(e.describe(b)))
        }
    }
}

/// The reader: a position in validated bytes.
struct Deserializer<'de> {
    /// The bytes as text: a piece between two ASCII bytes (a string's quotes)
    /// is text as it is.
    text: &'de str,
    /// `text`'s bytes.
    b: &'de [u8],
    /// The long values of the message `b` is part of ([`crate::long`]): an
    /// ignored or raw value the scanner noted is jumped over.
    long: Record<'de>,
    /// The next byte to read. It may run past `b.len()` only on bytes that are
    /// not valid JSON; every read is a checked `get` or a slice bounded by `b.len()`.
    pos: usize,
    /// Escaped strings are decoded here.
    scratch: Vec<u8>,
    /// How many arrays and objects the reader is inside.
    depth: usize,
    /// The top-level object was walked to its end with no name repeated.
    top_checked: bool,
    /// The top-level object's names met so far.
    seen: Seen<'de>,
}

impl<'de> Deserializer<'de> {
    /// The first byte of the next value (whitespace skipped, `pos` moved there).
    #[inline]
    fn peek(&mut self) -> Result<u8> {
        // Compact JSON has no whitespace before most values: one read tells
        // (outside strings, validated JSON has no byte below `!` but whitespace).
        match self.b.get(self.pos) {
            Some(&c) if c > b' ' => Ok(c),
            _ => self.peek_past_ws(),
        }
    }

    /// [`Deserializer::peek`] with whitespace to skip first.
    #[inline(never)]
    fn peek_past_ws(&mut self) -> Result<u8> {
        self.pos = skip_ws(self.b, self.pos);
        match self.b.get(self.pos) {
            Some(&c) => Ok(c),
            None => Err(Error::at("EOF while parsing a value", self.pos)),
        }
    }

    fn error(&self, msg: impl fmt::Display) -> Error {
        Error::at(msg, self.pos)
    }

    /// What the value at `pos` is, for an `invalid type` error (a string or
    /// number is consumed).
    fn unexpected(&mut self, exp: &dyn Expected) -> Error {
        let at = self.pos;
        let e = match self.b.get(at) {
            Some(b'n') => de::Error::invalid_type(Unexpected::Unit, exp),
            Some(b't') => de::Error::invalid_type(Unexpected::Bool(true), exp),
            Some(b'f') => de::Error::invalid_type(Unexpected::Bool(false), exp),
            Some(b'[') => de::Error::invalid_type(Unexpected::Seq, exp),
            Some(b'{') => de::Error::invalid_type(Unexpected::Map, exp),
            Some(b'"') => {
                let end = skip_string(self.b, at);
                self.pos = end;
                let body = self.b.get(at + 1..end - 1).unwrap_or_default();
                match decode(body, &mut self.scratch) {
                    Ok(Text::Borrowed(s) | Text::Decoded(s)) => {
                        de::Error::invalid_type(Unexpected::Str(s), exp)
                    }
                    Err(e) => e,
                }
            }
            _ => match self.number() {
                Ok(Number::U(u)) => de::Error::invalid_type(Unexpected::Unsigned(u), exp),
                Ok(Number::I(i)) => de::Error::invalid_type(Unexpected::Signed(i), exp),
                Ok(Number::F(f)) => de::Error::invalid_type(Unexpected::Float(f), exp),
                Err(e) => e,
            },
        };
        // As serde_json: where the value ends (a string or number read), or
        // just past its first byte.
        e.placed(self.pos.max(at + 1))
    }

    /// The number at `pos`, consumed.
    #[inline]
    fn number(&mut self) -> Result<Number> {
        let at = self.pos;
        // The common case inline: a short non-negative integer and a delimiter.
        let b = self.b;
        let mut p = at;
        let mut v: u64 = 0;
        while let Some(&c @ b'0'..=b'9') = b.get(p) {
            if p - at == 18 {
                break;
            }
            v = v * 10 + u64::from(c - b'0');
            p += 1;
        }
        if p > at
            && (p == at + 1 || b[at] != b'0')
            && matches!(
                b.get(p),
                None | Some(b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')
            )
        {
            self.pos = p;
            return Ok(Number::U(v));
        }
        let (n, end) = number_or_error(self.b, at)?;
        self.pos = end;
        Ok(n)
    }

    /// The string at `pos` (its quote), consumed: borrowed when it has no
    /// escapes, else decoded into `scratch`.
    ///
    /// # Safety
    /// `b[pos]` is a quote (the caller peeked it).
    #[inline(always)]
    unsafe fn string<'s>(&'s mut self) -> Result<Text<'de, 's>> {
        let b = self.b;
        let at = self.pos;
        // SAFETY: `b[at]` is a quote (this function's contract).
        if let Some((body, end)) = unsafe { self.plain_string(at) } {
            self.pos = end;
            return Ok(Text::Borrowed(body));
        }
        let end = skip_string(b, at);
        self.pos = end;
        let body = b.get(at + 1..end.saturating_sub(1)).unwrap_or_default();
        decode(body, &mut self.scratch).map_err(|e| e.placed(at))
    }

    /// The body of the string opening at `b[at]`, and the index past it, when
    /// it has no escape (the first quote or backslash after `at` is a quote):
    /// text as it stands. `None` for a string with an escape.
    ///
    /// # Safety
    /// `b[at]` is a quote.
    #[inline(always)]
    unsafe fn plain_string(&self, at: usize) -> Option<(&'de str, usize)> {
        debug_assert_eq!(self.b.get(at), Some(&b'"'));
        let q = crate::simd::find_quote_or_backslash(self.b, at + 1);
        if self.b.get(q) != Some(&b'"') {
            return None;
        }
        // SAFETY: `b[at]` (the caller's contract) and `b[q]` are quotes,
        // ASCII, so `at + 1` and `q` are char boundaries of `text` (UTF-8),
        // and `at < q < b.len()` (`q` was found after `at` and read).
        Some((unsafe { self.text.get_unchecked(at + 1..q) }, q + 1))
    }

    /// The value at `pos`, whose first byte is `c`, to `visitor`.
    #[inline]
    fn any<V: Visitor<'de>>(&mut self, c: u8, visitor: V) -> Result<V::Value> {
        match c {
            b'n' => {
                self.pos += 4;
                visitor.visit_unit()
            }
            b't' => {
                self.pos += 4;
                visitor.visit_bool(true)
            }
            b'f' => {
                self.pos += 5;
                visitor.visit_bool(false)
            }
            // SAFETY: `c`, the byte at `pos`, is a quote.
            b'"' => unsafe { self.string() }?.visit(visitor),
            b'[' => self.seq(visitor),
            b'{' => self.map(visitor),
            _ => self.number()?.visit(visitor),
        }
    }

    /// Steps into an array or object (`pos` at its bracket).
    #[inline]
    fn enter(&mut self) -> Result<()> {
        self.depth += 1;
        if self.depth > RECURSION_LIMIT {
            return Err(self.too_deep());
        }
        self.pos += 1;
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn too_deep(&self) -> Error {
        self.error("recursion limit exceeded")
    }

    /// Steps out of the array or object whose `close` bracket must be next:
    /// anything else is a value the visitor left unread.
    #[inline]
    fn leave(&mut self, close: u8) -> Result<()> {
        self.depth -= 1;
        match self.peek() {
            Ok(c) if c == close => {
                self.pos += 1;
                Ok(())
            }
            _ => Err(self.trailing()),
        }
    }

    #[cold]
    #[inline(never)]
    fn trailing(&self) -> Error {
        self.error("trailing characters")
    }

    #[inline]
    fn seq<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value> {
        self.enter()?;
        let v = visitor.visit_seq(Seq {
            de: self,
            first: true,
        })?;
        self.leave(b']')?;
        Ok(v)
    }

    #[inline]
    fn map<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value> {
        self.enter()?;
        let top = self.depth == 1;
        let v = visitor.visit_map(Map {
            top,
            de: self,
            first: true,
        })?;
        self.leave(b'}')?;
        Ok(v)
    }

    /// The exact text of the value at `pos`, consumed.
    fn raw_text(&mut self) -> Result<&'de str> {
        self.peek()?;
        let at = self.pos;
        let end = skip_value(self.b, at, self.long).min(self.b.len());
        self.pos = end;
        self.text
            .get(at..end)
            .ok_or_else(|| Error::at("invalid unicode code point", at))
    }
}

/// A number as serde_json reads it.
#[derive(Clone, Copy, Debug)]
enum Number {
    U(u64),
    I(i64),
    F(f64),
}

impl Number {
    fn visit<'de, V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self {
            Number::U(u) => visitor.visit_u64(u),
            Number::I(i) => visitor.visit_i64(i),
            Number::F(f) => visitor.visit_f64(f),
        }
    }
}

/// The number token starting at `b[at]` and the index after it, mapped as
/// serde_json maps it; `None` if no JSON number starts there. The grammar is
/// checked (map keys are read through this, and they are any string).
fn number_at(b: &[u8], at: usize) -> Option<(Number, usize)> {
    let mut p = at;
    let neg = b.get(p) == Some(&b'-');
    if neg {
        p += 1;
    }
    let digits = p;
    let mut v: u64 = 0;
    let mut overflow = false;
    while let Some(&c @ b'0'..=b'9') = b.get(p) {
        match v
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(c - b'0')))
        {
            Some(n) => v = n,
            None => overflow = true,
        }
        p += 1;
    }
    let n = p - digits;
    if n == 0 || (n > 1 && b[digits] == b'0') {
        return None;
    }
    let mut float = overflow;
    if b.get(p) == Some(&b'.') {
        p += 1;
        let f = p;
        while let Some(b'0'..=b'9') = b.get(p) {
            p += 1;
        }
        if p == f {
            return None;
        }
        float = true;
    }
    if let Some(b'e' | b'E') = b.get(p) {
        p += 1;
        if let Some(b'+' | b'-') = b.get(p) {
            p += 1;
        }
        let e = p;
        while let Some(b'0'..=b'9') = b.get(p) {
            p += 1;
        }
        if p == e {
            return None;
        }
        float = true;
    }
    if !float {
        if !neg {
            return Some((Number::U(v), p));
        }
        // As serde_json: -1 ..= -(2^63) are `i64`; `-0` and larger magnitudes
        // are floats.
        let i = (v as i64).wrapping_neg();
        if i < 0 {
            return Some((Number::I(i), p));
        }
    }
    // The token is ASCII; `str::parse` rounds correctly.
    let f: f64 = core::str::from_utf8(&b[at..p]).ok()?.parse().ok()?;
    Some((Number::F(f), p))
}

/// [`number_at`] where a number must be: an error if none is there or if it
/// is beyond the range of `f64`, as in serde_json.
fn number_or_error(b: &[u8], at: usize) -> Result<(Number, usize)> {
    match number_at(b, at) {
        Some((Number::F(f), _)) if !f.is_finite() => Err(Error::at("number out of range", at)),
        Some(n) => Ok(n),
        None => Err(Error::at("invalid number", at)),
    }
}

/// A string's value: borrowed from the input, or decoded into the scratch buffer.
enum Text<'de, 's> {
    Borrowed(&'de str),
    Decoded(&'s str),
}

impl<'de> Text<'de, '_> {
    fn visit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self {
            Text::Borrowed(s) => visitor.visit_borrowed_str(s),
            Text::Decoded(s) => visitor.visit_str(s),
        }
    }

    fn as_str(&self) -> &str {
        match self {
            Text::Borrowed(s) | Text::Decoded(s) => s,
        }
    }
}

/// `b` as text: ASCII (most names and many values) on a word test, anything
/// else through `str::from_utf8`.
#[inline]
fn utf8(b: &[u8], at: usize) -> Result<&str> {
    if ascii(b) {
        // SAFETY: `ascii` is true only when every byte is below 0x80, and
        // ASCII is valid UTF-8.
        return Ok(unsafe { core::str::from_utf8_unchecked(b) });
    }
    core::str::from_utf8(b).map_err(|_| Error::at("invalid unicode code point", at))
}

/// Whether every byte of `b` is below 0x80: two overlapping words for up to
/// 16 bytes (most names), `<[u8]>::is_ascii` beyond.
#[inline(always)]
fn ascii(b: &[u8]) -> bool {
    if b.len() <= 16 {
        let (w0, w1) = super::short_words(b);
        return (w0 | w1) & 0x8080_8080_8080_8080 == 0;
    }
    b.is_ascii()
}

/// Decodes the escaped string body `body` (borrowed as is if it has no
/// backslash). A lone surrogate escape is an error, as in serde_json.
#[inline]
fn decode<'de, 's>(body: &'de [u8], scratch: &'s mut Vec<u8>) -> Result<Text<'de, 's>> {
    if !super::has_backslash(body) {
        return utf8(body, 0).map(Text::Borrowed);
    }
    decode_escaped(body, scratch)
}

/// [`decode`] of a body with escapes, out of line.
#[inline(never)]
fn decode_escaped<'de, 's>(body: &[u8], scratch: &'s mut Vec<u8>) -> Result<Text<'de, 's>> {
    scratch.clear();
    // Decoding never grows a JSON string.
    scratch.resize(body.len(), 0);
    let (n, exact) = unescape::decode_into(body, scratch);
    if !exact {
        return Err(de::Error::custom("lone leading surrogate in hex escape"));
    }
    scratch.truncate(n);
    utf8(scratch, 0).map(Text::Decoded)
}

/// `deserialize_*` methods that read a value through `deserialize_any` when
/// it starts with one of the given bytes, and refuse any other.
macro_rules! strict {
    ($($($method:ident)* => $first:pat,)*) => {
        $($(
            #[inline]
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
                match self.peek()? {
                    c @ $first => self.any(c, visitor),
                    _ => Err(self.unexpected(&visitor)),
                }
            }
        )*)*
    };
}

impl<'de> de::Deserializer<'de> for &mut Deserializer<'de> {
    type Error = Error;

    #[inline]
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let c = self.peek()?;
        self.any(c, visitor)
    }

    fn deserialize_i128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.integer_token()? {
            Some(t) => match t.parse::<i128>() {
                Ok(i) => visitor.visit_i128(i),
                Err(_) => Err(self.error("number out of range")),
            },
            None => de::Deserializer::deserialize_any(self, visitor),
        }
    }

    fn deserialize_u128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.integer_token()? {
            Some(t) => match t.parse::<u128>() {
                Ok(u) => visitor.visit_u128(u),
                Err(_) => Err(self.error("number out of range")),
            },
            None => de::Deserializer::deserialize_any(self, visitor),
        }
    }

    #[inline]
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        if self.peek()? == b'n' {
            self.pos += 4;
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        if name == RAW_TOKEN {
            let raw = self.raw_text()?;
            // The key at `RAW_KEY`'s address marks the text as ours.
            return visitor.visit_map(RawMap {
                key: Some(utf8(&RAW_KEY, 0)?),
                value: raw,
            });
        }
        if name == SERDE_JSON_RAW_TOKEN {
            // serde_json's `RawValue` visitor wants a map of its token to the text.
            let raw = self.raw_text()?;
            return visitor.visit_map(RawMap {
                key: Some(SERDE_JSON_RAW_TOKEN),
                value: raw,
            });
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        match self.peek()? {
            b'"' => {
                let at = self.pos;
                // SAFETY: the byte at `pos` is a quote (just peeked).
                let v = match unsafe { self.string() }? {
                    Text::Borrowed(s) => visitor.visit_enum(UnitOnly(BorrowedStr::new(s))),
                    Text::Decoded(s) => visitor.visit_enum(UnitOnly(s.into_deserializer())),
                };
                v.map_err(|mut e: Error| {
                    e.0.at.get_or_insert(at);
                    e
                })
            }
            b'{' => {
                self.enter()?;
                let v = visitor.visit_enum(Variant { de: self })?;
                self.depth -= 1;
                match self.peek()? {
                    b'}' => {
                        self.pos += 1;
                        Ok(v)
                    }
                    _ => Err(self.error("expected value")),
                }
            }
            _ => Err(self.unexpected(&visitor)),
        }
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.peek()? {
            // SAFETY: the byte at `pos` is a quote (just peeked).
            b'"' => match unsafe { self.string() }? {
                Text::Borrowed(s) => visitor.visit_borrowed_bytes(s.as_bytes()),
                Text::Decoded(s) => visitor.visit_bytes(s.as_bytes()),
            },
            b'[' => self.seq(visitor),
            _ => Err(self.unexpected(&visitor)),
        }
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_bytes(visitor)
    }

    #[inline]
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        let c = self.peek()?;
        if self.depth == 0 {
            // The whole input is this one value: nothing to skip, only the
            // top-level names to check (one walk over them).
            if c == b'{' {
                let members = Members {
                    b: &self.b[self.pos..],
                    long: self.long,
                    pos: 1,
                };
                if check_unique(members).is_err() {
                    return Err(self.error("duplicate member"));
                }
                self.top_checked = true;
            }
            self.pos = self.b.len();
            return visitor.visit_unit();
        }
        self.pos = skip_value(self.b, self.pos, self.long).min(self.b.len());
        visitor.visit_unit()
    }

    // As serde_json, each asks for its own kind of value and refuses the rest
    // (a visitor may accept more through `deserialize_any`: a field
    // identifier takes a variant index, serde_json's `deserialize_identifier`
    // does not).
    strict! {
        deserialize_bool => b't' | b'f',
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64
        deserialize_f32 deserialize_f64 => b'-' | b'0'..=b'9',
        deserialize_char deserialize_str deserialize_string deserialize_identifier => b'"',
        deserialize_unit => b'n',
        deserialize_seq => b'[',
        deserialize_map => b'{',
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        de::Deserializer::deserialize_unit(self, visitor)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value> {
        de::Deserializer::deserialize_seq(self, visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value> {
        de::Deserializer::deserialize_seq(self, visitor)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        match self.peek()? {
            b'[' => self.seq(visitor),
            b'{' => self.map(visitor),
            _ => Err(self.unexpected(&visitor)),
        }
    }
}

impl<'de> Deserializer<'de> {
    /// For `i128` / `u128`, read whole as serde_json does (beyond 64 bits
    /// too): the token of an integer, consumed; `None` (nothing consumed) for
    /// any other value; an error for a number with a fraction or exponent.
    fn integer_token(&mut self) -> Result<Option<&'de str>> {
        let c = self.peek()?;
        if !(c == b'-' || c.is_ascii_digit()) {
            return Ok(None);
        }
        let at = self.pos;
        let (_, end) = number_at(self.b, at).ok_or_else(|| self.error("invalid number"))?;
        let token = utf8(&self.b[at..end], at)?;
        if token.bytes().any(|c| matches!(c, b'.' | b'e' | b'E')) {
            return Err(self.error("invalid number"));
        }
        self.pos = end;
        Ok(Some(token))
    }
}

struct Seq<'a, 'de> {
    de: &'a mut Deserializer<'de>,
    first: bool,
}

impl<'de> de::SeqAccess<'de> for Seq<'_, 'de> {
    type Error = Error;

    #[inline]
    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        let c = self.de.peek()?;
        if c == b']' {
            return Ok(None);
        }
        if !self.first {
            // A `,` (the grammar was checked).
            self.de.pos += 1;
        }
        self.first = false;
        seed.deserialize(&mut *self.de).map(Some)
    }
}

/// The names of the top-level object seen so far, and which have an escape
/// (bit i of `escaped`: `keys[i]`); the first [`Seen::SMALL`], beyond them the
/// walk over the names after deserializing decides.
#[derive(Default)]
struct Seen<'de> {
    keys: [&'de [u8]; Seen::SMALL],
    escaped: u8,
    n: usize,
}

impl Seen<'_> {
    const SMALL: usize = 8;
}

struct Map<'a, 'de> {
    de: &'a mut Deserializer<'de>,
    first: bool,
    /// This is the top-level object (its names are checked for repeats).
    top: bool,
}

impl<'de> de::MapAccess<'de> for Map<'_, 'de> {
    type Error = Error;

    #[inline]
    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        let de = &mut *self.de;
        let mut c = de.peek()?;
        if c == b'}' {
            if self.top {
                de.top_checked = de.seen.n < Seen::SMALL;
            }
            return Ok(None);
        }
        if !self.first {
            de.pos += 1;
            c = de.peek()?;
        }
        self.first = false;
        if c != b'"' {
            return Err(de.error("key must be a string"));
        }
        let at = de.pos;
        // Most names have no escape, which the search for their end tells: a
        // quote before any backslash.
        let b = de.b;
        // SAFETY: `b[at]` is a quote (tested above).
        let (body, end, plain) = match unsafe { de.plain_string(at) } {
            Some((name, end)) => (name.as_bytes(), end, Some(name)),
            None => {
                let end = skip_string(b, at);
                (b.get(at + 1..end - 1).unwrap_or_default(), end, None)
            }
        };
        let escaped = plain.is_none();
        if self.top {
            seen_check(&mut de.seen, body, escaped, at)?;
        }
        // Past the `:` (most often right after the name).
        de.pos = if b.get(end) == Some(&b':') {
            end + 1
        } else {
            skip_ws(b, end) + 1
        };
        seed.deserialize(KeyDe {
            de,
            body,
            plain,
            at,
        })
        .map(Some)
    }

    #[inline]
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        seed.deserialize(&mut *self.de)
    }
}

/// Records `body`, a top-level member name at `at`, refusing a repeat.
#[inline(always)]
fn seen_check<'de>(seen: &mut Seen<'de>, body: &'de [u8], escaped: bool, at: usize) -> Result<()> {
    let n = seen.n;
    if n >= Seen::SMALL {
        return Ok(());
    }
    // The same bytes are the same name; different bytes can be only through
    // an escape (out of line: rare).
    let any_escaped = seen.escaped != 0 || escaped;
    for &k in &seen.keys[..n] {
        if k.len() == body.len() && k == body {
            return Err(repeated(body, at));
        }
    }
    if any_escaped && escaped_repeat(seen, body, escaped) {
        return Err(repeated(body, at));
    }
    seen.keys[n] = body;
    seen.escaped |= u8::from(escaped) << n;
    seen.n = n + 1;
    Ok(())
}

/// Whether `body` names the same member as one of `seen`'s names with
/// different bytes, which takes an escape in one of them.
#[cold]
#[inline(never)]
fn escaped_repeat(seen: &Seen<'_>, body: &[u8], escaped: bool) -> bool {
    seen.keys[..seen.n].iter().enumerate().any(|(i, &k)| {
        let e = seen.escaped >> i & 1 != 0;
        (e || escaped) && Key { inner: k }.eq_key(&Key { inner: body })
    })
}

#[cold]
fn repeated(body: &[u8], at: usize) -> Error {
    Error::at(
        format!("duplicate member `{}`", String::from_utf8_lossy(body)),
        at,
    )
}

/// A member name, read as serde_json reads it: a string, or, for an integer,
/// float or bool type, the value its text spells.
struct KeyDe<'a, 'de> {
    de: &'a mut Deserializer<'de>,
    /// The name between its quotes, still escaped.
    body: &'de [u8],
    /// `body` as text when it has no backslash (it is its own value); `None`
    /// when it has one.
    plain: Option<&'de str>,
    /// Where the name's opening quote is.
    at: usize,
}

impl<'de> KeyDe<'_, 'de> {
    fn numeric<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match number_or_error(self.body, 0) {
            Ok((n, end)) if end == self.body.len() => n.visit(visitor),
            Err(e) if e.0.msg == "number out of range" => Err(e.placed(self.at)),
            _ => Err(Error::at("expected numeric key", self.at)),
        }
    }

    #[inline]
    fn text(&mut self) -> Result<Text<'de, '_>> {
        let at = self.at;
        if let Some(name) = self.plain {
            return Ok(Text::Borrowed(name));
        }
        decode_escaped(self.body, &mut self.de.scratch).map_err(|e| e.placed(at))
    }
}

macro_rules! numeric_key {
    ($($method:ident)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
                self.numeric(visitor)
            }
        )*
    };
}

impl<'de> de::Deserializer<'de> for KeyDe<'_, 'de> {
    type Error = Error;

    #[inline]
    fn deserialize_any<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value> {
        self.text()?.visit(visitor)
    }

    numeric_key!(
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64
        deserialize_f32 deserialize_f64
    );

    fn deserialize_i128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match core::str::from_utf8(self.body)
            .ok()
            .and_then(|s| s.parse::<i128>().ok())
        {
            Some(i) if !self.body.starts_with(b"+") => visitor.visit_i128(i),
            _ => self.numeric(visitor),
        }
    }

    fn deserialize_u128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match core::str::from_utf8(self.body)
            .ok()
            .and_then(|s| s.parse::<u128>().ok())
        {
            Some(u) if !self.body.starts_with(b"+") => visitor.visit_u128(u),
            _ => self.numeric(visitor),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value> {
        match self.body {
            b"true" => visitor.visit_bool(true),
            b"false" => visitor.visit_bool(false),
            _ => {
                let at = self.at;
                let text = self.text()?;
                let e: Error = de::Error::invalid_type(Unexpected::Str(text.as_str()), &visitor);
                Err(e.placed(at))
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        mut self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        match self.text()? {
            Text::Borrowed(s) => visitor.visit_enum(UnitOnly(BorrowedStr::new(s))),
            Text::Decoded(s) => visitor.visit_enum(UnitOnly(s.into_deserializer())),
        }
    }

    fn deserialize_bytes<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value> {
        match self.text()? {
            Text::Borrowed(s) => visitor.visit_borrowed_bytes(s.as_bytes()),
            Text::Decoded(s) => visitor.visit_bytes(s.as_bytes()),
        }
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_unit()
    }

    forward_to_deserialize_any! {
        char str string unit unit_struct seq tuple tuple_struct map struct
        identifier
    }
}

/// An enum written as a string: only a unit variant fits.
struct UnitOnly<D>(D);

impl<'de, D> de::EnumAccess<'de> for UnitOnly<D>
where
    D: de::Deserializer<'de, Error = Error>,
{
    type Error = Error;
    type Variant = UnitVariant;

    fn variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<(T::Value, UnitVariant)> {
        Ok((seed.deserialize(self.0)?, UnitVariant))
    }
}

struct UnitVariant;

impl<'de> de::VariantAccess<'de> for UnitVariant {
    type Error = Error;

    fn unit_variant(self) -> Result<()> {
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, _seed: T) -> Result<T::Value> {
        Err(de::Error::invalid_type(
            Unexpected::UnitVariant,
            &"newtype variant",
        ))
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, _visitor: V) -> Result<V::Value> {
        Err(de::Error::invalid_type(
            Unexpected::UnitVariant,
            &"tuple variant",
        ))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value> {
        Err(de::Error::invalid_type(
            Unexpected::UnitVariant,
            &"struct variant",
        ))
    }
}

/// An enum written as `{"variant": value}` (the reader just inside the `{`).
struct Variant<'a, 'de> {
    de: &'a mut Deserializer<'de>,
}

impl<'de> de::EnumAccess<'de> for Variant<'_, 'de> {
    type Error = Error;
    type Variant = Self;

    fn variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<(T::Value, Self)> {
        let mut map = Map {
            de: &mut *self.de,
            first: true,
            top: false,
        };
        match de::MapAccess::next_key_seed(&mut map, seed)? {
            Some(v) => Ok((v, self)),
            None => Err(self.de.error("expected value")),
        }
    }
}

impl<'de> de::VariantAccess<'de> for Variant<'_, 'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<()> {
        <()>::deserialize(self.de)
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        seed.deserialize(self.de)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value> {
        de::Deserializer::deserialize_seq(self.de, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        de::Deserializer::deserialize_struct(self.de, "", &[], visitor)
    }
}

/// The one-member map a raw value's visitor gets: `key` (a token) to the
/// value's exact text.
struct RawMap<'de> {
    key: Option<&'static str>,
    value: &'de str,
}

impl<'de> de::MapAccess<'de> for RawMap<'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        match self.key.take() {
            Some(k) => seed.deserialize(BorrowedStr::new(k)).map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        seed.deserialize(BorrowedStr::new(self.value))
    }
}

/// Borrows a value's exact text: from switchboard's params as is (no second
/// read); from any other deserializer (a string holding JSON) after checking it
/// is exactly one JSON value.
///
/// ```
/// use switchboard::{Message, Parser, RawValue};
/// let mut p = Parser::new();
/// let Message::Request(req) = p.parse(br#"{"jsonrpc":"2.0","method":"m","params":["to", {"a": [1, 2]}],"id":1}"#)
/// else { panic!() };
/// let (to, body): (&str, RawValue<'_>) = req.params().unwrap().parse().unwrap();
/// assert_eq!(to, "to");
/// assert_eq!(body.as_bytes(), br#"{"a": [1, 2]}"#);
/// ```
///
/// In a struct of your own, a `RawValue<'a>` field needs `#[serde(borrow)]`
/// (as serde_json's `&'a RawValue` does).
impl<'de: 'a, 'a> Deserialize<'de> for RawValue<'a> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> core::result::Result<Self, D::Error> {
        d.deserialize_newtype_struct(RAW_TOKEN, RawVisitor)
    }
}

struct RawVisitor;

impl<'de> Visitor<'de> for RawVisitor {
    type Value = RawValue<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_map<A: de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> core::result::Result<RawValue<'de>, A::Error> {
        let key: Option<RawKey> = map.next_key()?;
        let Some(RawKey { ours }) = key else {
            return Err(de::Error::invalid_type(Unexpected::Map, &self));
        };
        let text: &'de str = map.next_value()?;
        if ours {
            // From this deserializer: the exact text of a validated value
            // (UTF-8: a `str`).
            return (!text.is_empty())
                .then(|| RawValue::new_validated(text.as_bytes()))
                .ok_or_else(|| de::Error::invalid_length(0, &self));
        }
        self.visit_borrowed_str(text)
    }

    fn visit_borrowed_str<E: de::Error>(self, s: &'de str) -> core::result::Result<Self::Value, E> {
        // Any other source: a string that must hold exactly one JSON value.
        let t = s.trim_matches([' ', '\t', '\n', '\r']);
        // Checked here, and UTF-8 (a `str`): validated as the scanner would.
        if crate::dispatch::handler::is_one_json_value(t.as_bytes()) {
            return Ok(RawValue::new_validated(t.as_bytes()));
        }
        Err(de::Error::invalid_value(Unexpected::Str(s), &self))
    }
}

/// The raw value's map key: whether it is this module's own (`RAW_KEY`, by address).
struct RawKey {
    ours: bool,
}

impl<'de> Deserialize<'de> for RawKey {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> core::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawKey;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a raw value")
            }
            fn visit_borrowed_str<E: de::Error>(
                self,
                s: &'de str,
            ) -> core::result::Result<RawKey, E> {
                if core::ptr::eq(s.as_bytes(), &RAW_KEY[..]) {
                    Ok(RawKey { ours: true })
                } else if s.as_bytes() == RAW_KEY {
                    Ok(RawKey { ours: false })
                } else {
                    Err(de::Error::invalid_value(Unexpected::Str(s), &self))
                }
            }
            fn visit_str<E: de::Error>(self, s: &str) -> core::result::Result<RawKey, E> {
                if s.as_bytes() == RAW_KEY {
                    Ok(RawKey { ours: false })
                } else {
                    Err(de::Error::invalid_value(Unexpected::Str(s), &self))
                }
            }
        }
        d.deserialize_identifier(V)
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;
    use std::collections::{BTreeMap, HashMap};
    use std::fmt::Debug;

    use serde::Deserialize;
    use serde::de::IgnoredAny;

    use crate::RawValue;
    use crate::long::Record;

    /// [`super::from_validated`] on bytes outside any message.
    fn from_validated<'de, T: Deserialize<'de>>(b: &'de [u8]) -> Result<T, crate::ParamsError> {
        super::from_validated(b, Record::NONE)
    }

    /// Inputs every type is tried on: valid JSON of every shape.
    const INPUTS: &[&str] = &[
        "null",
        "true",
        "false",
        "0",
        "-0",
        "1",
        "-1",
        "255",
        "256",
        "-129",
        "65535",
        "4294967296",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        "18446744073709551615",
        "18446744073709551616",
        "123456789012345678901234567890",
        "1.5",
        "-2.25e3",
        "1e400",
        "1E-400",
        "0.1",
        r#""""#,
        r#""a""#,
        r#""ab""#,
        r#""é""#,
        r#""a\nb""#,
        r#""\u00e9""#,
        r#""\uD834\uDD1E""#,
        r#""\ud800""#,
        r#""A""#,
        r#""B""#,
        r#""C""#,
        "[]",
        "[1]",
        "[1,2]",
        "[1,2,3]",
        r#"["a","b"]"#,
        r#"["a\"","b"]"#,
        r#"[1,"x"]"#,
        r#"[1,[2,3]]"#,
        r#"[ 1 , 2 ]"#,
        "{}",
        r#"{"a":1}"#,
        r#"{"a":1,"b":2}"#,
        r#"{"a":1,"b":"x"}"#,
        r#"{"a":1,"b":2,"c":3}"#,
        r#"{"b":2}"#,
        r#"{"1":"x","2":"y"}"#,
        r#"{"-1":"x"}"#,
        r#"{"01":"x"}"#,
        r#"{"1.5":"x"}"#,
        r#"{"true":1,"false":2}"#,
        r#"{"A":null}"#,
        r#"{"B":5}"#,
        r#"{"C":[1,2]}"#,
        r#"{"C":{"x":1,"y":2}}"#,
        r#"{"A":null,"B":1}"#,
        r#"{"t":"A"}"#,
        r#"{"t":"B","v":3}"#,
        r#"{"t":"C","x":1,"y":2}"#,
        r#"{"a\u0062":1}"#,
        r#"{"name":"n","renamed":2,"extra":{"deep":[1,{"x":"y"}]}}"#,
        r#"{"name":"n\t","id":3,"flat":true}"#,
        r#"{"x":1.5,"y":-2}"#,
        r#" { "a" : [ 1 , { "b" : null } ] , "c" : "d" } "#,
        r#"[[[[[[[[[[[[]]]]]]]]]]]]"#,
    ];

    fn same<T>(json: &str)
    where
        T: for<'de> Deserialize<'de> + PartialEq + Debug,
    {
        let want = serde_json::from_str::<T>(json);
        let got = from_validated::<T>(json.as_bytes());
        match (&want, &got) {
            (Ok(w), Ok(g)) => assert_eq!(w, g, "{} on {json}", std::any::type_name::<T>()),
            (Err(_), Err(_)) => {}
            _ => panic!(
                "{} on {json}: serde_json {want:?}, switchboard {got:?}",
                std::any::type_name::<T>()
            ),
        }
    }

    /// Same verdict as serde_json, and the same value (compared as `Debug`:
    /// for types holding borrows or floats).
    fn same_borrowed<'de, T>(json: &'de str)
    where
        T: Deserialize<'de> + Debug,
    {
        let want = serde_json::from_str::<T>(json);
        let got = from_validated::<T>(json.as_bytes());
        match (&want, &got) {
            (Ok(w), Ok(g)) => assert_eq!(
                format!("{w:?}"),
                format!("{g:?}"),
                "{} on {json}",
                std::any::type_name::<T>()
            ),
            (Err(_), Err(_)) => {}
            _ => panic!(
                "{} on {json}: serde_json {want:?}, switchboard {got:?}",
                std::any::type_name::<T>()
            ),
        }
    }

    #[derive(Deserialize, Debug, PartialEq)]
    struct Plain {
        a: i64,
        #[serde(default)]
        b: Option<i64>,
    }

    #[derive(Deserialize, Debug, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Strict {
        a: i64,
        b: i64,
    }

    #[derive(Deserialize, Debug, PartialEq)]
    struct Renamed {
        name: String,
        #[serde(rename = "renamed", default)]
        r: u8,
        #[serde(flatten)]
        rest: BTreeMap<String, serde_json::Value>,
    }

    #[derive(Deserialize, Debug, PartialEq)]
    struct Borrowing<'a> {
        #[serde(borrow)]
        name: Cow<'a, str>,
        #[serde(default)]
        id: u32,
    }

    #[derive(Deserialize, Debug, PartialEq)]
    enum External {
        A,
        B(i64),
        C { x: i64, y: i64 },
    }

    #[derive(Deserialize, Debug, PartialEq)]
    #[serde(tag = "t")]
    enum Internal {
        A,
        B { v: i64 },
        C { x: i64, y: i64 },
    }

    #[derive(Deserialize, Debug, PartialEq)]
    #[serde(untagged)]
    enum Untagged {
        N(i64),
        S(String),
        L(Vec<i64>),
        O { a: i64 },
    }

    #[derive(Deserialize, Debug, PartialEq)]
    struct Unit;

    #[derive(Deserialize, Debug, PartialEq)]
    struct Newtype(i64);

    #[derive(Deserialize, Debug, PartialEq)]
    struct Pair(i64, String);

    #[derive(Deserialize, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
    enum KeyEnum {
        A,
        B,
    }

    #[test]
    fn same_verdicts_and_values_as_serde_json() {
        // Under Miri (slow), one input in seven, every shape still met.
        let step = if cfg!(miri) { 7 } else { 1 };
        for json in INPUTS.iter().step_by(step) {
            same::<()>(json);
            same::<bool>(json);
            same::<u8>(json);
            same::<i8>(json);
            same::<u16>(json);
            same::<i32>(json);
            same::<u64>(json);
            same::<i64>(json);
            same::<u128>(json);
            same::<i128>(json);
            same::<f64>(json);
            same::<f32>(json);
            same::<char>(json);
            same::<String>(json);
            same::<Option<i64>>(json);
            same::<Option<String>>(json);
            same::<(i64,)>(json);
            same::<(i64, i64)>(json);
            same::<(i64, String)>(json);
            same::<Vec<i64>>(json);
            same::<Vec<String>>(json);
            same::<Vec<serde_json::Value>>(json);
            same::<HashMap<String, i64>>(json);
            same::<BTreeMap<String, serde_json::Value>>(json);
            same::<BTreeMap<u32, String>>(json);
            same::<BTreeMap<i64, String>>(json);
            same::<BTreeMap<bool, i64>>(json);
            same::<BTreeMap<KeyEnum, serde_json::Value>>(json);
            same::<Plain>(json);
            same::<Strict>(json);
            same::<Renamed>(json);
            same::<External>(json);
            same::<Internal>(json);
            same::<Untagged>(json);
            same::<Unit>(json);
            same::<Newtype>(json);
            same::<Pair>(json);
            same::<serde_json::Value>(json);
            same_borrowed::<Box<serde_json::value::RawValue>>(json);
            same::<IgnoredAny>(json);
            same_borrowed::<&str>(json);
            same_borrowed::<Cow<'_, str>>(json);
            same_borrowed::<(&str, &str)>(json);
            same_borrowed::<Borrowing<'_>>(json);
            same_borrowed::<&serde_json::value::RawValue>(json);
            same_borrowed::<Vec<&serde_json::value::RawValue>>(json);
            same_borrowed::<serde_bytes_like::Bytes<'_>>(json);
        }
    }

    /// `&[u8]` through `deserialize_bytes` (as `serde_bytes` does).
    mod serde_bytes_like {
        #[derive(Debug)]
        pub(super) struct Bytes<'a>(#[allow(dead_code)] pub(super) &'a [u8]);

        impl<'de> serde::Deserialize<'de> for Bytes<'de> {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                <&[u8]>::deserialize(d).map(Bytes)
            }
        }
    }

    #[test]
    fn strings_borrow_unless_escaped() {
        let s: &str = from_validated(br#""abc""#).unwrap();
        assert_eq!(s, "abc");
        // `Cow<str>` borrows where serde lets it (`#[serde(borrow)]`).
        let c: Borrowing<'_> = from_validated(br#"{"name":"abc"}"#).unwrap();
        assert!(matches!(c.name, Cow::Borrowed("abc")));
        let c: Borrowing<'_> = from_validated(br#"{"name":"a\u0062c"}"#).unwrap();
        assert!(matches!(c.name, Cow::Owned(ref s) if s == "abc"));
        let e = from_validated::<&str>(br#""a\nc""#).unwrap_err();
        assert!(e.detail().contains("expected a borrowed string"), "{e}");
    }

    /// Bytes handed to `RawValue::from_validated` (the C ABI's, a client's)
    /// were not seen by the scanner: they are checked for UTF-8 once before
    /// any string of them is borrowed, and a piece cut inside a character is
    /// an error, not text.
    #[test]
    fn foreign_bytes_are_checked_for_utf8() {
        let ok = "[\"Z\u{fc}rich\",{\"\u{e9}t\u{e9}\":\"\u{20ac}\"}]".as_bytes();
        let raw = RawValue::from_validated(ok).unwrap();
        let (city, m): (&str, BTreeMap<&str, &str>) = raw.parse().unwrap();
        assert_eq!((city, m["\u{e9}t\u{e9}"]), ("Z\u{fc}rich", "\u{20ac}"));
        for bad in [
            &b"[\"\xff\"]"[..],
            b"{\"\xc3\":1}",
            b"\"\xe2\x82\"",
            b"[\"a\",\"\xed\xa0\x80\"]",
        ] {
            let raw = RawValue::from_validated(bad).unwrap();
            let e = raw.parse::<serde_json::Value>().unwrap_err();
            assert!(e.detail().contains("invalid unicode code point"), "{e}");
            assert!(raw.parse::<IgnoredAny>().is_err());
        }
        // A raw value cut out of a longer text inside a character: the text
        // read from it is refused where the cut is.
        let word = "\"\u{fc}\"".as_bytes();
        let cut = RawValue::from_validated(&word[..2]).unwrap();
        assert!(cut.parse::<&str>().is_err());
        assert!(cut.parse::<RawValue<'_>>().is_err());
    }

    #[test]
    fn raw_values_are_exact_text() {
        let json = br#"[1, {"a": [1, "]"]} , "x"]"#;
        let (a, b, c): (RawValue<'_>, RawValue<'_>, RawValue<'_>) = from_validated(json).unwrap();
        assert_eq!(a.as_bytes(), b"1");
        assert_eq!(b.as_bytes(), br#"{"a": [1, "]"]}"#);
        assert_eq!(c.as_bytes(), br#""x""#);
        let v: Vec<&serde_json::value::RawValue> = from_validated(json).unwrap();
        assert_eq!(v[1].get(), r#"{"a": [1, "]"]}"#);
        // From another deserializer, the text is checked.
        let ok: RawValue<'_> = RawValue::deserialize(serde::de::value::BorrowedStrDeserializer::<
            serde::de::value::Error,
        >::new("[1,2]"))
        .unwrap();
        assert_eq!(ok.as_bytes(), b"[1,2]");
        assert!(
            RawValue::deserialize(serde::de::value::BorrowedStrDeserializer::<
                serde::de::value::Error,
            >::new("[1,"))
            .is_err()
        );
        assert!(
            serde_json::from_str::<RawValue<'_>>(r#"{"$switchboard::private::RawValue":"[1,"}"#)
                .is_err()
        );
    }

    #[test]
    fn duplicates_refused_at_the_top_only() {
        for json in [
            r#"{"a":1,"a":2}"#,
            r#"{"a":1,"b":2,"\u0061":3}"#,
            r#"{"\u0061":1,"b":2,"a":3}"#,
            r#"{"\u0061":1,"\u0061":2}"#,
            r#"{"a\u0062":1,"\u0061b":2}"#,
            r#"{"a":"x","a":1}"#,
        ] {
            let e = from_validated::<serde_json::Value>(json.as_bytes()).unwrap_err();
            assert!(e.is_duplicate(), "{json}: {e}");
            let e = from_validated::<IgnoredAny>(json.as_bytes()).unwrap_err();
            assert!(e.is_duplicate(), "{json}: {e}");
            let e = from_validated::<(i64, i64)>(json.as_bytes()).unwrap_err();
            assert!(e.is_duplicate(), "{json}: {e}");
            let e = from_validated::<Plain>(json.as_bytes()).unwrap_err();
            assert!(e.is_duplicate(), "{json}: {e}");
        }
        // Many members: past the in-walk check, the walk over the names decides.
        let mut many: String = (0..40).map(|i| format!(r#""k{i}":{i},"#)).collect();
        many.insert(0, '{');
        let unique = format!("{}\"z\":0}}", many);
        let repeated = format!("{}\"k3\":0}}", many);
        assert!(from_validated::<serde_json::Value>(unique.as_bytes()).is_ok());
        let e = from_validated::<serde_json::Value>(repeated.as_bytes()).unwrap_err();
        assert!(e.is_duplicate(), "{e}");
        // Nested objects keep serde's own rule (the last wins for maps).
        let v: serde_json::Value = from_validated(br#"{"a":{"b":1,"b":2}}"#).unwrap();
        assert_eq!(v["a"]["b"], 2);
    }

    #[test]
    fn errors_say_what_and_where() {
        let e = from_validated::<(i64, i64)>(b"[1,\n \"x\"]").unwrap_err();
        assert_eq!(
            e.detail(),
            r#"invalid type: string "x", expected i64 at line 2 column 4"#
        );
        let e = from_validated::<Strict>(br#"{"a":1}"#).unwrap_err();
        assert_eq!(e.detail(), "missing field `b` at line 1 column 6");
        let e = from_validated::<Strict>(br#"{"a":1,"c":2}"#).unwrap_err();
        assert!(
            e.detail()
                .starts_with("unknown field `c`, expected `a` or `b`"),
            "{e}"
        );
        let e = from_validated::<(u8,)>(b"[300]").unwrap_err();
        assert!(
            e.detail()
                .starts_with("invalid value: integer `300`, expected u8"),
            "{e}"
        );
        let e = from_validated::<(i64,)>(b"[1,2]").unwrap_err();
        assert!(e.detail().starts_with("trailing characters"), "{e}");
        let e = from_validated::<f64>(b"1e400").unwrap_err();
        assert!(e.detail().starts_with("number out of range"), "{e}");
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(from_validated::<serde_json::Value>(deep.as_bytes()).is_err());
        assert!(from_validated::<IgnoredAny>(deep.as_bytes()).is_ok());
    }

    #[test]
    fn garbage_stays_inside() {
        // Bytes that are not valid JSON (an internal bug): errors or wrong
        // answers, no panic, no read outside. (Not at the top of an object:
        // the walk over its names, `Members`, may panic on such bytes, as
        // `RawValue::from_validated` says.)
        for bad in [
            &b"["[..],
            b"[{",
            b"\"",
            b"\"\\",
            b"[{\"a\"",
            b"[{\"a\":",
            b"[1,",
            b"-",
            b"nul",
            b"[{\"a\" 1}",
            b"[\"\\u12\"]",
            b"\"\xff\"",
            b"[\"\xc3\"]",
            b"{\"\xe2\x82\":1}",
        ] {
            // Foreign bytes (`RawValue::from_validated`'s) are checked for
            // UTF-8; the scanner's output always is UTF-8.
            let utf8 = std::str::from_utf8(bad).is_ok();
            for long in [Record::FOREIGN, Record::NONE] {
                if long.is_foreign() || utf8 {
                    let _ = super::from_validated::<serde_json::Value>(bad, long);
                    let _ = super::from_validated::<IgnoredAny>(bad, long);
                    let _ = super::from_validated::<(RawValue<'_>, String)>(bad, long);
                    let _ = super::from_validated::<BTreeMap<u8, Cow<'_, str>>>(bad, long);
                    let _ = super::from_validated::<BTreeMap<&str, &str>>(bad, long);
                }
            }
        }
    }
}
