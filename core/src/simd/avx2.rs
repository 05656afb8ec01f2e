//! AVX2 kernel: thirty-two bytes per step, chosen at run time when the CPU has it.

use core::arch::x86_64::{
    __m256i, _mm_clmulepi64_si128, _mm_cvtsi128_si64, _mm_set_epi64x, _mm_set1_epi8,
    _mm256_and_si256, _mm256_cmpeq_epi8, _mm256_cmpgt_epi8, _mm256_insert_epi8, _mm256_loadu_si256,
    _mm256_movemask_epi8, _mm256_or_si256, _mm256_set1_epi8, _mm256_setr_epi8,
    _mm256_setzero_si256, _mm256_shuffle_epi8, _mm256_srli_epi16,
};
use core::arch::x86_64::{
    _mm256_andnot_si256, _mm256_min_epu8, _mm256_sub_epi8, _mm256_subs_epu8, _mm256_testz_si256,
    _mm256_xor_si256,
};

use super::skip::{Kernel, Masks, count_blocks, skip_blocks_first, skip_text_blocks};
use super::text::{Text, TextMasks, UTF8_LOOKUP, text_blocks};

/// Whether this CPU can run [`find_special`] and [`skip_container`] (AVX2, and
/// POPCNT and PCLMULQDQ, which every AVX2 CPU has, for the bracket counts and
/// the string masks), and the scanner's loops compiled for AVX2 with BMI1,
/// BMI2 and LZCNT (which every AVX2 CPU also has).
pub(crate) fn is_available() -> bool {
    std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("popcnt")
        && std::is_x86_feature_detected!("pclmulqdq")
        && std::is_x86_feature_detected!("bmi1")
        && std::is_x86_feature_detected!("bmi2")
        && std::is_x86_feature_detected!("lzcnt")
}

/// Index of the first special byte in `bytes[from..]`, or `bytes.len()`.
///
/// # Safety
/// - The CPU must support AVX2 ([`is_available`] returned `true`).
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn find_special(bytes: &[u8], mut from: usize) -> usize {
    let quote = _mm256_set1_epi8(b'"' as i8);
    let bslash = _mm256_set1_epi8(b'\\' as i8);
    let limit = _mm256_set1_epi8(0x20);
    while from + 32 <= bytes.len() {
        // SAFETY: `from + 32 <= bytes.len()`, so the unaligned 32-byte load stays
        // inside `bytes`.
        let v = unsafe { _mm256_loadu_si256(bytes.as_ptr().add(from) as *const __m256i) };
        let q = _mm256_cmpeq_epi8(v, quote);
        let b = _mm256_cmpeq_epi8(v, bslash);
        // Signed: 0x20 > v holds for control bytes and for every byte >= 0x80.
        let c = _mm256_cmpgt_epi8(limit, v);
        let mask = _mm256_movemask_epi8(_mm256_or_si256(_mm256_or_si256(q, b), c));
        if mask != 0 {
            return from + mask.trailing_zeros() as usize;
        }
        from += 32;
    }
    super::sse2::find_special(bytes, from)
}

/// The quote, backslash, opening- and closing-bracket masks of
/// `bytes[from..from + 64]` (bit i = byte `from + i`), in two 32-byte steps.
///
/// # Safety
/// - `from + 64 <= bytes.len()`;
/// - the CPU must support AVX2 ([`is_available`] returned `true`).
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) unsafe fn structural_masks64(bytes: &[u8], from: usize) -> Masks {
    debug_assert!(from + 64 <= bytes.len());
    let mut m = Masks::default();
    for k in 0..2 {
        // SAFETY: `from + 32 * k + 32 <= from + 64 <= bytes.len()` (the caller's
        // guarantee), so each unaligned 32-byte load stays inside `bytes`.
        let v = unsafe { _mm256_loadu_si256(bytes.as_ptr().add(from + 32 * k) as *const __m256i) };
        // `[` (0x5b) and `{` (0x7b) differ only in bit 5, as do `]` and `}`; no
        // other byte becomes 0x7b or 0x7d with bit 5 set.
        let folded = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
        let bits = |x| u64::from(_mm256_movemask_epi8(x) as u32) << (32 * k);
        m.quotes |= bits(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'"' as i8)));
        m.backslashes |= bits(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\\' as i8)));
        m.opens |= bits(_mm256_cmpeq_epi8(folded, _mm256_set1_epi8(b'{' as i8)));
        m.closes |= bits(_mm256_cmpeq_epi8(folded, _mm256_set1_epi8(b'}' as i8)));
        m.commas |= bits(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(b',' as i8)));
    }
    m
}

