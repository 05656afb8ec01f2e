//! String-body scanning kernels: find the next byte inside a JSON string that
//! needs attention (`"`, `\`, a control byte below 0x20, or a non-ASCII byte).
//!
//! One file per backend; [`runtime`] picks one once per process and caches it
//! (AVX-512 only supplies the masks of the 64-byte block walks, [`skip`] and
//! [`mod@text`]; its CPUs run the AVX2 kernel for the rest). On `wasm32` the
//! choice is static: the SIMD128 kernel when the build enables that target
//! feature (`-C target-feature=+simd128`), else the scalar one.
//! The scalar kernel is always compiled and is the reference the others are
//! tested against, for all 256 byte values at every position.

#[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
pub(crate) mod avx2;
#[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
pub(crate) mod avx512;
pub(crate) mod runtime;
pub(crate) mod scalar;
#[cfg(all(
    target_arch = "wasm32",
    target_feature = "simd128",
    not(switchboard_disable_simd),
    not(miri)
))]
pub(crate) mod simd128;
pub(crate) mod skip;
#[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
pub(crate) mod sse2;
pub(crate) mod text;

#[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
pub(crate) use runtime::has_avx2;
pub(crate) use runtime::{
    HAS_MASK16, count_values, find_quote_or_backslash, find_special, mask16, mask16_unchecked,
    skip_container, skip_text, special_mask64, text,
};
