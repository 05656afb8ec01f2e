//! Stage two of the structural walk: the grammar of nested values checked
//! token start by token start ([`super::blocks::Blocks`]), for the bulk of
//! large documents (token-dense JSON: many short keys and strings, numbers,
//! literals, indentation).
//!
//! The walk reads only the bytes where tokens start: a structural character is
//! matched against what the grammar allows there; a string needs nothing more
//! (its body was checked on the masks); a number or a literal is read whole
//! ([`number_end`], four or five bytes compared) and must be followed by
//! whitespace or a structural character. Whitespace is never read.
//!
//! It returns no errors: at anything it does not accept, it gives up, and the
//! scanner's general loop validates the value from where the walk started,
//! with its exact verdicts. Whatever the walk accepts, the general loop
//! accepts too, ending at the same place (differential tests).

use super::blocks::{Blocks, DELIMITER, Kernel, Tokens};
use super::ops::tick;
use super::scan::{self, Resume};
use crate::long::LongValues;

/// The walk keeps the level bits in a copy of its own (`LEVELS` words): it
/// gives up on deeper values, and never changes the scanner's.
const LEVELS: usize = 4;

/// How many blocks more than the arrays it took [`super::arrays::number_array`] may
/// spend for nothing in a walk (the accounting is where the walk calls it).
const TRIES: usize = 4;

/// How long an array must be for [`super::arrays::number_array`] to pay: two
/// coordinates of a few digits each and more (below, its block costs more than
/// the token walk's few tokens).
const PAYS: usize = 16;

/// What the walk needs of the scanner.
pub(crate) struct Walk<'s> {
    /// One bit per level (1 = array), at least `max_depth + 1` bits.
    pub stack: &'s [u64],
    pub max_depth: usize,
    pub long: &'s mut LongValues,
}

/// Validates from `at` (as the general loop would resume there) to the end of
/// the level-`base` container: its end, or `None` to leave it all to the
/// general loop (the long values noted are as they were).
#[inline(always)]
pub(crate) fn walk<K: Kernel, const NOTE: bool>(
    b: &[u8],
    at: Resume,
    base: usize,
    w: &mut Walk<'_>,
    kernel: K,
) -> Option<usize> {
    let (p, depth) = match at {
        Resume::Done(end) => return Some(end),
        Resume::Open { p, depth } => (p, depth),
        Resume::After { p, depth, .. } => (p, depth),
    };
    // The levels up to `depth` (those below it are open).
    let words = depth / 64 + 1;
    if words > LEVELS || words > w.stack.len() {
        return None;
    }
    let mut levels = [0u64; LEVELS];
    levels[..words].copy_from_slice(&w.stack[..words]);
    // The long values noted so far: the general loop notes the walk's again.
    let long = if NOTE { Some(w.long.clone()) } else { None };
    let mut blocks = Blocks::<K, NOTE>::new(b, p, kernel);
    let mut tokens = Tokens::new(b);
    let end = walk_blocks::<K, NOTE>(b, at, base, w, &mut levels, &mut blocks, &mut tokens);
    if end.is_some() && blocks.utf8_valid() {
        return end;
    }
    if let Some(long) = long {
        *w.long = long;
    }
    None
}

#[inline(always)]
fn set_level(stack: &mut [u64; LEVELS], depth: usize, is_array: bool) {
    let (i, bit) = ((depth / 64) % LEVELS, 1u64 << (depth % 64));
    if is_array {
        stack[i] |= bit;
    } else {
        stack[i] &= !bit;
    }
}

#[inline(always)]
fn level_is_array(stack: &[u64; LEVELS], depth: usize) -> bool {
    stack[(depth / 64) % LEVELS] >> (depth % 64) & 1 == 1
}

/// What a value's first byte began.
enum Value {
    /// A string, number or literal, whole.
    Scalar,
    /// An array or object: its level opens next.
    Open,
}

