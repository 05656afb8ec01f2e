//! Stage one of the structural walk ([`super::walk`]): the input 64 bytes at a
//! time, as the bitmask of the bytes where its tokens start (simdjson's
//! structural index), with every check of string bodies done on the masks.
//!
//! Per block, a kernel ([`Kernel`]) gives the byte classes ([`Classes`]):
//! whitespace, the six structural characters, quotes, backslashes, control
//! bytes and bytes >= 0x80. From them, without a branch per byte:
//!
//! - the escaped bytes (the byte after an odd run of backslashes,
//!   [`escaped_bytes`]), so the quotes that delimit strings;
//! - the string interiors, a prefix XOR of those quotes carried from block to
//!   block;
//! - the token starts: the structural characters outside strings, and every
//!   other byte outside strings that follows a structural character or
//!   whitespace (an opening quote, a number's or a literal's first byte);
//! - the errors of string bodies: a control byte inside a string, a byte other
//!   than whitespace or a structural character right after a closing quote
//!   (`"a"x`), an escape letter that is not one (each escaped byte is looked
//!   at, `\u` with its four hex digits), and invalid UTF-8 (a vector check of
//!   every block that holds a byte >= 0x80, and of the block after it).
//!
//! Everything else (what a number or literal holds, what follows what) is the
//! walk's to check, at the token starts. A block with an error yields its token
//! starts before the error only, and no block after it: the walk runs out of
//! tokens there and hands over to the scanner's general loop, which gives the
//! verdict. So the blocks never accept what the general loop refuses; on valid
//! input they never stop early (the differential tests check both).
//!
//! A string that covers a whole block (text, a base64 blob, source code) is
//! finished by the scanner's string loop instead ([`super::scan::string_rest`],
//! the window loop's string walk), and the blocks start again after it.

use super::ops::tick;
use super::scan;
use crate::simd::skip::escaped_bytes;
use crate::unescape;

/// The byte classes of one 64-byte block: bit i is byte i.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Classes {
    /// `' '`, `\t`, `\n`, `\r`.
    pub ws: u64,
    /// `,` `:` `[` `]` `{` `}`.
    pub op: u64,
    /// `"`.
    pub quote: u64,
    /// `\\`.
    pub backslash: u64,
    /// Bytes below 0x20.
    pub ctrl: u64,
    /// Bytes >= 0x80.
    pub high: u64,
}

/// What a SIMD instruction set (or the portable code) supplies to the blocks.
pub(crate) trait Kernel {
    /// The classes of a block.
    fn classes(&self, block: &[u8; 64]) -> Classes;
    /// Bit i of the result is the XOR of bits `0..=i` of `x`.
    fn prefix_xor(&self, x: u64) -> u64;
    /// The digit mask of 32 bytes (bit i: byte i is an ASCII digit).
    fn digits32(&self, window: &[u8; 32]) -> u32;
    /// The classes of a block for [`super::arrays`].
    fn number_array(&self, block: &[u8; 64]) -> super::arrays::NumberArray;
    /// [`super::arrays::number_array`] on this kernel, out of line.
    fn number_array_end(&self, b: &[u8], p: usize, depth_room: usize) -> Result<usize, usize>;
    /// Checks `block` as UTF-8 that continues the blocks checked before it
    /// since the last [`Kernel::utf8_end`] (blocks without a byte >= 0x80 in
    /// between need not be passed, but the first one after such a block does);
    /// `false` when this kernel cannot check UTF-8 (the walk then stops).
    fn utf8(&mut self, block: &[u8; 64]) -> bool;
    /// Whether everything checked since the last call was valid UTF-8, `rest`
    /// (at most three bytes, which may complete a character the last block cut)
    /// following it; the check starts afresh after it.
    fn utf8_end(&mut self, rest: &[u8]) -> bool;
}

/// The portable kernel: a byte at a time, and no UTF-8 check (a block with a
/// byte >= 0x80 ends the walk). The reference of the SIMD kernels, and what
/// Miri runs.
#[derive(Default)]
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) struct Portable;

impl Kernel for Portable {
    #[inline(always)]
    fn classes(&self, block: &[u8; 64]) -> Classes {
        crate::simd::scalar::classes64(block)
    }

    #[inline(always)]
    fn prefix_xor(&self, x: u64) -> u64 {
        crate::simd::skip::prefix_xor(x)
    }

