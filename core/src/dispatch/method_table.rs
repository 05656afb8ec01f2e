//! The method table: registered method names to their registration index, through
//! a perfect hash found by seed search once, at build time.
//!
//! # Design
//!
//! PTHash-style hash-and-displace, tuned for a short lookup path:
//!
//! 1. A name is hashed once, over **all** its bytes, with a seeded foldhash/wyhash-style
//!    folded multiply ([`hash`]). Names up to 32 bytes (nearly all method names) take
//!    two to four overlapping 8-byte reads, the name's *words*, and one or two
//!    independent 64×64→128-bit multiplies; longer names fold 16 bytes per step. The
//!    length is mixed in, so a truncation or extension never shares a hash by
//!    construction, and a shared prefix or suffix of any length does not help two
//!    names collide.
//! 2. The hash's top bits pick a bucket (`h >> bucket_shift`; bucket and slot counts
//!    are powers of two, so no division and no multiply here). Each bucket stores one
//!    odd 64-bit multiplier, its *pilot*, found at build time so that
//!    `(h * pilot) >> slot_shift` sends every name of the bucket to a slot no other
//!    name holds (multiply-shift hashing: two names of one bucket collide under a
//!    random pilot with probability about `2 / slots`).
//! 3. A slot holds the name's length, its index and, for a name up to 32 bytes, the
//!    same words the hash read (they cover every byte, so with the length they are
//!    the name). The lookup compares the length and the words it already holds in
//!    registers with the slot's, word by word: no second dependent load, no loop, no
//!    call. (These are branches, which the processor predicts; a branch-free select
//!    of the index measured slower.) A longer name's slot holds where the name lives
//!    in one contiguous byte buffer of the long names instead, compared as a slice,
//!    out of line.
//!
//! So a lookup is one length test (picking the word layout and the hash), one hash,
//! two table reads (pilot, slot) and one comparison. The price is memory: slots are
//! 40 bytes, about 46 to 91 per name at the loads below (plus 3 to 5 bytes of
//! pilots, and the bytes of names over 32 bytes), where an offset into a buffer of
//! all names took 12; a lookup still touches one pilot and one slot.
//! Buckets are placed largest first; at most [`BUCKET_SIZE`] names per bucket on
//! average (at least half that, as counts round up to a power of two) and a load of
//! at most [`LOAD`] (at least half that) keep the search short: the first seed has
//! always worked in testing, and 10 000 names build in about 1 ms.
//!
//! The build is bounded: each seed gets a fixed budget of pilot trials (and at most
//! [`MAX_PILOTS`] per bucket); after [`MAX_SEEDS`] failed seeds (or for long names
//! whose total length does not fit the `u32` offsets) the table falls back to a
//! `std::collections::HashMap` with SipHash's random keys, which is slower but correct
//! for any names. The fallback sits behind an empty perfect table, consulted only when
//! that misses, so a hit on the perfect hash tests no representation first. Two
//! equal hashes in one bucket can never be separated by a pilot, so they end a seed at
//! once; two equal *names* (duplicates) go to the fallback at once, where the first
//! index wins.
#![forbid(unsafe_code)]

use std::collections::HashMap;

/// Average number of names per bucket.
const BUCKET_SIZE: usize = 3;
/// Highest load (names / slots), as a fraction: 7/8.
const LOAD: (usize, usize) = (7, 8);
/// Pilots tried for one bucket before the seed is given up.
const MAX_PILOTS: u64 = 1 << 16;
/// Seeds tried before falling back to a hash map.
const MAX_SEEDS: u32 = 8;
/// The first seed; later ones follow from it. Fixed, so that a build is reproducible.
const BASE_SEED: u64 = 0x5eed_5b0a_7d00_0001;
/// Names up to this many bytes are kept in their slot, as the words the hash reads
/// ([`words16`], [`words32`]: four words cover at most 32 bytes).
const INLINE: usize = 32;

const K0: u64 = 0xa076_1d64_78bd_642f;
const K1: u64 = 0xe703_7ed1_a0b4_28db;
const K2: u64 = 0x8ebc_6af0_9c88_c6e3;
const K3: u64 = 0x5899_65cc_7537_4cc3;

/// No index: indexes are below the number of names, which is at most `u32::MAX`.
const NONE: u32 = u32::MAX;