/// Where the walk goes on from, right after a value of a container.
enum Step {
    /// The container closed at this position.
    Close(usize),
    /// A member value opened an array or object with this byte, at this
    /// position.
    Open(usize, u8),
}

/// How a leaf container ([`leaf`]) ended.
enum Leaf {
    /// It closed: its members were all scalars.
    Closed,
    /// A member opened an array or object with this byte: the container is
    /// not a leaf, and the general path goes on from that opening.
    Nested(u8),
}

#[inline(always)]
fn walk_blocks<'a, K: Kernel, const NOTE: bool>(
    b: &'a [u8],
    at: Resume,
    base: usize,
    w: &mut Walk<'_>,
    levels: &mut [u64; LEVELS],
    s: &mut Blocks<'a, K, NOTE>,
    t: &mut Tokens<'a>,
) -> Option<usize> {
    // Deeper is the general loop's: an error, or beyond the walk's levels.
    let max_depth = w.max_depth.min(64 * LEVELS - 1);
    let (mut c, mut depth, mut in_array, mut open) = match at {
        Resume::Done(end) => return Some(end),
        Resume::Open { p, depth } => {
            // The bracket at `p` is the first token start.
            let (n, c) = t.next(s)?;
            if n != p {
                return None;
            }
            (c, depth, false, true)
        }
        Resume::After {
            depth, in_array, ..
        } => (0, depth, in_array, false),
    };
    // How many blocks the masks may yet read for nothing ([`TRIES`]).
    let mut tries = TRIES;
    'open: loop {
        // A member value that opened an array or object, not yet walked.
        let mut pending = None;
        if open {
            // At the array or object opening with `c`, of level `depth`.
            tick(1);
            if depth > max_depth {
                return None;
            }
            in_array = c == b'[';
            let (n, first) = t.next(s)?;
            if first == close_of(in_array) {
                depth -= 1;
                if depth < base {
                    return Some(n + 1);
                }
                in_array = level_is_array(levels, depth);
            } else {
                let (v, vc) = if in_array {
                    (n, first)
                } else {
                    key(s, t, first)?
                };
                match value::<K, NOTE>(b, s, t, v, vc, w.long)? {
                    Value::Scalar => {}
                    Value::Open => pending = Some((v, vc)),
                }
            }
        }
        open = true;
        // Right after a value of the container at `depth`: one loop per
        // container kind, the kind a constant in each; both leave at the
        // container's closing bracket or at a member that opens a value.
        macro_rules! after {
            ($array:literal, $close:literal) => {
                loop {
                    let (n, next) = t.next(s)?;
                    if next == b',' {
                        let (v, vc) = t.next(s)?;
                        let (v, vc) = if $array { (v, vc) } else { key(s, t, vc)? };
                        match value::<K, NOTE>(b, s, t, v, vc, w.long)? {
                            Value::Scalar => {}
                            Value::Open => break Step::Open(v, vc),
                        }
                    } else if next == $close {
                        break Step::Close(n);
                    } else {
                        return None;
                    }
                }
            };
        }
        loop {
            let step = match pending.take() {
                Some((v, vc)) => Step::Open(v, vc),
                None if in_array => after!(true, b']'),
                None => after!(false, b'}'),
            };
            match step {
                Step::Close(n) => {
                    depth -= 1;
                    if depth < base {
                        return Some(n + 1);
                    }
                    in_array = level_is_array(levels, depth);
                }
                Step::Open(v, vc) => {
                    if depth + 1 > max_depth {
                        return None;
                    }
                    // An array of numbers is taken a block at a time (one
                    // that starts otherwise is not tried), while the tries
                    // pay: a short array costs the masks more than its few
                    // tokens, and an array they give up on costs the blocks
                    // they read (read again by the token walk); each block
                    // so spent takes a try, each array that paid gives one.
                    // (So the blocks read twice are at most `TRIES` more than
                    // the arrays taken: linear time on any input.)
                    if vc == b'['
                        && tries > 0
                        && matches!(b.get(v + 1), Some(b'0'..=b'9' | b'-' | b'['))
                        && s.may_restart()
                    {
                        match s.kernel().number_array_end(b, v, max_depth - depth) {
                            Ok(end) => {
                                tries = if end - v >= PAYS {
                                    (tries + 1).min(TRIES)
                                } else {
                                    tries - 1
                                };
                                s.restart(end);
                                t.clear();
                                continue;
                            }
                            Err(blocks) => tries = tries.saturating_sub(blocks),
                        }
                    }
                    // Most containers hold scalars only (a point's
                    // coordinates, a record of strings and numbers): walked
                    // without the levels, the container at `depth` goes on
                    // after them.
                    let leaf = if vc == b'[' {
                        leaf::<K, NOTE, true>(b, s, t, w.long)?
                    } else {
                        leaf::<K, NOTE, false>(b, s, t, w.long)?
                    };
                    if let Leaf::Nested(oc) = leaf {
                        // Inside the container opened with `vc`, at its member
                        // that opens with `oc`.
                        set_level(levels, depth, in_array);
                        depth += 1;
                        set_level(levels, depth, vc == b'[');
                        depth += 1;
                        c = oc;
                        continue 'open;
                    }
                }
            }
        }
    }
}

