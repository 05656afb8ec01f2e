//! Appending JSON tokens to a byte buffer: escaped strings, integers, floats,
//! booleans and `null`.
//!
//! Each function appends to a caller's `Vec<u8>` and allocates nothing beyond that
//! vector's own growth: digits are laid out in a stack buffer first, and no `std::fmt`
//! machinery runs.
#![forbid(unsafe_code)]

use core::fmt;

use serde_json::ser::Formatter;

mod ser;

pub(crate) use ser::{Error as SerError, to_vec_into};

/// The byte after the backslash for bytes that must be escaped, `u` for those written
/// as `\u00XX`, and 0 for bytes copied as they are.
static ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = b'u';
        i += 1;
    }
    t[0x08] = b'b';
    t[0x09] = b't';
    t[0x0a] = b'n';
    t[0x0c] = b'f';
    t[0x0d] = b'r';
    t[b'"' as usize] = b'"';
    t[b'\\' as usize] = b'\\';
    t
};

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends `s` as a JSON string, quotes included.
///
/// `"` and `\` are escaped with a backslash; control characters (below U+0020) as
/// `\b \t \n \f \r` or `\u00XX`; every other character, non-ASCII included, is copied
/// as it is. The output is always a valid JSON string that decodes to `s`.
///
/// Always inlined, with short paths for the common cases: an ASCII string up to
/// 16 bytes with nothing to escape (keys, enum names, ids, short values) is laid
/// out between its quotes in a fixed buffer, checked there with one 16-byte SIMD
/// step (the buffer's padding is spaces, which need nothing) and appended as one
/// fixed-size copy; 17 to 32 bytes take two SIMD steps on the string itself. The
/// rest take a call to [`write_str_escaped_long`].
#[inline(always)]
pub(crate) fn write_str_escaped(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    if crate::simd::HAS_MASK16 && bytes.len() <= 16 {
        let mut buf = [b' '; 18];
        buf[0] = b'"';
        let n = copy_short(&mut buf[1..17], bytes);
        // The string's bytes and spaces after them: any bit is one of the string's
        // (a byte to escape, or a non-ASCII one, which `mask16` flags too).
        if crate::simd::mask16(&buf, 1) == Some(0) {
            buf[n + 1] = b'"';
            extend_prefix(out, &buf, n + 2);
            return;
        }
    } else if crate::simd::HAS_MASK16
        && bytes.len() <= 32
        && crate::simd::mask16(bytes, 0) == Some(0)
        && crate::simd::mask16(bytes, bytes.len() - 16) == Some(0)
    {
        // 17 to 32 bytes of plain ASCII (hex quantities, hashes' halves...): the
        // first and last 16 bytes (overlapping), between the quotes.
        let n = bytes.len();
        let mut buf = [b'"'; 34];
        buf[1..17].copy_from_slice(&bytes[..16]);
        buf[n - 15..n + 1].copy_from_slice(&bytes[n - 16..]);
        extend_prefix(out, &buf, n + 2);
        return;
    }
    write_str_escaped_long(out, s);
}

/// [`write_str_escaped`] for the strings its short paths do not take. Short
/// ones with something to escape or a non-ASCII byte (or every short one without
/// SIMD) take two word checks, which let non-ASCII bytes through, then a
/// fixed-size copy. The rest `find_special`, which stops at the bytes to escape,
/// and at non-ASCII ones, which are copied with the run around them.
#[inline(never)]
fn write_str_escaped_long(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    let n = bytes.len();
    if n <= 16 && !short_needs_escape::<false>(bytes) {
        let mut buf = [b'"'; 18];
        let n = copy_short(&mut buf[1..17], bytes);
        buf[n + 1] = b'"';
        extend_prefix(out, &buf, n + 2);
        return;
    }
    let i = crate::simd::find_special(bytes, 0);
    out.reserve(n + 2);
    out.push(b'"');
    if i == n {
        // Nothing to escape: one copy between the quotes.
        out.extend_from_slice(bytes);
    } else {
        escape_from(out, bytes, i);
    }
    out.push(b'"');
}

