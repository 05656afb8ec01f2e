//! SSE2 kernel (baseline on every x86_64 CPU): sixteen bytes per step.

use core::arch::x86_64::{
    __m128i, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
    _mm_set1_epi8,
};

use super::skip::{Kernel, Masks, count_blocks, prefix_xor, skip_blocks, skip_text_blocks};
use super::text::{Text, TextMasks, text_blocks};

/// Index of the first special byte in `bytes[from..]`, or `bytes.len()`.
#[inline]
pub(crate) fn find_special(bytes: &[u8], from: usize) -> usize {
    // SAFETY: `find_with` calls the closure only with `at + 16 <= bytes.len()`.
    find_with(bytes, from, |at| unsafe { mask16_unchecked(bytes, at) })
        .unwrap_or_else(|| super::scalar::find_special(bytes, from))
}

/// Index of the first `"` or `\\` in `bytes[from..]`, or `bytes.len()`: skips a
/// string the scanner already validated (only its end matters).
#[inline]
pub(crate) fn find_quote_or_backslash(bytes: &[u8], from: usize) -> usize {
    // SAFETY: `find_with` calls the closure only with `at + 16 <= bytes.len()`.
    let mask_at = |at: usize| unsafe { quote_backslash_mask16_unchecked(bytes, at) };
    find_with(bytes, from, mask_at)
        .unwrap_or_else(|| super::scalar::find_quote_or_backslash(bytes, from))
}

/// The first byte from `from` that `mask_at` flags, in 16-byte steps, the last 1
/// to 15 bytes in one load of the buffer's final 16 (earlier bits dropped).
/// `mask_at(at)` is only called with `at + 16 <= bytes.len()`. `None` when the
/// buffer is shorter than 16 bytes (the caller's scalar kernel takes it).
#[inline(always)]
fn find_with(bytes: &[u8], mut from: usize, mask_at: impl Fn(usize) -> u32) -> Option<usize> {
    let len = bytes.len();
    while from + 16 <= len {
        let mask = mask_at(from);
        if mask != 0 {
            return Some(from + mask.trailing_zeros() as usize);
        }
        from += 16;
    }
    if from >= len {
        return Some(len);
    }
    if len < 16 {
        return None;
    }
    let base = len - 16;
    let mask = mask_at(base) >> (from - base);
    Some(if mask != 0 {
        from + mask.trailing_zeros() as usize
    } else {
        len
    })
}

/// The special-byte bitmask of `bytes[from..from + 16]` (bit i = byte `from + i`),
/// or `None` when fewer than 16 bytes remain.
#[inline(always)]
pub(crate) fn mask16(bytes: &[u8], from: usize) -> Option<u32> {
    if from.checked_add(16)? > bytes.len() {
        return None;
    }
    // SAFETY: `from + 16 <= bytes.len()` was just checked.
    Some(unsafe { mask16_unchecked(bytes, from) })
}

/// The `"` and the `\\` bitmasks of `bytes[from..from + 64]` (bit i = byte
/// `from + i`), four 16-byte steps without a branch.
///
/// # Safety
/// `from + 64 <= bytes.len()`.
#[inline(always)]
pub(crate) unsafe fn quote_backslash_masks64(bytes: &[u8], from: usize) -> (u64, u64) {
    debug_assert!(from + 64 <= bytes.len());
    let (mut quotes, mut backslashes) = (0u64, 0u64);
    for k in 0..4 {
        // SAFETY: `from + 16 * k + 16 <= from + 64 <= bytes.len()` (the caller's
        // guarantee), so each unaligned 16-byte load stays inside `bytes`; SSE2 is
        // part of the x86_64 baseline.
        let (q, b) = unsafe {
            let v = _mm_loadu_si128(bytes.as_ptr().add(from + 16 * k) as *const __m128i);
            let q = _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)));
            let b = _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)));
            (q as u16, b as u16)
        };
        quotes |= u64::from(q) << (16 * k);
        backslashes |= u64::from(b) << (16 * k);
    }
    (quotes, backslashes)
}

