//! The portable reference kernel: a table lookup per byte, eight bytes at a
//! time through a SWAR pre-check.

/// `true` for the bytes a string scan must stop at.
pub(crate) static SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = i < 0x20 || i >= 0x80 || i == b'"' as usize || i == b'\\' as usize;
        i += 1;
    }
    t
};

/// The special-byte bitmask of a 64-byte block (bit i = byte i), a table lookup
/// per byte: the scalar build's kernel, and the reference the SIMD ones are
/// tested against.
#[cfg_attr(
    all(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128")), not(switchboard_disable_simd), not(miri), not(test)),
    allow(dead_code) // the scalar build's kernel; here only the tests' reference
)]
#[inline]
pub(crate) fn special_mask64(block: &[u8; 64]) -> u64 {
    block
        .iter()
        .enumerate()
        .fold(0, |m, (i, &c)| m | u64::from(SPECIAL[c as usize]) << i)
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// Eight bytes as a little-endian word.
#[inline(always)]
fn word(bytes: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Whether any byte of `v` is special (>= 0x80, < 0x20, '"' or '\\'). The SWAR
/// zero test may flag a byte after a real hit (borrow), never when there is none.
#[inline(always)]
fn any_special(v: u64) -> bool {
    let quote = v ^ (LO * b'"' as u64);
    let bslash = v ^ (LO * b'\\' as u64);
    let has_zero = |x: u64| x.wrapping_sub(LO) & !x & HI;
    let below_20 = v.wrapping_sub(LO * 0x20) & !v & HI;
    has_zero(quote) | has_zero(bslash) | below_20 | (v & HI) != 0
}

/// Index of the first special byte in `bytes[from..]`, or `bytes.len()`.
#[inline]
pub(crate) fn find_special(bytes: &[u8], mut from: usize) -> usize {
    let len = bytes.len();
    while from + 8 <= len {
        if any_special(word(bytes, from)) {
            // The first flagged byte's position is exact only up to the first
            // real hit: finish with the table from here.
            return table_scan(bytes, from);
        }
        from += 8;
    }
    // 1 to 7 bytes left: one overlapping word over the buffer's last 8 bytes
    // answers the common "nothing special" case without a byte loop.
    if from < len && len >= 8 && !any_special(word(bytes, len - 8)) {
        return len;
    }
    table_scan(bytes, from)
}

/// The table, byte by byte, from `from`.
#[inline]
fn table_scan(bytes: &[u8], mut from: usize) -> usize {
    while from < bytes.len() {
        if SPECIAL[bytes[from] as usize] {
            return from;
        }
        from += 1;
    }
    from
}

/// Index of the first `"` or `\\` in `bytes[from..]`, or `bytes.len()`.
#[inline]
pub(crate) fn find_quote_or_backslash(bytes: &[u8], from: usize) -> usize {
    bytes
        .get(from..)
        .and_then(|rest| rest.iter().position(|&c| c == b'"' || c == b'\\'))
        .map_or(bytes.len(), |i| from + i)
}

/// The byte classes of a 64-byte block for the structural walk
/// ([`crate::parse::blocks`]), a byte at a time: the scalar build's kernel
/// and the reference the SIMD ones are tested against.
#[cfg_attr(not(test), allow(dead_code))]
#[inline]
pub(crate) fn classes64(block: &[u8; 64]) -> crate::parse::blocks::Classes {
    let mut c = crate::parse::blocks::Classes::default();
    for (i, &x) in block.iter().enumerate() {
        let bit = 1u64 << i;
        match x {
            b' ' | b'\t' | b'\n' | b'\r' => c.ws |= bit,
            b',' | b':' | b'[' | b']' | b'{' | b'}' => c.op |= bit,
            b'"' => c.quote |= bit,
            b'\\' => c.backslash |= bit,
            _ => {}
        }
        if x < 0x20 {
            c.ctrl |= bit;
        }
        if x >= 0x80 {
            c.high |= bit;
        }
    }
    c
}

/// The digit mask of `bytes[from..from + 32]` (bit i: byte `from + i` is an
/// ASCII digit), a byte at a time: the reference of the SIMD kernels.
///
/// # Panics
/// If `from + 32 > bytes.len()`.
#[cfg_attr(not(test), allow(dead_code))]
#[inline]
pub(crate) fn digits32(bytes: &[u8], from: usize) -> u32 {
    bytes[from..from + 32]
        .iter()
        .enumerate()
        .fold(0, |m, (i, c)| m | u32::from(c.is_ascii_digit()) << i)
}

/// The classes of a block for [`crate::parse::arrays`], a byte at a time: the
/// reference of the SIMD kernels.
#[cfg_attr(not(test), allow(dead_code))]
#[inline]
pub(crate) fn number_array64(block: &[u8; 64]) -> crate::parse::arrays::NumberArray {
    let mut c = crate::parse::arrays::NumberArray::default();
    for (i, &x) in block.iter().enumerate() {
        let bit = 1u64 << i;
        match x {
            b'0'..=b'9' => {
                c.digit |= bit;
                if x == b'0' {
                    c.zero |= bit;
                }
            }
            b'-' => c.minus |= bit,
            b'.' => c.dot |= bit,
            b',' => c.comma |= bit,
            b'[' => c.open |= bit,
            b']' => c.close |= bit,
            _ => {}
        }
    }
    c
}
