//! The demo's synthetic chain for Ethereum clients: a block every interval since
//! the server started, the methods clients ask first (`eth_blockNumber`,
//! `eth_chainId`, `net_version`, `web3_clientVersion`: web3.py's `is_connected()`
//! sends the last), and `eth_subscribe` `newHeads` (one header per new block) on
//! connections that can push (stdio, Unix sockets, WebSocket).
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use switchboard::{Router, Session};
//! use switchboard_server::{chain, demo};
//!
//! let chain = Arc::new(chain::Chain::new(Duration::from_secs(12)));
//! let router = chain::register(demo::register(Router::builder(), Arc::default()), chain)
//!     .build()
//!     .unwrap();
//! let mut session = Session::new(router);
//! let resp = session.handle(br#"{"jsonrpc":"2.0","method":"eth_chainId","id":1}"#).unwrap();
//! assert_eq!(resp, br#"{"jsonrpc":"2.0","result":"0x539","id":1}"#);
//! // No connection that can push (plain HTTP answers the same): geth's -32601.
//! let resp = session.handle(br#"{"jsonrpc":"2.0","method":"eth_subscribe","params":["newHeads"],"id":2}"#).unwrap();
//! assert!(resp.starts_with(br#"{"jsonrpc":"2.0","error":{"code":-32601,"#));
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use switchboard::connection::SubscriptionSink;
use switchboard::{RouterBuilder, RpcError};

/// The chain id `eth_chainId` (hex) and `net_version` (decimal) answer: 1337,
/// the usual id of a local development chain.
pub const CHAIN_ID: u64 = 1337;

/// The synthetic chain: block `n` is made `n` intervals after the start (block 0
/// at the start). Counts the `newHeads` producers running, for tests.
#[derive(Debug)]
pub struct Chain {
    start: Instant,
    /// Seconds since the Unix epoch at `start`, for the headers' timestamps.
    unix_start: u64,
    interval: Duration,
    producers: AtomicUsize,
}

impl Default for Chain {
    /// A block every second.
    fn default() -> Self {
        Chain::new(Duration::from_secs(1))
    }
}

impl Chain {
    /// A chain with a block every `interval` (at least 1 ms), starting now.
    pub fn new(interval: Duration) -> Self {
        let unix_start = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Chain {
            start: Instant::now(),
            unix_start,
            interval: interval.max(Duration::from_millis(1)),
            producers: AtomicUsize::new(0),
        }
    }

    /// The time between blocks.
    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// The latest block's number.
    pub fn block_number(&self) -> u64 {
        let n = self.start.elapsed().as_nanos() / self.interval.as_nanos();
        u64::try_from(n).unwrap_or(u64::MAX)
    }

    /// When block `n` is made.
    fn made_at(&self, n: u64) -> Instant {
        let nanos = self.interval.as_nanos().saturating_mul(u128::from(n));
        let nanos = u64::try_from(nanos).unwrap_or(u64::MAX);
        self.start + Duration::from_nanos(nanos)
    }

    /// The `newHeads` producers running (one per open subscription).
    pub fn producers(&self) -> usize {
        self.producers.load(Ordering::Acquire)
    }

    /// Block `n`'s header as geth sends it in a `newHeads` notification: every
    /// quantity hex, hashes 32 bytes (synthetic, deterministic: block `n`'s
    /// `parentHash` is block `n - 1`'s `hash`).
    pub fn header(&self, n: u64) -> serde_json::Value {
        let secs = self.made_at(n).duration_since(self.start).as_secs();
        serde_json::json!({
            "number": format!("0x{n:x}"),
            "hash": hash(n, 0),
            "parentHash": if n == 0 { format!("0x{:064x}", 0) } else { hash(n - 1, 0) },
            "nonce": "0x0000000000000000",
            // keccak256(rlp([])): the hash of an empty uncle list.
            "sha3Uncles": "0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347",
            "logsBloom": format!("0x{}", "0".repeat(512)),
            // keccak256(rlp("")): the root of an empty trie (no transactions, no receipts).
            "transactionsRoot": "0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421",
            "stateRoot": hash(n, 1),
            "receiptsRoot": "0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421",
            "miner": "0x0000000000000000000000000000000000000000",
            "difficulty": "0x0",
            "extraData": "0x",
            "gasLimit": "0x1c9c380",
            "gasUsed": "0x0",
            "timestamp": format!("0x{:x}", self.unix_start + secs),
            "baseFeePerGas": "0x7",
            "mixHash": hash(n, 2),
        })
    }

