//! A WebSocket load generator for JSON-RPC servers (`benches/ws.sh`): the same
//! client for every server, as cheap as a client can be (the handshake and
//! masked frames written by hand, the frames of one window written at once,
//! the answers only framed and counted).
//!
//! ```text
//! ws_load HOST:PORT [--connections N] [--window N] [--batch N] [--seconds S]
//! ```
//! Each connection keeps `--window` messages in flight (default 32); a message
//! is one `subtract` call, or with `--batch N` a batch of N. Prints one line:
//! `messages/s calls/s` measured over `--seconds` (default 5) after a 0.5 s
//! warm-up. The first answer is checked (`"result":19`).

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

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut addr: Option<SocketAddr> = None;
    let (mut conns, mut window, mut batch, mut seconds) = (1usize, 32usize, 1usize, 5.0f64);
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
            other => addr = Some(other.parse().expect("HOST:PORT")),
        }
    }
    let addr = addr.expect(
        "usage: ws_load HOST:PORT [--connections N] [--window N] [--batch N] [--seconds S]",
    );
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
