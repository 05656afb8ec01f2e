//! AVX-512 kernel: sixty-four bytes per vector, compares straight into 64-bit
//! masks, chosen at run time on Ice Lake-class CPUs and later.
//!
//! Only the masks of the shared walks ([`super::skip`], [`mod@super::text`]) are
//! new here; they have the same definitions as the AVX2 kernel's (see
//! [`super::avx2`]), in one vector per block instead of two, and masked
//! compares fold the ANDs of the escape rules into the compares.

use core::arch::x86_64::{
    __m512i, _mm_setr_epi8, _mm512_and_si512, _mm512_broadcast_i32x4, _mm512_cmpeq_epi8_mask,
    _mm512_cmplt_epi8_mask, _mm512_cmplt_epu8_mask, _mm512_loadu_si512,
    _mm512_mask_cmpeq_epi8_mask, _mm512_mask_cmpneq_epi8_mask, _mm512_or_si512, _mm512_set1_epi8,
    _mm512_shuffle_epi8, _mm512_srli_epi16, _mm512_subs_epu8, _mm512_test_epi8_mask,
    _mm512_xor_si512,
};

use super::avx2::prefix_xor_clmul;
use super::skip::{Kernel, Masks, count_blocks, skip_blocks, skip_text_blocks};
use super::text::{Text, TextMasks, UTF8_LOOKUP, pass_each, text_blocks};

/// Whether this CPU can run this kernel: AVX-512 F and BW (the 64-byte
/// compares into masks) with VBMI2, which only Ice Lake-class CPUs and later
/// have (as simdjson's icelake kernel requires: Skylake-X, which down-clocks
/// on 512-bit work, keeps AVX2), and everything [`super::avx2::is_available`]
/// requires (the walks are compiled for it too).
pub(crate) fn is_available() -> bool {
    std::is_x86_feature_detected!("avx512f")
        && std::is_x86_feature_detected!("avx512bw")
        && std::is_x86_feature_detected!("avx512vbmi2")
        && super::avx2::is_available()
}

/// The 64 bytes at `bytes[from..from + 64]`, unaligned.
///
/// # Safety
/// - `from + 64 <= bytes.len()`;
/// - the CPU must support AVX-512 F ([`is_available`] returned `true`).
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn load(bytes: &[u8], from: usize) -> __m512i {
    debug_assert!(from + 64 <= bytes.len());
    // SAFETY: `from + 64 <= bytes.len()` (the caller's guarantee), so the
    // unaligned 64-byte load stays inside `bytes`.
    unsafe { _mm512_loadu_si512(bytes.as_ptr().add(from) as *const _) }
}

/// A 16-entry table for `vpshufb`, in all four 128-bit lanes.
#[target_feature(enable = "avx512f")]
#[inline]
fn table16(t: [i8; 16]) -> __m512i {
    #[rustfmt::skip]
    let lane = _mm_setr_epi8(
        t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7],
        t[8], t[9], t[10], t[11], t[12], t[13], t[14], t[15],
    );
    _mm512_broadcast_i32x4(lane)
}

/// `x` as it is, out of the optimizer's sight: a mask kept where it is rather
/// than recomputed (LLVM turns `a & !quotes` into a second compare, `v != '"'`,
/// on port 5 with all the others, instead of one mask operation on port 0).
///
/// # Safety
/// - The CPU must support AVX-512 F and BW ([`is_available`] returned `true`).
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
unsafe fn opaque(mut x: u64) -> u64 {
    // SAFETY: an empty template: no instruction, no memory, no flags; `x`
    // goes in and out of a mask register unchanged.
    unsafe {
        core::arch::asm!("/* {0} */", inout(kreg) x, options(pure, nomem, nostack, preserves_flags));
    }
    x
}

