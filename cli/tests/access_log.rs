//! `switchboard serve --access-log`: one line per HTTP request on stderr, with its
//! method, path, status, duration and bytes; none without the flag.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Runs the server with `args` and `log` as SWITCHBOARD_LOG, sends `requests`
/// (raw HTTP/1.1, one connection, the last with `Connection: close`), and
/// returns what it wrote on stderr until a line containing `last` (bounded
/// wait) or, with `None`, once the answers are in.
fn serve_and_log(args: &[&str], log: &str, requests: &[&str], last: Option<&str>) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["serve", "--listen", "127.0.0.1:0", "--threads", "1"])
        .args(args)
        .env("SWITCHBOARD_LOG", log)
        .env_remove("RUST_LOG")
        .env_remove("SWITCHBOARD_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("switchboard listening on http://")
        .and_then(|s| s.strip_suffix('/'))
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();
    let mut conn = TcpStream::connect(&addr).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    for r in requests {
        conn.write_all(r.as_bytes()).unwrap();
    }
    // The answers are all in once the server closes (`Connection: close`); each
    // request's event is written before its answer.
    let mut answers = String::new();
    conn.read_to_string(&mut answers).unwrap();
    assert_eq!(
        answers.matches("HTTP/1.1 ").count(),
        requests.len(),
        "{answers}"
    );
    // Lines arrive on a channel: every wait is bounded.
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let reader = std::thread::spawn(move || {
        for line in stderr.lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let mut seen = String::new();
    if let Some(last) = last {
        loop {
            let line = rx
                .recv_timeout(Duration::from_secs(30))
                .unwrap_or_else(|_| panic!("no {last:?} within the bound: {seen}"));
            seen.push_str(&line);
            seen.push('\n');
            if line.contains(last) {
                break;
            }
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    reader.join().unwrap();
    for line in rx.try_iter() {
        seen.push_str(&line);
        seen.push('\n');
    }
    seen
}

const CALL: &str = "POST /rpc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 64\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":[42,23],\"id\":1}   ";
const GET_CLOSE: &str = "GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

#[test]
fn one_line_per_request_with_the_flag() {
    // The flag turns the access log on even where the filter says warn.
    let stderr = serve_and_log(&["--access-log"], "warn", &[CALL, GET_CLOSE], None);
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("switchboard_server::access"))
        .collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    let call = lines[0];
    for part in [
        " INFO ",
        "method=POST",
        "path=\"/rpc\"",
        "status=200",
        "duration=",
        "bytes=36",
    ] {
        assert!(call.contains(part), "{part} in {call}");
    }
    let get = lines[1];
    for part in ["method=GET", "path=\"/nope\"", "status=405"] {
        assert!(get.contains(part), "{part} in {get}");
    }
}

#[test]
fn no_access_log_without_the_flag() {
    let stderr = serve_and_log(&[], "info", &[CALL, GET_CLOSE], None);
    assert!(!stderr.contains("status="), "{stderr}");
    // At debug the same events are there, on the http target.
    let stderr = serve_and_log(
        &[],
        "switchboard_server=debug",
        &[CALL, GET_CLOSE],
        Some("connection closed"),
    );
    let requests: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("DEBUG switchboard_server::http: request"))
        .collect();
    assert_eq!(requests.len(), 2, "{stderr}");
    assert!(stderr.contains("connection opened"), "{stderr}");
    assert!(stderr.contains("connection closed"), "{stderr}");
}

#[test]
fn access_log_is_for_http() {
    let out = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["serve", "--stdio", "--access-log"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--access-log"));
}
