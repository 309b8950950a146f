//! Execution backends behind one [`Executor`] trait, and the dispatch from a tool's `exec` to
//! its backend.
//!
//! An executor receives an [`AuthorizedCall`] by value — a call that went through validation and
//! permission, which nothing outside [`crate::runtime::permission`] can build — and returns a
//! [`RawOutcome`]: the facts of one attempt. It never builds a
//! [`crate::runtime::ToolResult`]; normalization does. Timeouts and cancellation reach it through
//! [`ExecContext::cancel`]; the pipeline decides whether a stop was a timeout or a cancel.
//!
//! Backends: [`builtin`] (toolgate's file tools), [`command`] (a subprocess from an argv
//! template, run by [`spawn`] under the [`sandbox`] exec shim, its output kept by [`capture`]),
//! [`handler`] (a Rust handler the embedding program bound) and `mcp` (tools of upstream MCP
//! servers, with the `mcp` feature; without it [`McpUnavailable`]). Each can be replaced with
//! [`crate::runtime::RuntimeBuilder::executor`].

pub mod builtin;
pub mod capture;
pub mod command;
pub mod handler;
#[cfg(feature = "http")]
pub mod http;
#[cfg(feature = "mcp")]
pub mod mcp;
mod outcome;
pub mod sandbox;
pub mod spawn;
#[cfg(feature = "mcp")]
mod upstream;
#[cfg(feature = "mcp")]
pub mod upstream_cap;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::ir::{ErrorType, ExecSpec};
use crate::runtime::artifacts::{ArtifactRedaction, ArtifactRef, ArtifactStore};
use crate::runtime::exec::sandbox::Protection;
use crate::runtime::permission::AuthorizedCall;
use crate::runtime::workspace::Workspace;

/// The kinds of backend, one executor each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    /// Tools built into toolgate.
    Builtin,
    /// Command tools: processes from argv templates.
    Command,
    /// Tools of upstream MCP servers.
    Mcp,
    /// Handlers bound by the embedding program.
    Handler,
    /// HTTP requests.
    Http,
}

impl Backend {
    /// The backend a tool's `exec` selects.
    pub fn of(exec: &ExecSpec) -> Backend {
        match exec {
            ExecSpec::Builtin { .. } => Backend::Builtin,
            ExecSpec::Command(_) => Backend::Command,
            ExecSpec::Mcp { .. } => Backend::Mcp,
            ExecSpec::Handler { .. } => Backend::Handler,
            ExecSpec::Http(_) => Backend::Http,
        }
    }

    /// Every backend.
    pub const ALL: [Backend; 5] = [
        Backend::Builtin,
        Backend::Command,
        Backend::Mcp,
        Backend::Handler,
        Backend::Http,
    ];

    /// Its name in traces (the spec key of its tools' `exec`).
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Builtin => "builtin",
            Backend::Command => "command",
            Backend::Mcp => "mcp",
            Backend::Handler => "handler",
            Backend::Http => "http",
        }
    }
}

/// What an attempt may use besides the call.
#[derive(Clone, Debug)]
pub struct ExecContext {
    /// The session.
    pub session_id: String,
    /// The principal calling in the session (`subject@issuer`), when `serve --http`
    /// authenticated one.
    pub principal: Option<String>,
    /// The session's context (`interactive`, `ci`, …), which CEL sees as `context`.
    pub context: String,
    /// The key the far side can deduplicate on; stable across retries and recovery.
    pub idempotency_key: String,
    /// Cancelled when the attempt times out or the caller cancels; stop promptly and return
    /// whatever partial output there is.
    pub cancel: CancellationToken,
    /// The workspace.
    pub workspace: Arc<Workspace>,
    /// Where large outputs go.
    pub artifacts: ArtifactStore,
}

impl ExecContext {
    /// Who may read the artifacts this attempt stores.
    pub fn artifact_owner(&self) -> crate::runtime::artifacts::ArtifactOwner {
        crate::runtime::artifacts::ArtifactOwner::new(
            self.session_id.clone(),
            self.principal.clone(),
        )
    }
}

