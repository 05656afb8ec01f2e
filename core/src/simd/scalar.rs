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

/// Index of the first special byte in `bytes[from..]`, or `bytes.len()`.
#[inline]
pub(crate) fn find_special(bytes: &[u8], mut from: usize) -> usize {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    while from + 8 <= bytes.len() {
        let mut w = [0u8; 8];
        w.copy_from_slice(&bytes[from..from + 8]);
        let v = u64::from_le_bytes(w);
        // A byte is special when it is >= 0x80, < 0x20, '"' or '\\'.
        let quote = v ^ (LO * b'"' as u64);
        let bslash = v ^ (LO * b'\\' as u64);
        let has_zero = |x: u64| x.wrapping_sub(LO) & !x & HI;
        let below_20 = v.wrapping_sub(LO * 0x20) & !v & HI;
        let hits = has_zero(quote) | has_zero(bslash) | below_20 | (v & HI);
        if hits != 0 {
            // The SWAR zero test can flag a byte after a real hit (borrow), never
            // before one; so the first flagged byte's position is exact only up
            // to the first real hit. Finish with the table from here.
            break;
        }
        from += 8;
    }
    while from < bytes.len() {
        if SPECIAL[bytes[from] as usize] {
            return from;
        }
        from += 1;
    }
    from
}
