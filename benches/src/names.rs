//! Method names for the lookup benches, shared with `build.rs` (which generates the
//! `phf` maps from them): deterministic, the same every build.
//!
//! Every set starts with the same ten real Ethereum method names, among them the
//! probed 20-byte [`PROBE`] and another 20-byte name sharing its `eth_get` prefix;
//! larger sets add generated names of varied length (8 to 29 bytes) over a small
//! vocabulary, so that many share prefixes and suffixes, as real APIs do.

/// The name every lookup bench looks up: 20 bytes, registered in every set.
pub const PROBE: &str = "eth_getBlockByNumber";

/// A 20-byte name registered in no set (one byte off [`PROBE`]).
pub const MISS: &str = "eth_getBlockByNumbeR";

/// The ten names of the smallest set (also the `match` arms).
pub const TEN: [&str; 10] = [
    "eth_blockNumber",
    "eth_call",
    "eth_chainId",
    "eth_estimateGas",
    "eth_getBalance",
    "eth_getBlockByHash",
    "eth_getBlockByNumber",
    "eth_getFilterChanges",
    "eth_getLogs",
    "eth_sendRawTransaction",
];

/// The set sizes benchmarked.
pub const SIZES: [usize; 4] = [10, 100, 1000, 10_000];

/// `n` distinct method names (`n >= 10`): [`TEN`], then generated ones.
pub fn method_names(n: usize) -> Vec<String> {
    const NS: [&str; 8] = [
        "eth", "net", "web3", "debug", "trace", "admin", "txpool", "engine",
    ];
    const VERB: [&str; 6] = ["get", "set", "new", "send", "call", "list"];
    const NOUN: [&str; 8] = [
        "Block",
        "BlockByNumber",
        "Transaction",
        "Receipt",
        "Filter",
        "Logs",
        "StorageAt",
        "Peer",
    ];
    let mut out: Vec<String> = TEN.iter().map(|s| (*s).to_owned()).collect();
    let mut i = 0usize;
    while out.len() < n {
        let ns = NS[i % NS.len()];
        let verb = VERB[(i / NS.len()) % VERB.len()];
        let noun = NOUN[(i / (NS.len() * VERB.len())) % NOUN.len()];
        // The index keeps names distinct; it goes in the middle or at the end so
        // that both prefixes and suffixes are shared widely.
        let name = if i & 1 == 0 {
            format!("{ns}_{verb}{noun}V{i}")
        } else {
            format!("{ns}_{verb}{i}{noun}")
        };
        out.push(name);
        i += 1;
    }
    out.truncate(n);
    out
}
