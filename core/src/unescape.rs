//! JSON string escapes: checking them while scanning, and decoding them only
//! where a name needs it (member keys, method names), without allocating.

#[inline]
fn hex(b: u8) -> Option<u16> {
    match b {
        b'0'..=b'9' => Some((b - b'0') as u16),
        b'a'..=b'f' => Some((b - b'a' + 10) as u16),
        b'A'..=b'F' => Some((b - b'A' + 10) as u16),
        _ => None,
    }
}

#[inline]
fn hex4(b: &[u8], p: usize) -> Option<u16> {
    let d = b.get(p..p + 4)?;
    Some(hex(d[0])? << 12 | hex(d[1])? << 8 | hex(d[2])? << 4 | hex(d[3])?)
}

/// Whether `c` after a backslash is a whole escape (every escape letter but
/// `u`, which needs four hex digits).
#[inline(always)]
pub(crate) fn is_short_escape(c: u8) -> bool {
    matches!(c, b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't')
}

/// `b[p]` is a backslash: if a valid JSON escape starts there, the index after it.
/// (Lone surrogate escapes are valid JSON.)
#[inline]
pub(crate) fn check_escape(b: &[u8], p: usize) -> Option<usize> {
    match *b.get(p + 1)? {
        c if is_short_escape(c) => Some(p + 2),
        b'u' => hex4(b, p + 2).map(|_| p + 6),
        _ => None,
    }
}

/// Decodes the inside of a validated JSON string (between its quotes), handing
/// the UTF-8 bytes to `emit` piece by piece; stops early when `emit` returns
/// `false`. Returns `(completed, exact)`: `exact` is `false` when a lone
/// surrogate escape was replaced by U+FFFD.
fn decode(inner: &[u8], mut emit: impl FnMut(&[u8]) -> bool) -> (bool, bool) {
    let mut exact = true;
    let mut i = 0;
    while i < inner.len() {
        crate::parse::ops::tick(1);
        let run_end = inner[i..]
            .iter()
            .position(|&c| c == b'\\')
            .map_or(inner.len(), |k| i + k);
        if run_end > i {
            if !emit(&inner[i..run_end]) {
                return (false, exact);
            }
            i = run_end;
            continue;
        }
        // inner[i] == '\\'; the scanner validated the escape.
        let (ch, next): (u32, usize) = match inner.get(i + 1) {
            Some(b'u') => {
                let Some(u) = hex4(inner, i + 2) else {
                    return (false, false);
                };
                match u {
                    0xD800..=0xDBFF => {
                        let low = (inner.get(i + 6) == Some(&b'\\')
                            && inner.get(i + 7) == Some(&b'u'))
                        .then(|| hex4(inner, i + 8))
                        .flatten()
                        .filter(|l| (0xDC00..=0xDFFF).contains(l));
                        match low {
                            Some(l) => (
                                0x10000 + ((u as u32 - 0xD800) << 10) + (l as u32 - 0xDC00),
                                i + 12,
                            ),
                            None => {
                                exact = false;
                                (0xFFFD, i + 6)
                            }
                        }
                    }
                    0xDC00..=0xDFFF => {
                        exact = false;
                        (0xFFFD, i + 6)
                    }
                    _ => (u as u32, i + 6),
                }
            }
            Some(&c) => {
                let d = match c {
                    b'b' => 0x08,
                    b'f' => 0x0C,
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    other => other, // '"', '\\', '/'
                };
                (d as u32, i + 2)
            }
            None => return (false, false),
        };
        let mut buf = [0u8; 4];
        let s = char::from_u32(ch)
            .unwrap_or('\u{FFFD}')
            .encode_utf8(&mut buf);
        if !emit(s.as_bytes()) {
            return (false, exact);
        }
        i = next;
    }
    (true, exact)
}

/// Whether the validated, escaped string body `inner` decodes exactly to `name`.
pub(crate) fn escaped_eq(inner: &[u8], name: &[u8]) -> bool {
    let mut rest = name;
    let (done, exact) = decode(inner, |piece| match rest.strip_prefix(piece) {
        Some(r) => {
            rest = r;
            true
        }
        None => false,
    });
    done && exact && rest.is_empty()
}

/// Decodes the validated, escaped string body `inner` into `out`, which must hold
/// at least [`decoded_len`] bytes (`inner.len()` always suffices: decoding never
/// grows a JSON string). Returns the decoded length and whether the decoding is
/// exact (no lone surrogate).
pub(crate) fn decode_into(inner: &[u8], out: &mut [u8]) -> (usize, bool) {
    let mut n = 0;
    let (_, exact) = decode(inner, |piece| {
        out[n..n + piece.len()].copy_from_slice(piece);
        n += piece.len();
        true
    });
    (n, exact)
}

/// The length in bytes of the validated, escaped string body `inner` once
/// decoded ([`decode_into`] writes exactly this many bytes).
pub(crate) fn decoded_len(inner: &[u8]) -> usize {
    let mut n = 0;
    decode(inner, |piece| {
        n += piece.len();
        true
    });
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(s: &str) -> (String, bool) {
        let mut out = vec![0u8; s.len()];
        let (n, exact) = decode_into(s.as_bytes(), &mut out);
        assert_eq!(decoded_len(s.as_bytes()), n, "{s}");
        (String::from_utf8(out[..n].to_vec()).unwrap(), exact)
    }

    #[test]
    fn decodes_every_escape() {
        assert_eq!(
            dec(r#"a\"b\\c\/d\be\ff\ng\rh\ti"#).0,
            "a\"b\\c/d\u{8}e\u{c}f\ng\rh\ti"
        );
        assert_eq!(dec(r"su\u0062tract"), ("subtract".into(), true));
        assert_eq!(dec(r"\uD834\uDD1E"), ("\u{1D11E}".into(), true));
        assert_eq!(dec(r"\u00e9\u20AC"), ("é€".into(), true));
        assert_eq!(dec(r"x\ud800"), ("x\u{FFFD}".into(), false));
        assert_eq!(
            dec(r"\udc00\ud800\u0041"),
            ("\u{FFFD}\u{FFFD}A".into(), false)
        );
        assert_eq!(dec(r"\ud800\ud800"), ("\u{FFFD}\u{FFFD}".into(), false));
    }

    #[test]
    fn escaped_eq_is_exact() {
        assert!(escaped_eq(br"su\u0062tract", b"subtract"));
        assert!(!escaped_eq(br"su\u0062tract", b"subtrac"));
        assert!(!escaped_eq(br"su\u0062tract", b"subtractx"));
        assert!(escaped_eq(br"\u006d\u0065thod", b"method"));
        assert!(!escaped_eq(br"\ud800", "\u{FFFD}".as_bytes()));
        assert!(escaped_eq(br"\/", b"/"));
    }

    #[test]
    fn check_escape_accepts_only_json_escapes() {
        for (s, ok) in [
            (&br"\n"[..], true),
            (br"\u12aF", true),
            (br"\u12g0", false),
            (br"\x", false),
            (br"\u12", false),
            (br"\", false),
        ] {
            assert_eq!(
                check_escape(s, 0).is_some(),
                ok,
                "{:?}",
                std::str::from_utf8(s)
            );
        }
    }
}
