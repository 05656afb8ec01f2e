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
//!
//! Most blocks of such text hold only ASCII and simple escapes (`\n`, `\t`,
//! `\"`): a fast check ([`flags_scalar`], the kernels' `text_plain64`; the
//! AVX2 kernel's `text_pass` takes 128 bytes a step) passes them on one mask
//! per block, from the two bytes before each byte instead of
//! the escape carry; only a block it flags takes the exact path above. On
//! AVX2 and AVX-512 a flagged block whose only flags are non-ASCII bytes passes
//! too when they are whole valid UTF-8 characters (a vector UTF-8 check,
//! `utf8_whole_scalar` its reference).

use super::skip::escaped_bytes;
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

/// The three 16-entry tables of the UTF-8 lookup check (Keiser and Lemire,
/// "Validating UTF-8 in less than one instruction per byte", 2021; simdjson's
/// `utf8_lookup4`), by nibble: the previous byte's high nibble, its low nibble,
/// and this byte's high nibble; an error is a bit all three share. The AVX2
/// and AVX-512 kernels load them into every 128-bit lane.
#[cfg_attr(
    not(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri))),
    allow(dead_code) // only the SIMD kernels look them up
)]
#[rustfmt::skip]
pub(crate) const UTF8_LOOKUP: [[i8; 16]; 3] = {
    const TOO_SHORT: i8 = 1 << 0; // 11______ 0_______ or 11______ 11______
    const TOO_LONG: i8 = 1 << 1; // 0_______ 10______
    const OVERLONG_3: i8 = 1 << 2; // 11100000 100_____
    const TOO_LARGE: i8 = 1 << 3; // 11110100 1001____, 11110101.. 10______ (not 1000____)
    const SURROGATE: i8 = 1 << 4; // 11101101 101_____
    const OVERLONG_2: i8 = 1 << 5; // 1100000_ 10______
    const TOO_LARGE_1000: i8 = 1 << 6; // 11110101.. 1000____
    const OVERLONG_4: i8 = 1 << 6; // 11110000 1000____
    const TWO_CONTS: i8 = 1 << 7; // 10______ 10______
    const CARRY: i8 = TOO_SHORT | TOO_LONG | TWO_CONTS; // decided by the high nibbles
    const LARGE: i8 = CARRY | TOO_LARGE | TOO_LARGE_1000;
    [
        [
            // 0_______ (ASCII)
            TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG,
            // 10______ (continuation)
            TWO_CONTS, TWO_CONTS, TWO_CONTS, TWO_CONTS,
            // 1100____, 1101____ (2-byte leads)
            TOO_SHORT | OVERLONG_2, TOO_SHORT,
            // 1110____ (3-byte leads)
            TOO_SHORT | OVERLONG_3 | SURROGATE,
            // 1111____ (4-byte leads and beyond)
            TOO_SHORT | TOO_LARGE | TOO_LARGE_1000 | OVERLONG_4,
        ],
        [
            CARRY | OVERLONG_3 | OVERLONG_2 | OVERLONG_4, // ____0000
            CARRY | OVERLONG_2,                           // ____0001
            CARRY, CARRY,                                 // ____001_
            CARRY | TOO_LARGE,                            // ____0100
            LARGE, LARGE, LARGE,                          // ____0101, ____011_
            LARGE, LARGE, LARGE, LARGE, LARGE,            // ____1000 to ____1100
            LARGE | SURROGATE,                            // ____1101
            LARGE, LARGE,                                 // ____111_
        ],
        [
            // 0_______ (ASCII)
            TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT,
            // 1000____
            TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE_1000 | OVERLONG_4,
            // 1001____
            TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE,
            // 101_____
            TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,
            TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,
            // 11______ (leads)
            TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT,
        ],
    ]
};

