//! The nesting loop: the values below the recorded levels, validated without
//! recursion (one bit per open level), with where it hands a value to the window
//! loop ([`super::window`]) or to the structural walk ([`crate::parse::walk`], the
//! hook [`Scanner::nested_walk`]), and the general loop that resumes after them
//! and gives every verdict.

use super::Scanner;
use super::readers::{key_end, unexpected, value_end, ws_from};
use super::spans::{Fail, Res};
use super::window::{PADDED_MAX, WINDOW_MIN};
use crate::long::LONG;
#[cfg(test)]
use crate::long::LongValues;
use crate::parse::error::Reason;
use crate::parse::ops::tick;
#[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
use crate::parse::{blocks, walk};
#[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
use crate::simd;

/// The fewest bytes from a nested value's start on for which the structural
/// walk is considered ([`Scanner::nested_walk`]): shorter values (most) never
/// pay for its sample and set-up.
const WALK_MIN: usize = 2048;

#[cfg(test)]
thread_local! {
    /// How many structural walks this thread started (for the tests).
    pub(super) static WALKS: core::cell::Cell<usize> = const { core::cell::Cell::new(0) };
}

/// How far into a long value the window loop goes before the walk's sample
/// is taken again ([`Scanner::nested_long`]).
const WALK_RESAMPLE: usize = 1024;

/// Where [`Scanner::nested_window_with`] handed over to the general loop.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Resume {
    /// The whole value was scanned; it ends at this index.
    Done(usize),
    /// At the array or object opening at `p`, of level `depth`.
    Open { p: usize, depth: usize },
    /// Right after a value (whitespace may follow) of the container at `depth`.
    After {
        p: usize,
        depth: usize,
        in_array: bool,
    },
}

impl Scanner<'_, '_> {
    /// Validates the array or object at `pos`, of level `depth`, and everything
    /// inside it, without recursion: one bit per open level records whether it
    /// is an array; the current level's kind stays in a register, the bit is read
    /// back only when a container closes. With `depth == base + 1`, the container
    /// at `pos` is a value inside the container of level `base`, already open
    /// (its bit set), whose rest is validated too: `pos` ends past the level
    /// `base` container (past the one at `pos` when `depth == base`).
    ///
    /// Messages of [`WINDOW_MIN`] bytes or more first take the window loop
    /// ([`Scanner::nested_window`]) while their input is simple, on a padded
    /// copy of the input's rest when that is short ([`Scanner::nested_padded`]);
    /// the general loop ([`Scanner::nested_general`]) resumes where it hands
    /// over and gives every verdict.
    ///
    /// Messages of [`LONG`] bytes or more note their long values
    /// ([`LongValues`](crate::long::LongValues)) on the way, in copies of the loops that do (`NOTE`):
    /// shorter ones hold none and pay nothing for it, nor do scanners whose
    /// record nobody reads ([`Scanner::noting`]).
    #[inline(never)]
    pub(super) fn scan_nested(&mut self, base: usize, depth: usize) -> Res<()> {
        if self.note && self.bytes.len() >= LONG {
            self.scan_nested_with::<true>(base, depth)
        } else {
            self.scan_nested_with::<false>(base, depth)
        }
    }

    #[inline(always)]
    fn scan_nested_with<const NOTE: bool>(&mut self, base: usize, depth: usize) -> Res<()> {
        debug_assert!(depth == base || depth == base + 1);
        let at = if self.compact && self.bytes.len() >= WINDOW_MIN {
            if self.bytes.len() - self.pos <= PADDED_MAX {
                self.nested_padded::<NOTE>(base, depth)
            } else {
                self.nested_long::<NOTE>(base, depth)
            }
        } else {
            Resume::Open { p: self.pos, depth }
        };
        self.nested_general::<NOTE>(base, at)
    }

