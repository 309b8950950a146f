//! Reading the journal back: rows into [`OperationRecord`]s, and the queries behind
//! `toolgate journal list`, `show` and `stats`. Used by the reader connections and, for atomic
//! claims and settlements, by the writer inside its transaction.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::Serialize;

use crate::ir::{Effect, ErrorType, Idempotency, Status};
use crate::runtime::journal::{
    AttemptRecord, KeySource, OperationFinish, OperationRecord, OperationStart, Settled, SettledBy,
    Settlement,
};

/// A malformed value in a row.
fn bad(column: &str, value: &str) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(
        0,
        rusqlite::types::Type::Text,
        format!("column {column} holds `{value}`").into(),
    )
}

fn json<T: serde::de::DeserializeOwned>(column: &str, text: &str) -> rusqlite::Result<T> {
    serde_json::from_str(text).map_err(|e| bad(column, &e.to_string()))
}

fn parsed<T>(column: &str, text: &str, parse: impl Fn(&str) -> Option<T>) -> rusqlite::Result<T> {
    parse(text).ok_or_else(|| bad(column, text))
}

const OPERATION_COLUMNS: &str = "operation_id, session_id, call_id, tool, tool_version, \
    schema_version, effect, idempotency, idempotency_key, key_source, arguments_hash, arguments, \
    permission, scheduler_batch, started_at, finished_at, status, error_type, exit_code, \
    output_size, result_digest, external_reference, artifact_ids, retry_count, result, trace";

/// One `operations` row without attempts and settlements.
fn operation_row(r: &Row<'_>) -> rusqlite::Result<OperationRecord> {
    let text = |i: usize| r.get::<_, String>(i);
    let start = OperationStart {
        operation_id: text(0)?,
        session_id: text(1)?,
        call_id: text(2)?,
        tool: text(3)?,
        tool_version: r.get(4)?,
        schema_version: text(5)?,
        effect: parsed("effect", &text(6)?, Effect::parse)?,
        idempotency: parsed("idempotency", &text(7)?, Idempotency::parse)?,
        idempotency_key: text(8)?,
        key_source: parsed("key_source", &text(9)?, |s| match s {
            "spec" => Some(KeySource::Spec),
            "derived" => Some(KeySource::Derived),
            _ => None,
        })?,
        arguments_hash: text(10)?,
        arguments: text(11)?,
        permission: json("permission", &text(12)?)?,
        scheduler_batch: r
            .get::<_, Option<i64>>(13)?
            .and_then(|b| usize::try_from(b).ok()),
        started_at: text(14)?,
    };
    let finish = match r.get::<_, Option<String>>(15)? {
        None => None,
        Some(finished_at) => Some(OperationFinish {
            operation_id: start.operation_id.clone(),
            finished_at,
            status: parsed("status", &text(16)?, Status::parse)?,
            error_type: r
                .get::<_, Option<String>>(17)?
                .map(|t| parsed("error_type", &t, ErrorType::parse))
                .transpose()?,
            exit_code: r.get(18)?,
            output_size: r.get::<_, Option<i64>>(19)?.unwrap_or(0).max(0) as u64,
            result_digest: r.get::<_, Option<String>>(20)?.unwrap_or_default(),
            external_reference: r.get(21)?,
            artifact_ids: match r.get::<_, Option<String>>(22)? {
                Some(t) => json("artifact_ids", &t)?,
                None => Vec::new(),
            },
            retry_count: r.get::<_, Option<u32>>(23)?.unwrap_or(0),
            result: json(
                "result",
                &r.get::<_, Option<String>>(24)?.unwrap_or_default(),
            )?,
            trace: json(
                "trace",
                &r.get::<_, Option<String>>(25)?.unwrap_or_default(),
            )?,
        }),
    };
    Ok(OperationRecord {
        start,
        attempts: Vec::new(),
        finish,
        settlements: Vec::new(),
    })
}