/// The masks of 64 bytes, byte by byte: the reference the SIMD kernels are
/// tested against, and the kernel of the scalar build.
#[cfg_attr(
    all(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128")), not(switchboard_disable_simd), not(miri), not(test)),
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

/// The fast check's flags of the 64-byte block at `at` (bit i = byte `at + i`),
/// byte by byte: the reference the SIMD kernels are tested against, and the
/// scalar build's check. A byte is flagged when it is below 0x20 or above 0x7f,
/// a `"` not right after a lone backslash (one not itself after a backslash),
/// or anything but a simple escape letter other than `b` right after a
/// backslash (`\b` is rare in text, and the exact path takes it: the SIMD
/// kernels save two steps on it).
///
/// No flag in a block means: no closing quote, no byte to validate, and every
/// escape letter simple, whatever the backslash runs before it (see
/// [`text_blocks`]). Needs `at >= 2` (the check reads the two bytes before).
#[cfg_attr(
    all(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128")), not(switchboard_disable_simd), not(miri), not(test)),
    allow(dead_code) // the scalar build's check; here only the tests' reference
)]
#[inline]
pub(crate) fn flags_scalar(b: &[u8], at: usize) -> u64 {
    let mut flags = 0u64;
    for i in 0..64 {
        let (c, c1, c2) = (b[at + i], b[at + i - 1], b[at + i - 2]);
        let lone_before = c1 == b'\\' && c2 != b'\\';
        let flag = matches!(c, 0..0x20 | 0x80..)
            || (c == b'"' && !lone_before)
            || (c1 == b'\\' && (c == b'b' || !SIMPLE_ESCAPE[c as usize]));
        flags |= u64::from(flag) << i;
    }
    flags
}

/// Whether the fast check flags nothing in the block at `at`
/// ([`flags_scalar`]): the scalar build's check.
#[cfg_attr(
    all(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128")), not(switchboard_disable_simd), not(miri), not(test)),
    allow(dead_code) // the scalar build's check; here only the tests' reference
)]
#[inline]
pub(crate) fn plain_scalar(b: &[u8], at: usize) -> bool {
    flags_scalar(b, at) == 0
}

/// Whether the bytes above 0x7f of the block at `at` are whole valid UTF-8
/// characters, one by one: a character begun in the three bytes before `at`
/// ends in the block, and none is cut by its end. The reference of the AVX2
/// kernel's second check (`text_utf8_whole64`), with the fast check's other
/// flags (quotes, escape letters, control bytes) none. Needs `at >= 3`.
#[cfg(test)]
pub(crate) fn utf8_whole_scalar(b: &[u8], at: usize) -> bool {
    let end = at + 64;
    let mut i = at;
    // A character begun before the block: its lead is the last byte >= 0xc0
    // in the three before, with only continuation bytes after it.
    for j in (at - 3..at).rev() {
        match b[j] {
            0x80..0xc0 => continue,
            0xc0.. => match scan::utf8_char_end(b, j) {
                Some(e) if e > at && e <= end => i = e,
                Some(e) if e <= at => {}
                _ => return false,
            },
            _ => {}
        }
        break;
    }
    while i < end {
        if b[i] < 0x80 {
            i += 1;
            continue;
        }
        match scan::utf8_char_end(b, i) {
            Some(e) if e <= end => i = e,
            _ => return false,
        }
    }
    true
}

/// Whether `b[at]` is escaped, from the backslash run ending at `at - 1`, for a
/// block after fast-checked ones (whose walk kept no carry). `b[p]` is an
/// unescaped backslash and `p < at`: a run reaching back to it is counted from
/// it, any other starts after a byte that is no backslash (so its first
/// backslash is unescaped); `b[at]` is escaped when the run is odd.
///
/// Linear over a walk: every block the exact path takes after the first holds
/// a flagged byte, which is no backslash, so the runs counted at two
/// hand-overs never overlap.
#[inline]
fn escaped_after_run(b: &[u8], p: usize, at: usize) -> u64 {
    let mut j = at;
    while j > p && b[j - 1] == b'\\' {
        tick(1);
        j -= 1;
    }
    ((at - j) & 1) as u64
}

/// The fast check of [`text_blocks`] (`pass`) from a kernel's check of one
/// block (`plain`): the blocks from `at` it passes one by one, up to `last`.
#[inline(always)]
pub(crate) fn pass_each(
    plain: impl Fn(&[u8], usize) -> bool,
) -> impl Fn(&[u8], usize, usize) -> usize {
    move |b, mut at, last| {
        while at <= last && plain(b, at) {
            tick(1);
            at += 64;
        }
        at
    }
}

