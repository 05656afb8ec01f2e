//! `switchboard inspect` end to end: the real binary, files and standard input.

use std::io::Write;
use std::process::{Command, Stdio};

fn inspect_stdin(input: &[u8]) -> (String, i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .arg("inspect")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        out.status.code().unwrap(),
    )
}

fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

#[test]
fn describes_a_request_from_a_file() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/eth_getBalance.json"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["inspect", path])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v = json(std::str::from_utf8(&out.stdout).unwrap());
    assert_eq!(v["kind"], "request");
    assert_eq!(v["method"], "eth_getBalance");
    assert_eq!(v["id"], 1);
    assert_eq!(v["params"][1], "latest");
}

#[test]
fn describes_every_kind_as_valid_json() {
    let cases: [(&[u8], &str); 8] = [
        (
            br#"{"jsonrpc":"2.0","method":"su\u0062tract","params":[42,23],"id":9007199254740993}"#,
            "request",
        ),
        (
            br#"{"jsonrpc":"2.0","method":"update","params":[1,2]}"#,
            "notification",
        ),
        (br#"{"jsonrpc":"2.0","result":19,"id":1}"#, "response"),
        (
            br#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found"},"id":"1"}"#,
            "response",
        ),
        (br#"[{"jsonrpc":"2.0","method":"a","id":1},1]"#, "batch"),
        (
            br#"{"jsonrpc":"2.0","method":"foobar, "params":"bar","baz]"#,
            "error",
        ),
        (b"\xEF\xBB\xBF{}", "error"),
        (
            br#"{"jsonrpc":"2.0","method":"\ud800\"","id":1}"#,
            "request",
        ),
    ];
    for (input, kind) in cases {
        let (out, code) = inspect_stdin(input);
        assert_eq!(code, 0);
        assert_eq!(out.lines().count(), 1, "one line: {out}");
        let v = json(&out);
        assert_eq!(v["kind"], kind, "{out}");
    }
    // Ids are echoed byte for byte, not converted.
    let (out, _) = inspect_stdin(br#"{"jsonrpc":"2.0","method":"m","id":9007199254740993}"#);
    assert!(out.contains(r#""id":9007199254740993"#), "{out}");
    let (out, _) = inspect_stdin(br#"{"jsonrpc":"2.0","method":"m","id":1e2}"#);
    assert!(out.contains(r#""id":1e2"#), "{out}");
}

#[test]
fn errors_carry_code_id_and_data() {
    let (out, _) = inspect_stdin(br#"{"jsonrpc":"2.0","method":1,"id":"x"}"#);
    let v = json(&out);
    assert_eq!(v["code"], -32600);
    assert_eq!(v["id"], "x");
    assert_eq!(v["data"]["field"], "method");
    assert_eq!(v["data"]["reason"], "must be a string");
    let (out, _) = inspect_stdin(b"");
    assert_eq!(json(&out)["code"], -32700);
    let (out, _) = inspect_stdin(b"[]");
    assert_eq!(json(&out)["data"]["reason"], "empty batch");
}

#[test]
fn unreadable_file_and_bad_usage_exit_2() {
    let out = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["inspect", "/nonexistent/switchboard"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read"));
    let out = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .arg("bogus")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