/// The special-byte bitmask of a 64-byte block (bit i = byte i): quotes,
/// backslashes, control bytes and every byte >= 0x80, in two 32-byte steps.
///
/// # Safety
/// - The CPU must support AVX2 ([`is_available`] returned `true`).
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) unsafe fn special_mask64(block: &[u8; 64]) -> u64 {
    let mut m = 0u64;
    for k in 0..2 {
        // SAFETY: `32 * k + 32 <= 64 == block.len()`, so the unaligned 32-byte
        // load stays inside `block`.
        let v = unsafe { _mm256_loadu_si256(block.as_ptr().add(32 * k) as *const __m256i) };
        let q = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'"' as i8));
        let b = _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\\' as i8));
        // Signed: 0x20 > v holds for control bytes and for every byte >= 0x80.
        let c = _mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), v);
        let bits = _mm256_movemask_epi8(_mm256_or_si256(_mm256_or_si256(q, b), c));
        m |= u64::from(bits as u32) << (32 * k);
    }
    m
}

/// Whether `bytes[from..from + 64]` holds no `"` and does not end in a `\\`
/// ([`Kernel::plain`]): three compares (the last byte against `\\` too), one
/// mask.
///
/// # Safety
/// - `from + 64 <= bytes.len()`;
/// - the CPU must support AVX2 ([`is_available`] returned `true`).
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) unsafe fn plain64(bytes: &[u8], from: usize) -> bool {
    debug_assert!(from + 64 <= bytes.len());
    // SAFETY: `from + 64 <= bytes.len()` (the caller's guarantee), so both
    // unaligned 32-byte loads stay inside `bytes`.
    let (a, b) = unsafe {
        let p = bytes.as_ptr().add(from);
        (
            _mm256_loadu_si256(p as *const __m256i),
            _mm256_loadu_si256(p.add(32) as *const __m256i),
        )
    };
    let quote = _mm256_set1_epi8(b'"' as i8);
    // `"` in every lane but the last, which is the block's last byte: `\\`.
    let last = _mm256_insert_epi8::<31>(quote, b'\\' as i8);
    let hits = _mm256_or_si256(
        _mm256_or_si256(_mm256_cmpeq_epi8(a, quote), _mm256_cmpeq_epi8(b, quote)),
        _mm256_cmpeq_epi8(b, last),
    );
    _mm256_movemask_epi8(hits) == 0
}

/// Whether the `n` bytes at `from` (`n` = 32 times `N`), inside a string open
/// at `from`, cannot close it and leave no escape pending
/// ([`Kernel::plain128`]): five compares and one mask when they hold no quote
/// and do not end in a `\\`; otherwise every such byte must follow a backslash
/// run of exactly one (the bytes one and two before it, loaded unaligned).
///
/// # Safety
/// - `2 <= from` and `from + 32 * N <= bytes.len()`;
/// - the CPU must support AVX2 ([`is_available`] returned `true`).
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn plain_escaped<const N: usize>(bytes: &[u8], from: usize) -> bool {
    debug_assert!(2 <= from && from + 32 * N <= bytes.len());
    // SAFETY: `from - 2 + 32 * k + 32 <= from + 32 * N <= bytes.len()` for
    // `k < N` and offsets `d` in 0..=2, and `from >= 2` (the caller's
    // guarantee), so each unaligned 32-byte load stays inside `bytes`.
    let load = |k: usize, d: usize| unsafe {
        _mm256_loadu_si256(bytes.as_ptr().add(from + 32 * k - d) as *const __m256i)
    };
    let quote = _mm256_set1_epi8(b'"' as i8);
    let backslash = _mm256_set1_epi8(b'\\' as i8);
    // `"` in every lane but the last, which is the last byte: `\\`.
    let last = _mm256_insert_epi8::<31>(quote, b'\\' as i8);
    let hits: [__m256i; N] = core::array::from_fn(|k| {
        let v = load(k, 0);
        let q = _mm256_cmpeq_epi8(v, quote);
        if k + 1 == N {
            _mm256_or_si256(q, _mm256_cmpeq_epi8(v, last))
        } else {
            q
        }
    });
    let any = hits
        .iter()
        .fold(_mm256_setzero_si256(), |a, &h| _mm256_or_si256(a, h));
    if _mm256_movemask_epi8(any) == 0 {
        return true;
    }
    // A quote after exactly one backslash is escaped; a last `\\` after exactly
    // one ends a run of two, escaping nothing after the block.
    let mut bad = _mm256_setzero_si256();
    for (k, &h) in hits.iter().enumerate() {
        let one = _mm256_andnot_si256(
            _mm256_cmpeq_epi8(load(k, 2), backslash),
            _mm256_cmpeq_epi8(load(k, 1), backslash),
        );
        bad = _mm256_or_si256(bad, _mm256_andnot_si256(one, h));
    }
    _mm256_movemask_epi8(bad) == 0
}

/// [`plain_escaped`] on 64 bytes ([`Kernel::plain`]).
///
/// # Safety
/// - `2 <= from` and `from + 64 <= bytes.len()`;
/// - the CPU must support AVX2 ([`is_available`] returned `true`).
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) unsafe fn plain_escaped64(bytes: &[u8], from: usize) -> bool {
    // SAFETY: the caller's guarantees, passed on.
    unsafe { plain_escaped::<2>(bytes, from) }
}