/// Validates the string body from `p`, an unescaped backslash inside a string,
/// 64 bytes a step. `masks(b, at)` is called only with `at + 64 <= b.len()`;
/// `pass(b, at, last)` (`last = b.len() - 64`) only with `p + 64 <= at`
/// (so `at >= 3`), and returns the first block from `at` (`at`, `at + 64`, ...,
/// at most `last + 64`) that is past `last` or that the fast check does not
/// pass, every block before it passed (see [`pass_each`]).
///
/// Each block after the first gets the kernel's fast check first (`pass`, see
/// [`flags_scalar`]): one mask for 64 bytes of plain ASCII text with simple
/// escapes (but `\b`). A block without a flag holds no closing quote: a `"`
/// right after a lone backslash is escaped by it (that backslash follows no
/// backslash, so it is unescaped). It holds nothing to validate either (every
/// byte right after a backslash, escaped or not, is a simple letter). The AVX2
/// and AVX-512 kernels also pass a block whose only flags are bytes above 0x7f when they
/// are whole valid UTF-8 characters (`utf8_whole_scalar`). A flagged block
/// takes the exact path (the masks, [`escaped_bytes`]), which decides; its
/// carry, lost over fast blocks, comes back from [`escaped_after_run`].
#[inline(always)]
pub(crate) fn text_blocks(
    b: &[u8],
    p: usize,
    masks: impl Fn(&[u8], usize) -> TextMasks,
    pass: impl Fn(&[u8], usize, usize) -> usize,
) -> Text {
    debug_assert_eq!(b.get(p), Some(&b'\\'));
    let mut at = p;
    let mut carry = 0u64;
    // This block's first bytes that continue a character begun in the block
    // before (at most three).
    let mut cont = 0u64;
    let Some(last) = b.len().checked_sub(64) else {
        return Text::Resume(p);
    };
    // Whether the blocks since the last exact one were fast-checked (`carry`
    // is then stale).
    let mut skipped = false;
    while at <= last {
        tick(1);
        if skipped {
            carry = escaped_after_run(b, p, at);
            skipped = false;
        }
        let m = masks(b, at);
        let escaped = escaped_bytes(m.backslashes, &mut carry);
        let closing = m.quotes & !escaped;
        let special = m.special & !cont;
        // The escape letters other than the simple ones: `u`, or a bad letter.
        let letters = escaped & !m.simple;
        cont = 0;
        if special | letters | closing != 0 {
            // The bits below the closing quote (all of them when there is none).
            let body = closing.wrapping_sub(1) & !closing;
            let mut special = special & body;
            let mut letters = letters & body;
            // The first byte (index in the block) the walk cannot pass: a
            // control byte or invalid UTF-8; the general loop reports it.
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
            // The bytes up to the stop, itself included: an escaped control byte
            // or invalid UTF-8 is a bad escape first (the walk resumes at its
            // backslash).
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
        }
        at += 64;
        // The fast check.
        let next = pass(b, at, last);
        if next != at {
            at = next;
            skipped = true;
            // A character begun in the block before ended in the next one:
            // `pass` checked it whole.
            cont = 0;
        }
    }
    if skipped {
        carry = escaped_after_run(b, p, at);
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
        any(
            target_arch = "x86_64",
            all(target_arch = "wasm32", target_feature = "simd128")
        ),
        not(switchboard_disable_simd),
        not(miri)
    ),
    allow(dead_code) // the scalar build's kernel (Miri runs it through the scanner)
)]
#[inline]
pub(crate) fn text_blocks_scalar(b: &[u8], p: usize) -> Text {
    text_blocks(b, p, masks_scalar, pass_each(plain_scalar))
}

#[cfg(test)]
mod tests {
    /// Bytes the fast check cares about (and some it does not), for generated
    /// blocks.
    const ALPHABET: &[u8] = b"\\\\\\\\\"\"u/bfnrtaz0 \x00\x1f\x7f\x80\xc3\xa9\xff";

