//! The one-pass validating scanner.
//!
//! It checks a whole message against RFC 8259 (grammar, UTF-8, depth) and records
//! the byte spans of the members that JSON-RPC cares about, at depth 1 (a single
//! object) or depth 2 (the objects of a batch). Nesting below that is validated by
//! an iterative loop whose only state is one bit per level, so the call stack never
//! grows with the input.

use super::Error;
use super::error::{Field, Reason};
use super::ops::tick;
#[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
use super::{blocks, walk};
use crate::long::{LONG, LongValues};
use crate::simd;
use crate::unescape;
use core::mem::MaybeUninit;
use core::{ptr, slice};

/// A half-open byte range `start..end` of the input; `end == 0` means absent
/// (no JSON value is empty, so a present span always has `end > start`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) start: u32,
    pub(crate) end: u32,
}

impl Span {
    #[inline]
    pub(crate) fn is_present(self) -> bool {
        self.end != 0
    }

    #[inline]
    pub(crate) fn of(self, input: &[u8]) -> &[u8] {
        &input[self.start as usize..self.end as usize]
    }
}

/// What the scanner records about one object (the message, or one batch element).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ObjSpans {
    /// The whole element (for batch elements; the whole message otherwise).
    pub(crate) whole: Span,
    /// Whether the element is an object at all.
    pub(crate) is_object: bool,
    /// Value spans of `jsonrpc`, `method`, `params`, `id`, `result`, `error`
    /// (index = `Field as usize`); the first occurrence wins, later ones set `dup`.
    pub(crate) members: [Span; 6],
    /// Bit `f` set: member `f` appeared more than once.
    pub(crate) dup: u8,
    /// Bit `f` set: member `f`'s value is a string containing backslash escapes.
    pub(crate) escaped: u8,
    /// An escaped method name, decoded: its span in the parser's decoded-names
    /// buffer (filled by the parser after the scan).
    pub(crate) decoded_method: Span,
    /// The decoded method name held a lone surrogate (it can match nothing).
    pub(crate) method_inexact: bool,
    /// Recorded by the compact path: `jsonrpc` is exactly `"2.0"` and `method` is
    /// a string of ASCII bytes without escapes (every byte was seen below 0x80).
    pub(crate) compact: bool,
}

impl ObjSpans {
    /// The escaped method string's body, if the method is a string with escapes.
    #[inline]
    pub(crate) fn escaped_method<'a>(&self, input: &'a [u8]) -> Option<&'a [u8]> {
        let m = self.get(Field::Method);
        let escaped = self.escaped & (1 << Field::Method as u8) != 0;
        escaped.then(|| {
            let raw = m.of(input);
            &raw[1..raw.len() - 1]
        })
    }
}

impl ObjSpans {
    #[inline]
    pub(crate) fn get(&self, f: Field) -> Span {
        self.members[f as usize]
    }
}

/// The top-level shape of a valid JSON message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// One object, recorded in the `top` spans.
    Object,
    /// An array of `len` elements; the first `min(len, record_limit)` were recorded.
    Batch { len: usize },
    /// A string, number or literal.
    Scalar,
}

/// How [`Scanner::scan_flat`] ended.
enum Flat {
    /// The array was scanned; `pos` is past its `]`.
    Done,
    /// A nested array or object: the array needs the nesting loop.
    Nested,
    /// Whitespace, an error or anything unusual: the compact path declines.
    Decline,
}

/// How [`Scanner::scan_compact`] ended.
enum Compact {
    /// The object was scanned and recorded.
    Done,
    /// Declined before recording anything: the general path scans the object
    /// from its start.
    Restart,
    /// Declined at `pos`, with the members before it recorded as the general
    /// path records them: the general path goes on from there
    /// ([`Scanner::object_declined`]).
    Resume(ObjAt),
    /// The verdict the general path would give at once: the byte at `pos`, right
    /// after a member's value, is neither whitespace, `,` nor `}` (or the input
    /// ends there): [`Scanner::unexpected`].
    Unexpected,
}

/// `how`, on a path the compiler is told is cold: the compact path's hot loop
/// then keeps no decline values in registers.
#[cold]
#[inline(never)]
fn declined(how: Compact) -> Compact {
    how
}

/// The compact path's end right after a member's value at `p`, when neither
/// `,"params":`, `,"id":` nor `}` follows: whitespace or another `,` are the
/// general path's to take ([`ObjAt::AfterValue`]); any other byte, or the end of
/// the input, is the error the general path gives there (its `member_next`).
#[cold]
#[inline(never)]
fn after_value(b: &[u8], p: usize) -> Compact {
    match b.get(p) {
        Some(&c) if c == b',' || is_ws(c) => Compact::Resume(ObjAt::AfterValue),
        _ => Compact::Unexpected,
    }
}

/// Where in an object the general path resumes (see [`Compact::Resume`]).
#[derive(Clone, Copy, Debug)]
enum ObjAt {
    /// Right after a member's value (whitespace may follow).
    AfterValue,
    /// At the start of the value of member `field`, or at whitespace before it
    /// (its key and `:` taken).
    Value(Field),
}

/// Where batch element spans go; implemented by the parser's reusable storage.
pub(crate) trait ElemSink {
    fn clear(&mut self);
    fn push(&mut self, spans: ObjSpans);
}

/// The scanner's cursor. INVARIANT: `pos <= bytes.len()`; every byte before `pos`
/// has been validated as part of the JSON text being scanned.
pub(crate) struct Scanner<'a, 's> {
    bytes: &'a [u8],
    pos: usize,
    max_depth: usize,
    /// One bit per nesting level: 1 = array, 0 = object. Holds at least
    /// `max_depth + 1` bits (sized once, with the parser).
    stack: &'s mut [u64],
    /// Whether the compact fast path may be tried (off only in differential tests).
    compact: bool,
    /// The long strings validated so far ([`LongValues`]).
    long: &'s mut LongValues,
}

/// The scanner's internal error: small enough to return in registers. Turned
/// into the public [`Error`] once, at the end.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fail {
    reason: Reason,
    at: u32,
}

impl Fail {
    #[cold]
    #[inline(never)]
    fn at(reason: Reason, at: usize) -> Self {
        Fail {
            reason,
            at: at as u32,
        }
    }

    fn into_error(self, max_depth: usize) -> Error<'static> {
        let e = Error::at(self.reason, self.at as usize);
        if self.reason == Reason::TooDeep {
            e.with_limit(max_depth)
        } else {
            e
        }
    }
}

type Res<T> = Result<T, Fail>;

#[inline]
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

impl<'a, 's> Scanner<'a, 's> {
    /// A scanner of `bytes`; `stack` holds at least `max_depth + 1` bits, `long`
    /// gets the long values of `bytes` noted (if it is to be read, its owner
    /// cleared it before).
    pub(crate) fn new(
        bytes: &'a [u8],
        max_depth: usize,
        stack: &'s mut [u64],
        long: &'s mut LongValues,
    ) -> Self {
        debug_assert!(stack.len() * 64 > max_depth);
        Scanner {
            bytes,
            pos: 0,
            max_depth,
            stack,
            compact: true,
            long,
        }
    }

    /// Disables the compact fast path, for differential tests against the general path.
    #[cfg(test)]
    pub(crate) fn general_only(mut self) -> Self {
        self.compact = false;
        self
    }

