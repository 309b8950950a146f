//! [`ToolgateServer`]: one MCP connection's handler — `tools/list` from the contracts,
//! `tools/call` through the whole runtime.
//!
//! The handler is built once per connection, so its [`Session`] (created at the first call,
//! when the client's capabilities are known) keeps allow-for-session grants for exactly that
//! connection. A call runs under the request's cancellation token: the client's
//! `notifications/cancelled` (or the connection closing) cancels it, and the runtime stops the
//! tool — the subprocess backend kills the process group.
//!
//! Requests run concurrently, each as its own `execute()` of the one runtime the server was
//! given: they meet in that runtime's admission table (and other processes' calls in the
//! project's lock file), so conflicting calls wait for each other in arrival order, and a
//! cancelled request that is still waiting leaves the queue without running.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{ElicitationMode, RequestContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use crate::ir::AskMode;
use crate::mcp::approval::ElicitationApprover;
use crate::mcp::tools::{McpTool, call_result, mcp_tool};
use crate::runtime::{Session, ToolCall, ToolRuntime};

/// The context of a connection whose client can answer elicitations, unless `--context` says.
pub const ELICITING_CONTEXT: &str = "interactive";
/// The context of a connection whose client cannot, unless `--context` says.
pub const SILENT_CONTEXT: &str = "headless";

/// A server that cannot start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The toolset is not defined.
    #[error("unknown toolset `{0}`; toolgate.yaml defines: {1}")]
    UnknownToolset(String, String),
    /// The context is not defined.
    #[error("unknown context `{0}`; toolgate.yaml defines: {1}")]
    UnknownContext(String, String),
    /// The transport failed during the handshake.
    #[error("the MCP connection failed: {0}")]
    Connection(String),
}

/// What a server exposes and how it answers `ask`.
#[derive(Clone, Debug, Default)]
pub struct ServeOptions {
    /// Only this toolset's tools (default: every tool).
    pub toolset: Option<String>,
    /// The context of every session (default: [`ELICITING_CONTEXT`] when the client declared
    /// elicitation and that context prompts, else [`SILENT_CONTEXT`]).
    pub context: Option<String>,
}

/// The MCP face of a runtime, for one connection.
#[derive(Clone)]
pub struct ToolgateServer {
    inner: Arc<Inner>,
}

struct Inner {
    runtime: ToolRuntime,
    approver: Option<Arc<ElicitationApprover>>,
    options: ServeOptions,
    tools: Vec<Tool>,
    by_name: HashMap<String, McpTool>,
    info: ServerConfig,
    session_id: String,
    session: OnceLock<Session>,
}

impl std::fmt::Debug for ToolgateServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolgateServer")
            .field("tools", &self.inner.tools.len())
            .field("session", &self.inner.session_id)
            .finish_non_exhaustive()
    }
}

impl ToolgateServer {
    /// A handler for one connection. `approver` must be the runtime's approver (when it is an
    /// [`ElicitationApprover`]), so that `ask` reaches this connection's client.
    pub fn new(
        runtime: ToolRuntime,
        approver: Option<Arc<ElicitationApprover>>,
        options: ServeOptions,
    ) -> Result<Self, ServeError> {
        let project = runtime.project();
        let defined = |names: Vec<&String>| {
            names
                .into_iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut names: Vec<String> = match &options.toolset {
            Some(t) => match project.toolsets.get(t) {
                Some(set) => set.tools.clone(),
                None => {
                    return Err(ServeError::UnknownToolset(
                        t.clone(),
                        defined(project.toolsets.keys().collect()),
                    ));
                }
            },
            None => runtime.registry().names().to_vec(),
        };
        for c in options.context.iter().chain([&SILENT_CONTEXT.to_owned()]) {
            if !project.contexts.contains_key(c) {
                return Err(ServeError::UnknownContext(
                    c.clone(),
                    defined(project.contexts.keys().collect()),
                ));
            }
        }
        names.sort();
        names.dedup();
        let mut tools = Vec::with_capacity(names.len());
        let mut by_name = HashMap::with_capacity(names.len());
        for name in names {
            let Some(t) = runtime.registry().get(&name) else {
                continue;
            };
            let m = mcp_tool(&t.definition);
            tools.push(m.tool.clone());
            by_name.insert(name, m);
        }
        let info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("toolgate", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Tools governed by toolgate: every call is validated, permission-checked, \
                 scheduled, journaled and bounded by its contract. A failed call returns \
                 isError with what to do next.",
            );
        Ok(ToolgateServer {
            inner: Arc::new(Inner {
                runtime,
                approver,
                options,
                tools,
                by_name,
                info,
                session_id: format!("mcp-{}", uuid::Uuid::now_v7()),
                session: OnceLock::new(),
            }),
        })
    }

    /// The tools `tools/list` returns, in order.
    pub fn tools(&self) -> &[Tool] {
        &self.inner.tools
    }

    /// The connection's session, once the first call has made it.
    pub fn session(&self) -> Option<&Session> {
        self.inner.session.get()
    }

    /// Serves this connection over stdin/stdout until the client closes it.
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        let running = self
            .clone()
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| ServeError::Connection(e.to_string()))?;
        let quit = running.waiting().await;
        if let Some(a) = &self.inner.approver {
            a.unregister(&self.inner.session_id);
        }
        quit.map(|_| ())
            .map_err(|e| ServeError::Connection(e.to_string()))
    }

    /// The session, made at the first call: its context follows the client's capabilities.
    fn session_for(&self, peer: &Peer<RoleServer>) -> &Session {
        self.inner.session.get_or_init(|| {
            let inner = &self.inner;
            let elicits = inner.approver.is_some()
                && peer
                    .supported_elicitation_modes()
                    .contains(&ElicitationMode::Form);
            let prompts = |c: &str| {
                inner
                    .runtime
                    .project()
                    .contexts
                    .get(c)
                    .is_some_and(|p| p.ask == AskMode::Prompt)
            };
            let context = match &inner.options.context {
                Some(c) => c.clone(),
                None if elicits && prompts(ELICITING_CONTEXT) => ELICITING_CONTEXT.to_owned(),
                None => SILENT_CONTEXT.to_owned(),
            };
            if let (true, Some(a)) = (elicits, &inner.approver) {
                a.register(&inner.session_id, peer.clone());
            }
            tracing::info!(session = %inner.session_id, %context, elicits, "MCP session started");
            let session = Session::new(inner.session_id.clone(), context);
            match &inner.options.toolset {
                Some(t) => session.with_toolset(t),
                None => session,
            }
        })
    }
}

impl ServerHandler for ToolgateServer {
    fn get_info(&self) -> ServerConfig {
        self.inner.info.clone()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.inner.tools.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner.by_name.get(name).map(|m| m.tool.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(tool) = self.inner.by_name.get(request.name.as_ref()) else {
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {}", request.name),
                None,
            ));
        };
        let session = self.session_for(&context.peer);
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let call = ToolCall::new(format!("mcp-{}", context.id), request.name, arguments);
        let results = self
            .inner
            .runtime
            .execute(vec![call], session, context.ct.clone())
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        let Some(result) = results.first() else {
            return Err(ErrorData::internal_error(
                "the call produced no result",
                None,
            ));
        };
        Ok(call_result(result, tool.wraps_result).into())
    }
}
