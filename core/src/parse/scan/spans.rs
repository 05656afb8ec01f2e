//! What the scanner records: the byte spans of one object's JSON-RPC members
//! ([`ObjSpans`]), the message's shape ([`Shape`]), where a batch's element spans
//! go ([`ElemSink`]), and the scanner's internal error ([`Fail`]).

use super::super::Error;
use super::super::error::{Field, Reason};

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

/// Where batch element spans go; implemented by the parser's reusable storage.
pub(crate) trait ElemSink {
    fn clear(&mut self);
    fn push(&mut self, spans: ObjSpans);
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
    pub(super) fn at(reason: Reason, at: usize) -> Self {
        Fail {
            reason,
            at: at as u32,
        }
    }

    pub(super) fn into_error(self, max_depth: usize) -> Error<'static> {
        let e = Error::at(self.reason, self.at as usize);
        if self.reason == Reason::TooDeep {
            e.with_limit(max_depth)
        } else {
            e
        }
    }
}

pub(super) type Res<T> = Result<T, Fail>;
