//! `toolgate journal`: inspect and settle the execution journal (`<state_dir>/journal.db`).
//!
//! - `list`: calls, most recent last — every call in the audit (refused, unknown, replayed and
//!   pure ones included, with the permission decision and its rule chain) and the operations a
//!   crash cut off — filtered by status, tool, session, error type and time (`--since`,
//!   `--until`); `--operations` lists operations alone (what ran, or may have);
//! - `show ID`: one operation (or every operation and audit record of a call id) in full —
//!   start, permission and its rule chain, attempts, finish, settlements, the recorded result;
//! - `recover`: what a runtime does when it opens the journal — settle every operation of an
//!   ended process that was left unfinished, by its idempotency class — on its own;
//! - `resolve ID --as succeeded|failed [--note TEXT]`: a person's verdict on an uncertain
//!   operation (`succeeded`: it took effect; `failed`: it did not, a resubmission runs it);
//! - `stats`: counts and latency percentiles per tool, status and error type, and how many
//!   calls were refused before they ran;
//! - `prune --before TIME`: retention — deletes the audit and the finished or settled
//!   operations from before a moment, never an operation whose outcome is unknown.
//!
//! Every command works while runtimes use the journal (`list`, `show` and `stats` only read);
//! each prints text, or JSON with `--format json`.

mod text;

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use clap::{Args, Subcommand, ValueEnum};

use super::call::{Failed, JournalTarget, OutputFormat, RuntimeArgs, fail, journal_target, load};
use crate::ir::project::JournalSetting;
use crate::runtime::PostgresJournal;
use crate::runtime::journal::sqlite::{
    Filter, JOURNAL_FILE, JournalReader, Prune, Refusals, SqliteJournal,
};
use crate::runtime::journal::{Journal, Settled, SettledBy, Settlement, now};
use crate::spec::load::{parse_in, read_source};
use crate::spec::project_file::JournalAst;
use crate::spec::project_file::ProjectFile;
use crate::spec::source::SourceMap;

/// Arguments of `toolgate journal`.
#[derive(Debug, Args)]
pub struct JournalArgs {
    #[command(subcommand)]
    command: JournalCommand,
}

#[derive(Debug, Subcommand)]
enum JournalCommand {
    /// List calls (refusals included) and cut-off operations, most recent last.
    List(ListArgs),
    /// Show one operation in full (an operation id, or a call id for each of its runs).
    Show(ShowArgs),
    /// Settle the operations an ended runtime left unfinished, by idempotency class.
    Recover(RecoverArgs),
    /// Record what happened to an uncertain operation, after checking.
    Resolve(ResolveArgs),
    /// Counts and latency percentiles per tool, status and error type; refusals.
    Stats(StatsArgs),
    /// Delete the audit and finished operations from before a moment (retention).
    Prune(PruneArgs),
}

/// Where the journal is, and how to print.
#[derive(Debug, Args)]
struct Location {
    /// The project file (default: ./toolgate.yaml if present); its `state_dir` holds the journal.
    #[arg(long)]
    config: Option<PathBuf>,
    /// The state folder (overrides the project's `state_dir`).
    #[arg(long)]
    state_dir: Option<PathBuf>,
    /// The journal's PostgreSQL server (`postgres://…`; default: TOOLGATE_JOURNAL, else
    /// toolgate.yaml's `journal`, else the SQLite journal in the state folder).
    #[arg(long, value_name = "URL")]
    journal: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: OutputFormat,
}

/// Which calls: shared by `list` and `stats`.
#[derive(Debug, Args)]
struct Which {
    /// Only this tool.
    #[arg(long)]
    tool: Option<String>,
    /// Only this session.
    #[arg(long)]
    session: Option<String>,
    /// Only this error type (POLICY_DENIED, UNKNOWN_TOOL, INVALID_ARGUMENTS, …).
    #[arg(long)]
    error_type: Option<String>,
    /// Only calls that started at or after this time: RFC 3339 (2026-11-30T12:00:00Z), a date
    /// (2026-11-30, midnight UTC), or how long ago (90m, 2h, 7d).
    #[arg(long)]
    since: Option<String>,
    /// Only calls that started before this time (same forms as --since).
    #[arg(long)]
    until: Option<String>,
    /// Operations only (what ran, or may have), without the calls that never ran.
    #[arg(long)]
    operations: bool,
}

#[derive(Debug, Args)]
struct ListArgs {
    /// Only this status: started, success, error, timeout, cancelled, denied, sandbox_violation,
    /// unknown_outcome, abandoned, succeeded, failed.
    #[arg(long)]
    status: Option<String>,
    #[command(flatten)]
    which: Which,
    /// At most this many (the most recent).
    #[arg(long, default_value_t = 200)]
    limit: usize,
    #[command(flatten)]
    at: Location,
}

