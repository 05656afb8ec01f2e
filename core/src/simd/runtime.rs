//! Picks a kernel once per process and caches the choice.

#[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
mod imp {
    use core::sync::atomic::{AtomicU8, Ordering};

    const UNKNOWN: u8 = 0;
    const SSE2: u8 = 1;
    const AVX2: u8 = 2;
    /// AVX-512 (Ice Lake-class and later) for the block walks, AVX2 elsewhere.
    const AVX512: u8 = 3;
    static CHOICE: AtomicU8 = AtomicU8::new(UNKNOWN);

    #[cold]
    fn detect() -> u8 {
        let c = if super::super::avx512::is_available() {
            AVX512
        } else if super::super::avx2::is_available() {
            AVX2
        } else {
            SSE2
        };
        CHOICE.store(c, Ordering::Relaxed);
        c
    }

    /// Index of the first special byte in `bytes[from..]`, or `bytes.len()`.
    #[inline]
    pub(crate) fn find_special(bytes: &[u8], from: usize) -> usize {
        // The next 64 bytes in inline SSE2 steps first: specials are often close
        // (keys, ids, text with an escape per line), and a call into the AVX2
        // kernel costs more than it saves on a short distance. Only a long run
        // without one (base64, long plain text) takes the 32-byte kernel.
        let near = bytes.len().min(from.saturating_add(64));
        let i = super::super::sse2::find_special(&bytes[..near], from);
        if i < near || near == bytes.len() {
            return i;
        }
        if avx2() {
            // SAFETY: AVX2 was detected on this CPU by `detect`.
            unsafe { super::super::avx2::find_special(bytes, near) }
        } else {
            super::super::sse2::find_special(bytes, near)
        }
    }

    /// `$f(args)` on the kernel chosen for this CPU: the block walks, which have
    /// an AVX-512, an AVX2 and an SSE2 instance each.
    macro_rules! walk {
        ($f:ident($($arg:expr),*)) => {{
            let c = choice();
            if c == AVX512 {
                // SAFETY: AVX-512 (and AVX2) were detected on this CPU by `detect`.
                unsafe { super::super::avx512::$f($($arg),*) }
            } else if c == AVX2 {
                // SAFETY: AVX2 was detected on this CPU by `detect`.
                unsafe { super::super::avx2::$f($($arg),*) }
            } else {
                super::super::sse2::$f($($arg),*)
            }
        }};
    }

    /// Validates a long string body from the backslash at `bytes[p]`, 64 bytes a
    /// step ([`mod@super::super::text`]).
    #[inline]
    pub(crate) fn text(bytes: &[u8], p: usize) -> super::super::text::Text {
        walk!(text(bytes, p))
    }

    /// One past the closing quote of the validated string in which `bytes[p]` is
    /// a backslash, 64 bytes a step ([`super::super::skip::skip_text_blocks`]).
    #[inline]
    pub(crate) fn skip_text(bytes: &[u8], p: usize) -> usize {
        walk!(skip_text(bytes, p))
    }

    /// The kernel chosen for this CPU (detected once, then cached).
    #[inline(always)]
    fn choice() -> u8 {
        let c = CHOICE.load(Ordering::Relaxed);
        if c == UNKNOWN { detect() } else { c }
    }

    /// Whether the AVX2 kernels may run (detected once, then cached): also
    /// under the AVX-512 choice, whose CPUs have AVX2.
    #[inline(always)]
    fn avx2() -> bool {
        choice() >= AVX2
    }

    pub(crate) use super::super::sse2::{mask16, mask16_unchecked, special_mask64};

    /// Whether the AVX2 kernels may run (and BMI1 and BMI2 with them), for
    /// callers that compile a whole loop for them (the scanner's window loop).
    #[inline(always)]
    pub(crate) fn has_avx2() -> bool {
        avx2()
    }

    /// The end of the validated array or object opening at `bytes[p]`, 64 bytes
    /// a step ([`super::super::skip`]).
    #[inline]
    pub(crate) fn skip_container(bytes: &[u8], p: usize) -> usize {
        walk!(skip_container(bytes, p))
    }

    /// The number of values left in the validated array or object that
    /// `bytes[p]` is directly inside of ([`super::super::skip::count_blocks`]).
    #[inline]
    pub(crate) fn count_values(bytes: &[u8], p: usize) -> usize {
        walk!(count_values(bytes, p))
    }

    /// Whether [`mask16_unchecked`] is a real SIMD step (it is, here).
    pub(crate) const HAS_MASK16: bool = true;

    /// Index of the first `"` or `\\` in `bytes[from..]`, or `bytes.len()`: SSE2,
    /// inline (skipping validated strings stops every few dozen bytes in text, where
    /// a call into a wider kernel costs more than it saves).
    #[inline]
    pub(crate) fn find_quote_or_backslash(bytes: &[u8], from: usize) -> usize {
        super::super::sse2::find_quote_or_backslash(bytes, from)
    }

