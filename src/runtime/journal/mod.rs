//! The execution journal (chapter §18, §41): so that "did it run?" always has an answer.
//!
//! For every call that can change something (any effect but pure, read-only and network-read),
//! the pipeline *claims* the call's idempotency key and writes an [`OperationStart`] before the
//! tool body runs — durable (committed and fsynced) when the claim resolves — one
//! [`AttemptRecord`] per attempt, and an [`OperationFinish`] before the result is returned,
//! committed (it survives a process crash; the next durable record flushes it). A journal that cannot record the start is an engine failure: the tool does not
//! run. Journals that also record calls that change nothing ([`Journal::records_read_only`]) do
//! so without waiting for the disk: repeating them is safe.
//!
//! Every call has an idempotency key: the spec's (`idempotency.key`, a CEL expression over the
//! arguments), else the client's ([`KeySource::Client`]: an MCP client's `_meta`
//! [`IDEMPOTENCY_KEY_MCP_META`]), else one derived from the session and call id
//! ([`derived_key`]). A claim whose key already has an operation on record gets that operation
//! back instead ([`Claim::Existing`]): a finished one is replayed, an unfinished or uncertain
//! one is UNKNOWN_OUTCOME — never a silent second run. Whatever the key, a side-effecting call
//! that is not idempotent does not run while an earlier call of the same tool with the same
//! canonical arguments has an unknown outcome ([`Claim::Blocked`]), from whichever session,
//! connection or process it came. Command tools find the key in [`IDEMPOTENCY_KEY_ENV`],
//! handlers in [`HandlerContext::idempotency_key`](crate::runtime::extend::HandlerContext), and an MCP
//! backend sends it as request metadata under [`IDEMPOTENCY_KEY_MCP_META`].
//!
//! After a crash, [`recovery`] settles every operation that started and never finished by its
//! idempotency class ([`Settlement`]): re-runnable, or UNKNOWN_OUTCOME until a [`Reconciler`]
//! or a person (`toolgate journal resolve`) says what happened. Several processes may share one
//! journal: an operation still running in a live process is never settled
//! ([`Claim::Orphaned`] names the ones whose process has ended).
//!
//! Besides operations, a journal may keep an audit of every call ([`Journal::audit`]): refusals,
//! unknown tools, invalid arguments and reads included, without making any call wait for it.
//!
//! Implementations: [`MemoryJournal`] (in memory; the builder's default) and, with the
//! `journal-sqlite` feature, [`sqlite::SqliteJournal`] (SQLite in the state folder, WAL,
//! `synchronous=FULL`, one writer thread with group commit) and, with the `journal-postgres`
//! feature, [`postgres::PostgresJournal`] (one journal in PostgreSQL shared by several hosts,
//! whose owners hold leases).

mod error;
pub mod listing;
mod memory;
#[cfg(feature = "journal-postgres")]
pub mod postgres;
pub mod recovery;
#[cfg(feature = "journal-sqlite")]
pub mod sqlite;

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ir::{Effect, ErrorType, Idempotency, Status};
use crate::runtime::approval::Grant;
use crate::runtime::permission::PermissionRecord;
use crate::runtime::trace::TraceRecord;

pub use error::JournalError;
pub use memory::MemoryJournal;
pub use recovery::{
    FileHashPrecondition, Precondition, PreconditionCheck, ReconcileFuture, Reconciler,
    Reconciliation, RecoveryReport,
};

/// The environment variable a command tool finds its call's idempotency key in.
pub const IDEMPOTENCY_KEY_ENV: &str = "TOOLGATE_IDEMPOTENCY_KEY";

/// The `_meta` key under which an MCP request carries an idempotency key: read from the
/// clients of `toolgate serve`, and sent to upstream servers with the call's key.
pub const IDEMPOTENCY_KEY_MCP_META: &str = "io.toolgate/idempotency-key";

/// The longest idempotency key a client may send, in bytes.
pub const CLIENT_KEY_MAX_LEN: usize = 255;

/// The key of a call whose spec names none and whose client sent none: the session and the
/// call id.
pub fn derived_key(session_id: &str, call_id: &str) -> String {
    format!("{session_id}:{call_id}")
}