    /// Scans a whole message: records the top object's spans into `top`, or the
    /// first `record_limit` batch elements' spans into `elems`.
    #[inline(always)]
    pub(crate) fn scan_message(
        &mut self,
        top: &mut ObjSpans,
        elems: &mut impl ElemSink,
        record_limit: usize,
    ) -> Result<Shape, Error<'static>> {
        self.scan_message_inner(top, elems, record_limit)
            .map_err(|f| f.into_error(self.max_depth))
    }

    #[inline(always)]
    fn scan_message_inner(
        &mut self,
        top: &mut ObjSpans,
        elems: &mut impl ElemSink,
        record_limit: usize,
    ) -> Res<Shape> {
        self.skip_ws();
        let shape = match self.peek() {
            None => return Err(Fail::at(Reason::Empty, self.pos)),
            Some(b'{') => {
                *top = ObjSpans::default();
                let start = self.pos;
                let compact = if start != 0 || !self.compact {
                    Compact::Restart
                } else {
                    self.scan_compact(0, 1, top)
                };
                match compact {
                    Compact::Done => {}
                    Compact::Unexpected => {
                        top.is_object = true; // as the general path leaves it
                        return Err(self.unexpected());
                    }
                    // The general path gives every verdict the compact path
                    // declined, errors included.
                    _ => self.object_declined(start, 1, top, compact)?,
                }
                Shape::Object
            }
            Some(b'[') => {
                elems.clear();
                let len = self.scan_batch(elems, record_limit)?;
                Shape::Batch { len }
            }
            Some(0xEF) if self.bytes[self.pos..].starts_with(&[0xEF, 0xBB, 0xBF]) => {
                return Err(Fail::at(Reason::ByteOrderMark, self.pos));
            }
            Some(_) => {
                self.scan_value(1)?;
                Shape::Scalar
            }
        };
        self.skip_ws();
        if self.pos != self.bytes.len() {
            return Err(Fail::at(Reason::TrailingBytes, self.pos));
        }
        Ok(shape)
    }

    /// Validates that the whole input is exactly one JSON text.
    pub(crate) fn validate(&mut self) -> Result<(), Error<'static>> {
        self.validate_inner()
            .map_err(|f| f.into_error(self.max_depth))
    }

    fn validate_inner(&mut self) -> Res<()> {
        self.skip_ws();
        match self.peek() {
            None => return Err(Fail::at(Reason::Empty, self.pos)),
            Some(0xEF) if self.bytes[self.pos..].starts_with(&[0xEF, 0xBB, 0xBF]) => {
                return Err(Fail::at(Reason::ByteOrderMark, self.pos));
            }
            Some(_) => self.scan_value(1)?,
        }
        self.skip_ws();
        if self.pos != self.bytes.len() {
            return Err(Fail::at(Reason::TrailingBytes, self.pos));
        }
        Ok(())
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    #[inline(always)]
    fn skip_ws(&mut self) {
        // Compact JSON has no whitespace: one compare in the common case.
        match self.bytes.get(self.pos) {
            Some(&b) if b > b' ' => {}
            None => {}
            Some(_) => self.skip_ws_slow(),
        }
    }

    #[inline(never)]
    fn skip_ws_slow(&mut self) {
        while let Some(&b) = self.bytes.get(self.pos) {
            tick(1);
            if !is_ws(b) {
                break;
            }
            self.pos += 1;
        }
    }

    #[cold]
    fn unexpected(&self) -> Fail {
        if self.pos >= self.bytes.len() {
            Fail::at(Reason::UnexpectedEnd, self.pos)
        } else {
            Fail::at(Reason::UnexpectedByte, self.pos)
        }
    }

    #[inline]
    fn expect(&mut self, b: u8) -> Res<()> {
        if self.peek() == Some(b) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    /// The fast path for the compact layout most clients send,
    /// `{"jsonrpc":"2.0","method":"…"` then optional `,"params":…` and `,"id":…`
    /// then `}`, with no whitespace and no escape in the method, or the same with
    /// `"id":…` second ([`Scanner::compact_id_second`]); the four request
    /// members in any other order take [`Scanner::scan_compact_any_order`]. On
    /// anything else, errors included, it declines: [`Compact::Restart`] when it
    /// recorded nothing the general path keeps, else [`Compact::Resume`] at the
    /// start of the member value it did not take, or right after the last value it
    /// took (the members before recorded as the general path records them), and the
    /// general path goes on from there and gives the verdict; a byte after a
    /// member's value that no object allows there is the one error it gives itself
    /// ([`Compact::Unexpected`], the general path's verdict). Differential tests
    /// check both paths record the same spans and give the same verdicts.
    /// `base` is the offset of the object's `{` and `depth` its nesting level.
    fn scan_compact(&mut self, base: usize, depth: usize, top: &mut ObjSpans) -> Compact {
        const PREFIX: &[u8; 27] = br#"{"jsonrpc":"2.0","method":""#;
        if self.max_depth <= depth {
            return declined(Compact::Restart);
        }
        let usual = self.bytes[base..].starts_with(PREFIX);
        if !usual && !self.bytes[base..].starts_with(&PREFIX[..PREFIX.len() - 1]) {
            return self.compact_id_second(base, depth, top);
        }
        self.compact_from_method(base, base + PREFIX.len() - 1, usual, depth, top)
    }

    /// The rest of [`Scanner::scan_compact`] from the method's value at `m` (its
    /// opening quote when `quoted`), the members before it recorded but
    /// `jsonrpc` (at its usual place in the head).
    #[inline(always)]
    fn compact_from_method(
        &mut self,
        base: usize,
        m: usize,
        quoted: bool,
        depth: usize,
        top: &mut ObjSpans,
    ) -> Compact {
        top.members[Field::Jsonrpc as usize] = Span {
            start: base as u32 + 11,
            end: base as u32 + 16,
        };
        self.pos = m;
        // A method that is not a string, escapes, non-ASCII or errors.
        if !quoted || !self.scan_ascii_string() {
            // Escapes, non-ASCII or errors: the general path decides.
            self.pos = m;
            return declined(Compact::Resume(ObjAt::Value(Field::Method)));
        }
        top.members[Field::Method as usize] = Span {
            start: m as u32,
            end: self.pos as u32,
        };
        loop {
            tick(1);
            let rest = &self.bytes[self.pos..];
            let field = if rest.starts_with(br#","params":"#) {
                self.pos += 10;
                Field::Params
            } else if rest.starts_with(br#","id":"#) {
                self.pos += 6;
                Field::Id
            } else if rest.first() == Some(&b'}') {
                return self.compact_done(base, top);
            } else {
                return after_value(self.bytes, self.pos);
            };
            let start = self.pos;
            if top.members[field as usize].is_present() {
                // A duplicate: the general path records it.
                return declined(Compact::Resume(ObjAt::Value(field)));
            }
            let Some(escaped) = self.compact_value(depth) else {
                // The general path takes this member's value again.
                self.pos = start;
                return declined(Compact::Resume(ObjAt::Value(field)));
            };
            if escaped {
                top.escaped |= 1 << field as u8;
            }
            top.members[field as usize] = Span {
                start: start as u32,
                end: self.pos as u32,
            };
        }
    }

    /// [`Scanner::scan_compact`] on `{"jsonrpc":"2.0","id":…,"method":"` (MCP
    /// clients send `id` second), the `id` value taken as
    /// [`Scanner::compact_value`] takes it: records `id` and goes on as the
    /// in-order path from the method; on anything else, with nothing recorded,
    /// [`Scanner::scan_compact_any_order`].
    #[inline(never)]
    fn compact_id_second(&mut self, base: usize, depth: usize, top: &mut ObjSpans) -> Compact {
        const HEAD: &[u8; 22] = br#"{"jsonrpc":"2.0","id":"#;
        const METHOD: &[u8; 11] = br#","method":""#;
        if !self.bytes[base..].starts_with(HEAD) {
            return self.scan_compact_any_order(base, depth, top);
        }
        let start = base + HEAD.len();
        self.pos = start;
        let Some(escaped) = self.compact_value(depth) else {
            return self.scan_compact_any_order(base, depth, top);
        };
        let end = self.pos;
        if !self.bytes[end..].starts_with(METHOD) {
            return self.scan_compact_any_order(base, depth, top);
        }
        top.members[Field::Id as usize] = Span {
            start: start as u32,
            end: end as u32,
        };
        if escaped {
            top.escaped |= 1 << Field::Id as u8;
        }
        self.compact_from_method(base, end + METHOD.len() - 1, true, depth, top)
    }

    /// [`Scanner::scan_compact`] when the object does not start with
    /// `{"jsonrpc":"2.0","method":"` nor `{"jsonrpc":"2.0","id":…,"method":"`:
    /// the four request members `"jsonrpc":"2.0"`,
    /// `"method":"…"`, `"params":…` and `"id":…` in any order (`jsonrpc` and
    /// `method` required), with no whitespace, no other member, no duplicate and
    /// no escape or non-ASCII byte in the method. Declines with
    /// [`Compact::Restart`] on anything else.
    #[inline(never)]
    fn scan_compact_any_order(&mut self, base: usize, depth: usize, top: &mut ObjSpans) -> Compact {
        // At the opening quote of a member's name (just after `{` or `,`).
        let mut at = base + 1;
        loop {
            tick(1);
            if !self.compact_member(at, depth, top) {
                return declined(Compact::Restart);
            }
            match self.bytes.get(self.pos) {
                Some(b',') => at = self.pos + 1,
                Some(b'}') => break,
                _ => return declined(Compact::Restart),
            }
        }
        if !top.get(Field::Jsonrpc).is_present() || !top.get(Field::Method).is_present() {
            return declined(Compact::Restart); // missing: the general path gives the verdict
        }
        self.compact_done(base, top)
    }

    /// The compact path's end, at the `}` of the object opening at `base`.
    #[inline(always)]
    fn compact_done(&mut self, base: usize, top: &mut ObjSpans) -> Compact {
        self.pos += 1;
        top.is_object = true;
        top.compact = true;
        top.whole = Span {
            start: base as u32,
            end: self.pos as u32,
        };
        Compact::Done
    }

    /// One member on the compact path, its name's opening quote at `at` (just
    /// after `{` or `,`): records it and leaves `pos` past its value; `false` on
    /// anything the general path must judge (another member, a duplicate, an
    /// escape, whitespace, an error).
    #[inline(always)]
    fn compact_member(&mut self, at: usize, depth: usize, top: &mut ObjSpans) -> bool {
        let rest = &self.bytes[at..];
        // The name with its quotes and colon, so `"idx":` is not `"id":`.
        let (field, value) = match rest.get(1) {
            Some(b'p') if rest.starts_with(br#""params":"#) => (Field::Params, at + 9),
            Some(b'i') if rest.starts_with(br#""id":"#) => (Field::Id, at + 5),
            Some(b'm') if rest.starts_with(br#""method":""#) => (Field::Method, at + 9),
            Some(b'j') if rest.starts_with(br#""jsonrpc":"2.0""#) => (Field::Jsonrpc, at + 10),
            _ => return false,
        };
        if top.members[field as usize].is_present() {
            return false; // a duplicate: the general path records it
        }
        self.pos = value;
        match field {
            Field::Jsonrpc => self.pos += 5, // `"2.0"`, matched with the name
            Field::Method => {
                if !self.scan_ascii_string() {
                    return false; // escapes, non-ASCII or errors
                }
            }
            _ => match self.compact_value(depth) {
                Some(true) => top.escaped |= 1 << field as u8,
                Some(false) => {}
                None => return false,
            },
        }
        top.members[field as usize] = Span {
            start: value as u32,
            end: self.pos as u32,
        };
        true
    }

    /// A `params` or `id` value on the compact path, at `pos` (a value of the
    /// container at `depth`): whether it is a string with escapes, `None` on
    /// anything the general path must judge.
    #[inline(always)]
    fn compact_value(&mut self, depth: usize) -> Option<bool> {
        let start = self.pos;
        match self.bytes.get(start) {
            Some(b'"') => self.scan_string().ok(),
            // Flat arrays and objects of scalars (most params) without the
            // general nesting loop; anything else there takes that loop.
            Some(b'[') => match self.scan_flat::<false>() {
                Flat::Done => Some(false),
                Flat::Decline => None,
                Flat::Nested => self.compact_nested(depth, true),
            },
            Some(b'{') => match self.scan_flat::<true>() {
                Flat::Done => Some(false),
                Flat::Decline => None,
                Flat::Nested => self.compact_nested(depth, false),
            },
            _ => self.scan_value(depth + 1).ok().map(|()| false),
        }
    }

    /// [`Scanner::compact_value`] at a nested array or object (at `pos`, of
    /// level `depth + 2`) inside the flat one it was taking (of level `depth +
    /// 1`, allowed: the callers checked `depth < max_depth`; an array if
    /// `is_array`): the nesting loop goes on from there, the outer container
    /// still open (its kind on the level stack, its members before `pos` not
    /// read again). Out of line: the compact path's callers keep no registers
    /// for it.
    #[inline(never)]
    fn compact_nested(&mut self, depth: usize, is_array: bool) -> Option<bool> {
        self.set_level(depth + 1, is_array);
        self.scan_nested(depth + 1, depth + 2).ok().map(|()| false)
    }

    /// A string of ASCII bytes without escapes, from its opening quote at `pos`, in
    /// 16-byte steps; `false` (position unspecified) on anything else, which the
    /// caller then rescans on the general path.
    #[inline(always)]
    fn scan_ascii_string(&mut self) -> bool {
        let mut q = self.pos + 1;
        loop {
            tick(1);
            let Some(mask) = simd::mask16(self.bytes, q) else {
                // Fewer than 16 bytes left: byte by byte.
                while let Some(&c) = self.bytes.get(q) {
                    if c == b'"' {
                        self.pos = q + 1;
                        return true;
                    }
                    if c == b'\\' || !(0x20..0x80).contains(&c) {
                        return false;
                    }
                    q += 1;
                }
                return false;
            };
            if mask != 0 {
                // The mask flags quotes, backslashes, control bytes and every byte
                // >= 0x80; only a quote as the first flagged byte ends the fast case.
                let i = q + mask.trailing_zeros() as usize;
                if self.bytes[i] == b'"' {
                    self.pos = i + 1;
                    return true;
                }
                return false;
            }
            q += 16;
        }
    }

    /// An array of scalars (`[1,"a",true]`) or, with `OBJECT`, an object of scalars
    /// (`{"a":1,"b":"x"}`; keys scanned as strings, escapes validated: member names
    /// inside params are not JSON-RPC's business), no whitespace, no nesting, at
    /// `pos`. `Nested` when a value is an array or object (the caller rescans the
    /// container with the nesting loop), `Decline` on anything else: whitespace or an
    /// error, which the general path rescans and judges. The caller checked the
    /// container's depth is allowed.
    #[inline(always)]
    fn scan_flat<const OBJECT: bool>(&mut self) -> Flat {
        let close = if OBJECT { b'}' } else { b']' };
        self.pos += 1; // the opening bracket
        if self.peek() == Some(close) {
            self.pos += 1;
            return Flat::Done;
        }
        loop {
            tick(1);
            if OBJECT {
                if self.peek() != Some(b'"')
                    || self.scan_string().is_err()
                    || self.peek() != Some(b':')
                {
                    return Flat::Decline;
                }
                self.pos += 1;
            }
            let ok = match self.peek() {
                Some(b'"') => self.scan_string().is_ok(),
                Some(b'1'..=b'9') => {
                    // Short positive integers (`[1,2,3]`) end at a separator: one
                    // dispatch, and the separator taken here.
                    let b = self.bytes;
                    let mut q = self.pos + 1;
                    while let Some(b'0'..=b'9') = b.get(q) {
                        tick(1);
                        q += 1;
                    }
                    match b.get(q) {
                        Some(b',') => {
                            self.pos = q + 1;
                            continue;
                        }
                        Some(&c) if c == close => {
                            self.pos = q + 1;
                            return Flat::Done;
                        }
                        _ => match number_tail(b, self.pos, q) {
                            Ok(end) => {
                                self.pos = end;
                                true
                            }
                            Err(_) => false,
                        },
                    }
                }
                Some(b'-' | b'0' | b't' | b'f' | b'n') => self.scan_scalar().is_ok(),
                Some(b'[' | b'{') => return Flat::Nested,
                _ => false,
            };
            if !ok {
                return Flat::Decline;
            }
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(c) if c == close => {
                    self.pos += 1;
                    return Flat::Done;
                }
                _ => return Flat::Decline,
            }
        }
    }

    /// Scans an array that is a batch: each element at depth 2.
    fn scan_batch(&mut self, elems: &mut impl ElemSink, record_limit: usize) -> Res<usize> {
        self.pos += 1; // '['
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(0);
        }
        let mut n = 0usize;
        loop {
            tick(1);
            self.skip_ws();
            let start = self.pos;
            let mut spans = ObjSpans::default();
            if self.peek() == Some(b'{') {
                let compact = if self.compact {
                    self.scan_compact(start, 2, &mut spans)
                } else {
                    Compact::Restart
                };
                match compact {
                    Compact::Done => {}
                    Compact::Unexpected => return Err(self.unexpected()),
                    _ => self.object_declined(start, 2, &mut spans, compact)?,
                }
            } else {
                self.scan_value(2)?;
            }
            if n < record_limit {
                spans.whole = Span {
                    start: start as u32,
                    end: self.pos as u32,
                };
                elems.push(spans);
            }
            n += 1;
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(n);
                }
                _ => return Err(self.unexpected()),
            }
        }
    }

    /// Scans an object at `depth` whose members JSON-RPC cares about.
    fn scan_object(&mut self, depth: usize, spans: &mut ObjSpans) -> Res<()> {
        if depth > self.max_depth {
            return Err(Fail::at(Reason::TooDeep, self.pos));
        }
        let start = self.pos;
        spans.is_object = true;
        self.pos += 1; // '{'
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            spans.whole = Span {
                start: start as u32,
                end: self.pos as u32,
            };
            return Ok(());
        }
        let field = self.member_key()?;
        self.object_members(start, depth, spans, field)
    }

    /// The general path on the object opening at `start`, of level `depth`, after
    /// the compact path ended `how` (declined): from the start of the object, or
    /// from where the compact path stopped.
    #[inline(never)]
    fn object_declined(
        &mut self,
        start: usize,
        depth: usize,
        spans: &mut ObjSpans,
        how: Compact,
    ) -> Res<()> {
        let at = match how {
            Compact::Done => return Ok(()),
            Compact::Unexpected => {
                spans.is_object = true;
                return Err(self.unexpected());
            }
            Compact::Restart => {
                *spans = ObjSpans::default();
                self.pos = start;
                return self.scan_object(depth, spans);
            }
            Compact::Resume(at) => at,
        };
        spans.is_object = true;
        let field = match at {
            ObjAt::Value(field) => {
                // The general path takes the whitespace after `:` as well.
                self.skip_ws();
                Some(field)
            }
            ObjAt::AfterValue => {
                if !self.member_next(start, spans)? {
                    return Ok(());
                }
                self.member_key()?
            }
        };
        self.object_members(start, depth, spans, field)
    }

    /// A member's key and `:` at `pos` (after whitespace), and the whitespace after
    /// them: which JSON-RPC member it names, if any.
    #[inline(always)]
    fn member_key(&mut self) -> Res<Option<Field>> {
        tick(1);
        self.skip_ws();
        if self.peek() != Some(b'"') {
            return Err(self.unexpected());
        }
        let ks = self.pos;
        let key_escaped = self.scan_string()?;
        let field = identify_key(self.bytes, ks, self.pos, key_escaped);
        self.skip_ws();
        self.expect(b':')?;
        self.skip_ws();
        Ok(field)
    }

    /// After a member's value in the object opening at `start`: `,` (whether
    /// another member follows), or the closing `}` (the object's span recorded).
    #[inline(always)]
    fn member_next(&mut self, start: usize, spans: &mut ObjSpans) -> Res<bool> {
        self.skip_ws();
        match self.peek() {
            Some(b',') => {
                self.pos += 1;
                Ok(true)
            }
            Some(b'}') => {
                self.pos += 1;
                spans.whole = Span {
                    start: start as u32,
                    end: self.pos as u32,
                };
                Ok(false)
            }
            _ => Err(self.unexpected()),
        }
    }

    /// The members of the object opening at `start`, of level `depth`, from the
    /// value (at `pos`) of one named `field`, to the closing `}`.
    #[inline(always)]
    fn object_members(
        &mut self,
        start: usize,
        depth: usize,
        spans: &mut ObjSpans,
        mut field: Option<Field>,
    ) -> Res<()> {
        loop {
            let vs = self.pos;
            let value_escaped = match self.peek() {
                Some(b'"') => self.scan_string()?,
                _ => {
                    self.scan_value(depth + 1)?;
                    false
                }
            };
            if let Some(f) = field {
                let i = f as usize;
                if spans.members[i].is_present() {
                    spans.dup |= 1 << i;
                } else {
                    spans.members[i] = Span {
                        start: vs as u32,
                        end: self.pos as u32,
                    };
                    if value_escaped {
                        spans.escaped |= 1 << i;
                    }
                }
            }
            if !self.member_next(start, spans)? {
                return Ok(());
            }
            field = self.member_key()?;
        }
    }

    /// Scans any value whose first byte is at `pos`; containers count as `depth`.
    #[inline]
    fn scan_value(&mut self, depth: usize) -> Res<()> {
        match self.peek() {
            Some(b'{' | b'[') => self.scan_nested(depth, depth),
            _ => self.scan_scalar(),
        }
    }

    /// Scans a string, number or literal at `pos` (anything else is an error).
    #[inline(always)]
    fn scan_scalar(&mut self) -> Res<()> {
        self.pos = scalar_end(self.bytes, self.pos)?;
        Ok(())
    }

    /// Scans a string starting at its opening quote; returns whether it holds escapes.
    #[inline(always)]
    fn scan_string(&mut self) -> Res<bool> {
        let p = self.pos + 1;
        // Most strings (keys, method names, ids) end within 16 bytes: one SSE2
        // compare finds the closing quote without a call.
        let mut q = p;
        // Up to 64 bytes in 16-byte steps inline (hex ids, addresses, hashes).
        for _ in 0..4 {
            tick(1);
            let Some(mask) = simd::mask16(self.bytes, q) else {
                break;
            };
            if mask != 0 {
                let i = q + mask.trailing_zeros() as usize;
                if self.bytes[i] == b'"' {
                    self.pos = i + 1;
                    return Ok(false);
                }
                q = i;
                break;
            }
            q += 16;
        }
        if self.bytes.len() >= LONG {
            return self.string_rest_noted(q);
        }
        let (end, escaped) = string_from(self.bytes, q)?;
        self.pos = end;
        Ok(escaped)
    }

    /// [`Scanner::scan_string`] from `q` inside the string's body on, in a
    /// message that may hold long values, out of line: [`string_from`], then
    /// the string noted if it is long.
    #[inline(never)]
    fn string_rest_noted(&mut self, q: usize) -> Res<bool> {
        let (end, escaped) = string_from(self.bytes, q)?;
        self.long.note(self.pos, end);
        self.pos = end;
        Ok(escaped)
    }

    /// Validates the array or object at `pos`, of level `depth`, and everything
    /// inside it, without recursion: one bit per open level records whether it
    /// is an array; the current level's kind stays in a register, the bit is read
    /// back only when a container closes. With `depth == base + 1`, the container
    /// at `pos` is a value inside the container of level `base`, already open
    /// (its bit set), whose rest is validated too: `pos` ends past the level
    /// `base` container (past the one at `pos` when `depth == base`).
    ///
    /// Messages of [`WINDOW_MIN`] bytes or more first take the window loop
    /// ([`Scanner::nested_window`]) while their input is simple, on a padded
    /// copy of the input's rest when that is short ([`Scanner::nested_padded`]);
    /// the general loop ([`Scanner::nested_general`]) resumes where it hands
    /// over and gives every verdict.
    ///
    /// Messages of [`LONG`] bytes or more note their long values
    /// ([`LongValues`]) on the way, in copies of the loops that do (`NOTE`):
    /// shorter ones hold none and pay nothing for it.
    #[inline(never)]
    fn scan_nested(&mut self, base: usize, depth: usize) -> Res<()> {
        if self.bytes.len() >= LONG {
            self.scan_nested_with::<true>(base, depth)
        } else {
            self.scan_nested_with::<false>(base, depth)
        }
    }

    #[inline(always)]
    fn scan_nested_with<const NOTE: bool>(&mut self, base: usize, depth: usize) -> Res<()> {
        debug_assert!(depth == base || depth == base + 1);
        let at = if self.compact && self.bytes.len() >= WINDOW_MIN {
            if self.bytes.len() - self.pos <= PADDED_MAX {
                self.nested_padded::<NOTE>(base, depth)
            } else {
                self.nested_long::<NOTE>(base, depth)
            }
        } else {
            Resume::Open { p: self.pos, depth }
        };
        self.nested_general::<NOTE>(base, at)
    }

    /// The window loop on a copy of the input from `pos` (at most
    /// [`PADDED_MAX`] bytes) followed by 64 zero bytes ([`padded`]), so that it
    /// goes on to the input's end (on the input itself it keeps 64 bytes after
    /// every position it reads at, and leaves the last 64 to the general loop).
    /// A zero byte is nothing JSON allows outside a string, nor inside one: the
    /// loop takes no token reaching into the zeros, so every token it takes
    /// lies in the copy, and the byte after one (the zero for the input's end)
    /// is judged as the general loop judges the end of the input (a number
    /// ends there, say). Its hand-over, back in input positions, is then the
    /// general loop's.
    #[inline(always)]
    fn nested_padded<const NOTE: bool>(&mut self, base: usize, depth: usize) -> Resume {
        let mut buf = [MaybeUninit::uninit(); PADDED_BUF];
        let pos = self.pos;
        let pad = padded(&mut buf, self.bytes, pos);
        match self.nested_window::<NOTE>(pad, 0, base, depth, usize::MAX) {
            Resume::Done(i) => Resume::Done(pos + i),
            Resume::Open { p, depth } => Resume::Open { p: pos + p, depth },
            Resume::After { p, depth, in_array } => Resume::After {
                p: pos + p,
                depth,
                in_array,
            },
        }
    }

    /// [`Scanner::nested_window_with`] on the best 64-byte mask kernel.
    #[inline(always)]
    fn nested_window<const NOTE: bool>(
        &mut self,
        b: &[u8],
        p: usize,
        base: usize,
        depth: usize,
        stop: usize,
    ) -> Resume {
        #[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
        if simd::has_avx2() {
            // SAFETY: AVX2, BMI1 and BMI2 were detected on this CPU.
            return unsafe { self.nested_window_avx2::<NOTE>(b, p, base, depth, stop) };
        }
        self.nested_window_portable::<NOTE>(b, p, base, depth, stop)
    }

    /// [`Scanner::nested_window_with`] on the portable kernel (one copy for
    /// both calls of [`Scanner::scan_nested`]).
    #[inline(never)]
    fn nested_window_portable<const NOTE: bool>(
        &mut self,
        b: &[u8],
        p: usize,
        base: usize,
        depth: usize,
        stop: usize,
    ) -> Resume {
        self.nested_window_with::<NOTE>(b, p, base, depth, stop, simd::special_mask64)
    }

    /// [`Scanner::nested_window_with`] compiled for AVX2 (and BMI1/BMI2: shifts
    /// and bit counts without register moves), on the AVX2 kernel.
    ///
    /// # Safety
    /// - The CPU must support AVX2, BMI1 and BMI2 ([`simd::has_avx2`] returned
    ///   `true`).
    #[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
    #[target_feature(enable = "avx2,bmi1,bmi2")]
    #[inline(never)]
    unsafe fn nested_window_avx2<const NOTE: bool>(
        &mut self,
        b: &[u8],
        p: usize,
        base: usize,
        depth: usize,
        stop: usize,
    ) -> Resume {
        // SAFETY: AVX2 is this function's caller's guarantee.
        self.nested_window_with::<NOTE>(b, p, base, depth, stop, |block| unsafe {
            simd::avx2::special_mask64(block)
        })
    }

    /// The fast part of [`Scanner::scan_nested`], on the input `b` (the
    /// message, or the padded copy of its end) from the array or object
    /// opening at `p`, of level `depth`: the same grammar walk while the
    /// input is at least 64 bytes from its end, with the strings' ends found on a
    /// 64-byte mask ([`Window`]) that many short strings share. It returns no
    /// errors: at anything it does not accept (an error, or simply input it does
    /// not take, such as a string past the last window), it hands over at the
    /// start of the token it was on, and the general loop rescans that token
    /// and gives the verdict. Whatever it accepted, the general loop accepts
    /// too, in the same state (differential tests check this). With `NOTE`, the
    /// long strings are noted ([`LongValues`]).
    #[inline(always)]
    fn nested_window_with<const NOTE: bool>(
        &mut self,
        b: &[u8],
        mut p: usize,
        base: usize,
        mut depth: usize,
        stop: usize,
        mask: impl Fn(&[u8; 64]) -> u64,
    ) -> Resume {
        let max_depth = self.max_depth;
        // Before `fast_end`, at least 64 bytes remain. The level stack holds
        // the bits of levels `0..=max_depth` (checked once here; its reads and
        // writes below go unchecked).
        if b.len() < 64 || p >= b.len() - 64 || max_depth / 64 >= self.stack.len() {
            return Resume::Open { p, depth };
        }
        let fast_end = b.len() - 64;
        // No array or object opens at or past `stop` (nor at `fast_end`).
        let open_end = fast_end.min(stop);
        // Window's invariant: the mask is of `b[p..p + 64]`, or 0.
        let mut w = Window {
            at: p,
            specials: b.get(p..).and_then(<[u8]>::first_chunk).map_or(0, &mask),
        };
        let mut in_array;
        'open: loop {
            // A value's [`Step`]: past a scalar or string, `p` after it; at an
            // array or object, `p` at it and its level next ('open); anything
            // else, the hand-over `$hand_over`.
            macro_rules! take_step {
                ($step:expr, $hand_over:expr) => {
                    match $step {
                        Step::End(end) => p = end,
                        Step::Open(q) => {
                            p = q;
                            depth += 1;
                            continue 'open;
                        }
                        Step::HandOver => return $hand_over,
                    }
                };
            }
            // At the array or object opening at `p`, of level `depth`.
            tick(1);
            if p >= open_end || depth > max_depth {
                return Resume::Open { p, depth };
            }
            let t = p;
            // SAFETY: `p < open_end <= fast_end < b.len()`, checked above.
            in_array = unsafe { at(b, p) } == b'[';
            // SAFETY: `depth <= max_depth` (checked above) and `max_depth / 64 <
            // stack.len()` (checked at the start).
            unsafe { self.set_level_unchecked(depth, in_array) };
            p += 1;
            // SAFETY: `p <= fast_end < b.len()`.
            let mut c = unsafe { at(b, p) };
            if c <= b' ' {
                p = ws_from(b, p);
                if p >= fast_end {
                    return Resume::Open { p: t, depth };
                }
                // SAFETY: `p < fast_end`, checked just above.
                c = unsafe { at(b, p) };
            }
            if c == if in_array { b']' } else { b'}' } {
                // Empty: it was a value of its parent.
                p += 1;
                depth -= 1;
                if depth < base {
                    return Resume::Done(p);
                }
                // SAFETY: `depth` is below a level opened (and checked against
                // `max_depth`) at 'open, and `max_depth / 64 < stack.len()`
                // (checked at the start).
                in_array = unsafe { self.level_is_array_unchecked(depth) };
            } else {
                // SAFETY: `p <= fast_end` here (`p` is one past the bracket,
                // which was below `fast_end`, or below `fast_end` after
                // whitespace), and `fast_end == b.len() - 64`; `w` is the
                // window over `b` (built above, reloaded only from `b`).
                let step = unsafe {
                    if in_array {
                        window_value::<NOTE>(b, p, fast_end, &mut w, &mask, self.long)
                    } else {
                        window_key_value::<NOTE>(b, p, fast_end, &mut w, &mask, self.long)
                    }
                };
                take_step!(step, Resume::Open { p: t, depth });
            }
            // Right after a value of the container at `depth`: one loop per
            // container kind, with the kind a constant in each; both leave the
            // loop at the container's closing bracket.
            macro_rules! after {
                ($array:literal, $close:literal, $member:ident) => {
                    loop {
                        tick(1);
                        if p >= fast_end {
                            return Resume::After {
                                p,
                                depth,
                                in_array: $array,
                            };
                        }
                        let t = p;
                        // In an object, `,"` (the usual compact layout) goes
                        // straight to the key's body: one 16-bit compare.
                        // SAFETY: `p < fast_end`, so `p + 2 <= b.len()`.
                        if !$array && unsafe { at2(b, p) } == u16::from_le_bytes(*b",\"") {
                            let step =
                                // SAFETY: `p + 2 <= fast_end + 1` and `fast_end + 64
                                // <= b.len()`, so `p + 2 < b.len() - 62`; `w` is the
                                // window over `b` (built above, reloaded from `b`).
                                unsafe { window_key_body_value::<NOTE>(b, p + 2, fast_end, &mut w, &mask, self.long) };
                            take_step!(step, Resume::After { p: t, depth, in_array: $array });
                            continue;
                        }
                        // In an array, `,"` goes straight to the string's body.
                        // SAFETY: `p < fast_end`, so `p + 2 <= b.len()`.
                        if $array && unsafe { at2(b, p) } == u16::from_le_bytes(*b",\"") {
                            // SAFETY: `w` is the window over `b` (built above,
                            // reloaded from `b`).
                            match unsafe { window_string_end(b, p + 2, &mut w, &mask) } {
                                Some(end) => {
                                    if NOTE {
                                        self.long.note(p + 1, end);
                                    }
                                    p = end;
                                    continue;
                                }
                                None => {
                                    return Resume::After {
                                        p: t,
                                        depth,
                                        in_array: $array,
                                    };
                                }
                            }
                        }
                        // SAFETY: `p < fast_end < b.len()`, checked above.
                        let mut c = unsafe { at(b, p) };
                        if c != b',' && c <= b' ' {
                            p = ws_from(b, p);
                            if p >= fast_end {
                                return Resume::After {
                                    p: t,
                                    depth,
                                    in_array: $array,
                                };
                            }
                            // SAFETY: `p < fast_end`, checked just above.
                            c = unsafe { at(b, p) };
                        }
                        if c == b',' {
                            let next = p + 1;
                            let step =
                                // SAFETY: `p < fast_end` (checked above), so
                                // `next <= fast_end == b.len() - 64`; `w` is the
                                // window over `b` (built above, reloaded from `b`).
                                unsafe { $member::<NOTE>(b, next, fast_end, &mut w, &mask, self.long) };
                            take_step!(step, Resume::After { p: t, depth, in_array: $array });
                        } else if c == $close {
                            break;
                        } else {
                            return Resume::After {
                                p: t,
                                depth,
                                in_array: $array,
                            };
                        }
                    }
                };
            }
            loop {
                if in_array {
                    after!(true, b']', window_value);
                } else {
                    after!(false, b'}', window_key_value);
                }
                p += 1;
                depth -= 1;
                if depth < base {
                    return Resume::Done(p);
                }
                // SAFETY: `depth` is below a level opened (and checked against
                // `max_depth`) at 'open, and `max_depth / 64 < stack.len()`
                // (checked at the start).
                in_array = unsafe { self.level_is_array_unchecked(depth) };
            }
        }
    }

    /// The general nesting loop, from where [`Scanner::nested_window_with`] handed
    /// over (or from the start): every input, every verdict.
    #[inline(always)]
    fn nested_general<const NOTE: bool>(&mut self, base: usize, at: Resume) -> Res<()> {
        let b = self.bytes;
        let max_depth = self.max_depth;
        // The depth of the container we are in (or, at 'open, about to open at `p`).
        let (mut p, mut depth, mut in_array, mut open) = match at {
            Resume::Done(end) => {
                self.pos = end;
                return Ok(());
            }
            Resume::Open { p, depth } => (p, depth, false, true),
            Resume::After { p, depth, in_array } => (p, depth, in_array, false),
        };
        'open: loop {
            if !open {
                // Resuming right after a value.
                open = true;
            } else {
                tick(1);
                if depth > max_depth {
                    return Err(Fail::at(Reason::TooDeep, p));
                }
                in_array = b[p] == b'[';
                self.set_level(depth, in_array);
                p = ws_from(b, p + 1);
                if b.get(p) == Some(if in_array { &b']' } else { &b'}' }) {
                    // Empty: it was a value of its parent.
                    p += 1;
                    depth -= 1;
                    if depth < base {
                        self.pos = p;
                        return Ok(());
                    }
                    in_array = self.level_is_array(depth);
                } else {
                    if !in_array {
                        p = key_end(b, p)?;
                    }
                    match value_end(b, p)? {
                        Some(end) => {
                            if NOTE {
                                self.long.note(p, end);
                            }
                            p = end;
                        }
                        None => {
                            depth += 1;
                            continue 'open;
                        }
                    }
                }
            }
            // Right after a value of the container at `depth`.
            loop {
                tick(1);
                p = ws_from(b, p);
                match b.get(p) {
                    Some(b',') => {
                        p = ws_from(b, p + 1);
                        if !in_array {
                            p = key_end(b, p)?;
                        }
                        match value_end(b, p)? {
                            Some(end) => {
                                if NOTE {
                                    self.long.note(p, end);
                                }
                                p = end;
                            }
                            None => {
                                depth += 1;
                                continue 'open;
                            }
                        }
                    }
                    Some(&c) if c == if in_array { b']' } else { b'}' } => {
                        p += 1;
                        depth -= 1;
                        if depth < base {
                            self.pos = p;
                            return Ok(());
                        }
                        in_array = self.level_is_array(depth);
                    }
                    _ => return Err(unexpected(b, p)),
                }
            }
        }
    }

    /// The nested value at `pos` (of level `depth`, with more than
    /// [`PADDED_MAX`] bytes left) by the structural walk where it pays, else the
    /// window loop: the walk when a sample of the value's start says so
    /// ([`Scanner::nested_walk`]), else the window loop, which stops at the
    /// first array or object opening [`WALK_RESAMPLE`] bytes on, where the
    /// walk's sample is taken again, and so on at twice the distance each time
    /// (a document's start is often unlike its bulk: a header of names before a
    /// mass of numbers). Where to go on from, as [`Scanner::nested_window`].
    #[inline(always)]
    fn nested_long<const NOTE: bool>(&mut self, base: usize, depth: usize) -> Resume {
        let b = self.bytes;
        let (mut p, mut depth) = (self.pos, depth);
        let mut distance = WALK_RESAMPLE;
        loop {
            if let Some(at) = self.nested_walk::<NOTE>(p, base, depth) {
                return at;
            }
            // Only where enough is left for the walk to win back a sample's
            // cost (measured: a 4 KB message loses 3% to one).
            let stop = match p.checked_add(distance) {
                Some(stop) if b.len().saturating_sub(stop) >= 4 * WALK_MIN => stop,
                _ => usize::MAX,
            };
            match self.nested_window::<NOTE>(b, p, base, depth, stop) {
                // Stopped at `stop`, not at the input's end nor the depth limit.
                Resume::Open { p: q, depth: d }
                    if q >= stop && q + 64 < b.len() && d <= self.max_depth =>
                {
                    (p, depth) = (q, d);
                    distance = distance.saturating_mul(2);
                }
                at => return at,
            }
        }
    }

    /// The structural walk ([`super::walk`]) on the array or object at `p`, of
    /// level `depth`, when at least [`WALK_MIN`] bytes follow, the CPU runs
    /// the walk, and a sample of the value's start shows the bytes the walk is
    /// faster on ([`blocks::walk_pays`]): where to go on from, the value's end
    /// ([`Resume::Done`]), or its start for the general loop if the walk gave
    /// up; `None` to leave the value to the window loop.
    #[inline(always)]
    fn nested_walk<const NOTE: bool>(
        &mut self,
        p: usize,
        base: usize,
        depth: usize,
    ) -> Option<Resume> {
        #[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
        if self.bytes.len() - p >= WALK_MIN && simd::has_avx2() {
            // SAFETY: AVX2, BMI1, BMI2 and PCLMULQDQ were detected on this CPU.
            return unsafe { self.walk_avx2::<NOTE>(Resume::Open { p, depth }, base) };
        }
        let _ = (p, base, depth);
        None
    }

    /// [`walk::walk`] compiled for AVX2, on the AVX2 kernel, from the
    /// opening `at` (a [`Resume::Open`]).
    ///
    /// # Safety
    /// - The CPU must support AVX2, BMI1, BMI2 and PCLMULQDQ
    ///   ([`simd::has_avx2`] returned `true`).
    #[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
    #[target_feature(enable = "avx2,bmi1,bmi2,pclmulqdq")]
    #[inline(never)]
    unsafe fn walk_avx2<const NOTE: bool>(&mut self, at: Resume, base: usize) -> Option<Resume> {
        let Resume::Open { p, .. } = at else {
            return None;
        };
        // SAFETY: AVX2 and PCLMULQDQ, this function's caller's guarantee.
        if !blocks::walk_pays(self.bytes, p, unsafe { blocks::Avx2::new() }) {
            return None;
        }
        #[cfg(test)]
        WALKS.set(WALKS.get() + 1);
        let mut w = walk::Walk {
            stack: self.stack,
            max_depth: self.max_depth,
            long: self.long,
        };
        // SAFETY: as above.
        let kernel = unsafe { blocks::Avx2::new() };
        Some(
            match walk::walk::<_, NOTE>(self.bytes, at, base, &mut w, kernel) {
                Some(end) => Resume::Done(end),
                None => at,
            },
        )
    }

    #[inline]
    fn set_level(&mut self, depth: usize, is_array: bool) {
        let (w, bit) = (depth / 64, depth % 64);
        if is_array {
            self.stack[w] |= 1 << bit;
        } else {
            self.stack[w] &= !(1 << bit);
        }
    }

    #[inline]
    fn level_is_array(&self, depth: usize) -> bool {
        self.stack[depth / 64] >> (depth % 64) & 1 == 1
    }

    /// [`Scanner::set_level`] without the bounds check, for the window loop.
    ///
    /// # Safety
    /// - `depth / 64 < self.stack.len()`.
    #[inline(always)]
    unsafe fn set_level_unchecked(&mut self, depth: usize, is_array: bool) {
        debug_assert!(depth / 64 < self.stack.len());
        let bit = 1u64 << (depth % 64);
        // SAFETY: `depth / 64 < stack.len()`, the caller's guarantee.
        let word = unsafe { self.stack.get_unchecked_mut(depth / 64) };
        if is_array {
            *word |= bit;
        } else {
            *word &= !bit;
        }
    }

    /// [`Scanner::level_is_array`] without the bounds check, for the window loop.
    ///
    /// # Safety
    /// - `depth / 64 < self.stack.len()`.
    #[inline(always)]
    unsafe fn level_is_array_unchecked(&self, depth: usize) -> bool {
        debug_assert!(depth / 64 < self.stack.len());
        // SAFETY: `depth / 64 < stack.len()`, the caller's guarantee.
        unsafe { self.stack.get_unchecked(depth / 64) >> (depth % 64) & 1 == 1 }
    }
}

