//! The journal's one writer: a thread that owns the write connection and commits in groups.
//!
//! Records arrive on a channel. The thread takes the first, then everything else already
//! waiting (up to [`MAX_GROUP`]), applies them all in one transaction and commits once: with
//! `synchronous=FULL` that is one fsync for the whole group, so sixteen concurrent calls
//! starting together cost about one flush, not sixteen. A durable request is answered after the
//! commit; a request nobody waits for (attempts, and the records of calls that change nothing)
//! is answered by nobody, and a group of only such requests is committed without a flush
//! (`synchronous=NORMAL`; the next flushed commit makes it durable too). If a commit fails, every request of the group fails and the writer
//! refuses all later ones: a journal that cannot record is an engine failure, not something to
//! carry on without.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::{Connection, params};
use tokio::sync::oneshot;

use super::rows;
use super::schema::sqlite_error;
use crate::runtime::journal::{
    AttemptRecord, Claim, JournalError, OperationFinish, OperationStart, Settlement, check_settle,
    claimed_by,
};

/// The most records one transaction takes (so a flood of records still commits in bounded time).
const MAX_GROUP: usize = 512;

/// A record for the writer.
pub(crate) enum Write {
    /// Insert a started operation.
    Start(Box<OperationStart>),
    /// Atomically: return the operation on record under the key, or insert this one.
    Claim(Box<OperationStart>),
    /// Insert an attempt.
    Attempt(AttemptRecord),
    /// Record the finish.
    Finish(Box<OperationFinish>),
    /// Record a settlement.
    Settle(Settlement),
}

/// What a durable request is answered with.
pub(crate) enum Reply {
    /// Recorded.
    Done,
    /// The answer to a claim.
    Claim(Claim),
}

type Answer = Result<Reply, JournalError>;

struct Request {
    write: Write,
    reply: Option<oneshot::Sender<Answer>>,
}

/// How the writer has grouped records so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CommitStats {
    /// Transactions committed.
    pub commits: u64,
    /// Records written in them.
    pub records: u64,
}

#[derive(Default)]
struct Counters {
    commits: AtomicU64,
    records: AtomicU64,
}

/// The handle of the writer thread.
pub(crate) struct Writer {
    tx: Option<mpsc::Sender<Request>>,
    thread: Option<JoinHandle<()>>,
    counters: Arc<Counters>,
}

impl Writer {
    /// Starts the writer thread on an open connection.
    pub(crate) fn spawn(
        conn: Connection,
        path: PathBuf,
        busy: Duration,
    ) -> Result<Self, JournalError> {
        let (tx, rx) = mpsc::channel();
        let counters = Arc::new(Counters::default());
        let c = counters.clone();
        let thread = std::thread::Builder::new()
            .name("toolgate-journal".into())
            .spawn(move || run(conn, rx, &path, busy, &c))
            .map_err(|e| JournalError::Failed(format!("cannot start the journal writer: {e}")))?;
        Ok(Writer {
            tx: Some(tx),
            thread: Some(thread),
            counters,
        })
    }

    /// Queues a record and waits until it is committed.
    pub(crate) async fn durable(&self, write: Write) -> Answer {
        let (tx, rx) = oneshot::channel();
        self.send(Request {
            write,
            reply: Some(tx),
        })?;
        rx.await
            .map_err(|_| JournalError::Failed("the journal writer stopped".into()))?
    }

    /// Queues a record without waiting for it.
    pub(crate) fn queue(&self, write: Write) -> Result<(), JournalError> {
        self.send(Request { write, reply: None })
    }

    fn send(&self, r: Request) -> Result<(), JournalError> {
        self.tx
            .as_ref()
            .and_then(|tx| tx.send(r).ok())
            .ok_or_else(|| JournalError::Failed("the journal writer stopped".into()))
    }

    /// Commits and records so far.
    pub(crate) fn stats(&self) -> CommitStats {
        CommitStats {
            commits: self.counters.commits.load(Ordering::Relaxed),
            records: self.counters.records.load(Ordering::Relaxed),
        }
    }
}

