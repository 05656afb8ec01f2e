//! Differential: the runtime-dispatched string-scanning kernel (AVX2/SSE2) against
//! the scalar one, on arbitrary bytes from arbitrary offsets.
#![no_main]

use libfuzzer_sys::fuzz_target;
use switchboard::_benchable::{find_special, find_special_scalar};

fuzz_target!(|data: &[u8]| {
    let (head, bytes) = match data.split_first_chunk::<2>() {
        Some((h, rest)) => (u16::from_le_bytes(*h) as usize, rest),
        None => (0, data),
    };
    let mut froms = vec![0, bytes.len(), head % (bytes.len() + 1)];
    froms.extend((0..bytes.len()).step_by(bytes.len() / 16 + 1));
    for from in froms {
        let simd = find_special(bytes, from);
        let scalar = find_special_scalar(bytes, from);
        assert_eq!(
            simd,
            scalar,
            "from {from}, backend {}, bytes {bytes:?}",
            switchboard::_benchable::simd_backend()
        );
        // The contract itself: every byte before the hit is ordinary.
        assert!(scalar <= bytes.len().max(from));
        for &b in &bytes[from.min(bytes.len())..scalar.min(bytes.len())] {
            assert!((0x20..0x80).contains(&b) && b != b'"' && b != b'\\');
        }
        if scalar < bytes.len() {
            let b = bytes[scalar];
            assert!(!(0x20..0x80).contains(&b) || b == b'"' || b == b'\\');
        }
    }
});