    #[inline(always)]
    fn digits32(&self, window: &[u8; 32]) -> u32 {
        crate::simd::scalar::digits32(window, 0)
    }

    #[inline(always)]
    fn number_array(&self, block: &[u8; 64]) -> super::arrays::NumberArray {
        crate::simd::scalar::number_array64(block)
    }

    #[inline(never)]
    fn number_array_end(&self, b: &[u8], p: usize, depth_room: usize) -> Result<usize, usize> {
        super::arrays::number_array(b, p, depth_room, self)
    }

    #[inline(always)]
    fn utf8(&mut self, _block: &[u8; 64]) -> bool {
        false
    }

    #[inline(always)]
    fn utf8_end(&mut self, _rest: &[u8]) -> bool {
        true
    }
}

/// The AVX2 kernel: [`crate::simd::avx2::classes64`], a carry-less multiply
/// for the prefix XOR, and simdutf8's AVX2 UTF-8 check.
#[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
pub(crate) struct Avx2 {
    utf8: simdutf8::basic::imp::x86::avx2::ChunkedUtf8ValidatorImp,
}

#[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
impl Avx2 {
    /// The kernel.
    ///
    /// # Safety
    /// - The CPU must support AVX2 and PCLMULQDQ ([`crate::simd::has_avx2`]
    ///   returned `true`): every method relies on it.
    #[inline(always)]
    pub(crate) unsafe fn new() -> Self {
        use simdutf8::basic::imp::ChunkedUtf8Validator;
        Avx2 {
            // SAFETY: AVX2, the caller's guarantee.
            utf8: unsafe { ChunkedUtf8Validator::new() },
        }
    }
}

#[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
impl Kernel for Avx2 {
    #[inline(always)]
    fn classes(&self, block: &[u8; 64]) -> Classes {
        // SAFETY: an `Avx2` exists only on a CPU with AVX2 (`Avx2::new`).
        unsafe { crate::simd::avx2::classes64(block) }
    }

    #[inline(always)]
    fn prefix_xor(&self, x: u64) -> u64 {
        // SAFETY: as above (PCLMULQDQ is part of `has_avx2`).
        unsafe { crate::simd::avx2::prefix_xor_clmul(x) }
    }

    #[inline(always)]
    fn digits32(&self, window: &[u8; 32]) -> u32 {
        // SAFETY: `0 + 32 <= window.len()`; AVX2 as above.
        unsafe { crate::simd::avx2::digits32(window, 0) }
    }

    #[inline(always)]
    fn number_array(&self, block: &[u8; 64]) -> super::arrays::NumberArray {
        // SAFETY: as above.
        unsafe { crate::simd::avx2::number_array64(block) }
    }

    #[inline(always)]
    fn number_array_end(&self, b: &[u8], p: usize, depth_room: usize) -> Result<usize, usize> {
        // SAFETY: as above (an `Avx2` exists only where `has_avx2` is true,
        // which covers BMI1, BMI2, POPCNT and PCLMULQDQ).
        unsafe { super::arrays::number_array_avx2(b, p, depth_room, self) }
    }

    #[inline(always)]
    fn utf8(&mut self, block: &[u8; 64]) -> bool {
        use simdutf8::basic::imp::ChunkedUtf8Validator;
        // SAFETY: as above; the block is 64 bytes, a multiple of 64.
        unsafe { self.utf8.update_from_chunks(block) };
        true
    }

    #[inline(always)]
    fn utf8_end(&mut self, rest: &[u8]) -> bool {
        use simdutf8::basic::imp::ChunkedUtf8Validator;
        // SAFETY: as above.
        let fresh = unsafe { ChunkedUtf8Validator::new() };
        let done = core::mem::replace(&mut self.utf8, fresh);
        // SAFETY: as above.
        unsafe { done.finalize(Some(rest)) }.is_ok()
    }
}

/// How many blocks [`walk_pays`] samples.
const SAMPLE_BLOCKS: usize = 4;

