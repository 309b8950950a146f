//! The trace (chapter §41): every call leaves one [`TraceRecord`] with the facts needed to
//! answer "why was it slow, why was it refused, why did it run twice, why does the agent think
//! it failed". Records go to a [`TraceSink`]; [`MemoryTrace`] keeps the most recent ones.

use std::collections::VecDeque;
use std::sync::Mutex;

use serde::{Deserialize, Deserializer, Serialize};

use crate::ir::{Effect, ErrorType, Status};
use crate::runtime::permission::PermissionRecord;

/// The record of one call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TraceRecord {
    /// The model's call id.
    pub call_id: String,
    /// The session.
    pub session_id: String,
    /// The context.
    pub context: String,
    /// The authenticated caller (`subject@issuer`), when a bearer token named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal: Option<String>,
    /// The tool (as called, for unknown tools).
    pub tool: String,
    /// The former name (an alias) the call used, when it used one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub called_as: Option<String>,
    /// The contract version.
    pub tool_version: Option<u32>,
    /// blake3 of the canonical arguments (of the raw arguments when they never validated).
    pub arguments_hash: String,
    /// The tool's effect.
    pub effect: Option<Effect>,
    /// The permission decision and its rule chain, when one was made.
    pub permission: Option<PermissionRecord>,
    /// The batch the call ran in (0-based).
    pub scheduler_batch: Option<usize>,
    /// How long the call waited for conflicting calls before it ran, and behind what (absent
    /// when it did not wait).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<crate::runtime::scheduler::Wait>,
    /// The backend (`builtin`, `command`, `handler`, `mcp`, `http`).
    #[serde(deserialize_with = "backend_name")]
    pub runtime: BackendName,
    /// The sandbox profile named by the spec.
    pub sandbox_profile: Option<String>,
    /// The sandbox protections that were in force (command tools).
    pub protections: Vec<crate::runtime::exec::sandbox::Protection>,
    /// The journal's operation id, for side-effecting calls.
    pub operation_id: Option<String>,
    /// The idempotency key the call carried.
    pub idempotency_key: Option<String>,
    /// When the pipeline started on the call (RFC 3339).
    pub start_time: String,
    /// When the result was ready (RFC 3339).
    pub end_time: String,
    /// Wall time in microseconds.
    pub duration_us: u64,
    /// How it ended.
    pub status: Status,
    /// Why it did not succeed.
    pub error_type: Option<ErrorType>,
    /// Attempts beyond the first.
    pub retry_count: u32,
    /// A process's exit code.
    pub exit_code: Option<i32>,
    /// Bytes of output text the result carries.
    pub output_size: u64,
    /// Artifacts written.
    pub artifact_ids: Vec<String>,
    /// Whether the result was replayed from the journal.
    pub replayed: bool,
    /// Notes hooks added.
    pub annotations: Vec<(String, String)>,
}

/// A backend's name. (An alias, so that serde does not try to borrow it from the input.)
type BackendName = Option<&'static str>;

/// Reads a backend name back (from a journal) as the static name the runtime uses.
fn backend_name<'de, D: Deserializer<'de>>(d: D) -> Result<BackendName, D::Error> {
    let name = Option::<String>::deserialize(d)?;
    Ok(name.and_then(|n| {
        // Journals written before the command backend had its spec key's name say `subprocess`.
        let n = if n == "subprocess" { "command" } else { &n };
        crate::runtime::exec::Backend::ALL
            .into_iter()
            .map(crate::runtime::exec::Backend::as_str)
            .find(|b| *b == n)
    }))
}

/// Where trace records go.
pub trait TraceSink: Send + Sync {
    /// Records one call.
    fn record(&self, record: &TraceRecord);
}

impl<T: TraceSink + ?Sized> TraceSink for std::sync::Arc<T> {
    fn record(&self, record: &TraceRecord) {
        (**self).record(record);
    }
}

