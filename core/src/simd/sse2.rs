//! SSE2 kernel (baseline on every x86_64 CPU): sixteen bytes per step.

use core::arch::x86_64::{
    __m128i, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
    _mm_set1_epi8,
};

/// Index of the first special byte in `bytes[from..]`, or `bytes.len()`.
#[inline]
pub(crate) fn find_special(bytes: &[u8], mut from: usize) -> usize {
    while from + 16 <= bytes.len() {
        // SAFETY: `from + 16 <= bytes.len()`, so the unaligned 16-byte load stays
        // inside `bytes`; SSE2 is part of the x86_64 baseline, so the intrinsics
        // are always available.
        let mask = unsafe {
            let v = _mm_loadu_si128(bytes.as_ptr().add(from) as *const __m128i);
            let q = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
            let b = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
            // Signed compare: bytes >= 0x80 are negative, so `< 0x20` catches
            // both control bytes and every non-ASCII byte.
            let c = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
            _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(q, b), c))
        };
        if mask != 0 {
            return from + mask.trailing_zeros() as usize;
        }
        from += 16;
    }
    super::scalar::find_special(bytes, from)
}

/// The special-byte bitmask of `bytes[from..from + 16]` (bit i = byte `from + i`),
/// or `None` when fewer than 16 bytes remain.
#[inline(always)]
pub(crate) fn mask16(bytes: &[u8], from: usize) -> Option<u32> {
    if from.checked_add(16)? > bytes.len() {
        return None;
    }
    // SAFETY: `from + 16 <= bytes.len()` was just checked, so the unaligned 16-byte
    // load stays inside `bytes`; SSE2 is part of the x86_64 baseline.
    let mask = unsafe {
        let v = _mm_loadu_si128(bytes.as_ptr().add(from) as *const __m128i);
        let q = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let b = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        let c = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
        _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(q, b), c))
    };
    Some(mask as u32)
}
