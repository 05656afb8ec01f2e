//! `mcp-server`: a Model Context Protocol server over stdio (NDJSON), on
//! switchboard's duplex driver. Tools that talk back to the client:
//!
//! - `add {a, b}`: the sum, as text;
//! - `slow {ms}`: sleeps `ms` milliseconds, sending `notifications/progress`
//!   every 100 ms when the call carries a `progressToken`; cancelled by
//!   `notifications/cancelled` (then never answered, as MCP says);
//! - `ask {question}`: asks the client `sampling/createMessage` and returns the
//!   text of its reply;
//! - `roots`: asks the client `roots/list` and returns how many roots it has.
//!
//! `ping` is answered while `slow` runs: calls of one connection run concurrently.
//!
//! ```sh
//! cargo build --release -p switchboard-server --examples
//! target/release/examples/mcp-server [--request-timeout-ms N]          # stdio
//! target/release/examples/mcp-server --http 127.0.0.1:8000             # http://127.0.0.1:8000/mcp
//! ```
//!
//! With `--http ADDR` it serves MCP's Streamable HTTP transport
//! (`switchboard_server::streamable`): sessions by `Mcp-Session-Id`, a POST
//! answered as JSON or, when the tool talks back first (`slow`'s progress,
//! `ask`'s sampling request), as a server-sent event stream.
//!
//! Protocol versions 2025-06-18 and 2025-11-25: the client's if it is one of
//! them, otherwise the latest. Capabilities: `tools` (`listChanged`) and
//! `logging`. Logs go to standard error.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use switchboard::connection::{CancelRule, Connection, PeerError};
use switchboard::{OwnedCall, Router, RpcError};
use switchboard_server::duplex::{Duplex, DuplexConfig};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The versions this server speaks, the latest last.
const VERSIONS: [&str; 2] = ["2025-06-18", "2025-11-25"];

/// What the client said in `initialize`, kept on the connection.
struct Client {
    version: &'static str,
    capabilities: Value,
}

/// -32602 with a reason.
fn invalid(reason: &str) -> RpcError {
    RpcError::new(-32602, "Invalid params").with_data(&json!({ "reason": reason }))
}

/// A tool's successful text result.
fn text(s: impl Into<String>) -> Value {
    json!({ "content": [{ "type": "text", "text": s.into() }], "isError": false })
}

/// A tool's failure, reported to the model as MCP says (an error result, not a
/// JSON-RPC error).
fn tool_error(s: impl Into<String>) -> Value {
    json!({ "content": [{ "type": "text", "text": s.into() }], "isError": true })
}

fn tools() -> Value {
    json!({ "tools": [
        { "name": "add", "description": "Adds two numbers.",
          "inputSchema": { "type": "object", "required": ["a", "b"],
            "properties": { "a": { "type": "number" }, "b": { "type": "number" } } } },
        { "name": "slow", "description": "Sleeps ms milliseconds, reporting progress every 100 ms.",
          "inputSchema": { "type": "object", "required": ["ms"],
            "properties": { "ms": { "type": "integer", "minimum": 0 } } } },
        { "name": "ask", "description": "Asks the client's model a question (sampling).",
          "inputSchema": { "type": "object", "required": ["question"],
            "properties": { "question": { "type": "string" } } } },
        { "name": "roots", "description": "Counts the client's roots.",
          "inputSchema": { "type": "object", "properties": {} } },
    ]})
}

