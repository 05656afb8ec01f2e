//! The unchecked reads of the window loop ([`super::window`]): a byte, two or
//! four bytes as a word, eight bytes as a digit run, each without a bounds
//! check, for indices its loop conditions keep inside the input.

use super::numbers::digits_end8_of;

/// `b[i]` without a bounds check, for the window loop, whose indices stay below
/// `b.len() - 63` by its loop conditions, which the compiler does not see.
///
/// # Safety
/// - `i < b.len()`.
#[inline(always)]
pub(super) unsafe fn at(b: &[u8], i: usize) -> u8 {
    debug_assert!(i < b.len());
    // SAFETY: `i < b.len()` is the caller's guarantee.
    unsafe { *b.get_unchecked(i) }
}

/// The two bytes `b[i..i + 2]` as a little-endian `u16`, without a bounds
/// check, for the window loop.
///
/// # Safety
/// - `i + 2 <= b.len()`.
#[inline(always)]
pub(super) unsafe fn at2(b: &[u8], i: usize) -> u16 {
    debug_assert!(i + 2 <= b.len());
    // SAFETY: `i + 2 <= b.len()` is the caller's guarantee; the read is unaligned.
    u16::from_le_bytes(unsafe { b.as_ptr().add(i).cast::<[u8; 2]>().read_unaligned() })
}

/// The four bytes `b[i..i + 4]` as a little-endian `u32`, without a bounds
/// check, for the window loop.
///
/// # Safety
/// - `i + 4 <= b.len()`.
#[inline(always)]
pub(super) unsafe fn at4(b: &[u8], i: usize) -> u32 {
    debug_assert!(i + 4 <= b.len());
    // SAFETY: `i + 4 <= b.len()` is the caller's guarantee; the read is unaligned.
    u32::from_le_bytes(unsafe { b.as_ptr().add(i).cast::<[u8; 4]>().read_unaligned() })
}

/// [`digits_end8`](super::numbers::digits_end8) without the length check, for the window loop.
///
/// # Safety
/// - `p + 8 <= b.len()`.
#[inline(always)]
pub(super) unsafe fn digits_end8_unchecked(b: &[u8], p: usize) -> Option<usize> {
    debug_assert!(p + 8 <= b.len());
    // SAFETY: `p + 8 <= b.len()`, the caller's guarantee: the eight bytes are
    // inside `b`; `[u8; 8]` has alignment 1 and any bit pattern.
    let chunk = unsafe { b.as_ptr().add(p).cast::<[u8; 8]>().read_unaligned() };
    digits_end8_of(chunk, p)
}