/// Appends a member name: `prefix` first (the object's `{` before its first
/// member, `,` before the others), then `key` as a JSON string (escaped as by
/// [`write_str_escaped`]), then `:`. Names up to 32 bytes with nothing to escape
/// (struct fields) are laid out in a fixed buffer and appended as one copy of
/// their exact length (up to 16 bytes, and 17 to 32, each its own path, so that
/// the short names' path stays as short).
///
/// Always inlined: its caller is the serializer's struct field, whose name is a
/// literal once serde's derived code is inlined, so that the checks fold away and
/// the copy has a constant length (fixed-size moves; a name that is not a
/// constant there would cost a `memcpy` call); names with something to escape
/// take a call.
#[inline(always)]
pub(crate) fn write_member_key(out: &mut Vec<u8>, prefix: u8, key: &str) {
    let bytes = key.as_bytes();
    if bytes.len() <= 16 && !short_needs_escape::<false>(bytes) {
        let mut buf = [b','; 20];
        buf[0] = prefix;
        buf[1] = b'"';
        let n = copy_short(&mut buf[2..18], bytes);
        buf[n + 2] = b'"';
        buf[n + 3] = b':';
        // `n` is a constant here (the key is a literal): a fixed-size copy.
        out.extend_from_slice(&buf[..n + 4]);
        return;
    }
    let n = bytes.len();
    if (17..=32).contains(&n)
        && !short_needs_escape::<false>(&bytes[..16])
        && !short_needs_escape::<false>(&bytes[n - 16..])
    {
        // 17 to 32 bytes (`structuredContent`, `protocolVersion`...): the first
        // and last 16 (overlapping), checked and copied the same way.
        let mut buf = [b','; 36];
        buf[0] = prefix;
        buf[1] = b'"';
        buf[2..18].copy_from_slice(&bytes[..16]);
        buf[n - 14..n + 2].copy_from_slice(&bytes[n - 16..]);
        buf[n + 2] = b'"';
        buf[n + 3] = b':';
        out.extend_from_slice(&buf[..n + 4]);
        return;
    }
    write_member_key_escaped(out, prefix, key);
}

/// [`write_member_key`] for names longer than 32 bytes or with something to
/// escape.
#[inline(never)]
fn write_member_key_escaped(out: &mut Vec<u8>, prefix: u8, key: &str) {
    out.push(prefix);
    write_str_escaped_long(out, key);
    out.push(b':');
}

/// Copies `src` (at most 16 bytes, at most `dst.len()`) to the start of `dst`
/// with fixed-size moves (two overlapping words, or single bytes for fewer than
/// four), not a call to `memcpy`; returns `src.len()`.
#[inline(always)]
pub(crate) fn copy_short(dst: &mut [u8], src: &[u8]) -> usize {
    let n = src.len();
    debug_assert!(n <= 16 && n <= dst.len());
    if n >= 8 {
        dst[..8].copy_from_slice(&src[..8]);
        dst[n - 8..n].copy_from_slice(&src[n - 8..]);
    } else if n >= 4 {
        dst[..4].copy_from_slice(&src[..4]);
        dst[n - 4..n].copy_from_slice(&src[n - 4..]);
    } else if n > 0 {
        dst[0] = src[0];
        dst[n / 2] = src[n / 2];
        dst[n - 1] = src[n - 1];
    }
    n
}