/// A slot with no name: its length is no name's up to 4 GiB, and a name of exactly
/// `u32::MAX` bytes finds no such span in the long-name buffer (which is shorter).
const EMPTY: Slot = Slot {
    words: [0; 4],
    len: u32::MAX,
    value: NONE,
};

/// A map from method names to their index in the list the table was built from.
///
/// Built once ([`MethodTable::build`]), immutable afterwards, `Send + Sync`.
#[derive(Clone, Debug)]
pub(crate) struct MethodTable {
    len: usize,
    /// The perfect hash; with the fallback, an empty one that finds nothing.
    perfect: Perfect,
    /// Used only if no seed worked within the budget (or duplicates, or > 4 GiB of
    /// long names), consulted when `perfect` misses.
    fallback: Option<HashMap<Box<[u8]>, u32>>,
}

#[derive(Clone, Debug)]
struct Perfect {
    /// The four hash keys derived from the seed that worked.
    keys_seed: [u64; 4],
    /// `64 - log2(pilots.len())`: a hash's top bits, shifted down, pick its bucket.
    bucket_shift: u32,
    /// `64 - log2(slots.len())`.
    slot_shift: u32,
    /// One odd multiplier per bucket; a power of two of them, at least 2.
    pilots: Box<[u64]>,
    /// One per slot; a power of two of them, at least 2 (so that an empty table needs
    /// no branch and no shift is 64).
    slots: Box<[Slot]>,
    /// The names over [`INLINE`] bytes, back to back, in registration order.
    long_names: Box<[u8]>,
}

/// One name in the table, or [`EMPTY`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Slot {
    /// A name up to [`INLINE`] bytes: its words ([`words`]). A longer name: its start
    /// in [`Perfect::long_names`], then zeros.
    words: [u64; 4],
    len: u32,
    value: u32,
}

impl MethodTable {
    /// Builds the table; `names[i]` will be found at index `i`.
    ///
    /// Names are expected to be unique (the router validates them). If one repeats
    /// anyway, the table is still correct and returns the first index of that name.
    ///
    /// # Panics
    /// If there are more than `u32::MAX` names.
    #[must_use]
    pub(crate) fn build<I>(names: I) -> Self
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        Self::build_with(names, MAX_SEEDS)
    }

    /// [`MethodTable::build`] with at most `max_seeds` seeds tried before the fallback
    /// map (0: the fallback map at once).
    fn build_with<I>(names: I, max_seeds: u32) -> Self
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        let mut bytes = Vec::new();
        let mut spans: Vec<(usize, usize)> = Vec::new();
        for name in names {
            let name = name.as_ref().as_bytes();
            spans.push((bytes.len(), name.len()));
            bytes.extend_from_slice(name);
        }
        let len = spans.len();
        assert!(
            u32::try_from(len).is_ok(),
            "more than u32::MAX method names"
        );

        // Offsets into the long names are u32, and EMPTY's length must exceed every
        // real one.
        let long_bytes: usize = spans.iter().map(|&(_, n)| n).filter(|&n| n > INLINE).sum();
        let fits = u32::try_from(long_bytes).is_ok_and(|n| n < u32::MAX);
        if fits {
            let mut seed = BASE_SEED;
            for _ in 0..max_seeds {
                match Perfect::try_build(&bytes, &spans, seed) {
                    Ok(perfect) => {
                        return MethodTable {
                            len,
                            perfect,
                            fallback: None,
                        };
                    }
                    Err(Failure::Duplicate) => break,
                    Err(Failure::Seed) => seed = splitmix64(seed),
                }
            }
        }
        let mut map = HashMap::with_capacity(len);
        for (i, &(start, n)) in spans.iter().enumerate() {
            map.entry(Box::from(&bytes[start..start + n]))
                .or_insert(i as u32);
        }
        MethodTable {
            len,
            perfect: Perfect::empty(),
            fallback: Some(map),
        }
    }

    /// The index of `name`, if it was registered.
    #[inline]
    #[must_use]
    pub(crate) fn get(&self, name: &str) -> Option<u32> {
        self.get_bytes(name.as_bytes())
    }

    /// The index of the name whose UTF-8 bytes are `name`, if it was registered.
    #[inline]
    #[must_use]
    pub(crate) fn get_bytes(&self, name: &[u8]) -> Option<u32> {
        // One Option, built after the paths meet (an Option from each path costs a
        // few instructions to merge).
        let i = match self.perfect.get_short(name) {
            Some(i) => i,
            None => self.get_slow(name),
        };
        (i != NONE).then_some(i)
    }

    /// A name over [`INLINE`] bytes, or a miss on the short ones: the perfect hash's
    /// long names, then the fallback map (if any). [`NONE`] if neither has it.
    #[inline(never)]
    fn get_slow(&self, name: &[u8]) -> u32 {
        let found = if name.len() > INLINE {
            self.perfect.get_long(name)
        } else {
            None
        };
        found
            .or_else(|| self.fallback.as_ref()?.get(name).copied())
            .unwrap_or(NONE)
    }

    /// How many names the table was built from.
    #[must_use]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether the table was built from no names.
    #[must_use]
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the perfect hash was found (`false`: the fallback map is in use).
    #[must_use]
    pub(crate) fn is_perfect(&self) -> bool {
        self.fallback.is_none()
    }
}

