//! Stages 4–7 of the pipeline for authorized calls: batches, the journal, attempts under
//! timeout and retry, normalization and the end of the call (see the parent module's order).

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::{AttemptOutcome, CallMeta, EngineError, Inner, STOP_GRACE_MS, stop_grace};
use crate::ir::{Effect, ErrorType, Status};
use crate::runtime::exec::RawOutcome;
use crate::runtime::hooks::HookPoint;
use crate::runtime::journal::{
    AttemptRecord, Claim, JournaledResult, KeySource, OperationFinish, OperationRecord,
    OperationStart, OperationState, Settled, now, recovery,
};
use crate::runtime::permission::AuthorizedCall;
use crate::runtime::result::{self, Executed, Stop, Subject, ToolResult};
use crate::runtime::retry::{Retry, RetryDecision};
use crate::runtime::scheduler::admission::{Holder, NotAdmitted, ResourceClaim};
use crate::runtime::session::Session;
use crate::runtime::validate::canonical_json;

impl Inner {
    /// Runs one batch: a single call inline, several concurrently on their own tasks.
    pub(super) async fn run_batch(
        self: &Arc<Self>,
        items: Vec<(AuthorizedCall, CallMeta)>,
        session: &Session,
        turn: &CancellationToken,
    ) -> Result<Vec<(usize, ToolResult)>, EngineError> {
        if items.len() <= 1 {
            let mut out = Vec::with_capacity(1);
            for (a, m) in items {
                out.push(
                    self.clone()
                        .execute_one(a, m, session.clone(), turn.clone())
                        .await?,
                );
            }
            return Ok(out);
        }
        // Their starts reach the journal together: it flushes them once.
        let side_effects = items
            .iter()
            .filter(|(a, _)| !a.definition().effect.is_read_only())
            .count();
        self.journal.expect_starts(side_effects);
        let mut set = JoinSet::new();
        for (a, m) in items {
            set.spawn(
                self.clone()
                    .execute_one(a, m, session.clone(), turn.clone()),
            );
        }
        let mut out = Vec::new();
        while let Some(joined) = set.join_next().await {
            out.push(joined.map_err(|e| EngineError::Task(e.to_string()))??);
        }
        Ok(out)
    }

