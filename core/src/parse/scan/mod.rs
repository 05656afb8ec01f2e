//! The one-pass validating scanner.
//!
//! It checks a whole message against RFC 8259 (grammar, UTF-8, depth) and records
//! the byte spans of the members that JSON-RPC cares about, at depth 1 (a single
//! object) or depth 2 (the objects of a batch). Nesting below that is validated by
//! an iterative loop whose only state is one bit per level, so the call stack never
//! grows with the input.
//!
//! This file holds the [`Scanner`] and its entry points (a message, a batch, one
//! value); each stage and each reader has its own file:
//!
//! - [`spans`]: what a scan records ([`Span`], [`ObjSpans`], [`Shape`]) and its
//!   internal error.
//! - [`compact`]: the fast path for the compact layout most clients send.
//! - [`general`]: the general path on the objects whose members are recorded; it
//!   gives every verdict the compact path declines.
//! - [`nested`]: the nesting loop below the recorded levels, and where it hands a
//!   value to the window loop or the structural walk.
//! - [`window`]: the window loop, nested values on 64-byte masks while the input is
//!   simple.
//! - [`readers`], [`strings`], [`numbers`]: the lexeme readers on byte slices
//!   (whitespace, keys and literals; strings and UTF-8; numbers).
//! - [`cursor`]: the unchecked reads.

mod compact;
mod cursor;
mod general;
mod nested;
mod numbers;
mod readers;
mod spans;
mod strings;
mod window;

pub(crate) use nested::Resume;
#[cfg(test)]
pub(crate) use nested::general_value_end;
pub(crate) use numbers::digits_end8_of;
pub(crate) use spans::{ElemSink, ObjSpans, Shape, Span};
pub(crate) use strings::{string_rest, utf8_char_end};

use super::Error;
use super::error::Reason;
use super::ops::tick;
use crate::long::{LONG, LongValues};
use crate::simd;
use compact::Compact;
use readers::{is_ws, scalar_end};
use spans::{Fail, Res};
use strings::string_from;

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
    /// Whether `long` is to be read (a session's message): else nothing is
    /// noted ([`Scanner::noting`]).
    note: bool,
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
            note: true,
        }
    }

    /// Whether the long values are noted (the default): off where nothing
    /// reads them ([`crate::Parser::parse`] and [`crate::Parser::validate`]
    /// outside a session), which spares the noting loops' work.
    #[inline(always)]
    pub(crate) fn noting(mut self, on: bool) -> Self {
        self.note = on;
        self
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
        if self.note && self.bytes.len() >= LONG {
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
}
