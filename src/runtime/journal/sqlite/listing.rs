//! The queries behind `toolgate journal list`, `show` (of calls without an operation) and
//! `stats`: calls, as the audit saw them, joined with the operations they ran.
//!
//! A call that ran has an audit record and an operation; its status is the operation's current
//! state (a settlement after a crash changes it). A refused, unknown, replayed or pure call has
//! an audit record only. An operation without an audit record — cut off by a crash before the
//! call ended, still running, or from before the audit — is listed from the operation alone.

use std::collections::BTreeMap;

use rusqlite::{Connection, Row, params};
use serde::Serialize;

use crate::ir::ErrorType;
use crate::runtime::journal::listing::{CALLS, OPERATIONS};
pub use crate::runtime::journal::listing::{CallSummary, Filter};

impl Filter {
    fn source(&self) -> &'static str {
        if self.operations { OPERATIONS } else { CALLS }
    }

    fn clause(&self) -> (String, Vec<rusqlite::types::Value>) {
        use rusqlite::types::Value as V;
        let mut conds = Vec::new();
        let mut values = Vec::new();
        for (column, v) in [
            ("status", &self.status),
            ("tool", &self.tool),
            ("session_id", &self.session),
            ("error_type", &self.error_type),
        ] {
            if let Some(v) = v {
                values.push(V::Text(v.clone()));
                conds.push(format!("{column} = ?{}", values.len()));
            }
        }
        if let Some(t) = self.since_us {
            values.push(V::Integer(t));
            conds.push(format!("t >= ?{}", values.len()));
        }
        if let Some(t) = self.until_us {
            values.push(V::Integer(t));
            conds.push(format!("t < ?{}", values.len()));
        }
        if conds.is_empty() {
            (String::new(), values)
        } else {
            (format!("WHERE {}", conds.join(" AND ")), values)
        }
    }
}

fn summary_row(r: &Row<'_>) -> rusqlite::Result<CallSummary> {
    let permission: Option<String> = r.get(13)?;
    Ok(CallSummary {
        kind: r.get(0)?,
        started_at: r.get(2)?,
        operation_id: r.get(3)?,
        session_id: r.get(4)?,
        call_id: r.get(5)?,
        tool: r.get(6)?,
        tool_version: r.get(7)?,
        status: r.get(8)?,
        error_type: r.get(9)?,
        attempts: r.get::<_, Option<u32>>(10)?.unwrap_or(0),
        duration_us: r.get::<_, Option<i64>>(11)?.map(|d| d.max(0) as u64),
        idempotency_key: r.get(12)?,
        permission: permission.and_then(|p| serde_json::from_str(&p).ok()),
        summary: r.get(14)?,
        replayed: r.get::<_, i64>(15)? != 0,
    })
}

/// The most recent calls matching a filter, oldest first.
pub(crate) fn list(conn: &Connection, f: &Filter) -> rusqlite::Result<Vec<CallSummary>> {
    let (clause, values) = f.clause();
    let limit = f
        .limit
        .map_or(i64::MAX, |l| i64::try_from(l).unwrap_or(i64::MAX));
    let sql = format!(
        "SELECT * FROM ({}) {clause} ORDER BY t DESC, kind DESC LIMIT {limit}",
        f.source()
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut rows: Vec<CallSummary> = stmt
        .query_map(rusqlite::params_from_iter(values), summary_row)?
        .collect::<Result<_, _>>()?;
    rows.reverse();
    Ok(rows)
}

/// The audit record of one call.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AuditRecord {
    /// The call's trace record.
    pub trace: crate::runtime::trace::TraceRecord,
    /// The arguments (canonical JSON, cut at 16 KiB).
    pub arguments: String,
    /// What the model was told.
    pub summary: String,
}

/// One call of the audit, as `toolgate diff --replay` reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedArguments {
    /// The tool (its current name when the call used an alias).
    pub tool: String,
    /// The arguments (canonical JSON, cut at 16 KiB).
    pub arguments: String,
    /// The session's context.
    pub context: String,
}

/// Every call of the audit, oldest first.
pub(crate) fn recorded_calls(conn: &Connection) -> rusqlite::Result<Vec<RecordedArguments>> {
    let mut stmt = conn.prepare(
        "SELECT tool, arguments, coalesce(json_extract(trace, '$.context'), '') FROM audit
         ORDER BY seq",
    )?;
    stmt.query_map([], |r| {
        Ok(RecordedArguments {
            tool: r.get(0)?,
            arguments: r.get(1)?,
            context: r.get(2)?,
        })
    })?
    .collect()
}