    /// The name of the kernel in use, for benches and reports.
    pub(crate) fn backend() -> &'static str {
        match choice() {
            AVX512 => "avx512",
            AVX2 => "avx2",
            _ => "sse2",
        }
    }
}

#[cfg(all(
    target_arch = "wasm32",
    target_feature = "simd128",
    not(switchboard_disable_simd),
    not(miri)
))]
mod imp {
    //! The SIMD128 kernel, a static choice: WebAssembly has no run-time
    //! feature detection, and this build was compiled with `simd128` enabled
    //! (a module with SIMD instructions does not load on an engine without).
    use super::super::simd128 as k;

    pub(crate) use k::{
        count_values, find_quote_or_backslash, find_special, mask16, mask16_unchecked,
        skip_container, skip_text, special_mask64, text,
    };

    /// Whether [`mask16_unchecked`] is a real SIMD step (it is, here).
    pub(crate) const HAS_MASK16: bool = true;

    /// The name of the kernel in use, for benches and reports.
    pub(crate) fn backend() -> &'static str {
        "simd128"
    }
}

#[cfg(not(any(
    all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)),
    all(
        target_arch = "wasm32",
        target_feature = "simd128",
        not(switchboard_disable_simd),
        not(miri)
    )
)))]
mod imp {
    /// Index of the first special byte in `bytes[from..]`, or `bytes.len()`.
    #[inline]
    pub(crate) fn find_special(bytes: &[u8], from: usize) -> usize {
        super::super::scalar::find_special(bytes, from)
    }

    /// Index of the first `"` or `\\` in `bytes[from..]`, or `bytes.len()`.
    #[inline]
    pub(crate) fn find_quote_or_backslash(bytes: &[u8], from: usize) -> usize {
        super::super::scalar::find_quote_or_backslash(bytes, from)
    }

    /// The special-byte bitmask of 16 bytes; the scalar build has no such fast
    /// path and always answers `None` (callers then take the general loop).
    #[inline(always)]
    pub(crate) fn mask16(_bytes: &[u8], _from: usize) -> Option<u32> {
        None
    }

    /// Whether [`mask16_unchecked`] is a real SIMD step: not in the scalar build,
    /// whose callers skip it and take the general loop.
    pub(crate) const HAS_MASK16: bool = false;

    /// The special-byte bitmask of `bytes[from..from + 16]`, byte by byte (never
    /// called on hot paths here: [`HAS_MASK16`] is `false`).
    ///
    /// # Safety
    /// `from + 16 <= bytes.len()` (checked anyway: this build has no unsafe loads).
    #[inline]
    pub(crate) unsafe fn mask16_unchecked(bytes: &[u8], from: usize) -> u32 {
        (0..16).fold(0, |m, i| {
            m | (u32::from(super::super::scalar::SPECIAL[bytes[from + i] as usize]) << i)
        })
    }

    /// The special-byte bitmask of a 64-byte block, byte by byte.
    #[inline]
    pub(crate) fn special_mask64(block: &[u8; 64]) -> u64 {
        super::super::scalar::special_mask64(block)
    }

    /// The end of the validated array or object opening at `bytes[p]`, 64 bytes
    /// a step on byte-by-byte masks ([`super::super::skip`]).
    #[inline]
    pub(crate) fn skip_container(bytes: &[u8], p: usize) -> usize {
        super::super::skip::skip_container_scalar(bytes, p)
    }

    /// The number of values left in the validated array or object that
    /// `bytes[p]` is directly inside of, on byte-by-byte masks
    /// ([`super::super::skip::count_blocks`]).
    #[inline]
    pub(crate) fn count_values(bytes: &[u8], p: usize) -> usize {
        super::super::skip::count_values_scalar(bytes, p)
    }

    /// One past the closing quote of the validated string in which `bytes[p]` is
    /// a backslash, 64 bytes a step on byte-by-byte masks.
    #[inline]
    pub(crate) fn skip_text(bytes: &[u8], p: usize) -> usize {
        super::super::skip::skip_text_scalar(bytes, p)
    }

    /// Validates a long string body from the backslash at `bytes[p]`, 64 bytes a
    /// step on byte-by-byte masks ([`super::super::text`]).
    #[inline]
    pub(crate) fn text(bytes: &[u8], p: usize) -> super::super::text::Text {
        super::super::text::text_blocks_scalar(bytes, p)
    }

    /// The name of the kernel in use, for benches and reports.
    pub(crate) fn backend() -> &'static str {
        "scalar"
    }
}

#[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
pub(crate) use imp::has_avx2;
pub(crate) use imp::{
    HAS_MASK16, backend, count_values, find_quote_or_backslash, find_special, mask16,
    mask16_unchecked, skip_container, skip_text, special_mask64, text,
};

