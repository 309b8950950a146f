//! The MCP upstream backend: `exec: {mcp: {server, tool}}` tools run on MCP servers that
//! toolgate.yaml declares under `mcp_servers`, started as child processes (stdio).
//!
//! An upstream is started lazily, on the first call that needs it, and its one connection is
//! shared by every later call (requests are multiplexed by JSON-RPC id). A server whose
//! connection has closed — it crashed, or exited — is started again on the next call. Each call
//! reached this executor through validation, permission and scheduling like any other tool; the
//! executor only forwards it:
//!
//! - the arguments go out as `tools/call` arguments, the call's idempotency key as
//!   `_meta["io.toolgate/idempotency-key"]`, so an upstream that deduplicates can;
//! - an `isError: true` result is a tool failure with the upstream's text: RUNTIME_EXCEPTION, or
//!   UPSTREAM_ERROR when the upstream names an error type in `_meta["io.toolgate/error_type"]` —
//!   the name kept in the message (`the MCP server `s` reported POLICY_DENIED: …`), never taken
//!   as toolgate's own verdict: an upstream cannot make its failure read as a toolgate policy
//!   denial or an unknown outcome, to the model or to the journal;
//! - an answer longer than the transport reads in one message (rmcp's line cap, 16 MiB) fails
//!   the call at once as UPSTREAM_ERROR naming its size and the cap (see
//!   [`crate::runtime::exec::upstream`]); the connection is closed and the server is started
//!   again on the next call;
//! - a JSON-RPC error is INVALID_ARGUMENTS (`-32602`) or RUNTIME_EXCEPTION (anything else);
//! - a server that cannot start is PROCESS_ERROR; one that dies during a call is
//!   PROCESS_ERROR for a read-only tool and UNKNOWN_OUTCOME for any other (it may have acted);
//! - a timeout or cancel sends `notifications/cancelled` for the request and stops waiting.
//!
//! A server runs under the exec shim like any command tool (`toolgate-shim __exec-shim PLAN --
//! COMMAND…`, its stdio passed through to rmcp's child-process transport), under the sandbox
//! profile its `sandbox:` key names — by default none, which is the `none` profile's view: the
//! host's file system with the protected files masked, network allowed. The child's environment
//! starts empty and gets only `env.inherit` and `env.set`; its stderr is toolgate's stderr (never
//! stdout, which an MCP server's own stdout may be).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use indexmap::IndexMap;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientConfig, ClientRequest, ContentBlock, ErrorCode, RequestMetaObject, ServerResult, Tool,
};
use rmcp::service::{PeerRequestOptions, RunningService, ServiceError};
use rmcp::{Peer, RoleClient};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::ir::{ErrorType, ExecSpec, McpServer};
use crate::runtime::exec::sandbox::cgroup::ExecCgroups;
use crate::runtime::exec::spawn::default_shim;
pub use crate::runtime::exec::upstream::{UpstreamSandbox, connect};
use crate::runtime::exec::upstream_cap::{OversizeRecord, Oversized};
use crate::runtime::exec::{ExecContext, ExecFailure, ExecFuture, Executor, RawOutcome};
use crate::runtime::permission::AuthorizedCall;

/// The `_meta` key in which a result names its toolgate error type (toolgate's own server sets
/// it; an upstream toolgate's failures keep their type through a chain of servers).
pub const ERROR_TYPE_META_KEY: &str = "io.toolgate/error_type";

/// How long an upstream gets to start and answer `initialize`: a server that takes longer is
/// taken as broken (PROCESS_ERROR) rather than left to eat the call's whole budget.
pub const UPSTREAM_START_TIMEOUT_MS: u64 = 30_000;