/// The general loop alone on the array or object at `b[0]` (level 1): where it
/// ends, or `None` if it is invalid (the structural walk's reference).
#[cfg(test)]
pub(crate) fn general_value_end(b: &[u8], max_depth: usize) -> Option<usize> {
    let mut stack = vec![0u64; max_depth / 64 + 1];
    let mut long = LongValues::default();
    let mut sc = Scanner::new(b, max_depth, &mut stack, &mut long).general_only();
    sc.scan_nested(1, 1).ok().map(|()| sc.pos)
}

/// The error for the byte at `p` (or the end of input) not fitting the grammar.
#[cold]
fn unexpected(b: &[u8], p: usize) -> Fail {
    if p >= b.len() {
        Fail::at(Reason::UnexpectedEnd, p)
    } else {
        Fail::at(Reason::UnexpectedByte, p)
    }
}

/// The fewest bytes from a nested value's start on for which the structural
/// walk is considered ([`Scanner::nested_walk`]): shorter values (most) never
/// pay for its sample and set-up.
const WALK_MIN: usize = 2048;

#[cfg(test)]
thread_local! {
    /// How many structural walks this thread started (for the tests).
    static WALKS: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
}

/// How far into a long value the window loop goes before the walk's sample
/// is taken again ([`Scanner::nested_long`]).
const WALK_RESAMPLE: usize = 1024;

