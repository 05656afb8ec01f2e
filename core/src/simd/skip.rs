//! Skipping a validated array or object 64 bytes a step (simdjson's method).
//!
//! The params view re-walks values the scanner has already validated (a `get`
//! skips every member before the one it wants, counting members skips every
//! value), so only where the value ends matters. Per 64-byte block, four
//! bitmasks (quotes, backslashes, opening and closing brackets) give, without a
//! branch per byte:
//!
//! - the escaped bytes (the byte after an odd run of backslashes, [`escaped_bytes`]);
//! - the string interiors: a prefix XOR of the unescaped quotes ([`prefix_xor`]),
//!   carried across blocks, masks out brackets inside strings;
//! - the depth: a block whose closing brackets are fewer than the open depth
//!   cannot end the value, so it costs two popcounts; otherwise its brackets are
//!   walked in order to the one that closes the value.
//!
//! Inside a long string (text, source code) the masks are not needed: a block
//! whose quotes all follow a backslash run of exactly one (`\"`, certainly
//! escaped) and that leaves no escape pending cannot close the string, and is
//! stepped over on one test ([`Kernel::plain`]), 128 bytes at a time while
//! such blocks last.
//!
//! Each kernel (SSE2, AVX2, AVX-512, scalar) supplies only the masks; the walk is shared
//! ([`skip_blocks`]) and the scalar instance (run under Miri) is tested against
//! the SIMD ones and a byte walk.

use crate::parse::ops::tick;

/// The four masks of one 64-byte block: bit i is byte i of the block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Masks {
    /// `"` bytes.
    pub quotes: u64,
    /// `\\` bytes.
    pub backslashes: u64,
    /// `[` and `{` bytes.
    pub opens: u64,
    /// `]` and `}` bytes.
    pub closes: u64,
    /// `,` bytes (for counting members, [`count_blocks`]).
    pub commas: u64,
}

/// What a kernel (SSE2, AVX2, AVX-512, scalar) supplies to the shared walks
/// ([`skip_blocks`], [`count_blocks`]).
pub(crate) struct Kernel<M, T, P, W, X> {
    /// `masks(b, at)`: the masks of `b[at..at + 64]`, called only with
    /// `at + 64 <= b.len()`.
    pub masks: M,
    /// The masks of a padded last block (a buffer shorter than 64 bytes).
    pub tail_masks: T,
    /// `plain(b, at)`: whether `b[at..at + 64]`, inside a string open at `at`,
    /// cannot close it and leaves no escape pending after it (called only with
    /// `2 <= at` and `at + 64 <= b.len()`): every `"` in it, and its last byte
    /// if a `\\`, follows a backslash run of exactly one (`b[i - 1]` is a `\\`
    /// and `b[i - 2]` is not), so the quotes are escaped and a last backslash
    /// ends a run of two. Exactly this test in every kernel (a longer run fails
    /// it: the masks decide).
    pub plain: P,
    /// `plain128(b, at)`: [`Kernel::plain`] on `b[at..at + 128]` (called only
    /// with `2 <= at` and `at + 128 <= b.len()`).
    pub plain128: W,
    /// [`prefix_xor`], or the same by carry-less multiplication.
    pub prefix_xor: X,
}

/// The bytes of a 64-byte block that are escaped (the byte after an odd-length
/// run of backslashes), given its backslash mask and `carry` (1 when the previous
/// block ended in an odd run, so this block's first byte is escaped); updates
/// `carry` for the next block. Branch-free (simdjson's later method): an
/// odd-bits mask minus the backslashes (shifted onto the bytes they may escape)
/// flips exactly at the ends of runs that start on an even bit; XOR-ing the odd
/// bits back leaves the escaping backslashes and the bytes they escape, and
/// XOR-ing the backslashes out leaves the escaped bytes.
#[inline(always)]
pub(crate) fn escaped_bytes(backslashes: u64, carry: &mut u64) -> u64 {
    const ODD: u64 = 0xAAAA_AAAA_AAAA_AAAA;
    let potential = backslashes & !*carry; // an escaped backslash escapes nothing
    let escape_and_escaped = ((potential << 1) | ODD).wrapping_sub(potential) ^ ODD;
    let escaped = escape_and_escaped ^ (backslashes | *carry);
    *carry = (escape_and_escaped & backslashes) >> 63;
    escaped
}

/// Bit i of the result is the XOR of bits 0..=i of `x`: with `x` the unescaped
/// quotes, the bits from an opening quote up to (not including) its closing one.
#[inline(always)]
pub(crate) fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// The masks of 64 bytes, byte by byte: the reference the SIMD kernels are
/// tested against, and the kernel of the scalar build.
#[cfg_attr(
    all(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128")), not(switchboard_disable_simd), not(miri), not(test)),
    allow(dead_code) // the scalar build's kernel; here only the tests' reference
)]
#[inline]
pub(crate) fn masks_scalar(block: &[u8; 64]) -> Masks {
    let mut m = Masks::default();
    for (i, &c) in block.iter().enumerate() {
        let bit = 1u64 << i;
        match c {
            b'"' => m.quotes |= bit,
            b'\\' => m.backslashes |= bit,
            b'[' | b'{' => m.opens |= bit,
            b']' | b'}' => m.closes |= bit,
            b',' => m.commas |= bit,
            _ => {}
        }
    }
    m
}

/// The end (one past the closing bracket) of the validated array or object whose
/// opening bracket is `b[p]`; `b.len()` if it never closes (never, for validated
/// input).
#[inline(always)]
pub(crate) fn skip_blocks<M, T, P, W, X>(b: &[u8], p: usize, k: &Kernel<M, T, P, W, X>) -> usize
where
    M: Fn(&[u8], usize) -> Masks,
    T: Fn(&[u8; 64]) -> Masks,
    P: Fn(&[u8], usize) -> bool,
    W: Fn(&[u8], usize) -> bool,
    X: Fn(u64) -> u64,
{
    debug_assert!(matches!(b.get(p), Some(b'[' | b'{')));
    // From just after the opening bracket, one level deep: a first block with
    // fewer closing brackets than that cannot end the value either.
    walk_blocks(b, p + 1, k, Walk::START, |state, m, at| {
        state.block(m, &k.prefix_xor).map(|i| at + i + 1)
    })
    .unwrap_or(b.len())
}

