//! [`ToolgateServer`]: one MCP connection's handler — `tools/list` from the contracts,
//! `tools/call` through the whole runtime.
//!
//! The handler is built once per connection, so its [`Session`] (created at the first call,
//! when the client's capabilities are known) keeps allow-for-session grants for exactly that
//! connection. A call runs under the request's cancellation token: the client's
//! `notifications/cancelled` (or the connection closing) cancels it, and the runtime stops the
//! tool — the command backend kills the process group.
//!
//! What is served is the operator's choice ([`Exposure`]): a toolset, every tool, or — when
//! nobody chose — only the tools that neither run processes nor write or delete. A call of a
//! tool outside that set, or of no tool at all, is an observation like any refused call: an
//! `isError` result naming the close tools of the served set, not a protocol error.
//!
//! Each connection has an id of its own (`mcp-<uuid>`), and a call's id is that id and the
//! request's (by which the approver sends the call's questions to this connection's client,
//! whatever the session id is), so request ids that start again on a new connection never meet an old call's
//! record. A key the client sends in `_meta` (`IDEMPOTENCY_KEY_MCP_META`) names the request
//! across connections and restarts instead.
//!
//! Requests run concurrently, each as its own `execute()` of the one runtime the server was
//! given: they meet in that runtime's admission table (and other processes' calls in the
//! project's lock file), so conflicting calls wait for each other in arrival order, and a
//! cancelled request that is still waiting leaves the queue without running.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{ElicitationMode, RequestContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use crate::ir::{AskMode, Effect, ExecSpec, Provider, ProviderNames, ToolDefinition};
use crate::mcp::approval::ElicitationApprover;
use crate::mcp::resources::{self, ConnectionArtifacts};
use crate::mcp::tools::{McpTool, call_result, mcp_tool};
use crate::runtime::artifacts::ArtifactOwner;
use crate::runtime::journal::IDEMPOTENCY_KEY_MCP_META;
use crate::runtime::{Principal, Session, ToolCall, ToolRuntime};

/// The context of a connection whose client can answer elicitations, unless `--context` says.
pub const ELICITING_CONTEXT: &str = crate::ir::project::DEFAULT_CONTEXT;
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

/// The name the default served set goes by in UNKNOWN_TOOL messages.
pub const READ_ONLY_SET: &str = "read-only default";

/// Which tools a server exposes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Exposure {
    /// Only tools that neither run processes nor write or delete: effect `pure` or
    /// `read_only`, and not `exec: {command: …}` (what is served when nobody chose).
    #[default]
    ReadOnly,
    /// One toolset of toolgate.yaml.
    Toolset(String),
    /// Every tool.
    All,
}

impl Exposure {
    /// Whether a tool is in the read-only default, and if not, why not.
    pub fn read_only_refusal(def: &ToolDefinition) -> Option<String> {
        if matches!(def.exec, ExecSpec::Command(_)) {
            return Some("runs a process".into());
        }
        match def.effect {
            Effect::Pure | Effect::ReadOnly => None,
            e => Some(e.as_str().to_owned()),
        }
    }
}