/// [`plain_escaped`] on 128 bytes ([`Kernel::plain128`]).
///
/// # Safety
/// - `2 <= from` and `from + 128 <= bytes.len()`;
/// - the CPU must support AVX2 ([`is_available`] returned `true`).
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) unsafe fn plain_escaped128(bytes: &[u8], from: usize) -> bool {
    // SAFETY: the caller's guarantees, passed on.
    unsafe { plain_escaped::<4>(bytes, from) }
}

/// [`super::skip::prefix_xor`] in one carry-less multiplication by all ones.
#[target_feature(enable = "pclmulqdq")]
#[inline]
pub(crate) fn prefix_xor_clmul(x: u64) -> u64 {
    let product = _mm_clmulepi64_si128(_mm_set_epi64x(0, x as i64), _mm_set1_epi8(-1), 0);
    _mm_cvtsi128_si64(product) as u64
}

/// The AVX2 kernel of the shared walks: the masks of [`structural_masks64`],
/// [`plain_escaped64`] and [`plain_escaped128`], [`prefix_xor_clmul`]. Only for
/// functions compiled with AVX2 and
/// PCLMULQDQ (the closures inherit them).
macro_rules! kernel {
    () => {
        Kernel {
            // SAFETY: the walks pass only `at + 64 <= bytes.len()`; AVX2 is the
            // caller's guarantee.
            masks: |b: &[u8], at| unsafe { structural_masks64(b, at) },
            // SAFETY: the padded block is 64 bytes long; AVX2 as above.
            tail_masks: |block: &[u8; 64]| unsafe { structural_masks64(block, 0) },
            // SAFETY: the walks pass only `2 <= at` and `at + 64 <= bytes.len()`;
            // AVX2 as above.
            plain: |b: &[u8], at| unsafe { plain_escaped64(b, at) },
            // SAFETY: the walks pass only `2 <= at` and `at + 128 <= bytes.len()`;
            // AVX2 as above.
            plain128: |b: &[u8], at| unsafe { plain_escaped128(b, at) },
            prefix_xor: |x| prefix_xor_clmul(x),
        }
    };
}

/// The end of the validated array or object opening at `bytes[p]`
/// ([`skip_blocks_first`] on AVX2 masks).
///
/// # Safety
/// - The CPU must support AVX2 ([`is_available`] returned `true`).
#[target_feature(enable = "avx2,popcnt,pclmulqdq,bmi1,bmi2")]
pub(crate) unsafe fn skip_container(bytes: &[u8], p: usize) -> usize {
    skip_blocks_first(bytes, p, &kernel!())
}

/// The number of values left in a validated array or object from `bytes[p]`
/// ([`count_blocks`] on AVX2 masks).
///
/// # Safety
/// - The CPU must support AVX2 ([`is_available`] returned `true`).
#[target_feature(enable = "avx2,popcnt,pclmulqdq,bmi1,bmi2")]
pub(crate) unsafe fn count_values(bytes: &[u8], p: usize) -> usize {
    count_blocks(bytes, p, &kernel!())
}

/// The quote, backslash, special (below 0x20 or above 0x7f) and simple escape
/// letter masks of `bytes[from..from + 64]` (bit i = byte `from + i`), in two
/// 32-byte steps.
///
/// # Safety
/// - `from + 64 <= bytes.len()`;
/// - the CPU must support AVX2 ([`is_available`] returned `true`).
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) unsafe fn text_masks64(bytes: &[u8], from: usize) -> TextMasks {
    debug_assert!(from + 64 <= bytes.len());
    // The simple escape letters `"\/bfnrt` by nibbles: a byte is one when the
    // entries of its high and low nibble share a bit. High nibble 2 is bit 0
    // (`"` 0x22, `/` 0x2f), 5 bit 1 (`\` 0x5c), 6 bit 2 (`b` 0x62, `f` 0x66,
    // `n` 0x6e), 7 bit 3 (`r` 0x72, `t` 0x74); a byte >= 0x80 looks up 0 in the
    // low table (`vpshufb` zeroes lanes whose index has bit 7 set).
    #[rustfmt::skip]
    let hi_table = _mm256_setr_epi8(
        0, 0, 1, 0, 0, 2, 4, 8, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 1, 0, 0, 2, 4, 8, 0, 0, 0, 0, 0, 0, 0, 0,
    );
    #[rustfmt::skip]
    let lo_table = _mm256_setr_epi8(
        0, 0, 0x0d, 0, 8, 0, 4, 0, 0, 0, 0, 0, 2, 0, 4, 1,
        0, 0, 0x0d, 0, 8, 0, 4, 0, 0, 0, 0, 0, 2, 0, 4, 1,
    );
    let mut m = TextMasks::default();
    let mut not_simple = 0u64;
    for k in 0..2 {
        // SAFETY: `from + 32 * k + 32 <= from + 64 <= bytes.len()` (the caller's
        // guarantee), so each unaligned 32-byte load stays inside `bytes`.
        let v = unsafe { _mm256_loadu_si256(bytes.as_ptr().add(from + 32 * k) as *const __m256i) };
        let bits = |x| u64::from(_mm256_movemask_epi8(x) as u32) << (32 * k);
        m.quotes |= bits(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'"' as i8)));
        m.backslashes |= bits(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\\' as i8)));
        // Signed: 0x20 > v holds for control bytes and for every byte >= 0x80.
        m.special |= bits(_mm256_cmpgt_epi8(_mm256_set1_epi8(0x20), v));
        let hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), _mm256_set1_epi8(0x0f));
        let classes = _mm256_and_si256(
            _mm256_shuffle_epi8(hi_table, hi),
            _mm256_shuffle_epi8(lo_table, v),
        );
        not_simple |= bits(_mm256_cmpeq_epi8(classes, _mm256_setzero_si256()));
    }
    m.simple = !not_simple;
    m
}

