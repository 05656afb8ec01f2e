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