/// Why one seed did not give a perfect hash.
enum Failure {
    /// Try another seed.
    Seed,
    /// Two names are equal: no seed can separate them.
    Duplicate,
}

impl Perfect {
    /// A table that finds no name (in front of the fallback map).
    fn empty() -> Self {
        Perfect {
            keys_seed: seeds(BASE_SEED),
            bucket_shift: 63,
            slot_shift: 63,
            pilots: vec![1; 2].into_boxed_slice(),
            slots: vec![EMPTY; 2].into_boxed_slice(),
            long_names: Box::default(),
        }
    }

    /// The slot a hash leads to.
    #[inline(always)]
    fn slot(&self, h: u64) -> &Slot {
        let pilot = self.pilots[(h >> self.bucket_shift) as usize];
        &self.slots[(h.wrapping_mul(pilot) >> self.slot_shift) as usize]
    }

    /// The index of `name`, if it is registered and at most [`INLINE`] bytes long
    /// (`None` for any longer name: see [`Perfect::get_long`]).
    #[inline(always)]
    fn get_short(&self, name: &[u8]) -> Option<u32> {
        let len = name.len();
        let k = &self.keys_seed;
        // One length test per class; the words, the hash and the comparison follow
        // from it. 17-32 bytes first: the most common method names. The comparisons
        // are branches, which the processor predicts (a branch-free select was slower).
        if (17..=INLINE).contains(&len) {
            let w = words32(name);
            let s = self.slot(hash32(&w, len, k));
            // Word by word: an array `==` compares 16 bytes at a time, from words just
            // stored 8 bytes at a time (a stalled store forward).
            let same = s.len as usize == len
                && s.words[0] == w[0]
                && s.words[1] == w[1]
                && s.words[2] == w[2]
                && s.words[3] == w[3];
            same.then_some(s.value)
        } else if len <= 16 {
            let (x, y) = words16(name);
            let s = self.slot(hash16(x, y, len, k));
            (s.len as usize == len && s.words[0] == x && s.words[1] == y).then_some(s.value)
        } else {
            None
        }
    }

    /// The index of `name`, a name over [`INLINE`] bytes, if it is registered.
    fn get_long(&self, name: &[u8]) -> Option<u32> {
        let s = self.slot(hash_long(name, &self.keys_seed));
        // Only a long name's slot has this length (the EMPTY slot's is u32::MAX): its
        // first word is a start in the buffer. The EMPTY slot starts at 0 with a
        // length beyond the buffer: `get` says no.
        if s.len as usize != name.len() {
            return None;
        }
        let start = s.words[0] as usize;
        let key = self.long_names.get(start..start + name.len())?;
        (key == name).then_some(s.value)
    }

