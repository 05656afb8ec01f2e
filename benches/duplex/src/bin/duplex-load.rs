//! duplex-load: one load generator for MCP (NDJSON over stdio) and LSP (Content-Length over
//! stdio) servers, so switchboard's example servers and their rmcp / tower-lsp peers are driven
//! by exactly the same client code.
//!
//! ```text
//! duplex-load mcp|lsp --server NAME=CMD [ARGS...] --server NAME=CMD ... [options]
//!   --n N          requests per throughput loop (default 20000)
//!   --rounds R     interleaved rounds (default 3); each round runs every server once, in order
//!   --window W     requests in flight in the pipelined loops (default 32)
//!   --pings P      pings sent while `slow` runs (MCP, default 200)
//!   --asks A       `tools/call ask` round trips (MCP, default 2000)
//!   --warmup K     unmeasured requests before each loop (default min(N/10, 2000))
//! ```
//! The first `--server` is the baseline (switchboard); ratios compare it with each other one.
//! A server's command is split on whitespace. Set DUPLEX_STDERR=1 to see the servers' stderr.
//!
//! Single-threaded and blocking: every read waits with poll(2) for at most 10 s (a server that
//! does not answer within 10 s is an error), a watchdog kills a server whose whole session runs
//! over 10 minutes, and every loop is bounded in count.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

type Res<T> = Result<T, String>;

const READ_TIMEOUT: Duration = Duration::from_secs(10);
const SESSION_LIMIT: Duration = Duration::from_secs(600);

// ---------------------------------------------------------------- framing

#[derive(Clone, Copy, PartialEq)]
enum Framing {
    /// One JSON text per line (MCP stdio).
    Ndjson,
    /// `Content-Length: n\r\n\r\n` + n bytes (LSP base protocol).
    ContentLength,
}

struct Reader {
    out: ChildStdout,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    framing: Framing,
}

impl Reader {
    fn new(out: ChildStdout, framing: Framing) -> Self {
        Reader { out, buf: vec![0; 1 << 20], start: 0, end: 0, framing }
    }

    /// Read more bytes, waiting at most READ_TIMEOUT. Err on timeout or EOF.
    fn fill(&mut self) -> Res<()> {
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            let n = self.buf.len() * 2;
            self.buf.resize(n, 0);
        }
        let mut pfd = libc::pollfd { fd: self.out.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        loop {
            // SAFETY: one valid pollfd, count 1.
            let r = unsafe { libc::poll(&mut pfd, 1, READ_TIMEOUT.as_millis() as i32) };
            if r < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(format!("poll: {e}"));
            }
            if r == 0 {
                return Err("server did not answer within 10 s".into());
            }
            break;
        }
        let n = self.out.read(&mut self.buf[self.end..]).map_err(|e| format!("read: {e}"))?;
        if n == 0 {
            return Err("server closed its stdout (EOF)".into());
        }
        self.end += n;
        Ok(())
    }

    /// A complete frame already in the buffer, if any (no I/O).
    fn buffered_frame(&mut self) -> Res<Option<(usize, usize)>> {
        loop {
            let data = &self.buf[self.start..self.end];
            match self.framing {
                Framing::Ndjson => {
                    let Some(nl) = data.iter().position(|&b| b == b'\n') else { return Ok(None) };
                    let (a, mut b) = (self.start, self.start + nl);
                    self.start += nl + 1;
                    if b > a && self.buf[b - 1] == b'\r' {
                        b -= 1;
                    }
                    if self.buf[a..b].iter().all(|c| c.is_ascii_whitespace()) {
                        continue; // blank line
                    }
                    return Ok(Some((a, b)));
                }
                Framing::ContentLength => {
                    let Some(hend) = data.windows(4).position(|w| w == b"\r\n\r\n") else {
                        if data.len() > 8192 {
                            return Err("LSP header longer than 8 KiB".into());
                        }
                        return Ok(None);
                    };
                    let head = std::str::from_utf8(&data[..hend]).map_err(|_| "non-UTF-8 LSP header")?;
                    let mut len = None;
                    for line in head.split("\r\n") {
                        if let Some((k, v)) = line.split_once(':') {
                            if k.trim().eq_ignore_ascii_case("content-length") {
                                len = Some(v.trim().parse::<usize>().map_err(|_| format!("bad header {line:?}"))?);
                            }
                        }
                    }
                    let len = len.ok_or_else(|| format!("no Content-Length in {head:?}"))?;
                    if data.len() < hend + 4 + len {
                        return Ok(None);
                    }
                    let a = self.start + hend + 4;
                    self.start = a + len;
                    return Ok(Some((a, a + len)));
                }
            }
        }
    }

    /// Next message, waiting (bounded) for it.
    fn next(&mut self) -> Res<Value> {
        loop {
            if let Some((a, b)) = self.buffered_frame()? {
                return serde_json::from_slice(&self.buf[a..b]).map_err(|e| {
                    format!("invalid JSON from server ({e}): {}", String::from_utf8_lossy(&self.buf[a..b]))
                });
            }
            self.fill()?;
        }
    }

    /// Next message only if a whole one is already buffered.
    fn try_next(&mut self) -> Res<Option<Value>> {
        match self.buffered_frame()? {
            Some((a, b)) => serde_json::from_slice(&self.buf[a..b])
                .map(Some)
                .map_err(|e| format!("invalid JSON from server: {e}")),
            None => Ok(None),
        }
    }
}

