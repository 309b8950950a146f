//! `toolgate serve`: serve the project's tools as an MCP server over stdio.
//!
//! What is served is the operator's choice: `--toolset NAME`, else toolgate.yaml's
//! `serve: {toolset: NAME}`, else `--all`; without a choice, only the tools that neither run
//! processes nor write or delete. The startup line on stderr says which tools are served and
//! why.
//!
//! stdout carries only MCP messages; everything toolgate says goes to stderr. The context
//! defaults to `interactive` when the client declared elicitation (the client answers `ask`),
//! else `headless` (every `ask` ends as APPROVAL_UNAVAILABLE); `--context` fixes it. Upstream
//! MCP servers the tools call are started on first use and closed when the client leaves.
//!
//! Several `serve` processes (and `call`, `run`) may use one project's journal at once. When
//! the client leaves, or on SIGINT/SIGTERM, the journal is flushed (the audit's last batch
//! included) before the process exits.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use super::call::Failed;
use crate::mcp::{ElicitationApprover, Exposure, ServeOptions, ToolgateServer};
use crate::runtime::RuntimeBuilder;
use crate::runtime::exec::mcp::{McpExecutor, McpUpstreams};
use crate::runtime::extend::Backend;

/// How long the process waits for in-flight work once the client has gone.
const SHUTDOWN_GRACE_MS: u64 = 500;

/// Arguments of `toolgate serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Serve this toolset of toolgate.yaml (default: toolgate.yaml's `serve.toolset`).
    #[arg(long)]
    pub toolset: Option<String>,
    /// Serve every tool, those that run processes, write or delete included.
    #[arg(long, conflicts_with = "toolset")]
    pub all: bool,
    /// The session id of every connection's calls (default: one per connection).
    #[arg(long)]
    pub session: Option<String>,
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
    /// Serve over Streamable HTTP on this address (`127.0.0.1:8080`) instead of stdio; other
    /// than loopback only with `serve.auth` in toolgate.yaml.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,
    /// The journal's PostgreSQL server, shared with other hosts (`postgres://…`; default:
    /// TOOLGATE_JOURNAL, else toolgate.yaml's `journal`, else SQLite in the state folder).
    #[arg(long, value_name = "URL")]
    pub journal: Option<String>,
    #[command(flatten)]
    pub trust: super::trust::TrustFlags,
}

/// A project's specs, checked, as a runtime builder whose MCP tools call the returned
/// upstreams; the rendered findings when the specs have errors.
pub(super) fn checked_builder(
    config: Option<PathBuf>,
    trust: &super::trust::TrustFlags,
    context: Option<&str>,
    can_ask: bool,
) -> Result<
    (
        RuntimeBuilder,
        Arc<McpUpstreams>,
        PathBuf,
        Option<crate::ir::project::JournalSetting>,
    ),
    String,
> {
    let checked = super::call::checked_specs(config.clone()).map_err(|Failed(m)| m)?;
    // The policy is checked once, here: the server keeps what it loaded now for its lifetime
    // (nothing reloads it), so a policy changed while it runs is obeyed by no call of it.
    let trust_context = if can_ask { context } else { Some("headless") };
    super::call::trust_checked(&checked, config.as_deref(), trust, trust_context)
        .map_err(|Failed(m)| m)?;
    let upstreams = Arc::new(McpUpstreams::new(
        &checked.resolution.project.mcp_servers,
        &checked.loaded.root,
    ));
    let builder = RuntimeBuilder::from_checked(&checked)
        .map_err(|e| e.to_string())?
        .executor(Backend::Mcp, Arc::new(McpExecutor::new(upstreams.clone())));
    Ok((
        builder,
        upstreams,
        checked.loaded.root.clone(),
        checked.resolution.project.journal.clone(),
    ))
}

