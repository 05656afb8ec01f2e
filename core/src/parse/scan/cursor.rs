//! The window loop's input ([`Cursor`]) and its special-byte mask
//! ([`Window`]): the only places where the window loop ([`super::window`])
//! reads without a bounds check. A cursor is made only over input with 64
//! readable bytes after every position it hands out a block for (the input
//! itself, or the padded copy of its end, [`Cursor::padded`]), so that every
//! unchecked read rests on that one invariant, as httparse's `Bytes` does.

use super::window::{PADDED_BUF, PADDED_MAX};
use core::mem::MaybeUninit;
use core::{ptr, slice};

/// The window loop's input.
#[derive(Clone, Copy)]
pub(super) struct Cursor<'a> {
    /// INVARIANT: `end + 64 == bytes.len()`: the 64 bytes from every position
    /// `p <= end` are in `bytes`.
    bytes: &'a [u8],
    end: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor over `bytes`, if it holds 64 bytes or more.
    #[inline(always)]
    pub(super) fn new(bytes: &'a [u8]) -> Option<Self> {
        let end = bytes.len().checked_sub(64)?;
        Some(Cursor { bytes, end })
    }

    /// A cursor over `b[p..]` followed by 64 zero bytes, copied into `buf`
    /// (whose first 64 bytes are room for the last copy below) in 64-byte
    /// copies.
    ///
    /// # Panics
    /// If `b.len() - p > PADDED_MAX` or `b.len() < 64` (the caller checked both).
    #[inline(always)]
    pub(super) fn padded(buf: &'a mut [MaybeUninit<u8>; PADDED_BUF], b: &[u8], p: usize) -> Self {
        let n = b.len() - p;
        assert!(n <= PADDED_MAX && b.len() >= 64);
        let src = b.as_ptr();
        // `out[i]` is to hold `b[p + i]`, for `i < n`; then the zeros.
        // SAFETY: `64 < PADDED_BUF`: the pointer stays in `buf`.
        let out = unsafe { buf.as_mut_ptr().cast::<u8>().add(64) };
        // SAFETY: the writes stay in `buf`: `out` is `&buf[64]`, `buf` holds
        // `64 + PADDED_MAX + 64` bytes and `n <= PADDED_MAX`; the first copies
        // write `out[k..k + 64]` with `k + 64 < n`, the last `out[n - 64..n]`
        // (from `buf[0]` on when `n < 64`), the zeros `out[n..n + 64]`. The reads
        // stay in `b`: `b[p + k..p + k + 64]` with `p + k + 64 < b.len()`, and
        // `b[b.len() - 64..]` (`b.len() >= 64`). `MaybeUninit<u8>` is a byte, so
        // the casts keep every offset. The slice returned is `out[..n + 64]`, all
        // written: `out[..k]` by the first copies, `out[n - 64..n]` (`k >= n - 64`
        // when they end) by the last, the zeros after.
        let bytes = unsafe {
            let mut k = 0;
            while k + 64 < n {
                ptr::copy_nonoverlapping(src.add(p + k), out.add(k), 64);
                k += 64;
            }
            ptr::copy_nonoverlapping(src.add(b.len() - 64), out.add(n).sub(64), 64);
            ptr::write_bytes(out.add(n), 0, 64);
            slice::from_raw_parts(out, n + 64)
        };
        // The invariant: `bytes.len() == n + 64`.
        Cursor { bytes, end: n }
    }

    /// The whole input.
    #[inline(always)]
    pub(super) fn bytes(self) -> &'a [u8] {
        self.bytes
    }

    /// The input's length less 64: the window loop takes no token at or past
    /// it (it hands over to the general loop there).
    #[inline(always)]
    pub(super) fn end(self) -> usize {
        self.end
    }

    /// The 64 bytes from `p`, if `p <= end`.
    #[inline(always)]
    pub(super) fn block(self, p: usize) -> Option<&'a [u8; 64]> {
        if p <= self.end {
            // SAFETY: `p <= end`, so `p + 64 <= bytes.len()` (the invariant);
            // `[u8; 64]` has alignment 1.
            Some(unsafe { &*self.bytes.as_ptr().add(p).cast::<[u8; 64]>() })
        } else {
            None
        }
    }

    /// The 64 bytes from `p`, without the check of [`Cursor::block`].
    ///
    /// # Safety
    /// - `p <= end`.
    #[inline(always)]
    pub(super) unsafe fn block_unchecked(self, p: usize) -> &'a [u8; 64] {
        debug_assert!(p <= self.end);
        // SAFETY: `p <= end`, the caller's guarantee, so `p + 64 <=
        // bytes.len()` (the invariant); `[u8; 64]` has alignment 1.
        unsafe { &*self.bytes.as_ptr().add(p).cast::<[u8; 64]>() }
    }

    /// The 65 bytes from `p`, if `p < end` and `p < limit`.
    #[inline(always)]
    pub(super) fn block_before(self, p: usize, limit: usize) -> Option<&'a [u8; 65]> {
        if p < limit {
            self.block_before_end(p)
        } else {
            None
        }
    }

    /// The 65 bytes from `p`, if `p < end` (a position whose token the window
    /// loop still takes: the 64 bytes from the next one are there too,
    /// [`next`]).
    #[inline(always)]
    pub(super) fn block_before_end(self, p: usize) -> Option<&'a [u8; 65]> {
        if p < self.end {
            // SAFETY: `p < end`, so `p + 65 <= bytes.len()` (the invariant);
            // `[u8; 65]` has alignment 1.
            Some(unsafe { &*self.bytes.as_ptr().add(p).cast::<[u8; 65]>() })
        } else {
            None
        }
    }
}