/// Appends the first `n` bytes of the small fixed-size `buf`: the whole array is
/// copied (a few fixed-size moves, no `memcpy` call) and the excess cut off again.
#[inline(always)]
pub(crate) fn extend_prefix<const N: usize>(out: &mut Vec<u8>, buf: &[u8; N], n: usize) {
    debug_assert!(n <= N);
    let len = out.len();
    out.extend_from_slice(buf);
    out.truncate(len + n);
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// Whether any byte of `v` must be escaped (`"`, `\\` or below 0x20); non-ASCII
/// bytes need not. The SWAR tests may misplace a hit, but never invent one.
#[inline(always)]
fn word_needs_escape(v: u64) -> bool {
    let has_zero = |x: u64| x.wrapping_sub(LO) & !x & HI;
    let below_20 = v.wrapping_sub(LO * 0x20) & !v & HI;
    (has_zero(v ^ (LO * b'"' as u64)) | has_zero(v ^ (LO * b'\\' as u64)) | below_20) != 0
}

/// Whether a string of at most 16 bytes has a byte to escape (with `HIGH`, also
/// any byte >= 0x80): two overlapping words cover it (bytes in both are checked
/// twice, which is harmless).
#[inline(always)]
fn short_needs_escape<const HIGH: bool>(b: &[u8]) -> bool {
    debug_assert!(b.len() <= 16);
    let n = b.len();
    let v = if n >= 8 {
        let w = |at: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&b[at..at + 8]);
            u64::from_le_bytes(w)
        };
        let (a, z) = (w(0), w(n - 8));
        return word_needs_escape(a) || word_needs_escape(z) || (HIGH && (a | z) & HI != 0);
    } else if n >= 4 {
        let w = |at: usize| {
            let mut w = [0u8; 4];
            w.copy_from_slice(&b[at..at + 4]);
            u64::from(u32::from_le_bytes(w))
        };
        w(0) | (w(n - 4) << 32)
    } else if n > 0 {
        // 1 to 3 bytes: first, middle and last cover them; spaces fill the rest.
        u64::from_le_bytes([b[0], b[n / 2], b[n - 1], b' ', b' ', b' ', b' ', b' '])
    } else {
        return false;
    };
    word_needs_escape(v) || (HIGH && v & HI != 0)
}

/// Whether every byte of `b` is ASCII and none needs attention in a JSON string
/// (no `"`, `\\` or control byte): such bytes are a string body that is its own
/// value and is written as it is. Strings up to 16 bytes take two word checks,
/// up to 64 bytes 16-byte SIMD steps (the last one overlapping), longer ones
/// `find_special`.
#[inline(always)]
pub(crate) fn is_plain_ascii(b: &[u8]) -> bool {
    let n = b.len();
    if n <= 16 {
        return !short_needs_escape::<true>(b);
    }
    if crate::simd::HAS_MASK16 && n <= 64 {
        let mut i = 0;
        while i + 16 < n {
            if crate::simd::mask16(b, i) != Some(0) {
                return false;
            }
            i += 16;
        }
        // The final 16 bytes (overlapping the step before; `n > 16`).
        return crate::simd::mask16(b, n - 16) == Some(0);
    }
    crate::simd::find_special(b, 0) == n
}

/// Appends `s` escaped as in [`write_str_escaped`], without the quotes (one piece of
/// a string written in several).
pub(crate) fn write_str_contents(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    escape_from(out, bytes, crate::simd::find_special(bytes, 0));
}

/// Appends `bytes` escaped, given `i`, the first index `find_special` stops at.
fn escape_from(out: &mut Vec<u8>, bytes: &[u8], mut i: usize) {
    let mut start = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let esc = ESCAPE[b as usize];
        if esc != 0 {
            out.extend_from_slice(&bytes[start..i]);
            if esc == b'u' {
                out.extend_from_slice(&[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[(b >> 4) as usize],
                    HEX[(b & 0xf) as usize],
                ]);
            } else {
                out.extend_from_slice(&[b'\\', esc]);
            }
            start = i + 1;
        }
        i = crate::simd::find_special(bytes, i + 1);
    }
    out.extend_from_slice(&bytes[start..]);
}