/// The quote, backslash, opening- and closing-bracket and comma masks of
/// `bytes[from..from + 64]` (bit i = byte `from + i`): one load, five compares.
///
/// # Safety
/// - `from + 64 <= bytes.len()`;
/// - the CPU must support AVX-512 F and BW ([`is_available`] returned `true`).
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
pub(crate) unsafe fn structural_masks64(bytes: &[u8], from: usize) -> Masks {
    // SAFETY: the caller's guarantees, passed on.
    let v = unsafe { load(bytes, from) };
    // `[` (0x5b) and `{` (0x7b) differ only in bit 5, as do `]` and `}`; no
    // other byte becomes 0x7b or 0x7d with bit 5 set.
    let folded = _mm512_or_si512(v, _mm512_set1_epi8(0x20));
    Masks {
        quotes: _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b'"' as i8)),
        backslashes: _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b'\\' as i8)),
        opens: _mm512_cmpeq_epi8_mask(folded, _mm512_set1_epi8(b'{' as i8)),
        closes: _mm512_cmpeq_epi8_mask(folded, _mm512_set1_epi8(b'}' as i8)),
        commas: _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b',' as i8)),
    }
}

/// Whether `bytes[from..from + 64]` holds no `"` and does not end in a `\\`
/// ([`Kernel::plain`] of [`skip_text_blocks`]): two compares, the second
/// masked to the last byte.
///
/// # Safety
/// - `from + 64 <= bytes.len()`;
/// - the CPU must support AVX-512 F and BW ([`is_available`] returned `true`).
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
pub(crate) unsafe fn plain64(bytes: &[u8], from: usize) -> bool {
    // SAFETY: the caller's guarantees, passed on.
    let v = unsafe { load(bytes, from) };
    let quotes = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b'"' as i8));
    let last = _mm512_mask_cmpeq_epi8_mask(1 << 63, v, _mm512_set1_epi8(b'\\' as i8));
    (quotes | last) == 0
}

/// Whether the `n` bytes at `from` (`n` = 64 times `N`), inside a string open
/// at `from`, cannot close it and leave no escape pending
/// ([`Kernel::plain128`]): one compare per vector (and one masked to the last
/// byte) when they hold no quote and do not end in a `\\`; otherwise every
/// such byte must follow a backslash run of exactly one (the bytes one and
/// two before it, loaded unaligned, compared under the mask of those bytes).
///
/// # Safety
/// - `2 <= from` and `from + 64 * N <= bytes.len()`;
/// - the CPU must support AVX-512 F and BW ([`is_available`] returned `true`).
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
unsafe fn plain_escaped<const N: usize>(bytes: &[u8], from: usize) -> bool {
    debug_assert!(2 <= from && from + 64 * N <= bytes.len());
    // SAFETY: `from - 2 + 64 * k + 64 <= from + 64 * N <= bytes.len()` for
    // `k < N` and offsets `d` in 0..=2, and `from >= 2` (the caller's
    // guarantee), so each unaligned 64-byte load stays inside `bytes`.
    let load_at = |k: usize, d: usize| unsafe { load(bytes, from + 64 * k - d) };
    let quote = _mm512_set1_epi8(b'"' as i8);
    let backslash = _mm512_set1_epi8(b'\\' as i8);
    let hits: [u64; N] = core::array::from_fn(|k| {
        let v = load_at(k, 0);
        let q = _mm512_cmpeq_epi8_mask(v, quote);
        if k + 1 == N {
            q | _mm512_mask_cmpeq_epi8_mask(1 << 63, v, backslash)
        } else {
            q
        }
    });
    if hits.iter().fold(0, |a, &h| a | h) == 0 {
        return true;
    }
    // A quote after exactly one backslash is escaped; a last `\\` after exactly
    // one ends a run of two, escaping nothing after the block.
    let mut bad = 0u64;
    for (k, &h) in hits.iter().enumerate() {
        let after = _mm512_mask_cmpeq_epi8_mask(h, load_at(k, 1), backslash);
        let after_one = _mm512_mask_cmpneq_epi8_mask(after, load_at(k, 2), backslash);
        bad |= h ^ after_one;
    }
    bad == 0
}

