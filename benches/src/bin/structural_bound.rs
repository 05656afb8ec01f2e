//! A measuring stick for issue #6's last gap (`params_4k`, 10× jsonrpsee): how fast
//! could a simdjson-style validator go on that message, on this machine?
//!
//! ```text
//! cargo build --release -p switchboard-benches --bin structural_bound
//! target/release/structural_bound [JSON file, default benches/corpus/params_4k.json]
//! ```
//!
//! Not a validator: a lower bound for one. Stage 1 (AVX-512 BW and carry-less
//! multiply) turns each 64-byte block into the bitmap of token starts: quotes not
//! escaped (simdjson's odd-backslash-run rule), inside/outside strings by prefix XOR,
//! structural bytes, whitespace, the first byte of each number or literal. Stage 2
//! walks those bits with `tzcnt`/`blsr` (no position depends on the previous token's
//! bytes) through the grammar as nested loops (a value; after it `,` or a close; in
//! objects `"key"` then `:`). Left out, so the bound is generous: string contents
//! (UTF-8, escapes, control bytes but a mask), number and literal grammar, depth
//! limits, error positions. It checks its token count against a byte-by-byte
//! tokenizer and that stage 2 accepts, then times, interleaved in ~2 ms blocks:
//! switchboard's full validation (`Parser::validate`), stage 1, stage 2 (fastest
//! block, ns per message).
//!
//! Needs x86_64 with AVX-512 F and BW and PCLMULQDQ; elsewhere it says so and exits.

use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| format!("{}/corpus/params_4k.json", env!("CARGO_MANIFEST_DIR")));
    let msg = match std::fs::read(&path) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("structural_bound: {path}: {e}");
            return ExitCode::FAILURE;
        }
    };
    run(&path, &msg)
}

#[cfg(not(target_arch = "x86_64"))]
fn run(_path: &str, _msg: &[u8]) -> ExitCode {
    println!("structural_bound: x86_64 only (AVX-512 stage 1); nothing measured");
    ExitCode::SUCCESS
}

#[cfg(target_arch = "x86_64")]
fn run(path: &str, msg: &[u8]) -> ExitCode {
    if !(is_x86_feature_detected!("avx512f")
        && is_x86_feature_detected!("avx512bw")
        && is_x86_feature_detected!("pclmulqdq"))
    {
        println!("structural_bound: this CPU lacks AVX-512 F/BW or PCLMULQDQ; nothing measured");
        return ExitCode::SUCCESS;
    }
    // Whitespace up to a whole block: the stages read whole blocks only.
    let mut b = msg.to_vec();
    b.resize(msg.len().div_ceil(64) * 64, b' ');
    let mut bits = Vec::with_capacity(b.len() / 64);
    // SAFETY: the CPU has AVX-512 F/BW and PCLMULQDQ (checked above).
    let control = unsafe { x86::stage1(&b, &mut bits) };
    let tokens: u32 = bits.iter().map(|w| w.count_ones()).sum();
    let expected = tokens_by_bytes(msg);
    let accepted = x86::stage2(&b, &bits);
    println!(
        "{path}: {} bytes, {tokens} tokens (byte-by-byte tokenizer: {expected}), stage 2 {}",
        msg.len(),
        if accepted { "accepts" } else { "REJECTS" }
    );
    if tokens != expected || !accepted || control != 0 {
        eprintln!("structural_bound: the stages disagree with the input; no timing");
        return ExitCode::FAILURE;
    }
    let mut parser = switchboard::Parser::new();
    assert!(
        parser.validate(msg).is_ok(),
        "switchboard rejects the input"
    );
    let mut best = [f64::MAX; 3];
    for _ in 0..200 {
        best[0] = best[0].min(block(|| parser.validate(std::hint::black_box(msg)).is_ok()));
        best[1] = best[1].min(block(|| {
            // SAFETY: as above.
            unsafe { x86::stage1(std::hint::black_box(&b), &mut bits) == 0 }
        }));
        best[2] = best[2].min(block(|| {
            x86::stage2(std::hint::black_box(&b), std::hint::black_box(&bits))
        }));
    }
    println!(
        "fastest ~2 ms block, ns per message: switchboard validate {:.0} | stage 1 {:.0} + stage 2 {:.0} = {:.0} ({:.2}x switchboard's)",
        best[0],
        best[1],
        best[2],
        best[1] + best[2],
        (best[1] + best[2]) / best[0]
    );
    ExitCode::SUCCESS
}

/// ns per call of `f` over a block of about 2 ms.
fn block(mut f: impl FnMut() -> bool) -> f64 {
    let mut n = 1u32;
    loop {
        let t = Instant::now();
        let mut ok = true;
        for _ in 0..n {
            ok &= f();
        }
        let ns = t.elapsed().as_nanos() as f64;
        assert!(ok);
        if ns > 2e6 {
            return ns / f64::from(n);
        }
        n *= 2;
    }
}