    /// The general nesting loop, from where [`Scanner::nested_window_with`] handed
    /// over (or from the start): every input, every verdict.
    #[inline(always)]
    fn nested_general<const NOTE: bool>(&mut self, base: usize, at: Resume) -> Res<()> {
        let b = self.bytes;
        let max_depth = self.max_depth;
        // The depth of the container we are in (or, at 'open, about to open at `p`).
        let (mut p, mut depth, mut in_array, mut open) = match at {
            Resume::Done(end) => {
                self.pos = end;
                return Ok(());
            }
            Resume::Open { p, depth } => (p, depth, false, true),
            Resume::After { p, depth, in_array } => (p, depth, in_array, false),
        };
        'open: loop {
            if !open {
                // Resuming right after a value.
                open = true;
            } else {
                tick(1);
                if depth > max_depth {
                    return Err(Fail::at(Reason::TooDeep, p));
                }
                in_array = b[p] == b'[';
                self.set_level(depth, in_array);
                p = ws_from(b, p + 1);
                if b.get(p) == Some(if in_array { &b']' } else { &b'}' }) {
                    // Empty: it was a value of its parent.
                    p += 1;
                    depth -= 1;
                    if depth < base {
                        self.pos = p;
                        return Ok(());
                    }
                    in_array = self.level_is_array(depth);
                } else {
                    if !in_array {
                        p = key_end(b, p)?;
                    }
                    match value_end(b, p)? {
                        Some(end) => {
                            if NOTE {
                                self.long.note(p, end);
                            }
                            p = end;
                        }
                        None => {
                            depth += 1;
                            continue 'open;
                        }
                    }
                }
            }
            // Right after a value of the container at `depth`.
            loop {
                tick(1);
                p = ws_from(b, p);
                match b.get(p) {
                    Some(b',') => {
                        p = ws_from(b, p + 1);
                        if !in_array {
                            p = key_end(b, p)?;
                        }
                        match value_end(b, p)? {
                            Some(end) => {
                                if NOTE {
                                    self.long.note(p, end);
                                }
                                p = end;
                            }
                            None => {
                                depth += 1;
                                continue 'open;
                            }
                        }
                    }
                    Some(&c) if c == if in_array { b']' } else { b'}' } => {
                        p += 1;
                        depth -= 1;
                        if depth < base {
                            self.pos = p;
                            return Ok(());
                        }
                        in_array = self.level_is_array(depth);
                    }
                    _ => return Err(unexpected(b, p)),
                }
            }
        }
    }

    /// The nested value at `pos` (of level `depth`, with more than
    /// [`PADDED_MAX`] bytes left) by the structural walk where it pays, else the
    /// window loop: the walk when a sample of the value's start says so
    /// ([`Scanner::nested_walk`]), else the window loop, which stops at the
    /// first array or object opening [`WALK_RESAMPLE`] bytes on, where the
    /// walk's sample is taken again, and so on at twice the distance each time
    /// (a document's start is often unlike its bulk: a header of names before a
    /// mass of numbers). Where to go on from, as [`Scanner::nested_window`].
    #[inline(always)]
    fn nested_long<const NOTE: bool>(&mut self, base: usize, depth: usize) -> Resume {
        let b = self.bytes;
        let (mut p, mut depth) = (self.pos, depth);
        let mut distance = WALK_RESAMPLE;
        loop {
            if let Some(at) = self.nested_walk::<NOTE>(p, base, depth) {
                return at;
            }
            // Only where enough is left for the walk to win back a sample's
            // cost (measured: a 4 KB message loses 3% to one).
            let stop = match p.checked_add(distance) {
                Some(stop) if b.len().saturating_sub(stop) >= 4 * WALK_MIN => stop,
                _ => usize::MAX,
            };
            match self.nested_window::<NOTE>(b, p, base, depth, stop) {
                // Stopped at `stop`, not at the input's end nor the depth limit.
                Resume::Open { p: q, depth: d }
                    if q >= stop && q + 64 < b.len() && d <= self.max_depth =>
                {
                    (p, depth) = (q, d);
                    distance = distance.saturating_mul(2);
                }
                at => return at,
            }
        }
    }

    /// The structural walk ([`crate::parse::walk`]) on the array or object at `p`, of
    /// level `depth`, when at least [`WALK_MIN`] bytes follow, the CPU runs
    /// the walk, and a sample of the value's start shows the bytes the walk is
    /// faster on ([`blocks::walk_pays`]): where to go on from, the value's end
    /// ([`Resume::Done`]), or its start for the general loop if the walk gave
    /// up; `None` to leave the value to the window loop.
    #[inline(always)]
    fn nested_walk<const NOTE: bool>(
        &mut self,
        p: usize,
        base: usize,
        depth: usize,
    ) -> Option<Resume> {
        #[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
        if self.bytes.len() - p >= WALK_MIN && simd::has_avx2() {
            // SAFETY: AVX2, BMI1, BMI2, PCLMULQDQ, LZCNT and POPCNT were detected on this CPU.
            if !unsafe { walk_pays_avx2(self.bytes, p) } {
                return None;
            }
            // SAFETY: as above.
            return Some(unsafe { self.walk_avx2::<NOTE>(Resume::Open { p, depth }, base) });
        }
        let _ = (p, base, depth);
        None
    }

    /// [`walk::walk`] compiled for AVX2, on the AVX2 kernel, from the
    /// opening `at` (a [`Resume::Open`]): the value's end, or `at` for the
    /// general loop if the walk gave up.
    ///
    /// # Safety
    /// - The CPU must support AVX2, BMI1, BMI2, PCLMULQDQ, LZCNT and POPCNT
    ///   ([`simd::has_avx2`] returned `true`).
    #[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
    #[target_feature(enable = "avx2,bmi1,bmi2,pclmulqdq,lzcnt,popcnt")]
    #[inline(never)]
    unsafe fn walk_avx2<const NOTE: bool>(&mut self, at: Resume, base: usize) -> Resume {
        #[cfg(test)]
        WALKS.set(WALKS.get() + 1);
        let mut w = walk::Walk {
            stack: self.stack,
            max_depth: self.max_depth,
            long: self.long,
        };
        // SAFETY: as above.
        let kernel = unsafe { blocks::Avx2::new() };
        match walk::walk::<_, NOTE>(self.bytes, at, base, &mut w, kernel) {
            Some(end) => Resume::Done(end),
            None => at,
        }
    }

    #[inline]
    pub(super) fn set_level(&mut self, depth: usize, is_array: bool) {
        let (w, bit) = (depth / 64, depth % 64);
        if is_array {
            self.stack[w] |= 1 << bit;
        } else {
            self.stack[w] &= !(1 << bit);
        }
    }

    #[inline]
    pub(super) fn level_is_array(&self, depth: usize) -> bool {
        self.stack[depth / 64] >> (depth % 64) & 1 == 1
    }

    /// [`Scanner::set_level`] without the bounds check, for the window loop.
    ///
    /// # Safety
    /// - `depth / 64 < self.stack.len()`.
    #[inline(always)]
    pub(super) unsafe fn set_level_unchecked(&mut self, depth: usize, is_array: bool) {
        debug_assert!(depth / 64 < self.stack.len());
        let bit = 1u64 << (depth % 64);
        // SAFETY: `depth / 64 < stack.len()`, the caller's guarantee.
        let word = unsafe { self.stack.get_unchecked_mut(depth / 64) };
        if is_array {
            *word |= bit;
        } else {
            *word &= !bit;
        }
    }

    /// [`Scanner::level_is_array`] without the bounds check, for the window loop.
    ///
    /// # Safety
    /// - `depth / 64 < self.stack.len()`.
    #[inline(always)]
    pub(super) unsafe fn level_is_array_unchecked(&self, depth: usize) -> bool {
        debug_assert!(depth / 64 < self.stack.len());
        // SAFETY: `depth / 64 < stack.len()`, the caller's guarantee.
        unsafe { self.stack.get_unchecked(depth / 64) >> (depth % 64) & 1 == 1 }
    }
}

/// The general loop alone on the array or object at `b[0]` (level 1): where it
/// ends, or `None` if it is invalid (the structural walk's reference).
#[cfg(test)]
pub(crate) fn general_value_end(b: &[u8], max_depth: usize) -> Option<usize> {
    let mut stack = vec![0u64; max_depth / 64 + 1];
    let mut long = LongValues::default();
    let mut sc = Scanner::new(b, max_depth, &mut stack, &mut long).general_only();
    sc.scan_nested(1, 1).ok().map(|()| sc.pos)
}

/// [`blocks::walk_pays`] compiled for AVX2, out of the walk's own function
/// (whose set-up a refused sample would pay for nothing).
///
/// # Safety
/// - The CPU must support AVX2 and PCLMULQDQ ([`simd::has_avx2`] returned
///   `true`).
#[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
#[target_feature(enable = "avx2,bmi1,bmi2,pclmulqdq")]
#[inline(never)]
unsafe fn walk_pays_avx2(b: &[u8], p: usize) -> bool {
    // SAFETY: AVX2 and PCLMULQDQ, this function's caller's guarantee.
    blocks::walk_pays(b, p, unsafe { blocks::Avx2::new() })
}