/// [`plain_escaped`] on 64 bytes ([`Kernel::plain`]).
///
/// # Safety
/// - `2 <= from` and `from + 64 <= bytes.len()`;
/// - the CPU must support AVX-512 F and BW ([`is_available`] returned `true`).
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
pub(crate) unsafe fn plain_escaped64(bytes: &[u8], from: usize) -> bool {
    // SAFETY: the caller's guarantees, passed on.
    unsafe { plain_escaped::<1>(bytes, from) }
}

/// [`plain_escaped`] on 128 bytes ([`Kernel::plain128`]).
///
/// # Safety
/// - `2 <= from` and `from + 128 <= bytes.len()`;
/// - the CPU must support AVX-512 F and BW ([`is_available`] returned `true`).
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
pub(crate) unsafe fn plain_escaped128(bytes: &[u8], from: usize) -> bool {
    // SAFETY: the caller's guarantees, passed on.
    unsafe { plain_escaped::<2>(bytes, from) }
}

/// The AVX-512 kernel of the shared walks: the masks of
/// [`structural_masks64`], [`plain_escaped64`] and [`plain_escaped128`],
/// [`prefix_xor_clmul`]. Only for functions compiled with AVX-512 F and BW,
/// AVX2 and PCLMULQDQ (the closures inherit them).
macro_rules! kernel {
    () => {
        Kernel {
            // SAFETY: the walks pass only `at + 64 <= bytes.len()`; AVX-512 is
            // the caller's guarantee.
            masks: |b: &[u8], at| unsafe { structural_masks64(b, at) },
            // SAFETY: the padded block is 64 bytes long; AVX-512 as above.
            tail_masks: |block: &[u8; 64]| unsafe { structural_masks64(block, 0) },
            // SAFETY: the walks pass only `2 <= at` and `at + 64 <= bytes.len()`;
            // AVX-512 as above.
            plain: |b: &[u8], at| unsafe { plain_escaped64(b, at) },
            // SAFETY: the walks pass only `2 <= at` and `at + 128 <= bytes.len()`;
            // AVX-512 as above.
            plain128: |b: &[u8], at| unsafe { plain_escaped128(b, at) },
            prefix_xor: |x| prefix_xor_clmul(x),
        }
    };
}

/// The end of the validated array or object opening at `bytes[p]`
/// ([`skip_blocks`] on AVX-512 masks).
///
/// # Safety
/// - The CPU must support this kernel ([`is_available`] returned `true`).
#[target_feature(enable = "avx2,popcnt,pclmulqdq,bmi1,bmi2,avx512f,avx512bw,avx512vbmi2")]
pub(crate) unsafe fn skip_container(bytes: &[u8], p: usize) -> usize {
    skip_blocks(bytes, p, &kernel!())
}

/// The number of values left in a validated array or object from `bytes[p]`
/// ([`count_blocks`] on AVX-512 masks).
///
/// # Safety
/// - The CPU must support this kernel ([`is_available`] returned `true`).
#[target_feature(enable = "avx2,popcnt,pclmulqdq,bmi1,bmi2,avx512f,avx512bw,avx512vbmi2")]
pub(crate) unsafe fn count_values(bytes: &[u8], p: usize) -> usize {
    count_blocks(bytes, p, &kernel!())
}

