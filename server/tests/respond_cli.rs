//! `switchboard respond` and `switchboard serve --stdio` end to end: the real binary.

use std::io::Write;
use std::process::{Command, Stdio};

fn run(args: &[&str], input: &[u8]) -> (Vec<u8>, i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    (out.stdout, out.status.code().unwrap())
}

#[test]
fn respond_prints_exactly_the_response_bytes() {
    let (out, code) = run(
        &["respond"],
        br#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#,
    );
    assert_eq!(code, 0);
    assert_eq!(out, br#"{"jsonrpc":"2.0","result":19,"id":1}"#);
    // Nothing at all for a notification, still exit 0.
    let (out, code) = run(
        &["respond", "-"],
        br#"{"jsonrpc":"2.0","method":"update","params":[1]}"#,
    );
    assert_eq!((out.as_slice(), code), (&b""[..], 0));
    // Errors are responses too.
    let (out, code) = run(&["respond"], b"[]");
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["error"]["code"], -32600);
    // All bytes up to EOF form one message: two messages are trailing bytes.
    let (out, _) = run(
        &["respond"],
        b"{\"jsonrpc\":\"2.0\",\"method\":\"get_data\",\"id\":1}\n{}",
    );
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["error"]["code"], -32700);
}

#[test]
fn respond_reads_a_file() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/eth_getBalance.json"
    );
    let (out, code) = run(&["respond", path], b"");
    assert_eq!(code, 0);
    assert_eq!(
        out,
        br#"{"jsonrpc":"2.0","result":"0x1bdb569fa3c2565cc","id":1}"#
    );
}

#[test]
fn serve_stdio_answers_each_line() {
    let input = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/session.ndjson"
    ))
    .unwrap();
    let (out, code) = run(&["serve", "--stdio"], &input);
    assert_eq!(code, 0);
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // 7 messages, 1 notification, 1 blank line: 6 responses, in order.
    assert_eq!(lines.len(), 6, "{text}");
    assert_eq!(lines[0]["result"], 19);
    assert_eq!(lines[1]["result"], 19);
    assert_eq!(lines[2]["result"], "0x1bdb569fa3c2565cc");
    assert_eq!(lines[3].as_array().unwrap().len(), 3);
    assert_eq!(lines[4]["error"]["code"], -32601);
    assert_eq!(lines[5]["error"]["code"], -32700);
}

#[test]
fn serve_stdio_bounds_long_lines_and_handles_crlf_and_no_final_newline() {
    let mut input = Vec::new();
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"get_data\",\"id\":1}\r\n");
    // A 9 MiB line: over the 8 MiB limit, answered -32600 without being buffered whole.
    input.extend(std::iter::repeat_n(b'x', 9 << 20));
    input.push(b'\n');
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"get_data\",\"id\":2}");
    let (out, code) = run(&["serve", "--stdio"], &input);
    assert_eq!(code, 0);
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(lines[0]["id"], 1);
    assert_eq!(lines[1]["error"]["code"], -32600);
    assert_eq!(lines[1]["error"]["data"]["limit"], 8 << 20);
    assert_eq!(lines[2]["id"], 2);
}
