//! The lexeme readers on byte slices that are neither strings nor numbers:
//! whitespace, a member's key (and which JSON-RPC member it names), the end of
//! any scalar value, literals, and the error for a byte the grammar does not
//! allow.

use super::numbers::{number, number_tail};
use super::spans::{Fail, Res};
use super::strings::string_end;
use crate::parse::error::{Field, Reason};
use crate::parse::ops::tick;
use crate::unescape;

#[inline]
pub(super) fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// The error for the byte at `p` (or the end of input) not fitting the grammar.
#[cold]
pub(super) fn unexpected(b: &[u8], p: usize) -> Fail {
    if p >= b.len() {
        Fail::at(Reason::UnexpectedEnd, p)
    } else {
        Fail::at(Reason::UnexpectedByte, p)
    }
}

/// `p`, or past the whitespace starting there.
#[inline(always)]
pub(super) fn ws_from(b: &[u8], p: usize) -> usize {
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

/// `"key" :` at `p` and the whitespace after it: where the value starts.
#[inline(always)]
pub(super) fn key_end(b: &[u8], p: usize) -> Res<usize> {
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
pub(super) fn scalar_end(b: &[u8], p: usize) -> Res<usize> {
    match value_end(b, p)? {
        Some(end) => Ok(end),
        None => Err(unexpected(b, p)),
    }
}

/// The end of the string, number or literal at `p`, or `None` when an array or
/// object opens there (one dispatch on the first byte for both).
#[inline(always)]
pub(super) fn value_end(b: &[u8], p: usize) -> Res<Option<usize>> {
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
pub(super) fn identify_key(bytes: &[u8], ks: usize, ke: usize, escaped: bool) -> Option<Field> {
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