/// Messages shorter than this never take the window loop: its set-up (one
/// 64-byte mask) would not pay, and they have few bytes 64 from their end.
const WINDOW_MIN: usize = 192;

/// The most input after a nested value's start that [`Scanner::nested_padded`]
/// copies (more is left to the window loop on the input, then the general
/// loop for its last 64 bytes), and the size of its buffer ([`padded`]).
const PADDED_MAX: usize = 512;
const PADDED_BUF: usize = 64 + PADDED_MAX + 64;

// The window loop notes long strings in its own offsets: none is on the padded copy.
const _: () = assert!(PADDED_MAX < LONG);

/// `b[p..]` followed by 64 zero bytes, in `buf` (whose first 64 bytes are
/// room for the last copy below), in 64-byte copies.
///
/// # Panics
/// If `b.len() - p > PADDED_MAX` or `b.len() < 64` (the caller checked both).
#[inline(always)]
fn padded<'p>(buf: &'p mut [MaybeUninit<u8>; PADDED_BUF], b: &[u8], p: usize) -> &'p [u8] {
    let n = b.len() - p;
    assert!(n <= PADDED_MAX && b.len() >= 64);
    let src = b.as_ptr();
    // `out[i]` is to hold `b[p + i]`, for `i < n`; then the zeros.
    // SAFETY: `64 < PADDED_BUF`: the pointer stays in `buf`.
    let out = unsafe { buf.as_mut_ptr().cast::<u8>().add(64) };
    // SAFETY: the writes stay in `buf`: `out` is `&buf[64]`, `buf` holds
    // `64 + PADDED_MAX + 64` bytes and `n <= PADDED_MAX`; the first copies
    // write `out[k..k + 64]` with `k + 64 < n`, the last `out[n - 64..n]`
    // (from `buf[0]` on when `n < 64`), the zeros `out[n..n + 64]`. The reads
    // stay in `b`: `b[p + k..p + k + 64]` with `p + k + 64 < b.len()`, and
    // `b[b.len() - 64..]` (`b.len() >= 64`). `MaybeUninit<u8>` is a byte, so
    // the casts keep every offset. The slice returned is `out[..n + 64]`, all
    // written: `out[..k]` by the first copies, `out[n - 64..n]` (`k >= n - 64`
    // when they end) by the last, the zeros after.
    unsafe {
        let mut k = 0;
        while k + 64 < n {
            ptr::copy_nonoverlapping(src.add(p + k), out.add(k), 64);
            k += 64;
        }
        ptr::copy_nonoverlapping(src.add(b.len() - 64), out.add(n).sub(64), 64);
        ptr::write_bytes(out.add(n), 0, 64);
        slice::from_raw_parts(out, n + 64)
    }
}