#[derive(Debug, Args)]
struct ShowArgs {
    /// An operation id (`op-…`), or a call id.
    id: String,
    #[command(flatten)]
    at: Location,
}

#[derive(Debug, Args)]
struct RecoverArgs {
    #[command(flatten)]
    runtime: RuntimeArgs,
}

/// A person's verdict.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum Verdict {
    /// It took effect: a resubmission of the call returns success without running.
    Succeeded,
    /// It did not take effect: a resubmission runs it.
    Failed,
}

#[derive(Debug, Args)]
struct ResolveArgs {
    /// The operation id (`op-…`).
    id: String,
    /// What happened.
    #[arg(long = "as", value_enum)]
    verdict: Verdict,
    /// How you know (kept in the journal, shown to the model on replay).
    #[arg(long)]
    note: Option<String>,
    /// The identifier of what the call made elsewhere (a ticket, a message id), if you found it.
    #[arg(long)]
    external_reference: Option<String>,
    #[command(flatten)]
    at: Location,
}

#[derive(Debug, Args)]
struct StatsArgs {
    #[command(flatten)]
    which: Which,
    #[command(flatten)]
    at: Location,
}

#[derive(Debug, Args)]
struct PruneArgs {
    /// Delete what started before this time: RFC 3339, a date (midnight UTC), or how long ago
    /// (30d keeps the last thirty days).
    #[arg(long)]
    before: String,
    /// Only count what would be deleted.
    #[arg(long)]
    dry_run: bool,
    #[command(flatten)]
    at: Location,
}

/// Runs `toolgate journal`.
pub fn run(a: JournalArgs) -> miette::Result<u8> {
    let r = match a.command {
        JournalCommand::List(a) => list(a),
        JournalCommand::Show(a) => show(a),
        JournalCommand::Recover(a) => recover(a),
        JournalCommand::Resolve(a) => resolve(a),
        JournalCommand::Stats(a) => stats(a),
        JournalCommand::Prune(a) => prune(a),
    };
    match r {
        Ok(text) => {
            super::print(&text)?;
            Ok(super::EXIT_OK)
        }
        Err(Failed(m)) => fail(&m),
    }
}

/// The project file the options point at, parsed, with its folder.
fn project_file(at: &Location) -> Result<Option<(ProjectFile, PathBuf)>, Failed> {
    let cwd = std::env::current_dir()
        .map_err(|e| Failed(format!("cannot read the current folder: {e}")))?;
    let file = match &at.config {
        Some(p) => Some(cwd.join(p)),
        None => Some(cwd.join(crate::spec::load::PROJECT_FILE)).filter(|p| p.is_file()),
    };
    let Some(file) = file else {
        return Ok(None);
    };
    let mut sources = SourceMap::new();
    let id = read_source(&mut sources, &file, file.clone()).map_err(|d| Failed(d.message))?;
    let project: ProjectFile = parse_in(&sources, id).map_err(|d| Failed(d.message))?;
    let root = file.parent().unwrap_or(Path::new(".")).to_path_buf();
    Ok(Some((project, root)))
}

/// Where the journal the options point at is: a PostgreSQL server, or SQLite.
fn target(at: &Location) -> Result<JournalTarget, Failed> {
    let setting = project_file(at)?
        .and_then(|(p, _)| p.journal)
        .map(|j| match j.value {
            JournalAst::Url(url) => JournalSetting { url, lease: None },
            JournalAst::Server(s) => JournalSetting {
                url: s.url,
                lease: s.lease.map(|l| l.0),
            },
        });
    journal_target(at.journal.as_deref(), setting.as_ref())
}

/// The PostgreSQL journal the options point at, when they point at one.
fn postgres(at: &Location) -> Result<Option<PostgresJournal>, Failed> {
    match target(at)? {
        JournalTarget::Postgres { url, opts } => PostgresJournal::open_with(&url, opts)
            .map(Some)
            .map_err(|e| Failed(e.to_string())),
        JournalTarget::Sqlite => Ok(None),
    }
}

/// Refuses a command the PostgreSQL journal does not offer yet.
fn sqlite_only(at: &Location, command: &str) -> Result<(), Failed> {
    match target(at)? {
        JournalTarget::Postgres { .. } => Err(Failed(format!(
            "`toolgate journal {command}` reads the SQLite journal only; with a PostgreSQL journal, use `journal list`, `show`, `resolve` and `recover`, or query its `operations` and `audit` tables"
        ))),
        JournalTarget::Sqlite => Ok(()),
    }
}

