//! Borrowed views of validated JSON: [`Params`] and [`RawValue`].
//!
//! Every view points into a message the scanner has already validated, so the
//! walks here only skip values; they never re-check the grammar and never allocate.

use core::fmt;

use serde::Deserialize;

use crate::long::{self, Record};
use crate::parse::ops::tick;
use crate::simd;
use crate::unescape;

mod de;

/// The kind of a JSON value, read from its first byte.
///
/// ```
/// use switchboard::{Kind, Message, Parser};
/// let mut parser = Parser::new();
/// let input = br#"{"jsonrpc":"2.0","method":"m","params":[null,true,-1.5e3,"s",[],{}],"id":1}"#;
/// let Message::Request(req) = parser.parse(input) else { panic!() };
/// let kinds: Vec<Kind> = req.params().unwrap().iter().map(|v| v.kind()).collect();
/// use Kind::*;
/// assert_eq!(kinds, [Null, Bool, Number, String, Array, Object]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `null`
    Null,
    /// `true` or `false`
    Bool,
    /// A number (kept as its original token).
    Number,
    /// A string (kept escaped, with its quotes).
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

/// One validated JSON value, kept as its exact bytes.
///
/// ```
/// use switchboard::{Kind, Message, Parser};
/// let mut p = Parser::new();
/// let Message::Request(req) = p.parse(br#"{"jsonrpc":"2.0","method":"m","params":[1.50,"x"],"id":1}"#)
/// else { panic!() };
/// let first = req.params().unwrap().iter().next().unwrap();
/// assert_eq!(first.kind(), Kind::Number);
/// assert_eq!(first.as_bytes(), b"1.50"); // untouched
/// assert_eq!(first.as_f64(), Some(1.5));
/// ```
///
/// An array or object met as a member of an object ([`Params::members`],
/// [`Params::get`], [`RawValue::object_iter`]) is not delimited when it is met:
/// its end is found only when something needs it, so a handler that looks up a
/// member and then walks it ([`RawValue::object_iter`], [`RawValue::array_iter`],
/// their `count`) reads it once, not twice. The bytes of such a value
/// ([`RawValue::as_bytes`], [`RawValue::as_str`], [`RawValue::parse`], `==`,
/// hashing, formatting) cost one walk to its end each time they are asked for;
/// keep the slice if you need them several times.
///
/// ```
/// use switchboard::{Kind, Message, Parser};
/// let mut p = Parser::new();
/// let Message::Request(req) = p.parse(br#"{"jsonrpc":"2.0","method":"m","params":{"a":{"x":[1,2],"y":{}},"b":2},"id":1}"#)
/// else { panic!() };
/// let a = req.params().unwrap().get("a").unwrap(); // `a`'s end not sought yet
/// assert_eq!(a.kind(), Kind::Object);
/// assert_eq!(a.object_iter().unwrap().count(), 2); // the one walk over `a`
/// assert_eq!(a.as_bytes(), br#"{"x":[1,2],"y":{}}"#); // found when asked for
/// ```
#[derive(Clone, Copy)]
pub struct RawValue<'a> {
    /// From the value's first byte to its last, or, when `open`, to somewhere
    /// after its last byte inside the same validated JSON.
    bytes: &'a [u8],
    /// The long values of the message this value is part of, when a session
    /// handed it out ([`crate::long`]); the views made from this one inherit it.
    long: Record<'a>,
    /// `bytes` runs past the end of the value (an array or object whose end has
    /// not been sought).
    open: bool,
}

