//! The driver: the one place the stage order lives (codex's orchestrator is the model).
//!
//! For each call, in call order:
//!
//! 1. hooks `BeforeValidate`; [`Registry::lookup`] → UNKNOWN_TOOL with alternatives;
//! 2. [`validate::schema_check`] → INVALID_ARGUMENTS; [`validate::resolve_paths`] (the workspace
//!    path policy; path arguments are replaced by their resolved form, so every later stage and
//!    the tool agree on the file); [`validate::semantic_check`] (CEL rules, the path findings;
//!    also the resource footprint and idempotency key) → SEMANTIC_VALIDATION_ERROR; hooks
//!    `AfterValidate`;
//! 3. hooks `BeforePermission` (may only tighten); [`permission::evaluate`] (the protected
//!    paths first — a protected path argument is denied whatever the rules, grants or approver
//!    say — then the rules) and [`permission::authorize`] (session grants, the [`Approver`]
//!    under the context's rules) → an [`AuthorizedCall`] or DENIED/CANCELLED; hooks
//!    `AfterPermission`.
//!
//! Then for the authorized calls together: the [`Plan`] (conflict graph → batches). Batches run
//! one after another, the calls of a batch concurrently; for each call:
//!
//! 4. the runtime's [admission table](crate::runtime::scheduler::admission) admits it against
//!    the calls of every turn, session and request in flight, then the project's
//!    [lock file](crate::runtime::scheduler::lockfile) against other processes — it waits
//!    (cancellably) while a conflicting call runs, and holds its claim until its attempts end;
//!    the [`Journal`] claims the call's idempotency key (replay a finished result, or
//!    UNKNOWN_OUTCOME for an unfinished or uncertain earlier run) and records the start —
//!    durable before the body for side-effecting calls;
//! 5. per attempt: hooks `BeforeExecute`, then the backend's
//!    [`Executor`](crate::runtime::extend::Executor) under the tool's timeout and the caller's
//!    cancellation; failed attempts are retried by the [`Retry`](crate::runtime::retry::Retry)
//!    policy within its budget (each attempt journaled);
//! 6. normalization into a [`ToolResult`]; hooks `AfterExecute` / `OnError`;
//! 7. hooks `BeforeProject` (redactions), the [`Projection`], hooks `AfterProject`; the trace
//!    record and the metrics; `journal.finish` (with the trace record) before the result is
//!    returned.
//!
//! Before the first call, [`ToolRuntime::recover`] settles what a crashed runtime left
//! unfinished in the journal.
//!
//! Results come back one per call, in call order. Tool failures are results; only engine
//! failures (the journal, a broken invariant) are `Err`.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::cel::{Bindings, Evaluator};
use crate::ir::{ErrorType, ProjectConfig};
use crate::runtime::approval::Approver;
use crate::runtime::artifacts::ArtifactStore;
use crate::runtime::exec::{Dispatch, ExecContext, RawOutcome};
use crate::runtime::hooks::{Annotations, CallView, HookPoint, HookSet};
use crate::runtime::journal::{
    AuditEntry, Journal, JournalError, KeySource, Precondition, Reconciler, RecoveryReport,
};
use crate::runtime::metrics::{Metrics, MetricsSnapshot};
use crate::runtime::permission::{self, AuthorizedCall, PermissionEnv, PermissionRecord};
use crate::runtime::projection::{self, ArtifactAccess, Projection};
use crate::runtime::registry::Registry;
use crate::runtime::result::{self, Subject, ToolResult};
use crate::runtime::scheduler::admission::AdmissionTable;
use crate::runtime::scheduler::{Plan, RefusedCall, ScheduleInput, Wait};
use crate::runtime::session::{Session, ToolCall};
use crate::runtime::trace::{MemoryTrace, TraceRecord, TraceSink};
use crate::runtime::validate;
use crate::runtime::workspace::Workspace;

mod run;

/// How long a stopped attempt gets to wind down (kill its processes, report partial output)
/// before the pipeline stops waiting for it.
pub const STOP_GRACE_MS: u64 = 2_000;

/// A failure of the engine itself, not of a tool: the harness decides what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The journal could not record an operation; the tool did not run.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// The session names a toolset the project does not define.
    #[error("the session's toolset `{0}` is not defined in toolgate.yaml")]
    UnknownToolset(String),
    /// A call's task ended without a result (an invariant broke).
    #[error("a call's task failed: {0}")]
    Task(String),
}

