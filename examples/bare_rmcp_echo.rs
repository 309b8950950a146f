//! `echo(text) -> text` served by a bare rmcp server over stdio: no contracts, no validation,
//! no permission, no journal — the baseline `benches/mcp/bench.py` compares `toolgate serve`
//! with. Same tool shape as toolgate's `echo`: a text block and `structuredContent`.
//!
//! `cargo build --release --example bare_rmcp_echo`

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations, object,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

#[derive(Clone)]
struct Echo {
    tool: Tool,
}

impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![self.tool.clone()]))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        (name == "echo").then(|| self.tool.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != "echo" {
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {}", request.name),
                None,
            ));
        }
        let text = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("text"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let mut r = CallToolResult::success(vec![ContentBlock::text(text.clone())]);
        r.structured_content = Some(json!({ "text": text }));
        Ok(r.into())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let schema = |v: Value| Arc::new(object(v));
    let tool = Tool::new(
        "echo",
        "Return the given text unchanged.",
        schema(json!({
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": false
        })),
    )
    .with_raw_output_schema(schema(json!({
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"]
    })))
    .with_annotations(ToolAnnotations::from_raw(
        None,
        Some(true),
        Some(false),
        Some(true),
        Some(false),
    ));
    // The same runtime flavour as `toolgate serve`, so the comparison is of the servers.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let running = Echo { tool }.serve(rmcp::transport::stdio()).await?;
        running.waiting().await?;
        Ok::<_, Box<dyn std::error::Error>>(())
    })?;
    rt.shutdown_timeout(std::time::Duration::from_millis(100));
    Ok(())
}
