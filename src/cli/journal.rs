//! `toolgate journal`: inspect and settle the execution journal (`<state_dir>/journal.db`).
//!
//! - `list [--status S] [--tool T] [--session ID]`: operations, most recent last;
//! - `show ID`: one operation (or every operation of a call id) in full — start, permission and
//!   its rule chain, attempts, finish, settlements, the recorded result and trace;
//! - `recover`: what a runtime does when it opens the journal — settle every operation a crash
//!   left unfinished by its idempotency class — on its own;
//! - `resolve ID --as succeeded|failed [--note TEXT]`: a person's verdict on an uncertain
//!   operation (`succeeded`: it took effect, a resubmission returns success; `failed`: it did
//!   not, a resubmission runs it);
//! - `stats`: counts and start-to-finish latency percentiles per tool and status.
//!
//! `list`, `show` and `stats` read without the writer's lock, so they work while a runtime runs;
//! `resolve` and `recover` take it. Every command prints text, or JSON with `--format json`.

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};
use serde_json::Value;

use super::call::{Failed, OutputFormat, RuntimeArgs, fail, load};
use crate::runtime::journal::sqlite::{
    Filter, JOURNAL_FILE, JournalReader, OperationSummary, SqliteJournal, ToolStats,
};
use crate::runtime::journal::{Journal, OperationRecord, Settled, SettledBy, Settlement, now};
use crate::spec::load::{parse_in, read_source};
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
    /// List operations, most recent last.
    List(ListArgs),
    /// Show one operation in full (an operation id, or a call id for each of its runs).
    Show(ShowArgs),
    /// Settle the operations a crashed runtime left unfinished, by idempotency class.
    Recover(RecoverArgs),
    /// Record what happened to an uncertain operation, after checking.
    Resolve(ResolveArgs),
    /// Counts and latency percentiles per tool and status.
    Stats(StatsArgs),
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
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: OutputFormat,
}

#[derive(Debug, Args)]
struct ListArgs {
    /// Only this status: started, success, error, timeout, cancelled, denied, sandbox_violation,
    /// unknown_outcome, abandoned, succeeded, failed.
    #[arg(long)]
    status: Option<String>,
    /// Only this tool.
    #[arg(long)]
    tool: Option<String>,
    /// Only this session.
    #[arg(long)]
    session: Option<String>,
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
    /// Only this tool.
    #[arg(long)]
    tool: Option<String>,
    /// Only this session.
    #[arg(long)]
    session: Option<String>,
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
    };
    match r {
        Ok(text) => {
            super::print(&text)?;
            Ok(super::EXIT_OK)
        }
        Err(Failed(m)) => fail(&m),
    }
}

/// The journal file the options point at.
fn journal_path(at: &Location) -> Result<PathBuf, Failed> {
    if let Some(dir) = &at.state_dir {
        return Ok(dir.join(JOURNAL_FILE));
    }
    let cwd = std::env::current_dir()
        .map_err(|e| Failed(format!("cannot read the current folder: {e}")))?;
    let file = match &at.config {
        Some(p) => Some(cwd.join(p)),
        None => Some(cwd.join(crate::spec::load::PROJECT_FILE)).filter(|p| p.is_file()),
    };
    let state_dir = |raw: &str, root: &Path| {
        crate::ir::project::resolve_state_dir(raw, root).map_err(|e| Failed(e.to_string()))
    };
    let Some(file) = file else {
        return Ok(state_dir(crate::ir::project::DEFAULT_STATE_DIR, &cwd)?.join(JOURNAL_FILE));
    };
    let mut sources = SourceMap::new();
    let id = read_source(&mut sources, &file, file.clone()).map_err(|d| Failed(d.message))?;
    let project: ProjectFile = parse_in(&sources, id).map_err(|d| Failed(d.message))?;
    let root = file.parent().unwrap_or(Path::new("."));
    let state = project.state_dir.map_or_else(
        || crate::ir::project::DEFAULT_STATE_DIR.to_owned(),
        |s| s.value,
    );
    Ok(state_dir(&state, root)?.join(JOURNAL_FILE))
}

