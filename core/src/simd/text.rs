//! Validating long string bodies with escapes 64 bytes a step.
//!
//! Text (source files, prose, logs) carries an escape every line or so; stopping
//! at each one costs a kernel call and an escape check per line. Here, per
//! 64-byte block, three bitmasks (quotes, backslashes, and bytes below 0x20 or
//! above 0x7f) give the escaped bytes without a branch ([`escaped_bytes`]), so
//! the closing quote (the first unescaped one) and every escape letter are found
//! from the masks; only the letters are checked, one table read each (`\u`
//! escapes through [`unescape::check_escape`]).
//!
//! Non-ASCII characters are validated one by one where the special mask flags
//! them. Anything else (a control byte, invalid UTF-8, a bad escape, fewer than
//! 64 bytes left) hands back to the scanner's general string loop at a boundary
//! it can resume from ([`Text::Resume`]), which then reports errors exactly as it
//! always does.

use crate::parse::ops::tick;
use crate::parse::scan;
use crate::unescape;

/// The masks of one 64-byte block of string body: bit i is byte i.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TextMasks {
    /// `"` bytes.
    pub quotes: u64,
    /// `\\` bytes.
    pub backslashes: u64,
    /// Bytes below 0x20 or above 0x7f.
    pub special: u64,
    /// The simple escape letters: `"`, `\\`, `/`, `b`, `f`, `n`, `r`, `t`.
    pub simple: u64,
}

/// Where a block walk stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Text {
    /// The string ends here (one past its closing quote); the body is valid.
    End(usize),
    /// The body is valid up to here, a byte outside any escape (or the backslash
    /// starting one): the general loop resumes from it.
    Resume(usize),
}

/// The escape letters that need no more checking.
static SIMPLE_ESCAPE: [bool; 256] = {
    let mut t = [false; 256];
    let letters = *b"\"\\/bfnrt";
    let mut i = 0;
    while i < letters.len() {
        t[letters[i] as usize] = true;
        i += 1;
    }
    t
};

/// The bytes escaped by a backslash ([`super::skip::escaped_bytes`], in fewer
/// steps): `carry` is 1 when the block's first byte is escaped, and becomes 1
/// when the next block's is. An odd-bits mask minus the backslashes (shifted
/// onto the bytes they may escape) flips exactly at the ends of runs that start
/// on an even bit; XOR-ing the odd bits back leaves the escaping backslashes
/// and the bytes they escape.
#[inline(always)]
pub(crate) fn escaped_bytes(backslashes: u64, carry: &mut u64) -> u64 {
    const ODD: u64 = 0xAAAA_AAAA_AAAA_AAAA;
    let potential = backslashes & !*carry; // an escaped backslash escapes nothing
    let escape_and_escaped = ((potential << 1) | ODD).wrapping_sub(potential) ^ ODD;
    let escaped = escape_and_escaped ^ (backslashes | *carry);
    *carry = (escape_and_escaped & backslashes) >> 63;
    escaped
}

/// The masks of 64 bytes, byte by byte: the reference the SIMD kernels are
/// tested against, and the kernel of the scalar build.
#[cfg_attr(
    all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri), not(test)),
    allow(dead_code) // the scalar build's kernel; here only the tests' reference
)]
#[inline]
pub(crate) fn masks_scalar(b: &[u8], at: usize) -> TextMasks {
    let mut m = TextMasks::default();
    for (i, &c) in b[at..at + 64].iter().enumerate() {
        let bit = 1u64 << i;
        if SIMPLE_ESCAPE[c as usize] {
            m.simple |= bit;
        }
        match c {
            b'"' => m.quotes |= bit,
            b'\\' => m.backslashes |= bit,
            0..0x20 | 0x80.. => m.special |= bit,
            _ => {}
        }
    }
    m
}