/// The constants of [`text_flag_parts32`]: `"`, `\\` and 0x20 in every lane,
/// and the simple escape letters but `b` (flagged: rare in text, and the exact
/// path takes it) and `"` (taken apart) by their low nibble: one per nibble in
/// a table, the byte equal to its entry; other entries 0x80 equal no byte that
/// looks them up (`vpshufb` gives 0 for bytes >= 0x80).
#[derive(Clone, Copy)]
struct FlagConsts([__m256i; 4]);

impl FlagConsts {
    /// The constants, [`opaque`]: values LLVM keeps in registers over a loop,
    /// not constants it reloads from memory in every step (its choice for
    /// constants in a loop that also calls out).
    ///
    /// # Safety
    /// - The CPU must support AVX2 ([`is_available`] returned `true`).
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn new() -> Self {
        #[rustfmt::skip]
        let letters = _mm256_setr_epi8(
            -128, -128, b'r' as i8, -128, b't' as i8, -128, b'f' as i8, -128,
            -128, -128, -128, -128, b'\\' as i8, -128, b'n' as i8, b'/' as i8,
            -128, -128, b'r' as i8, -128, b't' as i8, -128, b'f' as i8, -128,
            -128, -128, -128, -128, b'\\' as i8, -128, b'n' as i8, b'/' as i8,
        );
        // SAFETY: AVX2 is the caller's guarantee.
        unsafe {
            Self([
                opaque(_mm256_set1_epi8(b'"' as i8)),
                opaque(_mm256_set1_epi8(b'\\' as i8)),
                opaque(_mm256_set1_epi8(0x20)),
                opaque(letters),
            ])
        }
    }
}

/// The fast check's flag lanes of `bytes[from..from + 32]` (0xff = flagged,
/// [`super::text::flags_scalar`]), from three overlapping loads (at `from`,
/// `from - 1`, `from - 2`), in two parts: the quotes and escape letters, and
/// the bytes below 0x20 or above 0x7f.
///
/// The escapes as in the AVX-512 kernel, in nine operations with the special
/// compare (the loads at `from - 1` and `from - 2` folded into their
/// compares): `Q` the quotes, `B1` and `B2` the bytes right after and two after
/// a backslash, `G` = `B1` and not a simple letter (`"` and `b` not counted as
/// simple); the flags are `(Q ^ G) | (Q & B2)`. A quote after no backslash
/// is in `Q ^ G`, one after a lone backslash is in both `Q` and `G` (so in
/// neither term: escaped), one after two backslashes is in `Q & B2`; any other
/// byte is in `G` alone.
///
/// # Safety
/// - `from >= 2` and `from + 32 <= bytes.len()`;
/// - the CPU must support AVX2 ([`is_available`] returned `true`).
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn text_flag_parts32(bytes: &[u8], from: usize, k: FlagConsts) -> (__m256i, __m256i) {
    debug_assert!(from >= 2 && from + 32 <= bytes.len());
    // SAFETY: `from - 2 >= 0` and `from + 32 <= bytes.len()` (the caller's
    // guarantee), so the three unaligned 32-byte loads stay inside `bytes`.
    let (v, v1, v2) = unsafe {
        let p = bytes.as_ptr().add(from);
        (
            _mm256_loadu_si256(p as *const __m256i),
            _mm256_loadu_si256(p.sub(1) as *const __m256i),
            _mm256_loadu_si256(p.sub(2) as *const __m256i),
        )
    };
    let [quote, bslash, limit, letters] = k.0;
    // The compares' lanes [`opaque`]: LLVM would otherwise do the logic below
    // on booleans and, to test or mask them, shift their lowest bits up (three
    // operations more for the fast check).
    // SAFETY: AVX2 is the caller's guarantee.
    let (quote, after_bs, two_after_bs, special, simple) = unsafe {
        (
            opaque(_mm256_cmpeq_epi8(v, quote)),
            opaque(_mm256_cmpeq_epi8(v1, bslash)),
            opaque(_mm256_cmpeq_epi8(v2, bslash)),
            // Signed: 0x20 > v holds for control bytes and for every byte >= 0x80.
            opaque(_mm256_cmpgt_epi8(limit, v)),
            opaque(_mm256_cmpeq_epi8(_mm256_shuffle_epi8(letters, v), v)),
        )
    };
    let bad_letters = _mm256_andnot_si256(simple, after_bs);
    let escapes = _mm256_or_si256(
        _mm256_xor_si256(quote, bad_letters),
        _mm256_and_si256(quote, two_after_bs),
    );
    (escapes, special)
}