fn frame(framing: Framing, json: &str, out: &mut Vec<u8>) {
    match framing {
        Framing::Ndjson => {
            out.extend_from_slice(json.as_bytes());
            out.push(b'\n');
        }
        Framing::ContentLength => {
            out.extend_from_slice(format!("Content-Length: {}\r\n\r\n", json.len()).as_bytes());
            out.extend_from_slice(json.as_bytes());
        }
    }
}

// ---------------------------------------------------------------- session

enum Msg {
    /// A response to one of our requests.
    Response { id: u64, result: Result<Value, Value> },
    /// The server asks us something.
    Request { id: Value, method: String, params: Value },
    /// The server tells us something.
    Notification { method: String, params: Value },
}

fn classify(v: Value) -> Res<Msg> {
    let Value::Object(mut obj) = v else { return Err(format!("not a JSON object: {v}")) };
    if let Some(Value::String(m)) = obj.get("method").cloned() {
        let params = obj.remove("params").unwrap_or(Value::Null);
        return Ok(match obj.remove("id") {
            Some(id) => Msg::Request { id, method: m, params },
            None => Msg::Notification { method: m, params },
        });
    }
    let Some(id) = obj.get("id").and_then(|i| i.as_u64().or_else(|| i.as_str().and_then(|s| s.parse().ok()))) else {
        return Err(format!("response without a numeric id: {}", Value::Object(obj)));
    };
    let result = if let Some(e) = obj.remove("error") {
        Err(e)
    } else {
        Ok(obj.remove("result").unwrap_or(Value::Null))
    };
    Ok(Msg::Response { id, result })
}

struct Session {
    child: Child,
    pid: i32,
    stdin: Option<ChildStdin>,
    reader: Reader,
    framing: Framing,
    next_id: u64,
    out: Vec<u8>,
    /// Responses read while waiting for something else (matched by id later).
    stash: HashMap<u64, Result<Value, Value>>,
    notifications: HashMap<String, u64>,
    server_requests: HashMap<String, u64>,
    sampling_answer: String,
    _watchdog: mpsc::Sender<()>,
}

impl Session {
    fn spawn(cmdline: &str, framing: Framing) -> Res<Session> {
        let mut parts = cmdline.split_whitespace();
        let prog = parts.next().ok_or("empty server command")?;
        let stderr = if std::env::var_os("DUPLEX_STDERR").is_some() { Stdio::inherit() } else { Stdio::null() };
        let mut child = Command::new(prog)
            .args(parts)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("spawn {cmdline}: {e}"))?;
        let pid = child.id() as i32;
        let (tx, rx) = mpsc::channel::<()>();
        std::thread::spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(SESSION_LIMIT) {
                eprintln!("duplex-load: watchdog: server {pid} ran over {SESSION_LIMIT:?}, killing it");
                // SAFETY: plain kill(2) of our own child.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        });
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let sampling_answer = json!({
            "role": "assistant",
            "content": {"type": "text", "text": "42"},
            "model": "duplex-load",
            "stopReason": "endTurn"
        })
        .to_string();
        Ok(Session {
            child,
            pid,
            stdin,
            reader: Reader::new(stdout, framing),
            framing,
            next_id: 1,
            out: Vec::with_capacity(1 << 16),
            stash: HashMap::new(),
            notifications: HashMap::new(),
            server_requests: HashMap::new(),
            sampling_answer,
            _watchdog: tx,
        })
    }

