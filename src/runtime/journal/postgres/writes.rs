//! The statements that change the journal: the claim (one transaction, serialized across hosts
//! by advisory locks), inserting and finishing operations, attempts, settlements and the audit.

use tokio_postgres::GenericClient;

use super::rows::{self, Owned};
use super::{Db, LOCK_CLASS};
use crate::runtime::journal::{
    AttemptRecord, AuditEntry, Claim, JournalError, KeySource, OperationFinish, OperationStart,
    OperationState, Settlement, check_settle, claimed_by,
};
use crate::runtime::validate::canonical_json;

/// The longest arguments text an audit record keeps, in bytes (as the SQLite journal).
const AUDIT_ARGUMENTS_MAX: usize = 16 * 1024;

/// The longest summary an audit record keeps, in bytes.
const AUDIT_SUMMARY_MAX: usize = 4 * 1024;

fn to_json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

/// At most `max` bytes of `s`, cut at a character boundary and marked with `…`.
fn cut(mut s: String, max: usize) -> String {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    s.push('…');
    s
}

/// Microseconds since the epoch of an RFC 3339 time (0 when it does not parse).
fn micros(rfc3339: &str) -> i64 {
    humantime::parse_rfc3339_weak(rfc3339)
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .and_then(|d| i64::try_from(d.as_micros()).ok())
        .unwrap_or(0)
}

/// The advisory lock (in the journal's class) a claim on these words takes: every claim that
/// could find the same operation takes the same lock, on whichever host it runs.
fn lock_of(words: &[&str]) -> i32 {
    let mut h = blake3::Hasher::new();
    for w in words {
        h.update(w.as_bytes());
        h.update(&[0]);
    }
    let b = h.finalize();
    let bytes = b.as_bytes();
    i32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}

/// The locks a claim of `op` takes, in one order (so two claims never wait for each other).
fn claim_locks(op: &OperationStart) -> Vec<i32> {
    let key = match op.key_source {
        KeySource::Client => lock_of(&["client", &op.key_scope(), &op.idempotency_key]),
        s => lock_of(&[s.as_str(), &op.tool, &op.idempotency_key]),
    };
    let mut locks = vec![key];
    if op.blocked_by_uncertainty() {
        locks.push(lock_of(&["arguments", &op.tool, &op.arguments_hash]));
    }
    locks.sort_unstable();
    locks.dedup();
    locks
}

/// Renews this owner's lease if it is still current; a [`JournalError::LeaseExpired`] when it
/// is not (another host may have settled this owner's operations already).
pub(crate) async fn renew(db: &Db, c: &impl GenericClient) -> Result<(), JournalError> {
    let n = c
        .execute(
            "UPDATE owners SET lease_expires_at = now() + make_interval(secs => $2)
             WHERE owner_id = $1 AND lease_expires_at > now()",
            &[&db.owner, &db.lease.as_secs_f64()],
        )
        .await
        .map_err(|e| db.error(&e))?;
    if n == 0 {
        db.fence();
        return Err(db.expired());
    }
    Ok(())
}

/// Inserts a started operation owned by this journal.
pub(crate) async fn insert(
    db: &Db,
    c: &impl GenericClient,
    op: &OperationStart,
) -> Result<(), JournalError> {
    c.execute(
        "INSERT INTO operations (operation_id, session_id, call_id, tool, tool_version,
            schema_version, effect, idempotency, idempotency_key, key_source, arguments_hash,
            arguments, decision, permission, scheduler_batch, principal, started_at, started_us,
            state, owner, key_scope)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14::text::jsonb, $15,
            $16, $17, $18, 'started', $19, $20)",
        &[
            &op.operation_id,
            &op.session_id,
            &op.call_id,
            &op.tool,
            &i64::from(op.tool_version),
            &op.schema_version,
            &op.effect.as_str(),
            &op.idempotency.as_str(),
            &op.idempotency_key,
            &op.key_source.as_str(),
            &op.arguments_hash,
            &op.arguments,
            &op.permission.decision.as_str(),
            &to_json(&op.permission),
            &op.scheduler_batch.and_then(|b| i64::try_from(b).ok()),
            &op.principal,
            &op.started_at,
            &micros(&op.started_at),
            &db.owner,
            &op.key_scope(),
        ],
    )
    .await
    .map_err(|e| db.error(&e))?;
    Ok(())
}

