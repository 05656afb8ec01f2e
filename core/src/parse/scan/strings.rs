//! The string reader: the end of a string (16-byte steps while it is plain
//! ASCII, then the general loop that checks escapes, control bytes and UTF-8,
//! handing long escaped text to the 64-byte block walk), and UTF-8 characters.

use super::spans::{Fail, Res};
use crate::parse::error::Reason;
use crate::parse::ops::tick;
use crate::simd;
use crate::unescape;

/// The end of the string whose opening quote is at `p`: 16-byte steps inline
/// while the string is plain ASCII; the general loop takes over at the first
/// escape, control or non-ASCII byte, and for the last 15 bytes of the input.
#[inline(always)]
pub(super) fn string_end(b: &[u8], p: usize) -> Res<usize> {
    let mut q = p + 1;
    if simd::HAS_MASK16 && b.len() >= 16 {
        let last = b.len() - 16; // one bound for the whole loop
        while q <= last {
            tick(1);
            // SAFETY: `q <= b.len() - 16`.
            let mask = unsafe { simd::mask16_unchecked(b, q) };
            if mask != 0 {
                let i = q + mask.trailing_zeros() as usize;
                // SAFETY: the mask's bits cover bytes `q..q + 16` only, so
                // `i < q + 16 <= b.len()`.
                if unsafe { *b.get_unchecked(i) } == b'"' {
                    return Ok(i + 1);
                }
                q = i;
                break;
            }
            q += 16;
        }
    }
    string_from(b, q).map(|(end, _)| end)
}

/// [`string_from`]'s end of the string, or `None` for an invalid one (the
/// structural walk's string loop, [`crate::parse::blocks`]).
pub(crate) fn string_rest(b: &[u8], p: usize) -> Option<usize> {
    string_from(b, p).ok().map(|(end, _)| end)
}

/// The general string loop, from `p` inside the string body: the end of the
/// string and whether it holds escapes.
#[inline(never)]
pub(super) fn string_from(b: &[u8], p: usize) -> Res<(usize, bool)> {
    string_loop::<true>(b, p)
}

/// [`string_from`]; `BLOCKS = false` never hands long text to the 64-byte block
/// walk ([`simd::text`]): the reference it is tested against.
#[inline(always)]
fn string_loop<const BLOCKS: bool>(b: &[u8], mut p: usize) -> Res<(usize, bool)> {
    let mut escaped = false;
    // Text gets the block walk from its first escape 64 bytes into the string
    // (short strings never), and again 64 bytes after the walk handed back.
    let mut blocks_from = p + 64;
    loop {
        let from = p;
        p = simd::find_special(b, p);
        tick(1 + (p - from) / 16);
        match b.get(p) {
            Some(b'"') => return Ok((p + 1, escaped)),
            Some(b'\\') => {
                escaped = true;
                if BLOCKS && p >= blocks_from {
                    match simd::text(b, p) {
                        simd::text::Text::End(end) => return Ok((end, true)),
                        simd::text::Text::Resume(q) => {
                            blocks_from = q + 64;
                            if q > p {
                                p = q;
                                continue;
                            }
                        }
                    }
                }
                p = match unescape::check_escape(b, p) {
                    Some(next) => next,
                    None => return Err(Fail::at(Reason::InvalidEscape, p)),
                };
            }
            Some(&c) if c < 0x20 => return Err(Fail::at(Reason::ControlCharacter, p)),
            Some(_) => {
                p = match utf8_char_end(b, p) {
                    Some(next) => next,
                    None => return Err(Fail::at(Reason::InvalidUtf8, p)),
                };
            }
            None => return Err(Fail::at(Reason::UnexpectedEnd, p)),
        }
    }
}

/// If a valid UTF-8 scalar value (RFC 3629) starts at `p`, the index after it.
#[inline]
pub(crate) fn utf8_char_end(b: &[u8], p: usize) -> Option<usize> {
    let c0 = *b.get(p)?;
    let cont =
        |i: usize, lo: u8, hi: u8| matches!(b.get(p + i), Some(&c) if (lo..=hi).contains(&c));
    let ok = match c0 {
        0xC2..=0xDF => cont(1, 0x80, 0xBF).then_some(2),
        0xE0 => (cont(1, 0xA0, 0xBF) && cont(2, 0x80, 0xBF)).then_some(3),
        0xE1..=0xEC | 0xEE..=0xEF => (cont(1, 0x80, 0xBF) && cont(2, 0x80, 0xBF)).then_some(3),
        0xED => (cont(1, 0x80, 0x9F) && cont(2, 0x80, 0xBF)).then_some(3),
        0xF0 => (cont(1, 0x90, 0xBF) && cont(2, 0x80, 0xBF) && cont(3, 0x80, 0xBF)).then_some(4),
        0xF1..=0xF3 => {
            (cont(1, 0x80, 0xBF) && cont(2, 0x80, 0xBF) && cont(3, 0x80, 0xBF)).then_some(4)
        }
        0xF4 => (cont(1, 0x80, 0x8F) && cont(2, 0x80, 0xBF) && cont(3, 0x80, 0xBF)).then_some(4),
        _ => None,
    };
    ok.map(|n| p + n)
}

#[cfg(test)]
mod text_tests {
    use super::string_loop;