/// The members of the array (`ARRAY`) or object whose opening bracket was the
/// last token taken, up to its closing bracket when they are all scalars, or
/// up to the first member value that opens an array or object (that value's
/// first token taken); `None` where the walk gives up.
#[inline(always)]
fn leaf<'a, K: Kernel, const NOTE: bool, const ARRAY: bool>(
    b: &'a [u8],
    s: &mut Blocks<'a, K, NOTE>,
    t: &mut Tokens<'a>,
    long: &mut LongValues,
) -> Option<Leaf> {
    tick(1);
    let close = close_of(ARRAY);
    let (n, first) = t.next(s)?;
    if first == close {
        return Some(Leaf::Closed);
    }
    let (mut v, mut vc) = if ARRAY { (n, first) } else { key(s, t, first)? };
    loop {
        match value::<K, NOTE>(b, s, t, v, vc, long)? {
            Value::Scalar => {}
            Value::Open => return Some(Leaf::Nested(vc)),
        }
        let (_, next) = t.next(s)?;
        if next == b',' {
            let (n, nc) = t.next(s)?;
            (v, vc) = if ARRAY { (n, nc) } else { key(s, t, nc)? };
        } else if next == close {
            return Some(Leaf::Closed);
        } else {
            return None;
        }
    }
}

#[inline(always)]
fn close_of(in_array: bool) -> u8 {
    if in_array { b']' } else { b'}' }
}

/// A member's key, at a token start whose byte is `k`, and the `:` after it:
/// where its value starts, and that byte.
#[inline(always)]
fn key<'a, K: Kernel, const NOTE: bool>(
    s: &mut Blocks<'a, K, NOTE>,
    t: &mut Tokens<'a>,
    k: u8,
) -> Option<(usize, u8)> {
    if k != b'"' {
        return None;
    }
    let (_, colon) = t.next(s)?;
    if colon != b':' {
        return None;
    }
    t.next(s)
}

/// The value starting at the token start `v`, whose byte is `c`.
#[inline(always)]
fn value<'a, K: Kernel, const NOTE: bool>(
    b: &'a [u8],
    s: &mut Blocks<'a, K, NOTE>,
    t: &mut Tokens<'a>,
    v: usize,
    c: u8,
    long: &mut LongValues,
) -> Option<Value> {
    // Strings, numbers (a table), openings: the most frequent first.
    let end = if c == b'"' {
        // A string that may go on past its block is noted if long: the
        // blocks up to the next token start say where it ends
        // ([`Blocks::finished`]).
        if NOTE && t.is_empty() {
            t.fill(s)?;
            if s.finished().0 == v {
                long.note(v, s.finished().1);
            }
        }
        return Some(Value::Scalar);
    } else if NUMBER_START[c as usize] {
        if let Some(window) = b.get(v..).and_then(<[u8]>::first_chunk::<32>) {
            let digits = s.kernel().digits32(window);
            if number_in(window, digits, c == b'-').is_some() {
                return Some(Value::Scalar);
            }
        }
        number_long::<NOTE>(b, v, long)?
    } else if c | 0x20 == b'{' {
        // `[` (0x5b) or `{` (0x7b).
        return Some(Value::Open);
    } else {
        match c {
            b't' => literal(b, v, b"true")?,
            b'f' => literal(b, v, b"false")?,
            b'n' => literal(b, v, b"null")?,
            _ => return None,
        }
    };
    match b.get(end) {
        Some(&c) if !DELIMITER[c as usize] => None,
        _ => Some(Value::Scalar),
    }
}