/// What a server exposes and how it answers `ask`.
#[derive(Clone, Debug, Default)]
pub struct ServeOptions {
    /// The tools served.
    pub exposure: Exposure,
    /// The context of every session (default: [`ELICITING_CONTEXT`] when the client declared
    /// elicitation and that context prompts, else [`SILENT_CONTEXT`]).
    pub context: Option<String>,
    /// The session id of every connection (default: the connection's own id, `mcp-<uuid>`).
    pub session: Option<String>,
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
    /// The served tools' MCP names, to map a call's name back to its contract.
    names: ProviderNames,
    /// Tools left out of the read-only default, and why.
    left_out: Vec<(String, String)>,
    info: ServerConfig,
    connection_id: String,
    session_id: String,
    session: OnceLock<Session>,
    /// The artifacts this connection's results named (readable as resources).
    artifacts: ConnectionArtifacts,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The connection (an HTTP session, or stdio) is gone: its questions have nobody to go to.
        if let Some(a) = &self.approver {
            a.unregister(&self.connection_id);
        }
    }
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
        let mut left_out = Vec::new();
        let mut names: Vec<String> = match &options.exposure {
            Exposure::Toolset(t) => match project.toolsets.get(t) {
                Some(set) => set.tools.clone(),
                None => {
                    return Err(ServeError::UnknownToolset(
                        t.clone(),
                        defined(project.toolsets.keys().collect()),
                    ));
                }
            },
            Exposure::All => runtime.registry().names().to_vec(),
            Exposure::ReadOnly => {
                let mut served = Vec::new();
                for name in runtime.registry().names() {
                    let Some(t) = runtime.registry().get(name) else {
                        continue;
                    };
                    match Exposure::read_only_refusal(&t.definition) {
                        None => served.push(name.clone()),
                        Some(why) => left_out.push((name.clone(), why)),
                    }
                }
                served
            }
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
        let provider_names = ProviderNames::new(Provider::Mcp, names.iter().map(String::as_str));
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
        let info = ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("toolgate", env!("CARGO_PKG_VERSION")))
        .with_instructions(
            "Tools governed by toolgate: every call is validated, permission-checked, \
                 scheduled, journaled and bounded by its contract. A failed call returns \
                 isError with what to do next. Output a result cuts is kept whole as an \
                 artifact, linked as a toolgate-artifact: resource that resources/read reads.",
        );
        let connection_id = format!("mcp-{}", uuid::Uuid::now_v7().hyphenated());
        let session_id = options
            .session
            .clone()
            .unwrap_or_else(|| connection_id.clone());
        Ok(ToolgateServer {
            inner: Arc::new(Inner {
                runtime,
                approver,
                options,
                tools,
                by_name,
                names: provider_names,
                left_out,
                info,
                connection_id,
                session_id,
                session: OnceLock::new(),
                artifacts: ConnectionArtifacts::default(),
            }),
        })
    }

    /// The tools `tools/list` returns, in order.
    pub fn tools(&self) -> &[Tool] {
        &self.inner.tools
    }

    /// The tools the read-only default left out, and why (empty for a chosen exposure).
    pub fn left_out(&self) -> &[(String, String)] {
        &self.inner.left_out
    }

    /// The session id of this connection's calls.
    pub fn session_id(&self) -> &str {
        &self.inner.session_id
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
            a.unregister(&self.inner.connection_id);
        }
        quit.map(|_| ())
            .map_err(|e| ServeError::Connection(e.to_string()))
    }

    /// Whether a caller may call a tool: with no principal (stdio), yes; else unless every
    /// scope-bound toolset holding the tool needs a scope the principal lacks.
    pub fn callable(&self, principal: Option<&Principal>, tool: &str) -> bool {
        let Some(p) = principal else {
            return true;
        };
        let mut guards = self
            .inner
            .runtime
            .project()
            .toolsets
            .values()
            .filter(|t| !t.scopes.is_empty() && t.tools.iter().any(|n| n == tool))
            .peekable();
        guards.peek().is_none() || guards.any(|t| p.has_scopes(&t.scopes))
    }

    /// Whose artifacts a request may list and read: this connection's session, and the
    /// principal `serve --http` authenticated for the request.
    fn artifact_owner(&self, context: &RequestContext<RoleServer>) -> ArtifactOwner {
        ArtifactOwner::new(
            self.inner.session_id.clone(),
            request_principal(context).map(|p| p.id()),
        )
    }

    /// The session, made at the first call: its context follows the client's capabilities, and
    /// its tools what the caller's scopes allow.
    fn session_for(&self, peer: &Peer<RoleServer>, principal: Option<&Principal>) -> &Session {
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
                a.register(&inner.connection_id, peer.clone());
            }
            tracing::info!(session = %inner.session_id, connection = %inner.connection_id, %context, elicits, "MCP session started");
            let session =
                Session::new(inner.session_id.clone(), context).with_artifact_resources();
            if let Some(p) = principal {
                let mut p = p.clone();
                if let Some(info) = peer.peer_info() {
                    p.client_name = info.client_info.name.clone();
                }
                tracing::info!(session = %inner.session_id, principal = %p.id(), "MCP session authenticated");
                let names: Vec<String> = {
                    let mut n: Vec<String> = inner
                        .by_name
                        .keys()
                        .filter(|t| self.callable(Some(&p), t))
                        .cloned()
                        .collect();
                    n.sort();
                    n
                };
                let label = format!("tools `{}` may call", p.id());
                return session.with_principal(p).with_tools(names, label);
            }
            match &inner.options.exposure {
                Exposure::Toolset(t) => session.with_toolset(t),
                Exposure::All => session,
                Exposure::ReadOnly => {
                    let mut names: Vec<String> = inner.by_name.keys().cloned().collect();
                    names.sort();
                    session.with_tools(names, READ_ONLY_SET)
                }
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
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let principal = request_principal(&context);
        let tools = self
            .inner
            .tools
            .iter()
            .filter(|t| self.callable(principal.as_ref(), &t.name))
            .cloned()
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let name = self.inner.names.contract_name(name);
        self.inner.by_name.get(name).map(|m| m.tool.clone())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // A tool outside the served set goes through the runtime too: the session's set makes
        // it UNKNOWN_TOOL with the close served tools, and the audit records it.
        let name = self.inner.names.contract_name(&request.name).to_owned();
        let wraps_result = self
            .inner
            .by_name
            .get(&name)
            .is_some_and(|t| t.wraps_result);
        let principal = request_principal(&context);
        let session = self.session_for(&context.peer, principal.as_ref());
        if session.principal().map(Principal::id) != principal.as_ref().map(Principal::id) {
            // Over HTTP another principal never gets here (`crate::mcp::sessions` answers 404
            // first); this holds for any other transport that carries principals.
            return Err(ErrorData::invalid_request(
                "this MCP session belongs to another principal; open a session of your own",
                None,
            ));
        }
        let key = client_key(request.meta.as_deref(), &context.meta);
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let call_id = call_id(&self.inner.connection_id, &context.id);
        let mut call = ToolCall::new(call_id, name, arguments);
        if let Some(k) = key {
            call = call.with_idempotency_key(k);
        }
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
        let mut out = call_result(result, wraps_result);
        out.content.extend(self.inner.artifacts.record(result));
        Ok(out.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let server = self.clone();
        let owner = self.artifact_owner(&context);
        let listed = tokio::task::spawn_blocking(move || {
            let store = server.inner.runtime.artifacts();
            server.inner.artifacts.list(store, &owner)
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(ListResourcesResult::with_all_items(listed))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            resources::template(),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let server = self.clone();
        let owner = self.artifact_owner(&context);
        let read = tokio::task::spawn_blocking(move || {
            let store = server.inner.runtime.artifacts();
            server.inner.artifacts.read(store, &owner, &request.uri)
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(read?.into())
    }
}

/// A call's id: its connection's id and the request's, so that [`connection_of`] finds the
/// connection again (the approver routes the call's questions by it).
fn call_id(connection_id: &str, request: &rmcp::model::RequestId) -> String {
    format!("{connection_id}-{request}")
}

/// The connection id (`mcp-<uuid>`) a call id of [`call_id`] starts with.
pub(crate) fn connection_of(call_id: &str) -> Option<&str> {
    // "mcp-" and a hyphenated UUID: 40 characters, then the request's id after a hyphen.
    const LEN: usize = 4 + 36;
    let conn = call_id.get(..LEN)?;
    (conn.starts_with("mcp-") && call_id[LEN..].starts_with('-')).then_some(conn)
}

/// The principal `serve --http` authenticated for this request, if any.
#[cfg(feature = "serve-http")]
fn request_principal(context: &RequestContext<RoleServer>) -> Option<Principal> {
    context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Principal>())
        .cloned()
}

/// Without `serve --http`, nobody is authenticated.
#[cfg(not(feature = "serve-http"))]
fn request_principal(_context: &RequestContext<RoleServer>) -> Option<Principal> {
    None
}

/// The idempotency key a client sent in the request's `_meta` (a string as it is; another JSON
/// value as its JSON text, so that it is checked like any key).
fn client_key(
    params: Option<&rmcp::model::MetaObject>,
    request: &rmcp::model::RequestMetaObject,
) -> Option<String> {
    let v = params
        .and_then(|m| m.get(IDEMPOTENCY_KEY_MCP_META))
        .or_else(|| request.get(IDEMPOTENCY_KEY_MCP_META))?;
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_id_names_its_connection() {
        let conn = format!("mcp-{}", uuid::Uuid::now_v7().hyphenated());
        for request in [
            rmcp::model::RequestId::Number(7),
            rmcp::model::RequestId::String("a-b-c".into()),
        ] {
            assert_eq!(
                connection_of(&call_id(&conn, &request)),
                Some(conn.as_str())
            );
        }
        assert_eq!(connection_of("run-1"), None);
        assert_eq!(connection_of(&conn), None);
    }
}
