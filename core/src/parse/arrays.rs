//! Arrays of numbers checked 64 bytes at a time, on masks (for the structural
//! walk, [`super::walk`]): GeoJSON coordinates, vectors, matrices, series.
//!
//! In such an array every byte is a digit, `-`, `.`, `,`, `[` or `]`, and the
//! grammar is a matter of neighbours: what may come before each byte (a `,`
//! after a number or a `]`, a digit after `[`, `,`, `-`, a digit or `.`, ...),
//! plus three rules over a number's run of bytes (a `-` only first, one `.` at
//! most, no digit after a leading `0`). Each rule is a mask operation on the
//! block's byte classes, with the last byte's classes carried to the next
//! block; the brackets are counted for the depth. A block is taken whole,
//! where the token walk takes five to ten tokens (a number read byte by byte
//! among them).
//!
//! Anything else (whitespace, an exponent, an object, a string, a number of
//! 64 bytes or more, nesting near the depth limit) gives up, and the token
//! walk takes the array as before. So this accepts nothing the general
//! loop refuses, and where it accepts, it ends where the general loop does
//! (the walk's differential tests).

use super::blocks::Kernel;
use super::ops::tick;

/// The bytes of a block of an array of numbers, by class: bit i is byte i.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct NumberArray {
    /// `0`-`9`.
    pub digit: u64,
    /// `0`.
    pub zero: u64,
    /// `-`.
    pub minus: u64,
    /// `.`.
    pub dot: u64,
    /// `,`.
    pub comma: u64,
    /// `[`.
    pub open: u64,
    /// `]`.
    pub close: u64,
}

/// The classes of the byte before a block (its bit 0 of each mask), carried
/// from block to block.
#[derive(Clone, Copy, Default)]
struct Before {
    open: u64,
    close: u64,
    comma: u64,
    minus: u64,
    digit: u64,
    dot: u64,
    /// A `0` that began a number's integer part.
    lead_zero: u64,
    /// A byte of a number (digit, `-`, `.`).
    number: u64,
    /// The number the byte belongs to already has its `.`.
    had_dot: bool,
}

/// The end of the array of numbers whose `[` is at `b[p]`, if it is one and
/// valid, nested at most `depth_room` levels deep (the array itself counts
/// one); else how many blocks it read before it gave up (the token walk
/// decides). The walk calls it through
/// [`Kernel::number_array_end`], out of its loop (which it would crowd).
#[inline(always)]
pub(crate) fn number_array<K: Kernel>(
    b: &[u8],
    p: usize,
    depth_room: usize,
    kernel: &K,
) -> Result<usize, usize> {
    // The byte before the `[` counts as a `,`: a `[` may follow it.
    let mut before = Before {
        comma: 1,
        ..Before::default()
    };
    let mut depth = 0usize;
    let mut at = p;
    loop {
        let tail;
        let block = match b.get(at..).and_then(<[u8]>::first_chunk::<64>) {
            Some(block) => block,
            None => {
                // The last bytes, padded with spaces (which end the check
                // unless the array ended before them).
                let rest = b.get(at..).ok_or((at - p) / 64)?;
                let mut last = [b' '; 64];
                last[..rest.len()].copy_from_slice(rest);
                tail = last;
                &tail
            }
        };
        tick(1);
        let blocks = (at - p) / 64 + 1;
        let c = kernel.number_array(block);
        // The brackets: the depth after the block, or where the array ends.
        let (opens, closes) = (c.open.count_ones() as usize, c.close.count_ones() as usize);
        let (mine, end) = if closes < depth {
            // No close can bring the depth to 0 here.
            (u64::MAX, None)
        } else {
            let mut d = depth;
            let mut brackets = c.open | c.close;
            let mut end = None;
            while brackets != 0 {
                let i = brackets.trailing_zeros();
                brackets &= brackets - 1;
                if c.open >> i & 1 == 1 {
                    d += 1;
                } else {
                    d -= 1;
                    if d == 0 {
                        end = Some(i);
                        break;
                    }
                }
            }
            match end {
                // The bytes up to the array's `]`.
                Some(i) => (u64::MAX >> (63 - i), Some(i as usize)),
                None => (u64::MAX, None),
            }
        };
        if depth + opens > depth_room {
            return Err(blocks);
        }
        let number = c.digit | c.minus | c.dot;
        if (!(number | c.comma | c.open | c.close) & mine) != 0 || number == u64::MAX {
            return Err(blocks);
        }
        // The classes of each byte's predecessor.
        let prev = |x: u64, carry: u64| (x << 1) | carry;
        let open = prev(c.open, before.open);
        let close = prev(c.close, before.close);
        let comma = prev(c.comma, before.comma);
        let minus = prev(c.minus, before.minus);
        let digit = prev(c.digit, before.digit);
        let dot = prev(c.dot, before.dot);
        let int_start = c.digit & (open | comma | minus);
        let lead_zero = c.zero & int_start;
        let mut bad = (c.open & !(open | comma))
            | (c.close & !(open | close | digit))
            | (c.comma & !(close | digit))
            | (c.minus & !(open | comma))
            | (c.digit & !(open | comma | minus | digit | dot))
            | (c.dot & !digit)
            | (c.digit & prev(lead_zero, before.lead_zero));
        // One `.` a number: the first of each run that starts here is where a
        // carry from its start stops in the run without its dots; the run
        // carried from the block before (its bytes from bit 0) has its first
        // unless the block before had it.
        let starts = number & !prev(number, before.number);
        let first = (number & !c.dot).wrapping_add(starts) & c.dot;
        let carried = if before.number != 0 {
            number & !number.wrapping_add(1)
        } else {
            0
        };
        let carried_dots = c.dot & carried;
        let carried_first = if before.had_dot {
            0
        } else {
            carried_dots & carried_dots.wrapping_neg()
        };
        bad |= c.dot & !(first | carried_first);
        if bad & mine != 0 {
            return Err(blocks);
        }
        if let Some(i) = end {
            return Ok(at + i + 1);
        }
        // The last byte's classes, for the next block.
        // (A run over the whole block gave up above, so the last run started
        // in this block.)
        let had_dot = number >> 63 == 1 && {
            let run = u64::MAX << (64 - (!number).leading_zeros());
            c.dot & run != 0
        };
        before = Before {
            open: c.open >> 63,
            close: c.close >> 63,
            comma: c.comma >> 63,
            minus: c.minus >> 63,
            digit: c.digit >> 63,
            dot: c.dot >> 63,
            lead_zero: lead_zero >> 63,
            number: number >> 63,
            had_dot,
        };
        depth = depth + opens - closes;
        at += 64;
    }
}