/// The bitmask of the `"` and `\\` bytes of `bytes[from..from + 16]`.
///
/// # Safety
/// `from + 16 <= bytes.len()`.
#[inline(always)]
pub(crate) unsafe fn quote_backslash_mask16_unchecked(bytes: &[u8], from: usize) -> u32 {
    debug_assert!(from + 16 <= bytes.len());
    // SAFETY: the caller guarantees `from + 16 <= bytes.len()`, so the unaligned
    // 16-byte load stays inside `bytes`; SSE2 is part of the x86_64 baseline.
    unsafe {
        let v = _mm_loadu_si128(bytes.as_ptr().add(from) as *const __m128i);
        let q = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let b = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        _mm_movemask_epi8(_mm_or_si128(q, b)) as u32
    }
}

/// [`mask16`] without the length check, for loops that bound `from` once.
///
/// # Safety
/// `from + 16 <= bytes.len()`.
#[inline(always)]
pub(crate) unsafe fn mask16_unchecked(bytes: &[u8], from: usize) -> u32 {
    debug_assert!(from + 16 <= bytes.len());
    // SAFETY: the caller guarantees `from + 16 <= bytes.len()`, so the unaligned
    // 16-byte load stays inside `bytes`; SSE2 is part of the x86_64 baseline.
    let mask = unsafe {
        let v = _mm_loadu_si128(bytes.as_ptr().add(from) as *const __m128i);
        let q = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let b = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        let c = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
        _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(q, b), c))
    };
    mask as u32
}

/// The special-byte bitmask of a 64-byte block (bit i = byte i): quotes,
/// backslashes, control bytes and every byte >= 0x80, in four 16-byte steps.
#[inline(always)]
pub(crate) fn special_mask64(block: &[u8; 64]) -> u64 {
    let mut m = 0u64;
    for k in 0..4 {
        // SAFETY: `16 * k + 16 <= 64 == block.len()`.
        let part = unsafe { mask16_unchecked(block, 16 * k) };
        m |= u64::from(part) << (16 * k);
    }
    m
}

/// The quote, backslash, opening- and closing-bracket masks of
/// `bytes[from..from + 64]` (bit i = byte `from + i`).
///
/// # Safety
/// `from + 64 <= bytes.len()`.
#[inline(always)]
pub(crate) unsafe fn structural_masks64(bytes: &[u8], from: usize) -> Masks {
    debug_assert!(from + 64 <= bytes.len());
    let mut m = Masks::default();
    for k in 0..4 {
        // SAFETY: `from + 16 * k + 16 <= from + 64 <= bytes.len()` (the caller's
        // guarantee), so each unaligned 16-byte load stays inside `bytes`; SSE2 is
        // part of the x86_64 baseline.
        let [q, b, o, c, s] = unsafe {
            let v = _mm_loadu_si128(bytes.as_ptr().add(from + 16 * k) as *const __m128i);
            // `[` (0x5b) and `{` (0x7b) differ only in bit 5, as do `]` and `}`;
            // no other byte becomes 0x7b or 0x7d with bit 5 set.
            let folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
            [
                _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)),
                _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)),
                _mm_cmpeq_epi8(folded, _mm_set1_epi8(b'{' as i8)),
                _mm_cmpeq_epi8(folded, _mm_set1_epi8(b'}' as i8)),
                _mm_cmpeq_epi8(v, _mm_set1_epi8(b',' as i8)),
            ]
            .map(|x| u64::from(_mm_movemask_epi8(x) as u16))
        };
        m.quotes |= q << (16 * k);
        m.backslashes |= b << (16 * k);
        m.opens |= o << (16 * k);
        m.closes |= c << (16 * k);
        m.commas |= s << (16 * k);
    }
    m
}

/// Whether `bytes[from..from + 64]` holds no `"` and does not end in a `\\`
/// ([`Kernel::plain`]).
///
/// # Safety
/// `from + 64 <= bytes.len()`.
#[inline(always)]
pub(crate) unsafe fn plain64(bytes: &[u8], from: usize) -> bool {
    debug_assert!(from + 64 <= bytes.len());
    // SAFETY: `from + 64 <= bytes.len()` (the caller's guarantee), so the four
    // unaligned 16-byte loads stay inside `bytes`; SSE2 is part of the x86_64
    // baseline.
    let quotes = unsafe {
        let p = bytes.as_ptr().add(from);
        let quote = _mm_set1_epi8(b'"' as i8);
        let eq = |k: usize| _mm_cmpeq_epi8(_mm_loadu_si128(p.add(16 * k) as *const __m128i), quote);
        _mm_movemask_epi8(_mm_or_si128(
            _mm_or_si128(eq(0), eq(1)),
            _mm_or_si128(eq(2), eq(3)),
        ))
    };
    quotes == 0 && bytes[from + 63] != b'\\'
}

