//! Subscriptions end to end on the duplex driver (the stdio and Unix socket
//! transport) with the demo's `eth_subscribe` `newHeads`: notifications carry
//! the id, stop after `eth_unsubscribe`, end with the connection (the
//! producers' tasks end: counted), and a client that never reads closes its
//! subscription with a notice instead of growing memory. No timing assertions:
//! waits are bounded, and a "nothing after" check asks a question and requires
//! its answer to be the next line.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use switchboard::Router;
use switchboard::connection::Connection;
use switchboard_server::chain::{self, Chain};
use switchboard_server::demo;
use switchboard_server::duplex::{Duplex, DuplexConfig, End, Summary};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::task::JoinHandle;

/// A generous bound for anything awaited here (a hang fails, slowness does not).
const BOUND: Duration = Duration::from_secs(30);

struct Client {
    write: tokio::io::WriteHalf<DuplexStream>,
    lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
    conn: Connection,
    serving: JoinHandle<std::io::Result<Summary>>,
}

fn router(chain: &Arc<Chain>) -> Arc<Router> {
    chain::register(
        demo::register(Router::builder(), Arc::default()),
        Arc::clone(chain),
    )
    .build()
    .unwrap()
}

impl Client {
    fn start(chain: &Arc<Chain>, config: DuplexConfig, pipe: usize) -> Client {
        let (client, server) = tokio::io::duplex(pipe);
        let duplex = Duplex::new(router(chain), config);
        let conn = duplex.connection().clone();
        let (r, w) = tokio::io::split(server);
        let serving = tokio::spawn(duplex.serve(r, w));
        let (cr, cw) = tokio::io::split(client);
        Client {
            write: cw,
            lines: BufReader::new(cr).lines(),
            conn,
            serving,
        }
    }

    async fn send(&mut self, msg: &str) {
        self.write.write_all(msg.as_bytes()).await.unwrap();
        self.write.write_all(b"\n").await.unwrap();
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(BOUND, self.lines.next_line())
            .await
            .expect("a message within the bound")
            .unwrap()
            .expect("the connection is open");
        serde_json::from_str(&line).unwrap()
    }

    async fn subscribe(&mut self, id: u32) -> String {
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","method":"eth_subscribe","params":["newHeads"],"id":{id}}}"#
        ))
        .await;
        // Nothing of it comes before its answer (other subscriptions' may).
        let answer = loop {
            let m = self.next().await;
            if m.get("id").is_some() {
                break m;
            }
            assert_eq!(m["method"], "eth_subscription");
        };
        assert_eq!(answer["id"], id, "{answer}");
        let sub = answer["result"].as_str().unwrap().to_owned();
        assert_eq!(sub.len(), 34);
        assert!(sub.starts_with("0x"));
        sub
    }
}

