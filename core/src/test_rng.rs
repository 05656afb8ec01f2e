//! The generator the generated-input unit tests share: deterministic (a fixed seed
//! per test, so a failure reproduces), no extra crate, and cheap under Miri.

/// A 64-bit linear congruential generator (Knuth's MMIX constants) seeded with
/// `seed`; each call returns the state's high 31 bits, whose period and spread are
/// fine for picking pieces and lengths.
pub(crate) fn lcg(mut seed: u64) -> impl FnMut() -> usize {
    move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize
    }
}

/// Blocks for the tests of a SIMD kernel against its byte-at-a-time reference:
/// each byte value as a whole block, then 4 000 blocks whose bytes come three
/// times in four from `alphabet` (the bytes the kernel tells apart) and else
/// are any byte.
#[cfg_attr(
    not(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri))),
    allow(dead_code) // the AVX2 kernels' tests
)]
pub(crate) fn kernel_blocks(seed: u64, alphabet: &[u8]) -> Vec<[u8; 64]> {
    let mut next = lcg(seed);
    let mut blocks: Vec<[u8; 64]> = (0..=255u8).map(|x| [x; 64]).collect();
    for _ in 0..4000 {
        let mut block = [0u8; 64];
        for x in &mut block {
            *x = match next() % 4 {
                0 => next() as u8,
                _ => alphabet[next() % alphabet.len()],
            };
        }
        blocks.push(block);
    }
    blocks
}
