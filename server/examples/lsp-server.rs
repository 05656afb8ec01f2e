//! `lsp-server`: a Language Server Protocol server over stdio (`Content-Length`
//! framing), on switchboard's duplex driver:
//!
//! - `initialize` / `initialized` / `shutdown` / `exit`; after `initialized` it
//!   asks the client `workspace/configuration` (section `switchboard`), awaits the
//!   answer and logs it with `window/logMessage`;
//! - `textDocument/didOpen` and `didChange` (full sync) publish one diagnostic
//!   per line containing `TODO`;
//! - `textDocument/hover` returns the word under the cursor;
//! - `switchboard/slow {ms}` sleeps; `$/cancelRequest` cancels it, answered
//!   -32800 (RequestCancelled).
//!
//! ```sh
//! cargo build --release -p switchboard-server --examples
//! target/release/examples/lsp-server [--request-timeout-ms N]
//! ```
//!
//! Exits 0 after `shutdown` then `exit`, 1 after an `exit` without `shutdown`
//! (as LSP says) or when the stream ends without either. Logs go to standard error.

use std::collections::HashMap;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};
use switchboard::connection::{CancelRule, Connection};
use switchboard::{Call, Router, RpcError};
use switchboard_server::duplex::{Duplex, DuplexConfig, End};
use switchboard_server::stdio::Framing;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The open documents of one connection, by URI.
#[derive(Default)]
struct Documents(Mutex<HashMap<String, String>>);