/// The quote, backslash, special (below 0x20 or above 0x7f) and simple escape
/// letter masks of `bytes[from..from + 64]` (bit i = byte `from + i`): one
/// load, three compares, two table lookups and a test.
///
/// # Safety
/// - `from + 64 <= bytes.len()`;
/// - the CPU must support AVX-512 F and BW ([`is_available`] returned `true`).
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
pub(crate) unsafe fn text_masks64(bytes: &[u8], from: usize) -> TextMasks {
    // SAFETY: the caller's guarantees, passed on.
    let v = unsafe { load(bytes, from) };
    // The simple escape letters `"\/bfnrt` by nibbles, as in the AVX2 kernel
    // (`super::avx2::text_masks64`): a byte is one when the entries of its
    // high and low nibble share a bit; a byte >= 0x80 looks up 0 in the low
    // table (`vpshufb` zeroes lanes whose index has bit 7 set).
    let hi_table = table16([0, 0, 1, 0, 0, 2, 4, 8, 0, 0, 0, 0, 0, 0, 0, 0]);
    let lo_table = table16([0, 0, 0x0d, 0, 8, 0, 4, 0, 0, 0, 0, 0, 2, 0, 4, 1]);
    let hi = _mm512_and_si512(_mm512_srli_epi16::<4>(v), _mm512_set1_epi8(0x0f));
    TextMasks {
        quotes: _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b'"' as i8)),
        backslashes: _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b'\\' as i8)),
        // Signed: v < 0x20 holds for control bytes and for every byte >= 0x80.
        special: _mm512_cmplt_epi8_mask(v, _mm512_set1_epi8(0x20)),
        simple: _mm512_test_epi8_mask(
            _mm512_shuffle_epi8(hi_table, hi),
            _mm512_shuffle_epi8(lo_table, v),
        ),
    }
}

/// The fast check's flags of `bytes[from..from + 64]` (bit i = byte
/// `from + i`, [`super::text::flags_scalar`]) in two parts: the quotes and
/// escape letters, and the bytes below 0x20 or above 0x7f; from three
/// overlapping loads (at `from`, `from - 1`, `from - 2`).
///
/// # Safety
/// - `from >= 2` and `from + 64 <= bytes.len()`;
/// - the CPU must support AVX-512 F and BW ([`is_available`] returned `true`).
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
unsafe fn text_flag_parts64(bytes: &[u8], from: usize) -> (u64, u64) {
    debug_assert!(from >= 2 && from + 64 <= bytes.len());
    // SAFETY: `from - 2 >= 0` and `from + 64 <= bytes.len()` (the caller's
    // guarantee), so the three unaligned loads stay inside `bytes`.
    let (v, v1, v2) = unsafe {
        (
            load(bytes, from),
            load(bytes, from - 1),
            load(bytes, from - 2),
        )
    };
    let bslash = _mm512_set1_epi8(b'\\' as i8);
    // SAFETY: AVX-512 F and BW are the caller's guarantee.
    let quote = unsafe { opaque(_mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(b'"' as i8))) };
    let after_bs = _mm512_cmpeq_epi8_mask(v1, bslash);
    // Quotes right after a lone backslash: certainly escaped.
    let escaped_quote = _mm512_mask_cmpneq_epi8_mask(quote & after_bs, v2, bslash);
    // Signed: v < 0x20 holds for control bytes and for every byte >= 0x80.
    let special = _mm512_cmplt_epi8_mask(v, _mm512_set1_epi8(0x20));
    // The simple escape letters but `b` (flagged: rare in text, and the exact
    // path takes it) and `"` (taken below) by their low nibble, as in the AVX2
    // kernel: the byte equal to its entry; other entries 0x80 equal no byte
    // that looks them up (`vpshufb` gives 0 for bytes >= 0x80).
    #[rustfmt::skip]
    let letters = table16([
        -128, -128, b'r' as i8, -128, b't' as i8, -128, b'f' as i8, -128,
        -128, -128, -128, -128, b'\\' as i8, -128, b'n' as i8, b'/' as i8,
    ]);
    let bad_letters = _mm512_mask_cmpneq_epi8_mask(after_bs, _mm512_shuffle_epi8(letters, v), v);
    // Every quote, and every quote after a backslash as a bad letter too; the
    // escaped ones (a subset of both, and no other flag's byte) cleared by one
    // XOR: one mask operation fewer than masking the letters by the quotes,
    // and no compare for the quotes' complement (the compiler's choice
    // otherwise), on the port the compares all share.
    ((quote | bad_letters) ^ escaped_quote, special)
}