    /// One attempt with one seed. `bytes` holds all names; `spans` their (start, len).
    /// The caller has checked that the long names' offsets fit in `u32`.
    fn try_build(bytes: &[u8], spans: &[(usize, usize)], seed: u64) -> Result<Self, Failure> {
        let n = spans.len();
        let keys_seed = seeds(seed);
        let n_buckets = n.div_ceil(BUCKET_SIZE).max(2).next_power_of_two();
        let n_slots = (n * LOAD.1).div_ceil(LOAD.0).max(2).next_power_of_two();
        let bucket_shift = 64 - n_buckets.trailing_zeros();
        let slot_shift = 64 - n_slots.trailing_zeros();
        let bucket_of = |h: u64| (h >> bucket_shift) as usize;
        let name = |i: usize| &bytes[spans[i].0..spans[i].0 + spans[i].1];

        let hashes: Vec<u64> = (0..n).map(|i| hash(name(i), &keys_seed)).collect();

        // Group the names by bucket (counting sort).
        let mut bucket_start = vec![0usize; n_buckets + 1];
        for &h in &hashes {
            bucket_start[bucket_of(h) + 1] += 1;
        }
        for b in 0..n_buckets {
            bucket_start[b + 1] += bucket_start[b];
        }
        let mut fill = bucket_start.clone();
        let mut members = vec![0usize; n];
        for (i, &h) in hashes.iter().enumerate() {
            let b = bucket_of(h);
            members[fill[b]] = i;
            fill[b] += 1;
        }

        // Largest buckets first, while the table is still empty.
        let mut order: Vec<usize> = (0..n_buckets).collect();
        order.sort_unstable_by_key(|&b| core::cmp::Reverse(bucket_start[b + 1] - bucket_start[b]));

        let mut pilots = vec![1u64; n_buckets];
        let mut slot_of = vec![usize::MAX; n];
        let mut taken = vec![false; n_slots];
        let mut placed: Vec<usize> = Vec::new();
        // Pilot trials (one per name tried) this seed may spend.
        let mut budget: u64 = 256 * n as u64 + (1 << 20);

        for &b in &order {
            let group = &members[bucket_start[b]..bucket_start[b + 1]];
            if group.is_empty() {
                break; // sorted by size: the rest are empty too
            }
            for (j, &x) in group.iter().enumerate() {
                for &y in &group[..j] {
                    if hashes[x] == hashes[y] {
                        return Err(if name(x) == name(y) {
                            Failure::Duplicate
                        } else {
                            Failure::Seed
                        });
                    }
                }
            }
            let mut found = false;
            for p in 0..MAX_PILOTS {
                let pilot = splitmix64(seed ^ p) | 1;
                placed.clear();
                for &i in group {
                    budget = budget.checked_sub(1).ok_or(Failure::Seed)?;
                    let s = (hashes[i].wrapping_mul(pilot) >> slot_shift) as usize;
                    if taken[s] || placed.contains(&s) {
                        break;
                    }
                    placed.push(s);
                }
                if placed.len() == group.len() {
                    pilots[b] = pilot;
                    for (&i, &s) in group.iter().zip(&placed) {
                        taken[s] = true;
                        slot_of[i] = s;
                    }
                    found = true;
                    break;
                }
            }
            if !found {
                return Err(Failure::Seed);
            }
        }

        // Fill the slots, in registration order so that the long names are too.
        let mut slots = vec![EMPTY; n_slots];
        let mut long_names = Vec::new();
        for (i, &s) in slot_of.iter().enumerate() {
            let name = name(i);
            let words = if name.len() <= INLINE {
                words(name)
            } else {
                // Fits in u32: checked by the caller.
                let start = long_names.len() as u64;
                long_names.extend_from_slice(name);
                [start, 0, 0, 0]
            };
            slots[s] = Slot {
                words,
                len: name.len() as u32,
                value: i as u32,
            };
        }
        Ok(Perfect {
            keys_seed,
            bucket_shift,
            slot_shift,
            pilots: pilots.into_boxed_slice(),
            slots: slots.into_boxed_slice(),
            long_names: long_names.into_boxed_slice(),
        })
    }
}

/// The 128-bit product of `a` and `b`, its halves xored.
#[inline(always)]
fn fold_mul(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    (p as u64) ^ ((p >> 64) as u64)
}

/// SplitMix64's output function: a bijective mix, for seeds and pilots.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The four hash keys of one seed.
fn seeds(seed: u64) -> [u64; 4] {
    [
        splitmix64(seed) ^ K0,
        splitmix64(seed ^ K1) ^ K1,
        splitmix64(seed ^ K2) ^ K2,
        splitmix64(seed ^ K3) ^ K3,
    ]
}

#[inline(always)]
fn r8(b: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[i..i + 8]);
    u64::from_le_bytes(w)
}

