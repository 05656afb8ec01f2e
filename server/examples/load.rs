//! A bounded HTTP load client for `switchboard serve` (or any JSON-RPC-over-HTTP
//! server serving `subtract`): keep-alive connections, each one call at a time, for a
//! fixed time; prints requests per second and p50/p99 latency.
//!
//! ```text
//! cargo run --release -p switchboard-server --example load -- 127.0.0.1:8080 [CONNS] [SECS] [BATCH]
//! ```
//! Defaults: 4 connections, 5 seconds, single calls (BATCH 1); BATCH n > 1 sends
//! batches of n `subtract` calls. Loopback addresses only make sense here.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let addr = args
        .first()
        .map_or("127.0.0.1:8080", String::as_str)
        .to_owned();
    let conns: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(4);
    let secs: f64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(5.0);
    let batch: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1);
    let call = r#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#;
    let body = if batch > 1 {
        format!("[{}]", vec![call; batch].join(","))
    } else {
        call.to_owned()
    };
    let request = format!(
        "POST / HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let until = Instant::now() + Duration::from_secs_f64(secs);
    let workers: Vec<_> = (0..conns)
        .map(|_| {
            let (addr, request) = (addr.clone(), request.clone());
            std::thread::spawn(move || run(&addr, request.as_bytes(), until))
        })
        .collect();
    let started = Instant::now();
    let mut lat: Vec<u32> = Vec::new();
    for w in workers {
        lat.extend(w.join().unwrap());
    }
    let took = started.elapsed().as_secs_f64();
    lat.sort_unstable();
    let pct = |p: f64| {
        lat.get(((lat.len() as f64 * p) as usize).min(lat.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0)
    };
    println!(
        "{} calls in {took:.2}s over {conns} connection(s), batch {batch}: {:.0} req/s, p50 {} us, p99 {} us",
        lat.len(),
        lat.len() as f64 / took,
        pct(0.50),
        pct(0.99)
    );
}

/// One connection: calls until `until`; returns each call's latency in microseconds.
fn run(addr: &str, request: &[u8], until: Instant) -> Vec<u32> {
    let s = TcpStream::connect(addr).expect("connect");
    s.set_nodelay(true).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut w = s.try_clone().unwrap();
    let mut r = BufReader::new(s);
    let mut lat = Vec::with_capacity(1 << 16);
    let mut line = String::new();
    let mut body = Vec::new();
    while Instant::now() < until {
        let t = Instant::now();
        w.write_all(request).unwrap();
        let mut len = 0;
        line.clear();
        r.read_line(&mut line).unwrap();
        assert!(line.starts_with("HTTP/1.1 200"), "{line:?}");
        loop {
            line.clear();
            r.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                len = v.trim().parse().unwrap();
            }
        }
        body.resize(len, 0);
        r.read_exact(&mut body).unwrap();
        lat.push(t.elapsed().as_micros().min(u128::from(u32::MAX)) as u32);
    }
    lat
}
