//! `switchboard inspect` end to end: the real binary, files and standard input.

use std::io::Write;
use std::process::{Command, Stdio};

fn inspect_stdin(input: &[u8]) -> (String, i32) {
    inspect_with(&[], input)
}

fn inspect_with(args: &[&str], input: &[u8]) -> (String, i32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .arg("inspect")
        .args(args)
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
        // Exit 1 when the parser rejects the message or an item of its batch
        // (the batch here holds a `1`).
        let rejected = kind == "error" || kind == "batch";
        assert_eq!(code, i32::from(rejected), "{out}");
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

#[test]
fn a_valid_message_exits_0_and_an_error_response_is_valid() {
    let (_, code) = inspect_stdin(br#"{"jsonrpc":"2.0","method":"m","id":1}"#);
    assert_eq!(code, 0);
    let (out, code) =
        inspect_stdin(br#"{"jsonrpc":"2.0","error":{"code":-1,"message":"no"},"id":1}"#);
    assert_eq!((json(&out)["kind"].as_str(), code), (Some("response"), 0));
}

#[test]
fn pretty_indents_and_points_at_the_error() {
    let (out, code) = inspect_with(
        &["--pretty"],
        br#"{"jsonrpc":"2.0","method":"m","params":[1.0,{"a":1e2}],"id":7}"#,
    );
    assert_eq!(code, 0);
    assert!(out.starts_with("{\n  \"kind\": \"request\",\n"), "{out}");
    // The raw bytes kept (1.0, 1e2), now indented.
    assert!(
        out.contains("\n    1.0,\n    {\n      \"a\": 1e2\n    }\n"),
        "{out}"
    );
    assert_eq!(json(&out)["id"], 7);

    let input = br#"{"jsonrpc":"2.0","method":"foobar, "params":"bar","baz]"#;
    let (out, code) = inspect_with(&["-p"], input);
    assert_eq!(code, 1);
    let (description, place) = out.split_at(out.find("\nline ").expect("a caret section"));
    let v = json(description);
    assert_eq!(v["code"], -32700);
    let offset = v["data"]["offset"].as_u64().unwrap() as usize;
    let lines: Vec<&str> = place.trim_start_matches('\n').lines().collect();
    assert_eq!(lines[0], format!("line 1, byte {offset}:"));
    assert_eq!(
        lines[1],
        format!("  {}", std::str::from_utf8(input).unwrap())
    );
    assert_eq!(lines[2], format!("{}^", " ".repeat(2 + offset)));
}

#[test]
fn ndjson_streams_get_a_line_per_message() {
    let stream = b"{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"id\":1}\n\n\
                   {\"jsonrpc\":\"2.0\",\"method\":\"b\"}\r\n\
                   {\"jsonrpc\":\"2.0\",\"result\":3,\"id\":1}\n";
    for args in [&[][..], &["--ndjson"]] {
        let (out, code) = inspect_with(args, stream);
        assert_eq!(code, 0, "{args:?}");
        let kinds: Vec<String> = out
            .lines()
            .map(|l| json(l)["kind"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(kinds, ["request", "notification", "response"], "{out}");
    }
    // One bad line: described in its place, exit 1.
    let (out, code) = inspect_with(
        &[],
        b"{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n{\"jsonrpc\":\n",
    );
    assert_eq!(code, 1);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        (
            json(lines[0])["kind"].as_str(),
            json(lines[1])["code"].as_i64()
        ),
        (Some("notification"), Some(-32700))
    );
    // --single: the whole input, one message (here: trailing data, an error).
    let (out, code) = inspect_with(&["--single"], stream);
    assert_eq!((out.lines().count(), code), (1, 1), "{out}");
}

#[test]
fn a_pretty_printed_message_is_one_message() {
    let input = b"{\n  \"jsonrpc\": \"2.0\",\n  \"method\": \"subtract\",\n  \"params\": [42, 23],\n  \"id\": 1\n}\n";
    let (out, code) = inspect_stdin(input);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert_eq!(json(&out)["method"], "subtract");
    // Forced to lines, it is six broken messages.
    let (out, code) = inspect_with(&["--ndjson"], input);
    assert_eq!((out.lines().count(), code), (6, 1), "{out}");
}

#[test]
fn help_is_help_not_a_file() {
    for args in [
        &["inspect", "--help"][..],
        &["serve", "--help"],
        &["call", "-h"],
        &["help", "subscribe"],
        &["--help"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_switchboard"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("Usage: switchboard"), "{args:?}: {text}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("switchboard {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn usage_errors_say_what_is_wrong_and_exit_2() {
    for (args, says) in [
        (&["bogus"][..], "unrecognized subcommand 'bogus'"),
        (&["serve", "--bogus"], "unexpected argument '--bogus'"),
        (&["serve", "--threads", "0"], "--threads"),
        (
            &["serve", "--stdio", "--unix", "/tmp/x"],
            "cannot be used with",
        ),
        (&["serve", "--framing", "lsp"], "--stdio"),
        (&["serve", "--stream-path", "mcp"], "starting with /"),
        (&["inspect", "a", "b"], "unexpected argument 'b'"),
        (&[], "Usage: switchboard <COMMAND>"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_switchboard"))
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}