/// The results of one `execute`, with the schedule they ran under.
#[derive(Clone, Debug)]
pub struct Execution {
    /// The schedule.
    pub plan: Plan,
    /// One result per call, in call order.
    pub results: Vec<ToolResult>,
}

/// The governed runtime.
#[derive(Clone)]
pub struct ToolRuntime {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for ToolRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolRuntime")
            .field("tools", &self.inner.registry.names())
            .field("workspace", &self.inner.workspace.root())
            .finish_non_exhaustive()
    }
}

pub(crate) struct Inner {
    pub(crate) registry: Registry,
    pub(crate) project: ProjectConfig,
    pub(crate) workspace: Arc<Workspace>,
    pub(crate) workspace_str: String,
    pub(crate) artifacts: ArtifactStore,
    pub(crate) approver: Option<Arc<dyn Approver>>,
    pub(crate) hooks: HookSet,
    pub(crate) journal: Arc<dyn Journal>,
    /// Preconditions of conditionally idempotent tools, by tool (besides the builtins').
    pub(crate) preconditions: std::collections::HashMap<String, Arc<dyn Precondition>>,
    /// The embedder's reconcile hook for uncertain operations.
    pub(crate) reconciler: Option<Arc<dyn Reconciler>>,
    /// What recovery did, once it ran (before the first call).
    pub(crate) recovery: tokio::sync::OnceCell<Arc<RecoveryReport>>,
    pub(crate) trace: Arc<dyn TraceSink>,
    pub(crate) memory_trace: Option<Arc<MemoryTrace>>,
    pub(crate) metrics: Metrics,
    pub(crate) dispatch: Dispatch,
    /// Where the calls of every session, request and `execute()` wait for each other.
    pub(crate) admission: Arc<AdmissionTable>,
    /// The workspace's protected paths, as the rules and `path.protected` ask them.
    pub(crate) protection: Arc<dyn crate::policy::ProtectedPaths>,
    /// toolgate's CEL functions, registered once (`path.protected` asking `protection`); each
    /// call's evaluator binds its variables in a scope over them.
    pub(crate) cel: Result<crate::cel::Functions, crate::cel::EvalError>,
}

/// What the pipeline remembers about one call while it moves through the stages.
pub(crate) struct CallMeta {
    pub(crate) index: usize,
    pub(crate) call_id: String,
    pub(crate) tool: String,
    /// The former name (an alias) the call used, when it used one; `tool` is then the current.
    pub(crate) called_as: Option<String>,
    /// The arguments as the model sent them; from validation on, with workspace paths resolved
    /// (for hooks, and the trace of refused calls).
    pub(crate) arguments: Value,
    pub(crate) started: Instant,
    pub(crate) start_time: SystemTime,
    pub(crate) annotations: Annotations,
    pub(crate) args_hash: String,
    pub(crate) batch: Option<usize>,
    pub(crate) operation_id: Option<String>,
    /// The spec's idempotency key, when the spec names one.
    pub(crate) idempotency_key: Option<String>,
    /// The key the client sent with the call, if any.
    pub(crate) client_key: Option<String>,
    /// The key the call is journaled under (spec, else client, else derived), once validated.
    pub(crate) call_key: Option<String>,
    /// Where `call_key` came from.
    pub(crate) key_source: KeySource,
    /// How long it waited for conflicting calls, when it did.
    pub(crate) wait: Option<Wait>,
}

/// A call after the first three stages.
enum Prepared {
    Done(Box<(ToolResult, Option<PermissionRecord>)>),
    Ready(Box<AuthorizedCall>),
}

impl Prepared {
    fn done(r: ToolResult) -> Prepared {
        Prepared::Done(Box::new((r, None)))
    }
}

impl ToolRuntime {
    /// Runs a model turn's calls and returns one result per call, in call order.
    pub async fn execute(
        &self,
        calls: Vec<ToolCall>,
        session: &Session,
        cancel: CancellationToken,
    ) -> Result<Vec<ToolResult>, EngineError> {
        Ok(self.run(calls, session, cancel).await?.results)
    }