/// The fast check's flags of `bytes[from..from + 64]` (bit i = byte `from + i`,
/// [`super::text::flags_scalar`]): for the tests; the walk takes
/// [`text_plain64`].
///
/// # Safety
/// - `from >= 2` and `from + 64 <= bytes.len()`;
/// - the CPU must support AVX-512 F and BW ([`is_available`] returned `true`).
#[cfg(test)]
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) unsafe fn text_flags64(bytes: &[u8], from: usize) -> u64 {
    // SAFETY: the caller's guarantees, passed on.
    let (escapes, special) = unsafe { text_flag_parts64(bytes, from) };
    escapes | special
}

/// Whether the block walk may pass `bytes[from..from + 64]` without its exact
/// path: the fast check flags nothing ([`super::text::flags_scalar`], one
/// mask), or it flags only bytes above 0x7f and these are whole valid UTF-8
/// characters (`super::text::utf8_whole_scalar`: no error in
/// [`utf8_errors64`], whose first lanes check a character begun before
/// `from`, none cut at the end).
///
/// # Safety
/// - `from >= 3` and `from + 64 <= bytes.len()`;
/// - the CPU must support AVX-512 F and BW ([`is_available`] returned `true`).
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
pub(crate) unsafe fn text_plain64(bytes: &[u8], from: usize) -> bool {
    debug_assert!(from >= 3 && from + 64 <= bytes.len());
    // SAFETY: `from >= 3`, `from + 64 <= bytes.len()` and AVX-512 are the
    // caller's guarantees.
    let (escapes, special) = unsafe { text_flag_parts64(bytes, from) };
    if escapes | special == 0 {
        return true;
    }
    if escapes != 0 {
        return false;
    }
    // SAFETY: as above.
    let (v, errors) = unsafe { (load(bytes, from), utf8_errors64(bytes, from)) };
    // Control bytes: below 0x20, unsigned.
    let control = _mm512_cmplt_epu8_mask(v, _mm512_set1_epi8(0x20));
    // A character cut by the block's end: a lead in its last three bytes that
    // needs more than what is left.
    let cut = bytes[from + 63] >= 0xc0 || bytes[from + 62] >= 0xe0 || bytes[from + 61] >= 0xf0;
    (control | _mm512_test_epi8_mask(errors, errors)) == 0 && !cut
}

/// The UTF-8 errors of `bytes[from..from + 64]` (a lane not 0: the sequence
/// ending at that byte is invalid), from the byte and the three before it:
/// the AVX2 kernel's lookup algorithm (`super::avx2`'s `utf8_errors32`, Keiser
/// and Lemire 2021) on 64 lanes, the same tables in all four 128-bit lanes.
///
/// # Safety
/// - `from >= 3` and `from + 64 <= bytes.len()`;
/// - the CPU must support AVX-512 F and BW ([`is_available`] returned `true`).
#[target_feature(enable = "avx512f,avx512bw")]
#[inline]
unsafe fn utf8_errors64(bytes: &[u8], from: usize) -> __m512i {
    debug_assert!(from >= 3 && from + 64 <= bytes.len());
    // SAFETY: `from - 3 >= 0` and `from + 64 <= bytes.len()` (the caller's
    // guarantee), so the four unaligned loads stay inside `bytes`.
    let (v, prev1, prev2, prev3) = unsafe {
        (
            load(bytes, from),
            load(bytes, from - 1),
            load(bytes, from - 2),
            load(bytes, from - 3),
        )
    };
    let nibbles = _mm512_set1_epi8(0x0f);
    let [high1, low1, high2] = UTF8_LOOKUP;
    let (byte_1_high, byte_1_low, byte_2_high) = (table16(high1), table16(low1), table16(high2));
    let high = |x: __m512i| _mm512_and_si512(_mm512_srli_epi16::<4>(x), nibbles);
    let special_cases = _mm512_and_si512(
        _mm512_and_si512(
            _mm512_shuffle_epi8(byte_1_high, high(prev1)),
            _mm512_shuffle_epi8(byte_1_low, _mm512_and_si512(prev1, nibbles)),
        ),
        _mm512_shuffle_epi8(byte_2_high, high(v)),
    );
    // Bit 7 set: two after a byte >= 0xe0 or three after one >= 0xf0.
    let third = _mm512_subs_epu8(prev2, _mm512_set1_epi8((0xe0u8 - 0x80) as i8));
    let fourth = _mm512_subs_epu8(prev3, _mm512_set1_epi8((0xf0u8 - 0x80) as i8));
    let must_be_continuation = _mm512_and_si512(
        _mm512_or_si512(third, fourth),
        _mm512_set1_epi8(0x80u8 as i8),
    );
    _mm512_xor_si512(must_be_continuation, special_cases)
}