/// The SSE2 kernel of the shared walks.
macro_rules! kernel {
    () => {
        Kernel {
            // SAFETY: the walks pass only `at + 64 <= bytes.len()`.
            masks: |b: &[u8], at| unsafe { structural_masks64(b, at) },
            // SAFETY: the padded block is 64 bytes long.
            tail_masks: |block: &[u8; 64]| unsafe { structural_masks64(block, 0) },
            // SAFETY: as for `masks`.
            plain: |b: &[u8], at| unsafe { plain64(b, at) },
            // SAFETY: the walks pass only `at + 128 <= bytes.len()`.
            plain128: |b: &[u8], at| unsafe { plain64(b, at) && plain64(b, at + 64) },
            prefix_xor,
        }
    };
}

/// The end of the validated array or object opening at `bytes[p]`
/// ([`skip_blocks`] on SSE2 masks).
#[inline]
pub(crate) fn skip_container(bytes: &[u8], p: usize) -> usize {
    skip_blocks(bytes, p, &kernel!())
}

/// The number of values left in a validated array or object from `bytes[p]`
/// ([`count_blocks`] on SSE2 masks).
#[inline]
pub(crate) fn count_values(bytes: &[u8], p: usize) -> usize {
    count_blocks(bytes, p, &kernel!())
}

/// The quote, backslash, special (below 0x20 or above 0x7f) and simple escape
/// letter masks of `bytes[from..from + 64]` (bit i = byte `from + i`).
///
/// # Safety
/// `from + 64 <= bytes.len()`.
#[inline(always)]
pub(crate) unsafe fn text_masks64(bytes: &[u8], from: usize) -> TextMasks {
    debug_assert!(from + 64 <= bytes.len());
    let mut m = TextMasks::default();
    for k in 0..4 {
        // SAFETY: `from + 16 * k + 16 <= from + 64 <= bytes.len()` (the caller's
        // guarantee), so each unaligned 16-byte load stays inside `bytes`; SSE2 is
        // part of the x86_64 baseline.
        let [q, b, s, l] = unsafe {
            let v = _mm_loadu_si128(bytes.as_ptr().add(from + 16 * k) as *const __m128i);
            let eq = |c: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8));
            let (q, b) = (eq(b'"'), eq(b'\\'));
            // The simple escape letters `"\\/bfnrt`.
            let letters = _mm_or_si128(
                _mm_or_si128(_mm_or_si128(q, b), _mm_or_si128(eq(b'/'), eq(b'b'))),
                _mm_or_si128(
                    _mm_or_si128(eq(b'f'), eq(b'n')),
                    _mm_or_si128(eq(b'r'), eq(b't')),
                ),
            );
            [
                q,
                b,
                // Signed: below 0x20 holds for control bytes and every byte >= 0x80.
                _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                letters,
            ]
            .map(|x| u64::from(_mm_movemask_epi8(x) as u16))
        };
        m.quotes |= q << (16 * k);
        m.backslashes |= b << (16 * k);
        m.special |= s << (16 * k);
        m.simple |= l << (16 * k);
    }
    m
}

/// Validates a long string body from the backslash at `bytes[p]`
/// ([`text_blocks`] on SSE2 masks).
#[inline]
pub(crate) fn text(bytes: &[u8], p: usize) -> Text {
    // SAFETY: `text_blocks` passes only `at + 64 <= bytes.len()`.
    text_blocks(bytes, p, |b, at| unsafe { text_masks64(b, at) })
}

/// One past the closing quote of the validated string in which `bytes[p]` is a
/// backslash ([`skip_text_blocks`] on SSE2 masks).
#[inline]
pub(crate) fn skip_text(bytes: &[u8], p: usize) -> usize {
    skip_text_blocks(
        bytes,
        p,
        // SAFETY: `skip_text_blocks` passes only `at + 64 <= bytes.len()`.
        |b, at| unsafe { quote_backslash_masks64(b, at) },
        // SAFETY: the padded block is 64 bytes long.
        |block| unsafe { quote_backslash_masks64(block, 0) },
        // SAFETY: as for the masks.
        |b, at| unsafe { plain64(b, at) },
    )
}
