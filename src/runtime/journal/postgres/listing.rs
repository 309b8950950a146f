//! The query behind `toolgate journal list` on a PostgreSQL journal: calls, as the audit saw
//! them, joined with the operations they ran — the same table, filter and rows as the SQLite
//! journal's listing.

use tokio_postgres::GenericClient;
use tokio_postgres::types::ToSql;

use super::Db;
use crate::runtime::journal::JournalError;
use crate::runtime::journal::listing::{CallSummary, Filter};

/// Calls and operations as one table: `kind` is `call` (an audit record, and its operation if
/// it ran) or `operation` (an operation without an audit record).
const CALLS: &str = "
    SELECT 'call' AS kind, a.at_us AS t, a.start_time AS started_at, a.operation_id,
        a.session_id, a.call_id, a.tool, coalesce(o.tool_version, a.tool_version) AS tool_version,
        coalesce(o.state, a.status) AS status,
        CASE WHEN o.state IN ('abandoned', 'succeeded', 'failed') THEN NULL
             ELSE a.error_type END AS error_type,
        coalesce(o.attempts, 0) AS attempts, a.duration_us AS duration_us,
        coalesce(a.idempotency_key, o.idempotency_key) AS idempotency_key,
        a.permission::text AS permission, a.summary, a.replayed
    FROM audit a LEFT JOIN operations o ON o.operation_id = a.operation_id
    UNION ALL
    SELECT 'operation', o.started_us, o.started_at, o.operation_id, o.session_id, o.call_id,
        o.tool, o.tool_version, o.state, o.error_type, o.attempts,
        o.finished_us - o.started_us, o.idempotency_key, o.permission::text, NULL, false
    FROM operations o
    WHERE NOT EXISTS (SELECT 1 FROM audit a WHERE a.operation_id = o.operation_id)";

/// Operations alone, in the same columns.
const OPERATIONS: &str = "
    SELECT 'operation' AS kind, o.started_us AS t, o.started_at, o.operation_id, o.session_id,
        o.call_id, o.tool, o.tool_version, o.state AS status, o.error_type, o.attempts,
        o.finished_us - o.started_us AS duration_us, o.idempotency_key,
        o.permission::text AS permission, NULL::text AS summary, false AS replayed
    FROM operations o";

/// The most recent calls matching a filter, oldest first.
pub(crate) async fn list(
    db: &Db,
    c: &impl GenericClient,
    f: &Filter,
) -> Result<Vec<CallSummary>, JournalError> {
    let mut conds = Vec::new();
    let mut texts: Vec<&String> = Vec::new();
    for (column, v) in [
        ("status", &f.status),
        ("tool", &f.tool),
        ("session_id", &f.session),
        ("error_type", &f.error_type),
    ] {
        if let Some(v) = v {
            texts.push(v);
            conds.push(format!("{column} = ${}", texts.len()));
        }
    }
    let mut params: Vec<&(dyn ToSql + Sync)> =
        texts.iter().map(|t| *t as &(dyn ToSql + Sync)).collect();
    if let Some(t) = &f.since_us {
        params.push(t);
        conds.push(format!("t >= ${}", params.len()));
    }
    if let Some(t) = &f.until_us {
        params.push(t);
        conds.push(format!("t < ${}", params.len()));
    }
    let clause = if conds.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", conds.join(" AND "))
    };
    let limit = f
        .limit
        .map_or(i64::MAX, |l| i64::try_from(l).unwrap_or(i64::MAX));
    let source = if f.operations { OPERATIONS } else { CALLS };
    let sql = format!(
        "SELECT kind, started_at, operation_id, session_id, call_id, tool, tool_version, status, \
         error_type, attempts, duration_us, idempotency_key, permission, summary, replayed \
         FROM ({source}) calls {clause} ORDER BY t DESC, kind DESC LIMIT {limit}"
    );
    let rows = c.query(&sql, &params).await.map_err(|e| db.error(&e))?;
    let mut out = rows
        .iter()
        .map(summary_row)
        .collect::<Result<Vec<_>, tokio_postgres::Error>>()
        .map_err(|e| JournalError::Failed(format!("a journal row cannot be read: {e}")))?;
    out.reverse();
    Ok(out)
}

fn summary_row(r: &tokio_postgres::Row) -> Result<CallSummary, tokio_postgres::Error> {
    let permission: Option<String> = r.try_get(12)?;
    Ok(CallSummary {
        kind: r.try_get(0)?,
        started_at: r.try_get(1)?,
        operation_id: r.try_get(2)?,
        session_id: r.try_get(3)?,
        call_id: r.try_get(4)?,
        tool: r.try_get(5)?,
        tool_version: r
            .try_get::<_, Option<i64>>(6)?
            .and_then(|v| u32::try_from(v).ok()),
        status: r.try_get(7)?,
        error_type: r.try_get(8)?,
        attempts: r
            .try_get::<_, Option<i32>>(9)?
            .map_or(0, |a| u32::try_from(a).unwrap_or(0)),
        duration_us: r
            .try_get::<_, Option<i64>>(10)?
            .map(|d| u64::try_from(d).unwrap_or(0)),
        idempotency_key: r.try_get(11)?,
        permission: permission.and_then(|p| serde_json::from_str(&p).ok()),
        summary: r.try_get(13)?,
        replayed: r.try_get(14)?,
    })
}
