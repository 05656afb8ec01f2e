//! The number reader: the end of a number (RFC 8259's grammar), with runs of
//! digits taken eight bytes a step.

use super::spans::{Fail, Res};
use crate::parse::error::Reason;
use crate::parse::ops::tick;

/// The end of the number starting at `start` (`-` or a digit).
pub(super) fn number(b: &[u8], start: usize) -> Res<usize> {
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
pub(super) fn digits_end8(b: &[u8], p: usize) -> Option<usize> {
    digits_end8_of(*b.get(p..)?.first_chunk::<8>()?, p)
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
pub(super) fn number_tail(b: &[u8], start: usize, mut p: usize) -> Res<usize> {
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