    /// Stages 4–7 for one authorized call.
    async fn execute_one(
        self: Arc<Self>,
        auth: AuthorizedCall,
        mut meta: CallMeta,
        session: Session,
        turn: CancellationToken,
    ) -> Result<(usize, ToolResult), EngineError> {
        let tool = auth.compiled().clone();
        let def = &tool.definition;
        let permission = auth.permission().clone();
        let backend = Some(tool.backend.as_str());
        let call_id = meta.call_id.clone();
        let subject = Subject {
            call_id: &call_id,
            tool: &def.name,
            definition: Some(def),
        };
        if turn.is_cancelled() {
            let m = format!("{} was cancelled before it started", def.name);
            let r = result::refused(subject, ErrorType::Cancelled, m, None);
            let (r, _) = self.finish(r, &mut meta, &session, Some(&permission), None);
            return Ok((meta.index, r));
        }

        // A call not safe to repeat whose twin is running (here or in another process) or was cut
        // off is answered now: queued behind that very call, it would run after it, twice.
        let journaled = !def.effect.is_read_only()
            || (def.effect != Effect::Pure && self.journal.records_read_only());
        if journaled
            && crate::runtime::journal::unsafe_to_repeat(def.effect, def.idempotency)
            && meta.key_source == KeySource::Derived
            && let Some(earlier) = self
                .journal
                .uncertain(&def.name, &auth.checked().args_hash)
                .await?
            // The same request again (same key) is the claim's to answer: it replays what is
            // on record.
            && earlier.start.idempotency_key != auth.idempotency_key()
        {
            let (r, _) = self.finish(
                blocked(subject, &earlier),
                &mut meta,
                &session,
                Some(&permission),
                backend,
            );
            return Ok((meta.index, r));
        }

        // The scheduler across turns, sessions and processes: wait until no conflicting call
        // runs (or waits ahead). Held until the attempts are over.
        let admitted = match ResourceClaim::of(&auth) {
            None => None,
            Some(claim) => {
                let holder = Holder {
                    session_id: session.id().to_owned(),
                    call_id: meta.call_id.clone(),
                    tool: def.name.clone(),
                };
                match self.admission.admit(holder, claim, &turn).await {
                    Ok(a) => {
                        meta.wait.clone_from(&a.wait);
                        Some(a)
                    }
                    Err(refusal) => {
                        let r = match refusal {
                            NotAdmitted::Cancelled(wait) => {
                                let m = format!(
                                    "{} was cancelled while it waited behind {}; it did not run",
                                    def.name,
                                    wait.first_blocker()
                                );
                                meta.wait = Some(wait);
                                result::refused(subject, ErrorType::Cancelled, m, None)
                            }
                            NotAdmitted::Locks { backend, error } => {
                                let m =
                                    format!("{} did not run: {backend} failed ({error})", def.name);
                                let hint = "The runtime could not take its cross-process locks; this is not caused by the arguments. Report it to the operator; repeating the call may work once the state folder is usable.";
                                result::refused(
                                    subject,
                                    ErrorType::SchedulingConflict,
                                    m,
                                    Some(hint.into()),
                                )
                            }
                        };
                        let (r, _) = self.finish(r, &mut meta, &session, Some(&permission), None);
                        return Ok((meta.index, r));
                    }
                }
            }
        };
        if turn.is_cancelled() {
            let m = format!("{} was cancelled before it started", def.name);
            let r = result::refused(subject, ErrorType::Cancelled, m, None);
            let (r, _) = self.finish(r, &mut meta, &session, Some(&permission), None);
            return Ok((meta.index, r));
        }

        // The journal: claim the call's key (replaying what is on record), then the start.
        let key = auth.idempotency_key().to_owned();
        // A pure call has no effect to settle and observes nothing of the world worth keeping
        // (the trace is its record); a read-only call is journaled where the journal keeps
        // reads (what was read, and when), a side-effecting call always.
        let earlier = if journaled {
            let op = OperationStart {
                operation_id: format!("op-{}", uuid::Uuid::now_v7()),
                session_id: session.id().to_owned(),
                call_id: meta.call_id.clone(),
                tool: def.name.clone(),
                tool_version: def.version,
                schema_version: tool.schema_version.clone(),
                effect: def.effect,
                idempotency: def.idempotency,
                idempotency_key: key.clone(),
                key_source: meta.key_source,
                arguments_hash: auth.checked().args_hash.clone(),
                arguments: auth.checked().canonical_args.clone(),
                permission: permission.clone(),
                scheduler_batch: meta.batch,
                started_at: now(),
                principal: session.principal().map(crate::runtime::Principal::id),
            };
            let mut settled = 0;
            loop {
                match self.journal.claim(&op).await? {
                    Claim::Started => {
                        meta.operation_id = Some(op.operation_id);
                        break None;
                    }
                    Claim::Existing(earlier) => {
                        let r = earlier_result(subject, &earlier, &auth, session.id());
                        if r.is_none() {
                            // Only a journal whose claim disagrees with `reruns` gets here.
                            self.journal.start(&op).await?;
                            meta.operation_id = Some(op.operation_id);
                        }
                        break r;
                    }
                    Claim::Blocked(earlier) => break Some(blocked(subject, &earlier)),
                    // The process that started it has ended since this runtime's recovery ran:
                    // settle it as recovery would, then claim again.
                    Claim::Orphaned(earlier) if settled < MAX_ORPHANS_SETTLED => {
                        settled += 1;
                        recovery::settle_orphan(&self, *earlier).await?;
                    }
                    Claim::Orphaned(earlier) => break Some(blocked(subject, &earlier)),
                }
            }
        } else {
            match &meta.idempotency_key {
                Some(k) => self
                    .journal
                    .by_idempotency_key(&def.name, k)
                    .await?
                    .and_then(|e| earlier_result(subject, &e, &auth, session.id())),
                None => None,
            }
        };
        if let Some(r) = earlier {
            let (r, _) = self.finish(r, &mut meta, &session, Some(&permission), backend);
            return Ok((meta.index, r));
        }

        let exec_key = key;
        let mut retry = Retry::new(&def.retry, def.idempotency, meta.idempotency_key.is_some());
        let first = Instant::now();
        let mut current = auth;
        let (raw, stop) = loop {
            let next = (def.retry.max_attempts > 1).then(|| current.next_attempt());
            let attempt = current.attempt();
            self.hook(
                HookPoint::BeforeExecute,
                &mut meta,
                &session,
                Some(&permission),
                attempt,
                None,
            );
            let (raw, stop) = self
                .attempt(current, &session, &turn, exec_key.clone())
                .await;
            // A timeout is retried like any listed error type; a cancel never is.
            let failed = match stop {
                Some(Stop::Timeout(_)) => Some(ErrorType::Timeout),
                Some(Stop::Cancelled) => None,
                None => raw.failure.as_ref().map(|f| f.0),
            };
            let retry_after = match (failed, next) {
                (Some(t), Some(next)) => {
                    match retry.after_failure_waiting(t, first.elapsed(), raw.retry_after) {
                        RetryDecision::After(d) => Some((d, next)),
                        RetryDecision::Stop(_) => None,
                    }
                }
                _ => None,
            };
            if let Some(op) = &meta.operation_id {
                let rec = AttemptRecord {
                    operation_id: op.clone(),
                    attempt,
                    error_type: stop
                        .map(|s| match s {
                            Stop::Timeout(_) => ErrorType::Timeout,
                            Stop::Cancelled => ErrorType::Cancelled,
                        })
                        .or(raw.failure.as_ref().map(|f| f.0)),
                    retry_after_ms: retry_after.as_ref().map(|(d, _)| millis(*d)),
                    ended_at: now(),
                };
                self.journal.attempt(&rec).await?;
            }
            match retry_after {
                Some((delay, next)) => {
                    tokio::select! {
                        () = tokio::time::sleep(delay) => current = next,
                        () = turn.cancelled() => break (raw, Some(Stop::Cancelled)),
                    }
                }
                None => break (raw, stop),
            }
        };
        // The call's effect is over: the calls waiting for its resources may start.
        drop(admitted);
        let r = result::executed(Executed {
            subject,
            tool: &tool,
            raw,
            stop,
            attempts: retry.attempts(),
            artifacts: &self.artifacts,
            owner: session.artifact_owner(),
        });
        let point = if r.status() == Status::Success {
            HookPoint::AfterExecute
        } else {
            HookPoint::OnError
        };
        self.hook(
            point,
            &mut meta,
            &session,
            Some(&permission),
            r.attempts(),
            Some(&r),
        );
        let (r, trace) = self.finish(r, &mut meta, &session, Some(&permission), backend);
        if let (Some(op), Some(trace)) = (&meta.operation_id, trace) {
            let value = serde_json::to_value(&r).unwrap_or_default();
            let fin = OperationFinish {
                operation_id: op.clone(),
                finished_at: now(),
                status: r.status(),
                error_type: r.error_type(),
                exit_code: r.exit_code(),
                result_digest: blake3::hash(canonical_json(&value).as_bytes())
                    .to_hex()
                    .to_string(),
                output_size: r.output().map_or(0, |o| o.len() as u64),
                external_reference: external_reference(def, &r),
                artifact_ids: r.artifacts().iter().map(|a| a.id.clone()).collect(),
                retry_count: r.attempts().saturating_sub(1),
                result: value,
                trace,
            };
            self.journal.finish(&fin).await?;
        }
        Ok((meta.index, r))
    }

