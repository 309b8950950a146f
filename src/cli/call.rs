//! `toolgate call TOOL --args JSON`: run one tool call through the governed runtime and print
//! what the model would read (`--format text`) or the full result (`--format json`).
//!
//! The runtime options are shared with `toolgate run` ([`RuntimeArgs`]). The context defaults
//! to `interactive` when someone can answer (a terminal, or `--approve`), else `headless`,
//! where every `ask` ends as APPROVAL_UNAVAILABLE.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, ValueEnum};
use tokio_util::sync::CancellationToken;

use super::trust::gate::{
    LoadedPolicy, PolicyForm, can_ask, loaded_texts, policy_files, require_trust,
};
use crate::check::{self, CheckedProject};
use crate::runtime::approval::{ApprovalOutcome, FixedApprover};
use crate::runtime::{RuntimeBuilder, Session, ToolCall, ToolResult, ToolRuntime};
use crate::spec::load::LoadOptions;

mod terminal;

use terminal::TerminalApprover;

/// How `ask` decisions are answered without a person.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ApproveArg {
    /// Every ask is allowed, once.
    Allow,
    /// Every ask is denied.
    Deny,
}

/// Output formats of `call` and `run`.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum OutputFormat {
    /// What the model reads.
    Text,
    /// The full results as JSON.
    Json,
}

/// Options shared by `call` and `run`.
#[derive(Debug, Args)]
pub struct RuntimeArgs {
    /// The project file (default: ./toolgate.yaml if present).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Run from a bundle.json instead of the specs.
    #[arg(long, conflicts_with = "config")]
    pub bundle: Option<PathBuf>,
    /// The execution context (interactive, ci, headless, or one toolgate.yaml defines).
    #[arg(long)]
    pub context: Option<String>,
    /// Answer every `ask` with this (for scripts and tests).
    #[arg(long, value_enum)]
    pub approve: Option<ApproveArg>,
    /// The workspace folder (default: toolgate.yaml's `workspace`).
    #[arg(long)]
    pub workspace: Option<PathBuf>,
    /// The state folder: journal and artifacts (default: toolgate.yaml's `state_dir`).
    #[arg(long)]
    pub state_dir: Option<PathBuf>,
    /// Limit the tools to one toolset of toolgate.yaml.
    #[arg(long)]
    pub toolset: Option<String>,
    /// The journal's PostgreSQL server (`postgres://USER@HOST:PORT/DATABASE`; default:
    /// TOOLGATE_JOURNAL, else toolgate.yaml's `journal`, else SQLite in the state folder).
    #[arg(long, value_name = "URL")]
    pub journal: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: OutputFormat,
    #[command(flatten)]
    pub trust: super::trust::TrustFlags,
}

/// The environment variable naming the journal's PostgreSQL server: overrides toolgate.yaml's
/// `journal`, so that no password needs to be written there.
pub const JOURNAL_ENV: &str = "TOOLGATE_JOURNAL";

/// Where the command line's journal is: a PostgreSQL server, or SQLite in the state folder.
pub(super) enum JournalTarget {
    /// `postgres://…`, with the lease.
    Postgres {
        url: String,
        opts: crate::runtime::PostgresOptions,
    },
    /// `<state_dir>/journal.db`.
    Sqlite,
}

/// The journal the command line uses: `--journal`, else [`JOURNAL_ENV`], else toolgate.yaml's
/// `journal`, else SQLite in the state folder.
pub(super) fn journal_target(
    flag: Option<&str>,
    project: Option<&crate::ir::project::JournalSetting>,
) -> Result<JournalTarget, Failed> {
    let env = std::env::var(JOURNAL_ENV)
        .ok()
        .filter(|v| !v.trim().is_empty());
    let (url, from) = match (flag, env, project) {
        (Some(u), _, _) => (u.to_owned(), "--journal"),
        (None, Some(u), _) => (u, JOURNAL_ENV),
        (None, None, Some(p)) => (p.url.clone(), "toolgate.yaml's `journal`"),
        (None, None, None) => return Ok(JournalTarget::Sqlite),
    };
    crate::runtime::check_journal_url(&url).map_err(|e| Failed(format!("{from}: {e}")))?;
    let mut opts = crate::runtime::PostgresOptions::default();
    if let Some(l) = project.and_then(|p| p.lease) {
        opts.lease = l;
    }
    Ok(JournalTarget::Postgres { url, opts })
}

