//! The execution journal (chapter §18, §41): so that "did it run?" always has an answer.
//!
//! For every call that can change something (any effect but pure, read-only and network-read),
//! the pipeline writes [`OperationStart`] *before* the tool body runs, one [`AttemptRecord`] per
//! attempt, and [`OperationFinish`] *before* the result is returned. A journal that cannot
//! record the start is an engine failure: the tool does not run. Calls carrying an idempotency
//! key are looked up first ([`Journal::by_idempotency_key`]): a finished operation's result is
//! replayed instead of running again, and a started-but-unfinished one becomes UNKNOWN_OUTCOME,
//! never a silent second run.
//!
//! [`MemoryJournal`] keeps operations in memory. A durable implementation (SQLite in the state
//! folder, WAL + `synchronous=FULL`) and crash recovery from [`Journal::unfinished`] — re-run
//! pure/idempotent work, re-check the precondition of conditionally idempotent work, report
//! non-idempotent work as unknown outcome — belong behind this same trait.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ir::{Effect, ErrorType, Idempotency, Status};
use crate::runtime::permission::PermissionRecord;
use crate::runtime::trace::TraceRecord;

/// Written before the tool body runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OperationStart {
    /// A fresh id (UUID v7, time-ordered).
    pub operation_id: String,
    /// The session.
    pub session_id: String,
    /// The model's call id.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// Its contract version (replays must not be read under a newer contract).
    pub tool_version: u32,
    /// Its effect.
    pub effect: Effect,
    /// Its idempotency class: what recovery may do with an unfinished operation.
    pub idempotency: Idempotency,
    /// The key the far side deduplicates on, when the call carries one.
    pub idempotency_key: Option<String>,
    /// blake3 of the canonical arguments.
    pub arguments_hash: String,
    /// The canonical arguments (recovery re-checks preconditions from them).
    pub arguments: String,
    /// The permission decision that allowed it, with its rule chain.
    pub permission: PermissionRecord,
    /// The scheduler batch.
    pub scheduler_batch: Option<usize>,
    /// RFC 3339.
    pub started_at: String,
}

/// One attempt of an operation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AttemptRecord {
    /// The operation.
    pub operation_id: String,
    /// 1 for the first.
    pub attempt: u32,
    /// The failure of the attempt, if it failed.
    pub error_type: Option<ErrorType>,
    /// The delay before the next attempt, when one follows.
    pub retry_after_ms: Option<u64>,
    /// RFC 3339, when the attempt ended.
    pub ended_at: String,
}

/// Written before the result is returned.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OperationFinish {
    /// The operation.
    pub operation_id: String,
    /// RFC 3339.
    pub finished_at: String,
    /// How it ended.
    pub status: Status,
    /// Why not successfully.
    pub error_type: Option<ErrorType>,
    /// A process's exit code.
    pub exit_code: Option<i32>,
    /// blake3 of the canonical JSON of the result.
    pub result_digest: String,
    /// A receipt from the far side (e.g. a created issue's URL), when the tool reports one.
    pub external_reference: Option<String>,
    /// Artifacts written.
    pub artifact_ids: Vec<String>,
    /// Attempts beyond the first.
    pub retry_count: u32,
    /// The result as JSON (what a replay returns).
    pub result: Value,
    /// The call's trace record.
    pub trace: TraceRecord,
}

/// Everything the journal holds about one operation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OperationRecord {
    /// The start.
    pub start: OperationStart,
    /// The attempts so far.
    pub attempts: Vec<AttemptRecord>,
    /// The finish, once written.
    pub finish: Option<OperationFinish>,
}

/// The journal is unavailable: an engine failure.
#[derive(Debug, thiserror::Error)]
#[error("journal: {0}")]
pub struct JournalError(pub String);

/// The future a journal returns.
pub type JournalFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, JournalError>> + Send + 'a>>;

/// Durable record of operations.
pub trait Journal: Send + Sync {
    /// Records an operation as started; must be durable when the future resolves.
    fn start<'a>(&'a self, op: &'a OperationStart) -> JournalFuture<'a, ()>;
    /// Records one attempt.
    fn attempt<'a>(&'a self, attempt: &'a AttemptRecord) -> JournalFuture<'a, ()>;
    /// Records an operation as finished.
    fn finish<'a>(&'a self, finish: &'a OperationFinish) -> JournalFuture<'a, ()>;
    /// The latest operation of a tool with that idempotency key.
    fn by_idempotency_key<'a>(
        &'a self,
        tool: &'a str,
        key: &'a str,
    ) -> JournalFuture<'a, Option<OperationRecord>>;
    /// Operations started and never finished (what crash recovery looks at).
    fn unfinished<'a>(&'a self) -> JournalFuture<'a, Vec<OperationRecord>>;
}

