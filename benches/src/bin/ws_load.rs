//! A WebSocket load generator for JSON-RPC servers (`benches/ws.sh`): the same
//! client for every server, as cheap as a client can be (the handshake and
//! masked frames written by hand, the frames of one window written at once,
//! the answers only framed and counted).
//!
//! ```text
//! ws_load HOST:PORT [--connections N] [--window N] [--batch N] [--seconds S]
//! ws_load HOST:PORT --subscribe N [--connections N] [--subscriptions N] [--seconds S]
//! ```
//! Each connection keeps `--window` messages in flight (default 32); a message
//! is one `subtract` call, or with `--batch N` a batch of N. Prints one line:
//! `messages/s calls/s` measured over `--seconds` (default 5) after a 0.5 s
//! warm-up. The first answer is checked (`"result":19`).
//!
//! `--subscribe N`: each connection makes `--subscriptions` subscriptions
//! (default 1) with `bench_subscribe [N]` (`switchboard serve --bench`, or
//! `jsonrpsee_server --ws`) and only reads. Every notification is checked: it
//! carries the id of one of its connection's subscriptions (whose answer came
//! before it) and its counter is the next of that subscription. Prints
//! `notifications/s` over `--seconds` after a 0.5 s warm-up, or until all N of
//! every subscription came if that is sooner (over the whole run if that is
//! within the warm-up).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const CALL: &str = r#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#;

fn frame(payload: &[u8]) -> Vec<u8> {
    let mask = [0x12u8, 0x34, 0x56, 0x78];
    let mut out = vec![0x81u8];
    let n = payload.len();
    if n < 126 {
        out.push(0x80 | n as u8);
    } else {
        out.push(0x80 | 126);
        out.extend_from_slice(&u16::try_from(n).expect("a small message").to_be_bytes());
    }
    out.extend_from_slice(&mask);
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    out
}

/// Complete text frames at the start of `buf` (server frames: unmasked), and
/// the bytes they take; `check` gets the first payload.
fn frames(buf: &[u8], check: &mut Option<Vec<u8>>) -> (u64, usize) {
    let (mut n, mut at) = (0, 0);
    while buf.len() >= at + 2 {
        let (len, head) = match buf[at + 1] & 0x7f {
            126 if buf.len() >= at + 4 => (
                usize::from(u16::from_be_bytes([buf[at + 2], buf[at + 3]])),
                4,
            ),
            127 if buf.len() >= at + 10 => {
                let b: [u8; 8] = buf[at + 2..at + 10].try_into().expect("8 bytes");
                (usize::try_from(u64::from_be_bytes(b)).expect("fits"), 10)
            }
            126 | 127 => break,
            l => (usize::from(l), 2),
        };
        if buf.len() < at + head + len {
            break;
        }
        if buf[at] & 0x0f == 0x1 {
            n += 1;
            if check.is_none() {
                *check = Some(buf[at + head..at + head + len].to_vec());
            }
        }
        at += head + len;
    }
    (n, at)
}

async fn connection(
    addr: SocketAddr,
    window: usize,
    msg: Arc<Vec<u8>>,
    count: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
) {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    s.set_nodelay(true).expect("nodelay");
    s.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").await.expect("handshake");
    let mut buf = Vec::with_capacity(1 << 16);
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            assert!(
                buf.starts_with(b"HTTP/1.1 101"),
                "{}",
                String::from_utf8_lossy(&buf)
            );
            buf.drain(..p + 4);
            break;
        }
        let k = s.read(&mut chunk).await.expect("read");
        assert!(k > 0, "closed in the handshake");
        buf.extend_from_slice(&chunk[..k]);
    }
    let mut first = None;
    let all: Vec<u8> = msg
        .iter()
        .copied()
        .cycle()
        .take(msg.len() * window)
        .collect();
    s.write_all(&all).await.expect("write");
    while !stop.load(Ordering::Relaxed) {
        let (n, used) = frames(&buf, &mut first);
        buf.drain(..used);
        if let Some(f) = first.take_if(|f| !f.is_empty()) {
            let text = String::from_utf8_lossy(&f);
            assert!(text.contains(r#""result":19"#), "unexpected answer {text}");
            first = Some(Vec::new()); // checked
        }
        if n > 0 {
            count.fetch_add(n, Ordering::Relaxed);
            let n = usize::try_from(n).expect("fits");
            s.write_all(&all[..msg.len() * n.min(window)])
                .await
                .expect("write");
            continue;
        }
        let k = s.read(&mut chunk).await.expect("read");
        assert!(k > 0, "the server closed");
        buf.extend_from_slice(&chunk[..k]);
    }
}

/// The JSON value after `"key":` in `text` (up to the next `,` or `}`).
fn member<'a>(text: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    let at = text.windows(key.len()).position(|w| w == key)? + key.len();
    let rest = &text[at..];
    let end = rest.iter().position(|b| matches!(b, b',' | b'}'))?;
    Some(&rest[..end])
}