/// Runs `toolgate serve`.
pub fn run(a: ServeArgs) -> miette::Result<u8> {
    // Over stdio, stdin carries the MCP messages: nobody can be asked to trust a policy there.
    let (builder, upstreams, root, project_journal) = match checked_builder(
        a.config.clone(),
        &a.trust,
        a.context.as_deref(),
        a.http.is_some(),
    ) {
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
    // Like `call` and `run`: the journal is durable (`<state_dir>/journal.db`, or a PostgreSQL
    // server), so a call that may have acted before a crash is never run twice.
    let builder =
        match super::call::with_journal(builder, a.journal.as_deref(), project_journal.as_ref()) {
            Ok(b) => b,
            Err(Failed(m)) => return super::call::fail(&m),
        };
    let approver = Arc::new(ElicitationApprover::new());
    let runtime = match builder.approver(approver.clone()).build() {
        Ok(r) => r,
        Err(e) => return super::call::fail(&e.to_string()),
    };
    let runtime_for_server = runtime.clone();
    let (exposure, chosen_by) = match (a.toolset, a.all, &runtime.project().serve.toolset) {
        (Some(t), _, _) => (Exposure::Toolset(t), "--toolset"),
        (None, true, _) => (Exposure::All, "--all"),
        (None, false, Some(t)) => (
            Exposure::Toolset(t.clone()),
            "toolgate.yaml's serve.toolset",
        ),
        (None, false, None) => (Exposure::ReadOnly, ""),
    };
    let session = a.session.clone();
    let options = ServeOptions {
        exposure: exposure.clone(),
        context: a.context,
        session: a.session,
    };
    if let Some(addr) = a.http {
        let how = super::serve_http::Served {
            exposure,
            chosen_by,
            root,
        };
        return super::serve_http::run(&addr, runtime, approver, options, upstreams, how);
    }
    let server = match ToolgateServer::new(runtime_for_server, Some(approver), options) {
        Ok(s) => s,
        Err(e) => return super::call::fail(&e.to_string()),
    };
    eprint!(
        "{}",
        startup_line(
            &server,
            &exposure,
            chosen_by,
            session.as_deref(),
            &runtime.workspace().root().display().to_string(),
            "stdio"
        )
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
        let _recovery = spawn_recovery(&runtime);
        let r = tokio::select! {
            r = server.serve_stdio() => r.map_err(|e| e.to_string()),
            () = stop_signal() => Ok(()),
        };
        upstreams.close().await;
        // The audit's last batch, and anything else queued, before the process ends.
        let flushed = runtime.journal().flush().await.map_err(|e| e.to_string());
        r.and(flushed)
    });
    rt.shutdown_timeout(Duration::from_millis(SHUTDOWN_GRACE_MS));
    match served {
        Ok(()) => Ok(super::EXIT_OK),
        Err(m) => super::call::fail(&m),
    }
}

/// Settles, every recovery interval of a shared journal, the operations of hosts that died
/// (their lease expired) without waiting for a call to meet them; says what it settled on
/// standard error.
pub(super) fn spawn_recovery(runtime: &crate::runtime::ToolRuntime) -> Option<AbortOnDrop> {
    runtime
        .spawn_periodic_recovery(|r| match r {
            Ok(report) if report.is_empty() => {}
            Ok(report) => eprint!("toolgate: {report}"),
            Err(e) => eprintln!("toolgate: periodic recovery failed (tried again later): {e}"),
        })
        .map(AbortOnDrop)
}

/// A task stopped when this is dropped.
pub(super) struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Resolves on SIGINT or SIGTERM.
pub(super) async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// What `serve` says on stderr when it starts: the tools it serves, and why those.
pub(super) fn startup_line(
    server: &ToolgateServer,
    exposure: &Exposure,
    chosen_by: &str,
    session: Option<&str>,
    workspace: &str,
    transport: &str,
) -> String {
    let names: Vec<&str> = server.tools().iter().map(|t| t.name.as_ref()).collect();
    let listed = if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    };
    let why = match exposure {
        Exposure::Toolset(t) => format!("the toolset `{t}`, chosen by {chosen_by}"),
        Exposure::All => "every tool (--all)".to_owned(),
        Exposure::ReadOnly => {
            let left: Vec<String> = server
                .left_out()
                .iter()
                .map(|(n, why)| format!("{n} ({why})"))
                .collect();
            let left = if left.is_empty() {
                String::new()
            } else {
                format!("; left out: {}", left.join(", "))
            };
            format!(
                "no toolset was chosen, so only tools that neither run processes nor write or delete{left}. Choose with --toolset NAME, `serve: {{toolset: NAME}}` in toolgate.yaml, or --all"
            )
        }
    };
    format!(
        "toolgate serve: {} tool(s) over MCP on {transport} (workspace {workspace}, session {}): {listed}\n  served: {why}\n",
        names.len(),
        session.map_or_else(|| "one per connection".to_owned(), |s| format!("`{s}`"))
    )
}