impl Drop for Writer {
    /// Closes the channel and waits for the writer to commit what is queued.
    fn drop(&mut self) {
        self.tx.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The writer thread: groups, applies, commits, answers.
fn run(conn: Connection, rx: mpsc::Receiver<Request>, path: &Path, busy: Duration, c: &Counters) {
    let err = |e: rusqlite::Error| sqlite_error(path, &e, busy);
    let mut broken: Option<String> = None;
    // The connection is opened with `synchronous=FULL`.
    let mut flushing = true;
    while let Ok(first) = rx.recv() {
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(r) => group.push(r),
                Err(_) => break,
            }
        }
        if let Some(why) = &broken {
            for r in group {
                answer(r.reply, Err(stopped(why)));
            }
            continue;
        }
        // A group nobody waits for (the records of calls that change nothing, attempts) is
        // committed without a flush: it was never promised to be durable, and the next durable
        // commit flushes the write-ahead log with it, in order. Saves a flush per read.
        let flush = group.iter().any(|r| r.reply.is_some());
        if flush != flushing {
            let mode = if flush { "FULL" } else { "NORMAL" };
            if let Err(e) = conn.pragma_update(None, "synchronous", mode) {
                let e = err(e);
                broken = Some(e.to_string());
                for r in group {
                    answer(r.reply, Err(stopped(&e.to_string())));
                }
                continue;
            }
            flushing = flush;
        }
        if let Err(e) = conn.execute_batch("BEGIN IMMEDIATE") {
            let e = err(e);
            broken = Some(e.to_string());
            for r in group {
                answer(r.reply, Err(stopped(&e.to_string())));
            }
            continue;
        }
        let n = group.len() as u64;
        let mut pending = Vec::with_capacity(group.len());
        for r in group {
            let out = apply(&conn, r.write).map_err(|e| match e {
                Applied::Sql(e) => err(e),
                Applied::Journal(e) => e,
            });
            match (r.reply, out) {
                (Some(tx), out) => pending.push((tx, out)),
                (None, Ok(_)) => {}
                (None, Err(e)) => broken = Some(e.to_string()),
            }
        }
        match conn.execute_batch("COMMIT") {
            Ok(()) => {
                c.commits.fetch_add(1, Ordering::Relaxed);
                c.records.fetch_add(n, Ordering::Relaxed);
                for (tx, out) in pending {
                    answer(Some(tx), out);
                }
            }
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                let e = err(e).to_string();
                broken = Some(e.clone());
                for (tx, _) in pending {
                    answer(
                        Some(tx),
                        Err(JournalError::Failed(format!("commit failed: {e}"))),
                    );
                }
            }
        }
    }
}

fn stopped(why: &str) -> JournalError {
    JournalError::Failed(format!(
        "the journal stopped accepting records after an error: {why}"
    ))
}

fn answer(reply: Option<oneshot::Sender<Answer>>, out: Answer) {
    if let Some(tx) = reply {
        // The caller may have gone away (its call was cancelled); the record stands.
        let _ = tx.send(out);
    }
}

enum Applied {
    Sql(rusqlite::Error),
    Journal(JournalError),
}

impl From<rusqlite::Error> for Applied {
    fn from(e: rusqlite::Error) -> Self {
        Applied::Sql(e)
    }
}

/// Microseconds since the epoch of an RFC 3339 time (0 when it does not parse).
fn micros(rfc3339: &str) -> i64 {
    humantime::parse_rfc3339_weak(rfc3339)
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .and_then(|d| i64::try_from(d.as_micros()).ok())
        .unwrap_or(0)
}

fn to_json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