    fn id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Queue a request (written by `flush`); empty `params` omits the member.
    fn queue_request(&mut self, id: u64, method: &str, params: &str) {
        let s = if params.is_empty() {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}"}}"#)
        } else {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#)
        };
        frame(self.framing, &s, &mut self.out);
    }

    fn queue_notification(&mut self, method: &str, params: &str) {
        let s = if params.is_empty() {
            format!(r#"{{"jsonrpc":"2.0","method":"{method}"}}"#)
        } else {
            format!(r#"{{"jsonrpc":"2.0","method":"{method}","params":{params}}}"#)
        };
        frame(self.framing, &s, &mut self.out);
    }

    fn flush(&mut self) -> Res<()> {
        if self.out.is_empty() {
            return Ok(());
        }
        let w = self.stdin.as_mut().ok_or("stdin closed")?;
        w.write_all(&self.out).map_err(|e| format!("write to server: {e}"))?;
        self.out.clear();
        Ok(())
    }

    /// Answer a server-initiated request right away (queued; caller flushes).
    fn answer_server_request(&mut self, id: Value, method: &str, params: &Value) {
        *self.server_requests.entry(method.to_string()).or_default() += 1;
        let result = match method {
            "sampling/createMessage" => self.sampling_answer.clone(),
            "ping" => "{}".into(),
            "roots/list" => r#"{"roots":[]}"#.into(),
            "workspace/configuration" => {
                let n = params.get("items").and_then(|i| i.as_array()).map_or(1, |a| a.len());
                format!("[{}]", vec!["null"; n].join(","))
            }
            _ => "null".into(),
        };
        let s = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#);
        frame(self.framing, &s, &mut self.out);
    }

    /// Handle one incoming message; returns the response if it is one.
    fn handle(&mut self, v: Value) -> Res<Option<(u64, Result<Value, Value>)>> {
        match classify(v)? {
            Msg::Response { id, result } => Ok(Some((id, result))),
            Msg::Request { id, method, params } => {
                self.answer_server_request(id, &method, &params);
                self.flush()?;
                Ok(None)
            }
            Msg::Notification { method, params } => {
                if method == "notifications/progress" {
                    let tok = params.get("progressToken").map(|t| t.to_string()).unwrap_or_default();
                    *self.notifications.entry(format!("notifications/progress {tok}")).or_default() += 1;
                }
                *self.notifications.entry(method).or_default() += 1;
                Ok(None)
            }
        }
    }

    /// Next response to any of our requests (server requests are answered on the way).
    fn next_response(&mut self) -> Res<(u64, Result<Value, Value>)> {
        loop {
            let v = self.reader.next()?;
            if let Some(r) = self.handle(v)? {
                return Ok(r);
            }
        }
    }

    /// Read and handle one message of any kind; a response is stashed.
    fn pump(&mut self) -> Res<()> {
        let v = self.reader.next()?;
        if let Some((id, r)) = self.handle(v)? {
            self.stash.insert(id, r);
        }
        Ok(())
    }

    /// A response already buffered, without blocking.
    fn try_response(&mut self) -> Res<Option<(u64, Result<Value, Value>)>> {
        while let Some(v) = self.reader.try_next()? {
            if let Some(r) = self.handle(v)? {
                return Ok(Some(r));
            }
        }
        Ok(None)
    }

    /// Wait for the response with this id (others are stashed).
    fn wait_for(&mut self, id: u64) -> Res<Result<Value, Value>> {
        if let Some(r) = self.stash.remove(&id) {
            return Ok(r);
        }
        loop {
            let (rid, r) = self.next_response()?;
            if rid == id {
                return Ok(r);
            }
            self.stash.insert(rid, r);
        }
    }

    fn call(&mut self, method: &str, params: &str) -> Res<Value> {
        let id = self.id();
        self.queue_request(id, method, params);
        self.flush()?;
        self.wait_for(id)?.map_err(|e| format!("{method} failed: {e}"))
    }

    /// Server CPU so far: (utime+stime from /proc/<pid>/stat in ns, sum of the live threads'
    /// /proc/<pid>/task/*/schedstat on-CPU ns). The first is what the tables use; the second,
    /// ns-precise but blind to threads that exited, stands in where the first is too coarse.
    fn cpu(&self) -> Res<(u64, u64)> {
        let mut sched = 0u64;
        if let Ok(dir) = std::fs::read_dir(format!("/proc/{}/task", self.pid)) {
            for t in dir.flatten() {
                if let Ok(st) = std::fs::read_to_string(t.path().join("schedstat")) {
                    sched += st.split_whitespace().next().and_then(|x| x.parse::<u64>().ok()).unwrap_or(0);
                }
            }
        }
        Ok((self.cpu_ns()?, sched))
    }

    fn cpu_ns(&self) -> Res<u64> {
        let s = std::fs::read_to_string(format!("/proc/{}/stat", self.pid)).map_err(|e| format!("/proc stat: {e}"))?;
        // Fields after the parenthesised comm: state(3) ... utime(14) stime(15).
        let rest = &s[s.rfind(')').ok_or("bad /proc stat")? + 2..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        let ticks: u64 = f[11].parse::<u64>().unwrap_or(0) + f[12].parse::<u64>().unwrap_or(0);
        Ok(ticks * 1_000_000_000 / clk_tck())
    }

    fn close(mut self) {
        drop(self.stdin.take());
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(3) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn clk_tck() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as u64 } else { 100 }
}

// ---------------------------------------------------------------- measurement

#[derive(Clone, Default)]
struct Stat {
    msgs: u64,
    secs: f64,
    /// From /proc/<pid>/stat (clock ticks).
    cpu_ns: u64,
    /// From /proc/<pid>/task/*/schedstat (ns).
    sched_ns: u64,
    lat_ns: Vec<u64>,
}

fn stat_from(msgs: u64, secs: f64, c0: (u64, u64), c1: (u64, u64), lat_ns: Vec<u64>) -> Stat {
    Stat { msgs, secs, cpu_ns: c1.0.saturating_sub(c0.0), sched_ns: c1.1.saturating_sub(c0.1), lat_ns }
}

impl Stat {
    fn rate(&self) -> f64 {
        self.msgs as f64 / self.secs
    }
    /// Server CPU µs per request: from the clock ticks, or from schedstat where the ticks are
    /// too few (see `cpu_coarse`).
    fn cpu_us(&self) -> f64 {
        let ns = if self.cpu_coarse() && self.sched_ns > 0 { self.sched_ns } else { self.cpu_ns };
        ns as f64 / 1e3 / self.msgs as f64
    }
    /// CPU delta below 20 clock ticks: coarse.
    fn cpu_coarse(&self) -> bool {
        self.cpu_ns < 20 * 1_000_000_000 / clk_tck()
    }
    fn pct(&self, p: f64) -> f64 {
        if self.lat_ns.is_empty() {
            return f64::NAN;
        }
        let mut v = self.lat_ns.clone();
        v.sort_unstable();
        let i = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
        v[i] as f64 / 1e3
    }
}

/// `count` requests one at a time, `make(i)` gives (method, params), `check` validates results.
fn run_seq(
    s: &mut Session,
    count: u64,
    make: &dyn Fn(u64) -> (&'static str, String),
    check: &dyn Fn(u64, &Value) -> Res<()>,
) -> Res<Stat> {
    let mut lat = Vec::with_capacity(count as usize);
    let cpu0 = s.cpu()?;
    let t0 = Instant::now();
    for i in 0..count {
        let (m, p) = make(i);
        let id = s.id();
        let t = Instant::now();
        s.queue_request(id, m, &p);
        s.flush()?;
        let r = s.wait_for(id)?.map_err(|e| format!("{m} #{i} failed: {e}"))?;
        lat.push(t.elapsed().as_nanos() as u64);
        check(i, &r)?;
    }
    let secs = t0.elapsed().as_secs_f64();
    let cpu1 = s.cpu()?;
    Ok(stat_from(count, secs, cpu0, cpu1, lat))
}

/// `count` requests with up to `window` in flight; responses may come in any order.
fn run_pipelined(
    s: &mut Session,
    count: u64,
    window: u64,
    make: &dyn Fn(u64) -> (&'static str, String),
    check: &dyn Fn(u64, &Value) -> Res<()>,
) -> Res<Stat> {
    let mut inflight: HashMap<u64, (u64, Instant)> = HashMap::with_capacity(window as usize * 2);
    let mut lat = Vec::with_capacity(count as usize);
    let (mut sent, mut done) = (0u64, 0u64);
    let cpu0 = s.cpu()?;
    let t0 = Instant::now();
    while done < count {
        let now = Instant::now();
        while sent < count && (inflight.len() as u64) < window {
            let (m, p) = make(sent);
            let id = s.id();
            s.queue_request(id, m, &p);
            inflight.insert(id, (sent, now));
            sent += 1;
        }
        s.flush()?;
        let mut got = Some(s.next_response()?);
        while let Some((id, r)) = got {
            let (i, t) = inflight.remove(&id).ok_or_else(|| format!("response to unknown id {id}"))?;
            lat.push(t.elapsed().as_nanos() as u64);
            let r = r.map_err(|e| format!("request #{i} failed: {e}"))?;
            check(i, &r)?;
            done += 1;
            got = s.try_response()?;
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    let cpu1 = s.cpu()?;
    Ok(stat_from(count, secs, cpu0, cpu1, lat))
}

// ---------------------------------------------------------------- MCP

struct Opts {
    n: u64,
    rounds: u32,
    window: u64,
    pings: u64,
    asks: u64,
    warmup: u64,
}

fn mcp_add(i: u64) -> (&'static str, String) {
    ("tools/call", format!(r#"{{"name":"add","arguments":{{"a":{},"b":{}}}}}"#, i % 1000, 7))
}

fn tool_text(r: &Value) -> Res<&str> {
    if r.get("isError").and_then(|e| e.as_bool()) == Some(true) {
        return Err(format!("tool returned isError: {r}"));
    }
    r.get("content")
        .and_then(|c| c.get(0))
        .and_then(|c| c.get("text"))
        .and_then(|t| t.as_str())
        .ok_or_else(|| format!("no text content in {r}"))
}

fn check_add(i: u64, r: &Value) -> Res<()> {
    let t = tool_text(r)?;
    let want = (i % 1000 + 7) as f64;
    match t.trim().parse::<f64>() {
        Ok(x) if x == want => Ok(()),
        _ => Err(format!("add #{i}: expected {want}, got {t:?}")),
    }
}

fn mcp_session(cmd: &str, o: &Opts, notes: &mut Vec<String>) -> Res<Vec<(&'static str, Stat)>> {
    let mut s = Session::spawn(cmd, Framing::Ndjson)?;
    let init = s.call(
        "initialize",
        r#"{"protocolVersion":"2025-06-18","capabilities":{"sampling":{}},"clientInfo":{"name":"duplex-load","version":"0.1.0"}}"#,
    )?;
    notes.push(format!(
        "initialize: protocolVersion {} serverInfo {} capabilities {}",
        init.get("protocolVersion").unwrap_or(&Value::Null),
        init.get("serverInfo").unwrap_or(&Value::Null),
        init.get("capabilities").unwrap_or(&Value::Null)
    ));
    s.queue_notification("notifications/initialized", "{}");
    s.flush()?;
    let tools = s.call("tools/list", "{}")?;
    let names: Vec<&str> = tools
        .get("tools")
        .and_then(|t| t.as_array())
        .map(|a| a.iter().filter_map(|t| t.get("name")?.as_str()).collect())
        .unwrap_or_default();
    for want in ["add", "slow", "ask"] {
        if !names.contains(&want) {
            return Err(format!("tools/list lacks {want:?}: {names:?}"));
        }
    }

    let mut out = Vec::new();
    run_seq(&mut s, o.warmup, &mcp_add, &check_add)?;
    out.push(("add seq", run_seq(&mut s, o.n, &mcp_add, &check_add)?));
    run_pipelined(&mut s, o.warmup, o.window, &mcp_add, &check_add)?;
    out.push(("add pipe", run_pipelined(&mut s, o.n, o.window, &mcp_add, &check_add)?));

    // Server -> client round trip inside a call.
    let ask = |i: u64| ("tools/call", format!(r#"{{"name":"ask","arguments":{{"question":"q{i}"}}}}"#));
    let check_ask = |i: u64, r: &Value| {
        let t = tool_text(r)?;
        if t == "42" { Ok(()) } else { Err(format!("ask #{i}: expected \"42\", got {t:?}")) }
    };
    let sampling0 = s.server_requests.get("sampling/createMessage").copied().unwrap_or(0);
    run_seq(&mut s, o.asks.min(200), &ask, &check_ask)?;
    out.push(("ask seq", run_seq(&mut s, o.asks, &ask, &check_ask)?));
    let sampled = s.server_requests.get("sampling/createMessage").copied().unwrap_or(0) - sampling0;
    if sampled < o.asks {
        return Err(format!("expected one sampling/createMessage per ask, saw {sampled}"));
    }

    // Ping latency while a slow call runs (restarted if it finishes).
    let mut slow_no = 0u32;
    let mut start_slow = |s: &mut Session| -> u64 {
        slow_no += 1;
        let id = s.id();
        s.queue_request(
            id,
            "tools/call",
            &format!(r#"{{"name":"slow","arguments":{{"ms":2000}},"_meta":{{"progressToken":"slow-{slow_no}"}}}}"#),
        );
        id
    };
    let mut slow_id = start_slow(&mut s);
    s.flush()?;
    // Wait for the first progress notification: the call is then surely running.
    let t = Instant::now();
    while !s.notifications.keys().any(|k| k.contains("\"slow-1\"")) {
        if t.elapsed() > READ_TIMEOUT {
            return Err("no notifications/progress for slow within 10 s".into());
        }
        s.pump()?;
    }
    let mut restarts = 0;
    let mut lat = Vec::with_capacity(o.pings as usize);
    let cpu0 = s.cpu()?;
    let t0 = Instant::now();
    for _ in 0..o.pings {
        if s.stash.remove(&slow_id).is_some() {
            slow_id = start_slow(&mut s);
            restarts += 1;
        }
        let id = s.id();
        let t = Instant::now();
        s.queue_request(id, "ping", "{}");
        s.flush()?;
        s.wait_for(id)?.map_err(|e| format!("ping failed: {e}"))?;
        lat.push(t.elapsed().as_nanos() as u64);
    }
    let secs = t0.elapsed().as_secs_f64();
    let cpu1 = s.cpu()?;
    out.push(("ping|slow", stat_from(o.pings, secs, cpu0, cpu1, lat)));
    // Cancel the slow call; see whether the server still answers it.
    s.queue_notification(
        "notifications/cancelled",
        &format!(r#"{{"requestId":{slow_id},"reason":"benchmark done"}}"#),
    );
    s.flush()?;
    let marker = s.id();
    s.queue_request(marker, "ping", "{}");
    s.flush()?;
    std::thread::sleep(Duration::from_millis(300));
    s.wait_for(marker)?.map_err(|e| format!("ping failed: {e}"))?;
    let cancel_answer = match s.stash.remove(&slow_id) {
        Some(Ok(v)) => format!("answered with a result {v}"),
        Some(Err(e)) => format!("answered with an error {e}"),
        None => "not answered (as the spec says)".into(),
    };
    let progress: u64 = s
        .notifications
        .iter()
        .filter(|(k, _)| k.starts_with("notifications/progress "))
        .map(|(_, v)| v)
        .sum();
    notes.push(format!(
        "slow: {progress} progress notifications, {restarts} restarts; cancelled slow call {cancel_answer}; server requests {:?}",
        s.server_requests
    ));
    s.close();
    Ok(out)
}

// ---------------------------------------------------------------- LSP

const DOC_URI: &str = "file:///bench/doc.rs";

fn lsp_doc() -> String {
    (0..50)
        .map(|i| format!("fn func_{i}(alpha_{i}: u32, beta: &str) -> Result<(), Error> {{ gamma_{i}(beta); }}\n"))
        .collect()
}

/// Hover targets: (line, UTF-16 column one past the word's start, expected word).
fn hover_targets() -> &'static [(u64, u64, String)] {
    static T: std::sync::OnceLock<Vec<(u64, u64, String)>> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        let doc = lsp_doc();
        let mut v = Vec::new();
        for kind in ["func_", "alpha_", "gamma_"] {
            for (line, text) in doc.lines().enumerate() {
                let word = format!("{kind}{line}");
                let col = text.find(&format!("{word}(")).or_else(|| text.find(&format!("{word}:"))).unwrap();
                v.push((line as u64, col as u64 + 1, word));
            }
        }
        v
    })
}

/// Hover request i: cycles over every line and three words of each.
fn lsp_hover(i: u64) -> (&'static str, String) {
    let t = hover_targets();
    let (line, col, _) = &t[(i % t.len() as u64) as usize];
    (
        "textDocument/hover",
        format!(r#"{{"textDocument":{{"uri":"{DOC_URI}"}},"position":{{"line":{line},"character":{col}}}}}"#),
    )
}

fn hover_text(r: &Value) -> String {
    match r.get("contents") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) => a.iter().map(|x| x.get("value").and_then(|v| v.as_str()).or(x.as_str()).unwrap_or("")).collect(),
        Some(c) => c.get("value").and_then(|v| v.as_str()).unwrap_or("").to_string(),
        None => String::new(),
    }
}

fn check_hover(i: u64, r: &Value) -> Res<()> {
    let t = hover_targets();
    let want = &t[(i % t.len() as u64) as usize].2;
    let got = hover_text(r);
    if got.contains(want.as_str()) { Ok(()) } else { Err(format!("hover #{i}: expected {want:?}, got {r}")) }
}

fn lsp_session(cmd: &str, o: &Opts, notes: &mut Vec<String>) -> Res<Vec<(&'static str, Stat)>> {
    let mut s = Session::spawn(cmd, Framing::ContentLength)?;
    let init = s.call(
        "initialize",
        &format!(
            r#"{{"processId":{},"rootUri":null,"capabilities":{{}},"clientInfo":{{"name":"duplex-load","version":"0.1.0"}}}}"#,
            std::process::id()
        ),
    )?;
    notes.push(format!(
        "initialize: capabilities {} serverInfo {}",
        init.get("capabilities").unwrap_or(&Value::Null),
        init.get("serverInfo").unwrap_or(&Value::Null)
    ));
    s.queue_notification("initialized", "{}");
    let open = json!({"textDocument": {"uri": DOC_URI, "languageId": "rust", "version": 1, "text": lsp_doc()}});
    s.queue_notification("textDocument/didOpen", &open.to_string());
    s.flush()?;
    let mut out = Vec::new();
    run_seq(&mut s, o.warmup, &lsp_hover, &check_hover)?;
    out.push(("hover seq", run_seq(&mut s, o.n, &lsp_hover, &check_hover)?));
    run_pipelined(&mut s, o.warmup, o.window, &lsp_hover, &check_hover)?;
    out.push(("hover pipe", run_pipelined(&mut s, o.n, o.window, &lsp_hover, &check_hover)?));
    // LSP's shutdown/exit take no params; tower-lsp rejects `"params": null` (-32602).
    s.call("shutdown", "")?;
    s.queue_notification("exit", "");
    s.flush()?;
    let mut n: Vec<_> = s.notifications.iter().collect();
    n.sort();
    notes.push(format!("notifications {:?}; server requests {:?}", n, s.server_requests));
    s.close();
    Ok(out)
}

// ---------------------------------------------------------------- main

fn parse_args() -> Res<(String, Vec<(String, String)>, Opts)> {
    let mut args = std::env::args().skip(1);
    let proto = args.next().ok_or("usage: duplex-load mcp|lsp --server NAME=CMD ... [--n N] [--rounds R]")?;
    if proto != "mcp" && proto != "lsp" {
        return Err(format!("unknown protocol {proto:?} (mcp or lsp)"));
    }
    let mut servers = Vec::new();
    let mut o = Opts { n: 20000, rounds: 3, window: 32, pings: 200, asks: 2000, warmup: u64::MAX };
    while let Some(a) = args.next() {
        let mut val = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--server" => {
                let v = val()?;
                let (name, cmd) = v.split_once('=').ok_or("--server NAME=CMD")?;
                servers.push((name.to_string(), cmd.to_string()));
            }
            "--n" => o.n = val()?.parse().map_err(|_| "--n: number")?,
            "--rounds" => o.rounds = val()?.parse().map_err(|_| "--rounds: number")?,
            "--window" => o.window = val()?.parse().map_err(|_| "--window: number")?,
            "--pings" => o.pings = val()?.parse().map_err(|_| "--pings: number")?,
            "--asks" => o.asks = val()?.parse().map_err(|_| "--asks: number")?,
            "--warmup" => o.warmup = val()?.parse().map_err(|_| "--warmup: number")?,
            _ => return Err(format!("unknown argument {a:?}")),
        }
    }
    if servers.is_empty() {
        return Err("give at least one --server NAME=CMD".into());
    }
    if o.warmup == u64::MAX {
        o.warmup = (o.n / 10).min(2000);
    }
    o.n = o.n.max(1);
    o.window = o.window.max(1);
    o.rounds = o.rounds.max(1);
    Ok((proto, servers, o))
}

fn fmt_lat(x: f64) -> String {
    if x.is_nan() { "-".into() } else { format!("{x:.1}") }
}

fn main() {
    let (proto, servers, o) = match parse_args() {
        Ok(x) => x,
        Err(e) => {
            eprintln!("duplex-load: {e}");
            std::process::exit(2);
        }
    };
    // best[server][workload] = best round's Stat (highest msgs/s)
    let mut best: Vec<Vec<(&'static str, Stat)>> = vec![Vec::new(); servers.len()];
    let mut notes: Vec<Vec<String>> = vec![Vec::new(); servers.len()];
    let mut failed = false;
    println!(
        "duplex-load {proto}: N={} window={} rounds={}{} warmup={}",
        o.n,
        o.window,
        o.rounds,
        if proto == "mcp" { format!(" pings={} asks={}", o.pings, o.asks) } else { String::new() },
        o.warmup
    );
    for round in 1..=o.rounds {
        for (si, (name, cmd)) in servers.iter().enumerate() {
            let mut round_notes = Vec::new();
            let r = if proto == "mcp" { mcp_session(cmd, &o, &mut round_notes) } else { lsp_session(cmd, &o, &mut round_notes) };
            if round == 1 {
                notes[si] = round_notes;
            }
            match r {
                Err(e) => {
                    eprintln!("duplex-load: round {round} {name}: ERROR: {e}");
                    failed = true;
                }
                Ok(stats) => {
                    let line: Vec<String> =
                        stats.iter().map(|(w, st)| format!("{w} {:.0}/s {:.1}µs", st.rate(), st.cpu_us())).collect();
                    println!("  round {round} {name:<12} {}", line.join(" | "));
                    for (w, st) in stats {
                        match best[si].iter_mut().find(|(bw, _)| *bw == w) {
                            Some((_, b)) if b.rate() >= st.rate() => {}
                            Some((_, b)) => *b = st,
                            None => best[si].push((w, st)),
                        }
                    }
                }
            }
        }
    }
    println!();
    println!("best round per (server, workload), by msgs/s; CPU = server utime+stime per request");
    println!(
        "{:<14} {:<11} {:>10} {:>11} {:>11} {:>11}",
        "server", "workload", "msgs/s", "CPU µs/msg", "median µs", "p99 µs"
    );
    let workloads: Vec<&'static str> = best.iter().flat_map(|b| b.iter().map(|(w, _)| *w)).fold(Vec::new(), |mut v, w| {
        if !v.contains(&w) {
            v.push(w);
        }
        v
    });
    for w in &workloads {
        for (si, (name, _)) in servers.iter().enumerate() {
            if let Some((_, st)) = best[si].iter().find(|(bw, _)| bw == w) {
                println!(
                    "{:<14} {:<11} {:>10.0} {:>10.2}{} {:>11} {:>11}",
                    name,
                    w,
                    st.rate(),
                    st.cpu_us(),
                    if st.cpu_coarse() { "~" } else { " " },
                    fmt_lat(st.pct(0.5)),
                    fmt_lat(st.pct(0.99))
                );
            }
        }
    }
    println!("(~ = under 20 clock ticks of server CPU: the figure is from /proc/<pid>/task/*/schedstat instead)");
    if proto == "mcp" {
        for (si, (name, _)) in servers.iter().enumerate() {
            let get = |w: &str| best[si].iter().find(|(bw, _)| *bw == w).map(|(_, s)| s.pct(0.5));
            if let (Some(ask), Some(add)) = (get("ask seq"), get("add seq")) {
                println!(
                    "{name}: server->client round trip ≈ ask median − add median = {:.1} − {:.1} = {:.1} µs",
                    ask,
                    add,
                    ask - add
                );
            }
        }
    }
    if servers.len() > 1 {
        let (base, _) = &servers[0];
        for (si, (peer, _)) in servers.iter().enumerate().skip(1) {
            println!();
            println!("ratios {base} vs {peer} (same run; > 1 means {base} is better)");
            println!(
                "{:<11} {:>13} {:>13} {:>13} {:>13}",
                "workload", "msgs/s ×", "CPU/msg ×", "median ×", "p99 ×"
            );
            for w in &workloads {
                let a = best[0].iter().find(|(bw, _)| bw == w);
                let b = best[si].iter().find(|(bw, _)| bw == w);
                if let (Some((_, a)), Some((_, b))) = (a, b) {
                    println!(
                        "{:<11} {:>13.2} {:>13.2} {:>13.2} {:>13.2}",
                        w,
                        a.rate() / b.rate(),
                        b.cpu_us() / a.cpu_us(),
                        b.pct(0.5) / a.pct(0.5),
                        b.pct(0.99) / a.pct(0.99)
                    );
                }
            }
        }
    }
    println!();
    for (si, (name, cmd)) in servers.iter().enumerate() {
        println!("{name} ({cmd}):");
        for n in &notes[si] {
            println!("  {n}");
        }
    }
    if failed {
        std::process::exit(1);
    }
}