/// The two-digit strings `00` to `99`, back to back.
static DIGITS: [u8; 200] = {
    let mut t = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        t[2 * i] = b'0' + (i / 10) as u8;
        t[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    t
};

/// Appends `v` in decimal.
#[inline]
pub(crate) fn write_u64(out: &mut Vec<u8>, v: u64) {
    if v < 100 {
        // One or two digits (counts, small ids, error offsets): fixed-size copies.
        let i = 2 * v as usize;
        if v < 10 {
            out.push(DIGITS[i + 1]);
        } else {
            out.extend_from_slice(&DIGITS[i..i + 2]);
        }
        return;
    }
    write_digits(out, v, false);
}

/// Appends `v` in decimal, with a leading `-` if negative.
#[inline]
pub(crate) fn write_i64(out: &mut Vec<u8>, v: i64) {
    if v >= 0 {
        // The small ones (results, counts) take `write_u64`'s fixed copies.
        return write_u64(out, v.unsigned_abs());
    }
    write_digits(out, v.unsigned_abs(), true);
}

/// Appends `-` if `negative`, then the decimal digits of `v`: laid out from the
/// start of a fixed buffer (their count is known first) and appended as one
/// fixed-size copy, cut to length (no `memcpy` call for the length that varies).
#[inline(never)]
fn write_digits(out: &mut Vec<u8>, v: u64, negative: bool) {
    // u64::MAX has 20 digits; |i64::MIN| 19, after the sign.
    let digits = v.checked_ilog10().map_or(1, |l| l as usize + 1);
    let n = usize::from(negative) + digits;
    let mut buf = [b'-'; 20];
    format_u64(&mut buf, n, v);
    extend_prefix(out, &buf, n);
}

/// Writes the digits of `v` into `buf`, the last one at `end - 1` (`end` is at
/// least their count).
#[inline(always)]
fn format_u64(buf: &mut [u8; 20], end: usize, mut v: u64) {
    let mut i = end;
    while v >= 10_000 {
        let rem = (v % 10_000) as usize;
        v /= 10_000;
        i -= 4;
        buf[i..i + 2].copy_from_slice(&DIGITS[2 * (rem / 100)..2 * (rem / 100) + 2]);
        buf[i + 2..i + 4].copy_from_slice(&DIGITS[2 * (rem % 100)..2 * (rem % 100) + 2]);
    }
    let mut v = v as usize; // < 10 000
    if v >= 100 {
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGITS[2 * (v % 100)..2 * (v % 100) + 2]);
        v /= 100;
    }
    if v >= 10 {
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGITS[2 * v..2 * v + 2]);
    } else {
        i -= 1;
        buf[i] = b'0' + v as u8;
    }
}

/// A float with no JSON representation (NaN or an infinity) was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NonFinite;

impl fmt::Display for NonFinite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NaN and infinities have no JSON representation")
    }
}

impl std::error::Error for NonFinite {}

/// Appends a finite `v` as the shortest decimal that reads back as the same `f64`,
/// laid out as `serde_json` does: `1.0`, `0.1`, `-0.0`, `0.00001`, `1e-6`, `1.5e+16`
/// (plain decimals from 1e-5 up to 1e16, exponent form outside that range).
///
/// # Errors
/// [`NonFinite`] for NaN and the infinities, which JSON cannot express; nothing is
/// appended then.
pub(crate) fn write_f64(out: &mut Vec<u8>, v: f64) -> Result<(), NonFinite> {
    if !v.is_finite() {
        return Err(NonFinite);
    }
    // serde_json's formatter: a shortest round-trip algorithm (the `zmij` crate) into a
    // stack buffer, then one `write_all`, which cannot fail on a `Vec`.
    serde_json::ser::CompactFormatter
        .write_f64(out, v)
        .map_err(|_| NonFinite)
}

/// Appends `true` or `false`: a copy of constant length either way (no `memcpy`
/// call for a length that depends on `v`).
#[inline]
pub(crate) fn write_bool(out: &mut Vec<u8>, v: bool) {
    if v {
        out.extend_from_slice(b"true");
    } else {
        out.extend_from_slice(b"false");
    }
}