/// The 64 bytes from the first of `block`'s.
#[inline(always)]
pub(super) fn first(block: &[u8; 65]) -> &[u8; 64] {
    let [first @ .., _] = block;
    first
}

/// The 64 bytes from the second of `block`'s.
#[inline(always)]
pub(super) fn next(block: &[u8; 65]) -> &[u8; 64] {
    let [_, next @ ..] = block;
    next
}

/// The special-byte mask (quotes, backslashes, control bytes, bytes >= 0x80) of
/// the 64 input bytes from `at`: the strings that start and end inside it find
/// their end with a shift and a trailing-zero count, sharing one mask.
pub(super) struct Window<'a> {
    cur: Cursor<'a>,
    /// INVARIANT: `specials == 0` or `at <= cur.end` (a set bit then stands for
    /// a byte of `cur`'s input, whatever the mask computed).
    at: usize,
    specials: u64,
}

/// What the window shows from a position (see [`Window::from`]).
pub(super) enum Seen {
    /// The first special byte from the position on: its index, and the byte.
    Special(usize, u8),
    /// No special byte from the position to the window's end, at this index.
    Plain(usize),
    /// The position is outside the window.
    Outside,
}

impl<'a> Window<'a> {
    /// The window of the 64 bytes from `p` of `cur`'s input (empty if fewer
    /// remain), masked by `mask`.
    #[inline(always)]
    pub(super) fn new(cur: Cursor<'a>, p: usize, mask: &impl Fn(&[u8; 64]) -> u64) -> Self {
        Window {
            cur,
            at: p,
            specials: cur.block(p).map_or(0, mask),
        }
    }

    /// The window moved to the 64 bytes from `s`; `false` (the window kept) if
    /// fewer remain.
    #[inline(always)]
    pub(super) fn load(&mut self, s: usize, mask: &impl Fn(&[u8; 64]) -> u64) -> bool {
        let Some(block) = self.cur.block(s) else {
            return false;
        };
        // The invariant: `s <= cur.end`.
        self.at = s;
        self.specials = mask(block);
        true
    }

    /// What the window shows from `s` on.
    #[inline(always)]
    pub(super) fn from(&self, s: usize) -> Seen {
        let off = s.wrapping_sub(self.at);
        if off >= 64 {
            return Seen::Outside;
        }
        let m = self.specials >> off;
        if m == 0 {
            return Seen::Plain(self.at + 64);
        }
        let i = s + m.trailing_zeros() as usize;
        // SAFETY: `m != 0`, so `specials != 0` and (the invariant) `at <=
        // cur.end`, so `at + 64 <= cur.bytes.len()`; `i` is `at + off` plus a
        // bit index of `m = specials >> off`, so `i < at + 64`.
        Seen::Special(i, unsafe { *self.cur.bytes.get_unchecked(i) })
    }
}