    /// The fast check of every kernel on the block at `at` (`None` for a kernel
    /// this CPU or build lacks).
    fn all_flags(b: &[u8], at: usize) -> Vec<(&'static str, u64, bool)> {
        #[cfg_attr(
            not(all(
                any(
                    target_arch = "x86_64",
                    all(target_arch = "wasm32", target_feature = "simd128")
                ),
                not(switchboard_disable_simd),
                not(miri)
            )),
            allow(unused_mut)
        )]
        let mut all = vec![(
            "scalar",
            super::flags_scalar(b, at),
            super::plain_scalar(b, at),
        )];
        #[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
        {
            use super::super::{avx2, sse2};
            // SAFETY: the callers pass `at >= 3` and `at + 64 <= b.len()`.
            let sse2 = unsafe { (sse2::text_flags64(b, at), sse2::text_plain64(b, at)) };
            all.push(("sse2", sse2.0, sse2.1));
            if avx2::is_available() {
                // SAFETY: as above, and AVX2 was just detected on this CPU.
                let avx2 = unsafe { (avx2::text_flags64(b, at), avx2::text_plain64(b, at)) };
                all.push(("avx2", avx2.0, avx2.1));
            }
            if super::super::avx512::is_available() {
                use super::super::avx512;
                // SAFETY: as above, and AVX-512 was just detected on this CPU.
                let avx512 = unsafe { (avx512::text_flags64(b, at), avx512::text_plain64(b, at)) };
                all.push(("avx512", avx512.0, avx512.1));
            }
        }
        #[cfg(all(
            target_arch = "wasm32",
            target_feature = "simd128",
            not(switchboard_disable_simd),
            not(miri)
        ))]
        {
            use super::super::simd128;
            // SAFETY: the callers pass `at >= 3` and `at + 64 <= b.len()`.
            let got = unsafe { (simd128::text_flags64(b, at), simd128::text_plain64(b, at)) };
            all.push(("simd128", got.0, got.1));
        }
        all
    }

    /// The definition of the fast check's flag, byte by byte, written apart
    /// from [`super::flags_scalar`].
    fn flag_by_definition(b: &[u8], i: usize) -> bool {
        let c = b[i];
        let after_bs = b[i - 1] == b'\\';
        let after_lone = after_bs && b[i - 2] != b'\\';
        let simple = br#""\/fnrt"#.contains(&c); // `b` flagged on purpose
        !(0x20..0x80).contains(&c) || (c == b'"' && !after_lone) || (after_bs && !simple)
    }

    /// Whether `b[..at]` is valid UTF-8 but for a character cut at its end
    /// (what the walk has checked before it looks at the block at `at`).
    fn valid_before(b: &[u8], at: usize) -> bool {
        std::str::from_utf8(&b[..at]).map_or_else(|e| e.error_len().is_none(), |_| true)
    }

    /// The AVX2 kernel's second check by its definition: the fast check flags
    /// nothing but bytes above 0x7f, and these are whole valid characters.
    fn utf8_whole_by_definition(b: &[u8], at: usize) -> bool {
        (at..at + 64).all(|i| {
            let escapes = flag_by_definition(b, i) && (b[i] < 0x80 || b[i - 1] == b'\\');
            !escapes && b[i] >= 0x20
        }) && super::utf8_whole_scalar(b, at)
    }

    /// Every kernel's fast check equals its definition: every byte value at
    /// every position after every pair of bytes from the alphabet, and random
    /// blocks of the alphabet; `plain` is "no flag".
    #[test]
    fn fast_check_matches_its_definition() {
        let check = |b: &[u8], at: usize| {
            let want = (0..64).fold(0u64, |m, i| {
                m | u64::from(flag_by_definition(b, at + i)) << i
            });
            for (kernel, flags, plain) in all_flags(b, at) {
                assert_eq!(flags, want, "{kernel} flags of {:?}", &b[at - 3..at + 64]);
                let mut want_plain = want == 0;
                if kernel == "avx2" || kernel == "avx512" {
                    if !valid_before(b, at) {
                        continue; // the walk never gets here
                    }
                    want_plain |= utf8_whole_by_definition(b, at);
                }
                assert_eq!(
                    plain,
                    want_plain,
                    "{kernel} plain of {:?}",
                    &b[at - 3..at + 64]
                );
            }
        };
        let values: Vec<u8> = if cfg!(miri) {
            ALPHABET.to_vec()
        } else {
            (0..=255).collect()
        };
        let positions: &[usize] = if cfg!(miri) { &[0, 63] } else { &[] };
        for &c in &values {
            for &c1 in &ALPHABET[..if cfg!(miri) { 5 } else { ALPHABET.len() }] {
                for &c2 in &ALPHABET[..if cfg!(miri) { 3 } else { ALPHABET.len() }] {
                    let all: Vec<usize> = (0..64).collect();
                    for &pos in if cfg!(miri) { positions } else { &all[..] } {
                        // The block at 3 (the check reads bytes 1 and 2 too).
                        let mut b = [b'a'; 70];
                        b[3 + pos] = c;
                        b[3 + pos - 1] = c1;
                        b[3 + pos - 2] = c2;
                        check(&b, 3);
                    }
                }
            }
        }
        let mut next = crate::test_rng::lcg(0xfa57);
        for _ in 0..if cfg!(miri) { 20 } else { 100_000 } {
            let mut b = [0u8; 70];
            let dense = next().is_multiple_of(4); // mostly backslashes and quotes
            for x in &mut b {
                *x = ALPHABET[next() % if dense { 4 } else { ALPHABET.len() }];
            }
            check(&b, 3 + next() % 4);
        }
    }

    /// The walk with the fast check of every kernel equals the exact walk alone
    /// (the masks on every block, as before the fast check), on every prefix.
    fn check_walks(b: &[u8], p: usize) {
        // Under Miri every third prefix of those that end in the last two
        // blocks, and the whole.
        let (from, step) = if cfg!(miri) {
            (b.len().saturating_sub(130), 3)
        } else {
            (0, 1)
        };
        let lens = ((p + 1).max(from)..b.len()).step_by(step);
        for len in lens.chain([b.len()]) {
            let b = &b[..len];
            let want = super::text_blocks(b, p, super::masks_scalar, |_, at, _| at);
            let got = super::text_blocks_scalar(b, p);
            assert_eq!(got, want, "scalar, {len} bytes of {:?}", b);
            #[cfg(all(
                target_arch = "wasm32",
                target_feature = "simd128",
                not(switchboard_disable_simd),
                not(miri)
            ))]
            assert_eq!(
                super::super::simd128::text(b, p),
                want,
                "simd128, {len} bytes of {:?}",
                b
            );
            #[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
            {
                use super::super::{avx2, sse2};
                assert_eq!(sse2::text(b, p), want, "sse2, {len} bytes of {:?}", b);
                if avx2::is_available() {
                    // SAFETY: AVX2 was just detected on this CPU.
                    let got = unsafe { avx2::text(b, p) };
                    assert_eq!(got, want, "avx2, {len} bytes of {:?}", b);
                }
                if super::super::avx512::is_available() {
                    // SAFETY: AVX-512 was just detected on this CPU.
                    let got = unsafe { super::super::avx512::text(b, p) };
                    assert_eq!(got, want, "avx512, {len} bytes of {:?}", b);
                }
            }
        }
    }

    /// The pieces the generated strings are made of: backslash runs of 1 to 5
    /// before letters and quotes, `\u` escapes (good, bad, cut), non-ASCII
    /// characters (good and bad), control bytes, plain text.
    const PIECES: &[&[u8]] = &[
        b"\\n",
        b"\\t",
        b"\\b",
        b"\\\\b",
        b"\\\"",
        b"\\\\",
        b"\\\\\"",
        b"\\\\\\\"",
        b"\\\\\\\\\"",
        b"\\\\\\\\\\\"",
        b"\\\\n",
        b"\\\\\\n",
        b"\\\\\\\\\\n",
        b"\\\\\\u",
        b"\\\\u",
        b"\\u00e9",
        b"\\uD83D\\uDE00",
        b"\\u12g4",
        b"\\u0",
        b"\\x",
        b"\\\x01",
        b"\\\xc3\xa9",
        b"\"",
        b"\\",
        b"\\\\\\",
        b"\\\\\\\\\\",
        "é".as_bytes(),
        "€".as_bytes(),
        "😀".as_bytes(),
        b"\xc3",
        b"\xe2\x82",
        b"\xed\xa0\x80",
        b"\xff",
        b"\x01",
        b"\x1f",
        b"\x7f",
        b"plain text ",
        b"0123456789abcdef0123456789abcdef",
    ];

    /// Generated strings: pieces at random and at block edges (a piece ending
    /// at, or starting at, offsets 0, 1, 62 and 63 of a block after the walk's
    /// start), compared walk against exact walk on every prefix.
    #[test]
    fn fast_walk_matches_exact_walk() {
        let mut next = crate::test_rng::lcg(0x7e47);
        let rounds = if cfg!(miri) { 3 } else { 3000 };
        for round in 0..rounds {
            let mut b = vec![b'a'; next() % 4];
            let p = b.len();
            b.push(b'\\');
            b.push(b"n\\t\"u"[next() % 5]);
            if b[p + 1] == b'u' {
                b.extend_from_slice(b"00e9");
            }
            let blocks = 1 + next() % if cfg!(miri) { 2 } else { 4 };
            while b.len() < p + 64 * blocks + 70 {
                let piece = PIECES[next() % PIECES.len()];
                let rare = round % 4 == 0 || next().is_multiple_of(3);
                if !rare && (piece.contains(&b'"') && !piece.starts_with(b"\\\"")) {
                    continue; // mostly strings that go on
                }
                if next().is_multiple_of(2) {
                    // Place the piece to end or start at a block edge.
                    let edge = [0, 1, 62, 63][next() % 4];
                    let block = p + 64 * (1 + (b.len() - p) / 64);
                    let target = block + edge;
                    let start = if next().is_multiple_of(2) {
                        target.saturating_sub(piece.len())
                    } else {
                        target
                    };
                    if start > b.len() {
                        b.resize(start, b'x');
                    }
                }
                b.extend_from_slice(piece);
            }
            check_walks(&b, p);
        }
    }

    /// Flags in either half of the AVX2 kernel's 128-byte steps: one or two
    /// flagging pieces (a whole non-ASCII character, which the kernel's second
    /// check passes, invalid UTF-8, a `\u` escape, `\b`, a control byte, the
    /// closing quote) in any of the four blocks after the walk's first, at
    /// block and half-block edges, the string 1 to 3 blocks longer (so every
    /// length around 128 bytes in the fast check, through every prefix).
    #[test]
    fn fast_steps_with_flags_in_either_half() {
        let flags: &[&[u8]] = &[
            "é".as_bytes(),
            "😀".as_bytes(),
            b"\xff",
            b"\\u00e9",
            b"\\b",
            b"\x01",
            b"\\\\\"",
            b"\"",
        ];
        let offsets: &[usize] = if cfg!(miri) {
            &[62]
        } else {
            &[0, 1, 31, 32, 62, 63]
        };
        let blocks = if cfg!(miri) { 2..3 } else { 1..5 };
        // Under Miri: one multi-byte character, an invalid byte, an escape of
        // each kind (every flag still met by the other tests' walks).
        let flags = if cfg!(miri) { &flags[2..5] } else { flags };
        for &first in flags {
            for block in blocks.clone() {
                for &off in offsets {
                    let seconds = [None, Some(("é".as_bytes(), 1)), Some((&b"\\u00e9"[..], 2))];
                    let seconds = if cfg!(miri) {
                        &seconds[1..]
                    } else {
                        &seconds[..]
                    };
                    for &second in seconds {
                        let mut b = b"ab\\n".to_vec();
                        let p = 2;
                        b.resize(p + 64 * 6 + 3, b'x');
                        let at = (p + 64 * block + off).min(b.len() - first.len());
                        b[at..at + first.len()].copy_from_slice(first);
                        if let Some((piece, later)) = second {
                            let at = p + 64 * (block + later) + 40;
                            if at + piece.len() <= b.len() {
                                b[at..at + piece.len()].copy_from_slice(piece);
                            }
                        }
                        check_walks(&b, p);
                    }
                }
            }
        }
    }

    /// Long backslash runs (the carry after fast blocks counts them back) of
    /// every length around two blocks, ended by every kind of byte, starting
    /// at odd and even offsets, and at the walk's first backslash with an
    /// escaped backslash before it (the count stops there).
    #[test]
    fn backslash_runs_across_fast_blocks() {
        let lens = if cfg!(miri) { 63..64 } else { 0..200 };
        for run in lens {
            for end in [&b"\""[..], b"n", b"u00e9", b"x", b"\xc3\xa9", b"\x01", b"t"] {
                for lead in if cfg!(miri) { 0..2 } else { 0..5 } {
                    for before in [&b"aa"[..], b"a\\\\"] {
                        let mut b = before.to_vec();
                        let p = b.len();
                        if lead > 0 {
                            b.extend_from_slice(b"\\n");
                            b.resize(p + 2 + (lead - 1) * 31, b'y');
                        } else {
                            b.push(b'\\'); // the run starts at `p`
                        }
                        b.extend(std::iter::repeat_n(b'\\', run));
                        b.extend_from_slice(end);
                        b.resize(b.len() + 64, b'z');
                        check_walks(&b, p);
                    }
                }
            }
        }
    }

    /// UTF-8 sequences (every lead byte with every second byte, and 3- and
    /// 4-byte leads with boundary values after them) at the edges and the
    /// middle of a block between valid characters: the walk equals the exact
    /// walk, and the AVX2 kernel's second check equals its reference.
    #[test]
    fn utf8_sequences_in_blocks() {
        let edges: &[usize] = if cfg!(miri) {
            &[62]
        } else {
            &[0, 1, 2, 3, 31, 32, 33, 60, 61, 62, 63]
        };
        let bounds = [0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xf4];
        let mut seqs: Vec<Vec<u8>> = Vec::new();
        let (leads, seconds) = if cfg!(miri) {
            (0xc2..=0xc3, 0x7f..=0x81)
        } else {
            (0x80..=0xff_u8, 0..=0xff_u8)
        };
        for lead in leads {
            for second in seconds.clone() {
                seqs.push(vec![lead, second, b'a']);
            }
        }
        if !cfg!(miri) {
            for lead in 0xe0..=0xf7_u8 {
                for &x in &bounds {
                    for &y in &bounds {
                        for &z in &bounds {
                            seqs.push(vec![lead, x, y, z]);
                        }
                    }
                }
            }
        }
        for seq in &seqs {
            for &edge in edges {
                for before in ["é".as_bytes(), "€".as_bytes(), "😀".as_bytes(), b"ab"] {
                    let mut b = b"ab".to_vec();
                    let p = b.len();
                    b.extend_from_slice(b"\\n");
                    // `before` ends right before the sequence, which starts at
                    // `edge` in the walk's second block.
                    b.resize(p + 64 + edge - before.len().min(edge + 60), b'x');
                    b.extend_from_slice(before);
                    b.extend_from_slice(seq);
                    b.extend_from_slice("é text".as_bytes());
                    b.resize(p + 64 * 4, b'y');
                    let want = super::text_blocks(&b, p, super::masks_scalar, |_, at, _| at);
                    assert_eq!(super::text_blocks_scalar(&b, p), want, "scalar {b:x?}");
                    #[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
                    if super::super::avx2::is_available() {
                        // SAFETY: AVX2 was just detected on this CPU.
                        let got = unsafe { super::super::avx2::text(&b, p) };
                        assert_eq!(got, want, "avx2 {b:x?}");
                        for at in [p + 64, p + 128]
                            .into_iter()
                            .filter(|&at| valid_before(&b, at))
                        {
                            // SAFETY: `at >= 3`, `at + 64 <= b.len()`, AVX2 as above.
                            let got = unsafe { super::super::avx2::text_utf8_whole64(&b, at) };
                            let want = utf8_whole_by_definition(&b, at);
                            assert_eq!(got, want, "avx2 second check at {at} of {b:x?}");
                        }
                    }
                    #[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
                    if super::super::avx512::is_available() {
                        // SAFETY: AVX-512 was just detected on this CPU.
                        let got = unsafe { super::super::avx512::text(&b, p) };
                        assert_eq!(got, want, "avx512 {b:x?}");
                        for at in [p + 64, p + 128]
                            .into_iter()
                            .filter(|&at| valid_before(&b, at))
                        {
                            // SAFETY: `at >= 3`, `at + 64 <= b.len()`, AVX-512 as above.
                            let got = unsafe { super::super::avx512::text_utf8_whole64(&b, at) };
                            let want = utf8_whole_by_definition(&b, at);
                            assert_eq!(got, want, "avx512 second check at {at} of {b:x?}");
                        }
                    }
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
                let mut block = [b'a'; 70];
                block[pos] = c;
                block[(pos + 17) % 64] = b'"';
                let want = super::masks_scalar(&block, 3);
                // SAFETY: 3 + 64 <= 70.
                let got = unsafe { super::super::simd128::text_masks64(&block, 3) };
                assert_eq!(got, want, "simd128 byte {c} at {pos}");
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
                if super::super::avx512::is_available() {
                    // SAFETY: 3 + 64 <= 70, and AVX-512 was just detected on this CPU.
                    let avx512 = unsafe { super::super::avx512::text_masks64(&block, 3) };
                    assert_eq!(avx512, want, "avx512 byte {c} at {pos}");
                }
            }
        }
    }
}