/// Checks an idempotency key a client sent: 1 to [`CLIENT_KEY_MAX_LEN`] bytes of visible
/// characters. The error says what is wrong.
pub fn check_client_key(key: &str) -> Result<(), String> {
    if key.is_empty() {
        return Err("the idempotency key is empty".into());
    }
    if key.len() > CLIENT_KEY_MAX_LEN {
        return Err(format!(
            "the idempotency key is {} bytes long; at most {CLIENT_KEY_MAX_LEN} are allowed",
            key.len()
        ));
    }
    if key.chars().any(char::is_control) {
        return Err("the idempotency key contains control characters".into());
    }
    Ok(())
}

/// The scope of a client idempotency key: `principal:ID` for an authenticated caller, else
/// `session:ID` (see [`OperationStart::key_scope`]).
pub fn client_key_scope(session_id: &str, principal: Option<&str>) -> String {
    match principal {
        Some(p) => format!("principal:{p}"),
        None => format!("session:{session_id}"),
    }
}

/// Whose operations a spec or derived key is looked up among, from a claim's scope
/// ([`OperationStart::key_scope`]): an authenticated principal's own (`Some(Some(id))`), those
/// of sessions without one — the local user's (`Some(None)`) —, or everyone's for the person's
/// own lookups (`None`, scope `""`). One principal's key never replays another's result.
pub(crate) fn spec_key_owner(scope: &str) -> Option<Option<&str>> {
    if scope.is_empty() {
        None
    } else {
        Some(scope.strip_prefix("principal:"))
    }
}

/// Where an operation's idempotency key came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeySource {
    /// The spec's `idempotency.key` expression (the far side deduplicates on it).
    Spec,
    /// Sent by the client with the call (MCP `_meta`): it names one request of one principal
    /// (of one session, without a principal).
    Client,
    /// Derived from the session and call id.
    Derived,
}

impl KeySource {
    /// Its name in the journal.
    pub fn as_str(self) -> &'static str {
        match self {
            KeySource::Spec => "spec",
            KeySource::Client => "client",
            KeySource::Derived => "derived",
        }
    }

    /// Parses [`KeySource::as_str`].
    pub fn parse(s: &str) -> Option<KeySource> {
        [KeySource::Spec, KeySource::Client, KeySource::Derived]
            .into_iter()
            .find(|k| k.as_str() == s)
    }
}

/// Written before the tool body runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OperationStart {
    /// A fresh id (`op-` + UUID v7, time-ordered).
    pub operation_id: String,
    /// The session.
    pub session_id: String,
    /// The model's call id.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// Its contract version (replays must not be read under a newer contract).
    pub tool_version: u32,
    /// A digest of its parameter schema: changes whenever the arguments' shape does.
    pub schema_version: String,
    /// Its effect.
    pub effect: Effect,
    /// Its idempotency class: what recovery may do with an unfinished operation.
    pub idempotency: Idempotency,
    /// The key a repeat of the call is recognised by (and the far side can deduplicate on).
    pub idempotency_key: String,
    /// Where the key came from.
    pub key_source: KeySource,
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
    /// Who asked (`subject@issuer` of a `serve --http` bearer token), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal: Option<String>,
}

impl OperationStart {
    /// Whose client keys this operation's key is looked up among: the principal's
    /// (`principal:subject@issuer`) when one is authenticated, else the session's
    /// (`session:ID`). A client key names one request of one caller, never another's (as
    /// Stripe scopes idempotency keys to one account).
    pub fn key_scope(&self) -> String {
        client_key_scope(&self.session_id, self.principal.as_deref())
    }

    /// The arguments hash a claim must match: for a derived key only (see [`Journal::claim`]).
    #[cfg(feature = "journal-sqlite")]
    pub(crate) fn claim_args(&self) -> Option<&str> {
        match self.key_source {
            KeySource::Spec | KeySource::Client => None,
            KeySource::Derived => Some(&self.arguments_hash),
        }
    }

    /// Whether an earlier call of the same tool and arguments with an unknown outcome keeps
    /// this one from running: it changes something and is not safe to repeat.
    pub fn blocked_by_uncertainty(&self) -> bool {
        unsafe_to_repeat(self.effect, self.idempotency)
    }
}