/// Whether the fast check flags nothing but bytes above 0x7f in
/// `bytes[from..from + 64]`, and these are whole valid UTF-8 characters: the
/// second check of [`text_plain64`], for the tests.
///
/// # Safety
/// - `from >= 3` and `from + 64 <= bytes.len()`;
/// - the CPU must support AVX-512 F and BW ([`is_available`] returned `true`).
#[cfg(test)]
#[target_feature(enable = "avx512f,avx512bw")]
pub(crate) unsafe fn text_utf8_whole64(bytes: &[u8], from: usize) -> bool {
    // SAFETY: the caller's guarantees, passed on.
    let (escapes, _) = unsafe { text_flag_parts64(bytes, from) };
    // SAFETY: as above.
    escapes == 0 && unsafe { text_plain64(bytes, from) }
}

/// Validates a long string body from the backslash at `bytes[p]`
/// ([`text_blocks`] on AVX-512 masks).
///
/// # Safety
/// - The CPU must support this kernel ([`is_available`] returned `true`).
#[target_feature(enable = "avx2,popcnt,pclmulqdq,bmi1,bmi2,avx512f,avx512bw,avx512vbmi2")]
pub(crate) unsafe fn text(bytes: &[u8], p: usize) -> Text {
    text_blocks(
        bytes,
        p,
        // SAFETY: `text_blocks` passes only `at + 64 <= bytes.len()`; AVX-512
        // is the caller's guarantee.
        |b, at| unsafe { text_masks64(b, at) },
        // SAFETY: as for the masks, and `at >= p + 64 >= 3`.
        pass_each(|b, at| unsafe { text_plain64(b, at) }),
    )
}

/// One past the closing quote of the validated string in which `bytes[p]` is a
/// backslash ([`skip_text_blocks`] on AVX-512 masks).
///
/// # Safety
/// - The CPU must support this kernel ([`is_available`] returned `true`).
#[target_feature(enable = "avx2,popcnt,pclmulqdq,bmi1,bmi2,avx512f,avx512bw,avx512vbmi2")]
pub(crate) unsafe fn skip_text(bytes: &[u8], p: usize) -> usize {
    let qb = |m: TextMasks| (m.quotes, m.backslashes);
    skip_text_blocks(
        bytes,
        p,
        // SAFETY: `skip_text_blocks` passes only `at + 64 <= bytes.len()`;
        // AVX-512 is the caller's guarantee.
        |b, at| qb(unsafe { text_masks64(b, at) }),
        // SAFETY: the padded block is 64 bytes long; AVX-512 as above.
        |block| qb(unsafe { text_masks64(block, 0) }),
        // SAFETY: as for the masks.
        |b, at| unsafe { plain64(b, at) },
    )
}
