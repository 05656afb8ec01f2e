//! WebAssembly SIMD128 kernel: sixteen bytes per step, the SSE2 kernel
//! ([`super::sse2`]) ported to `core::arch::wasm32`.
//!
//! Compiled only for `wasm32` with the `simd128` target feature enabled for the
//! whole build (`-C target-feature=+simd128`): WebAssembly has no run-time
//! feature detection (a module using SIMD instructions does not even validate
//! on an engine without them), so the choice is static, made at build time.
//! The arithmetic intrinsics are safe functions there; only the loads are
//! `unsafe` (raw pointers).
//!
//! Differences from SSE2: `v128_andnot(a, b)` is `a & !b` (SSE2's
//! `_mm_andnot_si128(a, b)` is `!a & b`), and a bare "any byte set?" question
//! is `v128_any_true`, cheaper than a bitmask on engines that lower it to
//! several instructions (ARM has no `pmovmskb`).

use core::arch::wasm32::{
    i8x16_bitmask, i8x16_eq, i8x16_lt, i8x16_splat, v128, v128_andnot, v128_any_true, v128_load,
    v128_or,
};

use super::skip::{Kernel, Masks, count_blocks, prefix_xor, skip_blocks, skip_text_blocks};
use super::text::{Text, TextMasks, pass_each, text_blocks};

/// The 16 bytes at `bytes[from..from + 16]`, unaligned.
///
/// # Safety
/// `from + 16 <= bytes.len()`.
#[inline(always)]
unsafe fn load(bytes: &[u8], from: usize) -> v128 {
    debug_assert!(from + 16 <= bytes.len());
    // SAFETY: `from + 16 <= bytes.len()` (the caller's guarantee), so the 16-byte
    // load stays inside `bytes`; `v128_load` has no alignment requirement.
    unsafe { v128_load(bytes.as_ptr().add(from) as *const v128) }
}

/// Every lane `c`.
#[inline(always)]
fn splat(c: u8) -> v128 {
    i8x16_splat(c as i8)
}

/// Lanes equal to `c`: 0xff, others 0.
#[inline(always)]
fn eq(v: v128, c: u8) -> v128 {
    i8x16_eq(v, splat(c))
}

/// The lanes' top bits as a 16-bit mask (bit i = lane i).
#[inline(always)]
fn bits(v: v128) -> u64 {
    u64::from(i8x16_bitmask(v))
}

/// The special-byte lanes of `v`: `"`, `\\`, and (signed, below 0x20) control
/// bytes and every byte >= 0x80.
#[inline(always)]
fn special(v: v128) -> v128 {
    v128_or(v128_or(eq(v, b'"'), eq(v, b'\\')), i8x16_lt(v, splat(0x20)))
}

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
        // guarantee).
        let v = unsafe { load(bytes, from + 16 * k) };
        quotes |= bits(eq(v, b'"')) << (16 * k);
        backslashes |= bits(eq(v, b'\\')) << (16 * k);
    }
    (quotes, backslashes)
}

/// The bitmask of the `"` and `\\` bytes of `bytes[from..from + 16]`.
///
/// # Safety
/// `from + 16 <= bytes.len()`.
#[inline(always)]
pub(crate) unsafe fn quote_backslash_mask16_unchecked(bytes: &[u8], from: usize) -> u32 {
    // SAFETY: `from + 16 <= bytes.len()`, the caller's guarantee.
    let v = unsafe { load(bytes, from) };
    u32::from(i8x16_bitmask(v128_or(eq(v, b'"'), eq(v, b'\\'))))
}

/// [`mask16`] without the length check, for loops that bound `from` once.
///
/// # Safety
/// `from + 16 <= bytes.len()`.
#[inline(always)]
pub(crate) unsafe fn mask16_unchecked(bytes: &[u8], from: usize) -> u32 {
    // SAFETY: `from + 16 <= bytes.len()`, the caller's guarantee.
    let v = unsafe { load(bytes, from) };
    u32::from(i8x16_bitmask(special(v)))
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

/// The quote, backslash, opening- and closing-bracket and comma masks of
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
        // guarantee).
        let v = unsafe { load(bytes, from + 16 * k) };
        // `[` (0x5b) and `{` (0x7b) differ only in bit 5, as do `]` and `}`; no
        // other byte becomes 0x7b or 0x7d with bit 5 set.
        let folded = v128_or(v, splat(0x20));
        m.quotes |= bits(eq(v, b'"')) << (16 * k);
        m.backslashes |= bits(eq(v, b'\\')) << (16 * k);
        m.opens |= bits(eq(folded, b'{')) << (16 * k);
        m.closes |= bits(eq(folded, b'}')) << (16 * k);
        m.commas |= bits(eq(v, b',')) << (16 * k);
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
    // SAFETY: `from + 16 * k + 16 <= from + 64 <= bytes.len()` for `k < 4` (the
    // caller's guarantee).
    let [a, b, c, d] = [0, 16, 32, 48].map(|k| eq(unsafe { load(bytes, from + k) }, b'"'));
    !v128_any_true(v128_or(v128_or(a, b), v128_or(c, d))) && bytes[from + 63] != b'\\'
}