// The slice, the record's pointer and the flag (24 bytes before the record).
const _: () = assert!(size_of::<RawValue<'_>>() <= 4 * size_of::<usize>());
// The slice and the record's pointer; `None` in the pointer's niche.
const _: () = assert!(size_of::<Option<Params<'_>>>() == 3 * size_of::<usize>());

impl<'a> RawValue<'a> {
    /// Wraps bytes that the scanner validated as exactly one JSON value.
    pub(crate) fn new_validated(bytes: &'a [u8]) -> Self {
        Self::in_message(bytes, Record::NONE)
    }

    /// [`RawValue::new_validated`] for bytes inside the message `long` records.
    #[inline(always)]
    fn in_message(bytes: &'a [u8], long: Record<'a>) -> Self {
        debug_assert!(!bytes.is_empty());
        RawValue {
            bytes,
            long,
            open: false,
        }
    }

    /// Wraps bytes that a `RawValue` handed out ([`RawValue::as_bytes`]) again,
    /// for bindings that keep values in foreign memory (the C ABI); `None` for
    /// empty bytes. Not a stable API.
    ///
    /// Bytes that are not exactly one JSON value validated by switchboard give
    /// wrong answers (or a panic), never a read outside `bytes`: the walks only
    /// index the slice, with bounds checks, and stop at its end.
    #[doc(hidden)]
    #[inline]
    pub fn from_validated(bytes: &'a [u8]) -> Option<Self> {
        (!bytes.is_empty()).then(|| RawValue::in_message(bytes, Record::FOREIGN))
    }

    /// Wraps validated JSON that starts with an array or object, running past
    /// its end (the end is sought when the bytes are asked for).
    #[inline]
    fn open_container(bytes: &'a [u8], long: Record<'a>) -> Self {
        debug_assert!(matches!(bytes.first(), Some(b'[' | b'{')));
        RawValue {
            bytes,
            long,
            open: true,
        }
    }

    /// The value's exact bytes as received.
    #[inline]
    pub fn as_bytes(&self) -> &'a [u8] {
        if self.open { self.close() } else { self.bytes }
    }

    /// The bytes of an open array or object, up to its closing bracket.
    #[inline(never)]
    fn close(&self) -> &'a [u8] {
        &self.bytes[..skip_nested(self.bytes, 0)]
    }

    /// The value's exact text as received (validated JSON is always UTF-8).
    #[inline]
    pub fn as_str(&self) -> &'a str {
        // Validated JSON is UTF-8: the scanner checks every string byte and all
        // other bytes are ASCII; fall back to "" rather than trusting that blindly.
        core::str::from_utf8(self.as_bytes()).unwrap_or("")
    }

    /// What kind of value this is.
    #[inline]
    pub fn kind(&self) -> Kind {
        match self.bytes[0] {
            b'n' => Kind::Null,
            b't' | b'f' => Kind::Bool,
            b'"' => Kind::String,
            b'[' => Kind::Array,
            b'{' => Kind::Object,
            _ => Kind::Number,
        }
    }

    /// `true` for `null`.
    #[inline]
    pub fn is_null(&self) -> bool {
        self.bytes == b"null"
    }

    /// The boolean, if this is `true` or `false`.
    #[inline]
    pub fn as_bool(&self) -> Option<bool> {
        match self.bytes {
            b"true" => Some(true),
            b"false" => Some(false),
            _ => None,
        }
    }

    /// The number as `i64`, if it is an integer token that fits (no fraction, no exponent).
    #[inline]
    pub fn as_i64(&self) -> Option<i64> {
        let (neg, digits) = match self.bytes.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, self.bytes),
        };
        let v = parse_digits(digits)?;
        if neg {
            // -(2^63) is the one magnitude that only fits negated.
            0i64.checked_sub_unsigned(v)
        } else {
            i64::try_from(v).ok()
        }
    }

    /// The number as `u64`, if it is a non-negative integer token that fits.
    #[inline]
    pub fn as_u64(&self) -> Option<u64> {
        parse_digits(self.bytes)
    }

    /// The number as a finite `f64` (`None` for non-numbers and for numbers that
    /// overflow to infinity).
    pub fn as_f64(&self) -> Option<f64> {
        if self.kind() != Kind::Number {
            return None;
        }
        self.as_str().parse::<f64>().ok().filter(|f| f.is_finite())
    }

    /// The string's body between its quotes, still escaped; `None` for non-strings.
    #[inline]
    pub fn as_raw_str(&self) -> Option<&'a [u8]> {
        (self.kind() == Kind::String).then(|| &self.bytes[1..self.bytes.len() - 1])
    }

    /// The byte length of the string's value once unescaped (UTF-8, a lone
    /// surrogate escape counting as U+FFFD); `None` for non-strings.
    ///
    /// ```
    /// use switchboard::{Message, Parser};
    /// let mut p = Parser::new();
    /// let Message::Request(req) = p.parse(br#"{"jsonrpc":"2.0","method":"m","params":["a\u00e9", 1],"id":1}"#)
    /// else { panic!() };
    /// let params = req.params().unwrap();
    /// assert_eq!(params.index(0).unwrap().unescaped_len(), Some(3)); // "a" + 2 bytes of é
    /// assert_eq!(params.index(1).unwrap().unescaped_len(), None);
    /// ```
    pub fn unescaped_len(&self) -> Option<usize> {
        self.as_raw_str().map(unescape::decoded_len)
    }

    /// Writes the string's value, unescaped, as UTF-8 at the start of `out` and
    /// returns its length, without allocating; `None` for non-strings and when
    /// `out` is shorter than [`RawValue::unescaped_len`] (`out` is then left
    /// untouched). A lone surrogate escape (`"\ud800"`, valid JSON) becomes U+FFFD.
    ///
    /// ```
    /// use switchboard::{Message, Parser};
    /// let mut p = Parser::new();
    /// let Message::Request(req) = p.parse(br#"{"jsonrpc":"2.0","method":"m","params":["caf\u00e9\n"],"id":1}"#)
    /// else { panic!() };
    /// let s = req.params().unwrap().index(0).unwrap();
    /// let mut buf = [0u8; 16];
    /// let n = s.unescape_into(&mut buf).unwrap();
    /// assert_eq!(&buf[..n], "café\n".as_bytes());
    /// assert_eq!(s.unescaped_len(), Some(6));
    /// assert_eq!(s.unescape_into(&mut buf[..5]), None);
    /// ```
    pub fn unescape_into(&self, out: &mut [u8]) -> Option<usize> {
        let raw = self.as_raw_str()?;
        // Decoding never grows a string: a buffer as long as the raw body always
        // holds it; a shorter one only if the decoded length says so.
        if out.len() < raw.len() && unescape::decoded_len(raw) > out.len() {
            return None;
        }
        Some(unescape::decode_into(raw, out).0)
    }

    /// The string's value without escapes, if it has none (no allocation);
    /// `None` for non-strings and for strings with escapes (use [`RawValue::parse`]).
    #[inline]
    pub fn as_plain_str(&self) -> Option<&'a str> {
        let raw = self.as_raw_str()?;
        // One pass over the bytes: the scan already validated the string, so the
        // only question is whether it holds an escape (or non-ASCII, checked below).
        if crate::write::is_plain_ascii(raw) {
            // SAFETY: `is_plain_ascii` is true only when every byte is below 0x80,
            // and ASCII is valid UTF-8.
            return Some(unsafe { core::str::from_utf8_unchecked(raw) });
        }
        if raw.contains(&b'\\') {
            return None;
        }
        core::str::from_utf8(raw).ok()
    }

    /// Whether this is a string whose unescaped value equals `s`.
    #[inline]
    pub fn str_eq(&self, s: &str) -> bool {
        self.as_raw_str()
            .is_some_and(|raw| body_eq(raw, s.as_bytes()))
    }

    /// The elements, if this is an array.
    #[inline]
    pub fn array_iter(&self) -> Option<Elements<'a>> {
        (self.kind() == Kind::Array).then_some(Elements {
            b: self.bytes,
            long: self.long,
            pos: 1,
        })
    }

    /// The members, if this is an object.
    #[inline]
    pub fn object_iter(&self) -> Option<Members<'a>> {
        (self.kind() == Kind::Object).then_some(Members {
            b: self.bytes,
            long: self.long,
            pos: 1,
        })
    }

    /// The first member called `name` (compared after unescaping), if this is
    /// an object.
    ///
    /// ```
    /// use switchboard::{Message, Parser};
    /// let mut p = Parser::new();
    /// let Message::Request(req) = p.parse(br#"{"jsonrpc":"2.0","method":"m","params":{"args":{"a":1}},"id":1}"#)
    /// else { panic!() };
    /// let args = req.params().unwrap().get("args").unwrap();
    /// assert_eq!(args.get("a").and_then(|a| a.as_i64()), Some(1));
    /// assert!(args.get("b").is_none());
    /// ```
    #[inline]
    pub fn get(&self, name: &str) -> Option<RawValue<'a>> {
        self.object_iter()?
            .find(|(k, _)| k.eq_str(name))
            .map(|(_, v)| v)
    }

    /// The elements of this array from `offset` ([`Elements::offset`] of an
    /// earlier iterator over it), for bindings that keep an iterator in foreign
    /// memory; `None` if this is not an array. An offset no iterator gave yields
    /// wrong values (within this value's bytes), never a read outside them. Not a
    /// stable API.
    #[doc(hidden)]
    #[inline]
    pub fn array_iter_at(&self, offset: usize) -> Option<Elements<'a>> {
        (self.kind() == Kind::Array).then_some(Elements {
            b: self.bytes,
            long: self.long,
            pos: offset.min(self.bytes.len()),
        })
    }

    /// The members of this object from `offset` ([`Members::offset`] of an
    /// earlier iterator over it); as [`RawValue::array_iter_at`]. Not a stable API.
    #[doc(hidden)]
    #[inline]
    pub fn object_iter_at(&self, offset: usize) -> Option<Members<'a>> {
        (self.kind() == Kind::Object).then_some(Members {
            b: self.bytes,
            long: self.long,
            pos: offset.min(self.bytes.len()),
        })
    }

    /// Typed extraction through serde (borrowing strings where they hold no escapes).
    /// A member name that appears twice in an object at the top of this value is an error.
    ///
    /// The bytes are read once, by a deserializer that trusts the scanner's
    /// validation (no second check of the grammar or the UTF-8): strings
    /// without escapes are borrowed (`&str`, `Cow<str>`, [`RawValue`]), numbers
    /// map as serde_json maps them, and a mismatch says what was expected,
    /// what was found, and where (line and column in this value's text).
    ///
    /// ```
    /// use switchboard::{Message, Parser, RawValue};
    /// let mut p = Parser::new();
    /// let Message::Request(req) = p.parse(br#"{"jsonrpc":"2.0","method":"m","params":["ada", 36, {"x": 1}],"id":1}"#)
    /// else { panic!() };
    /// let params = req.params().unwrap();
    /// let (name, age, rest): (&str, u8, RawValue<'_>) = params.parse().unwrap();
    /// assert_eq!((name, age, rest.as_str()), ("ada", 36, r#"{"x": 1}"#));
    /// let e = params.parse::<(&str, &str)>().unwrap_err();
    /// assert_eq!(e.detail(), "invalid type: integer `36`, expected a borrowed string at line 1 column 10");
    /// ```
    pub fn parse<T: Deserialize<'a>>(&self) -> Result<T, ParamsError> {
        de::from_validated(self.as_bytes(), self.long)
    }
}

/// Values are equal when their exact bytes are.
impl PartialEq for RawValue<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for RawValue<'_> {}

impl core::hash::Hash for RawValue<'_> {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.as_bytes().hash(state);
    }
}

impl fmt::Debug for RawValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RawValue({})", String::from_utf8_lossy(self.as_bytes()))
    }
}

impl fmt::Display for RawValue<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `params` of a call: an array (positional) or an object (named), as its exact bytes.
///
/// ```
/// use switchboard::{Message, Parser};
/// let mut p = Parser::new();
/// let msg = p.parse(br#"{"jsonrpc":"2.0","method":"subtract","params":{"minuend":42,"subtrahend":23},"id":3}"#);
/// let Message::Request(req) = msg else { panic!() };
/// let params = req.params().unwrap();
/// assert!(params.is_object());
/// assert_eq!(params.get("subtrahend").unwrap().as_i64(), Some(23));
///
/// #[derive(serde::Deserialize)]
/// struct Sub { minuend: i64, subtrahend: i64 }
/// let s: Sub = params.parse().unwrap();
/// assert_eq!(s.minuend - s.subtrahend, 19);
/// ```
#[derive(Clone, Copy)]
pub struct Params<'a> {
    /// The exact bytes of the array or object.
    bytes: &'a [u8],
    /// The long values of the message, when a session hands the params to a
    /// handler ([`crate::long`]); every view made from them inherits it.
    long: Record<'a>,
}