/// Adds the attempts and settlements of an operation.
fn complete(conn: &Connection, mut op: OperationRecord) -> rusqlite::Result<OperationRecord> {
    let id = op.start.operation_id.clone();
    let mut stmt = conn.prepare_cached(
        "SELECT attempt, error_type, retry_after_ms, ended_at FROM attempts
         WHERE operation_id = ?1 ORDER BY attempt",
    )?;
    op.attempts = stmt
        .query_map(params![id], |r| {
            Ok(AttemptRecord {
                operation_id: id.clone(),
                attempt: r.get(0)?,
                error_type: r
                    .get::<_, Option<String>>(1)?
                    .map(|t| parsed("error_type", &t, ErrorType::parse))
                    .transpose()?,
                retry_after_ms: r
                    .get::<_, Option<i64>>(2)?
                    .and_then(|m| u64::try_from(m).ok()),
                ended_at: r.get(3)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    let mut stmt = conn.prepare_cached(
        "SELECT outcome, settled_by, reason, external_reference, at FROM settlements
         WHERE operation_id = ?1 ORDER BY seq",
    )?;
    op.settlements = stmt
        .query_map(params![id], |r| {
            Ok(Settlement {
                operation_id: id.clone(),
                outcome: parsed("outcome", &r.get::<_, String>(0)?, Settled::parse)?,
                by: parsed("settled_by", &r.get::<_, String>(1)?, SettledBy::parse)?,
                reason: r.get(2)?,
                external_reference: r.get(3)?,
                at: r.get(4)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(op)
}

/// One operation by id.
pub(crate) fn by_id(conn: &Connection, id: &str) -> rusqlite::Result<Option<OperationRecord>> {
    let sql = format!("SELECT {OPERATION_COLUMNS} FROM operations WHERE operation_id = ?1");
    let op = conn
        .prepare_cached(&sql)?
        .query_row(params![id], operation_row)
        .optional()?;
    op.map(|o| complete(conn, o)).transpose()
}

/// The latest operation of a tool with a key (and these arguments, when given).
pub(crate) fn by_key(
    conn: &Connection,
    tool: &str,
    key: &str,
    arguments_hash: Option<&str>,
) -> rusqlite::Result<Option<OperationRecord>> {
    let sql = format!(
        "SELECT {OPERATION_COLUMNS} FROM operations WHERE tool = ?1 AND idempotency_key = ?2
         AND (?3 IS NULL OR arguments_hash = ?3) ORDER BY seq DESC LIMIT 1"
    );
    let op = conn
        .prepare_cached(&sql)?
        .query_row(params![tool, key, arguments_hash], operation_row)
        .optional()?;
    op.map(|o| complete(conn, o)).transpose()
}

/// Operations in a call (one per run of it), oldest first.
pub(crate) fn by_call(conn: &Connection, call_id: &str) -> rusqlite::Result<Vec<OperationRecord>> {
    let sql = format!("SELECT {OPERATION_COLUMNS} FROM operations WHERE call_id = ?1 ORDER BY seq");
    let ops: Vec<OperationRecord> = conn
        .prepare_cached(&sql)?
        .query_map(params![call_id], operation_row)?
        .collect::<Result<_, _>>()?;
    ops.into_iter().map(|o| complete(conn, o)).collect()
}

/// Operations started and neither finished nor settled, oldest first.
pub(crate) fn unfinished(conn: &Connection) -> rusqlite::Result<Vec<OperationRecord>> {
    let sql =
        format!("SELECT {OPERATION_COLUMNS} FROM operations WHERE state = 'started' ORDER BY seq");
    let ops: Vec<OperationRecord> = conn
        .prepare_cached(&sql)?
        .query_map([], operation_row)?
        .collect::<Result<_, _>>()?;
    ops.into_iter().map(|o| complete(conn, o)).collect()
}

/// Which operations `list` and `stats` look at.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    /// A state word: `started`, a result status, or a settlement.
    pub status: Option<String>,
    /// A tool.
    pub tool: Option<String>,
    /// A session.
    pub session: Option<String>,
    /// At most this many (the most recent), for `list`.
    pub limit: Option<usize>,
}

impl Filter {
    fn clause(&self) -> (String, Vec<String>) {
        let mut conds = Vec::new();
        let mut values = Vec::new();
        for (column, v) in [
            ("state", &self.status),
            ("tool", &self.tool),
            ("session_id", &self.session),
        ] {
            if let Some(v) = v {
                values.push(v.clone());
                conds.push(format!("{column} = ?{}", values.len()));
            }
        }
        if conds.is_empty() {
            (String::new(), values)
        } else {
            (format!("WHERE {}", conds.join(" AND ")), values)
        }
    }
}

/// One line of `toolgate journal list`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OperationSummary {
    /// The operation.
    pub operation_id: String,
    /// Its session.
    pub session_id: String,
    /// Its call.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The contract version that ran.
    pub tool_version: u32,
    /// Where it stands ([`crate::runtime::journal::OperationState::as_str`]).
    pub status: String,
    /// Why it did not succeed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    /// Attempts recorded.
    pub attempts: u32,
    /// RFC 3339.
    pub started_at: String,
    /// From start to finish, when it finished.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_us: Option<u64>,
    /// The key a repeat of the call is recognised by.
    pub idempotency_key: String,
}

/// The most recent operations matching a filter, oldest first.
pub(crate) fn list(conn: &Connection, f: &Filter) -> rusqlite::Result<Vec<OperationSummary>> {
    let (clause, values) = f.clause();
    let limit = f
        .limit
        .map_or(i64::MAX, |l| i64::try_from(l).unwrap_or(i64::MAX));
    let sql = format!(
        "SELECT * FROM (SELECT seq, operation_id, session_id, call_id, tool, tool_version, state,
                error_type, attempts, started_at, finished_us - started_us, idempotency_key
            FROM operations {clause} ORDER BY seq DESC LIMIT {limit}) ORDER BY seq"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(values), |r| {
        Ok(OperationSummary {
            operation_id: r.get(1)?,
            session_id: r.get(2)?,
            call_id: r.get(3)?,
            tool: r.get(4)?,
            tool_version: r.get(5)?,
            status: r.get(6)?,
            error_type: r.get(7)?,
            attempts: r.get(8)?,
            started_at: r.get(9)?,
            duration_us: r.get::<_, Option<i64>>(10)?.map(|d| d.max(0) as u64),
            idempotency_key: r.get(11)?,
        })
    })?;
    rows.collect()
}

/// Counts and latency percentiles of one tool and status.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ToolStats {
    /// The tool.
    pub tool: String,
    /// The status ([`crate::runtime::journal::OperationState::as_str`]).
    pub status: String,
    /// Operations.
    pub count: u64,
    /// Median start-to-finish time of those that finished, µs.
    pub p50_us: Option<u64>,
    /// 90th percentile, µs.
    pub p90_us: Option<u64>,
    /// 99th percentile, µs.
    pub p99_us: Option<u64>,
    /// Slowest, µs.
    pub max_us: Option<u64>,
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[u64], p: u64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (p * sorted.len() as u64).div_ceil(100).max(1);
    sorted.get(usize::try_from(rank - 1).ok()?).copied()
}

/// Counts and latencies per tool and status.
pub(crate) fn stats(conn: &Connection, f: &Filter) -> rusqlite::Result<Vec<ToolStats>> {
    let (clause, values) = f.clause();
    let sql = format!("SELECT tool, state, finished_us - started_us FROM operations {clause}");
    let mut stmt = conn.prepare(&sql)?;
    let mut groups: BTreeMap<(String, String), (u64, Vec<u64>)> = BTreeMap::new();
    let mut rows = stmt.query(rusqlite::params_from_iter(values))?;
    while let Some(r) = rows.next()? {
        let g = groups.entry((r.get(0)?, r.get(1)?)).or_default();
        g.0 += 1;
        if let Some(d) = r.get::<_, Option<i64>>(2)? {
            g.1.push(d.max(0) as u64);
        }
    }
    Ok(groups
        .into_iter()
        .map(|((tool, status), (count, mut d))| {
            d.sort_unstable();
            ToolStats {
                tool,
                status,
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
    use super::percentile;

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
}