fn reader(at: &Location) -> Result<JournalReader, Failed> {
    JournalReader::open(journal_path(at)?).map_err(|e| Failed(e.to_string()))
}

fn json<T: serde::Serialize>(v: &T) -> String {
    format!("{}\n", serde_json::to_string_pretty(v).unwrap_or_default())
}

fn list(a: ListArgs) -> Result<String, Failed> {
    let filter = Filter {
        status: a.status,
        tool: a.tool,
        session: a.session,
        limit: Some(a.limit),
    };
    let ops = reader(&a.at)?
        .list(&filter)
        .map_err(|e| Failed(e.to_string()))?;
    Ok(match a.at.format {
        OutputFormat::Json => json(&ops),
        OutputFormat::Text => list_text(&ops),
    })
}

fn micros(us: Option<u64>) -> String {
    match us {
        None => "-".into(),
        Some(us) if us < 10_000 => format!("{us} µs"),
        Some(us) if us < 10_000_000 => format!("{} ms", us / 1_000),
        Some(us) => format!("{} s", us / 1_000_000),
    }
}

fn list_text(ops: &[OperationSummary]) -> String {
    if ops.is_empty() {
        return "no operations\n".into();
    }
    let rows: Vec<[String; 7]> = ops
        .iter()
        .map(|o| {
            [
                o.operation_id.clone(),
                o.started_at.clone(),
                format!("{} v{}", o.tool, o.tool_version),
                match &o.error_type {
                    Some(t) => format!("{} {t}", o.status),
                    None => o.status.clone(),
                },
                o.attempts.to_string(),
                micros(o.duration_us),
                format!("{} / {}", o.session_id, o.call_id),
            ]
        })
        .collect();
    let header = [
        "OPERATION",
        "STARTED",
        "TOOL",
        "STATUS",
        "ATTEMPTS",
        "TIME",
        "SESSION / CALL",
    ];
    table(&header, &rows)
}

fn table<const N: usize>(header: &[&str; N], rows: &[[String; N]]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            if i + 1 == N {
                s.push_str(c);
            } else {
                s.push_str(&format!("{c:<w$}  "));
            }
        }
        s.trim_end().to_owned() + "\n"
    };
    let mut out = line(header.to_vec());
    for r in rows {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
    }
    out
}

fn show(a: ShowArgs) -> Result<String, Failed> {
    let r = reader(&a.at)?;
    let ops = match r.operation(&a.id).map_err(|e| Failed(e.to_string()))? {
        Some(op) => vec![op],
        None => r.by_call(&a.id).map_err(|e| Failed(e.to_string()))?,
    };
    if ops.is_empty() {
        return Err(Failed(format!(
            "no operation or call `{}` in the journal",
            a.id
        )));
    }
    Ok(match a.at.format {
        OutputFormat::Json if ops.len() == 1 => json(&ops[0]),
        OutputFormat::Json => json(&ops),
        OutputFormat::Text => ops.iter().map(show_text).collect::<Vec<_>>().join("\n"),
    })
}