/// Keeps the most recent records in memory.
#[derive(Debug)]
pub struct MemoryTrace {
    capacity: usize,
    records: Mutex<VecDeque<TraceRecord>>,
}

impl MemoryTrace {
    /// Keeps at most `capacity` records.
    pub fn new(capacity: usize) -> Self {
        MemoryTrace {
            capacity: capacity.max(1),
            records: Mutex::new(VecDeque::new()),
        }
    }

    /// The records, oldest first.
    pub fn records(&self) -> Vec<TraceRecord> {
        match self.records.lock() {
            Ok(r) => r.iter().cloned().collect(),
            Err(p) => p.into_inner().iter().cloned().collect(),
        }
    }
}

impl MemoryTrace {
    /// Keeps a record, taking it as it is (the pipeline's path: no copy).
    pub(crate) fn keep(&self, record: TraceRecord) {
        let mut r = match self.records.lock() {
            Ok(r) => r,
            Err(p) => p.into_inner(),
        };
        if r.len() == self.capacity {
            r.pop_front();
        }
        r.push_back(record);
    }
}

impl Default for MemoryTrace {
    fn default() -> Self {
        MemoryTrace::new(4096)
    }
}

impl TraceSink for MemoryTrace {
    fn record(&self, record: &TraceRecord) {
        self.keep(record.clone());
    }
}

/// Builds the record of a finished call.
pub(crate) fn record(
    inner: &crate::runtime::pipeline::Inner,
    r: &crate::runtime::result::ToolResult,
    meta: &crate::runtime::pipeline::CallMeta,
    session: &crate::runtime::session::Session,
    permission: Option<&PermissionRecord>,
    backend: Option<&'static str>,
) -> TraceRecord {
    let tool = inner.registry.get(r.tool());
    let args_hash = if meta.args_hash.is_empty() {
        // Never validated: hash what the model sent, so refusals can be correlated too.
        blake3::hash(crate::runtime::validate::canonical_json(&meta.arguments).as_bytes())
            .to_hex()
            .to_string()
    } else {
        meta.args_hash.clone()
    };
    TraceRecord {
        call_id: meta.call_id.clone(),
        session_id: session.id().to_owned(),
        context: session.context().to_owned(),
        principal: session.principal().map(crate::runtime::Principal::id),
        tool: r.tool().to_owned(),
        called_as: meta.called_as.clone(),
        tool_version: r.tool_version(),
        arguments_hash: args_hash,
        effect: tool.map(|t| t.definition.effect),
        permission: permission.cloned(),
        scheduler_batch: meta.batch,
        wait: meta.wait.clone(),
        runtime: backend,
        sandbox_profile: tool.and_then(|t| t.definition.sandbox.clone()),
        protections: r.protections().to_vec(),
        operation_id: meta.operation_id.clone(),
        idempotency_key: meta.idempotency_key.clone(),
        start_time: humantime::format_rfc3339_micros(meta.start_time).to_string(),
        end_time: humantime::format_rfc3339_micros(std::time::SystemTime::now()).to_string(),
        duration_us: u64::try_from(meta.started.elapsed().as_micros()).unwrap_or(u64::MAX),
        status: r.status(),
        error_type: r.error_type(),
        retry_count: r.attempts().saturating_sub(1),
        exit_code: r.exit_code(),
        output_size: r.output().map_or(0, |o| o.len() as u64),
        artifact_ids: r.artifacts().iter().map(|a| a.id.clone()).collect(),
        replayed: r.replayed(),
        annotations: meta.annotations.notes().to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_names_read_back_including_the_older_subprocess() {
        let read = |v: serde_json::Value| backend_name(v).unwrap();
        assert_eq!(read(serde_json::json!("command")), Some("command"));
        assert_eq!(read(serde_json::json!("subprocess")), Some("command"));
        assert_eq!(read(serde_json::json!("http")), Some("http"));
        assert_eq!(read(serde_json::json!("nope")), None);
        assert_eq!(read(serde_json::Value::Null), None);
    }
}