/// [`number_array`] compiled for AVX2, on the AVX2 kernel.
///
/// # Safety
/// - The CPU must support AVX2, BMI1, BMI2, POPCNT and PCLMULQDQ
///   ([`crate::simd::has_avx2`] returned `true`; an `Avx2` exists only then).
#[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
#[target_feature(enable = "avx2,bmi1,bmi2,popcnt,pclmulqdq")]
#[inline(never)]
pub(crate) unsafe fn number_array_avx2(
    b: &[u8],
    p: usize,
    depth_room: usize,
    kernel: &super::blocks::Avx2,
) -> Result<usize, usize> {
    number_array(b, p, depth_room, kernel)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::blocks::Portable;
    use crate::parse::scan::general_value_end;

    /// [`number_array`] on `b[p..]` with each kernel this CPU runs.
    fn ends(b: &[u8], p: usize, room: usize) -> Vec<(&'static str, Option<usize>)> {
        #[allow(unused_mut)]
        let mut out = vec![("portable", number_array(b, p, room, &Portable).ok())];
        #[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
        if crate::simd::has_avx2() {
            // SAFETY: AVX2 and PCLMULQDQ, just detected.
            let kernel = unsafe { crate::parse::blocks::Avx2::new() };
            out.push(("avx2", number_array(b, p, room, &kernel).ok()));
        }
        out
    }

    /// Where it ends an array, the general loop ends it there too; on a valid
    /// array it can take (`takes`), it ends it.
    fn check(b: &[u8], p: usize, room: usize, takes: bool) {
        let general = general_value_end(&b[p..], room).map(|e| p + e);
        for (kernel, got) in ends(b, p, room) {
            let ctx = || format!("{kernel} at {p}: {}", String::from_utf8_lossy(&b[p..]));
            if got.is_some() {
                assert_eq!(got, general, "{}", ctx());
            }
            if takes {
                assert!(general.is_some(), "not valid: {}", ctx());
                assert_eq!(got, general, "refused: {}", ctx());
            }
        }
    }

    /// Numbers the masks take, and numbers they refuse or leave to the token
    /// walk (exponents), valid and not.
    const TAKEN: [&[u8]; 12] = [
        b"0",
        b"-0",
        b"7",
        b"-65.613616999999977",
        b"43.420273000000009",
        b"0.5",
        b"-0.001",
        b"10",
        b"1234567890",
        b"-9.75",
        b"100.0",
        b"0.0",
    ];
    const OTHERS: [&[u8]; 16] = [
        b"01", b"-01", b"1.", b"-", b"-.5", b".5", b"1.2.3", b"1..2", b"1e5", b"2E-3", b"1-2",
        b"--1", b"00", b"0.", b"+1", b"1 ",
    ];

    /// Generated arrays of numbers (nested up to five deep, empty ones among
    /// them) at every offset from a block's start, so that block ends cut
    /// every part; every truncation, and a troublemaker written over every
    /// position.
    #[test]
    fn arrays_match_the_general_loop() {
        let mut next = crate::test_rng::lcg(0xa77a_u64);
        let (rounds, every) = if cfg!(miri) { (3, 23) } else { (400, 1) };
        let bad = [
            b'-', b'.', b'0', b'1', b',', b'[', b']', b' ', b'\n', b'e', b'E', b'+', b'"', b'{',
            b'}', b'x', 0x80,
        ];
        for round in 0..rounds {
            let mut v = vec![b' '; round % 64];
            let p = v.len();
            let mut depth = 0;
            let mut want_value = true;
            v.push(b'[');
            depth += 1;
            let target = 40 + next() % 400;
            loop {
                if want_value {
                    match next() % 9 {
                        0 if depth < 5 => {
                            v.push(b'[');
                            depth += 1;
                            continue;
                        }
                        1 => {
                            // An empty array.
                            v.extend_from_slice(b"[]");
                        }
                        _ => v.extend_from_slice(TAKEN[next() % TAKEN.len()]),
                    }
                    want_value = false;
                } else if v.len() - p < target && !next().is_multiple_of(4) {
                    v.push(b',');
                    want_value = true;
                } else {
                    v.push(b']');
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
            }
            let end = v.len();
            v.extend_from_slice(&b"],\"k\":[1]}"[..next() % 10]);
            check(&v, p, 128, true);
            // Too deep for the room left: the general loop refuses, so the
            // masks must not take it.
            for room in 1..6 {
                check(&v, p, room, false);
            }
            for cut in (p + 1..end).step_by(every) {
                check(&v[..cut], p, 128, false);
            }
            for i in (p + 1 + round % every..end).step_by(every) {
                let mut w = v.clone();
                w[i] = bad[next() % bad.len()];
                check(&w, p, 128, false);
                // A number of the other kind in place of one.
                if w[i - 1] == b',' || w[i - 1] == b'[' {
                    let other = OTHERS[next() % OTHERS.len()];
                    let mut w = v[..i].to_vec();
                    w.extend_from_slice(other);
                    let rest = v[i..].iter().position(|c| matches!(c, b',' | b']'));
                    w.extend_from_slice(&v[i + rest.unwrap_or(0)..]);
                    check(&w, p, 128, false);
                }
            }
        }
    }

    /// Long numbers (a run of 64 bytes or more is left to the token walk) and
    /// numbers cut at every place by the end of a block.
    #[test]
    fn long_numbers_and_block_ends() {
        let digits = |n: usize| (0..n).map(|k| b"123456789"[k % 9]).collect::<Vec<u8>>();
        for len in [1, 2, 30, 62, 63, 64, 65, 100, 130] {
            for shape in 0..4 {
                let n = match shape {
                    0 => digits(len),
                    1 => [&b"-"[..], &digits(len)].concat(),
                    2 => [&b"1."[..], &digits(len)].concat(),
                    _ => [&b"-0."[..], &digits(len), b".5"].concat(),
                };
                // Miri: a sample of the offsets.
                for pad in (0..66).step_by(if cfg!(miri) { 13 } else { 1 }) {
                    let mut v = vec![b' '; pad];
                    v.extend_from_slice(b"[[1,");
                    v.extend_from_slice(&n);
                    v.extend_from_slice(b"],[");
                    v.extend_from_slice(&n);
                    v.extend_from_slice(b"]]");
                    check(&v, pad, 128, shape != 3 && n.len() < 64);
                }
            }
        }
    }

    /// The AVX2 kernel's classes equal the portable ones on blocks of every
    /// byte value at every position.
    #[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
    #[test]
    fn avx2_classes_match_portable() {
        if !crate::simd::has_avx2() {
            return;
        }
        let blocks = crate::test_rng::kernel_blocks(0x5a7, b"0123456789-.,[]/:eE+ \x80\xff");
        for block in blocks {
            // SAFETY: AVX2, just detected.
            let got = unsafe { crate::simd::avx2::number_array64(&block) };
            assert_eq!(
                got,
                crate::simd::scalar::number_array64(&block),
                "{block:?}"
            );
        }
    }
}