/// One connection of `--subscribe`: `subs` subscriptions of `n` notifications,
/// each checked; counts them in `count`.
async fn subscriber(addr: SocketAddr, subs: usize, n: u64, count: Arc<AtomicU64>) {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    s.set_nodelay(true).expect("nodelay");
    s.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").await.expect("handshake");
    let mut buf = Vec::with_capacity(1 << 16);
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            assert!(
                buf.starts_with(b"HTTP/1.1 101"),
                "{}",
                String::from_utf8_lossy(&buf)
            );
            buf.drain(..p + 4);
            break;
        }
        let k = s.read(&mut chunk).await.expect("read");
        assert!(k > 0, "closed in the handshake");
        buf.extend_from_slice(&chunk[..k]);
    }
    let mut out = Vec::new();
    for i in 0..subs {
        let call =
            format!(r#"{{"jsonrpc":"2.0","method":"bench_subscribe","params":[{n}],"id":{i}}}"#);
        out.extend_from_slice(&frame(call.as_bytes()));
    }
    s.write_all(&out).await.expect("write");
    // The subscriptions' ids (as the JSON text) and each one's next counter.
    let mut next: std::collections::HashMap<Vec<u8>, u64> = std::collections::HashMap::new();
    let (mut answers, mut left) = (0usize, n * subs as u64);
    while left > 0 || answers < subs {
        let mut at = 0;
        let mut got = 0;
        while buf.len() >= at + 2 {
            let (len, head) = match buf[at + 1] & 0x7f {
                126 if buf.len() >= at + 4 => (
                    usize::from(u16::from_be_bytes([buf[at + 2], buf[at + 3]])),
                    4,
                ),
                127 if buf.len() >= at + 10 => {
                    let b: [u8; 8] = buf[at + 2..at + 10].try_into().expect("8 bytes");
                    (usize::try_from(u64::from_be_bytes(b)).expect("fits"), 10)
                }
                126 | 127 => break,
                l => (usize::from(l), 2),
            };
            if buf.len() < at + head + len {
                break;
            }
            let op = buf[at] & 0x0f;
            let text = &buf[at + head..at + head + len];
            at += head + len;
            if op != 0x1 {
                assert!(op != 0x8, "the server closed the connection");
                continue;
            }
            if let Some(id) = member(text, br#""subscription":"#) {
                let want = next.get_mut(id).unwrap_or_else(|| {
                    panic!(
                        "a notification for no subscription of ours: {}",
                        String::from_utf8_lossy(text)
                    )
                });
                let k = member(text, br#""result":"#)
                    .and_then(|r| std::str::from_utf8(r).ok())
                    .and_then(|r| r.trim_end_matches('}').parse::<u64>().ok());
                assert_eq!(k, Some(*want), "{}", String::from_utf8_lossy(text));
                *want += 1;
                got += 1;
            } else {
                let id = member(text, br#""result":"#).unwrap_or_else(|| {
                    panic!("unexpected answer {}", String::from_utf8_lossy(text))
                });
                assert!(next.insert(id.to_vec(), 0).is_none(), "an id twice");
                answers += 1;
            }
        }
        buf.drain(..at);
        if got > 0 {
            count.fetch_add(got, Ordering::Relaxed);
            left -= got;
            continue;
        }
        let k = s.read(&mut chunk).await.expect("read");
        assert!(k > 0, "the server closed");
        buf.extend_from_slice(&chunk[..k]);
    }
}