/// The fast check's flags of `bytes[from..from + 64]` (bit i = byte `from + i`,
/// [`super::text::flags_scalar`]): for the tests; the walk takes
/// [`text_plain64`].
///
/// # Safety
/// - `from >= 2` and `from + 64 <= bytes.len()`;
/// - the CPU must support AVX2 ([`is_available`] returned `true`).
#[cfg(test)]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn text_flags64(bytes: &[u8], from: usize) -> u64 {
    // SAFETY: `from >= 2`, `from + 32 + 32 <= bytes.len()` and AVX2 are the
    // caller's guarantees.
    let (lo, hi) = unsafe {
        let k = FlagConsts::new();
        (
            text_flag_parts32(bytes, from, k),
            text_flag_parts32(bytes, from + 32, k),
        )
    };
    let (lo, hi) = (_mm256_or_si256(lo.0, lo.1), _mm256_or_si256(hi.0, hi.1));
    u64::from(_mm256_movemask_epi8(lo) as u32) | u64::from(_mm256_movemask_epi8(hi) as u32) << 32
}

/// The fast check's flag lanes of `bytes[from..from + 64]`, OR-ed over its
/// two halves (all zero: nothing flagged, [`super::text::flags_scalar`]).
///
/// # Safety
/// - `from >= 2` and `from + 64 <= bytes.len()`;
/// - the CPU must support AVX2 ([`is_available`] returned `true`).
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn text_flag_lanes64(bytes: &[u8], from: usize, k: FlagConsts) -> __m256i {
    // SAFETY: `from >= 2`, `from + 32 + 32 <= bytes.len()` and AVX2 are the
    // caller's guarantees.
    let (lo, hi) = unsafe {
        (
            text_flag_parts32(bytes, from, k),
            text_flag_parts32(bytes, from + 32, k),
        )
    };
    _mm256_or_si256(_mm256_or_si256(lo.0, lo.1), _mm256_or_si256(hi.0, hi.1))
}

/// Whether no lane is set (`vptest`: no `vpmovmskb` and `test`).
#[target_feature(enable = "avx2")]
#[inline]
fn none(x: __m256i) -> bool {
    _mm256_testz_si256(x, x) == 1
}

/// Whether the block walk may pass `bytes[from..from + 64]` without its exact
/// path (for the tests; the walk takes [`text_pass`], which decides the same
/// block by block): the fast check flags nothing ([`super::text::flags_scalar`]: two
/// 32-byte checks, one `vptest`), or it flags only bytes above 0x7f and these
/// are whole valid UTF-8 characters ([`text_utf8_whole64`]).
///
/// # Safety
/// - `from >= 3` and `from + 64 <= bytes.len()`;
/// - the CPU must support AVX2 ([`is_available`] returned `true`).
#[cfg(test)]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn text_plain64(bytes: &[u8], from: usize) -> bool {
    // SAFETY: the caller's guarantees, passed on.
    unsafe {
        none(text_flag_lanes64(bytes, from, FlagConsts::new())) || text_utf8_whole64(bytes, from)
    }
}

/// The first block from `at` (`at`, `at + 64`, ...) past `last` or flagged by
/// the fast check; 128 bytes a step (one `vptest`, one branch) while two
/// blocks are left, then a block. Out of line and calling nothing: its loop
/// keeps the constants in registers (LLVM reloads them in every step of a
/// loop that also calls out).
///
/// # Safety
/// - `at >= 2` and `last + 64 <= bytes.len()`;
/// - the CPU must support AVX2 ([`is_available`] returned `true`).
#[target_feature(enable = "avx2")]
#[inline(never)]
unsafe fn text_clean_run(bytes: &[u8], mut at: usize, last: usize) -> usize {
    debug_assert!(at >= 2 && last + 64 <= bytes.len());
    // SAFETY: AVX2 is the caller's guarantee.
    let k = unsafe { FlagConsts::new() };
    while at + 64 <= last {
        // SAFETY: `at >= 2`, and both blocks start at most at `last`, so they
        // end inside `bytes`; AVX2 is the caller's guarantee.
        let (lo, hi) = unsafe {
            (
                text_flag_lanes64(bytes, at, k),
                text_flag_lanes64(bytes, at + 64, k),
            )
        };
        if !none(_mm256_or_si256(lo, hi)) {
            return if none(lo) { at + 64 } else { at };
        }
        at += 128;
    }
    // SAFETY: as above, for the block at `at <= last`.
    if at <= last && none(unsafe { text_flag_lanes64(bytes, at, k) }) {
        at += 64;
    }
    at
}