/// The facts of one attempt, before normalization.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RawOutcome {
    /// `None` when the tool did what was asked; else why not.
    pub failure: Option<(ErrorType, String)>,
    /// A one-line summary the tool offers (e.g. "3 failed, 81 passed").
    pub summary: Option<String>,
    /// The structured result.
    pub structured: Option<Value>,
    /// The text the model should read, before output limits.
    pub text: Option<String>,
    /// A process's exit code.
    pub exit_code: Option<i32>,
    /// Whether the tool itself cut its output.
    pub truncated: bool,
    /// Artifacts the tool stored itself.
    pub artifacts: Vec<ArtifactRef>,
    /// The sandbox protections that were in force (command tools).
    pub protections: Vec<Protection>,
    /// What the whole output is, for normalization to keep when the model's view of it is cut.
    pub source: OutputSource,
    /// How long the far side asked the caller to wait before trying again (`Retry-After`):
    /// the runtime's retry waits at least this long.
    pub retry_after: Option<std::time::Duration>,
}

/// What the whole output of an attempt is, beside the text the model reads.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum OutputSource {
    /// `text` is the whole output (builtins, handlers, MCP upstreams).
    #[default]
    Text,
    /// `text` was formatted from a process's streams. A stream too large to hold is already in
    /// `artifacts` (or could not be kept, as the summary says); `held` are the streams the
    /// attempt holds whole.
    Streams {
        /// Whole streams not stored yet.
        held: Vec<HeldStream>,
        /// Whether the formatter left part of the output out of `text`.
        left_out: bool,
    },
}

/// One whole output stream of a process, held in memory.
#[derive(Clone, Debug, PartialEq)]
pub struct HeldStream {
    /// The bytes, as the process wrote them.
    pub bytes: Vec<u8>,
    /// Their media type (`text/plain; stream=stdout`).
    pub media_type: &'static str,
    /// What is redacted whenever a part of them is shown.
    pub redact: ArtifactRedaction,
}

impl RawOutcome {
    /// A success with a structured result and the text the model reads.
    pub fn success(structured: Value, text: impl Into<String>) -> Self {
        RawOutcome {
            structured: Some(structured),
            text: Some(text.into()),
            ..RawOutcome::default()
        }
    }

    /// A failure.
    pub fn failure(error_type: ErrorType, message: impl Into<String>) -> Self {
        RawOutcome {
            failure: Some((error_type, message.into())),
            ..RawOutcome::default()
        }
    }

    /// Sets the summary.
    pub fn with_summary(mut self, summary: impl Into<String>) -> Self {
        self.summary = Some(summary.into());
        self
    }
}

/// A failed attempt in brief: what builtins and request preparation return on their error
/// paths (small, unlike a whole [`RawOutcome`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExecFailure {
    /// The kind of failure.
    pub error_type: ErrorType,
    /// What the model is told.
    pub message: String,
}

impl ExecFailure {
    /// A failure.
    pub fn new(error_type: ErrorType, message: impl Into<String>) -> Self {
        ExecFailure {
            error_type,
            message: message.into(),
        }
    }
}

impl From<ExecFailure> for RawOutcome {
    fn from(f: ExecFailure) -> Self {
        RawOutcome::failure(f.error_type, f.message)
    }
}

/// The future an executor returns.
pub type ExecFuture<'a> = Pin<Box<dyn Future<Output = RawOutcome> + Send + 'a>>;

/// Runs authorized calls of one backend.
pub trait Executor: Send + Sync + 'static {
    /// Runs one attempt.
    fn run<'a>(&'a self, call: AuthorizedCall, ctx: ExecContext) -> ExecFuture<'a>;
}

impl<E: Executor + ?Sized> Executor for Arc<E> {
    fn run<'a>(&'a self, call: AuthorizedCall, ctx: ExecContext) -> ExecFuture<'a> {
        (**self).run(call, ctx)
    }
}

/// The backend of `exec: {mcp: …}` tools in a build without the `mcp` feature: every call
/// fails with RUNTIME_EXCEPTION, saying so.
#[cfg(not(feature = "mcp"))]
#[derive(Clone, Copy, Debug, Default)]
pub struct McpUnavailable;

#[cfg(not(feature = "mcp"))]
impl Executor for McpUnavailable {
    fn run<'a>(&'a self, call: AuthorizedCall, _ctx: ExecContext) -> ExecFuture<'a> {
        let (server, tool) = match &call.definition().exec {
            ExecSpec::Mcp { server, tool } => (server.clone(), tool.clone()),
            other => (format!("{other:?}"), String::new()),
        };
        Box::pin(async move {
            RawOutcome::failure(
                ErrorType::RuntimeException,
                format!(
                    "`{}` is served by the MCP server `{server}` (tool `{tool}`), and this build of toolgate has no MCP support (feature `mcp`); use another tool",
                    call.definition().name
                ),
            )
        })
    }
}