/// `--subscribe`: prints notifications/s.
async fn subscribe_load(addr: SocketAddr, conns: usize, subs: usize, n: u64, seconds: f64) {
    let count = Arc::new(AtomicU64::new(0));
    let total = n * (conns * subs) as u64;
    let start = Instant::now();
    let tasks: Vec<_> = (0..conns)
        .map(|_| tokio::spawn(subscriber(addr, subs, n, count.clone())))
        .collect();
    let warm = start + Duration::from_millis(500);
    let deadline = warm + Duration::from_secs_f64(seconds);
    let mut at_warm = None;
    let (c, t) = loop {
        let now = Instant::now();
        let c = count.load(Ordering::Relaxed);
        if c >= total || now >= deadline {
            break (c, now);
        }
        if at_warm.is_none() && now >= warm {
            at_warm = Some((c, now));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    let rate = match at_warm {
        Some((c0, t0)) => (c - c0) as f64 / (t - t0).as_secs_f64(),
        None => c as f64 / (t - start).as_secs_f64(),
    };
    for t in tasks {
        if t.is_finished() {
            if let Err(e) = t.await {
                panic!("a connection failed: {e}");
            }
        } else {
            t.abort();
        }
    }
    println!(
        "{rate:.0} notifications/s ({c} in {:.2} s)",
        (t - start).as_secs_f64()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut addr: Option<SocketAddr> = None;
    let (mut conns, mut window, mut batch, mut seconds) = (1usize, 32usize, 1usize, 5.0f64);
    let (mut subscribe, mut subs) = (None::<u64>, 1usize);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut num = || {
            it.next()
                .and_then(|v| v.parse::<f64>().ok())
                .filter(|v| *v > 0.0)
                .expect("a positive number")
        };
        match a.as_str() {
            "--connections" => conns = num() as usize,
            "--window" => window = num() as usize,
            "--batch" => batch = num() as usize,
            "--seconds" => seconds = num(),
            "--subscribe" => subscribe = Some(num() as u64),
            "--subscriptions" => subs = num() as usize,
            other => addr = Some(other.parse().expect("HOST:PORT")),
        }
    }
    let addr = addr.expect(
        "usage: ws_load HOST:PORT [--connections N] [--window N] [--batch N] [--seconds S] [--subscribe N [--subscriptions N]]",
    );
    if let Some(n) = subscribe {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(subscribe_load(addr, conns, subs, n, seconds));
        return;
    }
    let text = if batch == 1 {
        CALL.to_owned()
    } else {
        format!("[{}]", vec![CALL; batch].join(","))
    };
    let msg = Arc::new(frame(text.as_bytes()));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async move {
        let count = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let tasks: Vec<_> = (0..conns)
            .map(|_| {
                tokio::spawn(connection(
                    addr,
                    window,
                    msg.clone(),
                    count.clone(),
                    stop.clone(),
                ))
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(500)).await;
        let (c0, t0) = (count.load(Ordering::Relaxed), Instant::now());
        tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
        let (c1, t1) = (count.load(Ordering::Relaxed), Instant::now());
        stop.store(true, Ordering::Relaxed);
        let rate = (c1 - c0) as f64 / (t1 - t0).as_secs_f64();
        for t in tasks {
            if t.is_finished() {
                // A connection that ended early panicked: report it.
                if let Err(e) = t.await {
                    panic!("a connection failed: {e}");
                }
            } else {
                t.abort();
            }
        }
        println!("{rate:.0} messages/s {:.0} calls/s", rate * batch as f64);
    });
}