/// Whether a call of this effect and idempotency changes something and is not safe to repeat
/// while an earlier run's outcome is unknown.
pub fn unsafe_to_repeat(effect: Effect, idempotency: Idempotency) -> bool {
    !effect.is_read_only()
        && matches!(
            idempotency,
            Idempotency::NonIdempotent | Idempotency::ConditionallyIdempotent
        )
}

/// One attempt of an operation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
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
    /// Bytes of output text the result carries.
    pub output_size: u64,
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

/// How an operation that never finished was settled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Settled {
    /// It did not finish and may run again when resubmitted (pure, idempotent, or a precondition
    /// that still holds).
    Abandoned,
    /// It may or may not have taken effect; it is not run again until someone settles it.
    UnknownOutcome,
    /// Someone established that it took effect; a resubmission returns success.
    Succeeded,
    /// Someone established that it did not take effect; a resubmission runs it again.
    Failed,
}

impl Settled {
    /// Every value.
    pub const ALL: &'static [Settled] = &[
        Settled::Abandoned,
        Settled::UnknownOutcome,
        Settled::Succeeded,
        Settled::Failed,
    ];

    /// Its name in the journal and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Settled::Abandoned => "abandoned",
            Settled::UnknownOutcome => "unknown_outcome",
            Settled::Succeeded => "succeeded",
            Settled::Failed => "failed",
        }
    }

    /// Parses [`Settled::as_str`].
    pub fn parse(s: &str) -> Option<Settled> {
        Settled::ALL.iter().copied().find(|v| v.as_str() == s)
    }

    /// Whether a resubmission of the call runs it again.
    pub fn reruns(self) -> bool {
        matches!(self, Settled::Abandoned | Settled::Failed)
    }
}

/// Who settled an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SettledBy {
    /// Recovery, by the idempotency class (and precondition).
    Recovery,
    /// The embedder's [`Reconciler`], during recovery.
    Reconciler,
    /// A person (`toolgate journal resolve`).
    Person,
}

impl SettledBy {
    /// Its name in the journal.
    pub fn as_str(self) -> &'static str {
        match self {
            SettledBy::Recovery => "recovery",
            SettledBy::Reconciler => "reconciler",
            SettledBy::Person => "person",
        }
    }

    /// Parses [`SettledBy::as_str`].
    pub fn parse(s: &str) -> Option<SettledBy> {
        [
            SettledBy::Recovery,
            SettledBy::Reconciler,
            SettledBy::Person,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
    }
}

/// A decision about an operation that never finished (or finished as UNKNOWN_OUTCOME).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Settlement {
    /// The operation.
    pub operation_id: String,
    /// What it is now taken to be.
    pub outcome: Settled,
    /// Who decided.
    pub by: SettledBy,
    /// Why: recovery's reasoning, the reconciler's evidence or the person's note.
    pub reason: String,
    /// A receipt of the effect, when whoever settled it has one.
    pub external_reference: Option<String>,
    /// RFC 3339.
    pub at: String,
}

/// Everything the journal holds about one operation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OperationRecord {
    /// The start.
    pub start: OperationStart,
    /// The attempts so far.
    pub attempts: Vec<AttemptRecord>,
    /// The finish, once written.
    pub finish: Option<OperationFinish>,
    /// Settlements, oldest first (the last one counts).
    #[serde(default)]
    pub settlements: Vec<Settlement>,
    /// The process id of the toolgate process that started it, while that process runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_in: Option<u32>,
}

/// Where an operation stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperationState {
    /// Started and neither finished nor settled: running, or cut off by a crash.
    Started,
    /// Finished with a result.
    Finished(Status),
    /// Settled after the fact.
    Settled(Settled),
}

impl OperationState {
    /// One word: `started`, a result status (`success`, `error`, …), or a settlement
    /// (`abandoned`, `unknown_outcome`, `succeeded`, `failed`).
    pub fn as_str(self) -> &'static str {
        match self {
            OperationState::Started => "started",
            OperationState::Finished(s) => s.as_str(),
            OperationState::Settled(s) => s.as_str(),
        }
    }

    /// Whether nobody knows if it took effect (so someone should settle it).
    pub fn is_uncertain(self) -> bool {
        matches!(
            self,
            OperationState::Started
                | OperationState::Finished(Status::UnknownOutcome)
                | OperationState::Settled(Settled::UnknownOutcome)
        )
    }
}

