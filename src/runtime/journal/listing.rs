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
