//! Opening a journal database: connection settings, the integrity check, the schema and its
//! migrations, and turning SQLite's errors into [`JournalError`]s that say what to do.
//!
//! A journal is recognised by its `application_id`; its schema version is the highest row of
//! `schema_migrations`. A file that is not a database, fails `PRAGMA quick_check`, belongs to
//! another application or was written by a newer toolgate is an error — never silently replaced
//! by a fresh journal. Only a file with no tables at all (new, or created by a crash before the
//! first commit) is initialised.

use std::path::Path;
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension};

use super::SqliteOptions;
use crate::runtime::journal::JournalError;

/// The schema version this build writes and reads.
pub(crate) const SCHEMA_VERSION: i64 = 4;

/// `PRAGMA application_id` of a toolgate journal ("TGJ1").
const APPLICATION_ID: i64 = 0x5447_4a31;

/// Version 1: operations, their attempts and settlements.
const V1: &str = "
CREATE TABLE operations (
    seq                INTEGER PRIMARY KEY,
    operation_id       TEXT NOT NULL UNIQUE,
    session_id         TEXT NOT NULL,
    call_id            TEXT NOT NULL,
    tool               TEXT NOT NULL,
    tool_version       INTEGER NOT NULL,
    schema_version     TEXT NOT NULL,
    effect             TEXT NOT NULL,
    idempotency        TEXT NOT NULL,
    idempotency_key    TEXT NOT NULL,
    key_source         TEXT NOT NULL,
    arguments_hash     TEXT NOT NULL,
    arguments          TEXT NOT NULL,
    decision           TEXT NOT NULL,
    permission         TEXT NOT NULL,
    scheduler_batch    INTEGER,
    started_at         TEXT NOT NULL,
    started_us         INTEGER NOT NULL,
    state              TEXT NOT NULL,
    attempts           INTEGER NOT NULL DEFAULT 0,
    status             TEXT,
    finished_at        TEXT,
    finished_us        INTEGER,
    error_type         TEXT,
    exit_code          INTEGER,
    output_size        INTEGER,
    result_digest      TEXT,
    external_reference TEXT,
    artifact_ids       TEXT,
    retry_count        INTEGER,
    result             TEXT,
    trace              TEXT
) STRICT;
CREATE INDEX operations_by_key ON operations (tool, idempotency_key, seq);
CREATE INDEX operations_by_session ON operations (session_id, call_id);
CREATE INDEX operations_open ON operations (state) WHERE state = 'started';
CREATE TABLE attempts (
    operation_id   TEXT NOT NULL REFERENCES operations (operation_id),
    attempt        INTEGER NOT NULL,
    error_type     TEXT,
    retry_after_ms INTEGER,
    ended_at       TEXT NOT NULL,
    PRIMARY KEY (operation_id, attempt)
) STRICT, WITHOUT ROWID;
CREATE TABLE settlements (
    seq                INTEGER PRIMARY KEY,
    operation_id       TEXT NOT NULL REFERENCES operations (operation_id),
    outcome            TEXT NOT NULL,
    settled_by         TEXT NOT NULL,
    reason             TEXT NOT NULL,
    external_reference TEXT,
    at                 TEXT NOT NULL
) STRICT;
CREATE INDEX settlements_by_operation ON settlements (operation_id, seq);
";

/// Version 2: several processes share a journal (each operation names the owner that started
/// it), client keys and the look-up of uncertain operations by their arguments, and the audit
/// of every call.
const V2: &str = "
CREATE TABLE owners (
    owner_id   TEXT PRIMARY KEY,
    pid        INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    toolgate   TEXT NOT NULL
) STRICT;
ALTER TABLE operations ADD COLUMN owner TEXT;
CREATE INDEX operations_uncertain ON operations (tool, arguments_hash, seq)
    WHERE state IN ('started', 'unknown_outcome');
CREATE INDEX operations_by_client_key ON operations (idempotency_key, seq)
    WHERE key_source = 'client';
CREATE INDEX operations_by_start ON operations (started_us);
CREATE TABLE audit (
    seq             INTEGER PRIMARY KEY,
    at_us           INTEGER NOT NULL,
    start_time      TEXT NOT NULL,
    session_id      TEXT NOT NULL,
    call_id         TEXT NOT NULL,
    tool            TEXT NOT NULL,
    tool_version    INTEGER,
    status          TEXT NOT NULL,
    error_type      TEXT,
    decision        TEXT,
    permission      TEXT,
    operation_id    TEXT,
    idempotency_key TEXT,
    replayed        INTEGER NOT NULL,
    duration_us     INTEGER NOT NULL,
    arguments       TEXT NOT NULL,
    summary         TEXT NOT NULL,
    trace           TEXT NOT NULL
) STRICT;
CREATE INDEX audit_by_time ON audit (at_us);
CREATE INDEX audit_by_session ON audit (session_id, at_us);
CREATE INDEX audit_by_call ON audit (call_id);
CREATE INDEX audit_by_operation ON audit (operation_id) WHERE operation_id IS NOT NULL;
";