/// The fast check of the block walk ([`text_blocks`]' `pass`): the first block
/// from `at` (`at`, `at + 64`, ...) past `last` or not passed by
/// [`text_plain64`] ([`text_clean_run`], then [`text_utf8_whole64`] on the
/// block it stops at).
///
/// # Safety
/// - `at >= 3` and `last + 64 <= bytes.len()`;
/// - the CPU must support AVX2 ([`is_available`] returned `true`).
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn text_pass(bytes: &[u8], mut at: usize, last: usize) -> usize {
    loop {
        // SAFETY: the caller's guarantees.
        at = unsafe { text_clean_run(bytes, at, last) };
        // SAFETY: `at >= 3`, the block at `at <= last` ends inside `bytes`,
        // AVX2 is the caller's guarantee.
        if at > last || !unsafe { text_utf8_whole64(bytes, at) } {
            return at;
        }
        at += 64;
    }
}

/// `x` as it is, out of the optimizer's sight: lanes LLVM no longer knows to
/// be compare results (all ones or all zeros), so that it keeps the code as
/// written.
///
/// # Safety
/// - The CPU must support AVX2 ([`is_available`] returned `true`).
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn opaque(mut x: __m256i) -> __m256i {
    // SAFETY: an empty template: no instruction, no memory, no flags; `x`
    // goes in and out of a vector register unchanged.
    unsafe {
        core::arch::asm!("/* {0} */", inout(ymm_reg) x, options(pure, nomem, nostack, preserves_flags));
    }
    x
}

/// A 16-entry table for `vpshufb`, in both 128-bit lanes.
#[target_feature(enable = "avx2")]
#[inline]
fn table16(t: [i8; 16]) -> __m256i {
    #[rustfmt::skip]
    let table = _mm256_setr_epi8(
        t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7],
        t[8], t[9], t[10], t[11], t[12], t[13], t[14], t[15],
        t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7],
        t[8], t[9], t[10], t[11], t[12], t[13], t[14], t[15],
    );
    table
}

/// The UTF-8 errors of `bytes[from..from + 32]` (a lane not 0: the sequence
/// ending at that byte is invalid), from the byte and the three before it:
/// the lookup algorithm of Keiser and Lemire ("Validating UTF-8 in less than
/// one instruction per byte", 2021; simdjson's `utf8_lookup4`). Three tables
/// by nibble classify the previous byte's high and low nibble and this byte's
/// high nibble (an error is a bit all three share); a byte two or three after
/// a 3- or 4-byte lead must be a continuation, and only then may a
/// continuation follow a continuation.
///
/// # Safety
/// - `from >= 3` and `from + 32 <= bytes.len()`;
/// - the CPU must support AVX2 ([`is_available`] returned `true`).
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn utf8_errors32(bytes: &[u8], from: usize) -> __m256i {
    debug_assert!(from >= 3 && from + 32 <= bytes.len());
    // SAFETY: `from - 3 >= 0` and `from + 32 <= bytes.len()` (the caller's
    // guarantee), so the four unaligned 32-byte loads stay inside `bytes`.
    let (v, prev1, prev2, prev3) = unsafe {
        let p = bytes.as_ptr().add(from);
        (
            _mm256_loadu_si256(p as *const __m256i),
            _mm256_loadu_si256(p.sub(1) as *const __m256i),
            _mm256_loadu_si256(p.sub(2) as *const __m256i),
            _mm256_loadu_si256(p.sub(3) as *const __m256i),
        )
    };
    let nibbles = _mm256_set1_epi8(0x0f);
    let [high1, low1, high2] = UTF8_LOOKUP;
    let (byte_1_high, byte_1_low, byte_2_high) = (table16(high1), table16(low1), table16(high2));
    let special_cases = _mm256_and_si256(
        _mm256_and_si256(
            _mm256_shuffle_epi8(
                byte_1_high,
                _mm256_and_si256(_mm256_srli_epi16(prev1, 4), nibbles),
            ),
            _mm256_shuffle_epi8(byte_1_low, _mm256_and_si256(prev1, nibbles)),
        ),
        _mm256_shuffle_epi8(
            byte_2_high,
            _mm256_and_si256(_mm256_srli_epi16(v, 4), nibbles),
        ),
    );
    // Bit 7 set: two after a byte >= 0xe0 or three after one >= 0xf0.
    let third = _mm256_subs_epu8(prev2, _mm256_set1_epi8((0xe0u8 - 0x80) as i8));
    let fourth = _mm256_subs_epu8(prev3, _mm256_set1_epi8((0xf0u8 - 0x80) as i8));
    let must_be_continuation = _mm256_and_si256(
        _mm256_or_si256(third, fourth),
        _mm256_set1_epi8(0x80u8 as i8),
    );
    _mm256_xor_si256(must_be_continuation, special_cases)
}

