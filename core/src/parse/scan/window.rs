//! The window loop: the nesting loop's fast part, on nested values while the
//! input is at least 64 bytes from its end (or on a padded copy of its end),
//! the strings' ends found on a 64-byte special-byte mask ([`Window`]) that many
//! short strings share. It gives no verdict: at anything it does not take, it
//! hands over to the general loop ([`super::nested`]). Its reads go through a
//! [`Cursor`], which owns the unchecked ones.

use super::Scanner;
use super::cursor::{Cursor, Seen, Window, first, next};
use super::nested::Resume;
use super::numbers::{digits_end8_of, number, number_tail};
use super::readers::{value_end, ws_from};
use super::spans::Res;
use super::strings::string_from;
use crate::long::{LONG, LongValues};
use crate::parse::ops::tick;
use crate::simd;
use core::mem::MaybeUninit;

/// Messages shorter than this never take the window loop: its set-up (one
/// 64-byte mask) would not pay, and they have few bytes 64 from their end.
pub(super) const WINDOW_MIN: usize = 192;

/// The most input after a nested value's start that [`Scanner::nested_padded`]
/// copies (more is left to the window loop on the input, then the general
/// loop for its last 64 bytes), and the size of its buffer
/// ([`Cursor::padded`]).
pub(super) const PADDED_MAX: usize = 512;
pub(super) const PADDED_BUF: usize = 64 + PADDED_MAX + 64;

// The window loop notes long strings in its own offsets: none is on the padded copy.
const _: () = assert!(PADDED_MAX < LONG);