/// The backend of `exec: {http: …}` tools in a build without the `http` feature: every call
/// fails with RUNTIME_EXCEPTION, saying so.
#[cfg(not(feature = "http"))]
#[derive(Clone, Copy, Debug, Default)]
pub struct HttpUnavailable;

#[cfg(not(feature = "http"))]
impl Executor for HttpUnavailable {
    fn run<'a>(&'a self, call: AuthorizedCall, _ctx: ExecContext) -> ExecFuture<'a> {
        Box::pin(async move {
            RawOutcome::failure(
                ErrorType::RuntimeException,
                format!(
                    "`{}` is an HTTP tool, and this build of toolgate has no HTTP support (feature `http`); use another tool",
                    call.definition().name
                ),
            )
        })
    }
}

/// The default executor of `exec: {http: …}` tools.
#[cfg(feature = "http")]
pub(crate) fn default_http_executor(
    project: &crate::ir::ProjectConfig,
    root: &std::path::Path,
) -> Arc<dyn Executor> {
    Arc::new(http::HttpExecutor::new(project.network.clone(), root))
}

/// The default executor of `exec: {http: …}` tools: [`HttpUnavailable`] in this build.
#[cfg(not(feature = "http"))]
pub(crate) fn default_http_executor(
    _project: &crate::ir::ProjectConfig,
    _root: &std::path::Path,
) -> Arc<dyn Executor> {
    Arc::new(HttpUnavailable)
}

/// What upstream servers are sandboxed against: the runtime's workspace, state folder,
/// protected set and exec shim.
pub(crate) struct UpstreamContext {
    pub(crate) workspace: std::path::PathBuf,
    pub(crate) state_dir: std::path::PathBuf,
    pub(crate) protected: Arc<crate::policy::ProtectedSet>,
    /// The policy files, bound read-only in every server's view as in a command tool's.
    pub(crate) policy: Option<Arc<crate::policy::PolicyFiles>>,
    pub(crate) shim: std::path::PathBuf,
}

/// The default executor of `exec: {mcp: …}` tools: the project's upstream servers (started on
/// first use, under the exec shim), or [`McpUnavailable`] without the `mcp` feature.
#[cfg(feature = "mcp")]
pub(crate) fn default_mcp_executor(
    project: &crate::ir::ProjectConfig,
    root: &std::path::Path,
    context: UpstreamContext,
) -> Arc<dyn Executor> {
    let upstreams =
        mcp::McpUpstreams::new(&project.mcp_servers, root).with_sandbox(mcp::UpstreamSandbox {
            profiles: project.sandbox_profiles.clone(),
            workspace: context.workspace,
            state_dir: Some(context.state_dir),
            protected: Some(context.protected),
            policy: context.policy,
            shim: context.shim,
        });
    Arc::new(mcp::McpExecutor::new(Arc::new(upstreams)))
}

/// The default executor of `exec: {mcp: …}` tools: [`McpUnavailable`] in this build.
#[cfg(not(feature = "mcp"))]
pub(crate) fn default_mcp_executor(
    _project: &crate::ir::ProjectConfig,
    _root: &std::path::Path,
    _context: UpstreamContext,
) -> Arc<dyn Executor> {
    Arc::new(McpUnavailable)
}

/// One executor per backend.
#[derive(Clone)]
pub(crate) struct Dispatch {
    pub(crate) builtin: Arc<dyn Executor>,
    pub(crate) command: Arc<dyn Executor>,
    pub(crate) mcp: Arc<dyn Executor>,
    pub(crate) handler: Arc<dyn Executor>,
    pub(crate) http: Arc<dyn Executor>,
}

impl Dispatch {
    /// The executor of a backend.
    pub(crate) fn get(&self, backend: Backend) -> &Arc<dyn Executor> {
        match backend {
            Backend::Builtin => &self.builtin,
            Backend::Command => &self.command,
            Backend::Mcp => &self.mcp,
            Backend::Handler => &self.handler,
            Backend::Http => &self.http,
        }
    }

    /// Replaces one backend's executor.
    pub(crate) fn set(&mut self, backend: Backend, executor: Arc<dyn Executor>) {
        match backend {
            Backend::Builtin => self.builtin = executor,
            Backend::Command => self.command = executor,
            Backend::Mcp => self.mcp = executor,
            Backend::Handler => self.handler = executor,
            Backend::Http => self.http = executor,
        }
    }
}