/// Whether the structural walk pays on the value at `b[at]` (at least
/// `SAMPLE_BLOCKS * 64` bytes from it), judged on its first blocks: when a
/// quarter of their bytes or more are whitespace outside strings, numbers and
/// literals, or bytes >= 0x80, which the window loop takes a byte or a
/// character at a time and the walk on its masks. Strings of ASCII (hex, text,
/// base64) and short keys are the window loop's (one mask for many).
#[cfg_attr(
    not(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri))),
    allow(dead_code) // the walk runs on the AVX2 kernel only
)]
#[inline(always)]
pub(crate) fn walk_pays<K: Kernel>(b: &[u8], at: usize, kernel: K) -> bool {
    let mut in_string = 0u64;
    let mut slow = 0;
    for k in 0..SAMPLE_BLOCKS {
        let Some(block) = b.get(at + 64 * k..).and_then(<[u8]>::first_chunk::<64>) else {
            return false;
        };
        let c = kernel.classes(block);
        // Escapes are rare at the start of such values; the quotes are taken
        // as they are (a sample, not a verdict).
        let inside = kernel.prefix_xor(c.quote) ^ in_string;
        in_string = ((inside as i64) >> 63) as u64;
        let outside = !(inside | c.quote);
        slow += ((!c.op & outside) | (c.high & inside)).count_ones();
    }
    slow as usize * 4 >= SAMPLE_BLOCKS * 64
}

/// The token starts of the input, in order: those of one block at a time,
/// taken from [`Blocks`] ([`Tokens::next`]). Kept apart from the blocks'
/// state so that it stays in registers (the blocks' state does not: its cold
/// paths take it by reference).
pub(crate) struct Tokens<'a> {
    b: &'a [u8],
    /// Where the block of `bits` starts.
    base: usize,
    /// The token starts of the current block not yet taken.
    bits: u64,
}

impl<'a> Tokens<'a> {
    /// None yet: the first [`Tokens::next`] classifies the first block.
    #[inline(always)]
    pub(crate) fn new(b: &'a [u8]) -> Self {
        Tokens {
            b,
            base: 0,
            bits: 0,
        }
    }

    /// Whether the current block's token starts are all taken.
    #[inline(always)]
    pub(crate) fn is_empty(&self) -> bool {
        self.bits == 0
    }

    /// Drops the current block's token starts not taken (the blocks start
    /// again elsewhere, [`Blocks::restart`]).
    #[inline(always)]
    pub(crate) fn clear(&mut self) {
        self.bits = 0;
    }

    /// Classifies blocks until one has a token start not taken; `None` at
    /// the end of the input or at an error.
    #[inline(always)]
    pub(crate) fn fill<K: Kernel, const NOTE: bool>(
        &mut self,
        s: &mut Blocks<'a, K, NOTE>,
    ) -> Option<()> {
        while self.bits == 0 {
            (self.base, self.bits) = s.refill()?;
        }
        Some(())
    }

    /// The next token start and its byte, or `None` at the end of the input
    /// or at an error.
    #[inline(always)]
    pub(crate) fn next<K: Kernel, const NOTE: bool>(
        &mut self,
        s: &mut Blocks<'a, K, NOTE>,
    ) -> Option<(usize, u8)> {
        self.fill(s)?;
        tick(1);
        let at = self.base + self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        debug_assert!(at < self.b.len());
        debug_assert!(core::ptr::eq(self.b, s.b));
        // SAFETY: `bits` marks only bytes of the input (`s.b`, which is `b`:
        // both are the walk's input), below `b.len()` ([`Blocks::refill`]: a
        // last block shorter than 64 bytes is padded with spaces, which start
        // no token; the assertion above checks it in the tests and fuzzing).
        Some((at, unsafe { *self.b.get_unchecked(at) }))
    }
}

/// The blocks of the input from a position outside any string, classified
/// one at a time ([`Blocks::refill`]), with what carries from one to the next.
///
/// With `NOTE`, they keep where each string that crosses a block end starts
/// and ends, for the record of long values ([`Blocks::finished`]); without,
/// nothing reads it and they do not.
pub(crate) struct Blocks<'a, K, const NOTE: bool> {
    b: &'a [u8],
    /// Where the current block starts.
    base: usize,
    /// Where the next block starts; [`FAILED`] after a block with an error
    /// (no blocks after it).
    next: usize,
    /// The opening quote of the string the blocks before the current one end
    /// in (the last token start before it), when they do (kept with `NOTE`
    /// only).
    last: usize,
    /// All ones when the previous block ended inside a string.
    in_string: u64,
    /// 1 when the previous block's last byte escapes the next block's first.
    escape: u64,
    /// 1 when the previous block's last byte was neither whitespace nor a
    /// structural character.
    scalar: u64,
    /// 1 when the previous block's last byte closed a string.
    close: u64,
    /// Whether the previous block held a byte >= 0x80.
    high: bool,
    /// The last string that ended in a later block than it started
    /// ([`Blocks::finished`]; kept with `NOTE` only).
    finished: (usize, usize),
    kernel: K,
}