impl OperationRecord {
    /// Where it stands: the latest settlement, else the finish, else started.
    pub fn state(&self) -> OperationState {
        match (self.settlements.last(), &self.finish) {
            (Some(s), _) => OperationState::Settled(s.outcome),
            (None, Some(f)) => OperationState::Finished(f.status),
            (None, None) => OperationState::Started,
        }
    }

    /// Whether a resubmission of the call runs it again (a new operation, same key).
    pub fn reruns(&self) -> bool {
        matches!(self.state(), OperationState::Settled(s) if s.reruns())
    }
}

/// The answer to [`Journal::claim`].
#[derive(Clone, Debug, PartialEq)]
pub enum Claim {
    /// The operation is recorded as started; the tool may run.
    Started,
    /// An operation with the same key is on record and does not re-run: its result (or its
    /// uncertainty, or — started — that it is still running in a live process) stands for this
    /// call. For a spec or client key with other arguments, the key was reused.
    Existing(Box<OperationRecord>),
    /// Another request of the same tool with the same arguments has an unknown outcome (cut
    /// off, or still running — `running_in` says where), and this call is not safe to repeat
    /// ([`OperationStart::blocked_by_uncertainty`]): it must not run until that operation has
    /// finished or is settled.
    Blocked(Box<OperationRecord>),
    /// An operation with the same key (or, for a call not safe to repeat, the same tool and
    /// arguments) started in a process that has ended and was never settled: recovery must
    /// settle it before this call is claimed again.
    Orphaned(Box<OperationRecord>),
}

/// The future a journal returns.
pub type JournalFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, JournalError>> + Send + 'a>>;

/// What the audit keeps of one call, whatever became of it: refused, unknown, replayed or run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuditEntry {
    /// The call's trace record (status, error type, permission decision and rule chain, …).
    pub trace: TraceRecord,
    /// The arguments as the model sent them (workspace paths resolved once they validated).
    pub arguments: Value,
    /// What the model was told, in a line (the result's summary).
    pub summary: String,
    /// The key a repeat of the call is recognised by, when the call got that far.
    pub idempotency_key: Option<String>,
}