/// The bytes a number starts with: `-` and the digits.
static NUMBER_START: [bool; 256] = {
    let mut t = [false; 256];
    t[b'-' as usize] = true;
    let mut c = b'0';
    while c <= b'9' {
        t[c as usize] = true;
        c += 1;
    }
    t
};

/// Where the literal `lit` at `b[p]` ends, if it is there. Its first byte is
/// the caller's (matched to choose `lit`): the last four are compared as one
/// word (`true` and `null` whole, `false` past its `f`).
#[inline(always)]
fn literal(b: &[u8], p: usize, lit: &[u8]) -> Option<usize> {
    debug_assert!(lit.len() >= 4 && b.get(p) == lit.first());
    let end = p + lit.len();
    let last: &[u8; 4] = b.get(end - 4..end)?.try_into().ok()?;
    (last[..] == lit[lit.len() - 4..]).then_some(end)
}

/// Where the number starting `window` ends, when a delimiter follows it
/// inside the window (`digits`: the window's digit mask; `minus`: whether its
/// first byte is `-`, which the caller knows already). `None` otherwise: the
/// number is invalid, runs to the window's end or is followed by something
/// else ("01"), and [`number_long`] decides.
#[inline(always)]
fn number_in(window: &[u8; 32], digits: u32, minus: bool) -> Option<usize> {
    // Runs of digits stop by the window's end, so the indexes below are at
    // most 32; `& 31` keeps them in the window, and turns 32 into 0, the
    // number's first byte: `-` or a digit, which ends no part of a number,
    // so a number that runs to the window's end gets `None`.
    let digits = u64::from(digits);
    // The digits from `i` on.
    let run = |i: usize| (!(digits >> i)).trailing_zeros() as usize;
    let mut i = usize::from(minus);
    let n = run(i);
    // A leading zero stands alone.
    if n == 0 || (window[i] == b'0' && n > 1) {
        return None;
    }
    i = (i + n) & 31;
    if window[i] == b'.' {
        let n = run(i + 1);
        if n == 0 {
            return None;
        }
        i = (i + 1 + n) & 31;
    }
    match NUMBER_END[window[i] as usize] {
        End::Delimiter => Some(i),
        End::Exponent => exponent_in(window, digits, i),
        End::Other => None,
    }
}

/// [`number_in`] from the `e` or `E` at `i`.
#[inline(always)]
fn exponent_in(window: &[u8; 32], digits: u64, mut i: usize) -> Option<usize> {
    i += 1;
    if let Some(b'+' | b'-') = window.get(i) {
        i += 1;
    }
    let n = (!(digits >> i)).trailing_zeros() as usize;
    if n == 0 {
        return None;
    }
    i = (i + n) & 31;
    DELIMITER[window[i] as usize].then_some(i)
}

/// What a byte after a number's integer or fraction part is to it.
#[derive(Clone, Copy)]
enum End {
    /// Whitespace or a structural character: the number ends.
    Delimiter,
    /// `e` or `E`: an exponent follows.
    Exponent,
    /// Anything else.
    Other,
}

