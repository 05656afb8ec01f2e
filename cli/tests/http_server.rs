//! `switchboard serve` over HTTP, against the real binary on a loopback port:
//! SPEC.md's status mapping case by case, the specification's examples and SPEC.md's
//! decisions, keep-alive, slow and broken clients, many idle connections, shutdown.
//!
//! The client is a few lines of raw HTTP/1.1 over `std::net::TcpStream`, so a test can
//! send exactly the bytes it means (half a body, a chunked body, a hang-up).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The server process; killed (by its own handle) when dropped.
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        Server::start_with_env(args, &[])
    }

    fn start_with_env(args: &[&str], env: &[(&str, &str)]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_switchboard"))
            .args(["serve", "--listen", "127.0.0.1:0", "--threads", "2"])
            .args(args)
            .envs(env.iter().copied())
            .env("SWITCHBOARD_LOG", "warn")
            .env_remove("SWITCHBOARD_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
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
            .parse()
            .unwrap();
        // Keep draining stdout so the server never blocks on it.
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut out, &mut std::io::sink());
        });
        Server { child, addr }
    }

    fn connect(&self) -> Conn {
        Conn::new(self.addr)
    }

    /// Resident memory of the server process, in KiB.
    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }

    /// Whether the process still runs.
    fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug)]
struct Resp {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Resp {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        assert_eq!(self.status, 200, "{self:?}");
        assert_eq!(self.header("content-type"), Some("application/json"));
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&self.body)))
    }
}

/// One client connection (keep-alive: several requests in a row).
struct Conn {
    reader: BufReader<TcpStream>,
}

impl Conn {
    fn new(addr: SocketAddr) -> Conn {
        let s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s.set_nodelay(true).unwrap();
        Conn {
            reader: BufReader::new(s),
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        self.reader.get_mut().write_all(bytes).unwrap();
    }

    /// Reads one response (Content-Length bodies only, which is all the server sends).
    fn read(&mut self) -> Resp {
        let mut line = String::new();
        self.reader.read_line(&mut line).unwrap();
        let status = line
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("bad status line {line:?}"));
        let mut headers = Vec::new();
        loop {
            line.clear();
            self.reader.read_line(&mut line).unwrap();
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            let (n, v) = l.split_once(':').unwrap();
            headers.push((n.trim().to_owned(), v.trim().to_owned()));
        }
        let len = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
            .map_or(0, |(_, v)| v.parse::<usize>().unwrap());
        let mut body = vec![0; len];
        self.reader.read_exact(&mut body).unwrap();
        Resp {
            status,
            headers,
            body,
        }
    }

    /// True when the server has closed the connection (EOF) within the read timeout.
    fn closed(&mut self) -> bool {
        let mut b = [0u8; 1];
        matches!(self.reader.read(&mut b), Ok(0) | Err(_))
    }

    fn post(&mut self, body: &str) -> Resp {
        self.send(&post_bytes(body, "application/json", &[]));
        self.read()
    }
}

fn post_bytes(body: &str, content_type: &str, extra: &[&str]) -> Vec<u8> {
    let mut r = format!(
        "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n",
        body.len()
    );
    for h in extra {
        r.push_str(h);
        r.push_str("\r\n");
    }
    r.push_str("\r\n");
    r.push_str(body);
    r.into_bytes()
}

const SUBTRACT: &str = r#"{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1}"#;