/// [`Blocks`]' next block after an error: past any input, so no block is
/// read again (one test per block for both ends).
const FAILED: usize = usize::MAX;

/// The bytes that may follow a number or a literal: whitespace, the structural
/// characters.
pub(crate) static DELIMITER: [bool; 256] = {
    let mut t = [false; 256];
    let set = *b" \t\n\r,:[]{}";
    let mut i = 0;
    while i < set.len() {
        t[set[i] as usize] = true;
        i += 1;
    }
    t
};

impl<'a, K: Kernel, const NOTE: bool> Blocks<'a, K, NOTE> {
    /// The blocks of `b` from `at`, which must be outside any string and not
    /// right after a backslash (a token start, or just after a token).
    #[inline(always)]
    pub(crate) fn new(b: &'a [u8], at: usize, kernel: K) -> Self {
        Blocks {
            b,
            base: at,
            next: at,
            last: at,
            in_string: 0,
            escape: 0,
            scalar: 0,
            close: 0,
            high: false,
            finished: (usize::MAX, 0),
            kernel,
        }
    }

    /// The kernel (for its digit masks).
    #[inline(always)]
    pub(crate) fn kernel(&self) -> &K {
        &self.kernel
    }

    /// Whether the blocks may start again further on ([`Blocks::restart`]):
    /// the current block had no byte >= 0x80, so the UTF-8 check has nothing
    /// pending.
    #[inline(always)]
    pub(crate) fn may_restart(&self) -> bool {
        !self.high
    }

    /// The blocks from `at`, a position after the last token taken, outside
    /// any string and right after a structural character, as
    /// [`Blocks::new`] (the UTF-8 check goes on; [`Blocks::may_restart`]).
    #[inline(always)]
    pub(crate) fn restart(&mut self, at: usize) {
        debug_assert!(self.may_restart());
        if self.next == FAILED {
            // A block held an error after the tokens taken: it stays the end.
            return;
        }
        self.base = at;
        self.next = at;
        self.last = at;
        self.in_string = 0;
        self.escape = 0;
        self.scalar = 0;
        self.close = 0;
    }

    /// Whether everything the blocks read was valid UTF-8; call once, at the end.
    #[inline(always)]
    pub(crate) fn utf8_valid(&mut self) -> bool {
        self.kernel.utf8_end(&[])
    }

    /// The last string that ended in a later block than it started (all long
    /// strings), `(start, end)`: its opening quote, one past its closing one
    /// (`usize::MAX` for none).
    #[inline(always)]
    pub(crate) fn finished(&self) -> (usize, usize) {
        self.finished
    }