    /// Like [`ToolRuntime::execute`], also returning the schedule.
    pub async fn run(
        &self,
        calls: Vec<ToolCall>,
        session: &Session,
        cancel: CancellationToken,
    ) -> Result<Execution, EngineError> {
        if let Some(t) = session.toolset()
            && !self.inner.registry.has_toolset(t)
        {
            return Err(EngineError::UnknownToolset(t.to_owned()));
        }
        self.recover().await?;
        // The turn's token: the caller's cancel, or an approver's "cancel", stops the rest.
        let turn = cancel.child_token();
        let mut metas = Vec::with_capacity(calls.len());
        let mut prepared = Vec::with_capacity(calls.len());
        for (index, call) in calls.into_iter().enumerate() {
            let mut meta = self.inner.meta(index, &call);
            let p = if turn.is_cancelled() {
                let r = result::refused(
                    Subject {
                        call_id: &call.call_id,
                        tool: &call.name,
                        definition: None,
                    },
                    ErrorType::Cancelled,
                    format!("{} was cancelled before it started", call.name),
                    None,
                );
                Prepared::Done(Box::new((r, None)))
            } else {
                self.inner.prepare(call, &mut meta, session, &turn).await
            };
            metas.push(meta);
            prepared.push(p);
        }
        self.inner
            .schedule_and_run(metas, prepared, session, &turn)
            .await
    }

    /// Settles the operations an earlier process started and never finished (see
    /// `crate::runtime::journal::recovery`). Runs once, before the first call; later calls
    /// return the same report.
    pub async fn recover(&self) -> Result<Arc<RecoveryReport>, EngineError> {
        let inner = &self.inner;
        let report = inner
            .recovery
            .get_or_try_init(|| async {
                crate::runtime::journal::recovery::recover(inner)
                    .await
                    .map(Arc::new)
            })
            .await?;
        Ok(report.clone())
    }

    /// Settles the operations of processes that have ended since recovery last ran (in a
    /// shared journal: those whose owner's lease expired), every time it is called — unlike
    /// [`ToolRuntime::recover`], which runs once.
    pub async fn recover_ended(&self) -> Result<RecoveryReport, EngineError> {
        Ok(crate::runtime::journal::recovery::recover(&self.inner).await?)
    }

    /// Starts a task on the current tokio runtime that runs [`ToolRuntime::recover_ended`] at
    /// the journal's [`recovery_interval`](crate::runtime::extend::Journal::recovery_interval),
    /// for as long as this runtime lives, so that the operations of a host that died are settled
    /// without waiting for a call to meet them; each report goes to `on_report` (a failed run is
    /// tried again at the next interval). `None` when the journal needs no such task.
    pub fn spawn_periodic_recovery(
        &self,
        on_report: impl Fn(Result<RecoveryReport, EngineError>) + Send + 'static,
    ) -> Option<tokio::task::JoinHandle<()>> {
        let every = self.inner.journal.recovery_interval()?;
        let inner = Arc::downgrade(&self.inner);
        Some(tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let Some(inner) = inner.upgrade() else { return };
                let r = crate::runtime::journal::recovery::recover(&inner).await;
                on_report(r.map_err(EngineError::from));
            }
        }))
    }

    /// What recovery did, once it has run.
    pub fn recovery(&self) -> Option<Arc<RecoveryReport>> {
        self.inner.recovery.get().cloned()
    }

    /// The journal.
    pub fn journal(&self) -> &Arc<dyn Journal> {
        &self.inner.journal
    }

    /// Counters and latency histograms so far.
    pub fn metrics(&self) -> MetricsSnapshot {
        self.inner.metrics.snapshot()
    }

    /// The most recent trace records (when the runtime keeps them in memory, the default).
    pub fn traces(&self) -> Vec<TraceRecord> {
        self.inner
            .memory_trace
            .as_ref()
            .map(|t| t.records())
            .unwrap_or_default()
    }

    /// The tools.
    pub(crate) fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// The workspace.
    pub fn workspace(&self) -> &Workspace {
        &self.inner.workspace
    }

    /// The artifact store.
    pub fn artifacts(&self) -> &ArtifactStore {
        &self.inner.artifacts
    }

    /// The project settings.
    pub fn project(&self) -> &ProjectConfig {
        &self.inner.project
    }

    /// The lock file the calls of this runtime share with other toolgate processes on the
    /// project (`None` when [`RuntimeBuilder::process_locks`](crate::runtime::RuntimeBuilder::process_locks) is off,
    /// or when the locks are in PostgreSQL).
    pub fn lock_file(&self) -> Option<&std::path::Path> {
        self.inner.admission.locks().and_then(|l| l.path())
    }
}