/// The journal file the options point at.
fn journal_path(at: &Location) -> Result<PathBuf, Failed> {
    if let Some(dir) = &at.state_dir {
        return Ok(dir.join(JOURNAL_FILE));
    }
    let cwd = std::env::current_dir()
        .map_err(|e| Failed(format!("cannot read the current folder: {e}")))?;
    let state_dir = |raw: &str, root: &Path| {
        crate::ir::project::resolve_state_dir(raw, root).map_err(|e| Failed(e.to_string()))
    };
    let Some((project, root)) = project_file(at)? else {
        return Ok(state_dir(crate::ir::project::DEFAULT_STATE_DIR, &cwd)?.join(JOURNAL_FILE));
    };
    let state = project.state_dir.map_or_else(
        || crate::ir::project::DEFAULT_STATE_DIR.to_owned(),
        |s| s.value,
    );
    Ok(state_dir(&state, &root)?.join(JOURNAL_FILE))
}

fn reader(at: &Location) -> Result<JournalReader, Failed> {
    JournalReader::open(journal_path(at)?).map_err(|e| Failed(e.to_string()))
}

fn json<T: serde::Serialize>(v: &T) -> String {
    format!("{}\n", serde_json::to_string_pretty(v).unwrap_or_default())
}

/// A moment given on the command line, as µs since the epoch.
fn moment(flag: &str, text: &str) -> Result<i64, Failed> {
    let t = text.trim();
    let at = if let Ok(t) = humantime::parse_rfc3339_weak(t) {
        t
    } else if let Ok(t) = humantime::parse_rfc3339_weak(&format!("{t}T00:00:00Z")) {
        t
    } else if let Ok(ago) = humantime::parse_duration(t) {
        SystemTime::now()
            .checked_sub(ago)
            .unwrap_or(SystemTime::UNIX_EPOCH)
    } else {
        return Err(Failed(format!(
            "{flag} `{text}` is not a time: give an RFC 3339 time (2026-11-30T12:00:00Z), a date (2026-11-30), or how long ago (90m, 2h, 7d)"
        )));
    };
    let us = at
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_micros();
    Ok(i64::try_from(us).unwrap_or(i64::MAX))
}

fn filter(status: Option<String>, w: Which, limit: Option<usize>) -> Result<Filter, Failed> {
    Ok(Filter {
        status,
        tool: w.tool,
        session: w.session,
        error_type: w.error_type,
        since_us: w
            .since
            .as_deref()
            .map(|s| moment("--since", s))
            .transpose()?,
        until_us: w
            .until
            .as_deref()
            .map(|s| moment("--until", s))
            .transpose()?,
        limit,
        operations: w.operations,
    })
}

fn list(a: ListArgs) -> Result<String, Failed> {
    let filter = filter(a.status, a.which, Some(a.limit))?;
    let rows = match postgres(&a.at)? {
        Some(pg) => current_thread()?.block_on(pg.list(&filter)),
        None => reader(&a.at)?.list(&filter),
    }
    .map_err(|e| Failed(e.to_string()))?;
    Ok(match a.at.format {
        OutputFormat::Json => json(&rows),
        OutputFormat::Text => text::list(&rows),
    })
}

fn show(a: ShowArgs) -> Result<String, Failed> {
    let (ops, calls) = if let Some(pg) = postgres(&a.at)? {
        let rt = current_thread()?;
        let ops = rt
            .block_on(async {
                match pg.operation(&a.id).await? {
                    Some(op) => Ok(vec![op]),
                    None => pg.by_call(&a.id).await,
                }
            })
            .map_err(|e| Failed(e.to_string()))?;
        (ops, Vec::new())
    } else {
        let r = reader(&a.at)?;
        match r.operation(&a.id).map_err(|e| Failed(e.to_string()))? {
            Some(op) => (vec![op], Vec::new()),
            None => (
                r.by_call(&a.id).map_err(|e| Failed(e.to_string()))?,
                r.audit_of_call(&a.id).map_err(|e| Failed(e.to_string()))?,
            ),
        }
    };
    if ops.is_empty() && calls.is_empty() {
        return Err(Failed(format!(
            "no operation or call `{}` in the journal",
            a.id
        )));
    }
    Ok(match a.at.format {
        OutputFormat::Json if ops.len() == 1 && calls.is_empty() => json(&ops[0]),
        OutputFormat::Json if ops.is_empty() && calls.len() == 1 => json(&calls[0]),
        OutputFormat::Json => json(&serde_json::json!({"operations": ops, "calls": calls})),
        OutputFormat::Text => ops
            .iter()
            .map(text::operation)
            .chain(calls.iter().map(text::call))
            .collect::<Vec<_>>()
            .join("\n"),
    })
}