impl<'a> Params<'a> {
    pub(crate) fn new_validated(bytes: &'a [u8]) -> Self {
        debug_assert!(matches!(bytes.first(), Some(b'[' | b'{')));
        Params {
            bytes,
            long: Record::NONE,
        }
    }

    /// Whether these params carry a record of long values.
    #[cfg(test)]
    pub(crate) fn carries_record(&self) -> bool {
        self.long.is_some()
    }

    /// The params as a raw value.
    #[inline]
    pub fn raw(&self) -> RawValue<'a> {
        RawValue::in_message(self.bytes, self.long)
    }

    /// The exact bytes as received.
    #[inline]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The exact text as received.
    #[inline]
    pub fn as_str(&self) -> &'a str {
        self.raw().as_str()
    }

    /// Positional params (`[...]`).
    #[inline]
    pub fn is_array(&self) -> bool {
        self.bytes[0] == b'['
    }

    /// Named params (`{...}`).
    #[inline]
    pub fn is_object(&self) -> bool {
        self.bytes[0] == b'{'
    }

    /// The positional elements (empty for named params).
    #[inline]
    pub fn iter(&self) -> Elements<'a> {
        Elements {
            b: self.bytes,
            long: self.long,
            pos: if self.is_array() { 1 } else { self.bytes.len() },
        }
    }

    /// The named members (empty for positional params).
    #[inline]
    pub fn members(&self) -> Members<'a> {
        Members {
            b: self.bytes,
            long: self.long,
            pos: if self.is_object() {
                1
            } else {
                self.bytes.len()
            },
        }
    }

    /// The `i`-th positional element.
    #[inline]
    pub fn index(&self, i: usize) -> Option<RawValue<'a>> {
        self.iter().nth(i)
    }

    /// The first named member called `name` (compared after unescaping).
    #[inline]
    pub fn get(&self, name: &str) -> Option<RawValue<'a>> {
        self.members().find(|(k, _)| k.eq_str(name)).map(|(_, v)| v)
    }

    /// Typed extraction through serde; a member name repeated at the top level of
    /// named params is an error ([`ParamsError::is_duplicate`]).
    pub fn parse<T: Deserialize<'a>>(&self) -> Result<T, ParamsError> {
        de::from_validated(self.bytes, self.long)
    }
}

/// Params are equal when their exact bytes are.
impl PartialEq for Params<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.bytes == other.bytes
    }
}

impl Eq for Params<'_> {}

impl core::hash::Hash for Params<'_> {
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        self.bytes.hash(state);
    }
}

/// Params as the parser keeps them in a request or a notification: their
/// bytes, the [`Params`] made when they are asked for (with the record of the
/// message's long values when a session hands them out). The record is not
/// kept here: the parser's messages stay as small as they were.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct ParamsBytes<'a>(&'a [u8]);

impl<'a> ParamsBytes<'a> {
    pub(crate) fn new_validated(bytes: &'a [u8]) -> Self {
        debug_assert!(matches!(bytes.first(), Some(b'[' | b'{')));
        ParamsBytes(bytes)
    }

    /// The params, in the message `long` records.
    #[inline(always)]
    pub(crate) fn in_message(self, long: Record<'a>) -> Params<'a> {
        Params {
            bytes: self.0,
            long,
        }
    }
}

impl fmt::Debug for ParamsBytes<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.in_message(Record::NONE), f)
    }
}

impl fmt::Debug for Params<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Params({})", String::from_utf8_lossy(self.bytes))
    }
}

/// A member name inside an object, still escaped.
///
/// ```
/// use switchboard::{Message, Parser};
/// let mut parser = Parser::new();
/// let input = br#"{"jsonrpc":"2.0","method":"m","params":{"n\u0061me":"ada"},"id":1}"#;
/// let Message::Request(req) = parser.parse(input) else { panic!() };
/// let (key, value) = req.params().unwrap().members().next().unwrap();
/// assert_eq!(key.raw(), br"n\u0061me"); // as written, no copy made
/// assert!(key.eq_str("name")); // compared after unescaping
/// assert!(value.str_eq("ada"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Key<'a> {
    inner: &'a [u8],
}

impl<'a> Key<'a> {
    /// The name's bytes between the quotes, still escaped.
    #[inline]
    pub fn raw(&self) -> &'a [u8] {
        self.inner
    }

    /// Whether the name equals `name` after unescaping.
    ///
    /// Inlined: with `name` a literal, as it usually is, its length and words
    /// are constants, and a name of at most 16 bytes is told by a length compare
    /// and two word compares.
    #[inline(always)]
    pub fn eq_str(&self, name: &str) -> bool {
        body_eq(self.inner, name.as_bytes())
    }

    fn eq_key(&self, other: &Key<'_>) -> bool {
        match (self.inner.contains(&b'\\'), other.inner.contains(&b'\\')) {
            (false, false) => self.inner == other.inner,
            (true, false) => unescape::escaped_eq(self.inner, other.inner),
            (false, true) => unescape::escaped_eq(other.inner, self.inner),
            (true, true) => {
                let mut a = vec![0u8; self.inner.len()];
                let mut b = vec![0u8; other.inner.len()];
                let (na, ea) = unescape::decode_into(self.inner, &mut a);
                let (nb, eb) = unescape::decode_into(other.inner, &mut b);
                // Lone surrogates decode lossily: compare raw then.
                if ea && eb {
                    a[..na] == b[..nb]
                } else {
                    self.inner == other.inner
                }
            }
        }
    }
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// Whether any byte of `v` is a backslash (exact: the borrow-free zero test).
#[inline(always)]
fn word_has_backslash(v: u64) -> bool {
    let x = v ^ (LO * u64::from(b'\\'));
    // Zero bytes of `x`, exactly: `(x & 0x7f..) + 0x7f..` sets the high bit of
    // every non-zero low part; a byte is zero when neither it nor its high bit is set.
    !(((x & !HI).wrapping_add(!HI)) | x) & HI != 0
}

/// Up to 16 bytes as two little-endian words (overlapping; for fewer than 8
/// bytes, 4-byte halves, or the first, middle and last byte): two strings of the
/// same length are equal exactly when their words are.
#[inline(always)]
fn short_words(b: &[u8]) -> (u64, u64) {
    debug_assert!(b.len() <= 16);
    let n = b.len();
    if n >= 8 {
        let w = |at: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&b[at..at + 8]);
            u64::from_le_bytes(w)
        };
        (w(0), w(n - 8))
    } else if n >= 4 {
        let w = |at: usize| {
            let mut w = [0u8; 4];
            w.copy_from_slice(&b[at..at + 4]);
            u64::from(u32::from_le_bytes(w))
        };
        (w(0), w(n - 4))
    } else if n > 0 {
        (
            u64::from_le_bytes([b[0], b[n / 2], b[n - 1], 0, 0, 0, 0, 0]),
            0,
        )
    } else {
        (0, 0)
    }
}

/// Whether the validated, escaped string body `inner` decodes exactly to `name`
/// ([`unescape::escaped_eq`]), deciding the common cases without decoding.
#[inline(always)]
fn body_eq(inner: &[u8], name: &[u8]) -> bool {
    if inner.len() == name.len() {
        // Every escape decodes to fewer bytes than it spells, so a name of the
        // same length matches only byte for byte, without escapes.
        if name.len() <= 16 {
            // Most member names: word compares, no call.
            return short_eq_plain(inner, name);
        }
        inner == name && !name.contains(&b'\\')
    } else {
        // Only escapes can make the raw name longer than `name`.
        inner.len() > name.len() && has_backslash(inner) && unescape::escaped_eq(inner, name)
    }
}

