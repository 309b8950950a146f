//! Reading operations back: rows into [`OperationRecord`]s, with whether the owner that started
//! each one still holds its lease (by the server's clock).

use tokio_postgres::{GenericClient, Row};

use crate::ir::{Effect, ErrorType, Idempotency, Status};
use crate::runtime::journal::{
    AttemptRecord, JournalError, KeySource, OperationFinish, OperationRecord, OperationStart,
    Settled, SettledBy, Settlement,
};

/// The columns of an operation, its owner's pid and whether that owner's lease is current.
pub(crate) const OPERATION_COLUMNS: &str = "o.operation_id, o.session_id, o.call_id, o.tool, \
    o.tool_version, o.schema_version, o.effect, o.idempotency, o.idempotency_key, o.key_source, \
    o.arguments_hash, o.arguments, o.permission::text, o.scheduler_batch, o.started_at, \
    o.finished_at, o.status, o.error_type, o.exit_code, o.output_size, o.result_digest, \
    o.external_reference, o.artifact_ids::text, o.retry_count, o.result, o.trace::text, \
    o.principal, w.pid, coalesce(w.lease_expires_at > now(), false), w.host";

/// `FROM` with the owner joined.
pub(crate) const FROM: &str = "FROM operations o LEFT JOIN owners w ON w.owner_id = o.owner";

/// An operation, whether the owner that started it is alive (holds an unexpired lease) and, if
/// so, its pid and host.
#[derive(Clone, Debug)]
pub(crate) struct Owned {
    pub(crate) record: OperationRecord,
    pub(crate) live: bool,
    pub(crate) pid: Option<u32>,
    pub(crate) host: Option<String>,
}

fn bad(column: &str, value: &str) -> JournalError {
    JournalError::Failed(format!("the journal's column {column} holds `{value}`"))
}

fn json<T: serde::de::DeserializeOwned>(column: &str, text: &str) -> Result<T, JournalError> {
    serde_json::from_str(text).map_err(|e| bad(column, &e.to_string()))
}

fn parsed<T>(
    column: &str,
    text: &str,
    parse: impl Fn(&str) -> Option<T>,
) -> Result<T, JournalError> {
    parse(text).ok_or_else(|| bad(column, text))
}

fn get<'a, T: tokio_postgres::types::FromSql<'a>>(r: &'a Row, i: usize) -> Result<T, JournalError> {
    r.try_get(i)
        .map_err(|e| JournalError::Failed(format!("the journal's row cannot be read: {e}")))
}

/// One row of [`OPERATION_COLUMNS`], without attempts and settlements.
pub(crate) fn owned_row(r: &Row) -> Result<Owned, JournalError> {
    let text = |i: usize| get::<String>(r, i);
    let start = OperationStart {
        operation_id: text(0)?,
        session_id: text(1)?,
        call_id: text(2)?,
        tool: text(3)?,
        tool_version: u32::try_from(get::<i64>(r, 4)?).unwrap_or(0),
        schema_version: text(5)?,
        effect: parsed("effect", &text(6)?, Effect::parse)?,
        idempotency: parsed("idempotency", &text(7)?, Idempotency::parse)?,
        idempotency_key: text(8)?,
        key_source: parsed("key_source", &text(9)?, KeySource::parse)?,
        arguments_hash: text(10)?,
        arguments: text(11)?,
        permission: json("permission", &text(12)?)?,
        scheduler_batch: get::<Option<i64>>(r, 13)?.and_then(|b| usize::try_from(b).ok()),
        started_at: text(14)?,
        principal: get(r, 26)?,
    };
    let finish = match get::<Option<String>>(r, 15)? {
        None => None,
        Some(finished_at) => Some(OperationFinish {
            operation_id: start.operation_id.clone(),
            finished_at,
            status: parsed("status", &text(16)?, Status::parse)?,
            error_type: get::<Option<String>>(r, 17)?
                .map(|t| parsed("error_type", &t, ErrorType::parse))
                .transpose()?,
            exit_code: get(r, 18)?,
            output_size: u64::try_from(get::<Option<i64>>(r, 19)?.unwrap_or(0)).unwrap_or(0),
            result_digest: get::<Option<String>>(r, 20)?.unwrap_or_default(),
            external_reference: get(r, 21)?,
            artifact_ids: match get::<Option<String>>(r, 22)? {
                Some(t) => json("artifact_ids", &t)?,
                None => Vec::new(),
            },
            retry_count: u32::try_from(get::<Option<i32>>(r, 23)?.unwrap_or(0)).unwrap_or(0),
            result: json("result", &get::<Option<String>>(r, 24)?.unwrap_or_default())?,
            trace: json("trace", &get::<Option<String>>(r, 25)?.unwrap_or_default())?,
        }),
    };
    Ok(Owned {
        record: OperationRecord {
            start,
            attempts: Vec::new(),
            finish,
            settlements: Vec::new(),
            running_in: None,
        },
        live: get(r, 28)?,
        pid: get::<Option<i32>>(r, 27)?.and_then(|p| u32::try_from(p).ok()),
        host: get(r, 29)?,
    })
}

