//! Reading operations back: rows into [`OperationRecord`]s, with the owner that started each
//! one. Used by the reader connections and, for atomic claims and settlements, by the writer
//! inside its transaction. The listing behind `toolgate journal list` and `stats` is in
//! [`super::listing`].

use rusqlite::{Connection, OptionalExtension, Row, params};

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
    output_size, result_digest, external_reference, artifact_ids, retry_count, result, trace, \
    owner, (SELECT pid FROM owners WHERE owners.owner_id = operations.owner), principal";

/// An operation with the owner that started it (`None` for operations written before shared
/// journals) and that owner's pid, while its row is kept.
#[derive(Clone, Debug)]
pub(crate) struct Owned {
    pub(crate) record: OperationRecord,
    pub(crate) owner: Option<String>,
    pub(crate) pid: Option<u32>,
}

fn owned_row(r: &Row<'_>) -> rusqlite::Result<Owned> {
    Ok(Owned {
        record: operation_row(r)?,
        owner: r.get(26)?,
        pid: r.get(27)?,
    })
}

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
        key_source: parsed("key_source", &text(9)?, KeySource::parse)?,
        arguments_hash: text(10)?,
        arguments: text(11)?,
        permission: json("permission", &text(12)?)?,
        scheduler_batch: r
            .get::<_, Option<i64>>(13)?
            .and_then(|b| usize::try_from(b).ok()),
        started_at: text(14)?,
        principal: r.get(28)?,
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
        running_in: None,
    })
}

/// Adds the attempts and settlements of an operation.
fn complete(conn: &Connection, mut owned: Owned) -> rusqlite::Result<Owned> {
    let op = &mut owned.record;
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
    Ok(owned)
}

/// One operation by id.
pub(crate) fn by_id(conn: &Connection, id: &str) -> rusqlite::Result<Option<Owned>> {
    let sql = format!("SELECT {OPERATION_COLUMNS} FROM operations WHERE operation_id = ?1");
    let op = conn
        .prepare_cached(&sql)?
        .query_row(params![id], owned_row)
        .optional()?;
    op.map(|o| complete(conn, o)).transpose()
}

/// The latest operation a claim with this key could stand for: for a client key, the latest
/// with that client key in `scope` ([`OperationStart::key_scope`]), whatever the tool (a
/// client key names one request of one principal, or of one session without one); otherwise
/// the latest of the tool with that key and source (and these arguments, when given) of the
/// same principal, or of sessions without one ([`super::super::spec_key_owner`]; scope `""`:
/// anyone's).
pub(crate) fn by_key(
    conn: &Connection,
    tool: &str,
    key: &str,
    source: KeySource,
    arguments_hash: Option<&str>,
    scope: &str,
) -> rusqlite::Result<Option<Owned>> {
    let op = if source == KeySource::Client {
        conn.prepare_cached(&by_client_key_sql())?
            .query_row(params![scope, key], owned_row)
            .optional()?
    } else {
        // 0: everyone's (the person's lookups), 1: sessions without a principal, 2: this one.
        let (whose, principal) = match super::super::spec_key_owner(scope) {
            None => (0, None),
            Some(None) => (1, None),
            Some(Some(p)) => (2, Some(p)),
        };
        conn.prepare_cached(&by_key_sql())?
            .query_row(
                params![tool, key, source.as_str(), arguments_hash, whose, principal],
                owned_row,
            )
            .optional()?
    };
    op.map(|o| complete(conn, o)).transpose()
}

fn by_client_key_sql() -> String {
    format!(
        "SELECT {OPERATION_COLUMNS} FROM operations WHERE key_scope = ?1
         AND idempotency_key = ?2 AND key_source = 'client' ORDER BY seq DESC LIMIT 1"
    )
}

fn by_key_sql() -> String {
    format!(
        "SELECT {OPERATION_COLUMNS} FROM operations WHERE tool = ?1 AND idempotency_key = ?2
         AND key_source = ?3 AND (?4 IS NULL OR arguments_hash = ?4)
         AND (?5 = 0 OR (?5 = 1 AND principal IS NULL) OR (?5 = 2 AND principal = ?6))
         ORDER BY seq DESC LIMIT 1"
    )
}

/// The latest operation of a tool with these arguments whose outcome is unknown (started, or
/// `unknown_outcome`).
pub(crate) fn latest_uncertain(
    conn: &Connection,
    tool: &str,
    arguments_hash: &str,
) -> rusqlite::Result<Option<Owned>> {
    let sql = format!(
        "SELECT {OPERATION_COLUMNS} FROM operations WHERE tool = ?1 AND arguments_hash = ?2
         AND state IN ('started', 'unknown_outcome') ORDER BY seq DESC LIMIT 1"
    );
    let op = conn
        .prepare_cached(&sql)?
        .query_row(params![tool, arguments_hash], owned_row)
        .optional()?;
    op.map(|o| complete(conn, o)).transpose()
}

/// Operations in a call (one per run of it), oldest first.
pub(crate) fn by_call(conn: &Connection, call_id: &str) -> rusqlite::Result<Vec<Owned>> {
    let sql = format!("SELECT {OPERATION_COLUMNS} FROM operations WHERE call_id = ?1 ORDER BY seq");
    let ops: Vec<Owned> = conn
        .prepare_cached(&sql)?
        .query_map(params![call_id], owned_row)?
        .collect::<Result<_, _>>()?;
    ops.into_iter().map(|o| complete(conn, o)).collect()
}

/// Operations started and neither finished nor settled (running, or cut off), oldest first.
pub(crate) fn unfinished(conn: &Connection) -> rusqlite::Result<Vec<Owned>> {
    let sql =
        format!("SELECT {OPERATION_COLUMNS} FROM operations WHERE state = 'started' ORDER BY seq");
    let ops: Vec<Owned> = conn
        .prepare_cached(&sql)?
        .query_map([], owned_row)?
        .collect::<Result<_, _>>()?;
    ops.into_iter().map(|o| complete(conn, o)).collect()
}

#[cfg(test)]
mod tests {
    use rusqlite::StatementStatus;

    use super::*;
    use crate::runtime::journal::sqlite::SqliteOptions;
    use crate::runtime::journal::sqlite::schema::{open_reader, open_writer};

    /// A lookup by key is planned once per connection, whatever key is bound: planning it
    /// again per call was most of a lookup's cost.
    #[test]
    fn lookups_by_key_are_planned_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.db");
        let opts = SqliteOptions::default();
        let writer = open_writer(&path, &opts).unwrap();
        let reader = open_reader(&path, &opts).unwrap();
        for conn in [&writer, &reader] {
            for source in [KeySource::Client, KeySource::Spec, KeySource::Derived] {
                for i in 0..4 {
                    let (key, hash) = (format!("k{i}"), format!("h{i}"));
                    by_key(conn, "t", &key, source, Some(&hash), "session:s").unwrap();
                    by_key(conn, "t", &key, source, None, "session:s").unwrap();
                }
            }
            for sql in [by_client_key_sql(), by_key_sql()] {
                let stmt = conn.prepare_cached(&sql).unwrap();
                assert!(stmt.get_status(StatementStatus::Run) >= 8, "{sql}");
                assert_eq!(stmt.get_status(StatementStatus::RePrepare), 0, "{sql}");
            }
        }
    }
}
