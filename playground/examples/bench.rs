//! The native side of `playground/bench.mjs`: the same `respond_n` over the same
//! corpus messages (best of 5 runs), on the host, for a rough wasm-versus-native comparison.
//!
//! `cargo run --release -p switchboard-playground --example bench`

use std::time::Instant;

fn main() {
    let names = [
        "subtract_positional.json",
        "subtract_named.json",
        "eth_getBalance.json",
        "notification.json",
        "parse_error.json",
        "batch10_subtract.json",
        "batch100_eth_getBalance.json",
        "params_4k.json",
        "params_64k.json",
        "tokens_64k.json",
    ];
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../benches/corpus");
    for name in names {
        let msg = std::fs::read(format!("{corpus}/{name}")).expect("a corpus message");
        let n = (20_000_000 / (msg.len() * 20)).max(200) as u32;
        switchboard_playground::respond_n(&msg, n.div_ceil(10)); // warm up
        let us = (0..5)
            .map(|_| {
                let t = Instant::now();
                switchboard_playground::respond_n(&msg, n);
                t.elapsed().as_secs_f64() * 1e6 / f64::from(n)
            })
            .fold(f64::INFINITY, f64::min);
        println!("{name:<30} {:>7} B  {us:>9.3} us/message", msg.len());
    }
}