/// The lanes of `bytes[from..from + 32]` that [`text_utf8_whole64`] rejects
/// (not 0): quotes and escape letters the fast check flags, control bytes,
/// UTF-8 errors.
///
/// # Safety
/// - `from >= 3` and `from + 32 <= bytes.len()`;
/// - the CPU must support AVX2 ([`is_available`] returned `true`).
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn text_bad32(bytes: &[u8], from: usize) -> __m256i {
    // SAFETY: the caller's guarantees (`from >= 3`, `from + 32 <= bytes.len()`,
    // AVX2) cover both.
    let ((escapes, special), errors) = unsafe {
        (
            text_flag_parts32(bytes, from, FlagConsts::new()),
            utf8_errors32(bytes, from),
        )
    };
    // SAFETY: `from + 32 <= bytes.len()`, so the unaligned load stays inside.
    let v = unsafe { _mm256_loadu_si256(bytes.as_ptr().add(from) as *const __m256i) };
    // Control bytes: special, and not negative (signed).
    let control = _mm256_andnot_si256(_mm256_cmpgt_epi8(_mm256_setzero_si256(), v), special);
    _mm256_or_si256(_mm256_or_si256(escapes, control), errors)
}

/// Whether the fast check flags nothing but bytes above 0x7f in
/// `bytes[from..from + 64]`, and these are whole valid UTF-8 characters
/// (`super::text::utf8_whole_scalar`): no error in [`utf8_errors32`] (its
/// first lanes check a character begun before `from`), none cut at the end.
///
/// # Safety
/// Out of line: the fast check's loop then keeps its constants in registers
/// and reads the bytes before each block straight into its compares (inlined,
/// this shares those loads, and the registers, with the fast check).
///
/// # Safety
/// - `from >= 3` and `from + 64 <= bytes.len()`;
/// - the CPU must support AVX2 ([`is_available`] returned `true`).
#[target_feature(enable = "avx2")]
#[inline(never)]
pub(crate) unsafe fn text_utf8_whole64(bytes: &[u8], from: usize) -> bool {
    debug_assert!(from >= 3 && from + 64 <= bytes.len());
    // SAFETY: `from + 32 >= from >= 3`, `from + 32 + 32 <= bytes.len()` and AVX2
    // are the caller's guarantees.
    let (lo, hi) = unsafe { (text_bad32(bytes, from), text_bad32(bytes, from + 32)) };
    let bad = _mm256_or_si256(lo, hi);
    // A character cut by the block's end: a lead in its last three bytes that
    // needs more than what is left.
    let cut = bytes[from + 63] >= 0xc0 || bytes[from + 62] >= 0xe0 || bytes[from + 61] >= 0xf0;
    _mm256_testz_si256(bad, bad) == 1 && !cut
}

/// Validates a long string body from the backslash at `bytes[p]`
/// ([`text_blocks`] on AVX2 masks).
///
/// # Safety
/// - The CPU must support AVX2 ([`is_available`] returned `true`).
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn text(bytes: &[u8], p: usize) -> Text {
    text_blocks(
        bytes,
        p,
        // SAFETY: `text_blocks` passes only `at + 64 <= bytes.len()`; AVX2 is
        // the caller's guarantee.
        |b, at| unsafe { text_masks64(b, at) },
        // SAFETY: as for the masks, `at >= p + 64 >= 3` and `last + 64 ==
        // b.len()`.
        |b, at, last| unsafe { text_pass(b, at, last) },
    )
}

/// One past the closing quote of the validated string in which `bytes[p]` is a
/// backslash ([`skip_text_blocks`] on AVX2 masks).
///
/// # Safety
/// - The CPU must support AVX2 ([`is_available`] returned `true`).
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn skip_text(bytes: &[u8], p: usize) -> usize {
    let qb = |m: TextMasks| (m.quotes, m.backslashes);
    skip_text_blocks(
        bytes,
        p,
        // SAFETY: `skip_text_blocks` passes only `at + 64 <= bytes.len()`; AVX2 is
        // the caller's guarantee.
        |b, at| qb(unsafe { text_masks64(b, at) }),
        // SAFETY: the padded block is 64 bytes long; AVX2 as above.
        |block| qb(unsafe { text_masks64(block, 0) }),
        // SAFETY: as for the masks.
        |b, at| unsafe { plain64(b, at) },
    )
}