#[cfg(test)]
mod tests {
    use super::super::scalar;

    /// Every kernel agrees with the scalar table for every byte value at every
    /// position of buffers from 1 to 70 bytes (the 32-, 16- and 8-byte steps, the
    /// overlapping tail loads, and buffers too short for them), also with a
    /// second special byte earlier in the buffer than `from`.
    #[test]
    fn kernels_match_scalar_for_all_bytes() {
        // Under Miri (scalar kernel only) a representative subset keeps it quick.
        let lens: &[usize] = if cfg!(miri) {
            &[9, 20]
        } else {
            &[1, 5, 7, 8, 9, 15, 16, 17, 24, 31, 33, 47, 70, 100]
        };
        let all: Vec<u8> = (0..=255u8).collect();
        let some = [0x00, 0x1f, 0x20, b'"', b'\\', 0x7f, 0x80];
        let bytes: &[u8] = if cfg!(miri) { &some } else { &all };
        for &len in lens {
            for &b in bytes {
                for pos in 0..len {
                    for before in [false, true] {
                        let mut buf = vec![b'a'; len];
                        if before {
                            buf[0] = b'"'; // special, but before most `from`s
                        }
                        buf[pos] = b;
                        // Under Miri: from the start, at the byte, at the last.
                        let froms = if cfg!(miri) {
                            vec![0, pos, len - 1]
                        } else {
                            vec![0, 1, 3, pos.saturating_sub(1), pos, len - 1]
                        };
                        for from in froms {
                            check(&buf, from.min(len));
                        }
                    }
                }
            }
        }
    }

    /// The choice follows the CPU: AVX-512 where [`super::super::avx512`] can
    /// run (and AVX2 then still on for the scanner's loop), else AVX2, else
    /// SSE2.
    #[test]
    #[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
    fn backend_follows_the_cpu() {
        let (avx512, avx2) = (
            super::super::avx512::is_available(),
            super::super::avx2::is_available(),
        );
        let want = match (avx512, avx2) {
            (true, _) => "avx512",
            (false, true) => "avx2",
            _ => "sse2",
        };
        assert_eq!(super::backend(), want);
        assert_eq!(super::has_avx2(), avx2);
    }

    /// A `wasm32` build with `simd128` runs the SIMD128 kernel (a static
    /// choice: WebAssembly has no run-time detection).
    #[test]
    #[cfg(all(
        target_arch = "wasm32",
        target_feature = "simd128",
        not(switchboard_disable_simd),
        not(miri)
    ))]
    fn backend_is_simd128() {
        assert_eq!(super::backend(), "simd128");
    }

    fn check(buf: &[u8], from: usize) {
        let len = buf.len();
        let naive = (from..len)
            .find(|&i| scalar::SPECIAL[buf[i] as usize])
            .unwrap_or(len);
        let naive_qb = (from..len)
            .find(|&i| matches!(buf[i], b'"' | b'\\'))
            .unwrap_or(len);
        let ctx = format!("{buf:?} from {from}");
        assert_eq!(scalar::find_special(buf, from), naive, "scalar {ctx}");
        assert_eq!(super::find_special(buf, from), naive, "runtime {ctx}");
        assert_eq!(
            scalar::find_quote_or_backslash(buf, from),
            naive_qb,
            "{ctx}"
        );
        assert_eq!(super::find_quote_or_backslash(buf, from), naive_qb, "{ctx}");
        #[cfg(all(
            target_arch = "wasm32",
            target_feature = "simd128",
            not(switchboard_disable_simd),
            not(miri)
        ))]
        {
            use super::super::simd128;
            assert_eq!(simd128::find_special(buf, from), naive, "simd128 {ctx}");
            let qb = simd128::find_quote_or_backslash(buf, from);
            assert_eq!(qb, naive_qb, "simd128 {ctx}");
            if let Some(m) = simd128::mask16(buf, from) {
                let want = (0..16).filter(|&i| scalar::SPECIAL[buf[from + i] as usize]);
                assert_eq!(m, want.fold(0, |m, i| m | 1 << i), "simd128 mask16 {ctx}");
            }
        }
        #[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
        {
            assert_eq!(
                super::super::sse2::find_special(buf, from),
                naive,
                "sse2 {ctx}"
            );
            if let Some(m) = super::super::sse2::mask16(buf, from) {
                let want = (0..16).filter(|&i| scalar::SPECIAL[buf[from + i] as usize]);
                assert_eq!(m, want.fold(0, |m, i| m | 1 << i), "mask16 {ctx}");
            }
            if super::super::avx2::is_available() {
                // SAFETY: AVX2 availability was just checked.
                let got = unsafe { super::super::avx2::find_special(buf, from) };
                assert_eq!(got, naive, "avx2 {ctx}");
            }
        }
    }
}