/// An upstream that cannot be reached or started.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UpstreamError {
    /// toolgate.yaml declares no server of that name.
    #[error("toolgate.yaml declares no MCP server `{0}`")]
    Undeclared(String),
    /// The server's command line is empty.
    #[error("the MCP server `{0}` has an empty command")]
    EmptyCommand(String),
    /// Its sandbox profile cannot be put in force here.
    #[error("the MCP server `{server}` was not started: {message}")]
    Sandbox {
        /// The server.
        server: String,
        /// Why.
        message: String,
    },
    /// The process could not be started.
    #[error("the MCP server `{server}` could not be started ({command}): {source}")]
    Spawn {
        /// The server.
        server: String,
        /// Its command line.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// The process started but the MCP handshake failed.
    #[error("the MCP server `{server}` did not complete the MCP handshake: {message}")]
    Handshake {
        /// The server.
        server: String,
        /// What went wrong.
        message: String,
    },
    /// The handshake did not finish in time.
    #[error(
        "the MCP server `{0}` did not answer `initialize` within {UPSTREAM_START_TIMEOUT_MS} ms"
    )]
    StartTimeout(String),
    /// An answer was longer than one message may be.
    #[error("the MCP server `{server}` answered with {message}")]
    Oversized {
        /// The server.
        server: String,
        /// Its size and the cap.
        message: String,
    },
    /// A request failed.
    #[error("the MCP server `{server}`: {source}")]
    Request {
        /// The server.
        server: String,
        /// The failure.
        source: ServiceError,
    },
}

/// A started server: its connection, the process id of its shim, and the cgroups the shim's
/// tree lives in (removed when the connection goes).
struct Connection {
    service: RunningService<RoleClient, ClientConfig>,
    pid: Option<u32>,
    oversize: OversizeRecord,
    cgroups: Option<ExecCgroups>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        // Removing waits for the cgroups to empty: not on an async worker.
        if let Some(mut c) = self.cgroups.take() {
            std::thread::spawn(move || c.remove());
        }
    }
}

impl Connection {
    fn is_alive(&self) -> bool {
        !self.service.is_closed() && !self.service.is_transport_closed()
    }
}

/// One declared server and its connection, if started.
struct Slot {
    config: McpServer,
    conn: tokio::sync::Mutex<Option<Connection>>,
}

/// The upstream MCP servers of a project: started on first use, shared, restarted when dead.
pub struct McpUpstreams {
    root: PathBuf,
    slots: HashMap<String, Slot>,
    sandbox: UpstreamSandbox,
}

impl std::fmt::Debug for McpUpstreams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<&String> = self.slots.keys().collect();
        names.sort();
        f.debug_struct("McpUpstreams")
            .field("root", &self.root)
            .field("servers", &names)
            .finish()
    }
}

impl McpUpstreams {
    /// The servers toolgate.yaml declares; `root` is the project folder their `cwd` is
    /// relative to. Nothing starts until a call needs it.
    /// They run under the exec shim found beside this executable (`default_shim`), with
    /// `root` as the workspace whose protected files are masked and no profiles but the
    /// default (see [`McpUpstreams::with_sandbox`]).
    pub fn new(servers: &IndexMap<String, McpServer>, root: impl AsRef<Path>) -> Self {
        McpUpstreams {
            sandbox: UpstreamSandbox {
                profiles: IndexMap::new(),
                workspace: root.as_ref().to_path_buf(),
                state_dir: None,
                protected: None,
                policy: None,
                shim: default_shim(),
            },
            root: root.as_ref().to_path_buf(),
            slots: servers
                .iter()
                .map(|(name, config)| {
                    let slot = Slot {
                        config: config.clone(),
                        conn: tokio::sync::Mutex::new(None),
                    };
                    (name.clone(), slot)
                })
                .collect(),
        }
    }

    /// Sandboxes the servers this way (profiles, workspace, state folder, shim).
    pub fn with_sandbox(mut self, sandbox: UpstreamSandbox) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// Starts the servers under another exec shim (`toolgate-shim` or `toolgate`).
    pub fn with_shim(mut self, shim: impl Into<PathBuf>) -> Self {
        self.sandbox.shim = shim.into();
        self
    }