/// The byte classes of a 64-byte block for the structural walk
/// ([`crate::parse::blocks::Classes`]), in two 32-byte steps: whitespace and
/// the six structural characters by two table lookups on the low nibble
/// (simdjson's classification), quotes and backslashes by compares, control
/// bytes by an unsigned minimum, bytes >= 0x80 by their sign bit.
///
/// The lookups are exact for whitespace; for the structural characters they
/// also take 0x0c and 0x1a (`x | 0x20` is `,` and `:`), control bytes taken
/// out again at the end.
///
/// # Safety
/// - The CPU must support AVX2 ([`is_available`] returned `true`).
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) unsafe fn classes64(block: &[u8; 64]) -> crate::parse::blocks::Classes {
    let ws_table = _mm256_setr_epi8(
        b' ' as i8,
        100,
        100,
        100,
        17,
        100,
        113,
        2,
        100,
        b'\t' as i8,
        b'\n' as i8,
        112,
        100,
        b'\r' as i8,
        100,
        100,
        b' ' as i8,
        100,
        100,
        100,
        17,
        100,
        113,
        2,
        100,
        b'\t' as i8,
        b'\n' as i8,
        112,
        100,
        b'\r' as i8,
        100,
        100,
    );
    let op_table = _mm256_setr_epi8(
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, b':' as i8, b'{' as i8, b',' as i8, b'}' as i8, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, b':' as i8, b'{' as i8, b',' as i8, b'}' as i8, 0, 0,
    );
    let mut c = crate::parse::blocks::Classes::default();
    for k in 0..2 {
        // SAFETY: `32 * k + 32 <= 64 == block.len()`, so the unaligned 32-byte
        // load stays inside `block`.
        let v = unsafe { _mm256_loadu_si256(block.as_ptr().add(32 * k) as *const __m256i) };
        let bits = |x| u64::from(_mm256_movemask_epi8(x) as u32) << (32 * k);
        c.ws |= bits(_mm256_cmpeq_epi8(v, _mm256_shuffle_epi8(ws_table, v)));
        let curly = _mm256_or_si256(v, _mm256_set1_epi8(0x20));
        c.op |= bits(_mm256_cmpeq_epi8(curly, _mm256_shuffle_epi8(op_table, v)));
        c.quote |= bits(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'"' as i8)));
        c.backslash |= bits(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'\\' as i8)));
        c.ctrl |= bits(_mm256_cmpeq_epi8(
            _mm256_min_epu8(v, _mm256_set1_epi8(0x1f)),
            v,
        ));
        c.high |= bits(v);
    }
    c.op &= !c.ctrl;
    c
}

/// The classes of a block for [`crate::parse::arrays`].
///
/// # Safety
/// - The CPU must support AVX2 ([`is_available`] returned `true`).
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) unsafe fn number_array64(block: &[u8; 64]) -> crate::parse::arrays::NumberArray {
    let mut c = crate::parse::arrays::NumberArray::default();
    for k in 0..2 {
        // SAFETY: `32 * k + 32 <= 64 == block.len()`, so the unaligned 32-byte
        // load stays inside `block`.
        let v = unsafe { _mm256_loadu_si256(block.as_ptr().add(32 * k) as *const __m256i) };
        let bits = |x| u64::from(_mm256_movemask_epi8(x) as u32) << (32 * k);
        let is = |x: u8| bits(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(x as i8)));
        // Digits: `v - '0'` at most 9, unsigned.
        let t = _mm256_sub_epi8(v, _mm256_set1_epi8(b'0' as i8));
        c.digit |= bits(_mm256_cmpeq_epi8(
            _mm256_min_epu8(t, _mm256_set1_epi8(9)),
            t,
        ));
        c.zero |= is(b'0');
        c.minus |= is(b'-');
        c.dot |= is(b'.');
        c.comma |= is(b',');
        c.open |= is(b'[');
        c.close |= is(b']');
    }
    c
}

/// The digit mask of `bytes[from..from + 32]` (bit i: byte `from + i` is an
/// ASCII digit), for the structural walk's numbers.
///
/// # Safety
/// - `from + 32 <= bytes.len()`;
/// - the CPU must support AVX2 ([`is_available`] returned `true`).
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) unsafe fn digits32(bytes: &[u8], from: usize) -> u32 {
    debug_assert!(from + 32 <= bytes.len());
    // SAFETY: `from + 32 <= bytes.len()` (the caller's guarantee), so the
    // unaligned 32-byte load stays inside `bytes`.
    let v = unsafe { _mm256_loadu_si256(bytes.as_ptr().add(from) as *const __m256i) };
    // Digits are the bytes 0x30..=0x39: as signed bytes, above 0x2f and below 0x3a.
    let above = _mm256_cmpgt_epi8(v, _mm256_set1_epi8(0x2f));
    let below = _mm256_cmpgt_epi8(_mm256_set1_epi8(0x3a), v);
    _mm256_movemask_epi8(_mm256_and_si256(above, below)) as u32
}