/// Token starts counted byte by byte: structural bytes and opening quotes outside
/// strings, and the first byte of every run of other non-whitespace bytes there.
fn tokens_by_bytes(b: &[u8]) -> u32 {
    let (mut n, mut in_str, mut esc, mut in_scalar) = (0, false, false, false);
    for &c in b {
        if in_str {
            if esc {
                esc = false;
            } else if c == b'\\' {
                esc = true;
            } else if c == b'"' {
                in_str = false;
            }
            continue;
        }
        let scalar = !matches!(c, b'"' | b'{' | b'}' | b'[' | b']' | b':' | b',')
            && !c.is_ascii_whitespace();
        n += u32::from(!scalar && !c.is_ascii_whitespace() || scalar && !in_scalar);
        in_str = c == b'"';
        in_scalar = scalar;
    }
    n
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// The token-start bitmap of each 64-byte block of `b` into `out`; returns the
    /// control bytes found inside strings (0 for valid JSON).
    ///
    /// # Safety
    /// The CPU must have AVX-512 F and BW and PCLMULQDQ.
    #[target_feature(enable = "avx512f,avx512bw,pclmulqdq,bmi1,bmi2")]
    pub unsafe fn stage1(b: &[u8], out: &mut Vec<u64>) -> u64 {
        const EVEN: u64 = 0x5555_5555_5555_5555;
        out.clear();
        let (mut in_carry, mut bs_carry, mut scalar_carry, mut control) = (0u64, 0u64, 0u64, 0u64);
        for block in b.chunks_exact(64) {
            // SAFETY: `block` is 64 readable bytes; the load is unaligned.
            let v = unsafe { _mm512_loadu_si512(block.as_ptr().cast()) };
            let eq = |c: u8| _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(c as i8));
            let bs = eq(b'\\');
            // Bytes escaped by an odd run of backslashes (simdjson's rule).
            let escaped = if bs | bs_carry == 0 {
                0
            } else {
                let bs = bs & !bs_carry;
                let follows = (bs << 1) | bs_carry;
                let odd_starts = bs & !EVEN & !follows;
                let (even_runs, overflow) = odd_starts.overflowing_add(bs);
                bs_carry = u64::from(overflow);
                (EVEN ^ (even_runs << 1)) & follows
            };
            let quotes = eq(b'"') & !escaped;
            // Inside strings: prefix XOR of the quotes (opening quote in, closing out).
            let all = _mm_set1_epi8(-1);
            let px = _mm_clmulepi64_si128::<0>(_mm_set_epi64x(0, quotes as i64), all);
            let in_str = (_mm_cvtsi128_si64(px) as u64) ^ in_carry;
            in_carry = ((in_str as i64) >> 63) as u64;
            let folded = _mm512_or_si512(v, _mm512_set1_epi8(0x20));
            let brackets = _mm512_cmpeq_epi8_mask(folded, _mm512_set1_epi8(b'{' as i8))
                | _mm512_cmpeq_epi8_mask(folded, _mm512_set1_epi8(b'}' as i8));
            let separators = eq(b',') | eq(b':');
            let ws = eq(b' ') | eq(b'\n') | eq(b'\r') | eq(b'\t');
            control |= _mm512_cmplt_epu8_mask(v, _mm512_set1_epi8(0x20)) & in_str & !quotes;
            let structural = (brackets | separators) & !in_str;
            let scalar = !in_str & !(brackets | separators | ws | quotes);
            let scalar_starts = scalar & !((scalar << 1) | scalar_carry);
            scalar_carry = scalar >> 63;
            out.push(structural | scalar_starts | (quotes & in_str));
        }
        control
    }

    /// The grammar over the token starts of `b` (`bits` from [`stage1`]): whether
    /// they form one JSON value (token kinds only; see the module docs).
    #[inline(never)]
    pub fn stage2(b: &[u8], bits: &[u64]) -> bool {
        let (mut wi, mut m) = (0usize, bits.first().copied().unwrap_or(0));
        let mut next = || -> usize {
            while m == 0 {
                wi += 1;
                match bits.get(wi) {
                    Some(&w) => m = w,
                    None => return usize::MAX,
                }
            }
            let p = 64 * wi + m.trailing_zeros() as usize;
            m &= m - 1;
            p
        };
        let at = |p: usize| b.get(p).copied().unwrap_or(0);
        let (mut objects, mut depth) = (0u64, 0u32); // one bit per level: 1 = object
        let mut p = next();
        'value: loop {
            let c = at(p);
            if c | 0x20 == b'{' {
                let object = c == b'{';
                if depth == 63 {
                    return false;
                }
                objects = (objects << 1) | u64::from(object);
                depth += 1;
                p = next();
                let d = at(p);
                if d == if object { b'}' } else { b']' } {
                    objects >>= 1;
                    depth -= 1;
                } else if object {
                    if d != b'"' || at(next()) != b':' {
                        return false;
                    }
                    p = next();
                    continue 'value;
                } else {
                    continue 'value;
                }
            } else if matches!(c, 0 | b',' | b':' | b'}' | b']') {
                return false;
            }
            // After a value.
            loop {
                if depth == 0 {
                    return next() == usize::MAX;
                }
                p = next();
                let c = at(p);
                if c == b',' {
                    if objects & 1 == 1 && (at(next()) != b'"' || at(next()) != b':') {
                        return false;
                    }
                    p = next();
                    continue 'value;
                }
                if c != if objects & 1 == 1 { b'}' } else { b']' } {
                    return false;
                }
                objects >>= 1;
                depth -= 1;
            }
        }
    }
}