impl Inner {
    fn meta(&self, index: usize, call: &ToolCall) -> CallMeta {
        CallMeta {
            index,
            call_id: call.call_id.clone(),
            tool: call.name.clone(),
            called_as: None,
            arguments: call.arguments.clone(),
            started: Instant::now(),
            start_time: SystemTime::now(),
            annotations: Annotations::default(),
            args_hash: String::new(),
            batch: None,
            operation_id: None,
            idempotency_key: None,
            client_key: call.idempotency_key.clone(),
            call_key: None,
            key_source: KeySource::Derived,
            wait: None,
        }
    }

    /// Calls the hooks of a point.
    pub(crate) fn hook(
        &self,
        point: HookPoint,
        meta: &mut CallMeta,
        session: &Session,
        permission: Option<&PermissionRecord>,
        attempt: u32,
        result: Option<&ToolResult>,
    ) {
        if self.hooks.is_empty() {
            return;
        }
        let effect = self.registry.get(&meta.tool).map(|t| t.definition.effect);
        let view = CallView {
            point,
            session_id: session.id(),
            context: session.context(),
            call_id: &meta.call_id,
            tool: &meta.tool,
            effect,
            arguments: &meta.arguments,
            permission,
            attempt,
            result,
            projection: None,
        };
        self.hooks.call(&view, &mut meta.annotations);
    }

    /// Lookup, validation and permission for one call.
    async fn prepare(
        &self,
        call: ToolCall,
        meta: &mut CallMeta,
        session: &Session,
        turn: &CancellationToken,
    ) -> Prepared {
        self.hook(HookPoint::BeforeValidate, meta, session, None, 0, None);
        let resolved = match session.lookup(&self.registry, call) {
            Ok(r) => r,
            Err(unknown) => {
                return Prepared::Done(Box::new((
                    result::unknown_tool(&meta.call_id, unknown),
                    None,
                )));
            }
        };
        let tool = resolved.tool.clone();
        let def = &tool.definition;
        if def.name != meta.tool {
            // Called by an alias: the stages from here on (hooks included) see the current name.
            meta.called_as = Some(std::mem::replace(&mut meta.tool, def.name.clone()));
        }
        let call_id = meta.call_id.clone();
        let subject = Subject {
            call_id: &call_id,
            tool: &def.name,
            definition: Some(def),
        };
        let mut valid = match validate::schema_check(resolved) {
            Ok(v) => v,
            Err(r) => {
                return Prepared::done(result::refused(subject, r.error_type, r.message, r.hint));
            }
        };
        if let Some(Err(m)) = meta
            .client_key
            .as_deref()
            .map(crate::runtime::journal::check_client_key)
        {
            let hint = "Send a key of 1 to 255 visible characters (a UUID is best), or none.";
            let m = format!("{m}; it names the request for retries, so it must be usable as one");
            return Prepared::done(result::refused(
                subject,
                ErrorType::InvalidArguments,
                m,
                Some(hint.into()),
            ));
        }
        // From here on the arguments carry resolved paths: what the rules, the hooks, the
        // approver and the tool see is the file that will be touched.
        validate::resolve_paths(&mut valid, &self.workspace);
        if !tool.path_params.is_empty() {
            meta.arguments.clone_from(valid.arguments());
        }
        // CEL evaluation is synchronous: everything that needs it happens in this block,
        // before the approval is awaited.
        let staged = {
            let ev = if tool.uses_cel {
                let args = valid.arguments();
                let b = Bindings {
                    args,
                    tool_name: &def.name,
                    tool_effect: def.effect.as_str(),
                    tool_version: def.version,
                    context: session.context(),
                    workspace: &self.workspace_str,
                };
                match &self.cel {
                    Ok(functions) => {
                        // The rules are evaluated within the call's timeout too: arguments
                        // that make them loop for longer are refused, not waited for.
                        let deadline =
                            Instant::now() + Duration::from_millis(def.timeout_ms.max(1));
                        let ev = Evaluator::in_scope(functions, &b).with_deadline(deadline);
                        Some(match session.principal() {
                            Some(p) => ev.with_principal(&p.cel_value()),
                            None => ev,
                        })
                    }
                    Err(e) => {
                        let m = format!("{} could not evaluate its rules: {e}", def.name);
                        return Prepared::done(result::refused(
                            subject,
                            ErrorType::RuntimeException,
                            m,
                            None,
                        ));
                    }
                }
            } else {
                None
            };
            match validate::semantic_check(valid, ev.as_ref()) {
                Ok(mut checked) => {
                    let (key, source) = match (&checked.idempotency_key, &meta.client_key) {
                        (Some(k), _) => (k.clone(), KeySource::Spec),
                        (None, Some(k)) => (k.clone(), KeySource::Client),
                        (None, None) => (
                            crate::runtime::journal::derived_key(session.id(), &meta.call_id),
                            KeySource::Derived,
                        ),
                    };
                    meta.call_key = Some(key.clone());
                    meta.key_source = source;
                    checked.call_key = key;
                    meta.args_hash = checked.args_hash.clone();
                    meta.idempotency_key = checked.idempotency_key.clone();
                    self.hook(HookPoint::AfterValidate, meta, session, None, 0, None);
                    self.hook(HookPoint::BeforePermission, meta, session, None, 0, None);
                    let restrictions = meta.annotations.take_restrictions();
                    let evaluation = permission::evaluate(
                        &tool,
                        &checked.call.arguments,
                        ev.as_ref(),
                        self.protection.as_ref(),
                        restrictions,
                    );
                    Ok((checked, evaluation))
                }
                Err(r) => Err(r),
            }
        };
        let (checked, evaluation) = match staged {
            Ok(s) => s,
            Err(r) => {
                return Prepared::done(result::refused(subject, r.error_type, r.message, r.hint));
            }
        };
        let links = validate::links_note(&checked.links);
        let env = PermissionEnv {
            approver: self.approver.as_deref(),
            contexts: &self.project.contexts,
            cancel: turn,
            journal: self.journal.as_ref(),
        };
        match permission::authorize(checked, evaluation, session, env).await {
            Ok(auth) => {
                self.hook(
                    HookPoint::AfterPermission,
                    meta,
                    session,
                    Some(auth.permission()),
                    0,
                    None,
                );
                Prepared::Ready(Box::new(auth))
            }
            Err(refusal) => {
                if refusal.cancel_turn {
                    turn.cancel();
                }
                self.hook(
                    HookPoint::AfterPermission,
                    meta,
                    session,
                    Some(&refusal.record),
                    0,
                    None,
                );
                let message = if refusal.status == crate::ir::Status::Denied {
                    format!("{}{links}", refusal.message)
                } else {
                    refusal.message
                };
                let r = result::refused(subject, refusal.error_type, message, refusal.hint);
                Prepared::Done(Box::new((r, Some(refusal.record))))
            }
        }
    }

