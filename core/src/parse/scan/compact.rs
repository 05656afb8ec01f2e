//! The compact path: the fast path for the layout most clients send
//! (`{"jsonrpc":"2.0","method":"…","params":…,"id":…}`, no whitespace, no escape
//! in the method), which declines to the general path ([`super::general`]) on
//! anything else.

use super::Scanner;
use super::numbers::number_tail;
use super::readers::is_ws;
use super::spans::{ObjSpans, Span};
use crate::parse::error::Field;
use crate::parse::ops::tick;
use crate::simd;

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
pub(super) enum Compact {
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
pub(super) enum ObjAt {
    /// Right after a member's value (whitespace may follow).
    AfterValue,
    /// At the start of the value of member `field`, or at whitespace before it
    /// (its key and `:` taken).
    Value(Field),
}

impl Scanner<'_, '_> {
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
    pub(super) fn scan_compact(
        &mut self,
        base: usize,
        depth: usize,
        top: &mut ObjSpans,
    ) -> Compact {
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
}
