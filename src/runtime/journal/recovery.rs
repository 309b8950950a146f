//! Crash recovery: when a runtime opens a journal, every operation that started and never
//! finished is settled by its idempotency class, so that a resubmitted call either runs again
//! safely or reports that its outcome is unknown — never runs twice because nobody was sure.
//!
//! | class | settled as |
//! |---|---|
//! | read-only effect, `pure`, `idempotent` | `abandoned`: a resubmission runs it again |
//! | `conditionally_idempotent` | `abandoned` while its [`Precondition`] still holds, else as below |
//! | `non_idempotent` (and broken or unknown preconditions) | the [`Reconciler`]'s answer, else `unknown_outcome` |
//!
//! An `unknown_outcome` operation makes a resubmission of its call UNKNOWN_OUTCOME ("this may
//! have happened: verify before repeating") until a person settles it with
//! `toolgate journal resolve ID --as succeeded|failed`.
//!
//! In a journal shared by several processes, recovery looks only at the operations of
//! processes that have ended; one that ends while others run is settled by the first claim
//! that meets one of its operations ([`settle_orphan`]).
//!
//! Preconditions are per tool: [`FileHashPrecondition`] (a file must still have the hash the
//! call expected) is registered for the `apply_patch` builtin; an embedder registers its own
//! with [`RuntimeBuilder::precondition`](crate::runtime::RuntimeBuilder::precondition).

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use serde::Serialize;
use serde_json::Value;

use super::{Journal, JournalError, OperationRecord, Settled, SettledBy, Settlement, now};
use crate::ir::Idempotency;
use crate::runtime::exec::builtin::{Builtin, content_hash};
use crate::runtime::pipeline::Inner;
use crate::runtime::workspace::Workspace;

/// What a precondition check found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PreconditionCheck {
    /// It holds: running the call again is safe. The text says why.
    Holds(String),
    /// It no longer holds (the call may have taken effect, or something else changed).
    Broken(String),
    /// It cannot be checked (arguments missing, the file unreadable, …).
    Unknown(String),
}

/// The condition under which a conditionally idempotent call may run again.
pub trait Precondition: Send + Sync {
    /// Checks the condition for a call's arguments against the workspace as it is now.
    fn check(&self, arguments: &Value, workspace: &Workspace) -> PreconditionCheck;
}

impl<P: Precondition + ?Sized> Precondition for std::sync::Arc<P> {
    fn check(&self, arguments: &Value, workspace: &Workspace) -> PreconditionCheck {
        (**self).check(arguments, workspace)
    }
}

/// "The file at parameter `path` still has the blake3 hash in parameter `hash`": the
/// precondition of `apply_patch` (`path`, `expected_hash`) and of any tool built the same way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileHashPrecondition {
    /// The parameter holding the workspace-relative path.
    pub path: String,
    /// The parameter holding the expected blake3 hex digest.
    pub hash: String,
}

impl FileHashPrecondition {
    /// A precondition over two parameters.
    pub fn new(path: impl Into<String>, hash: impl Into<String>) -> Self {
        FileHashPrecondition {
            path: path.into(),
            hash: hash.into(),
        }
    }
}

impl Precondition for FileHashPrecondition {
    fn check(&self, arguments: &Value, workspace: &Workspace) -> PreconditionCheck {
        let (Some(path), Some(expected)) = (
            arguments.get(&self.path).and_then(Value::as_str),
            arguments.get(&self.hash).and_then(Value::as_str),
        ) else {
            return PreconditionCheck::Unknown(format!(
                "the call has no `{}` and `{}` to check",
                self.path, self.hash
            ));
        };
        let p = match workspace.check(path) {
            Ok(p) => p,
            Err(e) => return PreconditionCheck::Unknown(e.to_string()),
        };
        match workspace.dir().read(p.as_path()) {
            Ok(bytes) => {
                let current = content_hash(&bytes);
                if current == expected {
                    PreconditionCheck::Holds(format!("`{path}` still has {}", self.hash))
                } else {
                    PreconditionCheck::Broken(format!(
                        "`{path}` no longer has {} (its hash is now {current})",
                        self.hash
                    ))
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                PreconditionCheck::Broken(format!("`{path}` no longer exists"))
            }
            Err(e) => PreconditionCheck::Unknown(format!("`{path}` cannot be read: {e}")),
        }
    }
}

/// The precondition a builtin carries, if any.
pub(crate) fn builtin_precondition(b: Builtin) -> Option<FileHashPrecondition> {
    match b {
        Builtin::ApplyPatch => Some(FileHashPrecondition::new("path", "expected_hash")),
        Builtin::ReadFile
        | Builtin::SearchFiles
        | Builtin::Glob
        | Builtin::ListDir
        | Builtin::WriteFile
        | Builtin::ReadArtifact
        | Builtin::Echo => None,
    }
}

/// What a reconciler found out about an uncertain operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reconciliation {
    /// It took effect.
    Succeeded {
        /// How that is known (shown to the model on replay and kept in the journal).
        evidence: String,
        /// A receipt from the far side, when there is one.
        external_reference: Option<String>,
    },
    /// It did not take effect; a resubmission may run it.
    Failed {
        /// How that is known.
        evidence: String,
    },
    /// Cannot tell: the operation stays UNKNOWN_OUTCOME for a person.
    Unknown,
}