/// `a == b && !b.contains(&b'\\')` for two slices of the same length, at most 16.
#[inline(always)]
fn short_eq_plain(a: &[u8], b: &[u8]) -> bool {
    debug_assert!(a.len() == b.len() && a.len() <= 16);
    let (a0, a1) = short_words(a);
    let (b0, b1) = short_words(b);
    // Equal words cover every byte (the words of 1 to 3 bytes hold each byte at
    // least once, zeros elsewhere, which are no backslash). The backslash test
    // is on `b`'s words: constants when `b` is a literal.
    a0 == b0 && a1 == b1 && !word_has_backslash(b0) && !word_has_backslash(b1)
}

/// Whether `b` holds a backslash: word checks up to 16 bytes, else a search.
#[inline(always)]
fn has_backslash(b: &[u8]) -> bool {
    if b.len() <= 16 {
        let (w0, w1) = short_words(b);
        return word_has_backslash(w0) || word_has_backslash(w1);
    }
    b.contains(&b'\\')
}

/// Iterator over an array's elements.
///
/// ```
/// use switchboard::{Message, Parser};
/// let mut parser = Parser::new();
/// let input = br#"{"jsonrpc":"2.0","method":"sum","params":[1, 2, [3], 4],"id":1}"#;
/// let Message::Request(req) = parser.parse(input) else { panic!() };
/// let elements = req.params().unwrap().iter();
/// assert_eq!(elements.clone().count(), 4);
/// // Each element is a view of its exact bytes; nested values are skipped whole.
/// let sum: i64 = elements.filter_map(|v| v.as_i64()).sum();
/// assert_eq!(sum, 7);
/// ```
#[derive(Clone, Debug)]
pub struct Elements<'a> {
    b: &'a [u8],
    /// The message's long values ([`crate::long`]), handed to the elements.
    long: Record<'a>,
    /// Index just inside the `[` or after a `,`; `b.len()` when done.
    pos: usize,
}

impl Elements<'_> {
    /// Where the iterator stands, as an offset into the array's bytes, to resume
    /// it later with [`RawValue::array_iter_at`]. Not a stable API.
    #[doc(hidden)]
    #[inline]
    pub fn offset(&self) -> usize {
        self.pos
    }
}

impl<'a> Iterator for Elements<'a> {
    type Item = RawValue<'a>;

    #[inline]
    fn next(&mut self) -> Option<RawValue<'a>> {
        let start = skip_ws(self.b, self.pos);
        match self.b.get(start) {
            None | Some(b']') => {
                self.pos = self.b.len();
                None
            }
            Some(_) => {
                let end = skip_value_fast(self.b, start, self.long);
                self.pos = after_delimiter(self.b, end);
                Some(RawValue::in_message(&self.b[start..end], self.long))
            }
        }
    }

    /// The number of elements left, without delimiting each one: the array's
    /// commas outside strings and nested values, found 64 bytes a step (or, in
    /// params a [`Session`](crate::Session) handed to a handler, and the views
    /// made from them, when a long string is most of the rest, element by
    /// element, jumping over that string).
    ///
    /// ```
    /// use switchboard::{Message, Parser};
    /// let mut p = Parser::new();
    /// let Message::Request(req) = p.parse(br#"{"jsonrpc":"2.0","method":"m","params":[1,[2,3],"a,b"],"id":1}"#)
    /// else { panic!() };
    /// let mut elements = req.params().unwrap().iter();
    /// assert_eq!(elements.clone().count(), 3);
    /// elements.next();
    /// assert_eq!(elements.count(), 2);
    /// ```
    #[inline]
    fn count(self) -> usize {
        let from = skip_ws(self.b, self.pos);
        if self.long.mostly(self.b, from) {
            // A long value the scanner recorded is most of the rest: element
            // by element, jumping over it.
            return self.fold(0, |n, _| n + 1);
        }
        simd::count_values(self.b, from)
    }
}

/// Iterator over an object's members.
///
/// A member whose value is an array or object is handed out before that value
/// is delimited ([`RawValue`] finds its end when asked for): stopping after it
/// (`break`, [`Iterator::find`], [`Params::get`]) leaves it unread, and only
/// the next step past it skips it.
///
/// ```
/// use switchboard::{Message, Parser};
/// let mut parser = Parser::new();
/// let input = br#"{"jsonrpc":"2.0","method":"m","params":{"a":1,"b":{"c":[2]},"d":"x"},"id":1}"#;
/// let Message::Request(req) = parser.parse(input) else { panic!() };
/// let mut names = Vec::new();
/// for (key, value) in req.params().unwrap().members() {
///     names.push(std::str::from_utf8(key.raw()).unwrap());
///     if key.eq_str("b") {
///         assert_eq!(value.as_bytes(), br#"{"c":[2]}"#);
///     }
/// }
/// assert_eq!(names, ["a", "b", "d"]);
/// ```
#[derive(Clone, Debug)]
pub struct Members<'a> {
    b: &'a [u8],
    /// The message's long values ([`crate::long`]), handed to the values.
    long: Record<'a>,
    /// Just inside the `{` or after a `,` (whitespace may follow); at the first
    /// byte of the last member's array or object value when that value has not
    /// been skipped yet (a position where a member name cannot start); `b.len()`
    /// when done.
    pos: usize,
}

impl<'a> Members<'a> {
    /// Where the iterator stands, as an offset into the object's bytes, to resume
    /// it later with [`RawValue::object_iter_at`]. Not a stable API.
    #[doc(hidden)]
    #[inline]
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// The next member, its value delimited now (exactly its own bytes, even an
    /// array or object), and the iterator moved past it: for callers that want
    /// every value's bytes, so that no value is walked twice (as `next` then
    /// [`RawValue::as_bytes`], then `next` again, would).
    ///
    /// ```
    /// use switchboard::{Message, Parser};
    /// let mut p = Parser::new();
    /// let Message::Request(req) = p.parse(br#"{"jsonrpc":"2.0","method":"m","params":{"a":[1,{"b":2}],"c":"d"},"id":1}"#)
    /// else { panic!() };
    /// let mut members = req.params().unwrap().members();
    /// let (key, value) = members.next_delimited().unwrap();
    /// assert!(key.eq_str("a"));
    /// assert_eq!(value.as_bytes(), br#"[1,{"b":2}]"#);
    /// let (key, value) = members.next_delimited().unwrap();
    /// assert!(key.eq_str("c") && value.str_eq("d"));
    /// assert!(members.next_delimited().is_none());
    /// ```
    #[inline]
    pub fn next_delimited(&mut self) -> Option<(Key<'a>, RawValue<'a>)> {
        let (key, value) = self.next()?;
        if !value.open {
            return Some((key, value));
        }
        // `next` left `pos` at the value's first byte: step past it here.
        let bytes = value.close();
        self.pos = skip_ws(self.b, self.pos + bytes.len()) + 1;
        Some((key, RawValue::in_message(bytes, self.long)))
    }

    /// The first byte of the next member's name (a `"`), skipping the value left
    /// open by the previous step first; `None` at the end of the object (and
    /// the iterator is then done).
    #[inline(always)]
    fn next_name(&mut self) -> Option<usize> {
        let b = self.b;
        let mut ks = skip_ws(b, self.pos);
        match b.get(ks) {
            Some(b'"') => return Some(ks),
            Some(b'[' | b'{') => {
                // The previous member's value, handed out open: skip it now.
                ks = skip_ws(b, after_delimiter(b, skip_nested(b, ks)));
                if b.get(ks) == Some(&b'"') {
                    return Some(ks);
                }
            }
            _ => {}
        }
        self.pos = b.len();
        None
    }
}