/// Where [`Scanner::nested_window_with`] handed over to the general loop.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Resume {
    /// The whole value was scanned; it ends at this index.
    Done(usize),
    /// At the array or object opening at `p`, of level `depth`.
    Open { p: usize, depth: usize },
    /// Right after a value (whitespace may follow) of the container at `depth`.
    After {
        p: usize,
        depth: usize,
        in_array: bool,
    },
}

/// The special-byte mask (quotes, backslashes, control bytes, bytes >= 0x80) of
/// the 64 input bytes from `at`: the strings that start and end inside it find
/// their end with a shift and a trailing-zero count, sharing one mask.
/// INVARIANT (relied on by [`window_string_end`]): `specials == 0` or
/// `at + 64 <= b.len()`, `b` being the input of the window loop that built it.
struct Window {
    at: usize,
    specials: u64,
}

/// What [`window_value`] (and the member functions around it) found.
enum Step {
    /// A scalar value ending at this index.
    End(usize),
    /// An array or object opening at this index.
    Open(usize),
    /// Anything else: the caller hands over to the general loop.
    HandOver,
}

/// One object member at `p` (just after the `,` or opening brace) of the window
/// loop: `"key":`, then a value; whitespace allowed where JSON allows it.
///
/// # Safety
/// - `p <= fast_end` and `fast_end + 64 <= b.len()`;
/// - [`Window`]'s invariant holds for `w` and `b`.
#[inline(always)]
unsafe fn window_key_value<const NOTE: bool>(
    b: &[u8],
    p: usize,
    fast_end: usize,
    w: &mut Window,
    mask: &impl Fn(&[u8; 64]) -> u64,
    long: &mut LongValues,
) -> Step {
    debug_assert!(p <= fast_end && fast_end + 64 <= b.len());
    // SAFETY: `p <= fast_end`, the caller's guarantee.
    let Some(p) = (unsafe { window_byte_after_ws(b, p, fast_end, b'"') }) else {
        return Step::HandOver;
    };
    // SAFETY: `p + 1 <= fast_end + 1`, and the rest is the caller's guarantee.
    unsafe { window_key_body_value::<NOTE>(b, p + 1, fast_end, w, mask, long) }
}

/// Where `want` is: at `p`, or after the whitespace from `p`, before `fast_end`;
/// `None` (hand over) for anything else.
///
/// # Safety
/// - `p <= fast_end < b.len()`.
#[inline(always)]
unsafe fn window_byte_after_ws(b: &[u8], p: usize, fast_end: usize, want: u8) -> Option<usize> {
    // SAFETY: `p <= fast_end < b.len()`, the caller's guarantee.
    if unsafe { at(b, p) } == want {
        return Some(p);
    }
    let p = ws_from(b, p);
    // SAFETY: `p < fast_end` when the second operand is evaluated.
    (p < fast_end && unsafe { at(b, p) } == want).then_some(p)
}

/// The rest of an object member whose key's body starts at `s` (just after its
/// opening quote): the key's end, `:`, then a value.
///
/// # Safety
/// - `s <= fast_end + 1` and `fast_end + 64 <= b.len()`;
/// - [`Window`]'s invariant holds for `w` and `b`.
#[inline(always)]
unsafe fn window_key_body_value<const NOTE: bool>(
    b: &[u8],
    s: usize,
    fast_end: usize,
    w: &mut Window,
    mask: &impl Fn(&[u8; 64]) -> u64,
    long: &mut LongValues,
) -> Step {
    debug_assert!(s <= fast_end + 1 && fast_end + 64 <= b.len());
    // SAFETY: `w`'s invariant holds for `b`, the caller's guarantee.
    let Some(q) = (unsafe { window_string_end(b, s, w, mask) }) else {
        return Step::HandOver;
    };
    if q >= fast_end {
        return Step::HandOver;
    }
    // SAFETY: `q < fast_end`, checked just above.
    let Some(q) = (unsafe { window_byte_after_ws(b, q, fast_end, b':') }) else {
        return Step::HandOver;
    };
    // SAFETY: `q + 1 <= fast_end`, and the rest is the caller's guarantee.
    unsafe { window_value::<NOTE>(b, q + 1, fast_end, w, mask, long) }
}

/// One value at `p` (just after the `,` or `[` in an array, the `:` in an
/// object) of the window loop, whitespace before it allowed; with `NOTE`, a long
/// string is noted in `long` (the member functions around it pass both on).
///
/// # Safety
/// - `p <= fast_end` and `fast_end + 64 <= b.len()`;
/// - [`Window`]'s invariant holds for `w` and `b`.
#[inline(always)]
unsafe fn window_value<const NOTE: bool>(
    b: &[u8],
    mut p: usize,
    fast_end: usize,
    w: &mut Window,
    mask: &impl Fn(&[u8; 64]) -> u64,
    long: &mut LongValues,
) -> Step {
    debug_assert!(p <= fast_end && fast_end + 64 <= b.len());
    // SAFETY: `p <= fast_end < b.len()`, the caller's guarantee.
    let mut c = unsafe { at(b, p) };
    if c <= b' ' {
        p = ws_from(b, p);
        if p >= fast_end {
            return Step::HandOver;
        }
        // SAFETY: `p < fast_end`, checked just above.
        c = unsafe { at(b, p) };
    }
    // Here `p <= fast_end`: 64 bytes from `p` are in `b`. The kinds are tested
    // one compare each, the most frequent first (strings, containers, then
    // positive integers): a chain of well-predicted compares rather than one
    // jump table whose indirect jump follows the input's mix of kinds.
    if c == b'"' {
        // SAFETY: `w`'s invariant holds for `b`, the caller's guarantee.
        let Some(end) = (unsafe { window_string_end(b, p + 1, w, mask) }) else {
            return Step::HandOver;
        };
        // Long strings are noted (in the window's offsets: the padded copy
        // holds no long value).
        if NOTE {
            long.note(p, end);
        }
        return Step::End(end);
    }
    // `[` (0x5b) and `{` (0x7b) are the only bytes that are `{` with bit 5 set.
    if c | 0x20 == b'{' {
        return Step::Open(p);
    }
    // SAFETY: the caller's guarantee, passed on.
    let step = unsafe { window_scalar(b, p, c) };
    // The rare number that long is noted too, as the general loop does.
    if let (true, Step::End(end)) = (NOTE, &step) {
        long.note(p, *end);
    }
    step
}

/// A value of the window loop that is neither a string nor a container: a
/// number or a literal at `p`, whose first byte is `c`.
///
/// # Safety
/// - `p + 64 <= b.len()`.
#[inline(always)]
unsafe fn window_scalar(b: &[u8], p: usize, c: u8) -> Step {
    debug_assert!(p + 64 <= b.len() && b[p] == c);
    // The number reads below: `p + 64 <= b.len()`; the digits read start at
    // most two bytes after `p`, and their end (an index of the eight bytes
    // read) is at most `p + 9`.
    let end = if c.wrapping_sub(b'1') < 9 {
        // SAFETY: `p + 9 <= b.len()`, as said above.
        match unsafe { digits_end8_unchecked(b, p + 1) } {
            // Positive integers of up to 9 digits that end at a delimiter
            // without the byte loop; anything else as [`value_end`] takes it.
            // SAFETY: `digits_end8` returns an index inside the eight bytes it read.
            Some(q) if matches!(unsafe { at(b, q) }, b',' | b']' | b'}') => Ok(q),
            // SAFETY: `p + 64 <= b.len()` and `q <= p + 8`, as said above.
            Some(q) => unsafe { window_number_tail(b, p, q) },
            None => number_cold(b, p),
        }
    } else if c == b'-' || c == b'0' {
        // `-`, then `0` or up to 8 digits, eight bytes a step as above.
        let q = p + usize::from(c == b'-');
        // SAFETY: `q <= p + 1 < b.len()`.
        match unsafe { at(b, q) } {
            // SAFETY: as above.
            b'0' => unsafe { window_number_tail(b, p, q + 1) },
            // SAFETY: as above.
            b'1'..=b'9' => match unsafe { digits_end8_unchecked(b, q + 1) } {
                // SAFETY: as above.
                Some(r) => unsafe { window_number_tail(b, p, r) },
                None => number_cold(b, p),
            },
            _ => number_cold(b, p),
        }
    } else {
        // The literals as one 4-byte compare each (`false` from its second
        // byte); a misspelt or truncated one goes to [`value_end`], whose
        // error hands over.
        // SAFETY: `p + 64 <= b.len()`, so `p + 5 <= b.len()`.
        let (head, tail) = unsafe { (at4(b, p), at4(b, p + 1)) };
        if head == u32::from_le_bytes(*b"true") || head == u32::from_le_bytes(*b"null") {
            return Step::End(p + 4);
        }
        if c == b'f' && tail == u32::from_le_bytes(*b"alse") {
            return Step::End(p + 5);
        }
        match value_end_cold(b, p) {
            Ok(Some(end)) => Ok(end),
            _ => return Step::HandOver,
        }
    };
    end.map_or(Step::HandOver, Step::End)
}

/// The rest of a number of the window loop whose integer part is `b[start..p]`
/// (`p` at most 10 bytes past `start`, so the bytes read here exist): a
/// fraction and an exponent of up to 7 digits each, eight bytes a step, when
/// the number ends at a delimiter; anything else (longer digit runs,
/// whitespace after the number, errors) as [`number_tail`] takes it.
///
/// # Safety
/// - `start + 64 <= b.len()` and `p <= start + 10`.
#[inline(always)]
unsafe fn window_number_tail(b: &[u8], start: usize, p: usize) -> Res<usize> {
    debug_assert!(start + 64 <= b.len() && p <= start + 10);
    // SAFETY: every read in the block is inside `b`: `start + 64 <= b.len()` and
    // `p <= start + 10`, the caller's guarantee; `q` grows by at most 8 (a
    // fraction) and 9 (an exponent) from `p`, so the bytes read reach at most
    // `start + 28`, inside `b`.
    unsafe {
        let mut q = p;
        if at(b, q) == b'.' {
            match digits_end8_unchecked(b, q + 1) {
                Some(r) if r > q + 1 => q = r,
                _ => return number_tail_cold(b, start, p),
            }
        }
        if at(b, q) | 0x20 == b'e' {
            let s = q + 1 + usize::from(matches!(at(b, q + 1), b'+' | b'-'));
            match digits_end8_unchecked(b, s) {
                Some(r) if r > s => q = r,
                _ => return number_tail_cold(b, start, p),
            }
        }
        if matches!(at(b, q), b',' | b']' | b'}') {
            Ok(q)
        } else {
            number_tail_cold(b, start, p)
        }
    }
}

/// [`value_end`], [`number`] and [`number_tail`] out of line, for the window
/// loop's rare cases (misspelt literals, long digit runs, whitespace after a
/// number): the loop's inlined copies of [`window_value`] stay small.
#[cold]
#[inline(never)]
fn value_end_cold(b: &[u8], p: usize) -> Res<Option<usize>> {
    value_end(b, p)
}

/// [`number`] out of line (see [`value_end_cold`]).
#[cold]
#[inline(never)]
fn number_cold(b: &[u8], start: usize) -> Res<usize> {
    number(b, start)
}

/// [`number_tail`] out of line (see [`value_end_cold`]).
#[cold]
#[inline(never)]
fn number_tail_cold(b: &[u8], start: usize, p: usize) -> Res<usize> {
    number_tail(b, start, p)
}