#[test]
fn status_mapping_case_by_case() {
    let server = Server::start(&["--max-message-bytes", "1000"]);
    let mut c = server.connect();
    let cases: &[(&str, Vec<u8>, u16)] = &[
        ("a call", post_bytes(SUBTRACT, "application/json", &[]), 200),
        (
            "charset=utf-8",
            post_bytes(SUBTRACT, "application/json; charset=utf-8", &[]),
            200,
        ),
        (
            "charset=UTF-8, quoted, other parameters",
            post_bytes(SUBTRACT, "Application/JSON; foo=bar; charset=\"UTF-8\"", &[]),
            200,
        ),
        (
            "a JSON-RPC error is still 200",
            post_bytes("{not json", "application/json", &[]),
            200,
        ),
        ("[] is still 200", post_bytes("[]", "application/json", &[]), 200),
        (
            "a notification",
            post_bytes(r#"{"jsonrpc":"2.0","method":"update","params":[1]}"#, "application/json", &[]),
            204,
        ),
        (
            "a batch of notifications",
            post_bytes(
                r#"[{"jsonrpc":"2.0","method":"notify_sum","params":[1,2,4]},{"jsonrpc":"2.0","method":"notify_hello","params":[7]}]"#,
                "application/json",
                &[],
            ),
            204,
        ),
        (
            "a well-formed Response object is never answered",
            post_bytes(r#"{"jsonrpc":"2.0","result":1,"id":1}"#, "application/json", &[]),
            204,
        ),
        ("text/plain", post_bytes(SUBTRACT, "text/plain", &[]), 415),
        (
            "charset other than UTF-8",
            post_bytes(SUBTRACT, "application/json; charset=iso-8859-1", &[]),
            415,
        ),
        (
            "application/json-rpc (the JSON-RPC over HTTP draft's type)",
            post_bytes(SUBTRACT, "application/json-rpc", &[]),
            200,
        ),
        (
            "application/jsonrequest, charset=utf-8",
            post_bytes(SUBTRACT, "application/jsonrequest; charset=utf-8", &[]),
            200,
        ),
        (
            "application/json-rpc with another charset",
            post_bytes(SUBTRACT, "application/json-rpc; charset=latin1", &[]),
            415,
        ),
        (
            "application/json-rpcx",
            post_bytes(SUBTRACT, "application/json-rpcx", &[]),
            415,
        ),
        (
            "no Content-Type",
            format!("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{SUBTRACT}", SUBTRACT.len())
                .into_bytes(),
            415,
        ),
        ("GET", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(), 405),
        (
            "PUT",
            format!(
                "PUT / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{SUBTRACT}",
                SUBTRACT.len()
            )
            .into_bytes(),
            405,
        ),
        ("DELETE", b"DELETE / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(), 405),
        (
            "a chunked body",
            format!(
                "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{}\r\n{:x}\r\n{}\r\n0\r\n\r\n",
                &SUBTRACT[..16],
                SUBTRACT.len() - 16,
                &SUBTRACT[16..]
            )
            .into_bytes(),
            200,
        ),
    ];
    for (name, request, status) in cases {
        c.send(request);
        let r = c.read();
        assert_eq!(r.status, *status, "{name}: {r:?}");
        match status {
            200 => {
                let v = r.json();
                assert_eq!(v["jsonrpc"], "2.0", "{name}");
            }
            204 => assert!(r.body.is_empty(), "{name}"),
            405 => assert_eq!(r.header("allow"), Some("POST"), "{name}"),
            _ => {}
        }
    }
    // The same connection served all of them (keep-alive).
    assert_eq!(c.post(SUBTRACT).json()["result"], 19);
}

#[test]
fn too_large_is_refused_before_the_body_is_read() {
    let server = Server::start(&["--max-message-bytes", "1000"]);
    // Content-Length over the limit: 413 at once, without sending a single body byte.
    let mut c = server.connect();
    c.send(
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1001\r\n\r\n",
    );
    let r = c.read();
    assert_eq!(r.status, 413);
    assert!(
        c.closed(),
        "the unread body would desynchronise the connection"
    );

    // Exactly at the limit passes the HTTP check (and reaches JSON-RPC).
    let mut c = server.connect();
    let body = format!("{SUBTRACT}{}", " ".repeat(1000 - SUBTRACT.len()));
    assert_eq!(c.post(&body).json()["result"], 19);

    // A chunked body that grows past the limit: 413 while it streams, the rest unread.
    let mut c = server.connect();
    c.send(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n");
    let chunk = format!("200\r\n{}\r\n", " ".repeat(0x200));
    c.send(chunk.as_bytes());
    c.send(chunk.as_bytes()); // 1024 bytes > 1000; no terminating chunk is ever sent
    let r = c.read();
    assert_eq!(r.status, 413);

    // A huge declared length is refused just the same.
    let mut c = server.connect();
    c.send(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 99999999999\r\n\r\n");
    assert_eq!(c.read().status, 413);
}

#[test]
fn bearer_token() {
    let server = Server::start(&["--token", "s3cret-token"]);
    let mut c = server.connect();
    for (auth, status) in [
        (None, 401),
        (Some("Bearer wrong-token!"), 401),
        (Some("Bearer s3cret"), 401),
        (Some("Bearer s3cret-token-and-more"), 401),
        (Some("Basic s3cret-token"), 401),
        (Some("Bearer s3cret-token"), 200),
        (Some("bearer s3cret-token"), 200),
    ] {
        let extra: Vec<&str> = auth
            .map(|a| vec![&*Box::leak(format!("Authorization: {a}").into_boxed_str())])
            .unwrap_or_default();
        c.send(&post_bytes(SUBTRACT, "application/json", &extra));
        let r = c.read();
        assert_eq!(r.status, status, "{auth:?}");
        if status == 401 {
            assert_eq!(r.header("www-authenticate"), Some("Bearer"));
        } else {
            assert_eq!(r.json()["result"], 19);
        }
    }
    // Credentials come first: a GET without them is 401, not 405.
    c.send(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(c.read().status, 401);
}

/// The JSON-RPC 2.0 specification's examples, over HTTP.
#[test]
fn specification_examples() {
    let server = Server::start(&[]);
    let mut c = server.connect();
    let call = |c: &mut Conn, body: &str| -> Option<Value> {
        let r = c.post(body);
        if r.status == 204 {
            None
        } else {
            Some(r.json())
        }
    };
    for (body, expected) in switchboard_tests::spec_examples() {
        assert_eq!(call(&mut c, body), expected, "{body}");
    }
    let code = |v: &Value| v["error"]["code"].as_i64().unwrap();
    let v = call(
        &mut c,
        r#"{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]"#,
    )
    .unwrap();
    assert_eq!((code(&v), &v["id"]), (-32700, &Value::Null));
    let v = call(
        &mut c,
        r#"{"jsonrpc": "2.0", "method": 1, "params": "bar"}"#,
    )
    .unwrap();
    assert_eq!((code(&v), &v["id"]), (-32600, &Value::Null));
    let v = call(
        &mut c,
        r#"[
  {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
  {"jsonrpc": "2.0", "method"
]"#,
    )
    .unwrap();
    assert_eq!((code(&v), &v["id"]), (-32700, &Value::Null));
    let v = call(&mut c, "[]").unwrap();
    assert_eq!((code(&v), &v["id"]), (-32600, &Value::Null));
    let v = call(&mut c, "[1]").unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
    assert_eq!(code(&v[0]), -32600);
    let v = call(&mut c, "[1,2,3]").unwrap();
    assert_eq!(v.as_array().unwrap().len(), 3);
    let v = call(
        &mut c,
        r#"[
        {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
        {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},
        {"foo": "boo"},
        {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
        {"jsonrpc": "2.0", "method": "get_data", "id": "9"}
    ]"#,
    )
    .unwrap();
    let mut by_id: Vec<(String, Value)> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["id"].to_string(), r.clone()))
        .collect();
    by_id.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(by_id.len(), 5);
    // Sorted by the id's JSON text: "1", "2", "5", "9", null.
    assert_eq!(by_id[0].1["result"], 7);
    assert_eq!(by_id[1].1["result"], 19);
    assert_eq!(code(&by_id[2].1), -32601);
    assert_eq!(by_id[3].1["result"], json!(["hello", 5]));
    assert_eq!(
        (code(&by_id[4].1), &by_id[4].1["id"]),
        (-32600, &Value::Null)
    );
    assert_eq!(
        call(
            &mut c,
            r#"[{"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},{"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}]"#
        ),
        None
    );
}

/// SPEC.md's decisions, over HTTP; ids checked byte for byte on the wire.
#[test]
fn spec_md_decisions() {
    let server = Server::start(&["--max-batch-len", "3"]);
    let mut c = server.connect();
    for id in [
        "9007199254740993",
        "1.5",
        "1e2",
        "-0",
        r#""a\u0062c""#,
        "null",
    ] {
        let r = c.post(&format!(
            r#"{{"jsonrpc":"2.0","method":"get_data","id":{id}}}"#
        ));
        assert_eq!(r.status, 200);
        let text = String::from_utf8(r.body).unwrap();
        assert!(text.ends_with(&format!(r#","id":{id}}}"#)), "{text}");
    }
    let code = |c: &mut Conn, body: &str| c.post(body).json()["error"]["code"].as_i64();
    // Duplicate top-level member, escaped spelling included.
    assert_eq!(
        code(
            &mut c,
            r#"{"jsonrpc":"2.0","method":"sum","params":[1],"para\u006ds":[2],"id":1}"#
        ),
        Some(-32600)
    );
    // params null is absent; params a string is -32600.
    assert_eq!(
        c.post(r#"{"jsonrpc":"2.0","method":"get_data","params":null,"id":1}"#)
            .json()["result"],
        json!(["hello", 5])
    );
    assert_eq!(
        code(
            &mut c,
            r#"{"jsonrpc":"2.0","method":"sum","params":"x","id":1}"#
        ),
        Some(-32600)
    );
    // Byte-order mark, whitespace-only body, trailing bytes, invalid UTF-8: -32700.
    for body in ["\u{feff}{}", "  ", "{} {}", ""] {
        assert_eq!(code(&mut c, body), Some(-32700), "{body:?}");
    }
    c.send(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 3\r\n\r\n\"\xc0\"");
    assert_eq!(c.read().json()["error"]["code"], -32700);
    // Method names compared after unescaping.
    assert_eq!(
        c.post(r#"{"jsonrpc":"2.0","method":"su\u0062tract","params":[2,1],"id":1}"#)
            .json()["result"],
        1
    );
    // The batch limit from --max-batch-len: one single error object.
    let call = r#"{"jsonrpc":"2.0","method":"get_data","id":1}"#;
    let v = c.post(&format!("[{call},{call},{call},{call}]")).json();
    assert_eq!(v["error"]["code"], -32600);
    assert_eq!(v["error"]["data"]["limit"], 3);
    // rpc.discover is built in.
    let v = c
        .post(r#"{"jsonrpc":"2.0","method":"rpc.discover","id":1}"#)
        .json();
    assert!(v["result"]["methods"].is_array(), "{v}");
    // Deep nesting: -32700, never a crash.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert_eq!(code(&mut c, &deep), Some(-32700));
    assert_eq!(c.post(SUBTRACT).json()["result"], 19);
}

#[test]
fn half_a_body_then_stall_does_not_block_others_and_times_out() {
    let server = Server::start(&["--body-timeout", "1"]);
    let mut stalled = server.connect();
    stalled.send(
        format!(
            "POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{}",
            SUBTRACT.len(),
            &SUBTRACT[..SUBTRACT.len() / 2]
        )
        .as_bytes(),
    );
    let started = Instant::now();
    // Others are answered meanwhile, promptly.
    let mut other = server.connect();
    for _ in 0..20 {
        let t = Instant::now();
        assert_eq!(other.post(SUBTRACT).json()["result"], 19);
        assert!(t.elapsed() < Duration::from_millis(500));
    }
    // The stalled call gets 408 and its connection is closed.
    let r = stalled.read();
    assert_eq!(r.status, 408);
    assert!(stalled.closed());
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(5),
        "{took:?}"
    );
    // A client that sends half of its headers and stalls is not waited on by others
    // either.
    let mut half_headers = server.connect();
    half_headers.send(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Ty");
    assert_eq!(other.post(SUBTRACT).json()["result"], 19);
}

#[test]
fn clients_that_hang_up_mid_response_do_not_hurt_the_server() {
    let mut server = Server::start(&[]);
    // A batch whose response is ~60 KB: more than a socket buffer may take at once.
    let call = r#"{"jsonrpc":"2.0","method":"rpc.discover","id":1}"#;
    let batch = format!("[{}]", vec![call; 40].join(","));
    for i in 0..100 {
        let mut c = server.connect();
        c.send(&post_bytes(&batch, "application/json", &[]));
        if i % 2 == 0 {
            // Read a few bytes of the response, then hang up.
            let mut b = [0u8; 16];
            let _ = c.reader.get_mut().read(&mut b);
        }
        drop(c);
    }
    // Also hang up with a request half sent.
    for _ in 0..50 {
        let mut c = server.connect();
        c.send(&post_bytes(SUBTRACT, "application/json", &[])[..40]);
    }
    assert!(server.running());
    let mut c = server.connect();
    let v = c.post(&batch).json();
    assert_eq!(v.as_array().unwrap().len(), 40);
    assert_eq!(c.post(SUBTRACT).json()["result"], 19);
}

#[test]
fn a_thousand_idle_connections_while_others_are_answered() {
    let server = Server::start(&[]);
    let mut warm = server.connect();
    for _ in 0..100 {
        assert_eq!(warm.post(SUBTRACT).json()["result"], 19);
    }
    let before = server.rss_kib();
    let started = Instant::now();
    let mut idle = Vec::with_capacity(1000);
    for i in 0..1000 {
        let mut c = server.connect();
        // Half of them have made a call (their session is warm), half never spoke.
        if i % 2 == 0 {
            assert_eq!(c.post(SUBTRACT).json()["result"], 19);
        }
        idle.push(c);
    }
    // While they sit idle, others are answered promptly.
    let mut worst = Duration::ZERO;
    for _ in 0..200 {
        let t = Instant::now();
        assert_eq!(warm.post(SUBTRACT).json()["result"], 19);
        worst = worst.max(t.elapsed());
    }
    let mut fresh = server.connect();
    assert_eq!(fresh.post(SUBTRACT).json()["result"], 19);
    let after = server.rss_kib();
    let grew = after.saturating_sub(before);
    eprintln!(
        "1000 idle connections: RSS {before} KiB -> {after} KiB (+{grew} KiB, {} B per connection); worst latency meanwhile {worst:?}; setup {:?}",
        grew * 1024 / 1000,
        started.elapsed()
    );
    // Bounded: well under 64 KiB per idle connection.
    assert!(grew < 64 * 1000, "RSS grew by {grew} KiB");
    assert!(worst < Duration::from_secs(1), "{worst:?}");
    // The idle ones still work afterwards.
    for c in idle.iter_mut().step_by(97) {
        assert_eq!(c.post(SUBTRACT).json()["result"], 19);
    }
}

/// The memory that connections used goes back once they close, without any
/// later activity: a worker that goes to sleep first returns its heap's free
/// pages (cli/src/alloc.rs). Without that, 1 000 closed connections left ~5 MB
/// resident until the next burst of work.
#[test]
fn memory_goes_back_when_connections_close() {
    let server = Server::start(&[]);
    let mut warm = server.connect();
    for _ in 0..100 {
        assert_eq!(warm.post(SUBTRACT).json()["result"], 19);
    }
    let before = server.rss_kib();
    let mut conns = Vec::with_capacity(1000);
    for _ in 0..1000 {
        let mut c = server.connect();
        assert_eq!(c.post(SUBTRACT).json()["result"], 19);
        conns.push(c);
    }
    let open = server.rss_kib();
    drop(conns);
    // Bound: 2 KiB per closed connection (what a few pages of the allocator's
    // own bookkeeping and the registry's grown capacity may keep).
    let bound = before + 2 * 1000;
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut after = server.rss_kib();
    while after > bound && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        after = server.rss_kib();
    }
    eprintln!("1000 connections: RSS {before} KiB -> {open} KiB open -> {after} KiB closed");
    assert!(
        after <= bound,
        "RSS {after} KiB 5 s after 1000 connections closed (before them: {before} KiB)"
    );
}

#[test]
fn ctrl_c_shuts_down_gracefully() {
    let mut server = Server::start(&[]);
    let mut c = server.connect();
    assert_eq!(c.post(SUBTRACT).json()["result"], 19);
    // An idle keep-alive connection must not hold the shutdown up.
    let status = Command::new("kill")
        .args(["-INT", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let t = Instant::now();
    loop {
        if let Some(code) = server.child.try_wait().unwrap() {
            assert!(code.success(), "{code:?}");
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(5), "no exit after SIGINT");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(c.closed());
    assert!(TcpStream::connect(server.addr).is_err());
}

#[test]
fn bad_options_exit_2() {
    for args in [
        &["serve", "--threads", "0"][..],
        &["serve", "--max-message-bytes", "x"],
        &["serve", "--framing", "lsp"],
        &["serve", "--stdio", "--framing", "xml"],
        &["serve", "--bogus"],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_switchboard"))
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(!out.stderr.is_empty());
    }
    let out = Command::new(env!("CARGO_BIN_EXE_switchboard"))
        .args(["serve", "--listen", "256.0.0.1:1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot listen"));
}

#[test]
fn requests_followed_by_a_half_close_are_all_answered() {
    let server = Server::start(&[]);
    for round in 0..20 {
        // One request, or three pipelined, in one write, then the client's write side
        // closed: every one is answered, then the server closes.
        let calls = if round % 2 == 0 { 1 } else { 3 };
        let mut c = server.connect();
        let mut bytes = Vec::new();
        for _ in 0..calls {
            bytes.extend(post_bytes(SUBTRACT, "application/json", &[]));
        }
        c.send(&bytes);
        c.reader
            .get_mut()
            .shutdown(std::net::Shutdown::Write)
            .unwrap();
        for i in 0..calls {
            let r = c.read();
            assert_eq!(r.json()["result"], 19, "round {round}, answer {i}");
        }
        assert!(c.closed(), "round {round}: closed after the answers");
    }
}

#[test]
fn idle_connections_do_not_keep_the_memory_of_large_answers() {
    // The allocator returns freed memory to the system at once, so that RSS counts
    // what the connections hold, not what an idle thread has freed but not yet
    // purged (by default mimalloc purges at the thread's next allocations).
    let server = Server::start_with_env(&[], &[("MIMALLOC_PURGE_DELAY", "0")]);
    // Warm up: the runtime's threads and first allocations are in the baseline.
    let mut warm = server.connect();
    for _ in 0..10 {
        assert_eq!(warm.post(SUBTRACT).json()["result"], 19);
    }
    let before = server.rss_kib();
    // 40 connections, each answered once with ~8 MB (the id is echoed), then idle.
    let id = "x".repeat(8_000_000);
    let call = format!(r#"{{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":"{id}"}}"#);
    let mut idle = Vec::new();
    for _ in 0..40 {
        let mut c = server.connect();
        let r = c.post(&call);
        assert_eq!(r.status, 200);
        assert!(
            r.body
                .starts_with(br#"{"jsonrpc":"2.0","result":19,"id":"xxx"#)
        );
        assert_eq!(r.body.len(), id.len() + 37, "the whole answer");
        idle.push(c);
    }
    std::thread::sleep(Duration::from_millis(200));
    let after = server.rss_kib();
    let per_conn = after.saturating_sub(before) / 40;
    eprintln!("rss before {before} KiB, after {after} KiB: {per_conn} KiB per idle connection");
    // Bound: 1 MiB per connection, an eighth of the answer (measured ~450 KiB:
    // hyper's 64 KiB read buffer, the session's 64 KiB, the allocator's pages; it was
    // 10 MiB before the session gave its buffer back and hyper's buffer was capped).
    assert!(per_conn < 1024, "{per_conn} KiB per idle connection");
    assert_eq!(warm.post(SUBTRACT).json()["result"], 19);
    drop(idle);
}

#[test]
fn a_client_that_never_reads_is_closed_by_the_write_timeout() {
    let server = Server::start(&["--write-timeout", "1"]);
    // Four pipelined calls with ~8 MB answers (the id is echoed): more than the
    // socket buffers hold, and the client reads none of it.
    let id = "x".repeat(8_000_000);
    let call = format!(r#"{{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":"{id}"}}"#);
    let mut c = server.connect();
    let started = Instant::now();
    let s = c.reader.get_mut();
    s.set_write_timeout(Some(Duration::from_secs(20))).unwrap();
    for _ in 0..4 {
        // The server stops reading while its answer cannot go out, so the sends
        // block, until the close resets them.
        if s.write_all(&post_bytes(&call, "application/json", &[]))
            .is_err()
        {
            break;
        }
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "closed in time"
    );
    std::thread::sleep(Duration::from_secs(2));
    // Others are served meanwhile.
    assert_eq!(server.connect().post(SUBTRACT).json()["result"], 19);
    // The stalled connection was closed: what it reads now ends well short of the
    // four answers (without the timeout it would get them all).
    let mut got = 0usize;
    let mut buf = vec![0u8; 1 << 20];
    let ended = loop {
        match c.reader.get_mut().read(&mut buf) {
            Ok(0) => break true,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break true,
            Err(e) => panic!("{e} after {got} bytes: not closed"),
        }
    };
    assert!(ended);
    assert!(got < 4 * id.len(), "{got} bytes: all the answers went out");
}

#[test]
fn slow_header_connections_above_the_cap_do_not_lock_clients_out() {
    // 60 connections that send their headers a byte a second, against a cap of 40
    // and a 30 s header timeout: with slots short, connections waiting for a request
    // are closed after 1 s, so a client with a request is served during the attack.
    let server = Server::start(&["--max-connections", "40", "--header-timeout", "30"]);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let attack = {
        let (addr, stop) = (server.addr, stop.clone());
        std::thread::spawn(move || {
            let mut conns: Vec<Option<TcpStream>> = (0..60).map(|_| None).collect();
            let mut reopened = 0usize;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                for c in &mut conns {
                    // One more header byte; a closed one is reopened (the attacker
                    // keeps the pressure on).
                    let alive = c.as_mut().is_some_and(|s| s.write_all(b"X").is_ok());
                    if !alive {
                        *c = TcpStream::connect(addr).ok().and_then(|mut s| {
                            s.write_all(b"POST / HTTP/1.1\r\nX-Slow: ").ok()?;
                            Some(s)
                        });
                        reopened += 1;
                    }
                }
                std::thread::sleep(Duration::from_millis(500));
            }
            reopened
        })
    };
    std::thread::sleep(Duration::from_secs(3));
    for i in 0..5 {
        // Waits in the backlog behind attackers, then is served (read timeout 20 s:
        // without the pressure rule it waits out the 30 s header timeout).
        let mut c = server.connect();
        assert_eq!(c.post(SUBTRACT).json()["result"], 19, "client {i}");
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let reopened = attack.join().unwrap();
    assert!(
        reopened > 60,
        "the attackers were closed and came back: {reopened}"
    );
}

#[test]
fn older_json_rpc_content_types_get_the_same_answer() {
    let server = Server::start(&[]);
    let mut c = server.connect();
    for ct in [
        "application/json",
        "application/json-rpc",
        "application/jsonrequest",
    ] {
        c.send(&post_bytes(SUBTRACT, ct, &[]));
        let r = c.read();
        assert_eq!(
            r.json(),
            json!({"jsonrpc": "2.0", "result": 19, "id": 1}),
            "{ct}"
        );
    }
}

#[test]
fn health_path_answers_get_and_head_without_the_token() {
    let server = Server::start(&["--health", "/healthz", "--token", "t0k"]);
    let mut c = server.connect();
    c.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    let r = c.read();
    assert_eq!(r.json(), json!({"status": "ok"}));
    // HEAD: the same head, no body.
    c.send(b"HEAD /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    let mut line = String::new();
    c.reader.read_line(&mut line).unwrap();
    assert!(line.starts_with("HTTP/1.1 200 "), "{line:?}");
    let mut head = String::new();
    while line != "\r\n" {
        line.clear();
        c.reader.read_line(&mut line).unwrap();
        head.push_str(&line.to_ascii_lowercase());
    }
    assert!(head.contains("content-length: 15\r\n"), "{head}");
    // The connection is still in step: no body came after the HEAD's head.
    c.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(c.read().status, 200);
    // Not a JSON-RPC endpoint: a POST there is 405; elsewhere the token still counts.
    c.send(b"POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
    let r = c.read();
    assert_eq!((r.status, r.header("allow")), (405, Some("GET, HEAD")));
    c.send(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(c.read().status, 401);
    let auth = ["Authorization: Bearer t0k"];
    c.send(&post_bytes(SUBTRACT, "application/json", &auth));
    assert_eq!(c.read().json()["result"], 19);
}

#[test]
fn cors_origins_get_preflights_and_allow_origin_others_do_not() {
    let server = Server::start(&[
        "--cors",
        "https://app.example,http://localhost:3000",
        "--cors",
        "https://other.example",
    ]);
    let mut c = server.connect();
    let preflight = |origin: &str| {
        format!(
            "OPTIONS / HTTP/1.1\r\nHost: x\r\nOrigin: {origin}\r\n\
             Access-Control-Request-Method: POST\r\n\
             Access-Control-Request-Headers: content-type, authorization\r\n\r\n"
        )
    };
    for origin in [
        "https://app.example",
        "http://localhost:3000",
        "https://other.example",
    ] {
        c.send(preflight(origin).as_bytes());
        let r = c.read();
        assert_eq!(r.status, 200, "{r:?}");
        assert_eq!(r.header("access-control-allow-origin"), Some(origin));
        let methods = r.header("access-control-allow-methods").unwrap();
        assert!(methods.contains("POST"), "{methods}");
        let headers = r.header("access-control-allow-headers").unwrap();
        assert!(headers.contains("content-type") && headers.contains("authorization"));
        assert_eq!(r.header("access-control-max-age"), Some("600"));
        let origin_header = format!("Origin: {origin}");
        c.send(&post_bytes(SUBTRACT, "application/json", &[&origin_header]));
        let r = c.read();
        assert_eq!(r.header("access-control-allow-origin"), Some(origin));
        let exposed = r.header("access-control-expose-headers").unwrap();
        assert!(exposed.contains("mcp-session-id"), "{exposed}");
        assert_eq!(r.json()["result"], 19);
    }
    // Another origin: no Access-Control-Allow-Origin, on the preflight or the call.
    c.send(preflight("https://evil.example").as_bytes());
    let r = c.read();
    assert_eq!(r.header("access-control-allow-origin"), None, "{r:?}");
    c.send(&post_bytes(
        SUBTRACT,
        "application/json",
        &["Origin: https://evil.example"],
    ));
    let r = c.read();
    assert_eq!(r.header("access-control-allow-origin"), None, "{r:?}");
    assert_eq!(r.json()["result"], 19);
    // No Origin (not a browser): the answer as without --cors.
    let r = c.post(SUBTRACT);
    assert_eq!(r.header("access-control-allow-origin"), None);
    // The Streamable HTTP endpoint admits the listed origins, refuses others (403).
    let mcp = |origin: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: {origin}\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             Content-Length: {}\r\n\r\n{SUBTRACT}",
            SUBTRACT.len()
        )
    };
    c.send(mcp("https://app.example").as_bytes());
    let r = c.read();
    assert_eq!(
        r.header("access-control-allow-origin"),
        Some("https://app.example")
    );
    assert_eq!(r.json()["result"], 19);
    c.send(mcp("https://evil.example").as_bytes());
    assert_eq!(c.read().status, 403);
}

#[test]
fn cors_any_origin_and_bad_origins() {
    let server = Server::start(&["--cors", "*"]);
    let mut c = server.connect();
    c.send(&post_bytes(
        SUBTRACT,
        "application/json",
        &["Origin: https://any.example"],
    ));
    let r = c.read();
    assert_eq!(r.header("access-control-allow-origin"), Some("*"));
    assert_eq!(r.json()["result"], 19);
    // Without --cors an OPTIONS is 405, as any method but POST.
    let plain = Server::start(&[]);
    let mut c = plain.connect();
    c.send(b"OPTIONS / HTTP/1.1\r\nHost: x\r\nOrigin: https://any.example\r\nAccess-Control-Request-Method: POST\r\n\r\n");
    let r = c.read();
    assert_eq!(
        (r.status, r.header("access-control-allow-origin")),
        (405, None)
    );
    for bad in [
        "https://app.example/",
        "app.example",
        "null",
        "https://a.example/x",
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_switchboard"))
            .args(["serve", "--listen", "127.0.0.1:0", "--cors", bad])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--cors") && err.contains("not an origin"),
            "{bad}: {err}"
        );
    }
}
