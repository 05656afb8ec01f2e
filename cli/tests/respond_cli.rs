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

/// `body` framed as the LSP base protocol frames it.
fn frame(body: &[u8]) -> Vec<u8> {
    let mut v = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    v.extend_from_slice(body);
    v
}

/// The bodies of the LSP-framed responses in `out`, as JSON.
fn lsp_bodies(out: &[u8]) -> Vec<serde_json::Value> {
    let mut rest = out;
    let mut bodies = Vec::new();
    while !rest.is_empty() {
        let text = std::str::from_utf8(rest).unwrap();
        let head_end = text.find("\r\n\r\n").unwrap();
        let len: usize = text[..head_end]
            .strip_prefix("Content-Length: ")
            .unwrap()
            .parse()
            .unwrap();
        let body = &rest[head_end + 4..head_end + 4 + len];
        bodies.push(serde_json::from_slice::<serde_json::Value>(body).unwrap());
        rest = &rest[head_end + 4 + len..];
    }
    bodies
}

/// The specification's examples over stdio, in both framings: every answer exact
/// and in order, nothing for the notifications.
#[test]
fn serve_stdio_spec_examples_both_framings() {
    let examples = switchboard_tests::spec_examples();
    let want: Vec<&serde_json::Value> = examples.iter().filter_map(|(_, a)| a.as_ref()).collect();
    // ndjson: one message a line (the batch example's newlines are JSON whitespace).
    let mut input = Vec::new();
    for (message, _) in &examples {
        input.extend(message.bytes().map(|b| if b == b'\n' { b' ' } else { b }));
        input.push(b'\n');
    }
    let (out, code) = run(&["serve", "--stdio"], &input);
    assert_eq!(code, 0);
    let got: Vec<serde_json::Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(got.iter().collect::<Vec<_>>(), want, "ndjson");
    // LSP: the messages as they are, newlines included.
    let input: Vec<u8> = examples
        .iter()
        .flat_map(|(m, _)| frame(m.as_bytes()))
        .collect();
    let (out, code) = run(&["serve", "--stdio", "--framing", "lsp"], &input);
    assert_eq!(code, 0);
    assert_eq!(lsp_bodies(&out).iter().collect::<Vec<_>>(), want, "lsp");
}

#[test]
fn serve_stdio_lsp_framing() {
    let mut input = Vec::new();
    input.extend(frame(
        br#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#,
    ));
    // Other headers tolerated, names in any case; the notification gets nothing.
    input.extend_from_slice(
        b"content-type: application/vscode-jsonrpc; charset=utf-8\r\nCONTENT-LENGTH: 35\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"update\"}",
    );
    input.extend(frame(b"[]"));
    input.extend(frame(
        b"{\"jsonrpc\":\"2.0\",\"method\":\"get_data\",\"id\":\"a\nb\"}",
    ));
    input.extend(frame(br#"[{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":"1"},{"jsonrpc":"2.0","method":"notify_hello","params":[7]}]"#));
    let (out, code) = run(&["serve", "--stdio", "--framing", "lsp"], &input);
    assert_eq!(code, 0);
    let bodies = lsp_bodies(&out);
    assert_eq!(bodies.len(), 4, "{}", String::from_utf8_lossy(&out));
    assert_eq!(bodies[0]["result"], 19);
    assert_eq!(bodies[1]["error"]["code"], -32600);
    assert_eq!(bodies[2]["error"]["code"], -32700); // a raw newline inside a string
    assert_eq!(bodies[3][0]["result"], 7);
}

#[test]
fn serve_stdio_lsp_oversized_and_broken_headers() {
    // Over the limit: refused from the header, body skipped, the stream goes on.
    let mut input = b"Content-Length: 300\r\n\r\n".to_vec();
    input.extend(std::iter::repeat_n(b' ', 300));
    input.extend_from_slice(
        b"Content-Length: 44\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"get_data\",\"id\":2}",
    );
    let (out, code) = run(
        &[
            "serve",
            "--stdio",
            "--framing",
            "lsp",
            "--max-message-bytes",
            "100",
        ],
        &input,
    );
    assert_eq!(code, 0);
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains(r#""code":-32600"#) && text.contains(r#""limit":100"#),
        "{text}"
    );
    assert!(text.ends_with(r#""id":2}"#), "{text}");
    // Headers that cannot be framed: the stream cannot be resynchronised. The peer
    // gets a -32700 saying why (after the answers to what came before), then exit 1.
    let good = b"Content-Length: 44\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"get_data\",\"id\":1}";
    let big_header = format!("X-Pad: {}\r\n\r\n", "a".repeat(9000));
    let cases: &[(&[u8], &str)] = &[
        (b"Content-Type: x\r\n\r\n{}", "no Content-Length header"),
        (b"Content-Length: -3\r\n\r\n[1]", "malformed header"),
        (b"Content-Length: +3\r\n\r\n[1]", "malformed header"),
        (
            b"Content-Length: 18446744073709551616\r\n\r\n",
            "malformed header",
        ),
        (
            b"Content-Length: 1000000000000000000\r\n\r\n{}",
            "malformed header",
        ),
        (
            b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
            "malformed header",
        ),
        (b"Content-Length 2\r\n\r\n{}", "malformed header"),
        (big_header.as_bytes(), "header section too large"),
    ];
    for (bad, why) in cases {
        let mut input = good.to_vec();
        input.extend_from_slice(bad);
        input.extend_from_slice(good); // never reached
        let (out, code) = run(&["serve", "--stdio", "--framing", "lsp"], &input);
        assert_eq!(code, 1, "{why}");
        let bodies = lsp_bodies(&out);
        assert_eq!(bodies.len(), 2, "{why}: {bodies:?}");
        assert_eq!(bodies[0]["id"], 1);
        assert_eq!(
            bodies[1],
            serde_json::json!({"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error","data":{"reason":why}},"id":null}),
            "{}",
            String::from_utf8_lossy(bad)
        );
    }
    // Ended inside a message: exit 1 too.
    let (_, code) = run(
        &["serve", "--stdio", "--framing", "lsp"],
        b"Content-Length: 10\r\n\r\n{}",
    );
    assert_eq!(code, 1);
}

#[test]
fn serve_stdio_ndjson_explicit_framing_and_limits() {
    let input = b"{\"jsonrpc\":\"2.0\",\"method\":\"get_data\",\"id\":1}\n[1,2,3]\n";
    let (out, code) = run(
        &[
            "serve",
            "--stdio",
            "--framing",
            "ndjson",
            "--max-batch-len",
            "2",
        ],
        input,
    );
    assert_eq!(code, 0);
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["id"], 1);
    assert_eq!(lines[1]["error"]["data"]["limit"], 2);
}