    /// Long strings with escapes take the 64-byte block walk; their verdict (the
    /// end, or the error's reason and offset) equals the general loop's, on
    /// thousands of generated bodies mixing every escape, bad escapes, control
    /// bytes, UTF-8 of every length, invalid UTF-8 and missing closing quotes,
    /// placed at every offset of a block.
    #[test]
    fn block_walk_matches_the_general_loop() {
        let mut next = crate::test_rng::lcg(0x7e47_u64);
        let good: [&[u8]; 14] = [
            b"a",
            b"fn main() {",
            b"\\n",
            b"\\t",
            b"\\\"",
            b"\\\\",
            b"\\\\\\\\",
            b"\\/\\b\\f\\r",
            b"\\u00e9",
            b"\\uD83D\\uDE00",
            "é".as_bytes(),
            "€".as_bytes(),
            "😀".as_bytes(),
            b"0123456789abcdefghijklmnopqrstuvwxyz ",
        ];
        let bad: [&[u8]; 9] = [
            b"\\x",
            b"\\u12g4",
            b"\\u12",
            b"\x01",
            b"\x1f",
            b"\xff",
            b"\xc3",
            b"\xed\xa0\x80",
            b"\\",
        ];
        let rounds = if cfg!(miri) { 30 } else { 6000 };
        let mut blocks_taken = 0;
        for round in 0..rounds {
            let mut s = vec![b' '; next() % 70];
            let start = s.len();
            let target = 64 + next() % 400;
            while s.len() - start < target {
                s.extend_from_slice(good[next() % good.len()]);
                if round % 3 == 0 && next().is_multiple_of(40) {
                    s.extend_from_slice(bad[next() % bad.len()]);
                }
            }
            if !next().is_multiple_of(8) {
                s.push(b'"');
            }
            s.extend(std::iter::repeat_n(b'x', next() % 80));
            let fast = string_loop::<true>(&s, start);
            let slow = string_loop::<false>(&s, start);
            assert_eq!(
                format!("{fast:?}"),
                format!("{slow:?}"),
                "{}",
                String::from_utf8_lossy(&s)
            );
            blocks_taken += usize::from(fast.is_ok());
        }
        assert!(blocks_taken > rounds / 2, "too few valid strings generated");
    }

    /// `piece` placed `at` bytes after a string's first escape (64 bytes in): the
    /// block walk's verdict equals the general loop's, and a valid string ends in
    /// the walk itself (no hand-back: the letter masks let every valid escape and
    /// character through).
    fn check_piece(piece: &[u8], at: usize) {
        let mut s = vec![b'a'; 70];
        let start = 1;
        let p = s.len();
        s.extend_from_slice(b"\\n");
        s.resize(p + at, b'b');
        s.extend_from_slice(piece);
        s.resize(p + 200, b'c');
        s.push(b'"');
        s.resize(s.len() + 70, b' ');
        let fast = string_loop::<true>(&s, start);
        let slow = string_loop::<false>(&s, start);
        let show = || format!("{:?} at {at}", String::from_utf8_lossy(piece));
        assert_eq!(format!("{fast:?}"), format!("{slow:?}"), "{}", show());
        if let Ok((end, _)) = slow {
            let walk = super::simd::text(&s, p);
            assert_eq!(walk, super::simd::text::Text::End(end), "{}", show());
        }
    }

    /// Every byte after a backslash, at every offset of two blocks: the simple
    /// letters pass in the masks, `u` through its check, anything else hands back.
    #[test]
    fn every_escape_letter_at_every_offset() {
        let (letters, offsets) = if cfg!(miri) {
            (&b"nu\"/x\x00\xc3"[..], 60..68)
        } else {
            (&(0..=255u8).collect::<Vec<u8>>()[..], 2..140)
        };
        for &c in letters {
            for at in offsets.clone() {
                let hex = if c == b'u' { &b"00e9"[..] } else { b"" };
                check_piece(&[&[b'\\', c][..], hex].concat(), at);
            }
        }
    }

    /// Backslash runs of 1 to 6 before a quote, a simple letter, `b`, `u` and
    /// a bad letter (the walk's fast check passes a quote only right after a
    /// lone backslash, and hands the others to the exact path), at every offset
    /// across block boundaries.
    #[test]
    fn backslash_runs_before_quotes_and_letters() {
        let runs = if cfg!(miri) { 1..3 } else { 1..7 };
        let offsets = if cfg!(miri) { 61..66 } else { 2..140 };
        for run in runs {
            for end in [&b"\""[..], b"n", b"b", b"u00e9", b"x", b"\\"] {
                let piece = [&b"\\".repeat(run)[..], end].concat();
                for at in offsets.clone() {
                    check_piece(&piece, at);
                }
            }
        }
    }

    /// `\u` escapes (valid, surrogates, bad digits, cut by the closing quote),
    /// escaped backslashes, non-ASCII characters of every length, invalid UTF-8
    /// and control bytes, at every offset across block boundaries.
    #[test]
    fn escapes_and_utf8_across_blocks() {
        let pieces: [&[u8]; 26] = [
            b"\\u00e9",
            b"\\uD83D\\uDE00",
            b"\\uABCDx",
            b"\\uabcd\\n",
            b"\\u12g4",
            b"\\u0\"",
            b"\\U0041",
            b"\\\\\\\"",
            b"\\\\\\\\\\",
            "é".as_bytes(),
            "€\\t".as_bytes(),
            "😀é€".as_bytes(),
            "\u{7ff}\u{800}\u{ffff}\u{10000}\u{10ffff}".as_bytes(),
            b"\xc3a",
            b"\xe2\x82",
            b"\xf0\x9f\x98",
            b"\xed\xa0\x80",
            b"\xc0\x80",
            b"\xf4\x90\x80\x80",
            b"\x80",
            b"\xff",
            b"\x01",
            b"\x1f",
            b"\x7f",
            b"\\\xc3\xa9",
            b"\\\x01",
        ];
        let offsets = if cfg!(miri) { 61..66 } else { 2..140 };
        for piece in pieces {
            for at in offsets.clone() {
                check_piece(piece, at);
            }
        }
    }
}