/// The future a reconciler returns.
pub type ReconcileFuture<'a> = Pin<Box<dyn Future<Output = Reconciliation> + Send + 'a>>;

/// The embedder's hook for uncertain operations: asks the far side (by the operation's
/// idempotency key, its arguments, …) whether the effect happened.
pub trait Reconciler: Send + Sync {
    /// Looks at one operation recovery could not settle on its own.
    fn reconcile<'a>(
        &'a self,
        operation: &'a OperationRecord,
        workspace: &'a Workspace,
    ) -> ReconcileFuture<'a>;
}

impl<R: Reconciler + ?Sized> Reconciler for std::sync::Arc<R> {
    fn reconcile<'a>(
        &'a self,
        operation: &'a OperationRecord,
        workspace: &'a Workspace,
    ) -> ReconcileFuture<'a> {
        (**self).reconcile(operation, workspace)
    }
}

/// One operation recovery settled.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RecoveredOperation {
    /// The operation.
    pub operation_id: String,
    /// Its session.
    pub session_id: String,
    /// Its call.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The contract version that ran.
    pub tool_version: u32,
    /// The tool's idempotency class.
    pub idempotency: Idempotency,
    /// How it was settled.
    pub outcome: Settled,
    /// By whom.
    pub by: SettledBy,
    /// Why.
    pub reason: String,
}

/// What recovery did when the runtime opened its journal.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RecoveryReport {
    /// The operations settled, in start order.
    pub operations: Vec<RecoveredOperation>,
}

impl RecoveryReport {
    /// How many were settled as `outcome`.
    pub fn count(&self, outcome: Settled) -> usize {
        self.operations
            .iter()
            .filter(|o| o.outcome == outcome)
            .count()
    }

    /// Whether there was nothing to recover.
    pub fn is_empty(&self) -> bool {
        self.operations.is_empty()
    }
}

impl fmt::Display for RecoveryReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.operations.is_empty() {
            return writeln!(f, "recovery: no unfinished operations");
        }
        let counts: Vec<String> = Settled::ALL
            .iter()
            .filter(|s| self.count(**s) > 0)
            .map(|s| format!("{} {}", self.count(*s), s.as_str()))
            .collect();
        writeln!(
            f,
            "recovery: {} unfinished operation(s) settled: {}",
            self.operations.len(),
            counts.join(", ")
        )?;
        for o in &self.operations {
            writeln!(
                f,
                "  {} {} v{} (session {}, call {}): {} by {}: {}",
                o.operation_id,
                o.tool,
                o.tool_version,
                o.session_id,
                o.call_id,
                o.outcome.as_str(),
                o.by.as_str(),
                o.reason
            )?;
        }
        Ok(())
    }
}

/// Settles every unfinished operation of the runtime's journal (in a shared journal: of the
/// processes that have ended).
pub(crate) async fn recover(inner: &Inner) -> Result<RecoveryReport, JournalError> {
    let journal: &dyn Journal = inner.journal.as_ref();
    let mut report = RecoveryReport::default();
    for op in journal.unfinished().await? {
        // Another process may settle the same operation meanwhile (two hosts recovering a
        // third's): its settlement stands.
        if let Some(r) = settle_orphan(inner, op).await? {
            report.operations.push(r);
        }
    }
    Ok(report)
}

