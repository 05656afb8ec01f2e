//! `switchboard serve --stdio` end to end on real pipes: subscriptions at the
//! interval given, options checked, and stdout carrying the protocol only (the
//! logs, even at trace, go to stderr).

use std::io::{BufRead, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

/// A generous bound for anything awaited here (a hang fails, slowness does not).
const BOUND: Duration = Duration::from_secs(30);

/// The binary: `serve --stdio --heads-interval` on real pipes.
#[test]
fn serve_stdio_streams_new_heads_at_the_interval_given() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["serve", "--stdio", "--heads-interval", "0.005"])
        .env("SWITCHBOARD_LOG", "off")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    // Lines arrive on a channel: every wait is bounded.
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let next = || -> Value {
        let line = rx.recv_timeout(BOUND).expect("a line within the bound");
        serde_json::from_str(&line).unwrap()
    };
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"eth_subscribe\",\"params\":[\"newHeads\"],\"id\":1}\n")
        .unwrap();
    stdin.flush().unwrap();
    let sub = next()["result"].as_str().unwrap().to_owned();
    for _ in 0..3 {
        assert_eq!(next()["params"]["subscription"], sub.as_str());
    }
    drop(stdin); // EOF: the server ends its subscriptions and exits
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > BOUND {
            let _ = child.kill();
            panic!("serve --stdio did not exit after EOF");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    assert!(status.success());
    reader.join().unwrap();
}

#[test]
fn heads_interval_must_be_positive() {
    let out = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["serve", "--stdio", "--heads-interval", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--heads-interval"));
}

/// Every line on stdout is a JSON-RPC response; the events (connection opened
/// and closed at debug) are on stderr, with timestamps.
#[test]
fn serve_stdio_logs_on_stderr_only() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["serve", "--stdio"])
        .env("SWITCHBOARD_LOG", "trace")
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(
            b"{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":[42,23],\"id\":1}\n\
              {\"jsonrpc\":\"2.0\",\"method\":\"nope\",\"id\":2}\n\
              not json\n",
        )
        .unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    for line in &lines {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert_eq!(v["jsonrpc"], "2.0", "{line}");
    }
    assert_eq!(
        serde_json::from_str::<Value>(lines[0]).unwrap()["result"],
        19
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    let opened = stderr
        .lines()
        .find(|l| l.contains("connection opened"))
        .unwrap_or_else(|| panic!("no connection event at trace: {stderr}"));
    assert!(opened.contains("DEBUG"), "{opened}");
    // An RFC 3339 timestamp first: 2026-12-04T19:20:40.123456Z
    assert!(
        opened.len() > 20 && opened.as_bytes()[4] == b'-' && opened.as_bytes()[10] == b'T',
        "{opened}"
    );
    assert!(stderr.contains("connection closed"), "{stderr}");
}

#[test]
fn serve_stdio_is_quiet_by_default() {
    let out = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["serve", "--stdio"])
        .env_remove("SWITCHBOARD_LOG")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    // info: nothing per connection.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("connection"), "{stderr}");
}