    /// The live connection to a server, starting (or restarting) it when needed.
    pub async fn peer(&self, server: &str) -> Result<Peer<RoleClient>, UpstreamError> {
        let slot = self
            .slots
            .get(server)
            .ok_or_else(|| UpstreamError::Undeclared(server.to_owned()))?;
        let mut conn = slot.conn.lock().await;
        if let Some(c) = conn.as_ref() {
            if c.is_alive() {
                return Ok(c.service.peer().clone());
            }
            tracing::warn!(server, "the MCP upstream has exited; starting it again");
        }
        let started = connect(server, &slot.config, &self.root, &self.sandbox).await?;
        let peer = started.service.peer().clone();
        *conn = Some(Connection {
            service: started.service,
            pid: started.pid,
            oversize: started.oversize,
            cgroups: started.cgroups,
        });
        Ok(peer)
    }

    /// The process id of a server's current process, if one was started and is connected.
    pub async fn pid(&self, server: &str) -> Option<u32> {
        let slot = self.slots.get(server)?;
        let conn = slot.conn.lock().await;
        conn.as_ref().filter(|c| c.is_alive()).and_then(|c| c.pid)
    }

    /// Every tool a server lists (all pages).
    pub async fn list_tools(&self, server: &str) -> Result<Vec<Tool>, UpstreamError> {
        let peer = self.peer(server).await?;
        match peer.list_all_tools().await {
            Ok(tools) => Ok(tools),
            Err(source) => Err(match self.oversized(server).await {
                Some(o) => UpstreamError::Oversized {
                    server: server.to_owned(),
                    message: o.to_string(),
                },
                None => UpstreamError::Request {
                    server: server.to_owned(),
                    source,
                },
            }),
        }
    }

    /// Closes every connection; the servers see their stdin close and exit (or are killed).
    pub async fn close(&self) {
        for slot in self.slots.values() {
            if let Some(mut c) = slot.conn.lock().await.take() {
                let _ = c.service.close().await;
            }
        }
    }

    /// The oversized message that ended a server's current connection, if one did.
    async fn oversized(&self, server: &str) -> Option<Oversized> {
        let slot = self.slots.get(server)?;
        let conn = slot.conn.lock().await;
        conn.as_ref().and_then(|c| c.oversize.get())
    }

    /// Forgets a connection that failed mid-call, so the next call starts the server again.
    async fn discard(&self, server: &str) {
        if let Some(slot) = self.slots.get(server) {
            let mut conn = slot.conn.lock().await;
            if conn.as_ref().is_some_and(|c| !c.is_alive()) {
                *conn = None;
            }
        }
    }
}

/// The executor of `exec: {mcp: …}` tools.
#[derive(Debug)]
pub struct McpExecutor {
    upstreams: Arc<McpUpstreams>,
}

impl McpExecutor {
    /// An executor over a project's upstreams.
    pub fn new(upstreams: Arc<McpUpstreams>) -> Self {
        McpExecutor { upstreams }
    }

    /// The upstreams it calls.
    pub fn upstreams(&self) -> &Arc<McpUpstreams> {
        &self.upstreams
    }
}