/// Gives the builder the journal [`journal_target`] chose.
pub(super) fn with_journal(
    builder: RuntimeBuilder,
    flag: Option<&str>,
    project: Option<&crate::ir::project::JournalSetting>,
) -> Result<RuntimeBuilder, Failed> {
    Ok(match journal_target(flag, project)? {
        JournalTarget::Postgres { url, opts } => builder.postgres_journal_with(url, opts),
        // The command line is a harness: its journal is durable (`<state_dir>/journal.db`).
        JournalTarget::Sqlite => builder.sqlite_journal(),
    })
}

/// Arguments of `toolgate call`.
#[derive(Debug, Args)]
pub struct CallArgs {
    /// The tool to call.
    pub tool: String,
    /// The arguments, as a JSON object.
    #[arg(long, default_value = "{}")]
    pub args: String,
    /// The session id.
    #[arg(long)]
    pub session: Option<String>,
    /// An idempotency key naming this request: the same key with the same arguments returns
    /// the recorded result instead of running again (in the same session: pass `--session` to
    /// retry from another process); with other arguments it is refused.
    #[arg(long)]
    pub idempotency_key: Option<String>,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

/// A usage, load or engine error: printed, exit code 2.
#[derive(Debug)]
pub(super) struct Failed(pub String);

/// The project's specs, loaded and checked; the rendered findings when they have errors, since
/// the runtime does not start on specs that do not lint clean.
pub(super) fn checked_specs(config: Option<PathBuf>) -> Result<CheckedProject, Failed> {
    let cwd = std::env::current_dir()
        .map_err(|e| Failed(format!("cannot read the current folder: {e}")))?;
    let checked = check::check_specs(&LoadOptions {
        paths: Vec::new(),
        config,
        cwd,
    })
    .map_err(|e| Failed(e.to_string()))?;
    if checked.has_errors() {
        // Printed here rather than carried in `Failed`, whose message gets a `toolgate:` prefix.
        eprint!(
            "{}",
            super::output::findings(&checked, super::output::Stream::Stderr)
        );
        return Err(Failed(
            "the specs have errors; the runtime does not start until `toolgate lint` is clean"
                .to_owned(),
        ));
    }
    Ok(checked)
}

/// Refuses checked specs whose policy nobody trusted (`trust::gate`), before anything runs.
pub(super) fn trust_checked(
    checked: &CheckedProject,
    config: Option<&std::path::Path>,
    flags: &super::trust::TrustFlags,
    context: Option<&str>,
) -> Result<(), Failed> {
    let cwd = std::env::current_dir()
        .map_err(|e| Failed(format!("cannot read the current folder: {e}")))?;
    let bundle = || checked.bundle();
    let policy = LoadedPolicy {
        root: &checked.loaded.root,
        files: policy_files(&checked.loaded, &cwd).map_err(Failed)?,
        loaded: loaded_texts(&checked.loaded, &cwd),
        bundle: &bundle,
        form: PolicyForm::Specs {
            config: config.and_then(|c| c.file_name()).map(PathBuf::from),
        },
    };
    let ask = can_ask(&checked.resolution.project, context);
    require_trust(&policy, flags, ask).map_err(Failed)
}

/// Builds the runtime and the session the options describe.
pub(super) fn load(
    a: &RuntimeArgs,
    session_id: Option<&str>,
) -> Result<(ToolRuntime, Session), Failed> {
    let mut project_journal = None;
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let here = std::env::current_dir()
        .map_err(|e| Failed(format!("cannot read the current folder: {e}")))?;
    let builder = match &a.bundle {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| Failed(format!("cannot read {}: {e}", path.display())))?;
            let bundle = crate::ir::Bundle::from_json(&text)
                .map_err(|e| Failed(crate::runtime::BuildError::from(e).to_string()))?;
            // A bundle alone names no project folder: the command line's is the current one.
            let current = || Some(bundle.clone());
            let policy = LoadedPolicy {
                root: &here,
                files: vec![here.join(path)],
                loaded: vec![(here.join(path), Arc::from(text.as_str()))],
                bundle: &current,
                form: PolicyForm::Bundle,
            };
            let ask = can_ask(&bundle.project, a.context.as_deref());
            require_trust(&policy, &a.trust, ask).map_err(Failed)?;
            RuntimeBuilder::from_bundle(bundle, &here)
        }
        None => {
            let checked = checked_specs(a.config.clone())?;
            trust_checked(
                &checked,
                a.config.as_deref(),
                &a.trust,
                a.context.as_deref(),
            )?;
            project_journal = checked.resolution.project.journal.clone();
            RuntimeBuilder::from_checked(&checked).map_err(|e| Failed(e.to_string()))?
        }
    };
    let mut builder = match &a.workspace {
        Some(w) => builder.workspace(w),
        None => builder,
    };
    if let Some(s) = &a.state_dir {
        builder = builder.state_dir(s);
    }
    builder = with_journal(builder, a.journal.as_deref(), project_journal.as_ref())?;
    match a.approve {
        Some(ApproveArg::Allow) => {
            builder = builder.approver(Arc::new(FixedApprover(ApprovalOutcome::AllowOnce)))
        }
        Some(ApproveArg::Deny) => {
            // No reason: the model reads a plain denial, not how the harness was invoked.
            builder = builder.approver(Arc::new(FixedApprover(ApprovalOutcome::Deny {
                reason: None,
            })));
        }
        None if interactive => builder = builder.approver(Arc::new(TerminalApprover::stdio())),
        None => {}
    }
    let runtime = builder.build().map_err(|e| Failed(e.to_string()))?;
    let context = a.context.clone().unwrap_or_else(|| {
        if interactive || a.approve.is_some() {
            crate::ir::project::DEFAULT_CONTEXT
        } else {
            "headless"
        }
        .to_owned()
    });
    if !runtime.project().contexts.contains_key(&context) {
        let known: Vec<&str> = runtime
            .project()
            .contexts
            .keys()
            .map(String::as_str)
            .collect();
        return Err(Failed(format!(
            "unknown context `{context}`; toolgate.yaml defines: {}",
            known.join(", ")
        )));
    }
    let id = session_id
        .map(str::to_owned)
        .unwrap_or_else(|| format!("cli-{}", uuid::Uuid::now_v7()));
    let mut session = Session::new(id, context);
    if let Some(t) = &a.toolset {
        session = session.with_toolset(t);
    }
    Ok((runtime, session))
}