    /// One attempt under the tool's timeout and the turn's cancellation. A stopped attempt gets
    /// [`STOP_GRACE_MS`] to wind down; a side-effecting one that finishes in that time reports
    /// what it did, and one that does not is an UNKNOWN_OUTCOME — never a confident TIMEOUT.
    async fn attempt(
        &self,
        call: AuthorizedCall,
        session: &Session,
        turn: &CancellationToken,
        key: String,
    ) -> AttemptOutcome {
        let def = call.definition();
        let timeout = Duration::from_millis(def.timeout_ms.max(1));
        let read_only = def.effect.is_read_only();
        let name = def.name.clone();
        let executor = self.dispatch.get(call.compiled().backend).clone();
        let token = turn.child_token();
        let ctx = self.exec_context(session, token.clone(), key);
        let fut = executor.run(call, ctx);
        tokio::pin!(fut);
        // The attempt first: one that is done when first polled (a builtin, a handler that does
        // not wait) returns before the timer is registered.
        let stop = tokio::select! {
            biased;
            raw = &mut fut => {
                // The executor watches a child of the turn's token, so a cancel can end it before
                // this select sees the cancel: a failure then is the cancel's.
                let stop = (raw.failure.is_some() && turn.is_cancelled()).then_some(Stop::Cancelled);
                return (raw, stop);
            }
            () = tokio::time::sleep(timeout) => Stop::Timeout(timeout),
            () = turn.cancelled() => Stop::Cancelled,
        };
        token.cancel();
        match tokio::time::timeout(stop_grace(), fut).await {
            Ok(raw) if raw.failure.is_none() && !read_only => (raw, None),
            Ok(raw) => (raw, Some(stop)),
            Err(_) if read_only => (RawOutcome::default(), Some(stop)),
            Err(_) => (
                RawOutcome::failure(
                    ErrorType::UnknownOutcome,
                    format!(
                        "{name} was stopped and did not wind down within {STOP_GRACE_MS} ms; whether it took effect is unknown"
                    ),
                ),
                None,
            ),
        }
    }
}

