//! The examples in `examples/`, built and exercised: the NDJSON stdin/stdout server,
//! the libmicrohttpd HTTP server (SPEC.md's HTTP rules), and the Python ctypes script.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;

fn examples_dir() -> std::path::PathBuf {
    ffi_dir().join("examples")
}

#[test]
fn ndjson_server_answers_line_by_line() {
    let dir = out_dir("examples");
    let bin = dir.join("ndjson_server");
    compile_c(
        &[examples_dir().join("ndjson_server.c")],
        &bin,
        &["-I", examples_dir().to_str().unwrap()],
    );
    let input = concat!(
        "{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":[42,23],\"id\":1}\n",
        "{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":{\"subtrahend\":23,\"min\\u0075end\":42},\"id\":11}\n",
        "{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":[1,2,3],\"id\":12}\n",
        "{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":{\"minuend\":1.0,\"subtrahend\":1},\"id\":13}\n",
        "{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":[-9223372036854775808,1],\"id\":14}\n",
        "\n",
        "{\"jsonrpc\":\"2.0\",\"method\":\"update\",\"params\":[1]}\n",
        "{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":{\"a\":[1,2]},\"id\":\"x\"}\r\n",
        "[{\"jsonrpc\":\"2.0\",\"method\":\"hello\",\"id\":2},{\"jsonrpc\":\"2.0\",\"method\":\"update\"}]\n",
        "[{\"jsonrpc\":\"2.0\",\"method\":\"update\"},{\"jsonrpc\":\"2.0\",\"method\":\"update\"}]\n",
        "{\"jsonrpc\":\"2.0\",\"method\":\"subtract\",\"params\":[\"a\"],\"id\":3}\n",
        "{\"jsonrpc\":\"2.0\",\"method\":\"fail\",\"id\":4}\n",
        "{\"jsonrpc\":\"2.0\",\"method\":\"nope\",\"id\":5}\n",
        "{\"jsonrpc\": \"2.0\", \"method\": \"foobar, \"params\": \"bar\", \"baz]\n",
        "[]\n",
        "{\"jsonrpc\":\"2.0\",\"method\":\"hello\",\"id\":6}" // no final newline
    );
    let mut child = Command::new(&bin)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    let expected = [
        r#"{"jsonrpc":"2.0","result":19,"id":1}"#,
        r#"{"jsonrpc":"2.0","result":19,"id":11}"#,
        r#"{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params","data":{"field":"params","reason":"expected [integer, integer] or {minuend, subtrahend}"}},"id":12}"#,
        r#"{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params","data":{"field":"params","reason":"expected [integer, integer] or {minuend, subtrahend}"}},"id":13}"#,
        r#"{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params","data":{"field":"params","reason":"expected [integer, integer] or {minuend, subtrahend}"}},"id":14}"#,
        r#"{"jsonrpc":"2.0","result":{"a":[1,2]},"id":"x"}"#,
        r#"[{"jsonrpc":"2.0","result":"hello, world","id":2}]"#,
        r#"{"jsonrpc":"2.0","error":{"code":-32602,"message":"Invalid params","data":{"field":"params","reason":"expected [integer, integer] or {minuend, subtrahend}"}},"id":3}"#,
        r#"{"jsonrpc":"2.0","error":{"code":1001,"message":"insufficient funds","data":{"balance":0}},"id":4}"#,
        r#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found","data":{"field":"method","reason":"is not registered"}},"id":5}"#,
    ];
    assert_eq!(&lines[..expected.len()], &expected, "{stdout}");
    assert!(
        lines[10].starts_with(r#"{"jsonrpc":"2.0","error":{"code":-32700"#),
        "{stdout}"
    );
    assert_eq!(
        lines[11],
        r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request","data":{"reason":"empty batch"}},"id":null}"#
    );
    assert_eq!(
        lines[12],
        r#"{"jsonrpc":"2.0","result":"hello, world","id":6}"#
    );
    assert_eq!(lines.len(), 13, "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("4 update notification(s)"), "{stderr}");

    // Options: no batches, a small message limit.
    let out = Command::new(&bin)
        .args(["--no-batches", "--max-bytes", "64"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin.take().unwrap().write_all(
                b"[{\"jsonrpc\":\"2.0\",\"method\":\"hello\",\"id\":1}]\n\
                  {\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":[1,2,3,4,5,6,7,8,9,10],\"id\":2}\n",
            )?;
            c.wait_with_output()
        })
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request","data":{"reason":"batches are disabled"}},"id":null}"#,
            r#"{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request","data":{"reason":"message larger than max_message_bytes","limit":64}},"id":null}"#,
        ]
    );
}

/// One HTTP response: status, headers (lowercased names), body.
struct HttpResponse {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl HttpResponse {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Sends one request on `stream` (keep-alive) and reads one response.
fn http(
    stream: &mut TcpStream,
    method: &str,
    content_type: Option<&str>,
    body: &[u8],
) -> HttpResponse {
    let mut req = format!("{method} / HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    if let Some(ct) = content_type {
        req.push_str(&format!("Content-Type: {ct}\r\n"));
    }
    if method == "POST" || !body.is_empty() {
        req.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    req.push_str("\r\n");
    stream.write_all(req.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let status: u16 = line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {line:?}"));
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line).unwrap();
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        let (n, v) = l.split_once(':').unwrap();
        headers.push((n.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let len: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .map_or(0, |(_, v)| v.parse().unwrap());
    let mut body = vec![0; len];
    reader.read_exact(&mut body).unwrap();
    assert!(
        reader.buffer().is_empty(),
        "unexpected bytes after the response"
    );
    HttpResponse {
        status,
        headers,
        body,
    }
}

fn connect(port: u16) -> TcpStream {
    let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

#[test]
fn http_server_follows_spec_http_rules() {
    let ok = Command::new("pkg-config")
        .args(["--exists", "libmicrohttpd"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok
        && missing(
            "the libmicrohttpd HTTP server example",
            "libmicrohttpd-dev (or pkg-config) is not installed: apt-get install -y libmicrohttpd-dev pkg-config",
        )
    {
        return;
    }
    let flags = |what: &str| -> Vec<String> {
        let out = run_ok(Command::new("pkg-config").args([what, "libmicrohttpd"]));
        String::from_utf8(out.stdout)
            .unwrap()
            .split_whitespace()
            .map(String::from)
            .collect()
    };
    let (cflags, libs) = (flags("--cflags"), flags("--libs"));
    let dir = out_dir("examples");
    let bin = dir.join("http_server");
    let examples = examples_dir();
    let mut extra = vec!["-I", examples.to_str().unwrap()];
    extra.extend(cflags.iter().map(String::as_str));
    let libs: Vec<&str> = libs.iter().map(String::as_str).collect();
    compile_c_libs(&[examples.join("http_server.c")], &bin, &extra, &libs);

    let mut child = Command::new(&bin)
        .args(["0", "300"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let port: u16 = first
        .trim()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {first:?}"));

    let json = Some("application/json");
    let mut s = connect(port);
    // 200 for a response; several requests on one keep-alive connection (one session).
    let r = http(
        &mut s,
        "POST",
        json,
        br#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#,
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.body, br#"{"jsonrpc":"2.0","result":19,"id":1}"#);
    // 204 for a notification, and for a batch of them
    let r = http(
        &mut s,
        "POST",
        json,
        br#"{"jsonrpc":"2.0","method":"update"}"#,
    );
    assert_eq!((r.status, r.body.len()), (204, 0));
    let r = http(
        &mut s,
        "POST",
        json,
        br#"[{"jsonrpc":"2.0","method":"update"},{"jsonrpc":"2.0","method":"update"}]"#,
    );
    assert_eq!(r.status, 204);
    // 200 for error responses, -32700 included
    let r = http(&mut s, "POST", json, br#"{"jsonrpc":"2.0","method""#);
    assert_eq!(r.status, 200);
    assert!(
        r.body
            .starts_with(br#"{"jsonrpc":"2.0","error":{"code":-32700"#)
    );
    let r = http(&mut s, "POST", json, b"");
    assert_eq!(r.status, 200);
    assert!(
        r.body
            .starts_with(br#"{"jsonrpc":"2.0","error":{"code":-32700"#)
    );
    let r = http(
        &mut s,
        "POST",
        json,
        br#"{"jsonrpc":"2.0","method":"nope","id":"q"}"#,
    );
    assert_eq!(r.status, 200);
    assert!(r.body.ends_with(br#""id":"q"}"#));
    // a batch
    let r = http(
        &mut s,
        "POST",
        json,
        br#"[{"jsonrpc":"2.0","method":"hello","id":1},{"jsonrpc":"2.0","method":"echo","params":[true],"id":2}]"#,
    );
    assert_eq!(r.status, 200);
    assert_eq!(
        r.body,
        br#"[{"jsonrpc":"2.0","result":"hello, world","id":1},{"jsonrpc":"2.0","result":[true],"id":2}]"#
    );
    // Content-Type parameters are allowed; a UTF-8 charset in any spelling too
    for ct in [
        "application/json; charset=utf-8",
        "Application/JSON;charset=\"UTF-8\"",
        "application/json ; foo=bar",
    ] {
        let r = http(
            &mut s,
            "POST",
            Some(ct),
            br#"{"jsonrpc":"2.0","method":"hello","id":1}"#,
        );
        assert_eq!(r.status, 200, "{ct}");
    }
    // 415: no Content-Type, another type, another charset
    for ct in [
        None,
        Some("text/plain"),
        Some("application/jsonx"),
        Some("application/json; charset=latin1"),
        Some("application/json; charset=utf-16"),
    ] {
        let mut s = connect(port);
        let r = http(
            &mut s,
            "POST",
            ct,
            br#"{"jsonrpc":"2.0","method":"hello","id":1}"#,
        );
        assert_eq!(r.status, 415, "{ct:?}");
    }
    // 405 with Allow: POST for other methods
    for m in ["GET", "PUT", "DELETE"] {
        let mut s = connect(port);
        let r = http(&mut s, m, json, b"");
        assert_eq!(r.status, 405, "{m}");
        assert_eq!(r.header("allow"), Some("POST"), "{m}");
    }
    // 413 over the limit (300 bytes here), before parsing; exactly the limit is fine
    let mut s = connect(port);
    let big = vec![b' '; 301];
    assert_eq!(http(&mut s, "POST", json, &big).status, 413);
    let mut s = connect(port);
    let mut exact = br#"{"jsonrpc":"2.0","method":"hello","id":1}"#.to_vec();
    exact.resize(300, b' ');
    let r = http(&mut s, "POST", json, &exact);
    assert_eq!(r.status, 200);
    // chunked upload over the limit (no Content-Length)
    let mut s = connect(port);
    let chunk = vec![b' '; 200];
    let mut req = b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for _ in 0..2 {
        req.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        req.extend_from_slice(&chunk);
        req.extend_from_slice(b"\r\n");
    }
    req.extend_from_slice(b"0\r\n\r\n");
    s.write_all(&req).unwrap();
    let mut resp = String::new();
    BufReader::new(&mut s).read_line(&mut resp).unwrap();
    assert!(resp.starts_with("HTTP/1.1 413"), "{resp}");

    // concurrent clients: 4 threads, each on its own connection
    let handles: Vec<_> = (0..4)
        .map(|t| {
            std::thread::spawn(move || {
                let mut s = connect(port);
                for i in 0..50 {
                    let body = format!(
                        r#"{{"jsonrpc":"2.0","method":"subtract","params":[{i},{t}],"id":{i}}}"#
                    );
                    let r = http(&mut s, "POST", Some("application/json"), body.as_bytes());
                    assert_eq!(r.status, 200);
                    assert_eq!(
                        r.body,
                        format!(r#"{{"jsonrpc":"2.0","result":{},"id":{i}}}"#, i - t).as_bytes()
                    );
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }

    drop(child.stdin.take()); // closing stdin stops the server
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
}

#[test]
fn python_ctypes_script_handles_messages() {
    if Command::new("python3").arg("--version").output().is_err()
        && missing("the Python ctypes example", "python3 is not installed")
    {
        return;
    }
    let out = run_ok(
        Command::new("python3")
            .arg(examples_dir().join("python_ctypes.py"))
            .arg(shared_lib()),
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            &format!("switchboard {}", env!("CARGO_PKG_VERSION")),
            r#"{"jsonrpc":"2.0","result":"hello from Python, id 7","id":7}"#,
            r#"{"jsonrpc":"2.0","result":42,"id":"a"}"#,
            r#"{"jsonrpc":"2.0","error":{"code":1,"message":"no such account"},"id":3}"#,
            r#"[{"jsonrpc":"2.0","result":2,"id":1}]"#,
            "(no response)",
            r#"{"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found","data":{"field":"method","reason":"is not registered"}},"id":1}"#,
            r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error","data":{"reason":"unexpected end of input","offset":17}},"id":null}"#,
        ]
    );
    // Messages from the command line.
    let out = run_ok(
        Command::new("python3")
            .arg(examples_dir().join("python_ctypes.py"))
            .arg(shared_lib())
            .arg(r#"{"jsonrpc":"2.0","method":"add","params":[2,3],"id":9}"#),
    );
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .ends_with("{\"jsonrpc\":\"2.0\",\"result\":5,\"id\":9}\n")
    );
}