impl<'a> Iterator for Members<'a> {
    type Item = (Key<'a>, RawValue<'a>);

    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let ks = self.next_name()?;
        let b = self.b;
        let ke = skip_string(b, ks);
        let colon = skip_ws(b, ke);
        let vs = skip_ws(b, colon + 1);
        let key = Key {
            inner: &b[ks + 1..ke - 1],
        };
        // One dispatch on the value's first byte.
        let c = b.get(vs).copied().unwrap_or(0);
        let ve = if c.is_ascii_digit() {
            skip_digits_fast(b, vs, self.long)
        } else if c == b'"' {
            skip_string_value(b, vs, self.long)
        } else if c | 0x20 == b'{' {
            // `[` or `{`, left open: skipped by the next step, if there is one.
            self.pos = vs;
            return Some((key, RawValue::open_container(&b[vs..], self.long)));
        } else {
            skip_value(b, vs, self.long)
        };
        // Past the `,` or the closing `}`: what follows a closing bracket in a
        // parent (`,`, `]`, `}`, whitespace; an open value's bytes run on) is no
        // member name, so `next_name` ends there.
        self.pos = skip_ws(b, ve) + 1;
        Some((key, RawValue::in_message(&b[vs..ve], self.long)))
    }

    /// The number of members left, without delimiting each one: the object's
    /// commas outside strings and nested values, found 64 bytes a step (or, as
    /// for [`Elements`], member by member, jumping over a long string).
    ///
    /// ```
    /// use switchboard::{Message, Parser};
    /// let mut p = Parser::new();
    /// let Message::Request(req) = p.parse(br#"{"jsonrpc":"2.0","method":"m","params":{"a":{"x":1,"y":2},"b":"c,d","e":[1,2]},"id":1}"#)
    /// else { panic!() };
    /// let params = req.params().unwrap();
    /// assert_eq!(params.members().count(), 3);
    /// let a = params.get("a").unwrap();
    /// assert_eq!(a.object_iter().unwrap().count(), 2);
    /// ```
    #[inline]
    fn count(mut self) -> usize {
        match self.next_name() {
            Some(ks) if self.long.mostly(self.b, ks) => {
                // As `Elements::count`: member by member, jumping over the
                // long value.
                self.pos = ks;
                self.fold(0, |n, _| n + 1)
            }
            Some(ks) => simd::count_values(self.b, ks),
            None => 0,
        }
    }
}

/// Where the next value of an array or object starts looking, given `end`, the
/// end of a value in it: just past the `,` that follows (whitespace skipped), or
/// `b.len()` (done) at its closing bracket, which may be followed by more JSON
/// when the container is an open [`RawValue`].
#[inline(always)]
fn after_delimiter(b: &[u8], end: usize) -> usize {
    let d = skip_ws(b, end);
    if b.get(d) == Some(&b',') {
        d + 1
    } else {
        b.len()
    }
}

/// A run of 1 to 20 ASCII digits as `u64`; `None` for anything else (a sign, a
/// fraction, an exponent, a non-number) or on overflow.
#[inline]
fn parse_digits(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 20 {
        return None;
    }
    if digits.len() < 20 {
        // At most 19 digits: below 10^19 < 2^64, no overflow to check.
        let mut v: u64 = 0;
        for &c in digits {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            v = v * 10 + u64::from(d);
        }
        return Some(v);
    }
    let mut v: u64 = 0;
    for &c in digits {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(d))?;
    }
    Some(v)
}

#[inline]
fn skip_ws(b: &[u8], mut p: usize) -> usize {
    while matches!(b.get(p), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        tick(1);
        p += 1;
    }
    p
}

/// End of a validated string starting at its quote.
#[inline(always)]
fn skip_string(b: &[u8], mut p: usize) -> usize {
    p += 1;
    let start = p;
    loop {
        let from = p;
        // Validated already: only the closing quote matters, so only quotes and
        // backslashes (which escape the byte after them) stop the search.
        p = simd::find_quote_or_backslash(b, p);
        tick(1 + p.saturating_sub(from) / 16);
        match b.get(p) {
            Some(b'\\') if p - start >= 64 => {
                // Long text with escapes (one or two a line): no longer escape
                // by escape.
                return simd::skip_text(b, p);
            }
            Some(b'\\') => p += 2,
            _ => return p + 1,
        }
    }
}

/// [`skip_string`] for a string that is a value (not a member name) in the
/// message `long` records: a long one the scanner noted is not walked again
/// ([`Record::end`]).
#[inline(always)]
fn skip_string_value(b: &[u8], p: usize, long: Record<'_>) -> usize {
    if long.is_some() && b.len().saturating_sub(p) >= long::LONG {
        return skip_long_string(b, p, long);
    }
    skip_string(b, p)
}

/// [`skip_string_value`] where the string may be long, out of line: the walks'
/// inlined code stays small. A string that ends within 64 bytes is not looked up.
#[inline(never)]
fn skip_long_string(b: &[u8], p: usize, long: Record<'_>) -> usize {
    let near = b.len().min(p + 65);
    let q = simd::find_quote_or_backslash(&b[..near], p + 1);
    if b.get(q) == Some(&b'"') && q < near {
        return q + 1;
    }
    long.end(b, p).unwrap_or_else(|| skip_string(b, p))
}

/// [`skip_value`], with the most common params value, a short non-negative
/// integer followed by `,`, `]` or `}`, skipped inline (no call).
#[inline(always)]
fn skip_value_fast(b: &[u8], p: usize, long: Record<'_>) -> usize {
    if let Some(b'0'..=b'9') = b.get(p) {
        return skip_digits_fast(b, p, long);
    }
    skip_value(b, p, long)
}

/// [`skip_value`] for a number starting with a digit at `p`: a run of digits
/// followed by `,`, `]` or `}` inline, anything else by [`skip_value`].
#[inline(always)]
fn skip_digits_fast(b: &[u8], p: usize, long: Record<'_>) -> usize {
    debug_assert!(matches!(b.get(p), Some(b'0'..=b'9')));
    let mut q = p + 1;
    while let Some(b'0'..=b'9') = b.get(q) {
        tick(1);
        q += 1;
    }
    if matches!(b.get(q), Some(b',' | b']' | b'}')) {
        return q;
    }
    skip_value(b, p, long)
}

/// End of the validated value starting at `p`, in the message `long` records
/// (iterative: depth costs no stack).
#[inline]
pub(crate) fn skip_value(b: &[u8], p: usize, long: Record<'_>) -> usize {
    match b.get(p) {
        Some(b'"') => skip_string_value(b, p, long),
        Some(b'[' | b'{') => skip_nested(b, p),
        _ => {
            // A number or literal: up to the next delimiter.
            let mut p = p;
            while let Some(&c) = b.get(p) {
                tick(1);
                if matches!(c, b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r') {
                    break;
                }
                p += 1;
            }
            p
        }
    }
}

/// End of the validated array or object starting at `p`: 64 bytes a step,
/// brackets inside strings masked out ([`simd::skip_container`]).
#[inline(never)]
fn skip_nested(b: &[u8], p: usize) -> usize {
    simd::skip_container(b, p)
}