    /// Counts a producer until the guard is dropped.
    fn producer(self: &Arc<Self>) -> Producer {
        self.producers.fetch_add(1, Ordering::AcqRel);
        Producer(Arc::clone(self))
    }
}

struct Producer(Arc<Chain>);

impl Drop for Producer {
    fn drop(&mut self) {
        self.0.producers.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A synthetic 32-byte hash of `(n, salt)`: four rounds of splitmix64.
fn hash(n: u64, salt: u64) -> String {
    let mut x = n.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ salt.wrapping_mul(0xd1b5_4a32_d192_ed03);
    let mut out = String::with_capacity(66);
    out.push_str("0x");
    for _ in 0..4 {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        out.push_str(&format!("{z:016x}"));
    }
    out
}

const KINDS: &str =
    r#"{"field":"params","reason":"expected [\"newHeads\"]: the one subscription this demo has"}"#;

/// Registers `eth_blockNumber`, `eth_chainId`, `net_version`,
/// `web3_clientVersion` and the `newHeads` subscription (`eth_subscribe`,
/// `eth_unsubscribe`, notifications `eth_subscription`).
pub fn register(builder: RouterBuilder, chain: Arc<Chain>) -> RouterBuilder {
    let c = Arc::clone(&chain);
    builder
        .method("eth_blockNumber", move |_, out| {
            out.str(&format!("0x{:x}", c.block_number()))
        })
        .method("eth_chainId", |_, out| out.str(&format!("0x{CHAIN_ID:x}")))
        .method("net_version", |_, out| out.str(&CHAIN_ID.to_string()))
        .method("web3_clientVersion", |_, out| {
            out.str(concat!("switchboard/v", env!("CARGO_PKG_VERSION")))
        })
        .subscription(
            "eth_subscribe",
            "eth_unsubscribe",
            "eth_subscription",
            move |call, sink| {
                let kind = call
                    .params()
                    .filter(|p| p.is_array())
                    .and_then(|p| p.iter().next())
                    .and_then(|v| v.as_plain_str());
                if kind != Some("newHeads") {
                    return Err(RpcError::new(-32602, "Invalid params").with_data_json(KINDS));
                }
                let runtime = tokio::runtime::Handle::try_current()
                    .map_err(|_| RpcError::internal("no runtime to run the subscription on"))?;
                let producer = chain.producer();
                runtime.spawn(new_heads(producer, sink));
                Ok(())
            },
        )
}

/// Sends each new block's header until the subscription closes.
async fn new_heads(producer: Producer, sink: SubscriptionSink) {
    let chain = &producer.0;
    let mut last = chain.block_number();
    loop {
        let next = chain.made_at(last + 1);
        tokio::select! {
            () = sink.closed() => return,
            () = tokio::time::sleep_until(next.into()) => {}
        }
        last += 1;
        if sink.send(&chain.header(last)).is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_chain_up_and_are_hex() {
        let chain = Chain::new(Duration::from_secs(12));
        let (a, b) = (chain.header(4), chain.header(5));
        assert_eq!(b["parentHash"], a["hash"]);
        assert_eq!(b["number"], "0x5");
        assert_ne!(a["hash"], b["hash"]);
        for (k, v) in b.as_object().unwrap() {
            let v = v.as_str().unwrap();
            assert!(v.starts_with("0x"), "{k}: {v}");
            assert!(v[2..].bytes().all(|c| c.is_ascii_hexdigit()), "{k}: {v}");
        }
        assert_eq!(b["hash"].as_str().unwrap().len(), 66);
        assert_eq!(b["logsBloom"].as_str().unwrap().len(), 2 + 512);
        assert_eq!(chain.header(0)["parentHash"], format!("0x{:064x}", 0));
    }
}
