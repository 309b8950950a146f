//! The statements the writer runs inside its transactions: inserting and finishing
//! operations, audit records, and pruning.

use rusqlite::{Connection, params};
use serde::Serialize;

use super::rows;
use super::writer::Applied;
use crate::runtime::journal::{AuditEntry, JournalError, OperationFinish, OperationStart};
use crate::runtime::validate::canonical_json;

/// The longest arguments text an audit record keeps, in bytes (what is longer is cut, marked
/// with `…`); the operation of a call that ran keeps its arguments whole.
pub(crate) const AUDIT_ARGUMENTS_MAX: usize = 16 * 1024;

/// The longest summary an audit record keeps, in bytes.
const AUDIT_SUMMARY_MAX: usize = 4 * 1024;

/// What `journal prune` deletes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prune {
    /// Records from before this moment, µs since the epoch.
    pub before_us: i64,
    /// Only count.
    pub dry_run: bool,
}

/// What a prune deleted (or, dry, would delete).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PruneReport {
    /// Audit records of calls that started before the moment.
    pub audit_records: u64,
    /// Operations that started before the moment and are finished or settled (with their
    /// attempts and settlements).
    pub operations: u64,
    /// Operations that started before the moment and are kept because nobody knows yet how
    /// they ended (started, or `unknown_outcome`).
    pub kept_uncertain: u64,
    /// Whether nothing was deleted (a dry run).
    pub dry_run: bool,
}

/// Microseconds since the epoch of an RFC 3339 time (0 when it does not parse).
pub(crate) fn micros(rfc3339: &str) -> i64 {
    humantime::parse_rfc3339_weak(rfc3339)
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .and_then(|d| i64::try_from(d.as_micros()).ok())
        .unwrap_or(0)
}

fn to_json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

/// At most `max` bytes of `s`, cut at a character boundary and marked with `…`.
fn cut(mut s: String, max: usize) -> String {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    s.push('…');
    s
}

pub(super) fn finish(conn: &Connection, f: &OperationFinish) -> Result<(), Applied> {
    let n = conn
        .prepare_cached(
            "UPDATE operations SET state = ?2, status = ?2, finished_at = ?3,
                finished_us = ?4, error_type = ?5, exit_code = ?6, output_size = ?7,
                result_digest = ?8, external_reference = ?9, artifact_ids = ?10,
                retry_count = ?11, attempts = max(attempts, ?11 + 1), result = ?12,
                trace = ?13
             WHERE operation_id = ?1 AND finished_at IS NULL AND state = 'started'",
        )?
        .execute(params![
            f.operation_id,
            f.status.as_str(),
            f.finished_at,
            micros(&f.finished_at),
            f.error_type.map(|t| t.as_str()),
            f.exit_code,
            i64::try_from(f.output_size).unwrap_or(i64::MAX),
            f.result_digest,
            f.external_reference,
            to_json(&f.artifact_ids),
            f.retry_count,
            to_json(&f.result),
            to_json(&f.trace),
        ])?;
    if n == 0 {
        let why = match rows::by_id(conn, &f.operation_id)? {
            None => "finish of unknown operation",
            Some(op) if op.record.finish.is_some() => "operation finished twice",
            Some(_) => "finish of an operation settled after a crash",
        };
        return Err(Applied::Journal(JournalError::Invalid(format!(
            "{why}: {}",
            f.operation_id
        ))));
    }
    Ok(())
}

pub(super) fn insert(conn: &Connection, op: &OperationStart, owner: &str) -> Result<(), Applied> {
    conn.prepare_cached(
        "INSERT INTO operations (operation_id, session_id, call_id, tool, tool_version,
            schema_version, effect, idempotency, idempotency_key, key_source, arguments_hash,
            arguments, decision, permission, scheduler_batch, started_at, started_us, state,
            owner, principal, key_scope)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
            'started', ?18, ?19, ?20)",
    )?
    .execute(params![
        op.operation_id,
        op.session_id,
        op.call_id,
        op.tool,
        op.tool_version,
        op.schema_version,
        op.effect.as_str(),
        op.idempotency.as_str(),
        op.idempotency_key,
        op.key_source.as_str(),
        op.arguments_hash,
        op.arguments,
        op.permission.decision.as_str(),
        to_json(&op.permission),
        op.scheduler_batch.and_then(|b| i64::try_from(b).ok()),
        op.started_at,
        micros(&op.started_at),
        owner,
        op.principal,
        op.key_scope(),
    ])?;
    Ok(())
}

pub(super) fn insert_audit(conn: &Connection, e: &AuditEntry) -> rusqlite::Result<()> {
    let t = &e.trace;
    conn.prepare_cached(
        "INSERT INTO audit (at_us, start_time, session_id, call_id, tool, tool_version, status,
            error_type, decision, permission, operation_id, idempotency_key, replayed,
            duration_us, arguments, summary, trace, principal)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
    )?
    .execute(params![
        micros(&t.start_time),
        t.start_time,
        t.session_id,
        t.call_id,
        t.tool,
        t.tool_version,
        t.status.as_str(),
        t.error_type.map(|x| x.as_str()),
        t.permission.as_ref().map(|p| p.decision.as_str()),
        t.permission.as_ref().map(to_json),
        t.operation_id,
        e.idempotency_key,
        t.replayed,
        i64::try_from(t.duration_us).unwrap_or(i64::MAX),
        cut(canonical_json(&e.arguments), AUDIT_ARGUMENTS_MAX),
        cut(e.summary.clone(), AUDIT_SUMMARY_MAX),
        to_json(t),
        t.principal,
    ])?;
    Ok(())
}

/// Operations a prune may delete: started before the moment, and finished or settled.
const PRUNABLE: &str = "started_us < ?1 AND state NOT IN ('started', 'unknown_outcome')";

pub(super) fn prune(conn: &Connection, p: Prune) -> Result<PruneReport, Applied> {
    let count = |sql: &str| -> rusqlite::Result<u64> {
        conn.query_row(sql, params![p.before_us], |r| r.get::<_, i64>(0))
            .map(|n| u64::try_from(n).unwrap_or(0))
    };
    let mut report = PruneReport {
        audit_records: count("SELECT count(*) FROM audit WHERE at_us < ?1")?,
        operations: count(&format!("SELECT count(*) FROM operations WHERE {PRUNABLE}"))?,
        kept_uncertain: count(
            "SELECT count(*) FROM operations WHERE started_us < ?1
             AND state IN ('started', 'unknown_outcome')",
        )?,
        dry_run: p.dry_run,
    };
    if p.dry_run {
        return Ok(report);
    }
    conn.execute("DELETE FROM audit WHERE at_us < ?1", params![p.before_us])?;
    for child in ["attempts", "settlements"] {
        conn.execute(
            &format!(
                "DELETE FROM {child} WHERE operation_id IN
                 (SELECT operation_id FROM operations WHERE {PRUNABLE})"
            ),
            params![p.before_us],
        )?;
    }
    let n = conn.execute(
        &format!("DELETE FROM operations WHERE {PRUNABLE}"),
        params![p.before_us],
    )?;
    report.operations = n as u64;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::cut;

    #[test]
    fn cut_keeps_whole_characters() {
        assert_eq!(cut("abc".into(), 3), "abc");
        assert_eq!(cut("abcd".into(), 3), "abc…");
        assert_eq!(cut("aé".into(), 2), "a…");
    }
}