/// Version 3: who called (`subject@issuer` of a `serve --http` bearer token), per audit row.
const V3: &str = "
ALTER TABLE audit ADD COLUMN principal TEXT;
CREATE INDEX audit_by_principal ON audit (principal, at_us) WHERE principal IS NOT NULL;
";

/// Version 4: client idempotency keys are scoped to one caller. Each operation records its
/// principal and its key's scope (`principal:ID`, else `session:ID`); a client key is looked
/// up only in the scope of the call that sends it. Operations written before take the
/// principal their audit row names, else their session's scope.
const V4: &str = "
ALTER TABLE operations ADD COLUMN principal TEXT;
ALTER TABLE operations ADD COLUMN key_scope TEXT;
UPDATE operations SET principal = (
    SELECT a.principal FROM audit a
    WHERE a.operation_id = operations.operation_id AND a.principal IS NOT NULL
    ORDER BY a.seq LIMIT 1
);
UPDATE operations SET key_scope = CASE
    WHEN principal IS NOT NULL THEN 'principal:' || principal
    ELSE 'session:' || session_id
END;
DROP INDEX operations_by_client_key;
CREATE INDEX operations_by_client_key ON operations (key_scope, idempotency_key, seq)
    WHERE key_source = 'client';
";

/// Every migration, by the version it brings the schema to.
const MIGRATIONS: &[(i64, &str)] = &[(1, V1), (2, V2), (3, V3), (4, V4)];

/// Turns a SQLite error into the journal error that explains it.
pub(crate) fn sqlite_error(path: &Path, e: &rusqlite::Error, busy: Duration) -> JournalError {
    let dir = || {
        path.parent()
            .map_or_else(|| Path::new(".").to_path_buf(), Path::to_path_buf)
    };
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => JournalError::Corrupt {
            path: path.to_path_buf(),
            detail: e.to_string(),
        },
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => JournalError::Locked {
            path: path.to_path_buf(),
            waited_ms: u64::try_from(busy.as_millis()).unwrap_or(u64::MAX),
            detail: e.to_string(),
        },
        Some(
            ErrorCode::CannotOpen
            | ErrorCode::ReadOnly
            | ErrorCode::PermissionDenied
            | ErrorCode::DiskFull
            | ErrorCode::NoLargeFileSupport,
        ) => JournalError::Unwritable {
            dir: dir(),
            detail: format!("{}: {e}", path.display()),
        },
        _ => JournalError::Failed(format!("{}: {e}", path.display())),
    }
}

/// Opens the writer's connection: settings, integrity check, schema.
pub(crate) fn open_writer(path: &Path, opts: &SqliteOptions) -> Result<Connection, JournalError> {
    let err = |e: rusqlite::Error| sqlite_error(path, &e, opts.busy_timeout);
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(err)?;
    conn.busy_timeout(opts.busy_timeout).map_err(err)?;
    stable_plans(&conn).map_err(err)?;
    let checked = |r: Result<(), Checked>| {
        r.map_err(|e| match e {
            Checked::Sql(e) => err(e),
            Checked::Journal(e) => e,
        })
    };
    // Look before changing anything: a file that is not ours stays exactly as it is.
    if opts.integrity_check {
        checked(quick_check(&conn, path))?;
    }
    checked(recognise(&conn, path).map(|_| ()))?;
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get(0))
        .map_err(err)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(JournalError::Failed(format!(
            "{}: SQLite would not switch to WAL (journal_mode is {mode})",
            path.display()
        )));
    }
    conn.pragma_update(None, "synchronous", "FULL")
        .map_err(err)?;
    conn.pragma_update(None, "foreign_keys", true)
        .map_err(err)?;
    checked(migrate(&conn, path))?;
    Ok(conn)
}