/// How many operations of ended processes one claim settles before it gives up (each settled
/// one lets the claim look again; a journal that keeps answering with another is broken).
const MAX_ORPHANS_SETTLED: usize = 8;

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// What a call gets instead of running, when an operation with its key is on record: the
/// recorded result, or UNKNOWN_OUTCOME while nobody knows whether it took effect. `None` when
/// the earlier operation may run again.
fn earlier_result(
    subject: Subject<'_>,
    earlier: &OperationRecord,
    auth: &AuthorizedCall,
    session_id: &str,
) -> Option<ToolResult> {
    let start = &earlier.start;
    let state = earlier.state();
    if start.key_source == KeySource::Client
        && (start.tool != subject.tool || start.arguments_hash != auth.checked().args_hash)
    {
        let what = if start.tool == subject.tool {
            format!(
                "with other arguments (call {}, operation {})",
                start.call_id, start.operation_id
            )
        } else {
            format!(
                "for a {} call (call {}, operation {})",
                start.tool, start.call_id, start.operation_id
            )
        };
        let message = format!(
            "the idempotency key `{}` was already used {what}; a key names one request",
            start.idempotency_key
        );
        let hint = "Send a new idempotency key with a new request; send the same key only to retry the same call with the same arguments.";
        return Some(result::refused(
            subject,
            ErrorType::InvalidArguments,
            message,
            Some(hint.into()),
        ));
    }
    let replays = matches!(
        state,
        OperationState::Finished(_) | OperationState::Settled(Settled::Succeeded)
    );
    if replays && start.arguments_hash != auth.checked().args_hash {
        let message = match start.key_source {
            KeySource::Derived => format!(
                "call {} of session {session_id} already ran {} with other arguments; a call id names one call",
                start.call_id, start.tool
            ),
            KeySource::Spec | KeySource::Client => format!(
                "the idempotency key `{}` was already used by call {} with other arguments; a key names one request",
                start.idempotency_key, start.call_id
            ),
        };
        let hint = "Give a new call its own call id (and a new idempotency key); to see the earlier call's result, repeat it with the same arguments.";
        return Some(result::refused(
            subject,
            ErrorType::SemanticValidationError,
            message,
            Some(hint.into()),
        ));
    }
    let unknown = |m: String| Some(result::refused(subject, ErrorType::UnknownOutcome, m, None));
    match state {
        OperationState::Finished(_) => {
            match earlier
                .finish
                .as_ref()
                .map(|f| serde_json::from_value::<JournaledResult>(f.result.clone()))
            {
                Some(Ok(done)) => Some(result::replayed(subject, done, start.tool_version)),
                Some(Err(_)) | None => unknown(format!(
                    "an earlier {} call with the same idempotency key ({}) has no readable result; it may or may not have taken effect, so it was not run again",
                    start.tool, start.call_id
                )),
            }
        }
        OperationState::Started => match earlier.running_in {
            Some(pid) => unknown(format!(
                "an earlier {} call with the same idempotency key ({}, operation {}) is still running in toolgate process {pid}; it was not run a second time. Repeat the call once that one has finished to get its result",
                start.tool, start.call_id, start.operation_id
            )),
            None => unknown(format!(
                "an earlier {} call with the same idempotency key ({}) started and has no recorded result; it may or may not have taken effect, so it was not run again",
                start.tool, start.call_id
            )),
        },
        OperationState::Settled(Settled::UnknownOutcome) => unknown(format!(
            "{} (call {}, operation {}) was cut off by a crash before it reported a result: this may have happened. Verify before repeating; once you know, `toolgate journal resolve {}` settles it",
            start.tool, start.call_id, start.operation_id, start.operation_id
        )),
        OperationState::Settled(Settled::Succeeded) => {
            let s = earlier.settlements.last();
            let summary = format!(
                "{} (call {}) was cut off by a crash; {} established that it took effect: {}",
                start.tool,
                start.call_id,
                s.map_or("someone", |s| s.by.as_str()),
                s.map_or("", |s| s.reason.as_str())
            );
            let done = JournaledResult {
                status: Status::Success,
                error_type: None,
                summary,
                output: None,
                structured: None,
                exit_code: None,
                truncated: false,
                artifacts: Vec::new(),
                hint: None,
            };
            Some(result::replayed(subject, done, start.tool_version))
        }
        OperationState::Settled(Settled::Abandoned | Settled::Failed) => None,
    }
}