fn recover(a: RecoverArgs) -> Result<String, Failed> {
    let (runtime, _) = load(&a.runtime, None)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failed(format!("cannot start the async runtime: {e}")))?;
    let report = rt
        .block_on(runtime.recover())
        .map_err(|e| Failed(e.to_string()))?;
    Ok(match a.runtime.format {
        OutputFormat::Json => json(&*report),
        OutputFormat::Text => report.to_string(),
    })
}

fn current_thread() -> Result<tokio::runtime::Runtime, Failed> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failed(format!("cannot start the async runtime: {e}")))
}

fn resolve(a: ResolveArgs) -> Result<String, Failed> {
    let journal: Box<dyn Journal> = match postgres(&a.at)? {
        Some(pg) => Box::new(pg),
        None => {
            Box::new(SqliteJournal::open(journal_path(&a.at)?).map_err(|e| Failed(e.to_string()))?)
        }
    };
    let rt = current_thread()?;
    let outcome = match a.verdict {
        Verdict::Succeeded => Settled::Succeeded,
        Verdict::Failed => Settled::Failed,
    };
    let settlement = Settlement {
        operation_id: a.id.clone(),
        outcome,
        by: SettledBy::Person,
        reason: a.note.unwrap_or_else(|| "checked by a person".into()),
        external_reference: a.external_reference.clone(),
        at: now(),
    };
    let op = rt.block_on(async {
        let op = journal.operation(&a.id).await?;
        if op.is_some() {
            journal.settle(&settlement).await?;
        }
        journal.flush().await?;
        Ok::<_, crate::runtime::journal::JournalError>(op)
    });
    let op = op.map_err(|e| Failed(e.to_string()))?;
    let Some(op) = op else {
        return Err(Failed(format!("no operation `{}` in the journal", a.id)));
    };
    let then = match outcome {
        Settled::Succeeded => {
            "a resubmission of the same call (same session and call id, or the same idempotency key) returns success without running it; the same arguments in another call now run"
        }
        _ => "a resubmission of the call runs it again",
    };
    Ok(match a.at.format {
        OutputFormat::Json => json(&settlement),
        OutputFormat::Text => format!(
            "{} ({} call {} of session {}) is now {}: {then}\n",
            a.id,
            op.start.tool,
            op.start.call_id,
            op.start.session_id,
            outcome.as_str()
        ),
    })
}

fn stats(a: StatsArgs) -> Result<String, Failed> {
    sqlite_only(&a.at, "stats")?;
    let filter = filter(None, a.which, None)?;
    let stats = reader(&a.at)?
        .stats(&filter)
        .map_err(|e| Failed(e.to_string()))?;
    Ok(match a.at.format {
        OutputFormat::Json => json(&serde_json::json!({
            "tools": stats,
            "refusals": Refusals::of(&stats),
        })),
        OutputFormat::Text => text::stats(&stats),
    })
}

fn prune(a: PruneArgs) -> Result<String, Failed> {
    sqlite_only(&a.at, "prune")?;
    let before_us = moment("--before", &a.before)?;
    let journal = SqliteJournal::open(journal_path(&a.at)?).map_err(|e| Failed(e.to_string()))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failed(format!("cannot start the async runtime: {e}")))?;
    let report = rt
        .block_on(journal.prune(Prune {
            before_us,
            dry_run: a.dry_run,
        }))
        .map_err(|e| Failed(e.to_string()))?;
    Ok(match a.at.format {
        OutputFormat::Json => json(&report),
        OutputFormat::Text => format!(
            "{} {} audit record(s) and {} finished operation(s) that started before {}; kept {} operation(s) whose outcome is unknown (settle them with `toolgate journal resolve`)\n",
            if a.dry_run { "would delete" } else { "deleted" },
            report.audit_records,
            report.operations,
            humantime::format_rfc3339_seconds(
                SystemTime::UNIX_EPOCH
                    + Duration::from_micros(u64::try_from(before_us).unwrap_or(0))
            ),
            report.kept_uncertain
        ),
    })
}

/// The calls a journal recorded, for `toolgate diff --replay` (a folder means its journal.db);
/// arguments cut in the audit (over 16 KiB) are left out.
pub(crate) fn recorded_calls(path: &Path) -> Result<Vec<crate::diff::RecordedCall>, String> {
    let file = if path.is_dir() {
        path.join(JOURNAL_FILE)
    } else {
        path.to_path_buf()
    };
    let reader = JournalReader::open(&file).map_err(|e| e.to_string())?;
    let rows = reader.recorded_calls().map_err(|e| e.to_string())?;
    Ok(rows
        .into_iter()
        .filter_map(|r| {
            Some(crate::diff::RecordedCall {
                arguments: serde_json::from_str(&r.arguments).ok()?,
                tool: r.tool,
                context: r.context,
            })
        })
        .collect())
}