/// Set by `shutdown`.
#[derive(Default)]
struct ShutDown(AtomicBool);

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TextDocumentItem {
    uri: String,
    text: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DidOpen {
    text_document: TextDocumentItem,
}

#[derive(Deserialize)]
struct Uri {
    uri: String,
}

#[derive(Deserialize)]
struct Change {
    text: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DidChange {
    text_document: Uri,
    content_changes: Vec<Change>,
}

#[derive(Deserialize)]
struct Position {
    line: usize,
    character: usize,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct HoverParams {
    text_document: Uri,
    position: Position,
}

#[derive(Deserialize)]
struct Slow {
    ms: u64,
}

fn conn<'c>(call: &'c Call<'_>) -> Result<&'c Connection, RpcError> {
    call.connection()
        .ok_or_else(|| RpcError::internal("served without a connection"))
}

/// The position of `character` (UTF-16 code units, LSP's default) in `line`, as
/// a byte offset.
fn byte_offset(line: &str, character: usize) -> usize {
    let mut units = 0;
    for (i, c) in line.char_indices() {
        if units >= character {
            return i;
        }
        units += c.len_utf16();
    }
    line.len()
}

fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// The word (letters, digits, `_`) under `pos`, if any.
fn word_at(text: &str, pos: &Position) -> Option<String> {
    let line = text.lines().nth(pos.line)?;
    let at = byte_offset(line, pos.character);
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let start = line[..at]
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_word(*c))
        .last()
        .map_or(at, |(i, _)| i);
    let end = line[at..]
        .char_indices()
        .find(|(_, c)| !is_word(*c))
        .map_or(line.len(), |(i, _)| at + i);
    (start < end).then(|| line[start..end].to_owned())
}

/// One diagnostic per line containing `TODO`, published for `uri`.
fn publish(conn: &Connection, uri: &str, text: &str) {
    let diagnostics: Vec<Value> = text
        .lines()
        .enumerate()
        .filter_map(|(n, line)| {
            let at = line.find("TODO")?;
            let start = utf16_len(&line[..at]);
            Some(json!({
                "range": { "start": { "line": n, "character": start },
                           "end": { "line": n, "character": start + 4 } },
                "severity": 3,
                "source": "switchboard",
                "message": "TODO found",
            }))
        })
        .collect();
    let params = json!({ "uri": uri, "diagnostics": diagnostics });
    // Sync handlers run in message order: diagnostics go out in the order of
    // the edits. The queue holds 1024 messages; a client that reads none of
    // them loses diagnostics, not memory.
    if let Err(e) = conn
        .peer()
        .try_notify("textDocument/publishDiagnostics", &params)
    {
        tracing::warn!("publishDiagnostics for {uri}: {e}");
    }
}

fn router() -> Arc<Router> {
    Router::builder()
        .title("switchboard lsp-server example")
        .typed("initialize", |_: Value| {
            Ok(json!({
                "capabilities": { "textDocumentSync": 1, "hoverProvider": true },
                "serverInfo": { "name": "switchboard-lsp-example", "version": env!("CARGO_PKG_VERSION") },
            }))
        })
        .method_async("initialized", |call| async move {
            // The client's configuration, awaited: other messages are served
            // meanwhile (the answer comes in through the same read loop).
            let peer = call
                .connection()
                .ok_or_else(|| RpcError::internal("no connection"))?
                .peer();
            let items = json!({ "items": [{ "section": "switchboard" }] });
            let message = match peer.request("workspace/configuration", &items).await {
                Ok(config) => format!("configuration: {}", config.as_raw()),
                Err(e) => format!("workspace/configuration failed: {e}"),
            };
            peer.notify("window/logMessage", &json!({ "type": 3, "message": message }))
                .await?;
            Ok(())
        })
        .typed_with("textDocument/didOpen", |p: DidOpen, call| {
            let conn = conn(call)?;
            let docs = conn.extensions().get::<Documents>().unwrap_or_default();
            publish(conn, &p.text_document.uri, &p.text_document.text);
            let mut docs = docs.0.lock().unwrap_or_else(|e| e.into_inner());
            docs.insert(p.text_document.uri, p.text_document.text);
            Ok(())
        })
        .typed_with("textDocument/didChange", |p: DidChange, call| {
            let conn = conn(call)?;
            let Some(last) = p.content_changes.into_iter().last() else {
                return Ok(());
            };
            publish(conn, &p.text_document.uri, &last.text);
            if let Some(docs) = conn.extensions().get::<Documents>() {
                let mut docs = docs.0.lock().unwrap_or_else(|e| e.into_inner());
                docs.insert(p.text_document.uri, last.text);
            }
            Ok(())
        })
        .typed_with("textDocument/didClose", |p: DidChange, call| {
            if let Some(docs) = conn(call)?.extensions().get::<Documents>() {
                let mut docs = docs.0.lock().unwrap_or_else(|e| e.into_inner());
                docs.remove(&p.text_document.uri);
            }
            Ok(())
        })
        .typed_with("textDocument/hover", |p: HoverParams, call| {
            let docs = conn(call)?.extensions().get::<Documents>();
            let word = docs.and_then(|d| {
                let docs = d.0.lock().unwrap_or_else(|e| e.into_inner());
                word_at(docs.get(&p.text_document.uri)?, &p.position)
            });
            Ok(word.map(|w| json!({ "contents": { "kind": "plaintext", "value": w } })))
        })
        .typed_async("switchboard/slow", |p: Slow| async move {
            // Cancellation drops this future; the router's cancel rule answers.
            tokio::time::sleep(Duration::from_millis(p.ms)).await;
            Ok(())
        })
        .method("shutdown", |call, out| {
            if let Some(s) = conn(call)?.extensions().get::<ShutDown>() {
                s.0.store(true, Ordering::Relaxed);
            }
            out.null()
        })
        .notification("exit", |call| {
            // The shutdown handle: the driver stops reading and winds up.
            if let Some(c) = call.connection() {
                c.close();
            }
        })
        .cancel_notification(
            CancelRule::new("$/cancelRequest", "id")
                .answer(RpcError::new(-32800, "Request cancelled")),
        )
        .build()
        .expect("valid registrations")
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
        framing: Framing::Lsp,
        drain_timeout: Duration::from_secs(1),
        ..DuplexConfig::default()
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--request-timeout-ms" => {
                let Some(ms) = it.next().and_then(|v| v.parse::<u64>().ok()) else {
                    eprintln!("lsp-server: --request-timeout-ms needs a number");
                    return ExitCode::from(2);
                };
                config
                    .connection
                    .request_timeout(Some(Duration::from_millis(ms)));
            }
            // Clients pass `--stdio`; it is the only transport here.
            "--stdio" => {}
            "--help" | "-h" => {
                println!(
                    "usage: lsp-server [--request-timeout-ms N]  (LSP over stdio, Content-Length)"
                );
                return ExitCode::SUCCESS;
            }
            other => {
                eprintln!("lsp-server: unknown option {other:?}");
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
    let result = runtime.block_on(async {
        let duplex = Duplex::new(router(), config);
        let conn = duplex.connection().clone();
        conn.extensions().insert(Documents::default());
        conn.extensions().insert(ShutDown::default());
        let r = {
            let (stdin, stdout) = switchboard_server::duplex::stdio();
            duplex.serve(stdin, stdout).await
        };
        let shut_down = conn
            .extensions()
            .get::<ShutDown>()
            .is_some_and(|s| s.0.load(Ordering::Relaxed));
        (r, shut_down)
    });
    runtime.shutdown_background();
    match result {
        (Ok(summary), shut_down) => {
            tracing::debug!("ended: {summary:?}");
            // LSP: exit code 0 after `shutdown`, 1 otherwise.
            if shut_down && summary.end == End::Closed {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
        (Err(e), _) => {
            tracing::error!("stdio: {e}");
            ExitCode::from(1)
        }
    }
}