/// [`End`] by byte: one lookup for the two tests most numbers end with.
static NUMBER_END: [End; 256] = {
    let mut t = [End::Other; 256];
    let mut i = 0;
    while i < 256 {
        if DELIMITER[i] {
            t[i] = End::Delimiter;
        }
        i += 1;
    }
    t[b'e' as usize] = End::Exponent;
    t[b'E' as usize] = End::Exponent;
    t
};

/// [`number_end`] for the numbers [`number_in`] cannot take, noted if long.
#[cold]
#[inline(never)]
fn number_long<const NOTE: bool>(b: &[u8], v: usize, long: &mut LongValues) -> Option<usize> {
    let end = number_end(b, v)?;
    if NOTE {
        long.note(v, end);
    }
    Some(end)
}

/// The end of the run of ASCII digits from `p` (`p` if none), eight bytes a
/// step.
fn digit_run(b: &[u8], mut p: usize) -> usize {
    loop {
        match b.get(p..).and_then(<[u8]>::first_chunk::<8>) {
            Some(chunk) => match scan::digits_end8_of(*chunk, p) {
                Some(end) => return end,
                None => p += 8,
            },
            None => {
                while let Some(b'0'..=b'9') = b.get(p) {
                    p += 1;
                }
                return p;
            }
        }
    }
}

/// The end of the number at `start` (`-` or a digit), by RFC 8259's grammar;
/// `None` if it breaks it. What follows is the caller's to check.
pub(crate) fn number_end(b: &[u8], start: usize) -> Option<usize> {
    let mut p = start;
    if b.get(p) == Some(&b'-') {
        p += 1;
    }
    match b.get(p) {
        Some(b'0') => p += 1,
        Some(b'1'..=b'9') => p = digit_run(b, p + 1),
        _ => return None,
    }
    if b.get(p) == Some(&b'.') {
        let end = digit_run(b, p + 1);
        if end == p + 1 {
            return None;
        }
        p = end;
    }
    if let Some(b'e' | b'E') = b.get(p) {
        p += 1;
        if let Some(b'+' | b'-') = b.get(p) {
            p += 1;
        }
        let end = digit_run(b, p);
        if end == p {
            return None;
        }
        p = end;
    }
    Some(p)
}

fn run<K: Kernel, const NOTE: bool>(doc: &[u8], max_depth: usize, kernel: K) -> Option<usize> {
    let mut stack = vec![0u64; max_depth / 64 + 1];
    let mut long = LongValues::default();
    let mut w = Walk {
        stack: &mut stack,
        max_depth,
        long: &mut long,
    };
    walk::<K, NOTE>(doc, Resume::Open { p: 0, depth: 1 }, 1, &mut w, kernel)
}

