//! How `toolgate journal` prints: tables, operations and calls in full.

use serde_json::Value;

use crate::runtime::journal::OperationRecord;
use crate::runtime::journal::sqlite::{AuditRecord, CallSummary, Refusals, ToolStats};
use crate::runtime::permission::PermissionRecord;
use crate::runtime::question::shown;

/// A duration in µs, ms or s.
pub(super) fn micros(us: Option<u64>) -> String {
    match us {
        None => "-".into(),
        Some(us) if us < 10_000 => format!("{us} µs"),
        Some(us) if us < 10_000_000 => format!("{} ms", us / 1_000),
        Some(us) => format!("{} s", us / 1_000_000),
    }
}

/// Columns padded to their widest cell; the last one is not padded.
pub(super) fn table<const N: usize>(header: &[&str; N], rows: &[[String; N]]) -> String {
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

/// A permission decision in a line: `deny by rule no-secrets: Secrets are not readable.`
pub(super) fn decision(p: &PermissionRecord) -> String {
    let source = match &p.source {
        crate::policy::DecisionSource::Rule { id } => format!("rule {id}"),
        crate::policy::DecisionSource::Default => "the effect's default".into(),
        crate::policy::DecisionSource::Protected {
            parameter, glob, ..
        } => format!("protect ({parameter} matches {glob})"),
    };
    let mut d = format!("{} by {source}", p.decision);
    if let Some(r) = &p.reason {
        d.push_str(&format!(": {r}"));
    }
    d
}

/// A rule chain in a line: `no-secrets (deny matched), docs (allow no match)`.
pub(super) fn rule_chain(p: &PermissionRecord) -> String {
    p.chain
        .iter()
        .map(|r| {
            let m = match (&r.error, r.matched) {
                (Some(_), _) => "failed to evaluate",
                (None, true) => "matched",
                (None, false) => "no match",
            };
            format!("{} ({} {m})", r.id, r.decision)
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `journal list` as a table.
pub(super) fn list(rows: &[CallSummary]) -> String {
    if rows.is_empty() {
        return "no calls\n".into();
    }
    let rows: Vec<[String; 8]> = rows
        .iter()
        .map(|o| {
            let permission = o.permission.as_ref().map_or_else(
                || "-".to_owned(),
                |p| {
                    let chain = rule_chain(p);
                    if chain.is_empty() {
                        format!("{} by {}", p.decision, source(p))
                    } else {
                        format!("{} by {} [{chain}]", p.decision, source(p))
                    }
                },
            );
            [
                o.operation_id.clone().unwrap_or_else(|| "-".into()),
                o.started_at.clone(),
                match o.tool_version {
                    Some(v) => format!("{} v{v}", o.tool),
                    None => o.tool.clone(),
                },
                match &o.error_type {
                    Some(t) => format!("{} {t}", o.status),
                    None if o.replayed => format!("{} (replayed)", o.status),
                    None => o.status.clone(),
                },
                o.attempts.to_string(),
                micros(o.duration_us),
                format!("{} / {}", o.session_id, o.call_id),
                permission,
            ]
            .map(|cell| shown(&cell))
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
        "PERMISSION [RULE CHAIN]",
    ];
    table(&header, &rows)
}

fn source(p: &PermissionRecord) -> String {
    match &p.source {
        crate::policy::DecisionSource::Rule { id } => format!("rule {id}"),
        crate::policy::DecisionSource::Default => "default".into(),
        crate::policy::DecisionSource::Protected { glob, .. } => format!("protect {glob}"),
    }
}

/// `journal show` of one operation.
pub(super) fn operation(op: &OperationRecord) -> String {
    let s = &op.start;
    let mut out = format!(
        "operation {}: {}\n",
        shown(&s.operation_id),
        op.state().as_str()
    );
    // Ids, keys and arguments came from clients: escaped as approval prompts are (a person
    // settles unknown outcomes from this text).
    let mut field =
        |name: &str, value: String| out.push_str(&format!("  {name:<12} {}\n", shown(&value)));
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
    field("permission", decision(&s.permission));
    let chain = rule_chain(&s.permission);
    if !chain.is_empty() {
        field("rule chain", chain);
    }
    if let Some(b) = s.scheduler_batch {
        field("batch", b.to_string());
    }
    field("started", s.started_at.clone());
    if let Some(pid) = op.running_in {
        field("running", format!("in toolgate process {pid}"));
    }
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
        out.push_str("  result\n");
        indented(&mut out, text("summary"));
        indented(&mut out, text("output"));
        if !text("hint").is_empty() {
            indented(&mut out, &format!("Hint: {}", text("hint")));
        }
    }
    out
}

/// `journal show` of a call that has no operation of its own.
pub(super) fn call(a: &AuditRecord) -> String {
    let t = &a.trace;
    let status = match t.error_type {
        Some(e) => format!("{} {e}", t.status),
        None if t.replayed => format!("{} (replayed)", t.status),
        None => t.status.to_string(),
    };
    let mut out = format!("call {}: {status}\n", shown(&t.call_id));
    // Ids, keys and arguments came from clients: escaped as approval prompts are (a person
    // settles unknown outcomes from this text).
    let mut field =
        |name: &str, value: String| out.push_str(&format!("  {name:<12} {}\n", shown(&value)));
    field(
        "session",
        format!("{} ({} context)", t.session_id, t.context),
    );
    field(
        "tool",
        match t.tool_version {
            Some(v) => format!("{} version {v}", t.tool),
            None => format!("{} (not a tool of this runtime)", t.tool),
        },
    );
    if let Some(e) = t.effect {
        field("effect", e.to_string());
    }
    field(
        "arguments",
        format!("{} (blake3 {})", a.arguments, t.arguments_hash),
    );
    if let Some(p) = &t.permission {
        field("permission", decision(p));
        let chain = rule_chain(p);
        if !chain.is_empty() {
            field("rule chain", chain);
        }
    }
    if let Some(k) = &t.idempotency_key {
        field("key", k.clone());
    }
    field("started", t.start_time.clone());
    field("time", micros(Some(t.duration_us)));
    out.push_str("  result\n");
    indented(&mut out, &a.summary);
    out
}

/// A tool's text (a summary, an output) under a field, each line indented and escaped as
/// approval prompts escape (a tool's output may hold anything).
fn indented(out: &mut String, text: &str) {
    for l in text.lines() {
        out.push_str(&format!("    {}\n", shown(l)));
    }
}

/// `journal stats` as a table, with the refusals under it.
pub(super) fn stats(stats: &[ToolStats]) -> String {
    if stats.is_empty() {
        return "no calls\n".into();
    }
    let rows: Vec<[String; 8]> = stats
        .iter()
        .map(|s| {
            [
                s.tool.clone(),
                s.status.clone(),
                s.error_type.clone().unwrap_or_else(|| "-".into()),
                s.count.to_string(),
                micros(s.p50_us),
                micros(s.p90_us),
                micros(s.p99_us),
                micros(s.max_us),
            ]
        })
        .collect();
    let mut out = table(
        &[
            "TOOL", "STATUS", "ERROR", "COUNT", "P50", "P90", "P99", "MAX",
        ],
        &rows,
    );
    let r = Refusals::of(stats);
    let by: Vec<String> = r
        .by_error_type
        .iter()
        .map(|(t, n)| format!("{t} {n}"))
        .collect();
    out.push_str(&format!(
        "\n{} call(s), {} refused before running{}\n",
        r.calls,
        r.refused,
        if by.is_empty() {
            String::new()
        } else {
            format!(": {}", by.join(", "))
        }
    ));
    out
}
