//! What `toolgate journal list` asks every journal on a disk or a server for, and the rows it
//! gets: the filter, and one summary per call or operation.

use serde::Serialize;

use crate::runtime::permission::PermissionRecord;

/// Which calls `list` and `stats` look at.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    /// A state word: `started`, a result status, or a settlement.
    pub status: Option<String>,
    /// A tool.
    pub tool: Option<String>,
    /// A session.
    pub session: Option<String>,
    /// An error type (`POLICY_DENIED`, …).
    pub error_type: Option<String>,
    /// Only calls that started at or after this moment, µs since the epoch.
    pub since_us: Option<i64>,
    /// Only calls that started before this moment, µs since the epoch.
    pub until_us: Option<i64>,
    /// At most this many (the most recent), for `list`.
    pub limit: Option<usize>,
    /// Operations only (what ran, or may have), without the calls that never ran.
    pub operations: bool,
}

/// One line of `toolgate journal list`: a call, or an operation without an audit record.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CallSummary {
    /// `call` (from the audit) or `operation` (an operation without an audit record: cut off
    /// by a crash, still running, or from before the audit).
    pub kind: String,
    /// The operation the call ran as, if it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operation_id: Option<String>,
    /// Its session.
    pub session_id: String,
    /// Its call.
    pub call_id: String,
    /// The tool (as called, for unknown tools).
    pub tool: String,
    /// The contract version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_version: Option<u32>,
    /// Where it stands: the operation's state when it ran, else the call's status.
    pub status: String,
    /// Why it did not succeed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    /// Attempts recorded (0 for a call that did not run).
    pub attempts: u32,
    /// RFC 3339.
    pub started_at: String,
    /// How long the call took (for an operation alone: start to finish), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_us: Option<u64>,
    /// The key a repeat of the call is recognised by.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    /// The permission decision and its rule chain, when one was made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub permission: Option<PermissionRecord>,
    /// What the model was told.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Whether the result was replayed from an earlier operation.
    pub replayed: bool,
}

/// Calls and operations as one table, in SQL both journals read (SQLite and PostgreSQL): `kind`
/// is `call` (an audit record, and its operation if it ran) or `operation` (an operation
/// without an audit record). `permission` is text in both; `replayed` is an integer in SQLite
/// and a boolean in PostgreSQL.
#[cfg_attr(
    not(any(feature = "journal-sqlite", feature = "journal-postgres")),
    allow(dead_code)
)]
pub(crate) const CALLS: &str = "
    SELECT 'call' AS kind, a.at_us AS t, a.start_time AS started_at, a.operation_id,
        a.session_id, a.call_id, a.tool, coalesce(o.tool_version, a.tool_version) AS tool_version,
        coalesce(o.state, a.status) AS status,
        CASE WHEN o.state IN ('abandoned', 'succeeded', 'failed') THEN NULL
             ELSE a.error_type END AS error_type,
        coalesce(o.attempts, 0) AS attempts, a.duration_us AS duration_us,
        coalesce(a.idempotency_key, o.idempotency_key) AS idempotency_key,
        CAST(a.permission AS TEXT) AS permission, a.summary, a.replayed
    FROM audit a LEFT JOIN operations o ON o.operation_id = a.operation_id
    UNION ALL
    SELECT 'operation', o.started_us, o.started_at, o.operation_id, o.session_id, o.call_id,
        o.tool, o.tool_version, o.state, o.error_type, o.attempts,
        o.finished_us - o.started_us, o.idempotency_key, CAST(o.permission AS TEXT),
        CAST(NULL AS TEXT), false
    FROM operations o
    WHERE NOT EXISTS (SELECT 1 FROM audit a WHERE a.operation_id = o.operation_id)";

/// Operations alone, in the same columns.
#[cfg_attr(
    not(any(feature = "journal-sqlite", feature = "journal-postgres")),
    allow(dead_code)
)]
pub(crate) const OPERATIONS: &str = "
    SELECT 'operation' AS kind, o.started_us AS t, o.started_at, o.operation_id, o.session_id,
        o.call_id, o.tool, o.tool_version, o.state AS status, o.error_type, o.attempts,
        o.finished_us - o.started_us AS duration_us, o.idempotency_key,
        CAST(o.permission AS TEXT) AS permission, CAST(NULL AS TEXT) AS summary,
        false AS replayed
    FROM operations o";