/// A journal in memory: complete behaviour, no durability.
#[derive(Debug, Default)]
pub struct MemoryJournal {
    state: Mutex<MemoryState>,
}

#[derive(Debug, Default)]
struct MemoryState {
    ops: Vec<OperationRecord>,
    by_id: HashMap<String, usize>,
}

impl MemoryJournal {
    /// Every operation, in start order.
    pub fn operations(&self) -> Vec<OperationRecord> {
        self.with(|s| s.ops.clone())
    }

    fn with<T>(&self, f: impl FnOnce(&mut MemoryState) -> T) -> T {
        let mut s = match self.state.lock() {
            Ok(s) => s,
            Err(p) => p.into_inner(),
        };
        f(&mut s)
    }
}

impl Journal for MemoryJournal {
    fn start<'a>(&'a self, op: &'a OperationStart) -> JournalFuture<'a, ()> {
        let r = self.with(|s| {
            if s.by_id.contains_key(&op.operation_id) {
                return Err(JournalError(format!(
                    "operation {} started twice",
                    op.operation_id
                )));
            }
            s.by_id.insert(op.operation_id.clone(), s.ops.len());
            s.ops.push(OperationRecord {
                start: op.clone(),
                attempts: Vec::new(),
                finish: None,
            });
            Ok(())
        });
        Box::pin(async move { r })
    }

    fn attempt<'a>(&'a self, attempt: &'a AttemptRecord) -> JournalFuture<'a, ()> {
        let r = self.with(|s| match s.by_id.get(&attempt.operation_id) {
            Some(&i) => {
                s.ops[i].attempts.push(attempt.clone());
                Ok(())
            }
            None => Err(JournalError(format!(
                "attempt of unknown operation {}",
                attempt.operation_id
            ))),
        });
        Box::pin(async move { r })
    }

    fn finish<'a>(&'a self, finish: &'a OperationFinish) -> JournalFuture<'a, ()> {
        let r = self.with(|s| match s.by_id.get(&finish.operation_id) {
            Some(&i) if s.ops[i].finish.is_none() => {
                s.ops[i].finish = Some(finish.clone());
                Ok(())
            }
            Some(_) => Err(JournalError(format!(
                "operation {} finished twice",
                finish.operation_id
            ))),
            None => Err(JournalError(format!(
                "finish of unknown operation {}",
                finish.operation_id
            ))),
        });
        Box::pin(async move { r })
    }

    fn by_idempotency_key<'a>(
        &'a self,
        tool: &'a str,
        key: &'a str,
    ) -> JournalFuture<'a, Option<OperationRecord>> {
        let r = self.with(|s| {
            s.ops
                .iter()
                .rev()
                .find(|o| o.start.tool == tool && o.start.idempotency_key.as_deref() == Some(key))
                .cloned()
        });
        Box::pin(async move { Ok(r) })
    }

    fn unfinished<'a>(&'a self) -> JournalFuture<'a, Vec<OperationRecord>> {
        let r = self.with(|s| {
            s.ops
                .iter()
                .filter(|o| o.finish.is_none())
                .cloned()
                .collect()
        });
        Box::pin(async move { Ok(r) })
    }
}

/// The part of a journaled result a replay needs.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct JournaledResult {
    pub(crate) status: Status,
    #[serde(default)]
    pub(crate) error_type: Option<ErrorType>,
    pub(crate) summary: String,
    #[serde(default)]
    pub(crate) output: Option<String>,
    #[serde(default)]
    pub(crate) structured: Option<Value>,
    #[serde(default)]
    pub(crate) exit_code: Option<i32>,
    #[serde(default)]
    pub(crate) truncated: bool,
    #[serde(default)]
    pub(crate) artifacts: Vec<crate::runtime::artifacts::ArtifactRef>,
    #[serde(default)]
    pub(crate) hint: Option<String>,
}