    /// Classifies the next block: where it starts and its token starts (none
    /// for a block a long string took); `None` when there is none (or it
    /// cannot be taken).
    #[inline(always)]
    fn refill(&mut self) -> Option<(usize, u64)> {
        let b = self.b;
        let at = self.next;
        if at >= b.len() {
            // The end, or an error ([`FAILED`]).
            return None;
        }
        tick(1);
        let tail;
        let block = match b.get(at..).and_then(<[u8]>::first_chunk::<64>) {
            Some(block) => block,
            None => {
                // The last block, padded with spaces: whitespace, which starts
                // no token and holds no error, so every token start and error
                // below is a byte of the input.
                let rest = &b[at..];
                let mut last = [b' '; 64];
                last[..rest.len()].copy_from_slice(rest);
                tail = last;
                &tail
            }
        };
        let c = self.kernel.classes(block);
        // An ASCII block inside a string from its first byte to its last: the
        // string loop finishes that string (text, base64, hex; strings of
        // other scripts stay here, with their vector UTF-8 check).
        if self.in_string != 0 && (c.quote | c.backslash | c.high | self.escape) == 0 {
            return self.finish_string();
        }
        self.base = at;
        self.next = at + 64;
        let scalar = !(c.op | c.ws);
        let follows_scalar = (scalar << 1) | self.scalar;
        self.scalar = scalar >> 63;
        if c.high != 0 || self.high {
            self.high = c.high != 0;
            if !self.kernel.utf8(block) {
                return self.fail();
            }
        }
        if (c.quote | c.backslash | self.escape | self.in_string) == 0 {
            // No string in this block (numbers, literals, brackets): no
            // escapes, interiors or control bytes to look at.
            let after_close = self.close;
            self.close = 0;
            let starts = c.op | (scalar & !follows_scalar);
            let errors = after_close & scalar;
            if errors != 0 {
                self.next = FAILED;
                return Some((at, starts & ((1u64 << errors.trailing_zeros()) - 1)));
            }
            return Some((at, starts));
        }
        let escaped = if (c.backslash | self.escape) == 0 {
            0
        } else {
            escaped_bytes(c.backslash, &mut self.escape)
        };
        let quote = c.quote & !escaped;
        if NOTE && self.in_string != 0 && quote != 0 {
            // The string from the blocks before closes here: its start is their
            // last token start.
            self.finished = (self.last, at + quote.trailing_zeros() as usize + 1);
        }
        let in_string = self.kernel.prefix_xor(quote) ^ self.in_string;
        self.in_string = ((in_string as i64) >> 63) as u64;
        // String interiors and closing quotes.
        let tail_bits = in_string ^ quote;
        let close = quote & !in_string;
        let after_close = (close << 1) | self.close;
        self.close = close >> 63;
        let mut errors = (c.ctrl & in_string) | (after_close & scalar);
        let escaped = escaped & in_string;
        if escaped != 0 {
            errors |= self.bad_escapes(escaped);
        }
        let starts = (c.op | (scalar & !follows_scalar)) & !tail_bits;
        if NOTE && self.in_string != 0 && starts != 0 {
            // The string the block ends in starts at its last token start.
            self.last = at + 63 - starts.leading_zeros() as usize;
        }
        if errors != 0 {
            self.next = FAILED;
            return Some((at, starts & ((1u64 << errors.trailing_zeros()) - 1)));
        }
        Some((at, starts))
    }

    /// The escaped bytes of the current block that do not continue a valid
    /// escape (`\u` needs four hex digits after it). Out of line, but not
    /// cold: text with quotes and line breaks has escapes in many blocks.
    #[inline(never)]
    fn bad_escapes(&self, mut escaped: u64) -> u64 {
        let mut bad = 0;
        while escaped != 0 {
            let i = escaped.trailing_zeros() as usize;
            escaped &= escaped - 1;
            // The escaped byte; its backslash is the byte before, at or
            // after the walk's start.
            let at = self.base + i;
            let valid = match self.b.get(at) {
                Some(&c) if unescape::is_short_escape(c) => true,
                Some(b'u') => unescape::check_escape(self.b, at - 1).is_some(),
                _ => false,
            };
            bad |= u64::from(!valid) << i;
        }
        bad
    }

    /// Ends the blocks: no token starts from the block being classified on.
    #[cold]
    fn fail(&mut self) -> Option<(usize, u64)> {
        self.next = FAILED;
        None
    }

    /// The block from `next` is all string: the string loop finishes the
    /// string (opened at the last token start) and the blocks start again
    /// after it.
    #[cold]
    #[inline(never)]
    fn finish_string(&mut self) -> Option<(usize, u64)> {
        let b = self.b;
        let start = self.last;
        if NOTE && b.get(start) != Some(&b'"') {
            return self.fail();
        }
        // The UTF-8 check so far ends at the end of the last block, with the
        // continuation bytes of a character it cut.
        let rest = &b[self.next..];
        let cut = rest
            .iter()
            .take(3)
            .take_while(|&&x| x & 0xc0 == 0x80)
            .count();
        if !self.kernel.utf8_end(&rest[..cut]) {
            return self.fail();
        }
        // From the block (inside the string, not after a backslash: the
        // blocks before it checked everything up to it).
        let Some(end) = scan::string_rest(b, self.next) else {
            return self.fail();
        };
        if NOTE {
            self.finished = (start, end);
        }
        self.base = end;
        self.next = end;
        self.in_string = 0;
        self.escape = 0;
        // The closing quote is neither whitespace nor structural.
        self.scalar = 1;
        self.close = 1;
        self.high = false;
        Some((end, 0))
    }
}