fn check_unique(members: Members<'_>) -> Result<(), ParamsError> {
    const SMALL: usize = 32;
    let mut seen: [Key<'_>; SMALL] = [Key { inner: b"" }; SMALL];
    let mut members = members;
    let mut n = 0;
    while let Some((k, _)) = members.next() {
        tick(1);
        if n == SMALL {
            // Many members: fall back to a set of decoded names.
            let mut set = std::collections::HashSet::new();
            for key in seen
                .iter()
                .copied()
                .chain(std::iter::once(k))
                .chain(members.map(|(k, _)| k))
            {
                tick(1);
                let mut buf = vec![0u8; key.inner.len()];
                let (len, exact) = unescape::decode_into(key.inner, &mut buf);
                buf.truncate(len);
                let name = if exact { buf } else { key.inner.to_vec() };
                if !set.insert(name) {
                    return Err(ParamsError::duplicate(key));
                }
            }
            return Ok(());
        }
        if seen[..n].iter().any(|s| s.eq_key(&k)) {
            return Err(ParamsError::duplicate(k));
        }
        seen[n] = k;
        n += 1;
    }
    Ok(())
}

/// Deserializes `T` from params, or from `null` when they are absent (the
/// typed handlers' rule).
pub(crate) fn parse_or_null<'a, T: Deserialize<'a>>(
    params: Option<Params<'a>>,
) -> Result<T, ParamsError> {
    match params {
        Some(p) => de::from_validated(p.bytes, p.long),
        None => de::from_validated(b"null", Record::NONE),
    }
}

/// Why typed extraction of params failed; answered with -32602 Invalid params.
///
/// ```
/// use switchboard::{Message, Parser};
/// #[derive(Debug, serde::Deserialize)]
/// struct Transfer {
///     to: String,
///     amount: u64,
/// }
/// let mut parser = Parser::new();
/// let input = br#"{"jsonrpc":"2.0","method":"m","params":{"to":"bob","amount":-5},"id":1}"#;
/// let Message::Request(req) = parser.parse(input) else { panic!() };
/// let err = req.params().unwrap().parse::<Transfer>().unwrap_err();
/// assert!(!err.is_duplicate());
/// assert!(err.detail().contains("-5"), "{}", err.detail());
///
/// let input = br#"{"jsonrpc":"2.0","method":"m","params":{"to":"bob","to":"eve","amount":1},"id":1}"#;
/// let Message::Request(req) = parser.parse(input) else { panic!() };
/// let err = req.params().unwrap().parse::<Transfer>().unwrap_err();
/// assert!(err.is_duplicate());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamsError {
    duplicate: bool,
    detail: String,
}

impl ParamsError {
    fn mismatch(detail: String) -> Self {
        ParamsError {
            duplicate: false,
            detail,
        }
    }

    fn duplicate(k: Key<'_>) -> Self {
        ParamsError {
            duplicate: true,
            detail: format!("duplicate member `{}`", String::from_utf8_lossy(k.inner)),
        }
    }

    /// A member name appeared twice.
    pub fn is_duplicate(&self) -> bool {
        self.duplicate
    }

    /// A human-readable description of what did not fit.
    pub fn detail(&self) -> &str {
        &self.detail
    }
}

impl fmt::Display for ParamsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid params: {}", self.detail)
    }
}

impl std::error::Error for ParamsError {}

#[cfg(test)]
mod tests {
    use super::RawValue;

    /// `count` on members and elements (a walk of the commas) equals counting
    /// them one by one, from the start and after every `next`, on arrays and
    /// objects with whitespace, nested values, strings holding commas, brackets
    /// and escapes, long enough to span several 64-byte blocks; params of the
    /// other kind count none.
    #[test]
    fn count_equals_walking_every_value() {
        let values: [&[u8]; 10] = [
            b"[]",
            b"{}",
            b"[ ]",
            b"{ \n}",
            b"[1]",
            br#"{"a":1}"#,
            br#"[1 , [2,{"x":[3,4]}] ,"a,b]}\",c" , {"k":"v"},null,true]"#,
            br#"{"name":"get_forecast","arguments":{"location":{"city":"Z\u00fcrich","country":"CH","coordinates":{"lat":47.3769,"lon":8.5417}},"days":3,"units":"metric","include":["hourly","alerts","air_quality"],"options":{"language":"de-CH","cache":true,"maxAgeSeconds":600}},"_meta":{"progressToken":"p-42"}}"#,
            br#"{ "a" : [ 1 , 2 ] , "b,]" : { "c" : "}" } , "d" : "\\" }"#,
            br#"["0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz,[{", [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30], "x", 1]"#,
        ];
        for v in values {
            let raw = RawValue::new_validated(v);
            let ctx = String::from_utf8_lossy(v);
            if let Some(mut it) = raw.object_iter() {
                loop {
                    assert_eq!(
                        it.clone().count(),
                        it.clone().fold(0, |n, _| n + 1),
                        "{ctx}"
                    );
                    if it.next().is_none() {
                        break;
                    }
                }
                let params = super::Params::new_validated(v);
                assert_eq!(params.iter().count(), 0);
                assert_eq!(
                    params.members().count(),
                    raw.object_iter().unwrap().fold(0, |n, _| n + 1)
                );
            }
            if let Some(mut it) = raw.array_iter() {
                loop {
                    assert_eq!(
                        it.clone().count(),
                        it.clone().fold(0, |n, _| n + 1),
                        "{ctx}"
                    );
                    if it.next().is_none() {
                        break;
                    }
                }
                let params = super::Params::new_validated(v);
                assert_eq!(params.members().count(), 0);
                assert_eq!(
                    params.iter().count(),
                    raw.array_iter().unwrap().fold(0, |n, _| n + 1)
                );
            }
        }
    }

    /// Checks `v` against `want` (what serde_json reads from the same text):
    /// its bytes are exactly one value equal to `want`; its members and elements,
    /// walked with `count` taken before every step, match `want`'s, recursively.
    /// Members are checked both ways: read when handed out (still open) and read
    /// after the iterator moved past them (skipped by then).
    fn check_walk(v: RawValue<'_>, want: &serde_json::Value) {
        let text = String::from_utf8_lossy(v.as_bytes()).into_owned();
        let got: serde_json::Value = serde_json::from_slice(v.as_bytes()).expect(&text);
        assert_eq!(&got, want, "{text}");
        assert_eq!(v, RawValue::new_validated(v.as_bytes()), "{text}");
        if let Some(mut it) = v.object_iter() {
            let map = want.as_object().expect(&text);
            let mut seen = Vec::new();
            loop {
                assert_eq!(it.clone().count(), map.len() - seen.len(), "{text}");
                let Some((k, m)) = it.next() else { break };
                let k = std::str::from_utf8(k.raw()).unwrap().to_owned();
                check_walk(m, &map[&k]);
                seen.push((k, m));
            }
            assert_eq!(it.next(), None, "{text}");
            assert_eq!(it.count(), 0, "{text}");
            for (k, m) in seen {
                check_walk(m, &map[&k]);
            }
        }
        if let Some(mut it) = v.array_iter() {
            let list = want.as_array().expect(&text);
            let mut i = 0;
            loop {
                assert_eq!(it.clone().count(), list.len() - i, "{text}");
                let Some(e) = it.next() else { break };
                check_walk(e, &list[i]);
                i += 1;
            }
            assert_eq!(i, list.len(), "{text}");
            assert_eq!(it.next(), None, "{text}");
            assert_eq!(it.count(), 0, "{text}");
        }
    }