#[inline(always)]
fn r4(b: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[i..i + 4]);
    u64::from(u32::from_le_bytes(w))
}

/// The two words of a name of at most 16 bytes: overlapping reads that cover every
/// byte, so that with the length they determine the name.
#[inline(always)]
fn words16(b: &[u8]) -> (u64, u64) {
    let len = b.len();
    debug_assert!(len <= 16);
    if len >= 8 {
        (r8(b, 0), r8(b, len - 8))
    } else if len >= 4 {
        (r4(b, 0), r4(b, len - 4))
    } else if len > 0 {
        let x = u64::from(b[0]) << 16 | u64::from(b[len / 2]) << 8 | u64::from(b[len - 1]);
        (x, 0)
    } else {
        (0, 0)
    }
}

/// The four words of a name of 17 to 32 bytes: the first 16 and the last 16 bytes.
#[inline(always)]
fn words32(b: &[u8]) -> [u64; 4] {
    let len = b.len();
    debug_assert!((17..=32).contains(&len));
    [r8(b, 0), r8(b, 8), r8(b, len - 16), r8(b, len - 8)]
}

/// The words a slot holds for a name of at most [`INLINE`] bytes.
fn words(b: &[u8]) -> [u64; 4] {
    if b.len() <= 16 {
        let (x, y) = words16(b);
        [x, y, 0, 0]
    } else {
        words32(b)
    }
}

/// The hash of a name of at most 16 bytes, from its [`words16`]: one multiply.
#[inline(always)]
fn hash16(x: u64, y: u64, len: usize, k: &[u64; 4]) -> u64 {
    fold_mul(x ^ k[0], y ^ k[1].wrapping_add(len as u64))
}

/// The hash of a name of 17 to 32 bytes, from its [`words32`]: two independent
/// multiplies.
#[inline(always)]
fn hash32(w: &[u64; 4], len: usize, k: &[u64; 4]) -> u64 {
    fold_mul(w[0] ^ k[0], w[1] ^ k[1].wrapping_add(len as u64)) ^ fold_mul(w[2] ^ k[2], w[3] ^ k[3])
}

/// The hash of a name over 32 bytes: 16 bytes folded per step, the last 16 with the
/// length.
#[inline(always)]
fn hash_long(b: &[u8], k: &[u64; 4]) -> u64 {
    let len = b.len();
    debug_assert!(len > 32);
    let mut acc = k[0];
    let mut i = 0;
    while len - i > 16 {
        acc = fold_mul(r8(b, i) ^ acc, r8(b, i + 8) ^ k[2]);
        i += 16;
    }
    fold_mul(
        r8(b, len - 16) ^ acc,
        r8(b, len - 8) ^ k[1].wrapping_add(len as u64),
    )
}