fn show_text(op: &OperationRecord) -> String {
    let s = &op.start;
    let mut out = format!("operation {}: {}\n", s.operation_id, op.state().as_str());
    let mut field = |name: &str, value: String| out.push_str(&format!("  {name:<12} {value}\n"));
    field("session", s.session_id.clone());
    field("call", s.call_id.clone());
    field(
        "tool",
        format!(
            "{} version {} (parameters {})",
            s.tool, s.tool_version, s.schema_version
        ),
    );
    field("effect", format!("{}, {}", s.effect, s.idempotency));
    field(
        "key",
        format!("{} ({})", s.idempotency_key, s.key_source.as_str()),
    );
    field(
        "arguments",
        format!("{} (blake3 {})", s.arguments, s.arguments_hash),
    );
    let p = &s.permission;
    let source = match &p.source {
        crate::policy::DecisionSource::Rule { id } => format!("rule {id}"),
        crate::policy::DecisionSource::Default => "the effect's default".into(),
        crate::policy::DecisionSource::Protected {
            parameter, glob, ..
        } => format!("protect ({parameter} matches {glob})"),
    };
    let mut decision = format!("{} by {source}", p.decision);
    if let Some(r) = &p.reason {
        decision.push_str(&format!(": {r}"));
    }
    field("permission", decision);
    let chain: Vec<String> = p
        .chain
        .iter()
        .map(|r| {
            let m = match (&r.error, r.matched) {
                (Some(_), _) => "failed to evaluate",
                (None, true) => "matched",
                (None, false) => "no match",
            };
            format!("{} ({} {m})", r.id, r.decision)
        })
        .collect();
    if !chain.is_empty() {
        field("rule chain", chain.join(", "));
    }
    if let Some(b) = s.scheduler_batch {
        field("batch", b.to_string());
    }
    field("started", s.started_at.clone());
    for a in &op.attempts {
        let mut t = format!("#{} ended {}", a.attempt, a.ended_at);
        if let Some(e) = a.error_type {
            t.push_str(&format!(": {e}"));
        }
        if let Some(ms) = a.retry_after_ms {
            t.push_str(&format!(", retried after {ms} ms"));
        }
        field("attempt", t);
    }
    if let Some(f) = &op.finish {
        let mut t = format!("{} {}", f.finished_at, f.status);
        if let Some(e) = f.error_type {
            t.push_str(&format!(" {e}"));
        }
        if let Some(c) = f.exit_code {
            t.push_str(&format!(", exit code {c}"));
        }
        t.push_str(&format!(", {} bytes of output", f.output_size));
        field("finished", t);
        if !f.artifact_ids.is_empty() {
            field("artifacts", f.artifact_ids.join(", "));
        }
        if let Some(x) = &f.external_reference {
            field("reference", x.clone());
        }
        field(
            "trace",
            format!(
                "{} µs on {}, {} retries, result blake3 {}",
                f.trace.duration_us,
                f.trace.runtime.unwrap_or("-"),
                f.retry_count,
                f.result_digest
            ),
        );
    }
    for st in &op.settlements {
        let mut t = format!(
            "{} {} by {}: {}",
            st.at,
            st.outcome.as_str(),
            st.by.as_str(),
            st.reason
        );
        if let Some(x) = &st.external_reference {
            t.push_str(&format!(" (reference {x})"));
        }
        field("settled", t);
    }
    if let Some(f) = &op.finish {
        let text = |k: &str| f.result.get(k).and_then(Value::as_str).unwrap_or("");
        out.push_str(&format!("  result\n    {}\n", text("summary")));
        for l in text("output").lines() {
            out.push_str(&format!("    {l}\n"));
        }
        if !text("hint").is_empty() {
            out.push_str(&format!("    Hint: {}\n", text("hint")));
        }
    }
    out
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

fn resolve(a: ResolveArgs) -> Result<String, Failed> {
    let journal = SqliteJournal::open(journal_path(&a.at)?).map_err(|e| Failed(e.to_string()))?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failed(format!("cannot start the async runtime: {e}")))?;
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
        Ok::<_, crate::runtime::journal::JournalError>(op)
    });
    let op = op.map_err(|e| Failed(e.to_string()))?;
    let Some(op) = op else {
        return Err(Failed(format!("no operation `{}` in the journal", a.id)));
    };
    let then = match outcome {
        Settled::Succeeded => "a resubmission of the call returns success without running it",
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
    let filter = Filter {
        status: None,
        tool: a.tool,
        session: a.session,
        limit: None,
    };
    let stats = reader(&a.at)?
        .stats(&filter)
        .map_err(|e| Failed(e.to_string()))?;
    Ok(match a.at.format {
        OutputFormat::Json => json(&stats),
        OutputFormat::Text => stats_text(&stats),
    })
}

fn stats_text(stats: &[ToolStats]) -> String {
    if stats.is_empty() {
        return "no operations\n".into();
    }
    let rows: Vec<[String; 7]> = stats
        .iter()
        .map(|s| {
            [
                s.tool.clone(),
                s.status.clone(),
                s.count.to_string(),
                micros(s.p50_us),
                micros(s.p90_us),
                micros(s.p99_us),
                micros(s.max_us),
            ]
        })
        .collect();
    table(
        &["TOOL", "STATUS", "COUNT", "P50", "P90", "P99", "MAX"],
        &rows,
    )
}
