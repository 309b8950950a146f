//! The PostgreSQL journal's schema and its migrations.
//!
//! A journal is recognised by its `schema_migrations` table, whose comment is [`MARKER`]; its
//! version is that table's highest row. Migrations run in one transaction under a
//! transaction-scoped advisory lock, so two hosts opening a new database together apply them
//! once. A database whose tables have a journal's names without that marker, or whose schema is
//! newer than this build reads, is refused and left as it is.

use tokio_postgres::GenericClient;

use super::Db;
use crate::runtime::journal::JournalError;

/// The schema version this build writes and reads.
pub(crate) const SCHEMA_VERSION: i64 = 3;

/// The comment on `schema_migrations` that marks a toolgate journal.
const MARKER: &str = "toolgate journal";

/// The advisory lock (class, object) migrations run under.
pub(crate) const MIGRATION_LOCK: (i32, i32) = (super::LOCK_CLASS, 0);

/// The tables of a journal: a database that has any of them but is not marked is refused.
const TABLES: &[&str] = &[
    "schema_migrations",
    "owners",
    "operations",
    "attempts",
    "settlements",
    "audit",
    "grants",
];

/// Version 1: owners with leases, operations (with the principal that asked), their attempts
/// and settlements, and the audit of every call.
const V1: &str = "
CREATE TABLE owners (
    owner_id         text PRIMARY KEY,
    host             text NOT NULL,
    pid              integer NOT NULL,
    toolgate         text NOT NULL,
    started_at       timestamptz NOT NULL DEFAULT now(),
    lease_expires_at timestamptz NOT NULL
);
CREATE TABLE operations (
    seq                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    operation_id       text NOT NULL UNIQUE,
    session_id         text NOT NULL,
    call_id            text NOT NULL,
    tool               text NOT NULL,
    tool_version       bigint NOT NULL,
    schema_version     text NOT NULL,
    effect             text NOT NULL,
    idempotency        text NOT NULL,
    idempotency_key    text NOT NULL,
    key_source         text NOT NULL,
    arguments_hash     text NOT NULL,
    arguments          text NOT NULL,
    decision           text NOT NULL,
    permission         jsonb NOT NULL,
    scheduler_batch    bigint,
    principal          text,
    started_at         text NOT NULL,
    started_us         bigint NOT NULL,
    state              text NOT NULL,
    attempts           integer NOT NULL DEFAULT 0,
    status             text,
    finished_at        text,
    finished_us        bigint,
    error_type         text,
    exit_code          integer,
    output_size        bigint,
    result_digest      text,
    external_reference text,
    artifact_ids       jsonb,
    retry_count        integer,
    result             text,
    trace              jsonb,
    owner              text
);
CREATE INDEX operations_by_key ON operations (tool, idempotency_key, seq);
CREATE INDEX operations_by_client_key ON operations (idempotency_key, seq)
    WHERE key_source = 'client';
CREATE INDEX operations_by_call ON operations (call_id, seq);
CREATE INDEX operations_open ON operations (seq) WHERE state = 'started';
CREATE INDEX operations_uncertain ON operations (tool, arguments_hash, seq)
    WHERE state IN ('started', 'unknown_outcome');
CREATE INDEX operations_by_start ON operations (started_us);
CREATE TABLE attempts (
    operation_id   text NOT NULL REFERENCES operations (operation_id),
    attempt        integer NOT NULL,
    error_type     text,
    retry_after_ms bigint,
    ended_at       text NOT NULL,
    PRIMARY KEY (operation_id, attempt)
);
CREATE TABLE settlements (
    seq                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    operation_id       text NOT NULL REFERENCES operations (operation_id),
    outcome            text NOT NULL,
    settled_by         text NOT NULL,
    reason             text NOT NULL,
    external_reference text,
    at                 text NOT NULL
);
CREATE INDEX settlements_by_operation ON settlements (operation_id, seq);
CREATE TABLE audit (
    seq             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at_us           bigint NOT NULL,
    start_time      text NOT NULL,
    session_id      text NOT NULL,
    call_id         text NOT NULL,
    tool            text NOT NULL,
    tool_version    bigint,
    status          text NOT NULL,
    error_type      text,
    decision        text,
    permission      jsonb,
    operation_id    text,
    idempotency_key text,
    replayed        boolean NOT NULL,
    duration_us     bigint NOT NULL,
    arguments       text NOT NULL,
    summary         text NOT NULL,
    trace           jsonb NOT NULL,
    principal       text,
    owner           text
);
CREATE INDEX audit_by_time ON audit (at_us);
CREATE INDEX audit_by_call ON audit (call_id);
CREATE INDEX audit_by_principal ON audit (principal, at_us) WHERE principal IS NOT NULL;
";