    /// Plans the authorized calls, runs the batches, finishes every call.
    async fn schedule_and_run(
        self: &Arc<Self>,
        metas: Vec<CallMeta>,
        prepared: Vec<Prepared>,
        session: &Session,
        turn: &CancellationToken,
    ) -> Result<Execution, EngineError> {
        let mut plan = {
            let inputs: Vec<ScheduleInput<'_>> = prepared
                .iter()
                .enumerate()
                .filter_map(|(i, p)| match p {
                    Prepared::Ready(a) => Some(ScheduleInput {
                        index: i,
                        call_id: a.call_id(),
                        tool: &a.definition().name,
                        effect: a.definition().effect,
                        declares_resources: !a.definition().resources.is_empty(),
                        footprint: a.footprint(),
                        group: a.definition().concurrency_group.as_ref(),
                    }),
                    Prepared::Done(..) => None,
                })
                .collect();
            Plan::build(&inputs)
        };
        let mut results: Vec<Option<ToolResult>> = (0..prepared.len()).map(|_| None).collect();
        let mut ready: Vec<Option<(AuthorizedCall, CallMeta)>> =
            (0..prepared.len()).map(|_| None).collect();
        for ((p, mut meta), slot) in prepared.into_iter().zip(metas).zip(results.iter_mut()) {
            match p {
                Prepared::Done(done) => {
                    let (r, record) = *done;
                    if let Some(t) = r.error_type() {
                        plan.refused.push(RefusedCall {
                            index: meta.index,
                            call_id: meta.call_id.clone(),
                            tool: meta.tool.clone(),
                            error_type: t,
                        });
                    }
                    *slot = Some(self.finish(r, &mut meta, session, record.as_ref(), None).0);
                }
                Prepared::Ready(a) => {
                    meta.batch = plan.batch_of(meta.index);
                    let i = meta.index;
                    ready[i] = Some((*a, meta));
                }
            }
        }
        for batch in plan.batches.clone() {
            let items: Vec<(AuthorizedCall, CallMeta)> =
                batch.iter().filter_map(|i| ready[*i].take()).collect();
            for (i, r) in self.run_batch(items, session, turn).await? {
                results[i] = Some(r);
            }
        }
        let results = results
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                r.ok_or_else(|| EngineError::Task(format!("call {} produced no result", i + 1)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Execution { plan, results })
    }

    /// Projection, trace and metrics for a result; hooks around the projection. The trace
    /// record comes back too when the call has a journaled operation (its finish keeps it).
    pub(crate) fn finish(
        &self,
        mut r: ToolResult,
        meta: &mut CallMeta,
        session: &Session,
        permission: Option<&PermissionRecord>,
        backend: Option<&'static str>,
    ) -> (ToolResult, Option<TraceRecord>) {
        if r.attempts() == 0 && !r.is_success() {
            self.hook(HookPoint::OnError, meta, session, permission, 0, Some(&r));
        }
        r.set_duration(meta.started.elapsed());
        let (max_bytes, max_lines) = self.registry.get(r.tool()).map_or(
            (
                crate::ir::tool::DEFAULT_MAX_BYTES,
                crate::ir::tool::DEFAULT_MAX_LINES,
            ),
            |t| (t.definition.output.max_bytes, t.definition.output.max_lines),
        );
        r.bound_summary(max_bytes, max_lines);
        if let Some(w) = &meta.wait {
            r.set_queued(Duration::from_micros(w.queued_us));
        }
        let access = match r.artifacts() {
            [] => ArtifactAccess::default(),
            _ => ArtifactAccess::of(session, &self.registry),
        };
        let projection: Projection = if self.hooks.is_empty() {
            projection::project(&r, &Default::default(), &access)
        } else {
            self.hook(
                HookPoint::BeforeProject,
                meta,
                session,
                permission,
                r.attempts(),
                Some(&r),
            );
            let view = CallView {
                point: HookPoint::BeforeProject,
                session_id: session.id(),
                context: session.context(),
                call_id: &meta.call_id,
                tool: &meta.tool,
                effect: None,
                arguments: &meta.arguments,
                permission,
                attempt: r.attempts(),
                result: Some(&r),
                projection: None,
            };
            let redactions = self.hooks.redactions(&view);
            let p = projection::project(&r, &redactions, &access);
            let after = CallView {
                point: HookPoint::AfterProject,
                projection: Some(&p.text),
                ..view
            };
            self.hooks.call(&after, &mut meta.annotations);
            p
        };
        r.set_projection(projection);
        let record = crate::runtime::trace::record(self, &r, meta, session, permission, backend);
        self.metrics.record(
            &record.tool,
            r.status(),
            r.error_type(),
            meta.started.elapsed(),
            record.retry_count,
        );
        if self.journal.records_audit() {
            self.journal.audit(AuditEntry {
                trace: record.clone(),
                arguments: meta.arguments.clone(),
                summary: r.summary().to_owned(),
                idempotency_key: meta.call_key.clone(),
            });
        }
        // The journal's finish of an operation carries the record too; otherwise the in-memory
        // trace takes it as it is.
        let kept = meta.operation_id.is_some().then(|| record.clone());
        match &self.memory_trace {
            Some(memory) => memory.keep(record),
            None => self.trace.record(&record),
        }
        (r, kept)
    }

    /// The execution context of one attempt.
    pub(crate) fn exec_context(
        &self,
        session: &Session,
        cancel: CancellationToken,
        key: String,
    ) -> ExecContext {
        ExecContext {
            session_id: session.id().to_owned(),
            principal: session.principal().map(|p| p.id()),
            context: session.context().to_owned(),
            idempotency_key: key,
            cancel,
            workspace: self.workspace.clone(),
            artifacts: self.artifacts.clone(),
        }
    }
}

/// What an attempt produced, and whether the pipeline stopped it.
pub(crate) type AttemptOutcome = (RawOutcome, Option<result::Stop>);

/// The grace period as a duration.
pub(crate) fn stop_grace() -> Duration {
    Duration::from_millis(STOP_GRACE_MS)
}