/// The end of the string whose body starts at `s`, or `None` if it is not valid:
/// the first special byte from `s` is found on the window's mask, reloaded only
/// when `s` is past it (or the string runs past it); that byte is the closing
/// quote for plain strings; a valid 2-byte UTF-8 character is stepped over on
/// the same mask; else the general string loop goes on from it (as it
/// does from the 16-byte steps of [`string_end`]), as it does for strings
/// reaching into the last 64 bytes.
///
/// # Safety
/// - [`Window`]'s invariant holds for `w` and `b`: `w.specials == 0` or
///   `w.at + 64 <= b.len()` (a set bit then stands for a byte of `b`, whatever
///   `mask` computes).
#[inline(always)]
unsafe fn window_string_end(
    b: &[u8],
    mut s: usize,
    w: &mut Window,
    mask: &impl Fn(&[u8; 64]) -> u64,
) -> Option<usize> {
    loop {
        tick(1);
        let off = s.wrapping_sub(w.at);
        if off < 64 {
            let m = w.specials >> off;
            if m != 0 {
                let i = s + m.trailing_zeros() as usize;
                // SAFETY: `m != 0`, so `w.specials != 0` and (the invariant,
                // the caller's guarantee) `w.at + 64 <= b.len()`; `i` is
                // `w.at + off` plus a bit index of `m = specials >> off`, so
                // `i < w.at + 64`.
                let c = unsafe { at(b, i) };
                if c == b'"' {
                    return Some(i + 1);
                }
                // A 2-byte UTF-8 character (lead 0xC2..=0xDF: no overlong
                // form; then one continuation byte 0x80..=0xBF): both its
                // bytes are set bits of the mask; the string goes on past
                // them on the same mask.
                if !two_byte_char(b, i) {
                    return string_from(b, i).ok().map(|(end, _)| end);
                }
                s = i + 2;
                continue;
            }
            s = w.at + 64;
        }
        let Some(block) = b.get(s..).and_then(<[u8]>::first_chunk) else {
            return string_from(b, s).ok().map(|(end, _)| end);
        };
        // `block` is `b[s..s + 64]`: the invariant holds.
        w.at = s;
        w.specials = mask(block);
    }
}

/// Whether `b[i..i + 2]` is a valid 2-byte UTF-8 character (see
/// [`window_string_end`]); out of line, so that the plain strings' path keeps
/// its code.
#[cold]
#[inline(never)]
fn two_byte_char(b: &[u8], i: usize) -> bool {
    matches!(b.get(i..i + 2), Some(&[0xC2..=0xDF, 0x80..=0xBF]))
}

/// `b[i]` without a bounds check, for the window loop, whose indices stay below
/// `b.len() - 63` by its loop conditions, which the compiler does not see.
///
/// # Safety
/// - `i < b.len()`.
#[inline(always)]
unsafe fn at(b: &[u8], i: usize) -> u8 {
    debug_assert!(i < b.len());
    // SAFETY: `i < b.len()` is the caller's guarantee.
    unsafe { *b.get_unchecked(i) }
}

/// The two bytes `b[i..i + 2]` as a little-endian `u16`, without a bounds
/// check, for the window loop.
///
/// # Safety
/// - `i + 2 <= b.len()`.
#[inline(always)]
unsafe fn at2(b: &[u8], i: usize) -> u16 {
    debug_assert!(i + 2 <= b.len());
    // SAFETY: `i + 2 <= b.len()` is the caller's guarantee; the read is unaligned.
    u16::from_le_bytes(unsafe { b.as_ptr().add(i).cast::<[u8; 2]>().read_unaligned() })
}

/// The four bytes `b[i..i + 4]` as a little-endian `u32`, without a bounds
/// check, for the window loop.
///
/// # Safety
/// - `i + 4 <= b.len()`.
#[inline(always)]
unsafe fn at4(b: &[u8], i: usize) -> u32 {
    debug_assert!(i + 4 <= b.len());
    // SAFETY: `i + 4 <= b.len()` is the caller's guarantee; the read is unaligned.
    u32::from_le_bytes(unsafe { b.as_ptr().add(i).cast::<[u8; 4]>().read_unaligned() })
}

/// `p`, or past the whitespace starting there.
#[inline(always)]
fn ws_from(b: &[u8], p: usize) -> usize {
    match b.get(p) {
        Some(&c) if c > b' ' => p,
        None => p,
        Some(_) => ws_slow(b, p),
    }
}

#[inline(never)]
fn ws_slow(b: &[u8], mut p: usize) -> usize {
    while let Some(&c) = b.get(p) {
        tick(1);
        if !is_ws(c) {
            break;
        }
        p += 1;
    }
    p
}

/// The end of the string whose opening quote is at `p`: 16-byte steps inline
/// while the string is plain ASCII; the general loop takes over at the first
/// escape, control or non-ASCII byte, and for the last 15 bytes of the input.
#[inline(always)]
fn string_end(b: &[u8], p: usize) -> Res<usize> {
    let mut q = p + 1;
    if simd::HAS_MASK16 && b.len() >= 16 {
        let last = b.len() - 16; // one bound for the whole loop
        while q <= last {
            tick(1);
            // SAFETY: `q <= b.len() - 16`.
            let mask = unsafe { simd::mask16_unchecked(b, q) };
            if mask != 0 {
                let i = q + mask.trailing_zeros() as usize;
                // SAFETY: the mask's bits cover bytes `q..q + 16` only, so
                // `i < q + 16 <= b.len()`.
                if unsafe { *b.get_unchecked(i) } == b'"' {
                    return Ok(i + 1);
                }
                q = i;
                break;
            }
            q += 16;
        }
    }
    string_from(b, q).map(|(end, _)| end)
}

/// [`string_from`]'s end of the string, or `None` for an invalid one (the
/// structural walk's string loop, [`super::blocks`]).
pub(crate) fn string_rest(b: &[u8], p: usize) -> Option<usize> {
    string_from(b, p).ok().map(|(end, _)| end)
}

/// The general string loop, from `p` inside the string body: the end of the
/// string and whether it holds escapes.
#[inline(never)]
fn string_from(b: &[u8], p: usize) -> Res<(usize, bool)> {
    string_loop::<true>(b, p)
}

/// [`string_from`]; `BLOCKS = false` never hands long text to the 64-byte block
/// walk ([`simd::text`]): the reference it is tested against.
#[inline(always)]
fn string_loop<const BLOCKS: bool>(b: &[u8], mut p: usize) -> Res<(usize, bool)> {
    let mut escaped = false;
    // Text gets the block walk from its first escape 64 bytes into the string
    // (short strings never), and again 64 bytes after the walk handed back.
    let mut blocks_from = p + 64;
    loop {
        let from = p;
        p = simd::find_special(b, p);
        tick(1 + (p - from) / 16);
        match b.get(p) {
            Some(b'"') => return Ok((p + 1, escaped)),
            Some(b'\\') => {
                escaped = true;
                if BLOCKS && p >= blocks_from {
                    match simd::text(b, p) {
                        simd::text::Text::End(end) => return Ok((end, true)),
                        simd::text::Text::Resume(q) => {
                            blocks_from = q + 64;
                            if q > p {
                                p = q;
                                continue;
                            }
                        }
                    }
                }
                p = match unescape::check_escape(b, p) {
                    Some(next) => next,
                    None => return Err(Fail::at(Reason::InvalidEscape, p)),
                };
            }
            Some(&c) if c < 0x20 => return Err(Fail::at(Reason::ControlCharacter, p)),
            Some(_) => {
                p = match utf8_char_end(b, p) {
                    Some(next) => next,
                    None => return Err(Fail::at(Reason::InvalidUtf8, p)),
                };
            }
            None => return Err(Fail::at(Reason::UnexpectedEnd, p)),
        }
    }
}

/// `"key" :` at `p` and the whitespace after it: where the value starts.
#[inline(always)]
fn key_end(b: &[u8], p: usize) -> Res<usize> {
    if b.get(p) != Some(&b'"') {
        return Err(unexpected(b, p));
    }
    let mut q = string_end(b, p)?;
    if b.get(q) != Some(&b':') {
        q = ws_from(b, q);
        if b.get(q) != Some(&b':') {
            return Err(unexpected(b, q));
        }
    }
    Ok(ws_from(b, q + 1))
}

/// The end of the string, number or literal at `p` (anything else is an error).
#[inline(always)]
fn scalar_end(b: &[u8], p: usize) -> Res<usize> {
    match value_end(b, p)? {
        Some(end) => Ok(end),
        None => Err(unexpected(b, p)),
    }
}

/// The end of the string, number or literal at `p`, or `None` when an array or
/// object opens there (one dispatch on the first byte for both).
#[inline(always)]
fn value_end(b: &[u8], p: usize) -> Res<Option<usize>> {
    let end = match b.get(p) {
        Some(b'{' | b'[') => return Ok(None),
        Some(b'"') => string_end(b, p),
        Some(b'1'..=b'9') => {
            // Short positive integers that end at a delimiter stay inline;
            // everything else takes the full number grammar from where this stops.
            let mut q = p + 1;
            while let Some(b'0'..=b'9') = b.get(q) {
                tick(1);
                q += 1;
            }
            if matches!(b.get(q), Some(b',' | b']' | b'}')) {
                Ok(q)
            } else {
                number_tail(b, p, q)
            }
        }
        Some(b'-' | b'0') => number(b, p),
        Some(b't') => literal(b, p, b"true"),
        Some(b'f') => literal(b, p, b"false"),
        Some(b'n') => literal(b, p, b"null"),
        _ => Err(unexpected(b, p)),
    };
    end.map(Some)
}

#[inline(always)]
fn literal(b: &[u8], p: usize, lit: &[u8]) -> Res<usize> {
    if b[p..].starts_with(lit) {
        Ok(p + lit.len())
    } else {
        Err(Fail::at(Reason::InvalidLiteral, p))
    }
}

/// The end of the number starting at `start` (`-` or a digit).
fn number(b: &[u8], start: usize) -> Res<usize> {
    let mut p = start;
    let digit = |p: usize| {
        tick(1);
        matches!(b.get(p), Some(b'0'..=b'9'))
    };
    if b.get(p) == Some(&b'-') {
        p += 1;
    }
    match b.get(p) {
        Some(b'0') => p += 1,
        Some(b'1'..=b'9') => {
            p += 1;
            while digit(p) {
                p += 1;
            }
        }
        _ => return Err(Fail::at(Reason::InvalidNumber, p.max(start))),
    }
    number_tail(b, start, p)
}

/// The end of the run of ASCII digits starting at `p` (`p` itself if none),
/// when the eight bytes from `p` hold a byte that is not a digit.
#[inline(always)]
fn digits_end8(b: &[u8], p: usize) -> Option<usize> {
    digits_end8_of(*b.get(p..)?.first_chunk::<8>()?, p)
}

/// [`digits_end8`] without the length check, for the window loop.
///
/// # Safety
/// - `p + 8 <= b.len()`.
#[inline(always)]
unsafe fn digits_end8_unchecked(b: &[u8], p: usize) -> Option<usize> {
    debug_assert!(p + 8 <= b.len());
    // SAFETY: `p + 8 <= b.len()`, the caller's guarantee: the eight bytes are
    // inside `b`; `[u8; 8]` has alignment 1 and any bit pattern.
    let chunk = unsafe { b.as_ptr().add(p).cast::<[u8; 8]>().read_unaligned() };
    digits_end8_of(chunk, p)
}

/// [`digits_end8`] on the eight bytes `chunk` from `p`.
#[inline(always)]
pub(crate) fn digits_end8_of(chunk: [u8; 8], p: usize) -> Option<usize> {
    // Each byte's distance from b'0'; a byte that is not a digit (that distance
    // 10 or more, or its top bit set) gets its top bit set, and no byte's sum
    // carries into the next.
    let x = u64::from_le_bytes(chunk) ^ 0x3030_3030_3030_3030;
    let not_digit =
        (((x & 0x7f7f_7f7f_7f7f_7f7f) + 0x7676_7676_7676_7676) | x) & 0x8080_8080_8080_8080;
    (not_digit != 0).then(|| p + (not_digit.trailing_zeros() / 8) as usize)
}