impl Scanner<'_, '_> {
    /// The window loop on a copy of the input from `pos` (at most
    /// [`PADDED_MAX`] bytes) followed by 64 zero bytes ([`Cursor::padded`]),
    /// so that it goes on to the input's end (on the input itself it keeps 64
    /// bytes after every position it reads at, and leaves the last 64 to the
    /// general loop). A zero byte is nothing JSON allows outside a string, nor
    /// inside one: the loop takes no token reaching into the zeros, so every
    /// token it takes lies in the copy, and the byte after one (the zero for
    /// the input's end) is judged as the general loop judges the end of the
    /// input (a number ends there, say). Its hand-over, back in input
    /// positions, is then the general loop's.
    #[inline(always)]
    pub(super) fn nested_padded<const NOTE: bool>(&mut self, base: usize, depth: usize) -> Resume {
        let mut buf = [MaybeUninit::uninit(); PADDED_BUF];
        let pos = self.pos;
        let pad = Cursor::padded(&mut buf, self.bytes, pos);
        match self.nested_window::<NOTE>(pad.bytes(), 0, base, depth, usize::MAX) {
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
    pub(super) fn nested_window<const NOTE: bool>(
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
    /// input is at least 64 bytes from its end ([`Cursor::end`]), with the
    /// strings' ends found on a 64-byte mask ([`Window`]) that many short
    /// strings share. It returns no errors: at anything it does not accept (an
    /// error, or simply input it does not take, such as a string past the last
    /// window), it hands over at the start of the token it was on, and the
    /// general loop rescans that token and gives the verdict. Whatever it
    /// accepted, the general loop accepts too, in the same state (differential
    /// tests check this). With `NOTE`, the long strings are noted
    /// ([`LongValues`]). No array or object opens at or past `stop`: the loop
    /// hands over there ([`Scanner::nested_long`] samples for the walk again).
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
        // The level stack holds the bits of levels `0..=max_depth` (checked
        // once here; its reads and writes below go unchecked).
        let Some(cur) = Cursor::new(b) else {
            return Resume::Open { p, depth };
        };
        let fast_end = cur.end();
        if p >= fast_end || max_depth / 64 >= self.stack.len() {
            return Resume::Open { p, depth };
        }
        let mut w = Window::new(cur, p, &mask);
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
            if depth > max_depth {
                return Resume::Open { p, depth };
            }
            // No array or object opens at or past `stop` (nor at `end`).
            let Some(block) = cur.block_before(p, stop) else {
                return Resume::Open { p, depth };
            };
            let t = p;
            in_array = block[0] == b'[';
            // SAFETY: `depth <= max_depth` (checked above) and `max_depth / 64 <
            // stack.len()` (checked at the start).
            unsafe { self.set_level_unchecked(depth, in_array) };
            p += 1;
            let mut block = next(block);
            if block[0] <= b' ' {
                p = ws_from(b, p);
                let Some(after_ws) = cur.block_before_end(p) else {
                    return Resume::Open { p: t, depth };
                };
                block = first(after_ws);
            }
            if block[0] == if in_array { b']' } else { b'}' } {
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
                let step = if in_array {
                    window_value::<NOTE>(cur, p, block, &mut w, &mask, self.long)
                } else {
                    window_key_value::<NOTE>(cur, p, block, &mut w, &mask, self.long)
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
                        let Some(block) = cur.block_before_end(p) else {
                            return Resume::After {
                                p,
                                depth,
                                in_array: $array,
                            };
                        };
                        let t = p;
                        // `,"`: in an object (the usual compact layout) it goes
                        // straight to the key's body, in an array to the
                        // string's body: one 16-bit compare.
                        let comma_quote =
                            u16::from_le_bytes([block[0], block[1]]) == u16::from_le_bytes(*b",\"");
                        if !$array && comma_quote {
                            let step =
                                window_key_body_value::<NOTE>(cur, p + 2, &mut w, &mask, self.long);
                            take_step!(
                                step,
                                Resume::After {
                                    p: t,
                                    depth,
                                    in_array: $array
                                }
                            );
                            continue;
                        }
                        if $array && comma_quote {
                            match window_string_end(b, p + 2, &mut w, &mask) {
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
                        let mut block = block;
                        if block[0] != b',' && block[0] <= b' ' {
                            p = ws_from(b, p);
                            block = match cur.block_before_end(p) {
                                Some(after_ws) => after_ws,
                                None => {
                                    return Resume::After {
                                        p: t,
                                        depth,
                                        in_array: $array,
                                    };
                                }
                            };
                        }
                        let c = block[0];
                        if c == b',' {
                            let step =
                                $member::<NOTE>(cur, p + 1, next(block), &mut w, &mask, self.long);
                            take_step!(
                                step,
                                Resume::After {
                                    p: t,
                                    depth,
                                    in_array: $array
                                }
                            );
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
/// loop, `block` the 64 bytes from `p`: `"key":`, then a value; whitespace
/// allowed where JSON allows it.
#[inline(always)]
fn window_key_value<'a, const NOTE: bool>(
    cur: Cursor<'a>,
    mut p: usize,
    block: &'a [u8; 64],
    w: &mut Window<'a>,
    mask: &impl Fn(&[u8; 64]) -> u64,
    long: &mut LongValues,
) -> Step {
    if block[0] != b'"' {
        p = ws_from(cur.bytes(), p);
        match cur.block_before_end(p) {
            Some(after_ws) if after_ws[0] == b'"' => {}
            _ => return Step::HandOver,
        }
    }
    window_key_body_value::<NOTE>(cur, p + 1, w, mask, long)
}

/// The rest of an object member whose key's body starts at `s` (just after its
/// opening quote): the key's end, `:`, then a value.
#[inline(always)]
fn window_key_body_value<'a, const NOTE: bool>(
    cur: Cursor<'a>,
    s: usize,
    w: &mut Window<'a>,
    mask: &impl Fn(&[u8; 64]) -> u64,
    long: &mut LongValues,
) -> Step {
    let Some(mut q) = window_string_end(cur.bytes(), s, w, mask) else {
        return Step::HandOver;
    };
    let Some(mut block) = cur.block_before_end(q) else {
        return Step::HandOver;
    };
    if block[0] != b':' {
        q = ws_from(cur.bytes(), q);
        block = match cur.block_before_end(q) {
            Some(after_ws) if after_ws[0] == b':' => after_ws,
            _ => return Step::HandOver,
        };
    }
    window_value::<NOTE>(cur, q + 1, next(block), w, mask, long)
}

/// One value at `p` (just after the `,` or `[` in an array, the `:` in an
/// object) of the window loop, `block` the 64 bytes from `p`, whitespace before
/// it allowed; with `NOTE`, a long string is noted in `long` (the member
/// functions around it pass both on).
#[inline(always)]
fn window_value<'a, const NOTE: bool>(
    cur: Cursor<'a>,
    mut p: usize,
    mut block: &'a [u8; 64],
    w: &mut Window<'a>,
    mask: &impl Fn(&[u8; 64]) -> u64,
    long: &mut LongValues,
) -> Step {
    let b = cur.bytes();
    if block[0] <= b' ' {
        p = ws_from(b, p);
        block = match cur.block_before_end(p) {
            Some(after_ws) => first(after_ws),
            None => return Step::HandOver,
        };
    }
    let c = block[0];
    // The kinds are tested one compare each, the most frequent first
    // (strings, containers, then positive integers): a chain of
    // well-predicted compares rather than one jump table whose indirect jump
    // follows the input's mix of kinds.
    if c == b'"' {
        let Some(end) = window_string_end(b, p + 1, w, mask) else {
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
    debug_assert!(core::ptr::eq(block.as_ptr(), b[p..].as_ptr()));
    // SAFETY: `p <= cur.end()`: `block` is the 64 bytes from `p`, handed out
    // by `cur`. Taken again from `p` rather than kept in a register across the
    // tests above, which costs more.
    let step = window_scalar(b, unsafe { cur.block_unchecked(p) }, p);
    // The rare number that long is noted too, as the general loop does.
    if let (true, Step::End(end)) = (NOTE, &step) {
        long.note(p, *end);
    }
    step
}

/// `block[o]`, at one of the offsets a number's reads in the window loop
/// reach (`o < 32`).
#[inline(always)]
fn byte_at(block: &[u8; 64], o: usize) -> u8 {
    debug_assert!(o < 32);
    block[o & 31]
}

/// The four bytes of `block` from offset `o < 32`, as a little-endian word.
#[inline(always)]
fn word4_at(block: &[u8; 64], o: usize) -> u32 {
    debug_assert!(o < 32);
    let o = o & 31;
    let mut word = [0; 4];
    word.copy_from_slice(&block[o..o + 4]);
    u32::from_le_bytes(word)
}

/// [`digits_end8_of`] on the eight bytes of `block` from offset `o < 32` (the
/// offset of the digits' end in `block`).
#[inline(always)]
fn digits_end8_at(block: &[u8; 64], o: usize) -> Option<usize> {
    debug_assert!(o < 32);
    let o = o & 31;
    let mut chunk = [0; 8];
    chunk.copy_from_slice(&block[o..o + 8]);
    digits_end8_of(chunk, o)
}

/// A value of the window loop that is neither a string nor a container: a
/// number or a literal at `p` of `b`, `block` the 64 bytes from `p`.
#[inline(always)]
fn window_scalar(b: &[u8], block: &[u8; 64], p: usize) -> Step {
    let c = block[0];
    // The digits read start at most two bytes after `p`, and their end (an
    // offset of the eight bytes read) is at most 9.
    let end = if c.wrapping_sub(b'1') < 9 {
        match digits_end8_at(block, 1) {
            // Positive integers of up to 9 digits that end at a delimiter
            // without the byte loop; anything else as [`value_end`] takes it.
            Some(q) if matches!(byte_at(block, q), b',' | b']' | b'}') => Ok(p + q),
            Some(q) => window_number_tail(b, block, p, q),
            None => number_cold(b, p),
        }
    } else if c == b'-' || c == b'0' {
        // `-`, then `0` or up to 8 digits, eight bytes a step as above.
        let q = usize::from(c == b'-');
        match byte_at(block, q) {
            b'0' => window_number_tail(b, block, p, q + 1),
            b'1'..=b'9' => match digits_end8_at(block, q + 1) {
                Some(r) => window_number_tail(b, block, p, r),
                None => number_cold(b, p),
            },
            _ => number_cold(b, p),
        }
    } else {
        // The literals as one 4-byte compare each (`false` from its second
        // byte); a misspelt or truncated one goes to [`value_end`], whose
        // error hands over.
        let (head, tail) = (word4_at(block, 0), word4_at(block, 1));
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

/// The rest of a number of the window loop at `start` of `b`, `block` the 64
/// bytes from `start`, whose integer part ends at offset `o <= 10`: a fraction
/// and an exponent of up to 7 digits each, eight bytes a step, when the number
/// ends at a delimiter; anything else (longer digit runs, whitespace after the
/// number, errors) as [`number_tail`] takes it. The offsets read grow by at
/// most 8 (a fraction) and 9 (an exponent) from `o`: they stay below 28.
#[inline(always)]
fn window_number_tail(b: &[u8], block: &[u8; 64], start: usize, o: usize) -> Res<usize> {
    debug_assert!(o <= 10);
    let mut q = o;
    if byte_at(block, q) == b'.' {
        match digits_end8_at(block, q + 1) {
            Some(r) if r > q + 1 => q = r,
            _ => return number_tail_cold(b, start, start + o),
        }
    }
    if byte_at(block, q) | 0x20 == b'e' {
        let s = q + 1 + usize::from(matches!(byte_at(block, q + 1), b'+' | b'-'));
        match digits_end8_at(block, s) {
            Some(r) if r > s => q = r,
            _ => return number_tail_cold(b, start, start + o),
        }
    }
    if matches!(byte_at(block, q), b',' | b']' | b'}') {
        Ok(start + q)
    } else {
        number_tail_cold(b, start, start + o)
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

/// The end of the string of `b` whose body starts at `s`, or `None` if it is
/// not valid: the first special byte from `s` is found on the window's mask,
/// reloaded only when `s` is past it (or the string runs past it); that byte
/// is the closing quote for plain strings; a valid 2-byte UTF-8 character is
/// stepped over on the same mask; else the general string loop goes on from it
/// (as it does from the 16-byte steps of
/// [`string_end`](super::strings::string_end)), as it does for strings
/// reaching into the last 64 bytes. `w` is the window over `b`.
#[inline(always)]
fn window_string_end(
    b: &[u8],
    mut s: usize,
    w: &mut Window<'_>,
    mask: &impl Fn(&[u8; 64]) -> u64,
) -> Option<usize> {
    loop {
        tick(1);
        match w.from(s) {
            Seen::Special(i, c) => {
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
            Seen::Plain(end) => s = end,
            Seen::Outside => {}
        }
        if !w.load(s, mask) {
            return string_from(b, s).ok().map(|(end, _)| end);
        }
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

#[cfg(test)]
mod window_tests {
    use super::Scanner;
    use crate::parse::scan::nested::WALKS;
    use crate::parse::test_json::value;
    #[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
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
            // (The walk runs only there.)
            #[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
            if header && simd::has_avx2() {
                assert!(WALKS.get() > walks, "no walk after the header");
            }
            let _ = walks;
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
        let step = if cfg!(miri) { 47 } else { 1 };
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
        let (rounds, every) = if cfg!(miri) { (2, 23) } else { (240, 1) };
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