/// Waits (bounded) until `f` holds.
async fn eventually(what: &str, f: impl Fn() -> bool) {
    let start = std::time::Instant::now();
    while !f() {
        assert!(start.elapsed() < BOUND, "never: {what}");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

fn fast_chain() -> Arc<Chain> {
    Arc::new(Chain::new(Duration::from_millis(5)))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_heads_arrive_with_the_id_and_stop_after_unsubscribe() {
    let chain = fast_chain();
    let mut c = Client::start(&chain, DuplexConfig::default(), 1 << 16);
    let sub = c.subscribe(1).await;
    assert_eq!(chain.producers(), 1);
    assert_eq!(c.conn.subscriptions(), 1);
    let mut numbers = Vec::new();
    let mut parent = None;
    for _ in 0..3 {
        let n = c.next().await;
        assert_eq!(n["method"], "eth_subscription");
        assert_eq!(n["params"]["subscription"], sub.as_str());
        let head = &n["params"]["result"];
        for field in [
            "number",
            "hash",
            "parentHash",
            "nonce",
            "sha3Uncles",
            "logsBloom",
            "transactionsRoot",
            "stateRoot",
            "receiptsRoot",
            "miner",
            "difficulty",
            "extraData",
            "gasLimit",
            "gasUsed",
            "timestamp",
            "baseFeePerGas",
            "mixHash",
        ] {
            assert!(
                head[field].as_str().unwrap().starts_with("0x"),
                "{field}: {head}"
            );
        }
        if let Some(p) = parent {
            assert_eq!(head["parentHash"], p);
        }
        parent = Some(head["hash"].clone());
        numbers.push(u64::from_str_radix(&head["number"].as_str().unwrap()[2..], 16).unwrap());
    }
    assert_eq!(numbers, [numbers[0], numbers[0] + 1, numbers[0] + 2]);
    c.send(&format!(
        r#"{{"jsonrpc":"2.0","method":"eth_unsubscribe","params":["{sub}"],"id":2}}"#
    ))
    .await;
    // Notifications queued before the answer may still come; then the answer.
    let answer = loop {
        let m = c.next().await;
        if m.get("id").is_some() {
            break m;
        }
        assert_eq!(m["params"]["subscription"], sub.as_str());
    };
    assert_eq!(
        answer,
        serde_json::json!({"jsonrpc":"2.0","result":true,"id":2})
    );
    eventually("the producer ends", || chain.producers() == 0).await;
    assert_eq!(c.conn.subscriptions(), 0);
    // Nothing after: several block times later, the next line answers this.
    tokio::time::sleep(chain.interval() * 10).await;
    c.send(r#"{"jsonrpc":"2.0","method":"eth_chainId","id":3}"#)
        .await;
    assert_eq!(
        c.next().await,
        serde_json::json!({"jsonrpc":"2.0","result":"0x539","id":3})
    );
    // Unknown now: geth's error.
    c.send(&format!(
        r#"{{"jsonrpc":"2.0","method":"eth_unsubscribe","params":["{sub}"],"id":4}}"#
    ))
    .await;
    let err = c.next().await;
    assert_eq!(err["error"]["code"], -32000, "{err}");
    assert_eq!(err["error"]["message"], "Subscription not found");
    c.write.shutdown().await.unwrap();
    let summary = c.serving.await.unwrap().unwrap();
    assert_eq!(summary.end, End::Eof);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disconnect_closes_every_sink_and_ends_the_producers() {
    let chain = fast_chain();
    let baseline = Arc::strong_count(&chain);
    let mut c = Client::start(&chain, DuplexConfig::default(), 1 << 16);
    let mut ids = Vec::new();
    for i in 0..3 {
        let id = c.subscribe(i).await;
        ids.push(id);
        // Other subscriptions' notifications may come before the next answer.
        loop {
            let m = c.next().await;
            if m["params"]["subscription"] == ids[ids.len() - 1].as_str() {
                break;
            }
        }
    }
    assert_eq!(chain.producers(), 3);
    assert_eq!(c.conn.subscriptions(), 3);
    let conn = c.conn.clone();
    drop(c.lines); // the client goes away: both halves
    drop(c.write);
    let summary = tokio::time::timeout(BOUND, c.serving)
        .await
        .expect("the driver ends")
        .unwrap();
    // Writing to a closed pipe may fail or not: either way it ended.
    if let Ok(s) = summary {
        assert_eq!(s.cancelled_at_end, 0);
    }
    assert!(conn.is_closed());
    assert_eq!(conn.subscriptions(), 0);
    eventually("every producer ends", || chain.producers() == 0).await;
    drop(conn);
    // The router (and its handlers) are gone with the driver; nothing else
    // holds the chain: no task, no sink leaked.
    eventually("the chain is released", || {
        Arc::strong_count(&chain) == baseline
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_reads_gets_its_subscription_closed() {
    let chain = Arc::new(Chain::new(Duration::from_millis(1)));
    let mut config = DuplexConfig::default();
    config.connection.subscription_capacity(8);
    // A small pipe: the writer blocks as soon as the client stops reading.
    let mut c = Client::start(&chain, config, 4096);
    let sub = c.subscribe(1).await;
    // The client reads nothing more; the producer keeps producing.
    eventually("the subscription overflows", || {
        c.conn.subscriptions_overflowed() == 1
    })
    .await;
    assert_eq!(c.conn.subscriptions(), 0);
    eventually("the producer ends", || chain.producers() == 0).await;
    // What was written or queued is bounded: notifications, then the notice.
    let mut notes = 0;
    let notice = loop {
        let m = c.next().await;
        assert_eq!(m["params"]["subscription"], sub.as_str());
        if m["params"].get("error").is_some() {
            break m;
        }
        notes += 1;
    };
    assert_eq!(notice["params"]["error"]["code"], -32003, "{notice}");
    assert_eq!(notice["params"]["error"]["data"]["capacity"], 8);
    // At most a write's coalesced chunk (64 KiB) in the pipe's way, plus 8.
    assert!(notes <= (64 << 10) / 1000 + 8 + 8, "{notes} notifications");
    // The connection still answers.
    c.send(r#"{"jsonrpc":"2.0","method":"net_version","id":2}"#)
        .await;
    assert_eq!(
        c.next().await,
        serde_json::json!({"jsonrpc":"2.0","result":"1337","id":2})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_subscriptions_on_one_connection_are_bounded() {
    let chain = Arc::new(Chain::new(Duration::from_secs(3600)));
    let mut config = DuplexConfig::default();
    config.connection.max_subscriptions(2);
    let mut c = Client::start(&chain, config, 1 << 16);
    c.send(r#"{"jsonrpc":"2.0","method":"eth_subscribe","params":["logs"],"id":4}"#)
        .await;
    let err = c.next().await;
    assert_eq!(err["error"]["code"], -32602, "{err}");
    assert_eq!(c.conn.subscriptions(), 0);
    c.subscribe(1).await;
    c.subscribe(2).await;
    c.send(r#"{"jsonrpc":"2.0","method":"eth_subscribe","params":["newHeads"],"id":3}"#)
        .await;
    let err = c.next().await;
    assert_eq!(err["error"]["message"], "Too many subscriptions", "{err}");
    assert_eq!(chain.producers(), 2);
}

/// Not a check: the rate of notifications one subscription delivers through
/// the duplex driver to a client reading an in-memory pipe (run with
/// `cargo test --release -p switchboard-server --test subscriptions -- --ignored --nocapture`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement, not a check"]
async fn measure_notifications_per_second() {
    const N: u64 = 500_000;
    for subscribers in [1u64, 100] {
        let router = Router::builder()
            .subscription("sub", "unsub", "note", |call, sink| {
                // How many to send, and how many may wait: the subscriptions
                // share the connection's queue (1024), a full one closes them.
                let (per, room): (u64, usize) = call.params().unwrap().parse()?;
                tokio::spawn(async move {
                    for n in 0..per {
                        // Backpressure by hand: wait while half the buffer waits.
                        while sink.waiting() >= room {
                            tokio::task::yield_now().await;
                        }
                        if sink.send(&n).is_err() {
                            return;
                        }
                    }
                });
                Ok(())
            })
            .build()
            .unwrap();
        let (client, server) = tokio::io::duplex(1 << 16);
        let duplex = Duplex::new(router, DuplexConfig::default());
        let (r, w) = tokio::io::split(server);
        let serving = tokio::spawn(duplex.serve(r, w));
        let (cr, mut cw) = tokio::io::split(client);
        let mut lines = BufReader::new(cr).lines();
        let start = std::time::Instant::now();
        for i in 0..subscribers {
            let msg = format!(
                "{{\"jsonrpc\":\"2.0\",\"method\":\"sub\",\"params\":[{},{}],\"id\":{i}}}\n",
                N / subscribers,
                (512 / subscribers).clamp(1, 128),
            );
            cw.write_all(msg.as_bytes()).await.unwrap();
        }
        let total = (N / subscribers) * subscribers;
        let mut got = 0u64;
        while got < total + subscribers {
            let line = lines.next_line().await.unwrap().unwrap();
            assert!(!line.contains("\"error\""), "{line}");
            got += 1;
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{subscribers} subscriber(s): {total} notifications in {secs:.3} s = {:.0} per second",
            total as f64 / secs
        );
        drop(cw);
        drop(lines);
        let _ = serving.await;
    }
}