fn router() -> Arc<Router> {
    Router::builder()
        .title("switchboard mcp-server example")
        .typed_with("initialize", |p: Value, call| {
            let asked = p.get("protocolVersion").and_then(Value::as_str);
            let version = VERSIONS
                .iter()
                .find(|v| Some(**v) == asked)
                .unwrap_or(&VERSIONS[VERSIONS.len() - 1]);
            if let Some(conn) = call.connection() {
                conn.extensions().insert(Client {
                    version,
                    capabilities: p.get("capabilities").cloned().unwrap_or(Value::Null),
                });
            }
            Ok(json!({
                "protocolVersion": version,
                "capabilities": { "tools": { "listChanged": true }, "logging": {} },
                "serverInfo": { "name": "switchboard-mcp-example", "version": env!("CARGO_PKG_VERSION") },
            }))
        })
        .notification("notifications/initialized", |call| {
            if let Some(c) = call.connection().and_then(|c| c.extensions().get::<Client>()) {
                tracing::info!(
                    "client initialized: protocol {}, capabilities {}",
                    c.version, c.capabilities
                );
            }
        })
        .method("ping", |_, out| out.raw_json(b"{}"))
        .method("logging/setLevel", |_, out| out.raw_json(b"{}"))
        .method("tools/list", {
            let list = serde_json::to_vec(&tools()).expect("a JSON value serializes");
            move |_, out| out.raw_json(&list)
        })
        .method_async("tools/call", tools_call)
        .cancel_notification(CancelRule::new("notifications/cancelled", "requestId"))
        .build()
        .expect("valid registrations")
}

/// `tools/call`: `{"name": ..., "arguments": {...}, "_meta": {"progressToken": ...}}`.
async fn tools_call(call: OwnedCall) -> Result<Value, RpcError> {
    let params = call
        .params()
        .ok_or_else(|| invalid("tools/call needs params"))?;
    let name = params
        .get("name")
        .and_then(|n| n.parse::<String>().ok())
        .ok_or_else(|| invalid("params.name must be a string"))?;
    let args = params.get("arguments");
    let conn = call.connection().cloned();
    match name.as_str() {
        "add" => {
            let num = |k: &str| args.and_then(|a| a.get(k)?.as_f64());
            let (Some(a), Some(b)) = (num("a"), num("b")) else {
                return Ok(tool_error("add needs numbers a and b"));
            };
            let sum = a + b;
            // Integers print as integers ("5", not "5.0").
            let shown = if sum.fract() == 0.0 && sum.abs() < 9.0e15 {
                format!("{}", sum as i64)
            } else {
                format!("{sum}")
            };
            Ok(text(shown))
        }
        "slow" => {
            let ms = args
                .and_then(|a| a.get("ms")?.as_u64())
                .ok_or_else(|| invalid("slow needs an integer ms"))?;
            let token = params
                .get("_meta")
                .and_then(|m| m.get("progressToken"))
                .map(|t| t.parse::<Value>().unwrap_or(Value::Null));
            slow(conn, ms, token).await
        }
        "ask" => {
            let question = args
                .and_then(|a| a.get("question")?.parse::<String>().ok())
                .ok_or_else(|| invalid("ask needs a string question"))?;
            let peer = conn
                .ok_or_else(|| RpcError::internal("no connection"))?
                .peer();
            let request = json!({
                "messages": [{ "role": "user", "content": { "type": "text", "text": question } }],
                "maxTokens": 256,
            });
            match peer.request("sampling/createMessage", &request).await {
                Ok(reply) => {
                    let reply: Value = reply.parse().map_err(RpcError::internal)?;
                    let answer = reply["content"]["text"].as_str().unwrap_or_default();
                    Ok(text(answer))
                }
                Err(e) => Ok(tool_error(format!("sampling/createMessage failed: {e}"))),
            }
        }
        "roots" => {
            let peer = conn
                .ok_or_else(|| RpcError::internal("no connection"))?
                .peer();
            match peer.request("roots/list", &json!({})).await {
                Ok(reply) => {
                    let reply: Value = reply.parse().map_err(RpcError::internal)?;
                    let n = reply["roots"].as_array().map_or(0, Vec::len);
                    Ok(text(n.to_string()))
                }
                Err(e) => Ok(tool_error(format!("roots/list failed: {e}"))),
            }
        }
        other => Err(invalid(&format!("unknown tool {other:?}"))),
    }
}