/// The audit records of a call id without an operation of their own, oldest first.
pub(crate) fn audit_of_call(
    conn: &Connection,
    call_id: &str,
) -> rusqlite::Result<Vec<AuditRecord>> {
    let mut stmt = conn.prepare_cached(
        "SELECT trace, arguments, summary FROM audit WHERE call_id = ?1
         AND operation_id IS NULL ORDER BY seq",
    )?;
    stmt.query_map(params![call_id], |r| {
        let trace: String = r.get(0)?;
        Ok(AuditRecord {
            trace: serde_json::from_str(&trace).map_err(|e| {
                rusqlite::Error::FromSqlConversionFailure(
                    0,
                    rusqlite::types::Type::Text,
                    format!("audit trace: {e}").into(),
                )
            })?,
            arguments: r.get(1)?,
            summary: r.get(2)?,
        })
    })?
    .collect()
}

/// Counts and latency percentiles of one tool, status and error type.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ToolStats {
    /// The tool.
    pub tool: String,
    /// The status ([`crate::runtime::journal::OperationState::as_str`], or a call's status).
    pub status: String,
    /// Why those calls did not succeed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    /// Calls.
    pub count: u64,
    /// Median duration of those whose duration is known, µs.
    pub p50_us: Option<u64>,
    /// 90th percentile, µs.
    pub p90_us: Option<u64>,
    /// 99th percentile, µs.
    pub p99_us: Option<u64>,
    /// Slowest, µs.
    pub max_us: Option<u64>,
}

/// How many calls were refused before they ran, by error type.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Refusals {
    /// Calls counted.
    pub calls: u64,
    /// Of those, refused before running (unknown tool, invalid arguments, a semantic rule,
    /// a denial, no approval).
    pub refused: u64,
    /// Refusals by error type.
    pub by_error_type: BTreeMap<String, u64>,
}

impl Refusals {
    /// The refusals among some statistics.
    pub fn of(stats: &[ToolStats]) -> Refusals {
        let mut r = Refusals::default();
        for s in stats {
            r.calls += s.count;
            if let Some(t) = s.error_type.as_deref().filter(|t| is_refusal(t)) {
                r.refused += s.count;
                *r.by_error_type.entry(t.to_owned()).or_default() += s.count;
            }
        }
        r
    }
}

/// Whether an error type means the call was refused before it ran.
fn is_refusal(error_type: &str) -> bool {
    ErrorType::parse(error_type).is_some_and(|t| {
        matches!(
            t,
            ErrorType::UnknownTool
                | ErrorType::InvalidArguments
                | ErrorType::SemanticValidationError
                | ErrorType::PolicyDenied
                | ErrorType::UserDenied
                | ErrorType::ApprovalUnavailable
        )
    })
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[u64], p: u64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (p * sorted.len() as u64).div_ceil(100).max(1);
    sorted.get(usize::try_from(rank - 1).ok()?).copied()
}

/// Counts and latencies per tool, status and error type.
pub(crate) fn stats(conn: &Connection, f: &Filter) -> rusqlite::Result<Vec<ToolStats>> {
    let (clause, values) = f.clause();
    let sql = format!(
        "SELECT tool, status, error_type, duration_us FROM ({}) {clause}",
        f.source()
    );
    let mut stmt = conn.prepare(&sql)?;
    type Key = (String, String, Option<String>);
    let mut groups: BTreeMap<Key, (u64, Vec<u64>)> = BTreeMap::new();
    let mut rows = stmt.query(rusqlite::params_from_iter(values))?;
    while let Some(r) = rows.next()? {
        let g = groups.entry((r.get(0)?, r.get(1)?, r.get(2)?)).or_default();
        g.0 += 1;
        if let Some(d) = r.get::<_, Option<i64>>(3)? {
            g.1.push(d.max(0) as u64);
        }
    }
    Ok(groups
        .into_iter()
        .map(|((tool, status, error_type), (count, mut d))| {
            d.sort_unstable();
            ToolStats {
                tool,
                status,
                error_type,
                count,
                p50_us: percentile(&d, 50),
                p90_us: percentile(&d, 90),
                p99_us: percentile(&d, 99),
                max_us: d.last().copied(),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(
            (percentile(&v, 50), percentile(&v, 90), percentile(&v, 99)),
            (Some(50), Some(90), Some(99))
        );
        assert_eq!(percentile(&[7], 99), Some(7));
        assert_eq!(percentile(&[], 50), None);
    }

    #[test]
    fn refusals_count_calls_refused_before_running() {
        let s = |tool: &str, status: &str, t: Option<&str>, count| ToolStats {
            tool: tool.into(),
            status: status.into(),
            error_type: t.map(str::to_owned),
            count,
            p50_us: None,
            p90_us: None,
            p99_us: None,
            max_us: None,
        };
        let r = Refusals::of(&[
            s("read_file", "success", None, 5),
            s("read_file", "denied", Some("POLICY_DENIED"), 2),
            s("bash", "error", Some("UNKNOWN_TOOL"), 1),
            s("bash", "error", Some("TIMEOUT"), 1),
        ]);
        assert_eq!((r.calls, r.refused, r.by_error_type.len()), (9, 3, 2));
    }
}