/// Opens a read-only connection to an existing journal.
pub(crate) fn open_reader(path: &Path, opts: &SqliteOptions) -> Result<Connection, JournalError> {
    let err = |e: rusqlite::Error| sqlite_error(path, &e, opts.busy_timeout);
    if !path.exists() {
        return Err(JournalError::Missing {
            path: path.to_path_buf(),
        });
    }
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(err)?;
    conn.busy_timeout(opts.busy_timeout).map_err(err)?;
    stable_plans(&conn).map_err(err)?;
    let version = recognise(&conn, path).map_err(|e| match e {
        Checked::Sql(e) => err(e),
        Checked::Journal(e) => e,
    })?;
    match version {
        None => Err(JournalError::Missing {
            path: path.to_path_buf(),
        }),
        Some(_) => Ok(conn),
    }
}

/// Plans a statement once, whatever values are bound to it (SQLite's query planner stability
/// guarantee).
///
/// Without it a cached statement is compiled again on every run: to decide whether a partial
/// index (`operations_by_client_key`, `operations_open`, ...) applies, the planner compares
/// its condition with the values bound, and binding new ones expires the plan: each lookup
/// by idempotency key parsed and planned its SQL again. The partial indexes stay usable: the statements
/// that need them state their conditions as literals.
fn stable_plans(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
        .map(|_| ())
}

/// An error of a check: from SQLite, or a finding.
enum Checked {
    Sql(rusqlite::Error),
    Journal(JournalError),
}

impl From<rusqlite::Error> for Checked {
    fn from(e: rusqlite::Error) -> Self {
        Checked::Sql(e)
    }
}

fn quick_check(conn: &Connection, path: &Path) -> Result<(), Checked> {
    let mut stmt = conn.prepare("PRAGMA quick_check")?;
    let problems: Vec<String> = stmt
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<Result<_, _>>()?;
    if problems.len() == 1 && problems[0] == "ok" {
        return Ok(());
    }
    Err(Checked::Journal(JournalError::Corrupt {
        path: path.to_path_buf(),
        detail: format!(
            "the integrity check failed: {}",
            problems.into_iter().take(3).collect::<Vec<_>>().join("; ")
        ),
    }))
}

/// The schema version of a database, `None` when it has no tables yet; an error when it is not
/// a toolgate journal or is newer than this build.
fn recognise(conn: &Connection, path: &Path) -> Result<Option<i64>, Checked> {
    let app: i64 = conn.pragma_query_value(None, "application_id", |r| r.get(0))?;
    let tables: i64 = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
        [],
        |r| r.get(0),
    )?;
    if app == 0 && tables == 0 {
        return Ok(None);
    }
    if app != APPLICATION_ID {
        return Err(Checked::Journal(JournalError::Corrupt {
            path: path.to_path_buf(),
            detail: format!(
                "a SQLite database of another application (application_id {app:#x}, {tables} tables)"
            ),
        }));
    }
    let version: Option<i64> = conn
        .query_row("SELECT max(version) FROM schema_migrations", [], |r| {
            r.get(0)
        })
        .optional()?
        .flatten();
    let Some(version) = version else {
        return Err(Checked::Journal(JournalError::Corrupt {
            path: path.to_path_buf(),
            detail: "its schema_migrations table is empty".into(),
        }));
    };
    if version > SCHEMA_VERSION {
        return Err(Checked::Journal(JournalError::FutureSchema {
            path: path.to_path_buf(),
            found: version,
            supported: SCHEMA_VERSION,
        }));
    }
    Ok(Some(version))
}

/// Creates the schema in an empty database, or brings an older one up to date, in one
/// transaction (taken with `BEGIN IMMEDIATE`, so a lock held elsewhere shows up here).
fn migrate(conn: &Connection, path: &Path) -> Result<(), Checked> {
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let r = (|| -> Result<(), Checked> {
        let current = match recognise(conn, path)? {
            None => {
                conn.execute_batch(
                    "CREATE TABLE schema_migrations (
                        version    INTEGER PRIMARY KEY,
                        applied_at TEXT NOT NULL,
                        toolgate   TEXT NOT NULL
                    ) STRICT;",
                )?;
                conn.pragma_update(None, "application_id", APPLICATION_ID)?;
                0
            }
            Some(v) => v,
        };
        for (version, sql) in MIGRATIONS.iter().filter(|(v, _)| *v > current) {
            conn.execute_batch(sql)?;
            conn.execute(
                "INSERT INTO schema_migrations (version, applied_at, toolgate) VALUES (?1, ?2, ?3)",
                rusqlite::params![
                    version,
                    crate::runtime::journal::now(),
                    env!("CARGO_PKG_VERSION")
                ],
            )?;
        }
        Ok(())
    })();
    match r {
        Ok(()) => {
            conn.execute_batch("COMMIT")?;
            Ok(())
        }
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}