/// Sleeps `ms`, with a progress notification every 100 ms when the client gave
/// a token. Cancellation drops this future (the driver does it), so the sleep
/// just stops.
async fn slow(conn: Option<Connection>, ms: u64, token: Option<Value>) -> Result<Value, RpcError> {
    let step = Duration::from_millis(100);
    let total = Duration::from_millis(ms);
    let start = tokio::time::Instant::now();
    loop {
        let elapsed = start.elapsed();
        if elapsed >= total {
            break;
        }
        tokio::time::sleep((total - elapsed).min(step)).await;
        if let (Some(conn), Some(token)) = (&conn, &token) {
            let done = start.elapsed().min(total).as_millis() as u64;
            let note = json!({ "progressToken": token, "progress": done, "total": ms });
            match conn.peer().notify("notifications/progress", &note).await {
                Ok(()) | Err(PeerError::Closed) => {}
                Err(e) => tracing::warn!("progress: {e}"),
            }
        }
    }
    Ok(text(format!("slept {ms} ms")))
}

fn main() -> ExitCode {
    // Events on stderr (stdout is the protocol's): SWITCHBOARD_LOG or RUST_LOG, else info.
    let filter = ["SWITCHBOARD_LOG", "RUST_LOG"]
        .iter()
        .find_map(|v| std::env::var(v).ok())
        .unwrap_or_else(|| "info".into());
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let mut config = DuplexConfig {
        // When the client closes stdin it waits 2 s before killing the server
        // (the Python SDK does): calls still running get 1 s to finish.
        drain_timeout: Duration::from_secs(1),
        ..DuplexConfig::default()
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut http: Option<String> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--request-timeout-ms" => {
                let Some(ms) = it.next().and_then(|v| v.parse::<u64>().ok()) else {
                    eprintln!("mcp-server: --request-timeout-ms needs a number");
                    return ExitCode::from(2);
                };
                config
                    .connection
                    .request_timeout(Some(Duration::from_millis(ms)));
            }
            "--http" => {
                let Some(addr) = it.next() else {
                    eprintln!("mcp-server: --http needs an address (HOST:PORT)");
                    return ExitCode::from(2);
                };
                http = Some(addr.clone());
            }
            "--help" | "-h" => {
                println!(
                    "usage: mcp-server [--request-timeout-ms N] [--http ADDR]\n  \
                     MCP over stdio (NDJSON), or with --http over Streamable HTTP at http://ADDR/mcp"
                );
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("mcp-server: unknown option {other:?}");
                return ExitCode::from(2);
            }
        }
    }
    // One connection: one thread serves it best (no cross-thread wake-ups
    // between the read loop, the calls and the writer); calls still run
    // concurrently, interleaved at their awaits.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    if let Some(addr) = http {
        return runtime.block_on(serve_http(&addr, config));
    }
    let result = runtime.block_on(async {
        let duplex = Duplex::new(router(), config);
        {
            let (stdin, stdout) = switchboard_server::duplex::stdio();
            duplex.serve(stdin, stdout).await
        }
    });
    // stdin's reader thread may still block in read(2): do not wait for it.
    runtime.shutdown_background();
    match result {
        Ok(summary) => {
            tracing::debug!("ended: {summary:?}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            tracing::error!("stdio: {e}");
            ExitCode::from(1)
        }
    }
}

/// `--http ADDR`: MCP's Streamable HTTP transport at `http://ADDR/mcp`, one
/// connection per session, until Ctrl-C.
async fn serve_http(addr: &str, config: DuplexConfig) -> ExitCode {
    use switchboard_server::streamable::{Streamable, StreamableConfig, serve};
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(l) => l,
        Err(e) => {
            tracing::error!("--http {addr}: {e}");
            return ExitCode::from(1);
        }
    };
    let local = listener
        .local_addr()
        .map_or_else(|_| addr.to_owned(), |a| a.to_string());
    // The line a supervisor (or a test) reads the port from.
    eprintln!("mcp-server: listening on http://{local}/mcp");
    let service = Streamable::new(
        router(),
        StreamableConfig {
            connection: config.connection,
            ..StreamableConfig::default()
        },
    );
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    match serve(listener, service, stop).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("--http {addr}: {e}");
            ExitCode::from(1)
        }
    }
}