/// The walk's end on the array or object at `doc[0]` (level 1), with each
/// kernel this CPU runs, noting long values or not (the blocks keep where
/// strings start only when noting): for the differential tests and the fuzz
/// target.
pub(crate) fn walks(doc: &[u8], max_depth: usize) -> Vec<(&'static str, Option<usize>)> {
    #[allow(unused_mut)]
    let mut out = vec![
        (
            "portable",
            run::<_, false>(doc, max_depth, super::blocks::Portable),
        ),
        (
            "portable, noting",
            run::<_, true>(doc, max_depth, super::blocks::Portable),
        ),
    ];
    #[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
    if crate::simd::has_avx2() {
        // SAFETY: AVX2 and PCLMULQDQ, just detected.
        out.push((
            "avx2",
            run::<_, false>(doc, max_depth, unsafe { super::blocks::Avx2::new() }),
        ));
        // SAFETY: as above.
        out.push((
            "avx2, noting",
            run::<_, true>(doc, max_depth, unsafe { super::blocks::Avx2::new() }),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::scan::general_value_end;
    use crate::parse::test_json::value;

    /// Whatever a walk accepts, the general loop accepts, ending at the same
    /// place; on a valid document that ends with its value, the vector walk
    /// accepts (the portable one too, on ASCII).
    fn check(doc: &[u8], max_depth: usize) {
        // Both loops start at a bracket.
        if !matches!(doc.first(), Some(b'[' | b'{')) {
            return;
        }
        let general = general_value_end(doc, max_depth);
        for (kernel, got) in walks(doc, max_depth) {
            if got.is_some() {
                assert_eq!(got, general, "{kernel}: {}", String::from_utf8_lossy(doc));
            }
            if general == Some(doc.len()) && (kernel.starts_with("avx2") || doc.is_ascii()) {
                assert_eq!(
                    got,
                    general,
                    "{kernel} refused: {}",
                    String::from_utf8_lossy(doc)
                );
            }
        }
    }

    #[test]
    fn simple_documents() {
        for doc in [
            &br#"{"a":1}"#[..],
            br#"[1,2,3]"#,
            br#"[]"#,
            br#"{}"#,
            br#"{"a":[1,2,{"b":null}],"c":"x"}"#,
            br#"{ "a" : [ 1 , 2 , { "b" : null } ] , "c" : "x\"y" }"#,
            br#"[-0.5e+3,0,1E9,-0,true,false,null,"\u00e9\/"]"#,
            // Leaf containers, and containers that turn out not to be one
            // after scalars (the walk goes on from their first opening).
            br#"[[1,2],[3,[4]],{"a":1,"b":{"c":[]}},[[]],{"d":[5,{"e":6}]},[{}]]"#,
            br#"{"a":{"b":1,"c":"x"},"d":[1,2,[3,4],5],"e":[{},[]],"f":{"g":[[0]]}}"#,
            br#"[ [ 1 , 2 ] , [ "a" , [ null ] ] , { "k" : { } } ]"#,
        ] {
            assert_eq!(general_value_end(doc, 128), Some(doc.len()));
            check(doc, 128);
            // At the depth limit, a leaf's level counts as the general loop's.
            for depth in 1..6 {
                let general = general_value_end(doc, depth);
                for (kernel, got) in walks(doc, depth) {
                    if got.is_some() {
                        assert_eq!(got, general, "{kernel} at depth {depth}");
                    }
                }
            }
        }
        for bad in [
            &br#"{"a" 1}"#[..],
            br#"[1,]"#,
            br#"[01]"#,
            br#"[1.]"#,
            br#"[-]"#,
            br#"[1e]"#,
            br#"[tru]"#,
            br#"[truex]"#,
            br#"["a"x]"#,
            br#"["a""b"]"#,
            br#"["a\x"]"#,
            br#"["\u12g4"]"#,
            b"[\"a\x01\"]",
            br#"{"a":1,}"#,
            br#"{1:2}"#,
            br#"[1 2]"#,
            br#"[1}"#,
            b"[\"\xc3\"]",
            b"[\xef]",
            br#"[[1,2],[3,]]"#,
            br#"[[1,2],[3 4]]"#,
            br#"[[1,2],[3,[4}]]"#,
            br#"[{"a":1,"b"}]"#,
            br#"[{"a":1,"b":[1,}]"#,
            br#"[[1,2],{"a":1]]"#,
            br#"["abc"#,
        ] {
            assert_eq!(general_value_end(bad, 128), None);
            for (kernel, got) in walks(bad, 128) {
                assert_eq!(got, None, "{kernel}: {}", String::from_utf8_lossy(bad));
            }
        }
    }

    /// Generated documents (nested values of every kind, long strings of text,
    /// ASCII and escapes, long numbers; compact and with whitespace), every
    /// truncation, and a byte of a set of troublemakers written over every
    /// position: [`check`].
    #[test]
    fn walk_matches_the_general_loop() {
        let mut next = crate::test_rng::lcg(0x3a1c_u64);
        let (rounds, every) = if cfg!(miri) { (2, 37) } else { (120, 1) };
        let bad = [
            b'"', b'\\', b'{', b'}', b'[', b']', b',', b':', b'0', b'-', b'.', b'e', b'x', b't',
            b'E', b'+', b'5', b' ', b'\n', b'u', 0x01, 0x0c, 0x1a, 0x1f, 0x7f, 0x80, 0xc3, 0xe2,
            0xff,
        ];
        for round in 0..rounds {
            let ws = round % 3 == 2;
            let mut v = vec![b'['];
            while v.len() < 300 {
                if v.len() > 1 {
                    v.push(b',');
                }
                value(&mut next, 1, ws, &mut v);
            }
            v.push(b']');
            assert_eq!(general_value_end(&v, 128), Some(v.len()));
            for depth in [2, 3, 128] {
                let general = general_value_end(&v, depth);
                for (kernel, got) in walks(&v, depth) {
                    if got.is_some() {
                        assert_eq!(got, general, "{kernel} at depth {depth}");
                    }
                }
            }
            check(&v, 128);
            for cut in (0..v.len()).step_by(every) {
                check(&v[..cut], 128);
            }
            for i in (round % every..v.len()).step_by(every) {
                let mut w = v.clone();
                w[i] = bad[next() % bad.len()];
                check(&w, 128);
            }
        }
    }

    /// Arrays of numbers that [`super::arrays::number_array`] takes a block at a time,
    /// among members of every kind (strings of UTF-8 before and after them,
    /// in the same block and not), at every offset, cut at every byte and
    /// with a byte of a set of troublemakers written over every position: the
    /// walk goes on after them as the general loop does ([`check`]).
    #[test]
    fn number_arrays_among_other_values() {
        let mut next = crate::test_rng::lcg(0x90e0_u64);
        let parts: [&[u8]; 9] = [
            br#""coordinates":[[[-65.613616999999977,43.420273000000009],[-65.61,43.42]],[[0,1.5]]]"#,
            br#""indices":[0,10]"#,
            br#""v":[[],[1],[[2]],-0.5]"#,
            r#""name":"Zürich""#.as_bytes(),
            br#""s":"\u00e9\n""#,
            br#""o":{"a":[1,2],"b":[3,[4,{"c":5}]]}"#,
            br#""e":[1e5,2]"#,
            br#""w":[ 1, 2 ]"#,
            br#""t":true"#,
        ];
        let bad = [
            b'-', b'.', b'0', b',', b'[', b']', b' ', b'"', b'e', 0x01, 0x80, 0xc3,
        ];
        let (rounds, every) = if cfg!(miri) { (2, 41) } else { (150, 1) };
        for round in 0..rounds {
            let mut v = vec![b'{'];
            v.resize(1 + round % 64, b' ');
            for k in 0..4 + next() % 6 {
                if k > 0 {
                    v.push(b',');
                }
                v.extend_from_slice(parts[next() % parts.len()]);
                // Keys repeat: the walk does not look at names.
            }
            v.push(b'}');
            check(&v, 128);
            for cut in (1..v.len()).step_by(every) {
                check(&v[..cut], 128);
            }
            for i in (round % every..v.len()).step_by(every) {
                let mut w = v.clone();
                w[i] = bad[next() % bad.len()];
                check(&w, 128);
            }
        }
    }

    /// Numbers valid and not, short and long, at every offset from a block's
    /// start (so across the ends of blocks and of the 32-byte window), each
    /// followed by what may and may not follow one, and cut at the end of the
    /// input: [`check`].
    #[test]
    fn numbers_across_windows_and_blocks() {
        let mut numbers: Vec<Vec<u8>> = "0 -0 01 -01 00 1. -1. 1e 1e+ 1E- 1e+5 0e0 - -.5 .5 +1 \
            1.e5 1e5.0 2.5.1 1ee5 1e5e5 0x1 1-2 1..2 0.0 -0.0e-0 1E+05 -1.25e-300 1.5e 1.5E+ \
            5.633161347632"
            .split_ascii_whitespace()
            .map(|n| n.as_bytes().to_vec())
            .collect();
        // Parts of every length around the window's: integer, fraction and
        // exponent digits ending on each side of the window's last bytes.
        let digits = |n: usize| (0..n).map(|k| b"123456789"[k % 9]).collect::<Vec<u8>>();
        for len in [1, 2, 15, 27, 28, 29, 30, 31, 32, 33, 40, 70] {
            numbers.push(digits(len));
            numbers.push([&b"-"[..], &digits(len)].concat());
            numbers.push([&b"1."[..], &digits(len)].concat());
            numbers.push([&digits(len), &b".5"[..]].concat());
            numbers.push([&digits(len), &b"e"[..]].concat());
            numbers.push([&b"-0."[..], &digits(len), b"e-", &digits(2)].concat());
            numbers.push([&b"2e+"[..], &digits(len)].concat());
            numbers.push([&b"2.5E"[..], &digits(len)].concat());
        }
        // Members after the number's array: a whole window after any number.
        let tail = b",1".repeat(20);
        // Miri: a small sample (safe code; about 0.1 s a check there).
        let (every, pads) = if cfg!(miri) { (29, 34) } else { (1, 1) };
        let mut checked = 0;
        for n in numbers.iter().step_by(every) {
            for pad in (0..70).step_by(pads) {
                for after in [&b""[..], b",7", b" ", b"\n", b"x", b".", b"e", b"-", b"}"] {
                    let mut doc = vec![b'['];
                    doc.resize(1 + pad, b' ');
                    doc.push(b'[');
                    doc.extend_from_slice(n);
                    let cut = doc.len();
                    doc.extend_from_slice(after);
                    doc.push(b']');
                    doc.extend_from_slice(&tail);
                    doc.push(b']');
                    check(&doc, 128);
                    check(&doc[..cut], 128);
                    checked += 1;
                }
            }
        }
        assert!(checked * every * pads > 10_000);
    }

    /// [`number_in`] takes what [`number_end`] takes, ending before a
    /// delimiter inside the window, and nothing else.
    #[test]
    fn number_in_agrees_with_number_end() {
        let mut next = crate::test_rng::lcg(0x7a3_u64);
        let alphabet = b"0123456789-+.eE ,]x";
        for round in 0..if cfg!(miri) { 500 } else { 200_000 } {
            let mut window = [b' '; 32];
            // Mostly number-like bytes, of every length.
            let len = 1 + next() % 32;
            for x in &mut window[..len] {
                *x = match next() % 3 {
                    0 => alphabet[next() % alphabet.len()],
                    _ => b"0123456789"[next() % 10],
                };
            }
            if round % 2 == 0 && !matches!(window[0], b'-' | b'0'..=b'9') {
                window[0] = b'-';
            }
            let digits = crate::simd::scalar::digits32(&window, 0);
            let want = number_end(&window, 0).filter(|&e| e < 32 && DELIMITER[window[e] as usize]);
            assert_eq!(
                number_in(&window, digits, window[0] == b'-'),
                want,
                "{}",
                String::from_utf8_lossy(&window)
            );
        }
    }

    /// The vector kernel's classes and digit masks equal the portable ones
    /// on blocks of every byte value at every position.
    #[cfg(all(target_arch = "x86_64", not(switchboard_disable_simd), not(miri)))]
    #[test]
    fn avx2_masks_match_portable() {
        if !crate::simd::has_avx2() {
            return;
        }
        let blocks = crate::test_rng::kernel_blocks(
            0x51d,
            b" \t\n\r,:[]{}\"\\0123456789-.eE+truefalsn\x0c\x1a\x80\xc3",
        );
        for block in blocks {
            // SAFETY: AVX2, just detected.
            let got = unsafe { crate::simd::avx2::classes64(&block) };
            assert_eq!(got, crate::simd::scalar::classes64(&block), "{block:?}");
            for at in [0, 7, 32] {
                // SAFETY: AVX2, just detected; `at + 32 <= 64`.
                let got = unsafe { crate::simd::avx2::digits32(&block, at) };
                assert_eq!(
                    got,
                    crate::simd::scalar::digits32(&block, at),
                    "{block:?} at {at}"
                );
            }
        }
    }
}