/// A seeded 64-bit hash of all of `b` (foldhash/wyhash-style folded multiplies).
///
/// Overlapping reads cover every byte, and the length is mixed in, so the inputs to
/// the multiplies determine the name; any collision depends on the seed.
fn hash(b: &[u8], k: &[u64; 4]) -> u64 {
    let len = b.len();
    if len <= 16 {
        let (x, y) = words16(b);
        hash16(x, y, len, k)
    } else if len <= 32 {
        hash32(&words32(b), len, k)
    } else {
        hash_long(b, k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// A small deterministic generator (SplitMix64), so tests need no extra crate.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(1);
            splitmix64(self.0)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
        fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
            xs[self.below(xs.len())]
        }
    }

    const ETH: &[&str] = &[
        "eth_getBalance",
        "eth_call",
        "eth_chainId",
        "eth_blockNumber",
        "eth_getBlockByNumber",
        "eth_getBlockByHash",
        "eth_getTransactionByHash",
        "eth_getTransactionReceipt",
        "eth_getTransactionCount",
        "eth_sendRawTransaction",
        "eth_estimateGas",
        "eth_gasPrice",
        "eth_getLogs",
        "eth_getCode",
        "eth_getStorageAt",
        "eth_feeHistory",
        "eth_maxPriorityFeePerGas",
        "eth_subscribe",
        "eth_unsubscribe",
        "net_version",
        "web3_clientVersion",
        "debug_traceTransaction",
    ];

    const LSP: &[&str] = &[
        "initialize",
        "initialized",
        "shutdown",
        "exit",
        "textDocument/didOpen",
        "textDocument/didChange",
        "textDocument/didClose",
        "textDocument/didSave",
        "textDocument/completion",
        "textDocument/hover",
        "textDocument/definition",
        "textDocument/references",
        "textDocument/documentSymbol",
        "textDocument/formatting",
        "textDocument/rename",
        "textDocument/codeAction",
        "textDocument/semanticTokens/full",
        "textDocument/semanticTokens/full/delta",
        "workspace/didChangeConfiguration",
        "workspace/symbol",
        "completionItem/resolve",
        "$/cancelRequest",
        "$/progress",
    ];

    const MCP: &[&str] = &[
        "tools/call",
        "tools/list",
        "resources/list",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "resources/templates/list",
        "prompts/list",
        "prompts/get",
        "logging/setLevel",
        "completion/complete",
        "notifications/initialized",
        "notifications/cancelled",
        "notifications/progress",
        "ping",
    ];

    /// `n` distinct names in a mix of styles: the real lists first, then generated
    /// names that share long prefixes and suffixes, then random ones.
    fn names(n: usize, seed: u64) -> Vec<String> {
        let mut rng = Rng(seed);
        let mut seen = HashSet::new();
        let mut out = Vec::with_capacity(n);
        let mut push = |s: String, out: &mut Vec<String>| {
            if out.len() < n && seen.insert(s.clone()) {
                out.push(s);
            }
        };
        for s in ETH.iter().chain(LSP).chain(MCP) {
            push((*s).to_owned(), &mut out);
        }
        let verbs = [
            "get",
            "set",
            "list",
            "send",
            "call",
            "watch",
            "subscribe",
            "estimate",
        ];
        let nouns = [
            "Balance",
            "Block",
            "Transaction",
            "Receipt",
            "Log",
            "Code",
            "Storage",
        ];
        let alphabet = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_/.$";
        let mut k = 0u64;
        while out.len() < n {
            k += 1;
            let s = match rng.below(6) {
                0 => format!(
                    "eth_{}{}{}",
                    rng.pick(&verbs),
                    rng.pick(&nouns),
                    rng.below(1000)
                ),
                1 => format!("textDocument/{}{}", rng.pick(&verbs), k),
                2 => format!("{}/{}", k, rng.pick(&MCP[..6])),
                // Long shared prefix, differing only at the end.
                3 => format!("a_very_long_shared_prefix_for_method_{k}"),
                // Long shared suffix, differing only at the start.
                4 => format!("{k}_with_a_long_shared_suffix_for_methods"),
                _ => {
                    let len = 1 + rng.below(40);
                    let mut s: String = (0..len)
                        .map(|_| alphabet[rng.below(alphabet.len())] as char)
                        .collect();
                    if rng.below(8) == 0 {
                        s.push_str("é✓😀");
                    }
                    s
                }
            };
            push(s, &mut out);
        }
        out
    }

    /// Names close to `name` but not equal to it.
    fn near_misses(name: &str, out: &mut Vec<String>) {
        let b = name.as_bytes();
        // One byte off, at each position (kept where the result is still UTF-8).
        for i in 0..b.len() {
            for delta in [1u8, 0x20, 0x80] {
                let mut v = b.to_vec();
                v[i] ^= delta;
                if let Ok(s) = String::from_utf8(v) {
                    out.push(s);
                }
            }
        }
        // Truncations and extensions, at both ends.
        for cut in 1..=b.len().min(3) {
            out.extend(name.get(..b.len() - cut).map(str::to_owned));
            out.extend(name.get(cut..).map(str::to_owned));
        }
        out.push(format!("{name} "));
        out.push(format!("{name}\0"));
        out.push(format!("{name}_"));
        out.push(format!("_{name}"));
        out.push(format!("{name}{name}"));
        // Escaped forms: the JSON escape of a character is not the character.
        for (i, c) in name.char_indices().take(4) {
            let mut s = String::new();
            s.push_str(&name[..i]);
            s.push_str(&format!("\\u{:04x}", c as u32));
            s.push_str(&name[i + c.len_utf8()..]);
            out.push(s);
        }
        out.push(format!("\"{name}\""));
        out.push(name.to_uppercase());
        // Very long: the name repeated.
        out.push(name.repeat(200));
    }

    fn check(table: &MethodTable, names: &[String]) {
        assert_eq!(table.len(), names.len());
        assert_eq!(table.is_empty(), names.is_empty());
        for (i, name) in names.iter().enumerate() {
            assert_eq!(table.get(name), Some(i as u32), "{name:?}");
            assert_eq!(table.get_bytes(name.as_bytes()), Some(i as u32), "{name:?}");
        }
        let registered: HashSet<&str> = names.iter().map(String::as_str).collect();
        let mut misses = vec![
            String::new(),
            "x".repeat(100_000),
            "su\\u0062tract".to_owned(),
            "eth_getBalance".repeat(3),
            "textDocument/didOpen/".to_owned(),
            "tools/call\n".to_owned(),
        ];
        // Near misses of up to 300 names keep the test quick at 10 000 names.
        let step = (names.len() / 300).max(1);
        for name in names.iter().step_by(step) {
            near_misses(name, &mut misses);
        }
        let mut checked = 0;
        for m in &misses {
            if !registered.contains(m.as_str()) {
                assert_eq!(table.get(m), None, "{m:?}");
                checked += 1;
            }
        }
        assert!(checked >= misses.len() / 2);
        // Not UTF-8 at all.
        assert_eq!(table.get_bytes(&[0xff, 0xfe]), None);
    }

    const SIZES: [usize; 7] = [0, 1, 2, 10, 100, 1000, 10_000];

    #[test]
    #[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
    fn every_name_found_and_near_misses_not() {
        for n in SIZES {
            let names = names(n, n as u64);
            let table = MethodTable::build(&names);
            assert!(table.is_perfect(), "n = {n}: fell back to the map");
            check(&table, &names);
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
    fn every_length_class() {
        // Each lookup path (0-7, 8-16, 17-32, 33+ bytes), and its edges, with names
        // that differ only in their first, middle or last byte.
        let mut names = Vec::new();
        for len in 0..=100usize {
            let base: String = (0..len).map(|i| (b'a' + (i % 26) as u8) as char).collect();
            names.push(base.clone());
            for pos in [0, len / 2, len.saturating_sub(1)] {
                if len > 0 {
                    let mut v = base.clone().into_bytes();
                    v[pos] = b'#';
                    names.push(String::from_utf8(v).unwrap());
                }
            }
        }
        let mut seen = HashSet::new();
        names.retain(|n| seen.insert(n.clone()));
        let table = MethodTable::build(&names);
        assert!(table.is_perfect());
        check(&table, &names);
    }

    #[test]
    #[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
    fn fallback_map_is_correct() {
        for n in SIZES {
            let names = names(n, 7 + n as u64);
            let table = MethodTable::build_with(&names, 0);
            assert!(!table.is_perfect());
            check(&table, &names);
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
    fn many_random_sets_build_perfectly() {
        // The seed search succeeds, not just on one lucky set.
        for seed in 0..200 {
            let n = 1 + (seed as usize * 37) % 300;
            let names = names(n, 1000 + seed);
            let table = MethodTable::build(&names);
            assert!(table.is_perfect(), "set {seed} of {n} names");
            for (i, name) in names.iter().enumerate() {
                assert_eq!(table.get(name), Some(i as u32));
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
    fn real_lists_alone() {
        for list in [ETH, LSP, MCP] {
            let table = MethodTable::build(list);
            assert!(table.is_perfect());
            let owned: Vec<String> = list.iter().map(|s| (*s).to_owned()).collect();
            check(&table, &owned);
        }
        let table = MethodTable::build(["add", "subtract", "sum", "notify_hello", "get_data"]);
        assert_eq!(table.get("subtract"), Some(1));
        assert_eq!(table.get("su\\u0062tract"), None);
        assert_eq!(table.get("subtrac"), None);
        assert_eq!(table.get("subtractt"), None);
    }

    #[test]
    fn empty_and_tiny_names() {
        let table = MethodTable::build(Vec::<String>::new());
        assert!(table.is_empty());
        assert_eq!(table.get(""), None);
        assert_eq!(table.get("a"), None);

        let table = MethodTable::build(["", "a", "b", "ab", "ba", "aa", "abc", "é"]);
        for (i, n) in ["", "a", "b", "ab", "ba", "aa", "abc", "é"]
            .iter()
            .enumerate()
        {
            assert_eq!(table.get(n), Some(i as u32));
        }
        for miss in ["c", "bb", "abd", "aaa", "e", " ", "\0"] {
            assert_eq!(table.get(miss), None);
        }
        // Without "", an empty slot must not match "".
        let table = MethodTable::build(["a"]);
        assert_eq!(table.get(""), None);
    }

    #[test]
    fn duplicates_keep_the_first_index() {
        let table = MethodTable::build(["a", "b", "a", "c"]);
        assert_eq!(table.len(), 4);
        assert_eq!(table.get("a"), Some(0));
        assert_eq!(table.get("b"), Some(1));
        assert_eq!(table.get("c"), Some(3));
    }

    #[test]
    fn accepts_str_slices_and_string_iterators() {
        let a = MethodTable::build(&["x", "y"]);
        let b = MethodTable::build(vec![String::from("x"), String::from("y")]);
        let c = MethodTable::build(["x", "y"].iter().map(|s| s.to_string()));
        for t in [a, b, c] {
            assert_eq!(t.get("y"), Some(1));
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
    fn hash_depends_on_every_byte_and_the_length() {
        let k = seeds(BASE_SEED);
        for len in 0..=80usize {
            let base: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            let h = hash(&base, &k);
            for i in 0..len {
                for delta in [1u8, 0x40] {
                    let mut v = base.clone();
                    v[i] ^= delta;
                    assert_ne!(hash(&v, &k), h, "len {len}, byte {i}");
                }
            }
            // Same bytes repeated, one longer: the overlap reads alone would agree.
            let mut longer = vec![b'a'; len];
            let shorter = longer.clone();
            longer.push(b'a');
            assert_ne!(hash(&longer, &k), hash(&shorter, &k), "len {len}");
        }
        // The pair that xoring the length into the data would confuse.
        assert_ne!(hash(b"Xbaaaaaaa", &k), hash(b"Xbaaaaaaaa", &k));
    }

    #[test]
    #[cfg_attr(miri, ignore = "slow under Miri; runs in the normal suite")]
    fn inline_words_depend_on_every_byte() {
        // With the length, the words a slot holds (and the lookup compares) are the
        // name: any one byte changed changes them.
        let mut rng = Rng(99);
        for len in 0..=INLINE {
            let a: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            assert_eq!(words(&a), words(&a.clone()));
            for i in 0..len {
                for delta in [1u8 << (i % 8), 0x80, 0xff] {
                    let mut b = a.clone();
                    b[i] ^= delta;
                    assert_ne!(words(&a), words(&b), "len {len}, byte {i}");
                }
            }
        }
    }

    #[test]
    fn is_send_sync() {
        fn assert_send_sync<T: Send + Sync + 'static>() {}
        assert_send_sync::<MethodTable>();
    }

    /// Build time and lookup speed, for a person to read:
    /// `cargo test --release -p switchboard-core --lib method_table -- --ignored --nocapture`.
    #[test]
    #[ignore = "prints timings; run by hand in release mode"]
    fn print_build_and_lookup_times() {
        use std::hint::black_box;
        use std::time::Instant;
        for n in [10usize, 100, 1000, 10_000, 100_000] {
            // 20-byte names sharing a 15-byte prefix.
            let names: Vec<String> = (0..n).map(|i| format!("eth_method_name{i:05}")).collect();
            let t = Instant::now();
            let table = MethodTable::build(&names);
            let built = t.elapsed();
            // 512 queries back to back in one buffer, as names sit in a message buffer.
            let mut rng = Rng(n as u64);
            let buf: String = (0..512).map(|_| names[rng.below(n)].as_str()).collect();
            let queries: Vec<&str> = (0..512).map(|i| &buf[i * 20..i * 20 + 20]).collect();
            let mut best = f64::MAX;
            for _ in 0..50 {
                let t = Instant::now();
                let mut sum = 0u64;
                for _ in 0..64 {
                    for q in &queries {
                        sum += u64::from(black_box(&table).get(black_box(q)).unwrap_or(0));
                    }
                }
                black_box(sum);
                let ns = t.elapsed().as_nanos() as f64 / (64 * queries.len()) as f64;
                best = best.min(ns);
            }
            println!(
                "n={n:6}: built in {built:?} (perfect: {}), lookup {best:.2} ns (best of 50)",
                table.is_perfect()
            );
        }
    }
}
