//! SSE2 kernel (baseline on every x86_64 CPU): sixteen bytes per step.

use core::arch::x86_64::{
    __m128i, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
    _mm_set1_epi8,
};

/// Index of the first special byte in `bytes[from..]`, or `bytes.len()`.
#[inline]
pub(crate) fn find_special(bytes: &[u8], mut from: usize) -> usize {
    let len = bytes.len();
    while let Some(mask) = mask16(bytes, from) {
        if mask != 0 {
            return from + mask.trailing_zeros() as usize;
        }
        from += 16;
    }
    if from >= len {
        return len;
    }
    if len >= 16 {
        // The last 1 to 15 bytes: one load of the buffer's final 16 bytes, with
        // the bits of the bytes before `from` (checked already, or not ours to
        // check) shifted out.
        let base = len - 16;
        let mask = mask16(bytes, base).unwrap_or(0) >> (from - base);
        return if mask != 0 {
            from + mask.trailing_zeros() as usize
        } else {
            len
        };
    }
    super::scalar::find_special(bytes, from)
}

/// Index of the first `"` or `\\` in `bytes[from..]`, or `bytes.len()`: skips a
/// string the scanner already validated (only its end matters).
#[inline]
pub(crate) fn find_quote_or_backslash(bytes: &[u8], mut from: usize) -> usize {
    let len = bytes.len();
    let mask_at = |at: usize| -> u32 {
        debug_assert!(at + 16 <= len);
        // SAFETY: every caller below checks `at + 16 <= bytes.len()`, so the
        // unaligned 16-byte load stays inside `bytes`; SSE2 is x86_64 baseline.
        unsafe {
            let v = _mm_loadu_si128(bytes.as_ptr().add(at) as *const __m128i);
            let q = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
            let b = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
            _mm_movemask_epi8(_mm_or_si128(q, b)) as u32
        }
    };
    while from + 16 <= len {
        let mask = mask_at(from);
        if mask != 0 {
            return from + mask.trailing_zeros() as usize;
        }
        from += 16;
    }
    if from >= len {
        return len;
    }
    if len >= 16 {
        // The last 1 to 15 bytes: one load of the final 16, earlier bits dropped.
        let base = len - 16;
        let mask = mask_at(base) >> (from - base);
        return if mask != 0 {
            from + mask.trailing_zeros() as usize
        } else {
            len
        };
    }
    super::scalar::find_quote_or_backslash(bytes, from)
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
