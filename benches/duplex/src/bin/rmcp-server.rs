//! MCP stdio server on rmcp with the same tools as switchboard's `mcp-server` example:
//! `add {a, b}`, `slow {ms}` (progress every 100 ms, cancellable), `ask {question}`
//! (server -> client `sampling/createMessage`). Capabilities: tools + logging.
//!
//! Transport: `rmcp::transport::stdio()` (the one every rmcp example uses). Pass `--pipes`
//! to use `rmcp::transport::stdio_pipes()` instead (non-blocking FIFO driver on Linux).
#![allow(deprecated)] // sampling is marked deprecated in rmcp 3.x (SEP-2577), still supported

use std::time::Duration;

use rmcp::{
    ErrorData, Peer, RoleServer, ServerHandler, ServiceExt,
    handler::server::{router::tool::ToolRouter, wrapper::Parameters},
    model::{
        CallToolResult, ContentBlock, CreateMessageRequestParams, ProgressNotificationParam,
        RequestMetaObject, SamplingMessage, ServerCapabilities, ServerConfig,
    },
    schemars, tool, tool_handler, tool_router,
};
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

#[derive(Deserialize, schemars::JsonSchema)]
struct AddArgs {
    a: f64,
    b: f64,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct SlowArgs {
    ms: u64,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct AskArgs {
    question: String,
}

#[derive(Clone)]
struct Bench {
    #[allow(dead_code)] // read by the #[tool_handler] expansion
    tool_router: ToolRouter<Self>,
}

fn fmt_num(x: f64) -> String {
    // "5" for integral values (like JSON integers), otherwise the shortest float form.
    if x.fract() == 0.0 && x.abs() < 9.007e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

#[tool_router]
impl Bench {
    fn new() -> Self {
        Self { tool_router: Self::tool_router() }
    }

    #[tool(description = "Add two numbers")]
    async fn add(&self, Parameters(AddArgs { a, b }): Parameters<AddArgs>) -> Result<CallToolResult, ErrorData> {
        Ok(CallToolResult::success(vec![ContentBlock::text(fmt_num(a + b))]))
    }

    #[tool(description = "Sleep for ms milliseconds, reporting progress every 100 ms")]
    async fn slow(
        &self,
        Parameters(SlowArgs { ms }): Parameters<SlowArgs>,
        meta: RequestMetaObject,
        peer: Peer<RoleServer>,
        ct: CancellationToken,
    ) -> Result<CallToolResult, ErrorData> {
        let token = meta.get_progress_token();
        let start = tokio::time::Instant::now();
        let deadline = start + Duration::from_millis(ms);
        let mut tick = start;
        loop {
            let now = tokio::time::Instant::now();
            if now >= deadline {
                break;
            }
            tick += Duration::from_millis(100);
            let wake = tick.min(deadline);
            tokio::select! {
                _ = ct.cancelled() => {
                    return Err(ErrorData::internal_error("cancelled", None));
                }
                _ = tokio::time::sleep_until(wake) => {}
            }
            if let Some(t) = &token {
                if wake < deadline {
                    let done = (wake - start).as_millis() as f64;
                    let _ = peer
                        .notify_progress(ProgressNotificationParam::new(t.clone(), done).with_total(ms as f64))
                        .await;
                }
            }
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(format!("slept {ms} ms"))]))
    }

    #[tool(description = "Ask the client's model a question (sampling/createMessage)")]
    async fn ask(
        &self,
        Parameters(AskArgs { question }): Parameters<AskArgs>,
        peer: Peer<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let reply = peer
            .create_message(CreateMessageRequestParams::new(vec![SamplingMessage::user_text(question)], 100))
            .await
            .map_err(|e| ErrorData::internal_error(format!("sampling failed: {e}"), None))?;
        let text = reply
            .message
            .content
            .into_vec()
            .into_iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("");
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
    }
}

#[tool_handler]
impl ServerHandler for Bench {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_logging().build())
    }
}

#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let pipes = std::env::args().any(|a| a == "--pipes");
    let service = if pipes {
        Bench::new().serve(rmcp::transport::stdio_pipes()).await?
    } else {
        Bench::new().serve(rmcp::transport::stdio()).await?
    };
    service.waiting().await?;
    Ok(())
}