/// The rest of a number whose integer part is `b[start..p]`: fraction,
/// exponent, and the check that no number byte follows.
fn number_tail(b: &[u8], start: usize, mut p: usize) -> Res<usize> {
    let digit = |p: usize| {
        tick(1);
        matches!(b.get(p), Some(b'0'..=b'9'))
    };
    let bad = |p: usize| Err(Fail::at(Reason::InvalidNumber, p.max(start)));
    if b.get(p) == Some(&b'.') {
        p += 1;
        let end = match digits_end8(b, p) {
            Some(end) => end,
            None => {
                let mut q = p;
                while digit(q) {
                    q += 1;
                }
                q
            }
        };
        if end == p {
            return bad(p);
        }
        p = end;
    }
    if matches!(b.get(p), Some(b'e' | b'E')) {
        p += 1;
        if matches!(b.get(p), Some(b'+' | b'-')) {
            p += 1;
        }
        if !digit(p) {
            return bad(p);
        }
        while digit(p) {
            p += 1;
        }
    }
    // A number must not run into another number-ish byte ("01", "1.").
    if matches!(
        b.get(p),
        Some(b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-')
    ) {
        return bad(p);
    }
    Ok(p)
}

/// The first `N <= 8` bytes of a name as a little-endian word.
const fn word(name: &[u8]) -> u64 {
    let mut w = 0u64;
    let mut i = 0;
    while i < name.len() {
        w |= (name[i] as u64) << (8 * i);
        i += 1;
    }
    w
}

const W_ID: u64 = word(b"id");
const W_ERROR: u64 = word(b"error");
const W_METHOD: u64 = word(b"method");
const W_PARAMS: u64 = word(b"params");
const W_RESULT: u64 = word(b"result");
const W_JSONRPC: u64 = word(b"jsonrpc");

/// Which JSON-RPC member the key string `bytes[ks..ke]` (quotes included) names,
/// after unescaping, if any.
#[inline(always)]
fn identify_key(bytes: &[u8], ks: usize, ke: usize, escaped: bool) -> Option<Field> {
    let inner = &bytes[ks + 1..ke - 1];
    if escaped {
        return Field::ALL
            .into_iter()
            .find(|f| unescape::escaped_eq(inner, f.name().as_bytes()));
    }
    let n = inner.len();
    if !(2..=7).contains(&n) {
        return None;
    }
    // One 8-byte load covers the name (and its closing quote, masked off).
    let w = match bytes.get(ks + 1..ks + 9) {
        Some(chunk) => {
            let mut a = [0u8; 8];
            a.copy_from_slice(chunk);
            u64::from_le_bytes(a) & ((1u64 << (8 * n)) - 1)
        }
        None => word(inner),
    };
    match (n, w) {
        (2, W_ID) => Some(Field::Id),
        (6, W_METHOD) => Some(Field::Method),
        (6, W_PARAMS) => Some(Field::Params),
        (7, W_JSONRPC) => Some(Field::Jsonrpc),
        (6, W_RESULT) => Some(Field::Result),
        (5, W_ERROR) => Some(Field::Error),
        _ => None,
    }
}

/// If a valid UTF-8 scalar value (RFC 3629) starts at `p`, the index after it.
#[inline]
pub(crate) fn utf8_char_end(b: &[u8], p: usize) -> Option<usize> {
    let c0 = *b.get(p)?;
    let cont =
        |i: usize, lo: u8, hi: u8| matches!(b.get(p + i), Some(&c) if (lo..=hi).contains(&c));
    let ok = match c0 {
        0xC2..=0xDF => cont(1, 0x80, 0xBF).then_some(2),
        0xE0 => (cont(1, 0xA0, 0xBF) && cont(2, 0x80, 0xBF)).then_some(3),
        0xE1..=0xEC | 0xEE..=0xEF => (cont(1, 0x80, 0xBF) && cont(2, 0x80, 0xBF)).then_some(3),
        0xED => (cont(1, 0x80, 0x9F) && cont(2, 0x80, 0xBF)).then_some(3),
        0xF0 => (cont(1, 0x90, 0xBF) && cont(2, 0x80, 0xBF) && cont(3, 0x80, 0xBF)).then_some(4),
        0xF1..=0xF3 => {
            (cont(1, 0x80, 0xBF) && cont(2, 0x80, 0xBF) && cont(3, 0x80, 0xBF)).then_some(4)
        }
        0xF4 => (cont(1, 0x80, 0x8F) && cont(2, 0x80, 0xBF) && cont(3, 0x80, 0xBF)).then_some(4),
        _ => None,
    };
    ok.map(|n| p + n)
}

#[cfg(test)]
mod text_tests {
    use super::string_loop;

    /// Long strings with escapes take the 64-byte block walk; their verdict (the
    /// end, or the error's reason and offset) equals the general loop's, on
    /// thousands of generated bodies mixing every escape, bad escapes, control
    /// bytes, UTF-8 of every length, invalid UTF-8 and missing closing quotes,
    /// placed at every offset of a block.
    #[test]
    fn block_walk_matches_the_general_loop() {
        let mut next = crate::test_rng::lcg(0x7e47_u64);
        let good: [&[u8]; 14] = [
            b"a",
            b"fn main() {",
            b"\\n",
            b"\\t",
            b"\\\"",
            b"\\\\",
            b"\\\\\\\\",
            b"\\/\\b\\f\\r",
            b"\\u00e9",
            b"\\uD83D\\uDE00",
            "é".as_bytes(),
            "€".as_bytes(),
            "😀".as_bytes(),
            b"0123456789abcdefghijklmnopqrstuvwxyz ",
        ];
        let bad: [&[u8]; 9] = [
            b"\\x",
            b"\\u12g4",
            b"\\u12",
            b"\x01",
            b"\x1f",
            b"\xff",
            b"\xc3",
            b"\xed\xa0\x80",
            b"\\",
        ];
        let rounds = if cfg!(miri) { 30 } else { 6000 };
        let mut blocks_taken = 0;
        for round in 0..rounds {
            let mut s = vec![b' '; next() % 70];
            let start = s.len();
            let target = 64 + next() % 400;
            while s.len() - start < target {
                s.extend_from_slice(good[next() % good.len()]);
                if round % 3 == 0 && next().is_multiple_of(40) {
                    s.extend_from_slice(bad[next() % bad.len()]);
                }
            }
            if !next().is_multiple_of(8) {
                s.push(b'"');
            }
            s.extend(std::iter::repeat_n(b'x', next() % 80));
            let fast = string_loop::<true>(&s, start);
            let slow = string_loop::<false>(&s, start);
            assert_eq!(
                format!("{fast:?}"),
                format!("{slow:?}"),
                "{}",
                String::from_utf8_lossy(&s)
            );
            blocks_taken += usize::from(fast.is_ok());
        }
        assert!(blocks_taken > rounds / 2, "too few valid strings generated");
    }

    /// `piece` placed `at` bytes after a string's first escape (64 bytes in): the
    /// block walk's verdict equals the general loop's, and a valid string ends in
    /// the walk itself (no hand-back: the letter masks let every valid escape and
    /// character through).
    fn check_piece(piece: &[u8], at: usize) {
        let mut s = vec![b'a'; 70];
        let start = 1;
        let p = s.len();
        s.extend_from_slice(b"\\n");
        s.resize(p + at, b'b');
        s.extend_from_slice(piece);
        s.resize(p + 200, b'c');
        s.push(b'"');
        s.resize(s.len() + 70, b' ');
        let fast = string_loop::<true>(&s, start);
        let slow = string_loop::<false>(&s, start);
        let show = || format!("{:?} at {at}", String::from_utf8_lossy(piece));
        assert_eq!(format!("{fast:?}"), format!("{slow:?}"), "{}", show());
        if let Ok((end, _)) = slow {
            let walk = super::simd::text(&s, p);
            assert_eq!(walk, super::simd::text::Text::End(end), "{}", show());
        }
    }

    /// Every byte after a backslash, at every offset of two blocks: the simple
    /// letters pass in the masks, `u` through its check, anything else hands back.
    #[test]
    fn every_escape_letter_at_every_offset() {
        let (letters, offsets) = if cfg!(miri) {
            (&b"nu\"/x\x00\xc3"[..], 60..68)
        } else {
            (&(0..=255u8).collect::<Vec<u8>>()[..], 2..140)
        };
        for &c in letters {
            for at in offsets.clone() {
                let hex = if c == b'u' { &b"00e9"[..] } else { b"" };
                check_piece(&[&[b'\\', c][..], hex].concat(), at);
            }
        }
    }

    /// Backslash runs of 1 to 6 before a quote, a simple letter, `b`, `u` and
    /// a bad letter (the walk's fast check passes a quote only right after a
    /// lone backslash, and hands the others to the exact path), at every offset
    /// across block boundaries.
    #[test]
    fn backslash_runs_before_quotes_and_letters() {
        let runs = if cfg!(miri) { 1..3 } else { 1..7 };
        let offsets = if cfg!(miri) { 61..66 } else { 2..140 };
        for run in runs {
            for end in [&b"\""[..], b"n", b"b", b"u00e9", b"x", b"\\"] {
                let piece = [&b"\\".repeat(run)[..], end].concat();
                for at in offsets.clone() {
                    check_piece(&piece, at);
                }
            }
        }
    }

    /// `\u` escapes (valid, surrogates, bad digits, cut by the closing quote),
    /// escaped backslashes, non-ASCII characters of every length, invalid UTF-8
    /// and control bytes, at every offset across block boundaries.
    #[test]
    fn escapes_and_utf8_across_blocks() {
        let pieces: [&[u8]; 26] = [
            b"\\u00e9",
            b"\\uD83D\\uDE00",
            b"\\uABCDx",
            b"\\uabcd\\n",
            b"\\u12g4",
            b"\\u0\"",
            b"\\U0041",
            b"\\\\\\\"",
            b"\\\\\\\\\\",
            "é".as_bytes(),
            "€\\t".as_bytes(),
            "😀é€".as_bytes(),
            "\u{7ff}\u{800}\u{ffff}\u{10000}\u{10ffff}".as_bytes(),
            b"\xc3a",
            b"\xe2\x82",
            b"\xf0\x9f\x98",
            b"\xed\xa0\x80",
            b"\xc0\x80",
            b"\xf4\x90\x80\x80",
            b"\x80",
            b"\xff",
            b"\x01",
            b"\x1f",
            b"\x7f",
            b"\\\xc3\xa9",
            b"\\\x01",
        ];
        let offsets = if cfg!(miri) { 61..66 } else { 2..140 };
        for piece in pieces {
            for at in offsets.clone() {
                check_piece(piece, at);
            }
        }
    }
}

#[cfg(test)]
mod window_tests {
    use super::{Scanner, WALKS};
    use crate::parse::test_json::value;
    use crate::simd;

    fn verdict(input: &[u8], max_depth: usize, general: bool) -> String {
        let mut stack = vec![0u64; max_depth / 64 + 1];
        let mut long = crate::long::LongValues::default();
        let sc = Scanner::new(input, max_depth, &mut stack, &mut long);
        let mut sc = if general { sc.general_only() } else { sc };
        format!("{:?}", sc.validate())
    }

    /// The verdict and the long values noted.
    fn verdict_long(input: &[u8], general: bool) -> String {
        let mut stack = vec![0u64; 3];
        let mut long = crate::long::LongValues::default();
        let sc = Scanner::new(input, 128, &mut stack, &mut long);
        let mut sc = if general { sc.general_only() } else { sc };
        let v = sc.validate();
        let mut entries: Vec<_> = long.entries().collect();
        entries.sort();
        format!("{v:?} {entries:?}")
    }

    /// Messages long enough for the structural walk (from a nested value's
    /// start, or where the window loop hands over to it): the same
    /// verdicts as the general loop alone, and the same long values noted, on
    /// generated params (compact and with whitespace), truncated, and with a
    /// troublemaker byte written over positions all along.
    #[test]
    fn structural_walk_matches_the_general_loop() {
        let mut next = crate::test_rng::lcg(0x77a1_u64);
        let (rounds, cuts, writes) = if cfg!(miri) { (1, 3, 5) } else { (40, 40, 400) };
        let bad = [
            b'"', b'\\', b'{', b'}', b'[', b']', b',', b':', b'0', b'-', b'.', b'e', b'x', b't',
            b' ', b'u', 0x01, 0x1f, 0x80, 0xc3, 0xff,
        ];
        for round in 0..rounds {
            let ws = round % 2 == 1;
            // Half the rounds open with a header of strings, which the first
            // sample refuses, and go on long enough for a later one.
            let header = round % 4 >= 2;
            let mut v = br#"{"jsonrpc":"2.0","method":"ingest","params":["#.to_vec();
            if header {
                v.extend_from_slice(br#"{"names":["#);
                for i in 0..40 {
                    let sep = if i > 0 { "," } else { "" };
                    v.extend_from_slice(
                        format!("{sep}\"name number {i} of the header\"").as_bytes(),
                    );
                }
                v.extend_from_slice(b"]},");
            }
            let size = if header { 14_000 } else { 6000 };
            let mut first = true;
            while v.len() < size {
                if !first {
                    v.push(b',');
                }
                first = false;
                if header {
                    // A body the window loop goes through (numbers and
                    // literals, short ASCII keys) up to where it stops.
                    let nums = [
                        "-65.613616999999977",
                        "0",
                        "1e5",
                        "-0.5E-3",
                        "true",
                        "120933",
                    ];
                    let n = nums[next() % nums.len()];
                    let sp = if ws { " " } else { "" };
                    v.extend_from_slice(format!("[{n},{sp}{n}],{{\"k\":{n}}}").as_bytes());
                } else {
                    value(&mut next, 2, ws, &mut v);
                }
            }
            // A long string and a long number, to be noted.
            v.extend_from_slice(b",\"");
            v.extend(std::iter::repeat_n(b'a', 1500));
            v.extend_from_slice(b"\",");
            v.extend(std::iter::repeat_n(b'7', 1100));
            v.extend_from_slice(br#"],"id":1}"#);
            let want = verdict_long(&v, true);
            assert!(want.starts_with("Ok(())"), "{want}");
            let walks = WALKS.get();
            assert_eq!(verdict_long(&v, false), want);
            if header && simd::has_avx2() && !cfg!(miri) {
                assert!(WALKS.get() > walks, "no walk after the header");
            }
            for _ in 0..cuts {
                let w = &v[..next() % v.len()];
                assert_eq!(verdict_long(w, false), verdict_long(w, true));
            }
            for _ in 0..writes {
                let mut w = v.clone();
                let i = next() % w.len();
                w[i] = bad[next() % bad.len()];
                assert_eq!(
                    verdict_long(&w, false),
                    verdict_long(&w, true),
                    "{:#x} at {i}",
                    w[i]
                );
            }
        }
    }

    /// The window loop (with the general loop resuming where it hands over) and
    /// the general loop alone give the same verdict (the end, or the error's
    /// reason and offset) on generated nested values, compact and with
    /// whitespace, at several depth limits, on every truncation, and with each
    /// of a set of bytes (quotes, brackets, separators, digits, control bytes,
    /// invalid UTF-8, whitespace) written over every position.
    #[test]
    fn window_loop_matches_the_general_loop() {
        let mut next = crate::test_rng::lcg(0x5ca7_u64);
        let (rounds, every) = if cfg!(miri) { (3, 23) } else { (300, 1) };
        let bad = [
            b'"', b'\\', b'{', b'}', b'[', b']', b',', b':', b'0', b'-', b'.', b'e', b'x', b't',
            b'E', b'+', b'5', b' ', b'\n', 0x01, 0x1f, 0x7f, 0x80, 0xc3, 0xff,
        ];
        let mut long = 0;
        for round in 0..rounds {
            let mut v = Vec::new();
            let ws = round % 3 == 2;
            while v.len() < 200 {
                v.clear();
                v.push(b'[');
                value(&mut next, 1, ws, &mut v);
                v.push(b',');
                value(&mut next, 1, ws, &mut v);
                v.push(b']');
            }
            long += usize::from(v.len() > 400);
            for depth in [2, 4, 128] {
                assert_eq!(
                    verdict(&v, depth, false),
                    verdict(&v, depth, true),
                    "{}",
                    String::from_utf8_lossy(&v)
                );
            }
            assert_eq!(verdict(&v, 128, false), "Ok(())");
            for cut in (0..v.len()).step_by(every) {
                let w = &v[..cut];
                assert_eq!(verdict(w, 128, false), verdict(w, 128, true), "cut {cut}");
            }
            for i in (round % every..v.len()).step_by(every) {
                let x = bad[next() % bad.len()];
                let mut w = v.clone();
                w[i] = x;
                assert_eq!(
                    verdict(&w, 128, false),
                    verdict(&w, 128, true),
                    "{x:#x} at {i}: {}",
                    String::from_utf8_lossy(&w)
                );
            }
        }
        // (Under Miri, three values of 200 bytes or more still take the window loop.)
        assert!(
            cfg!(miri) || long > rounds / 4,
            "too few long values generated"
        );
    }

    /// Strings with 2-byte UTF-8 characters (stepped over on the window's mask)
    /// and with near misses (a lone lead, a lead before ASCII, a quote or a
    /// backslash, overlong leads 0xC0/0xC1, a 3-byte character, a stray
    /// continuation byte, a control byte), at every offset from the window's
    /// start and across its 64-byte edge: the verdict (the end, or the error's
    /// reason and offset) equals the general loop's, and valid text is accepted.
    #[test]
    fn window_two_byte_chars_match_the_general_loop() {
        let chars: [(&[u8], bool); 16] = [
            (b"\xc3\xbc", true),
            (b"\xc2\x80", true),
            (b"\xdf\xbf", true),
            (b"\xc3\xbc\xc3\xa9\xd0\x96", true),
            (b"\xe2\x82\xac", true),
            (b"\xc3", false),
            (b"\xc3A", false),
            (b"\xc3\xc3\xbc", false),
            (b"\xc3\\n", false),
            (b"\xc1\xbf", false),
            (b"\xc0\x80", false),
            (b"\xe0\xbc", false),
            (b"\xc3\xbc\x80", false),
            (b"\xbc", false),
            (b"\xc3\x01", false),
            (b"\xdf\xc0", false),
        ];
        let step = if cfg!(miri) { 29 } else { 1 };
        for (ch, valid) in chars {
            for k in (0..140).step_by(step) {
                for j in [0, 1, 7] {
                    let mut v = b"[\"".to_vec();
                    v.extend(std::iter::repeat_n(b'a', k));
                    v.extend_from_slice(ch);
                    v.extend(std::iter::repeat_n(b'b', j));
                    v.extend_from_slice(b"\",\"");
                    v.extend_from_slice(ch);
                    v.push(b'"');
                    while v.len() < 260 {
                        v.extend_from_slice(b",0");
                    }
                    v.push(b']');
                    let got = verdict(&v, 128, false);
                    assert_eq!(
                        got,
                        verdict(&v, 128, true),
                        "{}",
                        String::from_utf8_lossy(&v)
                    );
                    assert_eq!(got == "Ok(())", valid, "{}", String::from_utf8_lossy(&v));
                    // Cut in the string's text (the window loop then hands over).
                    let cut = &v[..k + 3];
                    assert_eq!(verdict(cut, 128, false), verdict(cut, 128, true));
                }
            }
        }
        // The 2-byte characters stay on the window's mask (no hand-over to
        // the general loop, which would rescan the strings): as many
        // operations as for ASCII text of the same length, plus one step for
        // each character.
        let ops = |body: &[u8]| {
            let mut v = b"[\"".to_vec();
            v.extend_from_slice(body);
            v.push(b'"');
            while v.len() < 260 {
                v.extend_from_slice(b",0");
            }
            v.push(b']');
            crate::parse::ops::take();
            assert_eq!(verdict(&v, 128, false), "Ok(())");
            crate::parse::ops::take()
        };
        assert_eq!(
            ops(b"Z\xc3\xbcrich, \xc3\xa9t\xc3\xa9 \xd0\x96"),
            ops(b"Zuurich, eetee ZZ") + 4
        );
    }

    /// The window loop on a padded copy of the input's rest
    /// ([`Scanner::nested_padded`]): generated values of every length, led by
    /// whitespace so that the input is long enough for the window loop and
    /// trailed by whitespace runs around 64 bytes and past [`PADDED_MAX`]
    /// (so that the value's rest is copied whole, ends within its last 64
    /// bytes, or is not copied): the verdict equals the general loop's, on the
    /// value, every truncation and a byte written over every position.
    #[test]
    fn padded_window_matches_the_general_loop() {
        let mut next = crate::test_rng::lcg(0x9add_u64);
        let (rounds, every) = if cfg!(miri) { (4, 17) } else { (240, 1) };
        let bad = [
            b'"', b'\\', b'{', b']', b',', b':', b'0', b'e', b't', b' ', 0x00, 0x80,
        ];
        let (mut short, mut whole, mut not_copied) = (0, 0, 0);
        for round in 0..rounds {
            let mut v = vec![b'['];
            value(&mut next, 1, round % 4 == 3, &mut v);
            v.push(b']');
            let trail = [0, 1, 40, 63, 64, 65, 520][next() % 7];
            let lead = super::WINDOW_MIN.saturating_sub(v.len() + trail) + next() % 3 * 40;
            let mut w = vec![b' '; lead];
            w.extend_from_slice(&v);
            w.extend(std::iter::repeat_n(b' ', trail));
            let rest = w.len() - lead;
            short += usize::from(rest < 64);
            whole += usize::from((64..=super::PADDED_MAX).contains(&rest));
            not_copied += usize::from(rest > super::PADDED_MAX);
            assert_eq!(verdict(&w, 128, false), "Ok(())");
            assert_eq!(verdict(&w, 3, false), verdict(&w, 3, true));
            for cut in (lead..w.len()).step_by(every) {
                let x = &w[..cut];
                assert_eq!(verdict(x, 128, false), verdict(x, 128, true), "cut {cut}");
            }
            for i in (lead + round % every..w.len()).step_by(every) {
                let mut x = w.clone();
                x[i] = bad[next() % bad.len()];
                assert_eq!(
                    verdict(&x, 128, false),
                    verdict(&x, 128, true),
                    "{}",
                    String::from_utf8_lossy(&x)
                );
            }
        }
        assert!(
            cfg!(miri) || (short > 10 && whole > 10 && not_copied > 10),
            "{short} {whole} {not_copied}"
        );
    }

    /// Deep nesting in the window loop (levels past the stack's first and
    /// second words): arrays and objects mixed by a pattern, closed in order or
    /// with a bracket of the wrong kind at some level, at several depth limits:
    /// the verdict equals the general loop's.
    #[test]
    fn window_deep_levels_match_the_general_loop() {
        let (sizes, patterns): (&[usize], &[u32]) = if cfg!(miri) {
            (&[65, 129], &[0b110])
        } else {
            (
                &[63, 64, 65, 100, 127, 128, 129, 150],
                &[0b1, 0b10, 0b110, 0b1011],
            )
        };
        for &n in sizes {
            for &pattern in patterns {
                let is_array = |i: usize| pattern >> (i % 4) & 1 == 1 || i.is_multiple_of(7);
                let mut v = Vec::new();
                for i in 0..n {
                    v.extend_from_slice(if is_array(i) { b"[1," } else { b"{\"k\":" });
                }
                v.extend_from_slice(b"\"0xf6e1d68c6c394a172235d5b854bc1346cbb25d95\"");
                let close = v.len();
                for i in (0..n).rev() {
                    v.push(if is_array(i) { b']' } else { b'}' });
                }
                v.extend(std::iter::repeat_n(b' ', 70));
                for wrong in [None, Some(3), Some(n / 2), Some(n - 1)] {
                    let mut w = v.clone();
                    if let Some(k) = wrong {
                        let i = close + k;
                        w[i] = if w[i] == b']' { b'}' } else { b']' };
                    }
                    for depth in [64, 127, 128, 200] {
                        assert_eq!(
                            verdict(&w, depth, false),
                            verdict(&w, depth, true),
                            "{depth}: {}",
                            String::from_utf8_lossy(&w)
                        );
                    }
                }
                assert_eq!(verdict(&v, 200, false), "Ok(())");
            }
        }
    }

    /// The literals in the window loop: each of `true`, `false` and `null`
    /// whole, truncated at every length, and with each of a set of bytes
    /// written over each of its positions or appended to it (`tru `, `nul]`,
    /// `falsy`, `trux`, `nulll`), as the first and a later array element and as
    /// an object member's value, at several offsets of a long value: the
    /// verdict equals the general loop's.
    #[test]
    fn window_literals_match_the_general_loop() {
        let lits: [&[u8]; 3] = [b"true", b"false", b"null"];
        let subs = [
            b'x', b'u', b'e', b's', b'l', b'a', b'r', b'n', b't', b'f', b'T', b'U', b' ', b',',
            b']', b'}', b'"', b'0', 0x00, 0x80,
        ];
        let mut variants: Vec<Vec<u8>> = Vec::new();
        for lit in lits {
            for k in 0..=lit.len() {
                variants.push(lit[..k].to_vec());
            }
            for i in 0..=lit.len() {
                for &x in &subs {
                    let mut v = lit.to_vec();
                    if i == lit.len() {
                        v.push(x);
                    } else {
                        v[i] = x;
                    }
                    variants.push(v);
                }
            }
        }
        let filler: &[u8] = b"\"0xf6e1d68c6c394a172235d5b854bc1346cbb25d95\",";
        let every = if cfg!(miri) { 29 } else { 1 };
        let (mut case, mut ok) = (0, 0);
        for v in &variants {
            for form in 0..3 {
                for lead in 1..=3 {
                    case += 1;
                    if case % every != 0 {
                        continue;
                    }
                    let mut w = b"[".to_vec();
                    for _ in 0..lead {
                        w.extend_from_slice(filler);
                    }
                    w.push(b'"');
                    w.extend(std::iter::repeat_n(b'a', lead));
                    w.extend_from_slice(b"\",");
                    match form {
                        0 => w.extend_from_slice(v),
                        1 => {
                            w.push(b'[');
                            w.extend_from_slice(v);
                            w.push(b']');
                        }
                        _ => {
                            w.extend_from_slice(b"{\"k\":");
                            w.extend_from_slice(v);
                            w.push(b'}');
                        }
                    }
                    for _ in 0..4 {
                        w.push(b',');
                        w.extend_from_slice(&filler[..filler.len() - 1]);
                    }
                    w.push(b']');
                    let want = verdict(&w, 128, true);
                    ok += usize::from(want == "Ok(())");
                    assert_eq!(
                        verdict(&w, 128, false),
                        want,
                        "{}",
                        String::from_utf8_lossy(&w)
                    );
                }
            }
        }
        // The whole literals, in every form and at every offset, are valid.
        assert!(cfg!(miri) || ok >= 27, "too few valid cases: {ok}");
    }

    /// Every 64-byte special-mask kernel agrees with the scalar table for every
    /// byte value at every position of a block.
    #[test]
    fn special_mask64_kernels_match_scalar() {
        let bytes: Vec<u8> = if cfg!(miri) {
            vec![0x00, 0x1f, 0x20, b'"', b'\\', b'a', 0x7f, 0x80, 0xff]
        } else {
            (0..=255).collect()
        };
        for &c in &bytes {
            for pos in 0..64 {
                let mut block = [b'a'; 64];
                block[pos] = c;
                block[(pos + 17) % 64] = b'"';
                let want = crate::simd::scalar::special_mask64(&block);
                assert_eq!(
                    want,
                    ((1u64 << pos) * u64::from(crate::simd::scalar::SPECIAL[c as usize]))
                        | (1u64 << ((pos + 17) % 64))
                );
                assert_eq!(crate::simd::special_mask64(&block), want, "{c:#x} at {pos}");
                #[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
                if crate::simd::has_avx2() {
                    // SAFETY: AVX2 availability was just checked.
                    let got = unsafe { crate::simd::avx2::special_mask64(&block) };
                    assert_eq!(got, want, "avx2 {c:#x} at {pos}");
                }
            }
        }
    }
}
