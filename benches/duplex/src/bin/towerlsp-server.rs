//! LSP stdio server on tower-lsp, the peer of switchboard's `lsp-server` example:
//! initialize (textDocumentSync full, hoverProvider), didOpen/didChange keep the text,
//! hover returns the word under the cursor, shutdown.

use std::collections::HashMap;
use std::sync::Mutex;

use tower_lsp::jsonrpc::Result;
use tower_lsp::lsp_types::*;
use tower_lsp::{Client, LanguageServer, LspService, Server};

struct Backend {
    client: Client,
    docs: Mutex<HashMap<Url, String>>,
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The word under `pos` (LSP positions count UTF-16 code units).
fn word_at(text: &str, pos: Position) -> Option<String> {
    let line = text.lines().nth(pos.line as usize)?;
    // Convert the UTF-16 column to a char index.
    let mut units = 0u32;
    let mut idx = 0usize;
    let chars: Vec<char> = line.chars().collect();
    while idx < chars.len() && units < pos.character {
        units += chars[idx].len_utf16() as u32;
        idx += 1;
    }
    if idx >= chars.len() || !is_word(chars[idx]) {
        // Cursor just after a word counts as on it.
        if idx == 0 || !is_word(*chars.get(idx.wrapping_sub(1))?) {
            return None;
        }
        idx -= 1;
    }
    let mut s = idx;
    while s > 0 && is_word(chars[s - 1]) {
        s -= 1;
    }
    let mut e = idx;
    while e < chars.len() && is_word(chars[e]) {
        e += 1;
    }
    Some(chars[s..e].iter().collect())
}

#[tower_lsp::async_trait]
impl LanguageServer for Backend {
    async fn initialize(&self, _: InitializeParams) -> Result<InitializeResult> {
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                text_document_sync: Some(TextDocumentSyncCapability::Kind(TextDocumentSyncKind::FULL)),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                ..Default::default()
            },
            server_info: Some(ServerInfo { name: "towerlsp-server".into(), version: None }),
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        self.client.log_message(MessageType::INFO, "towerlsp-server initialized").await;
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        self.docs.lock().unwrap().insert(params.text_document.uri, params.text_document.text);
    }

    async fn did_change(&self, mut params: DidChangeTextDocumentParams) {
        // Full sync: the last change holds the whole text.
        if let Some(change) = params.content_changes.pop() {
            self.docs.lock().unwrap().insert(params.text_document.uri, change.text);
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        self.docs.lock().unwrap().remove(&params.text_document.uri);
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let p = params.text_document_position_params;
        let word = {
            let docs = self.docs.lock().unwrap();
            docs.get(&p.text_document.uri).and_then(|t| word_at(t, p.position))
        };
        Ok(word.map(|w| Hover {
            contents: HoverContents::Markup(MarkupContent { kind: MarkupKind::PlainText, value: w }),
            range: None,
        }))
    }
}

#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() {
    let stdin = tokio::io::stdin();
    let stdout = tokio::io::stdout();
    let (service, socket) =
        LspService::new(|client| Backend { client, docs: Mutex::new(HashMap::new()) });
    Server::new(stdin, stdout, socket).serve(service).await;
}
