//! SSE2 kernel (baseline on every x86_64 CPU): sixteen bytes per step.

use core::arch::x86_64::_mm_andnot_si128;
use core::arch::x86_64::{
    __m128i, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
    _mm_set1_epi8, _mm_setzero_si128,
};

use super::skip::{Kernel, Masks, count_blocks, prefix_xor, skip_blocks, skip_text_blocks};
use super::text::{Text, TextMasks, pass_each, text_blocks};

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

/// Whether the `16 * N` bytes at `from`, inside a string open at `from`, cannot
/// close it and leave no escape pending ([`Kernel::plain`],
/// [`Kernel::plain128`]): one mask when they hold no quote and do not end in a
/// `\\`; otherwise every such byte must follow a backslash run of exactly one
/// (the bytes one and two before it, loaded unaligned).
///
/// # Safety
/// `2 <= from` and `from + 16 * N <= bytes.len()`.
#[inline(always)]
pub(crate) unsafe fn plain_escaped<const N: usize>(bytes: &[u8], from: usize) -> bool {
    debug_assert!(2 <= from && from + 16 * N <= bytes.len());
    let end = bytes[from + 16 * N - 1] == b'\\';
    // SAFETY: `from - 2 + 16 * k + 16 <= from + 16 * N <= bytes.len()` for
    // `k < N` and offsets `d` in 0..=2, and `from >= 2` (the caller's
    // guarantee), so each unaligned 16-byte load stays inside `bytes`; SSE2 is
    // part of the x86_64 baseline.
    let bad = unsafe {
        let load = |k: usize, d: usize| {
            _mm_loadu_si128(bytes.as_ptr().add(from + 16 * k - d) as *const __m128i)
        };
        let (quote, backslash) = (_mm_set1_epi8(b'"' as i8), _mm_set1_epi8(b'\\' as i8));
        let hits: [__m128i; N] = core::array::from_fn(|k| _mm_cmpeq_epi8(load(k, 0), quote));
        let any = hits
            .iter()
            .fold(_mm_setzero_si128(), |a, &h| _mm_or_si128(a, h));
        if _mm_movemask_epi8(any) == 0 && !end {
            return true;
        }
        // A quote after exactly one backslash is escaped.
        let mut bad = _mm_setzero_si128();
        for (k, &h) in hits.iter().enumerate() {
            let one = _mm_andnot_si128(
                _mm_cmpeq_epi8(load(k, 2), backslash),
                _mm_cmpeq_epi8(load(k, 1), backslash),
            );
            bad = _mm_or_si128(bad, _mm_andnot_si128(one, h));
        }
        _mm_movemask_epi8(bad)
    };
    // A last `\\` after exactly one ends a run of two, escaping nothing after
    // the block.
    bad == 0 && (!end || (bytes[from + 16 * N - 2] == b'\\' && bytes[from + 16 * N - 3] != b'\\'))
}

/// The SSE2 kernel of the shared walks.
macro_rules! kernel {
    () => {
        Kernel {
            // SAFETY: the walks pass only `at + 64 <= bytes.len()`.
            masks: |b: &[u8], at| unsafe { structural_masks64(b, at) },
            // SAFETY: the padded block is 64 bytes long.
            tail_masks: |block: &[u8; 64]| unsafe { structural_masks64(block, 0) },
            // SAFETY: the walks pass only `2 <= at` and `at + 64 <= bytes.len()`.
            plain: |b: &[u8], at| unsafe { plain_escaped::<4>(b, at) },
            // SAFETY: the walks pass only `2 <= at` and `at + 128 <= bytes.len()`.
            plain128: |b: &[u8], at| unsafe { plain_escaped::<8>(b, at) },
            prefix_xor,
        }
    };
}

/// The end of the validated array or object opening at `bytes[p]`
/// ([`skip_blocks`] on SSE2 masks). Not inlined: inlined into the runtime
/// dispatch, its register saves would be paid on the AVX2 path's every call too.
#[inline(never)]
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