/// The claim, in one transaction: the advisory locks of the key (and of the tool and
/// arguments), this owner's lease checked and renewed, the look-ups, the insert.
pub(crate) async fn claim(db: &Db, op: &OperationStart) -> Result<Claim, JournalError> {
    let mut client = db.client().await?;
    let tx = client.transaction().await.map_err(|e| db.error(&e))?;
    for lock in claim_locks(op) {
        tx.execute(
            "SELECT pg_advisory_xact_lock($1, $2)",
            &[&LOCK_CLASS, &lock],
        )
        .await
        .map_err(|e| db.error(&e))?;
    }
    renew(db, &*tx).await?;
    let args = match op.key_source {
        KeySource::Spec | KeySource::Client => None,
        KeySource::Derived => Some(op.arguments_hash.as_str()),
    };
    let answer = if let Some(earlier) = rows::by_key(
        &*tx,
        &op.tool,
        &op.idempotency_key,
        op.key_source,
        args,
        &op.key_scope(),
    )
    .await?
        && claimed_by(&earlier.record, op)
    {
        Some(existing(earlier, Claim::Existing))
    } else if op.blocked_by_uncertainty()
        && let Some(o) = rows::latest_uncertain(&*tx, &op.tool, &op.arguments_hash).await?
    {
        Some(existing(o, Claim::Blocked))
    } else {
        None
    };
    if let Some(a) = answer {
        // Nothing written: the lease renewal alone is worth keeping.
        tx.commit().await.map_err(|e| db.error(&e))?;
        return Ok(a);
    }
    insert(db, &*tx, op).await?;
    tx.commit().await.map_err(|e| db.error(&e))?;
    Ok(Claim::Started)
}

/// `Orphaned` for a started operation whose owner has ended, else the given answer.
fn existing(o: Owned, answer: fn(Box<crate::runtime::journal::OperationRecord>) -> Claim) -> Claim {
    if o.record.state() == OperationState::Started && !o.live {
        Claim::Orphaned(Box::new(o.record))
    } else {
        answer(Box::new(o.record))
    }
}

/// Records the finish of a started operation.
pub(crate) async fn finish(
    db: &Db,
    c: &impl GenericClient,
    f: &OperationFinish,
) -> Result<(), JournalError> {
    let n = c
        .execute(
            "UPDATE operations SET state = $2, status = $2, finished_at = $3,
                finished_us = $4, error_type = $5, exit_code = $6, output_size = $7,
                result_digest = $8, external_reference = $9, artifact_ids = $10::text::jsonb,
                retry_count = $11, attempts = greatest(attempts, $11 + 1),
                result = $12, trace = $13::text::jsonb
             WHERE operation_id = $1 AND finished_at IS NULL AND state = 'started'",
            &[
                &f.operation_id,
                &f.status.as_str(),
                &f.finished_at,
                &micros(&f.finished_at),
                &f.error_type.map(|t| t.as_str()),
                &f.exit_code,
                &i64::try_from(f.output_size).unwrap_or(i64::MAX),
                &f.result_digest,
                &f.external_reference,
                &to_json(&f.artifact_ids),
                &i32::try_from(f.retry_count).unwrap_or(i32::MAX),
                &to_json(&f.result),
                &to_json(&f.trace),
            ],
        )
        .await
        .map_err(|e| db.error(&e))?;
    if n == 0 {
        let why = match rows::by_id(c, &f.operation_id).await? {
            None => "finish of unknown operation",
            Some(op) if op.record.finish.is_some() => "operation finished twice",
            Some(_) => "finish of an operation settled after its owner's lease expired",
        };
        return Err(JournalError::Invalid(format!("{why}: {}", f.operation_id)));
    }
    Ok(())
}