/// Whether the `16 * N` bytes at `from`, inside a string open at `from`, cannot
/// close it and leave no escape pending ([`Kernel::plain`],
/// [`Kernel::plain128`]): one test when they hold no quote and do not end in a
/// `\\`; otherwise every such byte must follow a backslash run of exactly one
/// (the bytes one and two before it, loaded unaligned).
///
/// # Safety
/// `2 <= from` and `from + 16 * N <= bytes.len()`.
#[inline(always)]
pub(crate) unsafe fn plain_escaped<const N: usize>(bytes: &[u8], from: usize) -> bool {
    debug_assert!(2 <= from && from + 16 * N <= bytes.len());
    let end = bytes[from + 16 * N - 1] == b'\\';
    // SAFETY: `ld` is called below only with `k < N` and `d` in 0..=2, so
    // `from - 2 + 16 * k + 16 <= from + 16 * N <= bytes.len()` and `from >= 2`
    // (the caller's guarantee): each 16-byte load stays inside `bytes`.
    let ld = |k: usize, d: usize| unsafe { load(bytes, from + 16 * k - d) };
    let hits: [v128; N] = core::array::from_fn(|k| eq(ld(k, 0), b'"'));
    let any = hits.iter().fold(splat(0), |a, &h| v128_or(a, h));
    if !v128_any_true(any) && !end {
        return true;
    }
    // A quote after exactly one backslash is escaped.
    let mut bad = splat(0);
    for (k, &h) in hits.iter().enumerate() {
        let one = v128_andnot(eq(ld(k, 1), b'\\'), eq(ld(k, 2), b'\\'));
        bad = v128_or(bad, v128_andnot(h, one));
    }
    // A last `\\` after exactly one ends a run of two, escaping nothing after
    // the block.
    !v128_any_true(bad)
        && (!end || (bytes[from + 16 * N - 2] == b'\\' && bytes[from + 16 * N - 3] != b'\\'))
}

/// The SIMD128 kernel of the shared walks.
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
/// ([`skip_blocks`] on SIMD128 masks).
#[inline]
pub(crate) fn skip_container(bytes: &[u8], p: usize) -> usize {
    skip_blocks(bytes, p, &kernel!())
}

/// The number of values left in a validated array or object from `bytes[p]`
/// ([`count_blocks`] on SIMD128 masks).
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
        // guarantee).
        let v = unsafe { load(bytes, from + 16 * k) };
        let (q, b) = (eq(v, b'"'), eq(v, b'\\'));
        // The simple escape letters `"\\/bfnrt`.
        let letters = v128_or(
            v128_or(v128_or(q, b), v128_or(eq(v, b'/'), eq(v, b'b'))),
            v128_or(
                v128_or(eq(v, b'f'), eq(v, b'n')),
                v128_or(eq(v, b'r'), eq(v, b't')),
            ),
        );
        m.quotes |= bits(q) << (16 * k);
        m.backslashes |= bits(b) << (16 * k);
        // Signed: below 0x20 holds for control bytes and every byte >= 0x80.
        m.special |= bits(i8x16_lt(v, splat(0x20))) << (16 * k);
        m.simple |= bits(letters) << (16 * k);
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
unsafe fn text_flags16(bytes: &[u8], from: usize) -> v128 {
    debug_assert!(from >= 2 && from + 16 <= bytes.len());
    // SAFETY: `from - 2 >= 0` and `from + 16 <= bytes.len()` (the caller's
    // guarantee), so the three 16-byte loads stay inside `bytes`.
    let (v, v1, v2) = unsafe {
        (
            load(bytes, from),
            load(bytes, from - 1),
            load(bytes, from - 2),
        )
    };
    let quote = eq(v, b'"');
    let after_bs = eq(v1, b'\\');
    // Right after a lone backslash: certainly escaped.
    let after_lone = v128_andnot(after_bs, eq(v2, b'\\'));
    // Signed: below 0x20 holds for control bytes and every byte >= 0x80.
    let special = i8x16_lt(v, splat(0x20));
    // The simple escape letters but `b` (flagged, as in the other kernels).
    let simple = v128_or(
        v128_or(
            v128_or(quote, eq(v, b'\\')),
            v128_or(eq(v, b'/'), eq(v, b'f')),
        ),
        v128_or(eq(v, b'n'), v128_or(eq(v, b'r'), eq(v, b't'))),
    );
    v128_or(
        v128_or(v128_andnot(quote, after_lone), special),
        v128_andnot(after_bs, simple),
    )
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
        m | bits(unsafe { text_flags16(bytes, from + 16 * k) }) << (16 * k)
    })
}

/// Whether the fast check flags nothing in `bytes[from..from + 64]`
/// ([`super::text::flags_scalar`]): four 16-byte checks, one test.
///
/// # Safety
/// `from >= 2` and `from + 64 <= bytes.len()`.
#[inline(always)]
pub(crate) unsafe fn text_plain64(bytes: &[u8], from: usize) -> bool {
    // SAFETY: `from + k >= 2` and `from + k + 16 <= from + 64 <= bytes.len()`
    // (the caller's guarantee).
    let [a, b, c, d] = [0, 16, 32, 48].map(|k| unsafe { text_flags16(bytes, from + k) });
    !v128_any_true(v128_or(v128_or(a, b), v128_or(c, d)))
}

/// Validates a long string body from the backslash at `bytes[p]`
/// ([`text_blocks`] on SIMD128 masks).
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
/// backslash ([`skip_text_blocks`] on SIMD128 masks).
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