/// Validates the string body from `p`, an unescaped backslash inside a string,
/// 64 bytes a step. `masks(b, at)` is called only with `at + 64 <= b.len()`.
#[inline(always)]
pub(crate) fn text_blocks(b: &[u8], p: usize, masks: impl Fn(&[u8], usize) -> TextMasks) -> Text {
    debug_assert_eq!(b.get(p), Some(&b'\\'));
    let mut at = p;
    let mut carry = 0u64;
    // This block's first bytes that continue a character begun in the block
    // before (at most three).
    let mut cont = 0u64;
    let Some(last) = b.len().checked_sub(64) else {
        return Text::Resume(p);
    };
    while at <= last {
        tick(1);
        let m = masks(b, at);
        let escaped = escaped_bytes(m.backslashes, &mut carry);
        let closing = m.quotes & !escaped;
        let special = m.special & !cont;
        // The escape letters other than the simple ones: `u`, or a bad letter.
        let letters = escaped & !m.simple;
        cont = 0;
        if special | letters | closing == 0 {
            // Plain ASCII text and simple escapes only, and more string after.
            at += 64;
            continue;
        }
        // The bits below the closing quote (all of them when there is none).
        let body = closing.wrapping_sub(1) & !closing;
        let mut special = special & body;
        let mut letters = letters & body;
        // The first byte (index in the block) the walk cannot pass: a control
        // byte or invalid UTF-8; the general loop reports it.
        let mut stop = 64;
        while special != 0 {
            tick(1);
            let i = special.trailing_zeros() as usize;
            let c = b[at + i];
            let end = if c < 0x20 {
                None
            } else {
                scan::utf8_char_end(b, at + i)
            };
            let Some(end) = end else {
                stop = i;
                break;
            };
            // Clear the character's bytes (the shift drops any past this block).
            special &= !(((1u64 << (end - at - i)) - 1) << i);
            if end > at + 64 {
                cont = (1u64 << (end - at - 64)) - 1;
            }
        }
        // The bytes up to the stop, itself included: an escaped control byte or
        // invalid UTF-8 is a bad escape first (the walk resumes at its backslash).
        if stop < 64 {
            letters &= u64::MAX >> (63 - stop);
        }
        while letters != 0 {
            tick(1);
            let i = at + letters.trailing_zeros() as usize;
            if b[i] != b'u' || unescape::check_escape(b, i - 1).is_none() {
                return Text::Resume(i - 1);
            }
            letters &= letters - 1;
        }
        if stop < 64 {
            return Text::Resume(at + stop);
        }
        if closing != 0 {
            return Text::End(at + closing.trailing_zeros() as usize + 1);
        }
        at += 64;
    }
    // Past the continuation bytes of a character, or at the backslash of an
    // escape cut by the block end.
    Text::Resume(if cont != 0 {
        at + cont.count_ones() as usize
    } else {
        at - carry as usize
    })
}

/// [`text_blocks`] with the scalar masks: the scalar build's kernel.
#[cfg_attr(
    all(
        target_arch = "x86_64",
        not(switchboard_disable_simd),
        not(miri)
    ),
    allow(dead_code) // the scalar build's kernel (Miri runs it through the scanner)
)]
#[inline]
pub(crate) fn text_blocks_scalar(b: &[u8], p: usize) -> Text {
    text_blocks(b, p, masks_scalar)
}

#[cfg(test)]
mod tests {
    /// [`super::escaped_bytes`] equals the skip walk's on random and run-heavy
    /// backslash masks, with both carries.
    #[test]
    fn escaped_bytes_match_the_skip_walk() {
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
                let (mut c1, mut c2) = (carry, carry);
                let want = super::super::skip::escaped_bytes(backslashes, &mut c1);
                let got = super::escaped_bytes(backslashes, &mut c2);
                assert_eq!((got, c2), (want, c1), "{backslashes:#066b} carry {carry}");
            }
        }
    }

    /// The SIMD masks equal the scalar ones for every byte value at every position.
    #[test]
    #[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
    fn masks_match_scalar() {
        for c in 0..=255u8 {
            for pos in 0..64 {
                let mut block = [b'a'; 70];
                block[pos] = c;
                block[(pos + 17) % 64] = b'"';
                let want = super::masks_scalar(&block, 3);
                // SAFETY: 3 + 64 <= 70.
                let sse2 = unsafe { super::super::sse2::text_masks64(&block, 3) };
                assert_eq!(sse2, want, "sse2 byte {c} at {pos}");
                if super::super::avx2::is_available() {
                    // SAFETY: 3 + 64 <= 70, and AVX2 was just detected on this CPU.
                    let avx2 = unsafe { super::super::avx2::text_masks64(&block, 3) };
                    assert_eq!(avx2, want, "avx2 byte {c} at {pos}");
                }
            }
        }
    }
}