/// Durable record of operations.
pub trait Journal: Send + Sync {
    /// Records an operation as started; for a side-effecting operation, durable when the future
    /// resolves.
    fn start<'a>(&'a self, op: &'a OperationStart) -> JournalFuture<'a, ()>;
    /// Records one attempt (need not wait for the disk: the finish that follows does).
    fn attempt<'a>(&'a self, attempt: &'a AttemptRecord) -> JournalFuture<'a, ()>;
    /// Records an operation as finished; for a side-effecting operation, committed when the
    /// future resolves (it survives the end of the process; a journal on a disk flushes it with
    /// its next durable record).
    fn finish<'a>(&'a self, finish: &'a OperationFinish) -> JournalFuture<'a, ()>;
    /// Records a settlement of an operation that is started, or whose outcome is unknown.
    fn settle<'a>(&'a self, settlement: &'a Settlement) -> JournalFuture<'a, ()>;
    /// The latest operation of a tool with that idempotency key.
    fn by_idempotency_key<'a>(
        &'a self,
        tool: &'a str,
        key: &'a str,
    ) -> JournalFuture<'a, Option<OperationRecord>>;
    /// One operation by id.
    fn operation<'a>(&'a self, operation_id: &'a str)
    -> JournalFuture<'a, Option<OperationRecord>>;
    /// Operations started and neither finished nor settled (what crash recovery looks at).
    fn unfinished<'a>(&'a self) -> JournalFuture<'a, Vec<OperationRecord>>;

    /// The latest operation of `tool` with these arguments whose outcome is not known yet and
    /// whose process is alive to learn it: still running, or cut off and unsettled. A call not
    /// safe to repeat asks before it queues behind that very operation, so that a retry from
    /// another connection is answered at once instead of running after it (an operation of a
    /// process that has ended is left to [`Journal::claim`], which settles it). Default: none.
    fn uncertain<'a>(
        &'a self,
        tool: &'a str,
        arguments_hash: &'a str,
    ) -> JournalFuture<'a, Option<OperationRecord>> {
        let _ = (tool, arguments_hash);
        Box::pin(async { Ok(None) })
    }

    /// Looks the key up and, unless an operation that does not re-run is on record (for a
    /// derived key: one with the same arguments), records `op` as started. Journals should make
    /// this atomic, and answer [`Claim::Blocked`] for a call not safe to repeat while an
    /// earlier one with the same tool and arguments has an unknown outcome (as
    /// [`MemoryJournal`] and the SQLite journal do); the default only looks the key up, then
    /// starts.
    fn claim<'a>(&'a self, op: &'a OperationStart) -> JournalFuture<'a, Claim> {
        Box::pin(async move {
            if let Some(earlier) = self
                .by_idempotency_key(&op.tool, &op.idempotency_key)
                .await?
                && claimed_by(&earlier, op)
            {
                return Ok(Claim::Existing(Box::new(earlier)));
            }
            self.start(op).await?;
            Ok(Claim::Started)
        })
    }

    /// Whether calls that read without changing anything (read-only, network-read) are
    /// journaled too (without waiting for the disk); pure calls never are. Default: only side
    /// effects.
    fn records_read_only(&self) -> bool {
        false
    }

    /// Whether the journal keeps an audit of every call ([`Journal::audit`]). Default: no.
    fn records_audit(&self) -> bool {
        false
    }

    /// Keeps the audit record of one call. Never waits for the disk: a journal queues it (and
    /// may drop it when its queue is full, counting what it dropped). Default: not kept (the
    /// trace sink is the record).
    fn audit(&self, entry: AuditEntry) {
        let _ = entry;
    }

    /// Makes everything recorded so far durable (audit records included). Called when a
    /// process is about to end.
    fn flush(&self) -> JournalFuture<'_, ()> {
        Box::pin(async { Ok(()) })
    }

    /// Announces that `n` durable starts (claims of side-effecting calls running concurrently,
    /// one batch) are about to arrive, so that a journal on a disk can flush them together
    /// rather than the first alone. Default: nothing.
    fn expect_starts(&self, n: usize) {
        let _ = n;
    }

    /// Whether the journal keeps sessions' allow-for-session grants, so that a session resumed
    /// by another process or host keeps what it was granted. Default: no (grants live in the
    /// [`crate::runtime::Session`] alone).
    fn shares_grants(&self) -> bool {
        false
    }

    /// The grants recorded for a session, oldest first. Default: none.
    fn grants<'a>(&'a self, session_id: &'a str) -> JournalFuture<'a, Vec<Grant>> {
        let _ = session_id;
        Box::pin(async { Ok(Vec::new()) })
    }

    /// Records a grant given in a session (kept once: recording it again changes nothing).
    /// Default: not kept.
    fn remember_grant<'a>(
        &'a self,
        session_id: &'a str,
        grant: &'a Grant,
    ) -> JournalFuture<'a, ()> {
        let _ = (session_id, grant);
        Box::pin(async { Ok(()) })
    }

    /// How often a long-running process (`toolgate serve`) should run recovery again, for a
    /// journal shared by processes that can die without anyone meeting their operations (the
    /// PostgreSQL journal: a host whose lease expired). Default: never (recovery at start, and
    /// claims that meet an orphan, are enough).
    fn recovery_interval(&self) -> Option<std::time::Duration> {
        None
    }
}
impl<J: Journal + ?Sized> Journal for std::sync::Arc<J> {
    fn start<'a>(&'a self, op: &'a OperationStart) -> JournalFuture<'a, ()> {
        (**self).start(op)
    }

    fn attempt<'a>(&'a self, attempt: &'a AttemptRecord) -> JournalFuture<'a, ()> {
        (**self).attempt(attempt)
    }

    fn finish<'a>(&'a self, finish: &'a OperationFinish) -> JournalFuture<'a, ()> {
        (**self).finish(finish)
    }