/// Runs calls on a fresh tokio runtime.
pub(super) fn execute(
    runtime: &ToolRuntime,
    session: &Session,
    calls: Vec<ToolCall>,
) -> Result<crate::runtime::Execution, Failed> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failed(format!("cannot start the async runtime: {e}")))?;
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    rt.block_on(async move {
        let ctrl_c = async {
            if tokio::signal::ctrl_c().await.is_ok() {
                stop.cancel();
            }
            std::future::pending::<()>().await;
        };
        let r = tokio::select! {
            r = runtime.run(calls, session, cancel) => r.map_err(|e| Failed(e.to_string())),
            () = ctrl_c => Err(Failed("interrupted".into())),
        };
        // The audit of these calls is on the disk before the process ends.
        let flushed = runtime.journal().flush().await;
        let r = r?;
        flushed.map_err(|e| Failed(e.to_string()))?;
        Ok(r)
    })
}

/// A result as JSON, with the projection the model reads.
pub(super) fn result_json(r: &ToolResult) -> serde_json::Value {
    let mut v = serde_json::to_value(r).unwrap_or_default();
    if let Some(obj) = v.as_object_mut() {
        obj.insert(
            "projection".into(),
            serde_json::Value::String(r.projection().text.clone()),
        );
    }
    v
}

/// Exit code for results: 0 all succeeded, 1 otherwise.
pub(super) fn exit_code(results: &[ToolResult]) -> u8 {
    if results.iter().all(ToolResult::is_success) {
        super::EXIT_OK
    } else {
        super::EXIT_FINDINGS
    }
}

/// Runs `toolgate call`.
pub fn run(a: CallArgs) -> miette::Result<u8> {
    let args: serde_json::Value = match serde_json::from_str(&a.args) {
        Ok(v) => v,
        Err(e) => return fail(&format!("--args is not valid JSON: {e}")),
    };
    let (runtime, session) = match load(&a.runtime, a.session.as_deref()) {
        Ok(x) => x,
        Err(Failed(m)) => return fail(&m),
    };
    let mut call = ToolCall::new("call-1", a.tool, args);
    if let Some(k) = a.idempotency_key {
        call = call.with_idempotency_key(k);
    }
    let execution = match execute(&runtime, &session, vec![call]) {
        Ok(x) => x,
        Err(Failed(m)) => return fail(&m),
    };
    let text = match a.runtime.format {
        OutputFormat::Text => execution
            .results
            .iter()
            .map(|r| r.projection().text.clone())
            .collect(),
        OutputFormat::Json => {
            let v = execution
                .results
                .first()
                .map(result_json)
                .unwrap_or_default();
            format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
        }
    };
    super::print(&text)?;
    Ok(exit_code(&execution.results))
}

/// Prints a usage/load/engine error; exit code 2.
pub(super) fn fail(message: &str) -> miette::Result<u8> {
    eprintln!("toolgate: {}", message.trim_end());
    Ok(super::EXIT_ERROR)
}