    /// Values handed out before they are delimited (arrays and objects met as
    /// members) read as exactly their own bytes, however deep, wherever they
    /// sit in their object (first, middle, last), with whitespace, brackets and
    /// commas in strings, and containers closing right before their parent does;
    /// members and elements walked inside them stop at their closing bracket.
    #[test]
    fn members_left_open_read_exactly() {
        let docs: [&str; 9] = [
            r#"{"a":[1,2],"b":[3]}"#,
            r#"{"a":{"x":1},"b":{"y":[2,[3]]},"c":{}}"#,
            r#"{ "a" : [ 1 , { "b" : [ ] } ] , "c" : { "d" : { "e" : { } } } }"#,
            r#"{"a":[],"b":{},"c":[[]],"d":[{}],"e":{"f":[]}}"#,
            r#"{"s":"a,b]}","o":{"t":"],}{[","u":[","]},"n":-1.5e3,"z":null}"#,
            r#"{"outer":{"inner":{"deep":[[[1]],{"k":{"k":"v"}}]},"next":[true,false]},"tail":0}"#,
            r#"{"name":"get_forecast","arguments":{"location":{"city":"Zürich","country":"CH","coordinates":{"lat":47.3769,"lon":8.5417}},"days":3,"units":"metric","include":["hourly","alerts","air_quality"],"options":{"language":"de-CH","cache":true,"maxAgeSeconds":600}},"_meta":{"progressToken":"p-42"}}"#,
            r#"{"x":{"a":[1,2,3]}}"#,
            r#"[{"a":[1]},[{"b":{"c":2}}],{"d":{}}]"#,
        ];
        for doc in docs {
            let want: serde_json::Value = serde_json::from_str(doc).unwrap();
            check_walk(RawValue::new_validated(doc.as_bytes()), &want);
            let params = super::Params::new_validated(doc.as_bytes());
            if let Some(map) = want.as_object() {
                for (k, w) in map {
                    check_walk(params.get(k).unwrap(), w);
                }
            }
        }
        // Long values, spanning several 64-byte blocks, open and skipped
        // (under Miri, two or three blocks each).
        let n = if cfg!(miri) { 3 } else { 1 };
        let long = format!(
            r#"{{"a":{{"list":[{}],"text":"{}"}},"b":[{}],"c":{{"d":1}}}}"#,
            (0..60 / n)
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(","),
            r#"x]},\""#.repeat(40 / n),
            (0..30 / n)
                .map(|i| format!(r#"{{"i":{i}}}"#))
                .collect::<Vec<_>>()
                .join(","),
        );
        let want: serde_json::Value = serde_json::from_str(&long).unwrap();
        check_walk(RawValue::new_validated(long.as_bytes()), &want);
    }

    /// Member names compare after unescaping, whatever the lengths.
    #[test]
    fn key_eq_str_unescapes() {
        let cases: [(&[u8], &str, bool); 10] = [
            (b"minuend", "minuend", true),
            (b"minuend", "minuenD", false),
            (b"minuend", "minuends", false),
            (b"min\\u0075end", "minuend", true),
            (b"\\u006dinuend", "minuend", true),
            (b"min\\u0075end", "minuenx", false),
            (b"a\\\\b", "a\\b", true),
            (b"a\\b", "a\\b", false), // `\b` is a backspace, not a backslash and `b`
            (b"a\\/", "a/", true),
            (b"", "", true),
        ];
        for (raw, name, want) in cases {
            let key = super::Key { inner: raw };
            assert_eq!(
                key.eq_str(name),
                want,
                "{} vs {name}",
                String::from_utf8_lossy(raw)
            );
        }
    }

    /// `as_plain_str` borrows plain strings of every length class (word checks,
    /// 16-byte steps, the long search) and refuses escapes; non-ASCII without
    /// escapes is borrowed too.
    #[test]
    fn plain_str_of_every_length() {
        for len in [0usize, 1, 3, 7, 8, 15, 16, 17, 31, 32, 33, 42, 64, 65, 100] {
            let body: String = (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
            let json = format!("\"{body}\"");
            let v = RawValue::new_validated(json.as_bytes());
            assert_eq!(v.as_plain_str(), Some(body.as_str()), "{json}");
            if len > 0 {
                let escaped = format!("\"{}\\n{}\"", &body[..len / 2], &body[len / 2..]);
                let v = RawValue::new_validated(escaped.as_bytes());
                assert_eq!(v.as_plain_str(), None, "{escaped}");
                let accented = format!("\"{}é{}\"", &body[..len / 2], &body[len / 2..]);
                let v = RawValue::new_validated(accented.as_bytes());
                let want = format!("{}é{}", &body[..len / 2], &body[len / 2..]);
                assert_eq!(v.as_plain_str(), Some(want.as_str()), "{accented}");
            }
        }
        assert_eq!(RawValue::new_validated(b"12").as_plain_str(), None);
    }

    /// `eq_str` (word compares up to 16 bytes, a search beyond) agrees with
    /// decoding the key and comparing, for generated keys and names of every
    /// length up to 24 bytes, escapes and backslashes in either.
    #[test]
    fn key_eq_str_matches_decoding() {
        let pieces: [&str; 8] = ["a", "b", "\\\\", "\\n", "\\u0061", "\\\"", "é", "xyz0123"];
        let chars: [&str; 7] = ["a", "b", "\\", "\n", "\"", "é", "\\\\"];
        let mut seed = 0x006b_6579_u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        let rounds = if cfg!(miri) { 200 } else { 20_000 };
        for _ in 0..rounds {
            let mut key = String::new();
            let target = next() % 25;
            while key.len() < target {
                key.push_str(pieces[next() % pieces.len()]);
            }
            let mut decoded = vec![0u8; key.len()];
            let (n, exact) = super::unescape::decode_into(key.as_bytes(), &mut decoded);
            decoded.truncate(n);
            let decoded = String::from_utf8(decoded).unwrap();
            let mut names = vec![decoded.clone(), key.clone()];
            let mut other = String::new();
            let target = next() % 25;
            while other.len() < target {
                other.push_str(chars[next() % chars.len()]);
            }
            names.push(other);
            if !decoded.is_empty() {
                // One byte changed, at any position.
                let mut b = decoded.clone().into_bytes();
                let i = next() % b.len();
                b[i] = if b[i] == b'a' { b'b' } else { b'a' };
                if let Ok(s) = String::from_utf8(b) {
                    names.push(s);
                }
            }
            let k = super::Key {
                inner: key.as_bytes(),
            };
            for name in &names {
                let want = exact && decoded == *name;
                assert_eq!(k.eq_str(name), want, "{key:?} vs {name:?}");
            }
        }
    }

    /// The 64-byte skipping of validated strings finds the same end as a byte by
    /// byte walk, for strings of every length up to 300 bytes made of runs of
    /// backslashes (odd and even, across block boundaries), escaped quotes and
    /// plain bytes, at every offset of a block.
    #[test]
    #[cfg_attr(miri, ignore)] // thousands of strings (the skip tests in simd::skip run under Miri)
    fn skip_string_matches_a_byte_walk() {
        fn walk(b: &[u8], p: usize) -> usize {
            let mut i = p + 1;
            loop {
                match b.get(i) {
                    Some(b'\\') => i += 2,
                    Some(b'"') | None => return i + 1,
                    Some(_) => i += 1,
                }
            }
        }
        let mut next = crate::test_rng::lcg(0x5eed_u64);
        let pieces: [&[u8]; 7] = [
            b"a",
            b"\\\\",
            b"\\\"",
            b"\\n",
            b"xyz0123456789",
            b"\\u00e9",
            b"\\\\\\\\",
        ];
        for _ in 0..4000 {
            let mut s = vec![b' '; next() % 70];
            let start = s.len();
            s.push(b'"');
            let target = next() % 300;
            while s.len() - start < target {
                s.extend_from_slice(pieces[next() % pieces.len()]);
            }
            s.push(b'"');
            s.extend_from_slice(&b"],\"k\":\"v\"}"[..next() % 11]);
            s.extend(std::iter::repeat_n(b'x', next() % 80));
            assert_eq!(
                super::skip_string(&s, start),
                walk(&s, start),
                "{}",
                String::from_utf8_lossy(&s)
            );
        }
    }

    /// The integer accessors agree with `str::parse` on every kind of number
    /// token (and refuse non-numbers), boundaries and overflow included.
    #[test]
    fn integer_accessors_match_str_parse() {
        let mut tokens: Vec<String> = [
            "0",
            "-0",
            "7",
            "-7",
            "42",
            "10",
            "100",
            "1.5",
            "-1.5",
            "1e3",
            "1E3",
            "-1e-3",
            "0.0",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "-9223372036854775809",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999",
            "100000000000000000000",
            "123456789012345678901234567890",
            "null",
            "true",
            "false",
            "\"1\"",
            "[1]",
            "{}",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for p in 0..64u32 {
            for d in [-1i128, 0, 1] {
                let v = (1i128 << p) + d;
                tokens.push(v.to_string());
                tokens.push((-v).to_string());
            }
        }
        for t in &tokens {
            let v = RawValue::new_validated(t.as_bytes());
            let number = !matches!(t.as_bytes()[0], b'n' | b't' | b'f' | b'"' | b'[' | b'{');
            let want_i = if number { t.parse::<i64>().ok() } else { None };
            let want_u = if number { t.parse::<u64>().ok() } else { None };
            assert_eq!(v.as_i64(), want_i, "as_i64 {t}");
            assert_eq!(v.as_u64(), want_u, "as_u64 {t}");
        }
    }

    /// `next_delimited` hands out the same members as `next` then `as_bytes`,
    /// each value exactly its own bytes; an iterator resumed from its `offset`
    /// (arrays and objects) goes on exactly as the original does, at every step.
    #[test]
    fn str_eq_agrees_with_decoding() {
        // Bodies with and without escapes, short and long (both sides of the
        // 16-byte word compare); names: each body's decoding, its raw form, and
        // every prefix and one-byte extension and change of both.
        let bodies: [&str; 12] = [
            "",
            "a",
            "latest",
            r"\n",
            r"a\\b",
            r"su\u0062tract",
            r"\ud83d\ude00",
            r"\ud800",
            "exactly16bytes!!",
            "seventeen bytes!!",
            r"0x407d73d8a49eeb85d32cf465507dd71d507100c1",
            r"long\tname with an escape past sixteen",
        ];
        let mut tried = 0;
        for body in bodies {
            let quoted = format!("\"{body}\"");
            let v = RawValue::new_validated(quoted.as_bytes());
            let decoded: String =
                serde_json::from_str(&quoted).unwrap_or_else(|_| "\u{FFFD}".into()); // serde_json refuses the lone surrogate
            let mut names = vec![decoded.clone(), body.to_string()];
            for base in [decoded.as_bytes(), body.as_bytes()] {
                for n in 0..=base.len() {
                    names.push(String::from_utf8_lossy(&base[..n]).into_owned());
                }
                for n in 0..base.len() {
                    let mut b = base.to_vec();
                    b[n] ^= 1;
                    names.push(String::from_utf8_lossy(&b).into_owned());
                }
                let mut b = base.to_vec();
                b.push(b'x');
                names.push(String::from_utf8_lossy(&b).into_owned());
            }
            for name in &names {
                let want = crate::unescape::escaped_eq(body.as_bytes(), name.as_bytes());
                assert_eq!(v.str_eq(name), want, "{body:?} vs {name:?}");
                if !body.contains(r"\ud800") {
                    assert_eq!(want, *name == decoded, "{body:?} vs {name:?}");
                }
                tried += 1;
            }
        }
        assert!(tried > 300);
        // Not a string: never equal.
        assert!(!RawValue::new_validated(b"1").str_eq("1"));
    }

    #[test]
    fn next_delimited_and_resumed_iterators_agree() {
        let docs: [&str; 6] = [
            r#"{"a":[1,2],"b":[3]}"#,
            r#"{ "a" : [ 1 , { "b" : [ ] } ] , "c" : { "d" : { "e" : { } } } , "f" : 1 }"#,
            r#"{"s":"a,b]}","o":{"t":"],}{["},"n":-1.5e3,"z":null,"\u0061":{}}"#,
            r#"[1, [2, {"x":[3]}], "a,]", {"k":"v"}, null, true, -0.5e1]"#,
            r#"[ ]"#,
            r#"{}"#,
        ];
        for doc in docs {
            let v = RawValue::new_validated(doc.as_bytes());
            if let Some(mut it) = v.object_iter() {
                let want: Vec<_> = v
                    .object_iter()
                    .unwrap()
                    .map(|(k, m)| (k, m.as_bytes()))
                    .collect();
                let mut got = Vec::new();
                loop {
                    let rest: Vec<_> = v
                        .object_iter_at(it.offset())
                        .unwrap()
                        .map(|(k, m)| (k, m.as_bytes()))
                        .collect();
                    assert_eq!(rest, want[got.len()..], "{doc}");
                    let Some((k, m)) = it.next_delimited() else {
                        break;
                    };
                    assert!(!m.open, "{doc}");
                    got.push((k, m.as_bytes()));
                }
                assert_eq!(got, want, "{doc}");
                assert_eq!(v.array_iter_at(1).map(|e| e.count()), None);
            }
            if let Some(mut it) = v.array_iter() {
                let want: Vec<_> = v.array_iter().unwrap().map(|e| e.as_bytes()).collect();
                let mut n = 0;
                loop {
                    let rest: Vec<_> = v
                        .array_iter_at(it.offset())
                        .unwrap()
                        .map(|e| e.as_bytes())
                        .collect();
                    assert_eq!(rest, want[n..], "{doc}");
                    if it.next().is_none() {
                        break;
                    }
                    n += 1;
                }
                assert_eq!(n, want.len());
                assert!(v.object_iter_at(1).is_none());
            }
        }
    }

    /// `unescape_into` writes exactly what decoding gives, for every buffer
    /// length: `None` and the buffer untouched below the decoded length.
    #[test]
    fn unescape_into_every_buffer_length() {
        let strings: [&str; 7] = [
            r#""""#,
            r#""plain""#,
            r#""caf\u00e9""#,
            r#""a\nb\t\"\\\/""#,
            r#""\ud834\udd1e clef""#,
            r#""lone \ud800 x""#,
            r#""é€ raw""#,
        ];
        for s in strings {
            let v = RawValue::new_validated(s.as_bytes());
            let want: String =
                serde_json::from_str::<String>(s).unwrap_or_else(|_| "lone \u{FFFD} x".to_owned());
            assert_eq!(v.unescaped_len(), Some(want.len()), "{s}");
            for len in 0..s.len() + 2 {
                let mut buf = vec![0xAAu8; len];
                let got = v.unescape_into(&mut buf);
                if len < want.len() {
                    assert_eq!(got, None, "{s} into {len}");
                    assert!(buf.iter().all(|&b| b == 0xAA), "{s} into {len}");
                } else {
                    assert_eq!(got, Some(want.len()), "{s} into {len}");
                    assert_eq!(&buf[..want.len()], want.as_bytes(), "{s} into {len}");
                    assert!(buf[want.len()..].iter().all(|&b| b == 0xAA));
                }
            }
        }
        let n = RawValue::new_validated(b"12");
        assert_eq!(
            (n.unescaped_len(), n.unescape_into(&mut [0; 8])),
            (None, None)
        );
    }

    /// Bytes that are not one validated value (what a binding could be handed
    /// back forged: any slice of a valid message, and bytes that are no JSON)
    /// never make a reader read outside them (Miri checks this) nor loop
    /// forever: every reader returns, or panics (which the C boundary catches).
    #[test]
    #[cfg_attr(
        target_os = "wasi",
        ignore = "needs unwinding: a panic aborts on wasm32-wasip1"
    )]
    fn readers_on_garbage_stay_inside() {
        let doc =
            br#"{"a":[1,{"b":"x\"]}"},-2.5e3],"c\u0064":{"e":"\ud83d\ude00\n"},"f":[true,null]}"#;
        let mut inputs: Vec<Vec<u8>> = Vec::new();
        let step = if cfg!(miri) { 7 } else { 1 };
        for i in (0..doc.len()).step_by(step) {
            for j in (i + 1..=doc.len()).step_by(step) {
                inputs.push(doc[i..j].to_vec());
            }
        }
        inputs.extend(
            [
                &b"\""[..],
                b"[",
                b"{",
                b"[\"",
                b"{\"",
                b"{\"a\"",
                b"[,,",
                b"\"\\",
                b"\"\\u12",
            ]
            .map(<[u8]>::to_vec),
        );
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        for b in &inputs {
            let _ = std::panic::catch_unwind(|| {
                let v = RawValue::from_validated(b).unwrap();
                let mut out = [0u8; 8];
                let _ = (v.kind(), v.as_bool(), v.as_i64(), v.as_u64(), v.as_f64());
                let _ = (
                    v.as_plain_str(),
                    v.unescaped_len(),
                    v.unescape_into(&mut out),
                );
                let _ = (v.str_eq("a"), v.as_bytes().len());
                if let Some(it) = v.array_iter() {
                    let _ = it.clone().count();
                    for e in it.take(100) {
                        let _ = (e.as_bytes().len(), e.as_i64());
                    }
                }
                if let Some(mut it) = v.object_iter() {
                    let _ = it.clone().count();
                    let _ = v.object_iter().unwrap().find(|(k, _)| k.eq_str("cd"));
                    for _ in 0..100 {
                        let Some((k, m)) = it.next_delimited() else {
                            break;
                        };
                        let _ = (k.raw().len(), m.as_bytes().len());
                    }
                }
            });
        }
        std::panic::set_hook(prev);
    }
}