/// The fast check's flag lanes of `bytes[from..from + 16]` (0xff = flagged,
/// [`super::text::flags_scalar`]), from three overlapping loads (at `from`,
/// `from - 1`, `from - 2`).
///
/// # Safety
/// `from >= 2` and `from + 16 <= bytes.len()`.
#[inline(always)]
unsafe fn text_flags16(bytes: &[u8], from: usize) -> __m128i {
    debug_assert!(from >= 2 && from + 16 <= bytes.len());
    // SAFETY: `from - 2 >= 0` and `from + 16 <= bytes.len()` (the caller's
    // guarantee), so the three unaligned 16-byte loads stay inside `bytes`;
    // SSE2 is part of the x86_64 baseline.
    unsafe {
        let p = bytes.as_ptr().add(from);
        let v = _mm_loadu_si128(p as *const __m128i);
        let v1 = _mm_loadu_si128(p.sub(1) as *const __m128i);
        let v2 = _mm_loadu_si128(p.sub(2) as *const __m128i);
        let eq = |c: u8| _mm_cmpeq_epi8(v, _mm_set1_epi8(c as i8));
        let bslash = _mm_set1_epi8(b'\\' as i8);
        let quote = eq(b'"');
        let after_bs = _mm_cmpeq_epi8(v1, bslash);
        // Right after a lone backslash: certainly escaped.
        let after_lone = _mm_andnot_si128(_mm_cmpeq_epi8(v2, bslash), after_bs);
        // Signed: below 0x20 holds for control bytes and every byte >= 0x80.
        let special = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
        // The simple escape letters but `b` (flagged, as in the other kernels).
        let simple = _mm_or_si128(
            _mm_or_si128(
                _mm_or_si128(quote, _mm_cmpeq_epi8(v, bslash)),
                _mm_or_si128(eq(b'/'), eq(b'f')),
            ),
            _mm_or_si128(eq(b'n'), _mm_or_si128(eq(b'r'), eq(b't'))),
        );
        _mm_or_si128(
            _mm_or_si128(_mm_andnot_si128(after_lone, quote), special),
            _mm_andnot_si128(simple, after_bs),
        )
    }
}

/// The fast check's flags of `bytes[from..from + 64]` (bit i = byte `from + i`,
/// [`super::text::flags_scalar`]): for the tests; the walk takes
/// [`text_plain64`].
///
/// # Safety
/// `from >= 2` and `from + 64 <= bytes.len()`.
#[cfg(test)]
pub(crate) unsafe fn text_flags64(bytes: &[u8], from: usize) -> u64 {
    (0..4).fold(0, |m, k| {
        // SAFETY: `from + 16 * k >= 2` and `from + 16 * k + 16 <= from + 64 <=
        // bytes.len()` (the caller's guarantee).
        // SSE2 is part of the x86_64 baseline.
        let bits = unsafe { _mm_movemask_epi8(text_flags16(bytes, from + 16 * k)) };
        m | u64::from(bits as u16) << (16 * k)
    })
}

/// Whether the fast check flags nothing in `bytes[from..from + 64]`
/// ([`super::text::flags_scalar`]): four 16-byte checks, one mask.
///
/// # Safety
/// `from >= 2` and `from + 64 <= bytes.len()`.
#[inline(always)]
pub(crate) unsafe fn text_plain64(bytes: &[u8], from: usize) -> bool {
    // SAFETY: `from + 16 * k >= 2` and `from + 16 * k + 16 <= from + 64 <=
    // bytes.len()` (the caller's guarantee).
    let [a, b, c, d] = [0, 16, 32, 48].map(|k| unsafe { text_flags16(bytes, from + k) });
    // SAFETY: SSE2 is part of the x86_64 baseline.
    unsafe { _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d))) == 0 }
}

/// Validates a long string body from the backslash at `bytes[p]`
/// ([`text_blocks`] on SSE2 masks).
#[inline]
pub(crate) fn text(bytes: &[u8], p: usize) -> Text {
    text_blocks(
        bytes,
        p,
        // SAFETY: `text_blocks` passes only `at + 64 <= bytes.len()`.
        |b, at| unsafe { text_masks64(b, at) },
        // SAFETY: as for the masks, and `at >= p + 64 >= 2`.
        pass_each(|b, at| unsafe { text_plain64(b, at) }),
    )
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
