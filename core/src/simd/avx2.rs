//! AVX2 kernel: thirty-two bytes per step, chosen at run time when the CPU has it.

use core::arch::x86_64::{
    __m256i, _mm256_cmpeq_epi8, _mm256_cmpgt_epi8, _mm256_loadu_si256, _mm256_movemask_epi8,
    _mm256_or_si256, _mm256_set1_epi8,
};

/// Whether this CPU can run [`find_special`].
pub(crate) fn is_available() -> bool {
    std::is_x86_feature_detected!("avx2")
}

/// Index of the first special byte in `bytes[from..]`, or `bytes.len()`.
///
/// # Safety
/// - The CPU must support AVX2 ([`is_available`] returned `true`).
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn find_special(bytes: &[u8], mut from: usize) -> usize {
    let quote = _mm256_set1_epi8(b'"' as i8);
    let bslash = _mm256_set1_epi8(b'\\' as i8);
    let limit = _mm256_set1_epi8(0x20);
    while from + 32 <= bytes.len() {
        // SAFETY: `from + 32 <= bytes.len()`, so the unaligned 32-byte load stays
        // inside `bytes`.
        let v = unsafe { _mm256_loadu_si256(bytes.as_ptr().add(from) as *const __m256i) };
        let q = _mm256_cmpeq_epi8(v, quote);
        let b = _mm256_cmpeq_epi8(v, bslash);
        // Signed: 0x20 > v holds for control bytes and for every byte >= 0x80.
        let c = _mm256_cmpgt_epi8(limit, v);
        let mask = _mm256_movemask_epi8(_mm256_or_si256(_mm256_or_si256(q, b), c));
        if mask != 0 {
            return from + mask.trailing_zeros() as usize;
        }
        from += 32;
    }
    super::sse2::find_special(bytes, from)
}
