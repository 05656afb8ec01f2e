//! Generated JSON for the scanner's differential tests.

/// A generated JSON value: nested arrays and objects of hex strings, keys,
/// text with escapes and UTF-8, numbers, literals, and (sometimes) whitespace.
pub(crate) fn value(next: &mut impl FnMut() -> usize, depth: usize, ws: bool, out: &mut Vec<u8>) {
    let pad = |next: &mut dyn FnMut() -> usize, out: &mut Vec<u8>| {
        if ws && next().is_multiple_of(4) {
            out.extend_from_slice([&b" "[..], b"\n", b"\t ", b"\r\n  "][next() % 4]);
        }
    };
    let long_text = "\"".to_string() + &"Zürich — naïve 😀 «text» ".repeat(12) + "\"";
    let long_ascii = "\"".to_string() + &"0123456789abcdef".repeat(12) + "\"";
    let long_escaped = "\"".to_string() + &"line of text\\n".repeat(12) + "\"";
    let scalars: [&[u8]; 29] = [
        long_text.as_bytes(),
        long_ascii.as_bytes(),
        long_escaped.as_bytes(),
        b"-1234567890123456789012345678901234567890.5e-10",
        b"\"0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef\"",
        b"\"0xf6e1d68c6c394a172235d5b854bc1346cbb25d95\"",
        b"\"latest\"",
        b"\"\"",
        b"\"caf\\u00e9 \\\"q\\\" \\n\"",
        "\"Zürich — naïve 😀\"".as_bytes(),
        b"\"0123456789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz\"",
        b"0",
        b"-0.99e-2",
        b"61909.9448",
        b"120933",
        b"1.5E+3",
        b"true",
        b"false",
        b"null",
        b"7",
        b"-0",
        b"-7",
        b"0.5e-10",
        b"-0.0E0",
        b"1e5",
        b"-123456789.123456789e+123",
        b"12345678901234",
        b"0.12345678",
        b"-98765432.1234567E-1234567",
    ];
    let kind = if depth >= 6 { 2 } else { next() % 5 };
    match kind {
        0 | 1 => {
            let (open, close) = if kind == 0 {
                (b'[', b']')
            } else {
                (b'{', b'}')
            };
            out.push(open);
            pad(next, out);
            let n = next() % 6;
            for i in 0..n {
                if i > 0 {
                    out.push(b',');
                    pad(next, out);
                }
                if kind == 1 {
                    let keys: [&[u8]; 4] =
                        [b"\"address\"", b"\"k\"", b"\"t\\u0061g\"", b"\"blockHash\""];
                    out.extend_from_slice(keys[next() % keys.len()]);
                    pad(next, out);
                    out.push(b':');
                    pad(next, out);
                }
                value(next, depth + 1, ws, out);
                pad(next, out);
            }
            out.push(close);
        }
        _ => out.extend_from_slice(scalars[next() % scalars.len()]),
    }
}
