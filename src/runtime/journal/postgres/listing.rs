//! The query behind `toolgate journal list` on a PostgreSQL journal: calls, as the audit saw
//! them, joined with the operations they ran — the same table, filter and rows as the SQLite
//! journal's listing.

use tokio_postgres::GenericClient;
use tokio_postgres::types::ToSql;

use super::Db;
use crate::runtime::journal::JournalError;
use crate::runtime::journal::listing::{CALLS, CallSummary, Filter, OPERATIONS};

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