/// Records one attempt.
pub(crate) async fn attempt(
    db: &Db,
    c: &impl GenericClient,
    a: &AttemptRecord,
) -> Result<(), JournalError> {
    let attempt = i32::try_from(a.attempt).unwrap_or(i32::MAX);
    c.execute(
        "INSERT INTO attempts (operation_id, attempt, error_type, retry_after_ms, ended_at)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
        &[
            &a.operation_id,
            &attempt,
            &a.error_type.map(|t| t.as_str()),
            &a.retry_after_ms.and_then(|m| i64::try_from(m).ok()),
            &a.ended_at,
        ],
    )
    .await
    .map_err(|e| db.error(&e))?;
    c.execute(
        "UPDATE operations SET attempts = greatest(attempts, $2) WHERE operation_id = $1",
        &[&a.operation_id, &attempt],
    )
    .await
    .map_err(|e| db.error(&e))?;
    Ok(())
}

/// Records a settlement, in one transaction with the operation's row locked: refused while
/// the operation is started and its owner holds its lease.
pub(crate) async fn settle(db: &Db, s: &Settlement) -> Result<(), JournalError> {
    let mut client = db.client().await?;
    let tx = client.transaction().await.map_err(|e| db.error(&e))?;
    tx.execute(
        "SELECT 1 FROM operations WHERE operation_id = $1 FOR UPDATE",
        &[&s.operation_id],
    )
    .await
    .map_err(|e| db.error(&e))?;
    let op = rows::by_id(&*tx, &s.operation_id).await?;
    if let Some(o) = &op
        && o.record.state() == OperationState::Started
        && o.live
    {
        return Err(JournalError::Invalid(format!(
            "operation {} is still running in toolgate process {} on {}; it can be settled once it has finished or that process's lease has expired",
            s.operation_id,
            o.pid.unwrap_or_default(),
            o.host.as_deref().unwrap_or("another host"),
        )));
    }
    check_settle(op.as_ref().map(|o| &o.record), s)?;
    tx.execute(
        "INSERT INTO settlements (operation_id, outcome, settled_by, reason,
            external_reference, at) VALUES ($1, $2, $3, $4, $5, $6)",
        &[
            &s.operation_id,
            &s.outcome.as_str(),
            &s.by.as_str(),
            &s.reason,
            &s.external_reference,
            &s.at,
        ],
    )
    .await
    .map_err(|e| db.error(&e))?;
    tx.execute(
        "UPDATE operations SET state = $2 WHERE operation_id = $1",
        &[&s.operation_id, &s.outcome.as_str()],
    )
    .await
    .map_err(|e| db.error(&e))?;
    tx.commit().await.map_err(|e| db.error(&e))
}

/// Inserts one audit record.
pub(crate) async fn audit(
    db: &Db,
    c: &impl GenericClient,
    e: &AuditEntry,
) -> Result<(), JournalError> {
    let t = &e.trace;
    c.execute(
        "INSERT INTO audit (at_us, start_time, session_id, call_id, tool, tool_version, status,
            error_type, decision, permission, operation_id, idempotency_key, replayed,
            duration_us, arguments, summary, trace, principal, owner)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::text::jsonb, $11, $12, $13, $14, $15,
            $16, $17::text::jsonb, $18, $19)",
        &[
            &micros(&t.start_time),
            &t.start_time,
            &t.session_id,
            &t.call_id,
            &t.tool,
            &t.tool_version.map(i64::from),
            &t.status.as_str(),
            &t.error_type.map(|x| x.as_str()),
            &t.permission.as_ref().map(|p| p.decision.as_str()),
            &t.permission.as_ref().map(to_json),
            &t.operation_id,
            &e.idempotency_key,
            &t.replayed,
            &i64::try_from(t.duration_us).unwrap_or(i64::MAX),
            &cut(canonical_json(&e.arguments), AUDIT_ARGUMENTS_MAX),
            &cut(e.summary.clone(), AUDIT_SUMMARY_MAX),
            &to_json(t),
            &t.principal,
            &db.owner,
        ],
    )
    .await
    .map_err(|e| db.error(&e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_that_could_meet_take_the_same_lock() {
        assert_eq!(lock_of(&["spec", "t", "k"]), lock_of(&["spec", "t", "k"]));
        assert_ne!(lock_of(&["spec", "t", "k"]), lock_of(&["spec", "tk", ""]));
        assert_eq!(cut("abcd".into(), 3), "abc…");
    }
}