    fn settle<'a>(&'a self, settlement: &'a Settlement) -> JournalFuture<'a, ()> {
        (**self).settle(settlement)
    }

    fn by_idempotency_key<'a>(
        &'a self,
        tool: &'a str,
        key: &'a str,
    ) -> JournalFuture<'a, Option<OperationRecord>> {
        (**self).by_idempotency_key(tool, key)
    }

    fn operation<'a>(
        &'a self,
        operation_id: &'a str,
    ) -> JournalFuture<'a, Option<OperationRecord>> {
        (**self).operation(operation_id)
    }

    fn unfinished<'a>(&'a self) -> JournalFuture<'a, Vec<OperationRecord>> {
        (**self).unfinished()
    }

    fn uncertain<'a>(
        &'a self,
        tool: &'a str,
        arguments_hash: &'a str,
    ) -> JournalFuture<'a, Option<OperationRecord>> {
        (**self).uncertain(tool, arguments_hash)
    }

    fn claim<'a>(&'a self, op: &'a OperationStart) -> JournalFuture<'a, Claim> {
        (**self).claim(op)
    }

    fn records_read_only(&self) -> bool {
        (**self).records_read_only()
    }

    fn records_audit(&self) -> bool {
        (**self).records_audit()
    }

    fn audit(&self, entry: AuditEntry) {
        (**self).audit(entry);
    }

    fn flush(&self) -> JournalFuture<'_, ()> {
        (**self).flush()
    }

    fn expect_starts(&self, n: usize) {
        (**self).expect_starts(n);
    }

    fn shares_grants(&self) -> bool {
        (**self).shares_grants()
    }

    fn grants<'a>(&'a self, session_id: &'a str) -> JournalFuture<'a, Vec<Grant>> {
        (**self).grants(session_id)
    }

    fn remember_grant<'a>(
        &'a self,
        session_id: &'a str,
        grant: &'a Grant,
    ) -> JournalFuture<'a, ()> {
        (**self).remember_grant(session_id, grant)
    }

    fn recovery_interval(&self) -> Option<std::time::Duration> {
        (**self).recovery_interval()
    }
}

/// Whether an operation on record under `op`'s key stands for `op`: it does not re-run, and it
/// is the same call — a spec or client key names one request whatever its arguments (a
/// mismatch is the caller's error), a derived key only with the same arguments (a reused call
/// id with other arguments is another call). A client key used before with other arguments
/// always answers (a conflict), even when the earlier operation may re-run.
pub(crate) fn claimed_by(earlier: &OperationRecord, op: &OperationStart) -> bool {
    let same_args = earlier.start.arguments_hash == op.arguments_hash;
    match op.key_source {
        KeySource::Client if !same_args || earlier.start.tool != op.tool => true,
        KeySource::Spec | KeySource::Client => !earlier.reruns(),
        KeySource::Derived => !earlier.reruns() && same_args,
    }
}

/// Checks that a settlement is allowed for an operation in `state`: a person's of one whose
/// outcome is unknown, recovery's of one that is started.
pub(crate) fn check_settle(
    record: Option<&OperationRecord>,
    s: &Settlement,
) -> Result<(), JournalError> {
    let Some(record) = record else {
        return Err(JournalError::Invalid(format!(
            "no operation {} to settle",
            s.operation_id
        )));
    };
    let state = record.state();
    if s.by != SettledBy::Person && state != OperationState::Started {
        // Recovery (and its reconciler) settles operations cut off while started; another
        // process recovering the same one got there first, and its settlement stands.
        Err(JournalError::Invalid(format!(
            "operation {} was settled already ({}); recovery settles started operations only",
            s.operation_id,
            state.as_str()
        )))
    } else if state.is_uncertain() {
        Ok(())
    } else {
        Err(JournalError::Invalid(format!(
            "operation {} is {} already; only started or unknown-outcome operations can be settled",
            s.operation_id,
            state.as_str()
        )))
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

/// The current time, RFC 3339 with microseconds.
pub(crate) fn now() -> String {
    humantime::format_rfc3339_micros(std::time::SystemTime::now()).to_string()
}