/// [`skip_blocks`], its first block on a shorter path (most members of a small
/// object close within the 64 bytes after their opening bracket): the closing
/// bracket is the first closing one outside strings with as many opening ones
/// before it as closing ones (itself included) minus one (the depth, one after
/// the opening bracket and moving by one per bracket, is first back to zero
/// there), found by a popcount per closing bracket with no walk state. A
/// container that goes on continues the walk from the state after that block,
/// as [`skip_blocks`] would have it. When the buffer ends within 64 bytes of the
/// bracket the block is its last 64 bytes shifted, as in the walk's last step (a
/// buffer shorter than 64 bytes goes to [`skip_blocks`]). Equal to
/// [`skip_blocks`] on any input.
#[cfg_attr(
    not(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri))),
    allow(dead_code) // the AVX2 kernel's; elsewhere only the tests' scalar instance
)]
#[inline(always)]
pub(crate) fn skip_blocks_first<M, T, P, W, X>(
    b: &[u8],
    p: usize,
    k: &Kernel<M, T, P, W, X>,
) -> usize
where
    M: Fn(&[u8], usize) -> Masks,
    T: Fn(&[u8; 64]) -> Masks,
    P: Fn(&[u8], usize) -> bool,
    W: Fn(&[u8], usize) -> bool,
    X: Fn(u64) -> u64,
{
    debug_assert!(matches!(b.get(p), Some(b'[' | b'{')));
    let at = p + 1;
    let Some(last) = b.len().checked_sub(64) else {
        return skip_blocks(b, p, k); // a padded copy: the walk's own tail step
    };
    tick(1);
    // The block at `at`, or the buffer's last 64 bytes shifted (the walk's last
    // step: the buffer ends within 64 bytes of the bracket).
    let whole = at <= last;
    let m = if whole {
        (k.masks)(b, at)
    } else if at < b.len() {
        (k.masks)(b, last).shr((at - last) as u32)
    } else {
        return b.len(); // a bracket as the last byte (never, validated)
    };
    let mut carry = 0;
    let mut quotes = m.quotes;
    if m.backslashes != 0 {
        quotes &= !escaped_bytes(m.backslashes, &mut carry);
    }
    let strings = (k.prefix_xor)(quotes);
    let opens = m.opens & !strings;
    let closes = m.closes & !strings;
    let mut rest = closes;
    let mut n = 1;
    while rest != 0 {
        tick(1);
        let i = rest.trailing_zeros();
        if (opens & ((1u64 << i) - 1)).count_ones() + 1 == n {
            return at + i as usize + 1;
        }
        n += 1;
        rest &= rest - 1;
    }
    if !whole {
        return b.len(); // never closes (never, validated)
    }
    // Not closed here: at least one more opening bracket than closing ones.
    let state = Walk {
        depth: 1 + u64::from(opens.count_ones()) - u64::from(closes.count_ones()),
        in_string: ((strings as i64) >> 63) as u64,
        carry,
    };
    walk_blocks(b, at + 64, k, state, |state, m, at| {
        state.block(m, &k.prefix_xor).map(|i| at + i + 1)
    })
    .unwrap_or(b.len())
}

/// The block walk of [`skip_blocks`] and [`count_blocks`], one level inside a
/// container from `at`: 64 bytes a step, every block given to `block` (its
/// masks, with `quotes` only the unescaped ones, and its offset), whose `Some`
/// ends the walk; `None` when the input ends first.
///
/// Inside a long string, a block the kernel calls plain (no quote but escaped
/// ones, no escape pending after it: [`Kernel::plain`]) is skipped on that one
/// test, and any other block without an unescaped quote on the escape masks
/// alone. The last partial block is the buffer's last 64 bytes with the bytes
/// already taken shifted out of the masks (a buffer shorter than 64 bytes is
/// copied into a padded block for `tail_masks`).
#[inline(always)]
fn walk_blocks<R, M, T, P, W, X>(
    b: &[u8],
    mut at: usize,
    k: &Kernel<M, T, P, W, X>,
    mut state: Walk,
    mut block: impl FnMut(&mut Walk, Masks, usize) -> Option<R>,
) -> Option<R>
where
    M: Fn(&[u8], usize) -> Masks,
    T: Fn(&[u8; 64]) -> Masks,
    P: Fn(&[u8], usize) -> bool,
    W: Fn(&[u8], usize) -> bool,
{
    // `at < stop` is `at + 64 <= b.len()`.
    let stop = b.len().saturating_sub(63);
    while at < stop {
        tick(1);
        let mut m = (k.masks)(b, at);
        m.quotes = state.unescaped(m);
        at += 64;
        if state.in_string != 0 && m.quotes == 0 {
            // A block without its closing quote is all string, skipped on the
            // escape masks alone: a long string (text) goes on. Then plain
            // blocks on one test each, two at a time while they last (not tried
            // in a short string, where they fail); `at >= 64` here, as the
            // plain tests need (they read the two bytes before `at`).
            loop {
                let from = at;
                while at + 64 < stop && (k.plain128)(b, at) {
                    tick(1);
                    at += 128;
                }
                if at < stop && (k.plain)(b, at) {
                    tick(1);
                    at += 64;
                }
                if at == from {
                    break;
                }
                state.carry = 0;
            }
            continue;
        }
        if let Some(r) = block(&mut state, m, at - 64) {
            return Some(r);
        }
    }
    if at < b.len() {
        tick(1);
        let mut m = last_masks(b, at, &k.masks, &k.tail_masks);
        m.quotes = state.unescaped(m);
        return block(&mut state, m, at);
    }
    None
}

/// The masks of the last partial block `b[at..]` (`b.len() - at < 64`), bit i
/// being byte `at + i`, with zeros (as for spaces) past the end: the buffer's
/// last 64 bytes shifted, or, for a buffer shorter than 64 bytes, a copy padded
/// with spaces.
#[inline(always)]
fn last_masks(
    b: &[u8],
    at: usize,
    masks: impl Fn(&[u8], usize) -> Masks,
    tail_masks: impl Fn(&[u8; 64]) -> Masks,
) -> Masks {
    debug_assert!(at < b.len() && b.len() - at < 64);
    match b.len().checked_sub(64) {
        Some(last) => masks(b, last).shr((at - last) as u32),
        None => tail_masks(&padded_tail(b, at)),
    }
}

impl Masks {
    /// Every mask shifted right by `n` (`< 64`) bits.
    #[inline(always)]
    fn shr(self, n: u32) -> Masks {
        Masks {
            quotes: self.quotes >> n,
            backslashes: self.backslashes >> n,
            opens: self.opens >> n,
            closes: self.closes >> n,
            commas: self.commas >> n,
        }
    }
}

/// The number of values left in the validated array or object that `p` is
/// directly inside of, with `b[p]` the first non-whitespace byte after its
/// opening bracket or after a `,` between its values (`0` if `b[p]` is its
/// closing bracket): its commas outside strings and nested values after `p`,
/// plus one. Same walk as [`skip_blocks`], with the comma mask: a block without
/// an unmasked bracket adds its commas at once (when at the container's own
/// level); otherwise its brackets and commas are taken in order.
#[inline(always)]
pub(crate) fn count_blocks<M, T, P, W, X>(b: &[u8], p: usize, k: &Kernel<M, T, P, W, X>) -> usize
where
    M: Fn(&[u8], usize) -> Masks,
    T: Fn(&[u8; 64]) -> Masks,
    P: Fn(&[u8], usize) -> bool,
    W: Fn(&[u8], usize) -> bool,
    X: Fn(u64) -> u64,
{
    if matches!(b.get(p), None | Some(b']' | b'}')) {
        return 0;
    }
    let mut n = 1;
    walk_blocks(b, p, k, Walk::START, |state, m, _| {
        state.count_block(m, &k.prefix_xor, &mut n)
    });
    n
}