impl Executor for McpExecutor {
    fn run<'a>(&'a self, call: AuthorizedCall, ctx: ExecContext) -> ExecFuture<'a> {
        Box::pin(async move {
            let def = call.definition();
            let ExecSpec::Mcp { server, tool } = &def.exec else {
                return RawOutcome::failure(
                    ErrorType::RuntimeException,
                    format!("{} is not an MCP tool", def.name),
                );
            };
            let read_only = def.effect.is_read_only();
            let peer = tokio::select! {
                p = self.upstreams.peer(server) => p,
                () = ctx.cancel.cancelled() => {
                    return RawOutcome::failure(
                        ErrorType::Cancelled,
                        format!("{} was stopped while its MCP server `{server}` was starting", def.name),
                    );
                }
            };
            let peer = match peer {
                Ok(p) => p,
                Err(e) => return ExecFailure::new(ErrorType::ProcessError, e.to_string()).into(),
            };
            let arguments = match call.arguments() {
                Value::Object(m) => m.clone(),
                _ => serde_json::Map::new(),
            };
            let mut meta = RequestMetaObject::default();
            meta.insert(
                crate::runtime::journal::IDEMPOTENCY_KEY_MCP_META.to_owned(),
                Value::String(ctx.idempotency_key.clone()),
            );
            let mut params = CallToolRequestParams::new(tool.clone()).with_arguments(arguments);
            params.meta = Some(meta);
            let outcome = call_upstream(&peer, params, &ctx.cancel).await;
            match outcome {
                Ok(r) => from_result(r, def.result.is_some(), server),
                Err(CallError::Stopped) => RawOutcome::failure(
                    ErrorType::Cancelled,
                    format!(
                        "{} was stopped; the MCP server `{server}` was told to cancel it",
                        def.name
                    ),
                ),
                Err(CallError::Failed(ServiceError::McpError(e))) => {
                    let t = if e.code == ErrorCode::INVALID_PARAMS {
                        ErrorType::InvalidArguments
                    } else {
                        ErrorType::RuntimeException
                    };
                    RawOutcome::failure(
                        t,
                        format!("the MCP server `{server}` refused `{tool}`: {}", e.message),
                    )
                }
                Err(CallError::Failed(e)) => {
                    let oversized = self.upstreams.oversized(server).await;
                    self.upstreams.discard(server).await;
                    if let Some(o) = oversized {
                        // It answered, in a message nobody can read: not an unknown outcome
                        // of toolgate's making, and nothing a smaller budget would change.
                        return RawOutcome::failure(
                            ErrorType::UpstreamError,
                            format!(
                                "the MCP server `{server}` sent {o} while `{tool}` waited for its answer; the message was dropped, the connection closed, and the server will be started again on the next call"
                            ),
                        );
                    }
                    let (t, what) = if read_only {
                        (ErrorType::ProcessError, "")
                    } else {
                        (
                            ErrorType::UnknownOutcome,
                            "; it may or may not have taken effect",
                        )
                    };
                    RawOutcome::failure(
                        t,
                        format!(
                            "the MCP server `{server}` failed during `{tool}` ({e}){what}; it will be started again on the next call"
                        ),
                    )
                }
            }
        })
    }
}

/// Why an upstream call has no result.
enum CallError {
    /// The token fired (the upstream has been told).
    Stopped,
    /// The request failed.
    Failed(ServiceError),
}

/// An upstream call that ends when the token fires, with `notifications/cancelled`.
async fn call_upstream(
    peer: &Peer<RoleClient>,
    params: CallToolRequestParams,
    cancel: &CancellationToken,
) -> Result<CallToolResult, CallError> {
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = peer
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await
        .map_err(CallError::Failed)?;
    let id = handle.id.clone();
    tokio::select! {
        r = handle.await_response() => match r {
            Ok(ServerResult::CallToolResult(r)) => Ok(r),
            Ok(_) => Err(CallError::Failed(ServiceError::UnexpectedResponse)),
            Err(e) => Err(CallError::Failed(e)),
        },
        () = cancel.cancelled() => {
            let note = CancelledNotificationParam::new(
                Some(id),
                Some("toolgate stopped the call (timeout or cancel)".to_owned()),
            );
            let _ = peer.notify_cancelled(note).await;
            Err(CallError::Stopped)
        }
    }
}

/// An upstream result as the facts of an attempt. The structured content is kept only when the
/// contract declares a `result` (it is then checked against it); otherwise the model reads the
/// text, bounded by the output policy, and nothing unbounded rides along.
fn from_result(r: CallToolResult, declares_result: bool, server: &str) -> RawOutcome {
    let text = content_text(&r.content);
    if r.is_error == Some(true) {
        let message = if text.trim().is_empty() {
            "the upstream tool reported an error without a message".to_owned()
        } else {
            text
        };
        let named = r
            .meta
            .as_ref()
            .and_then(|m| m.get(ERROR_TYPE_META_KEY))
            .filter(|v| !v.is_null());
        return match named {
            None => RawOutcome::failure(ErrorType::RuntimeException, message),
            Some(v) => RawOutcome::failure(
                ErrorType::UpstreamError,
                format!(
                    "the MCP server `{server}` reported {}: {message}",
                    upstream_type(v)
                ),
            ),
        };
    }
    let structured = if declares_result {
        r.structured_content
            .or_else(|| serde_json::from_str::<Value>(text.trim()).ok())
    } else {
        None
    };
    RawOutcome {
        structured,
        text: Some(text),
        ..RawOutcome::default()
    }
}

