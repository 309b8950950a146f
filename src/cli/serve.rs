//! `toolgate serve`: serve the project's tools (or one toolset) as an MCP server over stdio.
//!
//! stdout carries only MCP messages; everything toolgate says goes to stderr. The context
//! defaults to `interactive` when the client declared elicitation (the client answers `ask`),
//! else `headless` (every `ask` ends as APPROVAL_UNAVAILABLE); `--context` fixes it. Upstream
//! MCP servers the tools call are started on first use and closed when the client leaves.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use super::call::Failed;
use crate::mcp::{ElicitationApprover, ServeOptions, ToolgateServer};
use crate::runtime::exec::mcp::{McpExecutor, McpUpstreams};
use crate::runtime::{Backend, RuntimeBuilder};

/// How long the process waits for in-flight work once the client has gone.
const SHUTDOWN_GRACE_MS: u64 = 500;

/// Arguments of `toolgate serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Serve only this toolset of toolgate.yaml.
    #[arg(long)]
    pub toolset: Option<String>,
    /// The project file (default: ./toolgate.yaml if present).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The workspace folder (default: toolgate.yaml's `workspace`).
    #[arg(long)]
    pub workspace: Option<PathBuf>,
    /// The state folder: journal and artifacts (default: toolgate.yaml's `state_dir`).
    #[arg(long)]
    pub state_dir: Option<PathBuf>,
    /// The execution context (default: interactive when the client can answer elicitations,
    /// else headless).
    #[arg(long)]
    pub context: Option<String>,
}

/// A project's specs, checked, as a runtime builder whose MCP tools call the returned
/// upstreams; the rendered findings when the specs have errors.
pub(super) fn checked_builder(
    config: Option<PathBuf>,
) -> Result<(RuntimeBuilder, Arc<McpUpstreams>), String> {
    let checked = super::call::checked_specs(config).map_err(|Failed(m)| m)?;
    let upstreams = Arc::new(McpUpstreams::new(
        &checked.resolution.project.mcp_servers,
        &checked.loaded.root,
    ));
    let builder = RuntimeBuilder::from_checked(&checked)
        .map_err(|e| e.to_string())?
        .executor(Backend::Mcp, Arc::new(McpExecutor::new(upstreams.clone())));
    Ok((builder, upstreams))
}

/// Runs `toolgate serve`.
pub fn run(a: ServeArgs) -> miette::Result<u8> {
    let (builder, upstreams) = match checked_builder(a.config.clone()) {
        Ok(b) => b,
        Err(m) => return super::call::fail(&m),
    };
    let mut builder = match &a.workspace {
        Some(w) => builder.workspace(w),
        None => builder,
    };
    if let Some(s) = &a.state_dir {
        builder = builder.state_dir(s);
    }
    // Like `call` and `run`: the journal is durable (`<state_dir>/journal.db`), so a call that
    // may have acted before a crash is never run twice.
    let builder = builder.sqlite_journal();
    let approver = Arc::new(ElicitationApprover::new());
    let runtime = match builder.approver(approver.clone()).build() {
        Ok(r) => r,
        Err(e) => return super::call::fail(&e.to_string()),
    };
    let runtime_for_server = runtime.clone();
    let options = ServeOptions {
        toolset: a.toolset,
        context: a.context,
    };
    let server = match ToolgateServer::new(runtime_for_server, Some(approver), options) {
        Ok(s) => s,
        Err(e) => return super::call::fail(&e.to_string()),
    };
    eprintln!(
        "toolgate serve: {} tool(s) over MCP on stdio (workspace {})",
        server.tools().len(),
        runtime.workspace().root().display()
    );
    // One thread: a server has one client, its calls wait on processes, upstreams and the
    // journal's writer thread rather than on CPU, and handing each message between worker
    // threads cost about a fifth of the server's CPU per call (benches/mcp/bench.py).
    // Blocking work (file builtins, process reaping) still goes to tokio's blocking pool.
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return super::call::fail(&format!("cannot start the async runtime: {e}")),
    };
    let served = rt.block_on(async {
        let r = tokio::select! {
            r = server.serve_stdio() => r.map_err(|e| e.to_string()),
            _ = tokio::signal::ctrl_c() => Ok(()),
        };
        upstreams.close().await;
        r
    });
    rt.shutdown_timeout(Duration::from_millis(SHUTDOWN_GRACE_MS));
    match served {
        Ok(()) => Ok(super::EXIT_OK),
        Err(m) => super::call::fail(&m),
    }
}