/// One past the closing quote of the validated string in which `b[p]` is a
/// backslash: 64 bytes a step, escapes resolved from the backslash mask alone
/// ([`escaped_bytes`]); the closing quote is the first quote not escaped; `b.len()`
/// if there is none (never, for validated input). `masks(b, at)` gives the quote
/// and backslash masks and is called only with `at + 64 <= b.len()`, as is
/// `plain` (see [`Kernel::plain`]); a buffer shorter than 64 bytes is copied into
/// a padded buffer for `tail_masks`.
#[inline(always)]
pub(crate) fn skip_text_blocks(
    b: &[u8],
    p: usize,
    masks: impl Fn(&[u8], usize) -> (u64, u64),
    tail_masks: impl Fn(&[u8; 64]) -> (u64, u64),
    plain: impl Fn(&[u8], usize) -> bool,
) -> usize {
    debug_assert_eq!(b.get(p), Some(&b'\\'));
    let mut carry = 0u64;
    let mut at = p;
    let stop = b.len().saturating_sub(63);
    while at < stop {
        tick(1);
        if plain(b, at) {
            carry = 0;
            at += 64;
            continue;
        }
        let (quotes, backslashes) = masks(b, at);
        let closing = quotes & !escaped_bytes(backslashes, &mut carry);
        if closing != 0 {
            return at + closing.trailing_zeros() as usize + 1;
        }
        at += 64;
    }
    if at < b.len() {
        tick(1);
        let (quotes, backslashes) = match b.len().checked_sub(64) {
            Some(last) => {
                let (q, s) = masks(b, last);
                let n = at - last;
                (q >> n, s >> n)
            }
            None => tail_masks(&padded_tail(b, at)),
        };
        let closing = quotes & !escaped_bytes(backslashes, &mut carry);
        if closing != 0 {
            return at + closing.trailing_zeros() as usize + 1;
        }
    }
    b.len()
}

/// The state carried from one block to the next.
struct Walk {
    /// Open brackets not yet closed.
    depth: u64,
    /// All ones when the previous block ended inside a string.
    in_string: u64,
    /// 1 when the previous block ended in an odd run of backslashes.
    carry: u64,
}

impl Walk {
    /// One level inside a container, outside strings, no escape pending.
    const START: Walk = Walk {
        depth: 1,
        in_string: 0,
        carry: 0,
    };

    /// The block's quotes that are not escaped, updating the escape carry; the
    /// escape masks are skipped when no backslash is in play (most blocks of
    /// dense JSON), and otherwise come from [`escaped_bytes`].
    #[inline(always)]
    fn unescaped(&mut self, m: Masks) -> u64 {
        if m.backslashes | self.carry == 0 {
            return m.quotes;
        }
        m.quotes & !escaped_bytes(m.backslashes, &mut self.carry)
    }

    /// Takes one block of [`count_blocks`] (its quotes the unescaped ones): adds
    /// to `n` the commas at depth 1 (the counted container's own level); `Some`
    /// when the container closes in this block.
    #[inline(always)]
    fn count_block(
        &mut self,
        m: Masks,
        prefix_xor: impl Fn(u64) -> u64,
        n: &mut usize,
    ) -> Option<()> {
        let quotes = m.quotes;
        let strings = prefix_xor(quotes) ^ self.in_string;
        self.in_string = ((strings as i64) >> 63) as u64;
        let opens = m.opens & !strings;
        let closes = m.closes & !strings;
        let commas = m.commas & !strings;
        if opens | closes == 0 {
            if self.depth == 1 {
                *n += commas.count_ones() as usize;
            }
            return None;
        }
        // The brackets in order; the commas between two of them count at once
        // when that stretch is at depth 1.
        let mut brackets = opens | closes;
        let mut rest = !0u64; // the bits after the last bracket taken
        while brackets != 0 {
            tick(1);
            let bit = brackets & brackets.wrapping_neg();
            if self.depth == 1 {
                *n += (commas & rest & (bit - 1)).count_ones() as usize;
            }
            if opens & bit != 0 {
                self.depth += 1;
            } else {
                self.depth -= 1;
                if self.depth == 0 {
                    return Some(());
                }
            }
            rest = !(bit | (bit - 1));
            brackets &= brackets - 1;
        }
        if self.depth == 1 {
            *n += (commas & rest).count_ones() as usize;
        }
        None
    }

    /// Takes one block (its quotes the unescaped ones); the index in it of the
    /// bracket that closes the value, if it does.
    #[inline(always)]
    fn block(&mut self, m: Masks, prefix_xor: impl Fn(u64) -> u64) -> Option<usize> {
        let quotes = m.quotes;
        let strings = prefix_xor(quotes) ^ self.in_string;
        self.in_string = ((strings as i64) >> 63) as u64;
        let opens = m.opens & !strings;
        let closes = m.closes & !strings;
        let n_closes = u64::from(closes.count_ones());
        if n_closes < self.depth {
            // Cannot get back to depth 0 in this block.
            self.depth = self.depth + u64::from(opens.count_ones()) - n_closes;
            return None;
        }
        let mut brackets = opens | closes;
        while brackets != 0 {
            tick(1);
            let i = brackets.trailing_zeros();
            let bit = 1u64 << i;
            if opens & bit != 0 {
                self.depth += 1;
            } else {
                self.depth -= 1;
                if self.depth == 0 {
                    return Some(i as usize);
                }
            }
            brackets &= brackets - 1;
        }
        None
    }
}

/// The 64 bytes at `at` (`at + 64 <= b.len()`), borrowed, for the scalar masks.
#[inline(always)]
fn block_at(b: &[u8], at: usize) -> &[u8; 64] {
    b[at..at + 64].try_into().expect("a 64-byte range")
}

/// The last partial block `b[at..]` (`b.len() - at < 64`) padded with spaces: no
/// quote, backslash or bracket, so the padding changes no mask that matters.
#[inline(always)]
fn padded_tail(b: &[u8], at: usize) -> [u8; 64] {
    let mut block = [b' '; 64];
    block[..b.len() - at].copy_from_slice(&b[at..]);
    block
}

/// Whether the 64 bytes at `at` hold no `"` and do not end in a `\\`, byte by
/// byte (the plain test of [`skip_text_blocks`]).
#[inline(always)]
fn plain_scalar(b: &[u8], at: usize) -> bool {
    let block = block_at(b, at);
    block[63] != b'\\' && !block.contains(&b'"')
}

/// [`Kernel::plain`] on the `n` bytes at `at`, byte by byte: every `"`, and the
/// last byte if a `\\`, follows a backslash run of exactly one.
#[inline(always)]
fn plain_escaped_scalar(b: &[u8], at: usize, n: usize) -> bool {
    let one = |i: usize| b[i - 1] == b'\\' && b[i - 2] != b'\\';
    let last = at + n - 1;
    (at..last).all(|i| b[i] != b'"' || one(i)) && (!matches!(b[last], b'"' | b'\\') || one(last))
}

/// The scalar build's kernel: masks byte by byte, the shift-and-xor prefix XOR.
macro_rules! scalar_kernel {
    () => {
        Kernel {
            masks: |b: &[u8], at| masks_scalar(block_at(b, at)),
            tail_masks: masks_scalar,
            plain: |b: &[u8], at| plain_escaped_scalar(b, at, 64),
            plain128: |b: &[u8], at| plain_escaped_scalar(b, at, 128),
            prefix_xor,
        }
    };
}

/// [`skip_blocks`] with the scalar masks: the scalar build's kernel.
#[cfg_attr(
    all(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128")), not(switchboard_disable_simd), not(miri), not(test)),
    allow(dead_code) // the scalar build's kernel; here only the tests' reference
)]
#[inline]
pub(crate) fn skip_container_scalar(b: &[u8], p: usize) -> usize {
    skip_blocks(b, p, &scalar_kernel!())
}