/// What a call gets while an earlier call of the same tool with the same arguments has an
/// unknown outcome: UNKNOWN_OUTCOME naming that operation and how to settle it.
fn blocked(subject: Subject<'_>, earlier: &OperationRecord) -> ToolResult {
    let start = &earlier.start;
    let op = &start.operation_id;
    let what = match earlier.state() {
        OperationState::Started => {
            let message = match earlier.running_in {
                Some(pid) => format!(
                    "{} was not run: an earlier {} call with the same arguments (operation {op}, call {} of session {}) is still running in toolgate process {pid}, and until it ends its outcome is unknown; running this one too could do it twice. Repeat the call once that one has finished",
                    subject.tool, start.tool, start.call_id, start.session_id
                ),
                None => format!(
                    "{} was not run: an earlier {} call with the same arguments (operation {op}, call {} of session {}) started in a process whose end cannot be checked, so it may have taken effect. Verify before repeating; once you know, `toolgate journal resolve {op} --as succeeded|failed` settles it",
                    subject.tool, start.tool, start.call_id, start.session_id
                ),
            };
            return result::refused(subject, ErrorType::UnknownOutcome, message, None);
        }
        OperationState::Settled(Settled::UnknownOutcome) => {
            "was cut off by a crash before it reported a result"
        }
        OperationState::Finished(_) => "ended without a known outcome",
        OperationState::Settled(_) => "has no known outcome",
    };
    let message = format!(
        "{} was not run: an earlier {} call with the same arguments (operation {op}, call {} of session {}) {what}, so it may have taken effect and running it again could do it twice. Verify before repeating; once you know, `toolgate journal resolve {op} --as succeeded|failed` (or the runtime's reconcile hook) settles it, and then this call runs",
        subject.tool, start.tool, start.call_id, start.session_id
    );
    result::refused(subject, ErrorType::UnknownOutcome, message, None)
}

/// The value the tool's `output.external_reference` points at in a successful result, as text.
fn external_reference(def: &crate::ir::ToolDefinition, r: &ToolResult) -> Option<String> {
    let pointer = def.output.external_reference.as_deref()?;
    match r.structured()?.pointer(pointer)? {
        serde_json::Value::Null => None,
        serde_json::Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}
