//! Stages 4–7 of the pipeline for authorized calls: batches, the journal, attempts under
//! timeout and retry, normalization and the end of the call (see the parent module's order).

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::{AttemptOutcome, CallMeta, EngineError, Inner, STOP_GRACE_MS, stop_grace};
use crate::ir::{ErrorType, Status};
use crate::runtime::exec::RawOutcome;
use crate::runtime::hooks::HookPoint;
use crate::runtime::journal::{AttemptRecord, JournaledResult, OperationFinish, OperationStart};
use crate::runtime::permission::AuthorizedCall;
use crate::runtime::result::{self, Executed, Stop, Subject, ToolResult};
use crate::runtime::retry::{Retry, RetryDecision};
use crate::runtime::session::Session;
use crate::runtime::validate::canonical_json;

fn now() -> String {
    humantime::format_rfc3339_micros(SystemTime::now()).to_string()
}

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

        if let Some(key) = meta.idempotency_key.clone()
            && let Some(earlier) = self.journal.by_idempotency_key(&def.name, &key).await?
        {
            let r = match earlier
                .finish
                .map(|f| serde_json::from_value::<JournaledResult>(f.result))
            {
                Some(Ok(done)) => result::replayed(subject, done),
                Some(Err(_)) | None => result::refused(
                    subject,
                    ErrorType::UnknownOutcome,
                    format!(
                        "an earlier {} call with the same idempotency key ({}) started and has no recorded result; it may or may not have taken effect, so it was not run again",
                        def.name, earlier.start.call_id
                    ),
                    None,
                ),
            };
            let (r, _) = self.finish(r, &mut meta, &session, Some(&permission), backend);
            return Ok((meta.index, r));
        }

        let journaled = !def.effect.is_read_only();
        if journaled {
            let op = OperationStart {
                operation_id: format!("op-{}", uuid::Uuid::now_v7()),
                session_id: session.id().to_owned(),
                call_id: meta.call_id.clone(),
                tool: def.name.clone(),
                tool_version: def.version,
                effect: def.effect,
                idempotency: def.idempotency,
                idempotency_key: meta.idempotency_key.clone(),
                arguments_hash: auth.checked().args_hash.clone(),
                arguments: auth.checked().canonical_args.clone(),
                permission: permission.clone(),
                scheduler_batch: meta.batch,
                started_at: now(),
            };
            self.journal.start(&op).await?;
            meta.operation_id = Some(op.operation_id);
        }

        let exec_key = meta
            .idempotency_key
            .clone()
            .unwrap_or_else(|| format!("{}:{}", session.id(), meta.call_id));
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
                (Some(t), Some(next)) => match retry.after_failure(t, first.elapsed()) {
                    RetryDecision::After(d) => Some((d, next)),
                    RetryDecision::Stop(_) => None,
                },
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
        let r = result::executed(Executed {
            subject,
            tool: &tool,
            raw,
            stop,
            attempts: retry.attempts(),
            artifacts: &self.artifacts,
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
        if let Some(op) = &meta.operation_id {
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
                external_reference: None,
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
        let stop = tokio::select! {
            raw = &mut fut => return (raw, None),
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

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