/// [`skip_blocks_first`] on the scalar masks: its instance run under Miri,
/// tested against [`skip_container_scalar`].
#[cfg(test)]
pub(crate) fn skip_container_first_scalar(b: &[u8], p: usize) -> usize {
    skip_blocks_first(b, p, &scalar_kernel!())
}

/// [`count_blocks`] with the scalar masks: the scalar build's kernel.
#[cfg_attr(
    all(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128")), not(switchboard_disable_simd), not(miri), not(test)),
    allow(dead_code) // the scalar build's kernel; here only the tests' reference
)]
#[inline]
pub(crate) fn count_values_scalar(b: &[u8], p: usize) -> usize {
    count_blocks(b, p, &scalar_kernel!())
}

/// [`skip_text_blocks`] with the scalar masks: the scalar build's kernel.
#[cfg_attr(
    all(
        any(
            target_arch = "x86_64",
            all(target_arch = "wasm32", target_feature = "simd128")
        ),
        not(switchboard_disable_simd),
        not(miri),
        not(test)
    ),
    allow(dead_code)
)]
#[inline]
pub(crate) fn skip_text_scalar(b: &[u8], p: usize) -> usize {
    let qb = |block: &[u8; 64]| {
        let m = masks_scalar(block);
        (m.quotes, m.backslashes)
    };
    skip_text_blocks(b, p, |b, at| qb(block_at(b, at)), qb, plain_scalar)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A byte walk: the reference.
    fn walk(b: &[u8], mut p: usize) -> usize {
        let mut depth = 0usize;
        while let Some(&c) = b.get(p) {
            match c {
                b'"' => {
                    p += 1;
                    loop {
                        match b.get(p) {
                            Some(b'\\') => p += 2,
                            Some(b'"') => break,
                            Some(_) => p += 1,
                            None => return b.len(),
                        }
                    }
                }
                b'[' | b'{' => depth += 1,
                b']' | b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return p + 1;
                    }
                }
                _ => {}
            }
            p += 1;
        }
        b.len()
    }

    /// What a generated container ([`container`]) gets next.
    enum Part {
        /// An array or an object (either at random).
        Open,
        Bytes(&'static [u8]),
        /// The innermost bracket open.
        Close,
    }

    /// A generated container after `0..lead` spaces: after its first bracket,
    /// the parts `mix` chooses (told whether the container is still shorter
    /// than a random `0..size` bytes) until every bracket is closed. The bytes
    /// and where the container starts; it ends at their end.
    fn container(
        next: &mut impl FnMut() -> usize,
        lead: usize,
        size: usize,
        mut mix: impl FnMut(&mut dyn FnMut() -> usize, bool) -> Part,
    ) -> (Vec<u8>, usize) {
        let mut v = vec![b' '; next() % lead];
        let start = v.len();
        let target = next() % size;
        let mut stack = Vec::new();
        let mut part = Part::Open;
        loop {
            match part {
                Part::Open => {
                    let obj = next().is_multiple_of(2);
                    v.push(if obj { b'{' } else { b'[' });
                    stack.push(if obj { b'}' } else { b']' });
                }
                Part::Bytes(b) => v.extend_from_slice(b),
                Part::Close => {
                    v.push(stack.pop().expect("a bracket is open"));
                    if stack.is_empty() {
                        return (v, start);
                    }
                }
            }
            part = mix(next, v.len() - start < target);
        }
    }

    /// Generated nested values (strings with brackets, quotes and backslash runs
    /// across block boundaries, deep and wide nesting) end where the byte walk
    /// says, in every kernel, at every offset and with trailing bytes after them.
    #[test]
    fn skip_matches_a_byte_walk() {
        let mut next = crate::test_rng::lcg(0x5eed_0b1e_u64);
        let strings: [&'static [u8]; 8] = [
            b"\"a\"",
            b"\"]}\"",
            b"\"\\\"[\"",
            b"\"\\\\\"",
            b"\"\\\\\\\"}\"",
            b"\"x\\\\\\\\y]\"",
            b"\"0123456789abcdefghijklmnopqrstuvwxyz{[\"",
            b"\"\"",
        ];
        let rounds = if cfg!(miri) { 40 } else { 3000 };
        for _ in 0..rounds {
            let (mut v, start) = container(&mut next, 70, 400, |next, short| match next() % 8 {
                0 | 1 if short => Part::Open,
                2 | 3 => Part::Bytes(strings[next() % strings.len()]),
                4 => Part::Bytes(b"12.5e3, true,\n\t"),
                5 => Part::Bytes(b":,"),
                _ => Part::Close,
            });
            let end = v.len();
            v.extend_from_slice(&b"],\"k\":[\"v\"]}"[..next() % 12]);
            v.extend(std::iter::repeat_n(b'x', next() % 80));
            let ctx = String::from_utf8_lossy(&v).into_owned();
            assert_eq!(walk(&v, start), end, "reference {ctx}");
            assert_eq!(skip_container_scalar(&v, start), end, "scalar {ctx}");
            assert_eq!(
                super::super::skip_container(&v, start),
                end,
                "runtime {ctx}"
            );
            #[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
            {
                assert_eq!(
                    super::super::sse2::skip_container(&v, start),
                    end,
                    "sse2 {ctx}"
                );
                if super::super::avx2::is_available() {
                    // SAFETY: AVX2 was just detected on this CPU.
                    let e = unsafe { super::super::avx2::skip_container(&v, start) };
                    assert_eq!(e, end, "avx2 {ctx}");
                }
                if super::super::avx512::is_available() {
                    // SAFETY: AVX-512 was just detected on this CPU.
                    let e = unsafe { super::super::avx512::skip_container(&v, start) };
                    assert_eq!(e, end, "avx512 {ctx}");
                }
            }
        }
    }

    /// Small generated containers (ending before, at and just after 64 bytes
    /// from the bracket; strings with escaped quotes, backslash runs and
    /// brackets; nesting; the buffer ending right after the container or a few
    /// bytes later, buffers shorter and longer than 64 bytes): the first-block
    /// path ([`skip_blocks_first`], scalar and AVX2) ends each where
    /// [`skip_container_scalar`] and the byte walk do.
    #[test]
    fn first_block_matches_the_walk() {
        let mut next = crate::test_rng::lcg(0x00f1_257b_10c4_u64);
        let strings: [&'static [u8]; 9] = [
            b"\"a\"",
            b"\"]}\"",
            b"\"\\\"[\"",
            b"\"\\\\\"",
            b"\"\\\\\\\"}\"",
            b"\"x\\\\\\\\y]\"",
            b"\"{[\\\"]}\"",
            b"\"\"",
            b"\"\\\\\\\\\\\"\\\\\"",
        ];
        let rounds = if cfg!(miri) { 60 } else { 40000 };
        for _ in 0..rounds {
            let (mut v, start) = container(&mut next, 80, 100, |next, short| match next() % 10 {
                0 if short => Part::Open,
                1..=3 => Part::Bytes(strings[next() % strings.len()]),
                4 => Part::Bytes(&b"1,"[..1 + next() % 2]),
                5 => Part::Bytes(b":"),
                6 if short => Part::Bytes(b"x"),
                _ => Part::Close,
            });
            let end = v.len();
            if !next().is_multiple_of(3) {
                v.extend_from_slice(&b"}]}],\"k\":{\"v\"}"[..next() % 15]);
                v.extend(std::iter::repeat_n(b' ', next() % 70));
            }
            let ctx = String::from_utf8_lossy(&v).into_owned();
            assert_eq!(walk(&v, start), end, "reference {ctx}");
            assert_eq!(skip_container_scalar(&v, start), end, "scalar {ctx}");
            assert_eq!(skip_container_first_scalar(&v, start), end, "first {ctx}");
            #[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
            if super::super::avx2::is_available() {
                // SAFETY: AVX2 was just detected on this CPU.
                let e = unsafe { super::super::avx2::skip_container(&v, start) };
                assert_eq!(e, end, "avx2 {ctx}");
            }
        }
    }

    /// A byte walk counting the values left from `p` (the reference for
    /// [`count_blocks`]): commas at the container's own level, plus one unless
    /// `b[p]` closes it.
    fn count_walk(b: &[u8], mut p: usize) -> usize {
        if matches!(b.get(p), None | Some(b']' | b'}')) {
            return 0;
        }
        let (mut depth, mut n) = (1usize, 1usize);
        while let Some(&c) = b.get(p) {
            match c {
                b'"' => {
                    p += 1;
                    while let Some(&d) = b.get(p) {
                        match d {
                            b'\\' => p += 1,
                            b'"' => break,
                            _ => {}
                        }
                        p += 1;
                    }
                }
                b'[' | b'{' => depth += 1,
                b']' | b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        return n;
                    }
                }
                b',' if depth == 1 => n += 1,
                _ => {}
            }
            p += 1;
        }
        n
    }

    /// Counting the values left in generated arrays and objects (strings with
    /// commas, brackets, quotes and backslash runs across block boundaries, deep
    /// and wide nesting, whitespace), from just inside the container and from
    /// after each of its commas, gives the byte walk's count in every kernel.
    #[test]
    fn count_matches_a_byte_walk() {
        let mut next = crate::test_rng::lcg(0xc0_0a7_u64);
        let strings: [&[u8]; 10] = [
            b"\"a long text, [with] {brackets}, commas and \\\"quotes\\\" and \\\\ runs, more than one block of sixty-four bytes long, with \\n escapes, ],},\",",
            b"\"a\"",
            b"\",]}\"",
            b"\"\\\",[\"",
            b"\"\\\\\"",
            b"\"\\\\\\\",}\"",
            b"\"x\\\\\\\\y],\"",
            b"\"0123456789abcdefghijklmnopqrstuvwxyz{[,,\"",
            b"\"\"",
            b"12.5e3",
        ];
        let rounds = if cfg!(miri) { 4 } else { 2000 };
        for _ in 0..rounds {
            let mut v = vec![b' '; next() % 70];
            let start = v.len();
            fn value(
                next: &mut impl FnMut() -> usize,
                depth: usize,
                strings: &[&[u8]],
                v: &mut Vec<u8>,
            ) {
                if depth > 5 || !next().is_multiple_of(3) {
                    v.extend_from_slice(strings[next() % strings.len()]);
                    return;
                }
                let obj = next().is_multiple_of(2);
                v.push(if obj { b'{' } else { b'[' });
                let n = next() % 7;
                for i in 0..n {
                    if i > 0 {
                        v.push(b',');
                    }
                    if next().is_multiple_of(5) {
                        v.extend_from_slice(b" \n");
                    }
                    if obj {
                        v.extend_from_slice(b"\"k,]\":");
                    }
                    value(next, depth + 1, strings, v);
                }
                v.push(if obj { b'}' } else { b']' });
            }
            v.push(if next().is_multiple_of(2) { b'{' } else { b'[' });
            let n = next() % 12;
            for i in 0..n {
                if i > 0 {
                    v.push(b',');
                }
                if next().is_multiple_of(4) {
                    v.push(b' ');
                }
                value(&mut next, 1, &strings, &mut v);
            }
            if next().is_multiple_of(4) {
                v.push(b'\t');
            }
            v.push(b']');
            v.extend(std::iter::repeat_n(b'x', next() % 80));
            // Every start: just inside, and after each comma at the top level.
            let mut starts = vec![start + 1];
            let (mut q, mut depth, mut in_str) = (start + 1, 1, false);
            while depth > 0 {
                match v[q] {
                    b'\\' if in_str => q += 1,
                    b'"' => in_str = !in_str,
                    b'[' | b'{' if !in_str => depth += 1,
                    b']' | b'}' if !in_str => depth -= 1,
                    b',' if !in_str && depth == 1 => starts.push(q + 1),
                    _ => {}
                }
                q += 1;
            }
            for &p in &starts {
                let p = p + v[p..]
                    .iter()
                    .take_while(|&&c| c == b' ' || c == b'\t' || c == b'\n')
                    .count();
                let want = count_walk(&v, p);
                let ctx = String::from_utf8_lossy(&v).into_owned();
                assert_eq!(count_values_scalar(&v, p), want, "scalar {p} {ctx}");
                // (Under Miri the runtime's kernel is the scalar one just checked.)
                if !cfg!(miri) {
                    assert_eq!(super::super::count_values(&v, p), want, "runtime {p} {ctx}");
                }
                #[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
                {
                    assert_eq!(super::super::sse2::count_values(&v, p), want, "sse2 {ctx}");
                    if super::super::avx2::is_available() {
                        // SAFETY: AVX2 was just detected on this CPU.
                        let c = unsafe { super::super::avx2::count_values(&v, p) };
                        assert_eq!(c, want, "avx2 {ctx}");
                    }
                    if super::super::avx512::is_available() {
                        // SAFETY: AVX-512 was just detected on this CPU.
                        let c = unsafe { super::super::avx512::count_values(&v, p) };
                        assert_eq!(c, want, "avx512 {ctx}");
                    }
                }
            }
        }
    }

    /// Long strings skipped from a backslash inside them end where a byte walk
    /// says, in every kernel (backslash runs and escaped quotes across block
    /// boundaries, strings ending in the padded last block).
    #[test]
    fn skip_text_matches_a_byte_walk() {
        let mut next = crate::test_rng::lcg(0x7e47_5eed_u64);
        let pieces: [&[u8]; 6] = [b"a", b"\\\\", b"\\\"", b"\\n", b"[{x}]", b"\\\\\\\\"];
        let rounds = if cfg!(miri) { 40 } else { 4000 };
        for _ in 0..rounds {
            let mut s = vec![b' '; next() % 70];
            let start = s.len();
            s.extend_from_slice(b"\"\\n");
            let target = next() % 300;
            while s.len() - start < target {
                s.extend_from_slice(pieces[next() % pieces.len()]);
            }
            s.push(b'"');
            let end = s.len();
            s.extend_from_slice(&b"],\"k\":\"v\"}"[..next() % 11]);
            s.extend(std::iter::repeat_n(b'x', next() % 80));
            let p = start + 1; // the first backslash
            let ctx = String::from_utf8_lossy(&s).into_owned();
            assert_eq!(skip_text_scalar(&s, p), end, "scalar {ctx}");
            assert_eq!(super::super::skip_text(&s, p), end, "runtime {ctx}");
            #[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
            {
                assert_eq!(super::super::sse2::skip_text(&s, p), end, "sse2 {ctx}");
                if super::super::avx2::is_available() {
                    // SAFETY: AVX2 was just detected on this CPU.
                    let e = unsafe { super::super::avx2::skip_text(&s, p) };
                    assert_eq!(e, end, "avx2 {ctx}");
                }
                if super::super::avx512::is_available() {
                    // SAFETY: AVX-512 was just detected on this CPU.
                    let e = unsafe { super::super::avx512::skip_text(&s, p) };
                    assert_eq!(e, end, "avx512 {ctx}");
                }
            }
        }
    }

    /// The SIMD128 masks equal the scalar ones for every byte value at every
    /// position.
    #[test]
    #[cfg(all(
        target_arch = "wasm32",
        target_feature = "simd128",
        not(switchboard_disable_simd),
        not(miri)
    ))]
    fn simd128_masks_match_scalar() {
        for c in 0..=255u8 {
            for pos in 0..64 {
                let mut block = [b'a'; 64];
                block[pos] = c;
                block[(pos + 17) % 64] = b'"';
                let want = masks_scalar(&block);
                // SAFETY: the block is 64 bytes long.
                let got = unsafe { super::super::simd128::structural_masks64(&block, 0) };
                assert_eq!(got, want, "simd128 byte {c} at {pos}");
                let qb = (want.quotes, want.backslashes);
                // SAFETY: as above.
                let got = unsafe { super::super::simd128::quote_backslash_masks64(&block, 0) };
                assert_eq!(got, qb, "simd128 quotes and backslashes, byte {c} at {pos}");
            }
        }
    }

    /// The SIMD masks equal the scalar ones for every byte value at every position.
    #[test]
    #[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
    fn masks_match_scalar() {
        for c in 0..=255u8 {
            for pos in 0..64 {
                let mut block = [b'a'; 64];
                block[pos] = c;
                block[(pos + 17) % 64] = b'"';
                let want = masks_scalar(&block);
                // SAFETY: the block is 64 bytes long.
                let sse2 = unsafe { super::super::sse2::structural_masks64(&block, 0) };
                assert_eq!(sse2, want, "sse2 byte {c} at {pos}");
                if super::super::avx2::is_available() {
                    // SAFETY: 64 bytes, and AVX2 was just detected on this CPU.
                    let avx2 = unsafe { super::super::avx2::structural_masks64(&block, 0) };
                    assert_eq!(avx2, want, "avx2 byte {c} at {pos}");
                }
                if super::super::avx512::is_available() {
                    // SAFETY: 64 bytes, and AVX-512 was just detected on this CPU.
                    let got = unsafe { super::super::avx512::structural_masks64(&block, 0) };
                    assert_eq!(got, want, "avx512 byte {c} at {pos}");
                }
            }
        }
    }

    /// `fn $name(v, p)`: every kernel's `$walk(v, p)` (the scalar `$scalar`, the
    /// runtime choice, SSE2, AVX2 and AVX-512 where built and available) as `(name, value)`
    /// pairs.
    macro_rules! every_kernel {
        ($(#[$doc:meta])* $name:ident, $scalar:ident, $walk:ident) => {
            $(#[$doc])*
            fn $name(v: &[u8], p: usize) -> Vec<(&'static str, usize)> {
                let out = vec![("scalar", $scalar(v, p)), ("runtime", super::super::$walk(v, p))];
                #[cfg(all(
                    target_arch = "wasm32",
                    target_feature = "simd128",
                    not(switchboard_disable_simd),
                    not(miri)
                ))]
                let out = {
                    let mut out = out;
                    out.push(("simd128", super::super::simd128::$walk(v, p)));
                    out
                };
                #[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
                let out = {
                    let mut out = out;
                    out.push(("sse2", super::super::sse2::$walk(v, p)));
                    if super::super::avx2::is_available() {
                        // SAFETY: AVX2 was just detected on this CPU.
                        out.push(("avx2", unsafe { super::super::avx2::$walk(v, p) }));
                    }
                    if super::super::avx512::is_available() {
                        // SAFETY: AVX-512 was just detected on this CPU.
                        out.push(("avx512", unsafe { super::super::avx512::$walk(v, p) }));
                    }
                    out
                };
                out
            }
        };
    }

    every_kernel!(
        /// Every kernel's end of the container at `p`.
        all_skips,
        skip_container_scalar,
        skip_container
    );
    every_kernel!(
        /// Every kernel's count of the values from `p`.
        all_counts,
        count_values_scalar,
        count_values
    );
    every_kernel!(
        /// Every kernel's end of the string whose backslash is at `p`.
        all_skip_texts,
        skip_text_scalar,
        skip_text
    );

    /// A string of text spanning several blocks with a run of backslashes of
    /// every length up to 70, at every offset from the block grid, followed by an
    /// escaped quote, an escaped letter, the closing quote or a plain letter, then
    /// nested values: every kernel skips, counts and skips the string as
    /// serde_json and the byte walks say (the plain-block test, the escape carry
    /// across blocks, the overlapping last block).
    #[test]
    fn runs_and_quotes_at_every_offset() {
        let (runs, leads): (&[usize], usize) = if cfg!(miri) {
            (&[0, 1, 2, 3], 70)
        } else {
            (&(0..=70).collect::<Vec<_>>(), 150)
        };
        let step = if cfg!(miri) { 37 } else { 1 };
        for (&run, pre) in runs.iter().flat_map(|r| [(r, 0), (r, 140)]) {
            for lead in (0..leads).step_by(step) {
                for kind in 0..3 {
                    let mut v = b"[1,\"".to_vec();
                    // With `pre`, a long string: plain blocks before the run.
                    v.extend(std::iter::repeat_n(b'w', pre));
                    v.extend(std::iter::repeat_n(b'x', lead));
                    let first_backslash = v.len();
                    v.extend(std::iter::repeat_n(b'\\', run));
                    match (run % 2, kind) {
                        (1, 0) => v.push(b'"'), // escaped: the string goes on
                        (1, _) => v.push(b'n'),
                        (_, 0) => {} // the closing quote comes next
                        _ => v.push(b'a'),
                    }
                    if run % 2 == 1 || kind != 0 {
                        v.extend(std::iter::repeat_n(b'y', (lead * 7 + run) % 90));
                        if kind == 2 {
                            v.extend_from_slice(b"\\\"z,]\\\\");
                        }
                    }
                    let string_end = v.len() + 1;
                    v.extend_from_slice(b"\",2,{\"k\":[3,\"]\\\"\"]},\"\\\\\"]");
                    let end = v.len();
                    v.extend(std::iter::repeat_n(b'x', (lead + run) % 70));
                    let ctx = String::from_utf8_lossy(&v).into_owned();
                    let parsed: serde_json::Value =
                        serde_json::from_slice(&v[..end]).expect("valid JSON");
                    let n = parsed.as_array().expect("an array").len();
                    assert_eq!(count_walk(&v, 1), n, "reference {ctx}");
                    for (kernel, got) in all_counts(&v, 1) {
                        assert_eq!(got, n, "{kernel} count {ctx}");
                    }
                    // From inside the string's array after it: `2,{...},"\\"]`.
                    let after = string_end + 1;
                    for (kernel, got) in all_counts(&v, after) {
                        assert_eq!(got, n - 2, "{kernel} count after {ctx}");
                    }
                    for (kernel, got) in all_skips(&v, 0) {
                        assert_eq!(got, end, "{kernel} skip {ctx}");
                    }
                    if run > 0 {
                        for (kernel, got) in all_skip_texts(&v, first_backslash) {
                            assert_eq!(got, string_end, "{kernel} skip_text {ctx}");
                        }
                    }
                }
            }
        }
    }

    /// On arbitrary bytes (not JSON: the walks' precondition broken) every
    /// kernel still stops, inside the buffer, with the scalar kernel's answer.
    #[test]
    fn garbage_ends_inside_the_buffer() {
        let mut next = crate::test_rng::lcg(0x6a7b_a6e5_u64);
        let alphabet = b"\"\\[]{},a \\\\";
        let rounds = if cfg!(miri) { 30 } else { 20000 };
        for _ in 0..rounds {
            let len = 1 + next() % 300;
            let mut v: Vec<u8> = (0..len)
                .map(|_| alphabet[next() % alphabet.len()])
                .collect();
            let p = next() % len;
            let ctx = String::from_utf8_lossy(&v).into_owned();
            v[p] = b'[';
            let want = skip_container_scalar(&v, p);
            assert!(want <= v.len(), "{ctx}");
            assert_eq!(skip_container_first_scalar(&v, p), want, "first {p} {ctx}");
            for (kernel, got) in all_skips(&v, p) {
                assert_eq!(got, want, "{kernel} skip {p} {ctx}");
            }
            let want = count_values_scalar(&v, p);
            for (kernel, got) in all_counts(&v, p) {
                assert_eq!(got, want, "{kernel} count {p} {ctx}");
            }
            v[p] = b'\\';
            let want = skip_text_scalar(&v, p);
            assert!(want <= v.len(), "{ctx}");
            for (kernel, got) in all_skip_texts(&v, p) {
                assert_eq!(got, want, "{kernel} skip_text {p} {ctx}");
            }
        }
    }

    /// The plain-block test of each kernel equals the scalar one for every byte
    /// value at every position of a block (a quote anywhere, a backslash last).
    #[test]
    #[cfg(all(
        any(
            target_arch = "x86_64",
            all(target_arch = "wasm32", target_feature = "simd128")
        ),
        not(switchboard_disable_simd),
        not(miri)
    ))]
    fn plain_matches_scalar() {
        for c in 0..=255u8 {
            for pos in 0..64 {
                for from in [0, 5] {
                    let mut buf = [b'a'; 69];
                    buf[from + pos] = c;
                    let want = plain_scalar(&buf, from);
                    assert_eq!(want, c != b'"' && (c != b'\\' || pos != 63));
                    #[cfg(all(
                        target_arch = "wasm32",
                        target_feature = "simd128",
                        not(switchboard_disable_simd),
                        not(miri)
                    ))]
                    {
                        // SAFETY: `from + 64 <= 69`.
                        let got = unsafe { super::super::simd128::plain64(&buf, from) };
                        assert_eq!(got, want, "simd128 byte {c} at {pos}");
                    }
                    #[cfg(target_arch = "x86_64")]
                    {
                        // SAFETY: `from + 64 <= 69`.
                        let sse2 = unsafe { super::super::sse2::plain64(&buf, from) };
                        assert_eq!(sse2, want, "sse2 byte {c} at {pos}");
                        if super::super::avx2::is_available() {
                            // SAFETY: `from + 64 <= 69`, and AVX2 was just detected.
                            let avx2 = unsafe { super::super::avx2::plain64(&buf, from) };
                            assert_eq!(avx2, want, "avx2 byte {c} at {pos}");
                        }
                        if super::super::avx512::is_available() {
                            // SAFETY: `from + 64 <= 69`, and AVX-512 was just detected.
                            let got = unsafe { super::super::avx512::plain64(&buf, from) };
                            assert_eq!(got, want, "avx512 byte {c} at {pos}");
                        }
                    }
                }
            }
        }
    }

    /// [`Kernel::plain`] and [`Kernel::plain128`] of every kernel equal the
    /// scalar test, and what a run of backslashes before the byte says: every
    /// byte value at every position of the block, after runs of 0 to 4
    /// backslashes (reaching back before the block), with a second quote
    /// escaped or not elsewhere.
    #[test]
    fn plain_escaped_matches_scalar() {
        let (values, step): (Vec<u8>, usize) = if cfg!(miri) {
            (b"\"\\\\a".to_vec(), 13)
        } else {
            ((0..=255).collect(), 1)
        };
        for n in [64usize, 128] {
            for from in [2usize, 5] {
                for pos in (0..n).step_by(step) {
                    for run in 0..5 {
                        for &c in &values {
                            if run > 0 && !matches!(c, b'"' | b'\\' | b'a') {
                                continue;
                            }
                            let Some(first) = (from + pos).checked_sub(run) else {
                                continue;
                            };
                            for other in [None, Some(1), Some(2)] {
                                let mut buf = vec![b'a'; from + n + 3];
                                buf[first..from + pos].fill(b'\\');
                                buf[from + pos] = c;
                                // Another quote 37 bytes on, after `other` backslashes.
                                let q = from + (pos + 37) % n;
                                if let Some(k) = other {
                                    if q.abs_diff(from + pos) <= 8 || q < from + 2 {
                                        continue;
                                    }
                                    buf[q - k..q].fill(b'\\');
                                    buf[q] = b'"';
                                }
                                let want = plain_escaped_scalar(&buf, from, n);
                                let bad_byte = c == b'"' || (c == b'\\' && pos == n - 1);
                                let want_here = !bad_byte || run == 1;
                                assert_eq!(
                                    want,
                                    want_here && other != Some(2),
                                    "{n} {c} {pos} {run}"
                                );
                                let ctx =
                                    || format!("{n} byte {c} at {pos} after {run}, {other:?}");
                                #[cfg(all(
                                    target_arch = "wasm32",
                                    target_feature = "simd128",
                                    not(switchboard_disable_simd),
                                    not(miri)
                                ))]
                                {
                                    // SAFETY: `2 <= from` and `from + n <= buf.len()`.
                                    let got = unsafe {
                                        if n == 64 {
                                            super::super::simd128::plain_escaped::<4>(&buf, from)
                                        } else {
                                            super::super::simd128::plain_escaped::<8>(&buf, from)
                                        }
                                    };
                                    assert_eq!(got, want, "simd128 {}", ctx());
                                }
                                #[cfg(all(
                                    target_arch = "x86_64",
                                    not(switchboard_disable_simd),
                                    not(miri)
                                ))]
                                {
                                    // SAFETY: `2 <= from` and `from + n <= buf.len()`.
                                    let sse2 = unsafe {
                                        if n == 64 {
                                            super::super::sse2::plain_escaped::<4>(&buf, from)
                                        } else {
                                            super::super::sse2::plain_escaped::<8>(&buf, from)
                                        }
                                    };
                                    assert_eq!(sse2, want, "sse2 {}", ctx());
                                    if super::super::avx2::is_available() {
                                        // SAFETY: `2 <= from`, `from + n <= buf.len()`, and
                                        // AVX2 was just detected.
                                        let avx2 = unsafe {
                                            if n == 64 {
                                                super::super::avx2::plain_escaped64(&buf, from)
                                            } else {
                                                super::super::avx2::plain_escaped128(&buf, from)
                                            }
                                        };
                                        assert_eq!(avx2, want, "avx2 {}", ctx());
                                    }
                                    if super::super::avx512::is_available() {
                                        // SAFETY: `2 <= from`, `from + n <= buf.len()`, and
                                        // AVX-512 was just detected.
                                        let got = unsafe {
                                            if n == 64 {
                                                super::super::avx512::plain_escaped64(&buf, from)
                                            } else {
                                                super::super::avx512::plain_escaped128(&buf, from)
                                            }
                                        };
                                        assert_eq!(got, want, "avx512 {}", ctx());
                                    }
                                }
                                let _ = ctx;
                            }
                        }
                    }
                }
            }
        }
    }

    /// Long strings (64 to 300 bytes, text with `\n` escapes and `\\` pairs)
    /// holding runs of 1 to 5 backslashes before a quote that lands on a block
    /// edge (offsets 0, 1, 2, 62 and 63 of the walk's blocks): an odd run escapes
    /// it, an even one closes the string. Every kernel counts and skips as the
    /// byte walks say, on the whole array and on every truncation of it.
    #[test]
    fn escaped_quotes_at_block_edges() {
        let mut next = crate::test_rng::lcg(0xed9e_5eed_u64);
        let offsets = [0usize, 1, 2, 62, 63];
        let blocks = if cfg!(miri) { 1..3 } else { 1..5 };
        let trunc_step = if cfg!(miri) { 29 } else { 1 };
        let mut cases = 0;
        for block in blocks {
            for &offset in &offsets {
                for run in 1..=5usize {
                    if cfg!(miri) && (run + offset + block) % 3 != 0 {
                        continue;
                    }
                    // The walks start at 1 (just inside the `[` at 0).
                    let quote = 1 + 64 * block + offset;
                    let mut v = b"[1,\"".to_vec();
                    if quote < v.len() + run + 1 {
                        continue;
                    }
                    // Text up to the run, ending in a letter.
                    while v.len() < quote - run - 1 {
                        let piece: &[u8] = match next() % 9 {
                            0 => b"\\n",
                            1 => b"\\\\",
                            2 => b"\\\"",
                            _ => b"t",
                        };
                        if v.len() + piece.len() < quote - run {
                            v.extend_from_slice(piece);
                        } else {
                            v.push(b'x');
                        }
                    }
                    v.push(b'y');
                    v.extend(std::iter::repeat_n(b'\\', run));
                    v.push(b'"');
                    assert_eq!(v.len(), quote + 1);
                    if run % 2 == 1 {
                        // Escaped: the string goes on, 64 to 300 bytes in all.
                        let target = 64 + next() % 237;
                        while v.len() < 4 + target {
                            let piece: &[u8] = match next() % 7 {
                                0 => b"\\n\\t",
                                1 => b"\\\"",
                                2 => b"\\\\\\\"",
                                _ => b"text",
                            };
                            v.extend_from_slice(piece);
                        }
                        v.push(b'"');
                    }
                    v.extend_from_slice(b",{\"k\":[2,\"\\\\\"]},3]");
                    let end = v.len();
                    v.extend(std::iter::repeat_n(b' ', next() % 70));
                    let ctx = String::from_utf8_lossy(&v).into_owned();
                    serde_json::from_slice::<serde_json::Value>(&v).expect("valid JSON");
                    assert_eq!(walk(&v, 0), end, "reference {ctx}");
                    cases += 1;
                    for cut in (1..=v.len()).rev().step_by(trunc_step) {
                        let t = &v[..cut];
                        let (skip, count) = (walk(t, 0), count_walk(t, 1));
                        for (kernel, got) in all_skips(t, 0) {
                            assert_eq!(got, skip, "{kernel} skip {cut} {ctx}");
                        }
                        for (kernel, got) in all_counts(t, 1) {
                            assert_eq!(got, count, "{kernel} count {cut} {ctx}");
                        }
                    }
                }
            }
        }
        assert!(cases >= if cfg!(miri) { 10 } else { 100 }, "{cases}");
    }

    /// The carry-less prefix XOR equals the shift-and-xor one.
    #[test]
    #[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
    fn prefix_xor_clmul_matches() {
        if !super::super::avx2::is_available() {
            return;
        }
        let mut next = crate::test_rng::lcg(0xc1_u64);
        let mut xs: Vec<u64> = (0..64).map(|i| 1u64 << i).collect();
        xs.extend([0, u64::MAX, 0x8000_0000_0000_0001, 0x5555_5555_5555_5555]);
        xs.extend((0..10000).map(|_| ((next() as u64) << 33) ^ ((next() as u64) << 2)));
        for x in xs {
            // SAFETY: PCLMULQDQ is part of `is_available`, just checked.
            let got = unsafe { super::super::avx2::prefix_xor_clmul(x) };
            assert_eq!(got, prefix_xor(x), "{x:#x}");
        }
    }

    /// [`super::escaped_bytes`] marks exactly the bytes after an odd run of
    /// backslashes (the carry counting as one more before bit 0), and carries
    /// out whether the block ends in such a run, on random and run-heavy
    /// backslash masks, with both carries.
    #[test]
    fn escaped_bytes_by_definition() {
        let mut next = crate::test_rng::lcg(0xe5c_u64);
        let rounds = if cfg!(miri) { 200 } else { 200_000 };
        for round in 0..rounds {
            let r = (next() as u64) << 33 ^ (next() as u64) << 2 ^ next() as u64;
            let backslashes = match round % 3 {
                0 => r,
                1 => r | r << 1 | r << 2,
                _ => !r & (r >> 1 | 1 << 63),
            };
            for carry in [0, 1] {
                // The byte walk: `run` is the backslash run before bit i.
                let (mut want, mut run) = (0u64, carry);
                for i in 0..64 {
                    if run % 2 == 1 {
                        want |= 1 << i;
                        run = 0; // an escaped byte, even a backslash, ends the run
                    } else if backslashes >> i & 1 == 1 {
                        run += 1;
                    } else {
                        run = 0;
                    }
                }
                let mut c = carry;
                let got = super::escaped_bytes(backslashes, &mut c);
                assert_eq!(
                    (got, c),
                    (want, run % 2),
                    "{backslashes:#066b} carry {carry}"
                );
            }
        }
    }

    #[test]
    fn escaped_bytes_and_prefix_xor() {
        let mut carry = 0;
        // `\\\"` at 0..4: bytes 1 and 3 are escaped.
        assert_eq!(escaped_bytes(0b0111, &mut carry), 0b1010);
        assert_eq!(carry, 0);
        // A run reaching bit 63 escapes the next block's first byte.
        assert_eq!(escaped_bytes(1 << 63, &mut carry), 0);
        assert_eq!(carry, 1);
        assert_eq!(escaped_bytes(0, &mut carry), 1);
        assert_eq!(prefix_xor(0b1001), 0b0111);
        assert_eq!(prefix_xor(1), u64::MAX);
    }
}