/// Adds the attempts and settlements of an operation, and `running_in` when it is started and
/// its owner alive.
pub(crate) async fn complete(
    c: &impl GenericClient,
    mut owned: Owned,
) -> Result<Owned, JournalError> {
    let failed = |e: tokio_postgres::Error| JournalError::Failed(format!("journal: {e}"));
    let id = owned.record.start.operation_id.clone();
    let rows = c
        .query(
            "SELECT attempt, error_type, retry_after_ms, ended_at FROM attempts
             WHERE operation_id = $1 ORDER BY attempt",
            &[&id],
        )
        .await
        .map_err(failed)?;
    for r in &rows {
        owned.record.attempts.push(AttemptRecord {
            operation_id: id.clone(),
            attempt: u32::try_from(get::<i32>(r, 0)?).unwrap_or(0),
            error_type: get::<Option<String>>(r, 1)?
                .map(|t| parsed("error_type", &t, ErrorType::parse))
                .transpose()?,
            retry_after_ms: get::<Option<i64>>(r, 2)?.and_then(|m| u64::try_from(m).ok()),
            ended_at: get(r, 3)?,
        });
    }
    let rows = c
        .query(
            "SELECT outcome, settled_by, reason, external_reference, at FROM settlements
             WHERE operation_id = $1 ORDER BY seq",
            &[&id],
        )
        .await
        .map_err(failed)?;
    for r in &rows {
        owned.record.settlements.push(Settlement {
            operation_id: id.clone(),
            outcome: parsed("outcome", &get::<String>(r, 0)?, Settled::parse)?,
            by: parsed("settled_by", &get::<String>(r, 1)?, SettledBy::parse)?,
            reason: get(r, 2)?,
            external_reference: get(r, 3)?,
            at: get(r, 4)?,
        });
    }
    if owned.live && owned.record.state() == crate::runtime::journal::OperationState::Started {
        owned.record.running_in = owned.pid;
    }
    Ok(owned)
}

/// Runs a query of [`OPERATION_COLUMNS`] and completes every row.
pub(crate) async fn query(
    c: &impl GenericClient,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Result<Vec<Owned>, JournalError> {
    let rows = c
        .query(sql, params)
        .await
        .map_err(|e| JournalError::Failed(format!("journal: {e}")))?;
    let mut out = Vec::with_capacity(rows.len());
    for r in &rows {
        out.push(complete(c, owned_row(r)?).await?);
    }
    Ok(out)
}

/// The first row of [`query`].
pub(crate) async fn query_opt(
    c: &impl GenericClient,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Result<Option<Owned>, JournalError> {
    Ok(query(c, sql, params).await?.into_iter().next())
}

/// One operation by id.
pub(crate) async fn by_id(c: &impl GenericClient, id: &str) -> Result<Option<Owned>, JournalError> {
    let sql = format!("SELECT {OPERATION_COLUMNS} {FROM} WHERE o.operation_id = $1");
    query_opt(c, &sql, &[&id]).await
}

/// The latest operation a claim with this key could stand for (as the SQLite journal's
/// `by_key`): for a client key, the latest with that client key in `scope` whatever the tool;
/// otherwise the latest of the tool with that key and source (and these arguments, when
/// given) of the same principal, or of sessions without one (scope `""`: anyone's).
pub(crate) async fn by_key(
    c: &impl GenericClient,
    tool: &str,
    key: &str,
    source: KeySource,
    arguments_hash: Option<&str>,
    scope: &str,
) -> Result<Option<Owned>, JournalError> {
    if source == KeySource::Client {
        let sql = format!(
            "SELECT {OPERATION_COLUMNS} {FROM} WHERE o.key_scope = $1 AND o.idempotency_key = $2
             AND o.key_source = 'client' ORDER BY o.seq DESC LIMIT 1"
        );
        return query_opt(c, &sql, &[&scope, &key]).await;
    }
    // 0: everyone's (the person's lookups), 1: sessions without a principal, 2: this one.
    let (whose, principal): (i32, Option<&str>) = match super::super::spec_key_owner(scope) {
        None => (0, None),
        Some(None) => (1, None),
        Some(Some(p)) => (2, Some(p)),
    };
    let sql = format!(
        "SELECT {OPERATION_COLUMNS} {FROM} WHERE o.tool = $1 AND o.idempotency_key = $2
         AND o.key_source = $3 AND ($4::text IS NULL OR o.arguments_hash = $4)
         AND ($5 = 0 OR ($5 = 1 AND o.principal IS NULL) OR ($5 = 2 AND o.principal = $6::text))
         ORDER BY o.seq DESC LIMIT 1"
    );
    query_opt(
        c,
        &sql,
        &[
            &tool,
            &key,
            &source.as_str(),
            &arguments_hash,
            &whose,
            &principal,
        ],
    )
    .await
}

/// The latest operation of a tool with these arguments whose outcome is unknown.
pub(crate) async fn latest_uncertain(
    c: &impl GenericClient,
    tool: &str,
    arguments_hash: &str,
) -> Result<Option<Owned>, JournalError> {
    let sql = format!(
        "SELECT {OPERATION_COLUMNS} {FROM} WHERE o.tool = $1 AND o.arguments_hash = $2
         AND o.state IN ('started', 'unknown_outcome') ORDER BY o.seq DESC LIMIT 1"
    );
    query_opt(c, &sql, &[&tool, &arguments_hash]).await
}

/// Operations started and neither finished nor settled, oldest first; with `ended_only`, only
/// those whose owner's lease has expired (or who closed the journal).
pub(crate) async fn unfinished(
    c: &impl GenericClient,
    ended_only: bool,
) -> Result<Vec<Owned>, JournalError> {
    let live = if ended_only {
        "AND NOT coalesce(w.lease_expires_at > now(), false)"
    } else {
        ""
    };
    let sql = format!(
        "SELECT {OPERATION_COLUMNS} {FROM} WHERE o.state = 'started' {live} ORDER BY o.seq"
    );
    query(c, &sql, &[]).await
}

/// Operations of a call id, oldest first.
pub(crate) async fn by_call(
    c: &impl GenericClient,
    call_id: &str,
) -> Result<Vec<Owned>, JournalError> {
    let sql = format!("SELECT {OPERATION_COLUMNS} {FROM} WHERE o.call_id = $1 ORDER BY o.seq");
    query(c, &sql, &[&call_id]).await
}