/// Version 2: sessions' allow-for-session grants, kept once each, so that a session resumed on
/// another host keeps what it was granted.
const V2: &str = "
CREATE TABLE grants (
    seq        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id text NOT NULL,
    grant_json jsonb NOT NULL,
    owner      text,
    granted_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (session_id, grant_json)
);
";

/// Version 3: client idempotency keys are scoped to one caller: each operation records its
/// key's scope (`principal:ID`, else `session:ID`), and a client key is looked up only in the
/// scope of the call that sends it. Operations written before take their principal's scope,
/// else their session's.
const V3: &str = "
ALTER TABLE operations ADD COLUMN IF NOT EXISTS key_scope text;
UPDATE operations SET key_scope = CASE
    WHEN principal IS NOT NULL THEN 'principal:' || principal
    ELSE 'session:' || session_id
END;
DROP INDEX IF EXISTS operations_by_client_key;
CREATE INDEX operations_by_client_key ON operations (key_scope, idempotency_key, seq)
    WHERE key_source = 'client';
";

/// Every migration, by the version it brings the schema to.
const MIGRATIONS: &[(i64, &str)] = &[(1, V1), (2, V2), (3, V3)];

/// The schema version of the database (`None`: none of a journal's tables yet); an error when
/// it is not a toolgate journal or is newer than this build.
async fn recognise(db: &Db, c: &impl GenericClient) -> Result<Option<i64>, JournalError> {
    let found: Vec<String> = c
        .query(
            "SELECT c.relname::text FROM pg_class c
             WHERE c.relname = ANY($1) AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
             AND pg_catalog.pg_table_is_visible(c.oid)",
            &[&TABLES],
        )
        .await
        .map_err(|e| db.error(&e))?
        .iter()
        .map(|r| r.get(0))
        .collect();
    if found.is_empty() {
        return Ok(None);
    }
    let marker: Option<String> = if found.iter().any(|t| t == "schema_migrations") {
        c.query_one(
            "SELECT obj_description('schema_migrations'::regclass, 'pg_class')",
            &[],
        )
        .await
        .map_err(|e| db.error(&e))?
        .get(0)
    } else {
        None
    };
    if marker.as_deref() != Some(MARKER) {
        return Err(JournalError::Foreign {
            server: db.server.clone(),
            detail: format!(
                "it has tables named {} without toolgate's schema_migrations",
                found.join(", ")
            ),
        });
    }
    let version: Option<i64> = c
        .query_one("SELECT max(version) FROM schema_migrations", &[])
        .await
        .map_err(|e| db.error(&e))?
        .get(0);
    let Some(version) = version else {
        return Err(JournalError::Foreign {
            server: db.server.clone(),
            detail: "its schema_migrations table is empty".into(),
        });
    };
    if version > SCHEMA_VERSION {
        return Err(JournalError::FutureServerSchema {
            server: db.server.clone(),
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(Some(version))
}

/// Creates the schema in a database without one, or brings an older one up to date: one
/// transaction, under the migration lock.
pub(crate) async fn migrate(db: &Db) -> Result<(), JournalError> {
    let mut client = db.client().await?;
    // Look before locking or changing anything: a database that is not ours stays as it is.
    if recognise(db, &**client).await? == Some(SCHEMA_VERSION) {
        return Ok(());
    }
    let tx = client.transaction().await.map_err(|e| db.error(&e))?;
    tx.execute(
        "SELECT pg_advisory_xact_lock($1, $2)",
        &[&MIGRATION_LOCK.0, &MIGRATION_LOCK.1],
    )
    .await
    .map_err(|e| db.error(&e))?;
    let current = match recognise(db, &*tx).await? {
        Some(v) => v,
        None => {
            tx.batch_execute(&format!(
                "CREATE TABLE schema_migrations (
                    version    bigint PRIMARY KEY,
                    applied_at timestamptz NOT NULL DEFAULT now(),
                    toolgate   text NOT NULL
                );
                COMMENT ON TABLE schema_migrations IS '{MARKER}';"
            ))
            .await
            .map_err(|e| db.error(&e))?;
            0
        }
    };
    for (version, sql) in MIGRATIONS.iter().filter(|(v, _)| *v > current) {
        tx.batch_execute(sql).await.map_err(|e| db.error(&e))?;
        tx.execute(
            "INSERT INTO schema_migrations (version, toolgate) VALUES ($1, $2)",
            &[version, &env!("CARGO_PKG_VERSION")],
        )
        .await
        .map_err(|e| db.error(&e))?;
    }
    tx.commit().await.map_err(|e| db.error(&e))
}