/// The error type an upstream named, as it may be shown: a short name of letters, digits, `_`,
/// `.` and `-` as it is (`POLICY_DENIED`), anything else said to be unreadable — it is the
/// upstream's word, quoted beside toolgate's own verdict, never in its place.
fn upstream_type(v: &Value) -> String {
    const LONGEST: usize = 64;
    match v.as_str() {
        Some(s)
            if !s.is_empty()
                && s.len() <= LONGEST
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')) =>
        {
            s.to_owned()
        }
        _ => "an error type toolgate does not show (not a short name)".to_owned(),
    }
}

/// The text of a result's content blocks; other blocks are named, not inlined.
fn content_text(blocks: &[ContentBlock]) -> String {
    let mut out = String::new();
    for b in blocks {
        let v = serde_json::to_value(b).unwrap_or(Value::Null);
        let piece = match v.get("type").and_then(Value::as_str) {
            Some("text") => v
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            Some("resource_link") => format!(
                "[resource link: {}]",
                v.get("uri").and_then(Value::as_str).unwrap_or("?")
            ),
            Some("resource") => match v.pointer("/resource/text").and_then(Value::as_str) {
                Some(t) => t.to_owned(),
                None => format!(
                    "[resource: {}]",
                    v.pointer("/resource/uri")
                        .and_then(Value::as_str)
                        .unwrap_or("?")
                ),
            },
            Some(kind) => format!(
                "[{kind}: {}]",
                v.get("mimeType").and_then(Value::as_str).unwrap_or("?")
            ),
            None => String::new(),
        };
        if !out.is_empty() && !piece.is_empty() {
            out.push('\n');
        }
        out.push_str(&piece);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_results_keep_their_text_and_the_upstreams_type_is_only_quoted() {
        let mut r = CallToolResult::error(vec![ContentBlock::text("no such repo")]);
        let got = from_result(r.clone(), true, "git");
        assert_eq!(
            got.failure,
            Some((ErrorType::RuntimeException, "no such repo".to_owned()))
        );
        // An upstream naming toolgate's own verdicts gets UPSTREAM_ERROR, its word quoted.
        for (named, shown) in [
            (Value::String("POLICY_DENIED".into()), "POLICY_DENIED"),
            (Value::String("UNKNOWN_OUTCOME".into()), "UNKNOWN_OUTCOME"),
            (
                Value::String("X\u{1b}[2J\u{202e}".into()),
                "an error type toolgate does not show (not a short name)",
            ),
            (
                serde_json::json!({"a": 1}),
                "an error type toolgate does not show (not a short name)",
            ),
        ] {
            let mut meta = rmcp::model::MetaObject::new();
            meta.insert(ERROR_TYPE_META_KEY.into(), named);
            r.meta = Some(meta);
            assert_eq!(
                from_result(r.clone(), true, "git").failure,
                Some((
                    ErrorType::UpstreamError,
                    format!("the MCP server `git` reported {shown}: no such repo")
                ))
            );
        }
    }

    #[test]
    fn success_prefers_structured_content_then_json_text() {
        let mut r = CallToolResult::success(vec![ContentBlock::text("{\"a\": 1}")]);
        assert_eq!(
            from_result(r.clone(), true, "s").structured,
            Some(serde_json::json!({"a": 1}))
        );
        r.structured_content = Some(serde_json::json!({"b": 2}));
        assert_eq!(
            from_result(r.clone(), true, "s").structured,
            Some(serde_json::json!({"b": 2}))
        );
        // Without a declared result, only the (bounded) text reaches the model.
        assert_eq!(from_result(r, false, "s").structured, None);
    }
}