/// Appends `null`.
#[inline]
pub(crate) fn write_null(out: &mut Vec<u8>) {
    out.extend_from_slice(b"null");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escaped(s: &str) -> String {
        let mut out = Vec::new();
        write_str_escaped(&mut out, s);
        String::from_utf8(out).expect("escaped output is UTF-8")
    }

    fn round_trips(s: &str) {
        let json = escaped(s);
        let back: String = serde_json::from_str(&json).expect(&json);
        assert_eq!(back, s, "{json}");
    }

    #[test]
    #[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
    fn every_ascii_byte() {
        for b in 0u8..=0x7f {
            let c = b as char;
            let s = c.to_string();
            let expected = match b {
                b'"' => "\"\\\"\"".to_owned(),
                b'\\' => "\"\\\\\"".to_owned(),
                0x08 => "\"\\b\"".to_owned(),
                0x09 => "\"\\t\"".to_owned(),
                0x0a => "\"\\n\"".to_owned(),
                0x0c => "\"\\f\"".to_owned(),
                0x0d => "\"\\r\"".to_owned(),
                0..0x20 => format!("\"\\u{b:04x}\""),
                _ => format!("\"{c}\""),
            };
            assert_eq!(escaped(&s), expected, "byte {b:#04x}");
            round_trips(&s);
            round_trips(&format!("a{c}b"));
            round_trips(&format!("{c}{c}{c}"));
        }
        let all: String = (0u8..=0x7f).map(char::from).collect();
        round_trips(&all);
        // What serde_json writes for the same string, byte for byte.
        assert_eq!(escaped(&all), serde_json::to_string(&all).unwrap());
    }

    #[test]
    #[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
    fn specials_at_every_position_of_long_strings() {
        // Long enough for the SIMD kernels, with the special byte at each offset.
        for special in ['"', '\\', '\n', '\0', '\u{1f}', 'é', '😀', '\u{7f}'] {
            for len in [31usize, 32, 33, 64, 100] {
                for pos in 0..len {
                    let mut s: String = (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
                    s.replace_range(pos..pos + 1, &special.to_string());
                    round_trips(&s);
                    assert_eq!(escaped(&s), serde_json::to_string(&s).unwrap());
                }
            }
        }
    }

    /// Member names of every length up to 40 bytes (word checks up to 16 and
    /// up to 32, the general path beyond), with and without the comma, plain
    /// and with a byte to escape (or a non-ASCII one) at every position, are
    /// written as serde_json writes them.
    #[test]
    #[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
    fn member_keys_of_every_length() {
        for len in 0usize..=40 {
            let plain: String = (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
            let mut keys = vec![plain.clone()];
            for special in ['"', '\\', '\n', '\u{1f}', 'é'] {
                for pos in 0..len {
                    let mut k = plain.clone();
                    k.replace_range(pos..pos + 1, &special.to_string());
                    keys.push(k);
                }
            }
            for key in keys {
                for comma in [false, true] {
                    let mut out = b"{\"x\":1".to_vec();
                    out.truncate(if comma { 6 } else { 0 });
                    super::write_member_key(&mut out, if comma { b',' } else { b'{' }, &key);
                    let want = format!(
                        "{}{}:",
                        if comma { "{\"x\":1," } else { "{" },
                        serde_json::to_string(&key).unwrap()
                    );
                    assert_eq!(String::from_utf8(out).unwrap(), want, "{key:?}");
                }
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
    fn specials_at_every_position_of_short_strings() {
        // The word checks of strings up to 16 bytes, with the special byte at each
        // offset, next to every other byte value's character.
        for special in [
            '"', '\\', '\n', '\0', '\u{1f}', 'é', '😀', '\u{7f}', ' ', '!', '#', '[', ']',
        ] {
            for len in 1usize..=18 {
                for pos in 0..len {
                    let mut s: String = (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
                    s.replace_range(pos..pos + 1, &special.to_string());
                    round_trips(&s);
                    assert_eq!(escaped(&s), serde_json::to_string(&s).unwrap(), "{s:?}");
                }
            }
        }
        for b in 0u8..=0x7f {
            for len in 1usize..=17 {
                let s: String = std::iter::repeat_n(char::from(b), len).collect();
                assert_eq!(escaped(&s), serde_json::to_string(&s).unwrap(), "{s:?}");
                let s = format!("{}{}", "x".repeat(len - 1), char::from(b));
                assert_eq!(escaped(&s), serde_json::to_string(&s).unwrap(), "{s:?}");
            }
        }
    }

    /// Strings of every length up to 40 bytes (the inline 16-byte SIMD check and
    /// its spaces, the word checks, the two 16-byte steps up to 32, the general
    /// path beyond), each byte value at every position (controls, `"`, `\\`,
    /// DEL, and non-ASCII characters of two to four bytes), are written as
    /// serde_json writes them, after what the vector already holds.
    #[test]
    #[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
    fn strings_of_every_length() {
        let mut specials: Vec<String> = (0u8..0x80).map(|b| char::from(b).to_string()).collect();
        specials.extend(["é", "€", "😀", "\u{2028}"].map(String::from));
        for len in 0usize..=40 {
            let plain: String = (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
            let mut all = vec![plain.clone()];
            for special in &specials {
                for pos in 0..len {
                    let mut s = plain.clone();
                    s.replace_range(pos..pos + 1, special);
                    all.push(s);
                }
            }
            for s in all {
                let mut out = b"[1,".to_vec();
                write_str_escaped(&mut out, &s);
                let want = format!("[1,{}", serde_json::to_string(&s).unwrap());
                assert_eq!(String::from_utf8(out).unwrap(), want, "{s:?}");
            }
        }
    }

    /// `is_plain_ascii` (word checks, 16-byte steps, `find_special`) says yes
    /// exactly when `find_special` finds nothing: every byte value at every
    /// position of strings of 1 to 80 bytes.
    #[test]
    #[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
    fn plain_ascii_agrees_with_find_special() {
        for len in 0usize..=80 {
            let base: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(is_plain_ascii(&base));
            for pos in 0..len {
                for b in 0u8..=255 {
                    let mut s = base.clone();
                    s[pos] = b;
                    let want = crate::simd::find_special(&s, 0) == len;
                    assert_eq!(
                        is_plain_ascii(&s),
                        want,
                        "len {len}, byte {b:#04x} at {pos}"
                    );
                }
            }
        }
    }

    #[test]
    fn unicode_passes_through() {
        for s in [
            "",
            "héllo",
            "✓ done",
            "😀",
            "日本語のテキスト",
            "\u{2028}\u{2029}",
            "\u{ffff}",
            "a\u{7f}b",
        ] {
            let json = escaped(s);
            assert_eq!(json, format!("\"{s}\""));
            round_trips(s);
        }
        round_trips("mixed \"é\"\n\t\\ 😀\u{1}");
    }

    #[test]
    fn appends_without_reallocating() {
        let mut out = Vec::with_capacity(256);
        out.extend_from_slice(b"[");
        let ptr = out.as_ptr();
        write_str_escaped(&mut out, "a\"b\n");
        out.push(b',');
        write_i64(&mut out, i64::MIN);
        out.push(b',');
        write_u64(&mut out, u64::MAX);
        out.push(b',');
        write_f64(&mut out, -1.5e-300).unwrap();
        out.push(b',');
        write_bool(&mut out, true);
        out.push(b',');
        write_bool(&mut out, false);
        out.push(b',');
        write_null(&mut out);
        out.push(b']');
        assert_eq!(out.as_ptr(), ptr);
        assert_eq!(out.capacity(), 256);
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            "[\"a\\\"b\\n\",-9223372036854775808,18446744073709551615,-1.5e-300,true,false,null]"
        );
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v[2], serde_json::json!(u64::MAX));
    }

    fn integers() -> Vec<u64> {
        let mut v = vec![
            0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 9999, 10_000, 10_001, 65_535,
        ];
        v.extend(0..=200); // every one- and two-digit number, and the three after
        let mut p = 1u64;
        while let Some(next) = p.checked_mul(10) {
            v.extend([p - 1, p, p + 1, next - 1]);
            p = next;
        }
        v.extend([
            u64::from(u32::MAX),
            u64::MAX - 1,
            u64::MAX,
            i64::MAX as u64,
            1 << 63,
        ]);
        let mut x = 0x1234_5678_9abc_def0u64;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            v.push(x);
            v.push(x >> (x % 64));
        }
        v
    }

    #[test]
    #[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
    fn unsigned_integers() {
        for n in integers() {
            let mut out = Vec::new();
            write_u64(&mut out, n);
            assert_eq!(out, n.to_string().as_bytes());
            assert_eq!(serde_json::from_slice::<u64>(&out).unwrap(), n);
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
    fn signed_integers() {
        let mut all: Vec<i64> = vec![i64::MIN, i64::MIN + 1, i64::MAX, -1, 0, 1, -10, -9, -100];
        for n in integers() {
            all.push(n as i64);
            all.push((n >> 1) as i64);
            all.push(-((n >> 1) as i64));
        }
        for n in all {
            let mut out = Vec::new();
            write_i64(&mut out, n);
            assert_eq!(out, n.to_string().as_bytes());
            assert_eq!(serde_json::from_slice::<i64>(&out).unwrap(), n);
        }
    }

    fn float_text(v: f64) -> String {
        let mut out = Vec::new();
        write_f64(&mut out, v).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn float_layout() {
        for (v, s) in [
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (-1.5, "-1.5"),
            (0.1, "0.1"),
            (0.3, "0.3"),
            (100.0, "100.0"),
            (1e15, "1000000000000000.0"),
            (1e16, "1e+16"),
            (1e300, "1e+300"),
            (1e-5, "0.00001"),
            (1e-7, "1e-7"),
            (5e-324, "5e-324"),
            (1.5e-7, "1.5e-7"),
            (f64::MAX, "1.7976931348623157e+308"),
        ] {
            assert_eq!(float_text(v), s);
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
    fn floats_round_trip() {
        let mut values = vec![
            0.0,
            -0.0,
            1.0,
            0.1,
            0.2 + 0.1,
            1.0 / 3.0,
            f64::MIN_POSITIVE,
            f64::MIN_POSITIVE / 2.0, // subnormal
            5e-324,
            f64::MAX,
            f64::MIN,
            f64::EPSILON,
            123_456_789.012_345_67,
            9_007_199_254_740_993.0,
            1e15,
            1e16,
            1e17,
            1e-5,
            1e-6,
            1e21,
            1e22,
            1e23,
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let f = f64::from_bits(x);
            if f.is_finite() {
                values.push(f);
            }
            values.push((x >> 11) as f64 / (1u64 << 30) as f64);
        }
        for v in values {
            let s = float_text(v);
            // Read back with the correctly rounding std parser (serde_json's default
            // parser may be off by one ulp).
            let back: f64 = s.parse().expect(&s);
            assert_eq!(back.to_bits(), v.to_bits(), "{v:e} written as {s}");
            // A JSON number, and the same bytes serde_json writes.
            assert!(
                serde_json::from_str::<serde_json::Value>(&s)
                    .unwrap()
                    .is_number()
            );
            assert_eq!(s, serde_json::to_string(&v).unwrap());
        }
    }

    #[test]
    fn non_finite_floats_refused() {
        for v in [f64::NAN, -f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let mut out = b"x".to_vec();
            assert_eq!(write_f64(&mut out, v), Err(NonFinite));
            assert_eq!(out, b"x");
        }
        assert!(!NonFinite.to_string().is_empty());
    }
}