/// Settles one operation whose process ended before it finished (found by a claim, after
/// this runtime's recovery ran). `None` when someone else settled it meanwhile.
pub(crate) async fn settle_orphan(
    inner: &Inner,
    op: OperationRecord,
) -> Result<Option<RecoveredOperation>, JournalError> {
    let id = op.start.operation_id.clone();
    match settle(inner, op).await {
        Ok(r) => Ok(Some(r)),
        Err(JournalError::Invalid(_))
            if inner
                .journal
                .operation(&id)
                .await?
                .is_some_and(|o| !matches!(o.state(), super::OperationState::Started)) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

async fn settle(inner: &Inner, op: OperationRecord) -> Result<RecoveredOperation, JournalError> {
    let (outcome, by, reason, external_reference) = decide(inner, &op).await;
    let s = Settlement {
        operation_id: op.start.operation_id.clone(),
        outcome,
        by,
        reason: reason.clone(),
        external_reference,
        at: now(),
    };
    inner.journal.settle(&s).await?;
    Ok(RecoveredOperation {
        operation_id: op.start.operation_id,
        session_id: op.start.session_id,
        call_id: op.start.call_id,
        tool: op.start.tool,
        tool_version: op.start.tool_version,
        idempotency: op.start.idempotency,
        outcome,
        by,
        reason,
    })
}

type Decision = (Settled, SettledBy, String, Option<String>);

/// How one unfinished operation is settled.
async fn decide(inner: &Inner, op: &OperationRecord) -> Decision {
    let start = &op.start;
    let rerun = |why: String| (Settled::Abandoned, SettledBy::Recovery, why, None);
    if start.effect.is_read_only() {
        return rerun(format!(
            "{} changes nothing ({}): safe to run again",
            start.tool, start.effect
        ));
    }
    let uncertain = match start.idempotency {
        Idempotency::Pure | Idempotency::Idempotent => {
            return rerun(format!(
                "{} is {}: running it again has the effect of running it once",
                start.tool, start.idempotency
            ));
        }
        Idempotency::ConditionallyIdempotent => match precondition_of(inner, &start.tool) {
            Some(p) => {
                let args = serde_json::from_str::<Value>(&start.arguments).unwrap_or(Value::Null);
                match p.check(&args, &inner.workspace) {
                    PreconditionCheck::Holds(why) => {
                        return rerun(format!(
                            "its precondition still holds ({why}): running it again is safe"
                        ));
                    }
                    PreconditionCheck::Broken(why) => {
                        format!(
                            "its precondition no longer holds ({why}): it may have taken effect"
                        )
                    }
                    PreconditionCheck::Unknown(why) => {
                        format!("its precondition cannot be checked ({why})")
                    }
                }
            }
            None => format!(
                "{} is conditionally idempotent and has no precondition check registered",
                start.tool
            ),
        },
        Idempotency::NonIdempotent => format!(
            "{} is not idempotent and started before the crash: it may have taken effect",
            start.tool
        ),
    };
    if let Some(r) = &inner.reconciler {
        match r.reconcile(op, &inner.workspace).await {
            Reconciliation::Succeeded {
                evidence,
                external_reference,
            } => {
                return (
                    Settled::Succeeded,
                    SettledBy::Reconciler,
                    evidence,
                    external_reference,
                );
            }
            Reconciliation::Failed { evidence } => {
                return (Settled::Failed, SettledBy::Reconciler, evidence, None);
            }
            Reconciliation::Unknown => {}
        }
    }
    (
        Settled::UnknownOutcome,
        SettledBy::Recovery,
        format!("{uncertain}; verify before repeating"),
        None,
    )
}

/// The precondition registered for a tool, else its builtin's.
fn precondition_of<'a>(inner: &'a Inner, tool: &str) -> Option<PreconditionRef<'a>> {
    if let Some(p) = inner.preconditions.get(tool) {
        return Some(PreconditionRef::Registered(p.as_ref()));
    }
    inner
        .registry
        .get(tool)
        .and_then(|t| t.builtin)
        .and_then(builtin_precondition)
        .map(PreconditionRef::Builtin)
}

enum PreconditionRef<'a> {
    Registered(&'a dyn Precondition),
    Builtin(FileHashPrecondition),
}

impl PreconditionRef<'_> {
    fn check(&self, args: &Value, ws: &Workspace) -> PreconditionCheck {
        match self {
            PreconditionRef::Registered(p) => p.check(args, ws),
            PreconditionRef::Builtin(p) => p.check(args, ws),
        }
    }
}