fn apply(conn: &Connection, w: Write) -> Result<Reply, Applied> {
    match w {
        Write::Start(op) => insert(conn, &op).map(|()| Reply::Done),
        Write::Claim(op) => {
            if let Some(earlier) =
                rows::by_key(conn, &op.tool, &op.idempotency_key, op.claim_args())?
                && claimed_by(&earlier, &op)
            {
                return Ok(Reply::Claim(Claim::Existing(Box::new(earlier))));
            }
            insert(conn, &op)?;
            Ok(Reply::Claim(Claim::Started))
        }
        Write::Attempt(a) => {
            conn.prepare_cached(
                "INSERT INTO attempts (operation_id, attempt, error_type, retry_after_ms, ended_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![
                a.operation_id,
                a.attempt,
                a.error_type.map(|t| t.as_str()),
                a.retry_after_ms.and_then(|m| i64::try_from(m).ok()),
                a.ended_at
            ])?;
            conn.prepare_cached(
                "UPDATE operations SET attempts = max(attempts, ?2) WHERE operation_id = ?1",
            )?
            .execute(params![a.operation_id, a.attempt])?;
            Ok(Reply::Done)
        }
        Write::Finish(f) => {
            let n = conn
                .prepare_cached(
                    "UPDATE operations SET state = ?2, status = ?2, finished_at = ?3,
                        finished_us = ?4, error_type = ?5, exit_code = ?6, output_size = ?7,
                        result_digest = ?8, external_reference = ?9, artifact_ids = ?10,
                        retry_count = ?11, attempts = max(attempts, ?11 + 1), result = ?12,
                        trace = ?13
                     WHERE operation_id = ?1 AND finished_at IS NULL AND state = 'started'",
                )?
                .execute(params![
                    f.operation_id,
                    f.status.as_str(),
                    f.finished_at,
                    micros(&f.finished_at),
                    f.error_type.map(|t| t.as_str()),
                    f.exit_code,
                    i64::try_from(f.output_size).unwrap_or(i64::MAX),
                    f.result_digest,
                    f.external_reference,
                    to_json(&f.artifact_ids),
                    f.retry_count,
                    to_json(&f.result),
                    to_json(&f.trace),
                ])?;
            if n == 0 {
                let why = match rows::by_id(conn, &f.operation_id)? {
                    None => "finish of unknown operation",
                    Some(op) if op.finish.is_some() => "operation finished twice",
                    Some(_) => "finish of an operation settled after a crash",
                };
                return Err(Applied::Journal(JournalError::Invalid(format!(
                    "{why}: {}",
                    f.operation_id
                ))));
            }
            Ok(Reply::Done)
        }
        Write::Settle(s) => {
            let op = rows::by_id(conn, &s.operation_id)?;
            check_settle(op.as_ref(), &s).map_err(Applied::Journal)?;
            conn.prepare_cached(
                "INSERT INTO settlements (operation_id, outcome, settled_by, reason,
                    external_reference, at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![
                s.operation_id,
                s.outcome.as_str(),
                s.by.as_str(),
                s.reason,
                s.external_reference,
                s.at
            ])?;
            conn.prepare_cached("UPDATE operations SET state = ?2 WHERE operation_id = ?1")?
                .execute(params![s.operation_id, s.outcome.as_str()])?;
            Ok(Reply::Done)
        }
    }
}

fn insert(conn: &Connection, op: &OperationStart) -> Result<(), Applied> {
    conn.prepare_cached(
        "INSERT INTO operations (operation_id, session_id, call_id, tool, tool_version,
            schema_version, effect, idempotency, idempotency_key, key_source, arguments_hash,
            arguments, decision, permission, scheduler_batch, started_at, started_us, state)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
            'started')",
    )?
    .execute(params![
        op.operation_id,
        op.session_id,
        op.call_id,
        op.tool,
        op.tool_version,
        op.schema_version,
        op.effect.as_str(),
        op.idempotency.as_str(),
        op.idempotency_key,
        op.key_source.as_str(),
        op.arguments_hash,
        op.arguments,
        op.permission.decision.as_str(),
        to_json(&op.permission),
        op.scheduler_batch.and_then(|b| i64::try_from(b).ok()),
        op.started_at,
        micros(&op.started_at),
    ])?;
    Ok(())
}
