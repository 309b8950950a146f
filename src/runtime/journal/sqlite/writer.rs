//! The journal's one writer per process: a thread that owns the write connection and commits
//! in groups.
//!
//! Records arrive on a channel. The thread takes the first, then everything else already
//! waiting (up to [`MAX_GROUP`]), applies them all in one transaction and commits once: with
//! `synchronous=FULL` that is one fsync for the whole group, so sixteen concurrent calls
//! starting together cost about one flush, not sixteen. A durable request (a start, a
//! settlement) is answered after the commit and its flush; a committed one (a finish) after the
//! commit; a request nobody waits for (attempts, and the records of calls that change nothing)
//! is answered by nobody. A group with no durable request is committed without a flush
//! (`synchronous=NORMAL`; the next flushed commit makes it durable too): a process crash keeps
//! what was committed, only a power loss can take it.
//!
//! Audit records ([`AuditQueue`]) do not travel on the channel: callers push them into a
//! bounded queue and never wait (a full queue drops the record and counts it). The thread adds
//! what is queued to its next transaction; when nothing durable is waiting it lingers up to the
//! audit linger for more records first, so a stream of reads and refusals is written in batches
//! rather than one transaction per call. A `kill -9` loses at most the records still queued —
//! the batch being gathered — since a committed transaction survives the end of the process.
//!
//! Several processes write one journal: `BEGIN IMMEDIATE` takes SQLite's write lock (waiting up
//! to the busy timeout), so a claim's look-up and insert are atomic across processes too. A
//! group that cannot get the lock in time fails its durable requests (the calls end with an
//! engine error) and keeps the rest for the next attempt. Any other failed commit fails every
//! request of its group and stops the writer: a journal that cannot record is an engine
//! failure, not something to carry on without.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode, params};
use tokio::sync::oneshot;

use super::audit_queue::AuditQueue;
use super::owners::{Liveness, Owners};
use super::rows::{self, Owned};
use super::schema::sqlite_error;
use super::writes::{Prune, PruneReport, finish, insert, insert_audit, prune};
use crate::runtime::journal::{
    AttemptRecord, AuditEntry, Claim, JournalError, OperationFinish, OperationStart,
    OperationState, Settlement, check_settle, claimed_by,
};

/// The most records one transaction takes (so a flood of records still commits in bounded time).
const MAX_GROUP: usize = 512;

/// The most audit records one transaction takes.
const MAX_AUDIT_GROUP: usize = 1024;

/// An audit batch this large is committed without lingering for more.
const AUDIT_BATCH: usize = 256;

/// The longest a group with a durable start waits for the starts announced with it
/// ([`Writer::expect`]) before it commits without them.
const GATHER_MAX: Duration = Duration::from_millis(2);

/// A record for the writer.
pub(crate) enum Write {
    /// Insert a started operation.
    Start(Box<OperationStart>),
    /// Atomically: return the operation on record under the key (or an uncertain one with the
    /// same arguments), or insert this one.
    Claim(Box<OperationStart>),
    /// Insert an attempt.
    Attempt(AttemptRecord),
    /// Record the finish.
    Finish(Box<OperationFinish>),
    /// Record a settlement.
    Settle(Settlement),
    /// Commit what is queued, audit records included, with a flush.
    Flush,
    /// Delete what is older than a moment.
    Prune(Prune),
    /// Audit records are waiting (sent when the audit queue stops being empty).
    Nudge,
}

/// What a durable request is answered with.
pub(crate) enum Reply {
    /// Recorded.
    Done,
    /// The answer to a claim.
    Claim(Claim),
    /// The answer to a prune.
    Pruned(PruneReport),
}

type Answer = Result<Reply, JournalError>;

struct Request {
    write: Write,
    reply: Option<oneshot::Sender<Answer>>,
    /// Whether its commit must be flushed before the reply (else committed is enough).
    flush: bool,
}

/// How the writer has grouped records so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CommitStats {
    /// Transactions committed.
    pub commits: u64,
    /// Records written in them (audit records included).
    pub records: u64,
    /// Audit records written.
    pub audit_written: u64,
    /// Audit records dropped because the queue was full (the disk did not keep up).
    pub audit_dropped: u64,
    /// Commits that were flushed (`synchronous=FULL`): one per group with a durable request.
    pub flushes: u64,
}

#[derive(Default)]
struct Counters {
    commits: AtomicU64,
    records: AtomicU64,
    audit_written: AtomicU64,
    flushes: AtomicU64,
}

/// How the writer is set up.
pub(crate) struct WriterSetup {
    pub(crate) conn: Connection,
    pub(crate) path: PathBuf,
    pub(crate) busy: Duration,
    pub(crate) owners: Arc<Owners>,
    pub(crate) audit_capacity: usize,
    pub(crate) audit_linger: Duration,
}

/// The handle of the writer thread.
pub(crate) struct Writer {
    tx: Option<mpsc::Sender<Request>>,
    thread: Option<JoinHandle<()>>,
    counters: Arc<Counters>,
    audit: Arc<AuditQueue>,
    /// Durable starts announced and not yet received.
    expected: Arc<AtomicUsize>,
}

impl Writer {
    /// Starts the writer thread on an open connection.
    pub(crate) fn spawn(setup: WriterSetup) -> Result<Self, JournalError> {
        let (tx, rx) = mpsc::channel();
        let counters = Arc::new(Counters::default());
        let audit = Arc::new(AuditQueue::new(setup.audit_capacity));
        let expected = Arc::new(AtomicUsize::new(0));
        let thread = {
            let counters = counters.clone();
            let audit = audit.clone();
            let expected = expected.clone();
            std::thread::Builder::new()
                .name("toolgate-journal".into())
                .spawn(move || {
                    let mut t = Thread {
                        conn: setup.conn,
                        path: setup.path,
                        busy: setup.busy,
                        owners: setup.owners,
                        counters,
                        audit,
                        linger: setup.audit_linger,
                        broken: None,
                        flushing: true,
                        carried: Vec::new(),
                        expected,
                    };
                    t.run(rx);
                })
                .map_err(|e| {
                    JournalError::Failed(format!("cannot start the journal writer: {e}"))
                })?
        };
        Ok(Writer {
            tx: Some(tx),
            thread: Some(thread),
            counters,
            audit,
            expected,
        })
    }

    /// Announces `n` durable starts on their way (the side-effecting calls of one batch): the
    /// first to arrive waits for the others (at most [`GATHER_MAX`]) so that they share its
    /// flush. One call alone announces nothing and never waits.
    pub(crate) fn expect(&self, n: usize) {
        if n > 1 {
            self.expected.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// Queues a record and waits until it is committed and flushed: it survives a power loss.
    pub(crate) async fn durable(&self, write: Write) -> Answer {
        self.wait(write, true).await
    }

    /// Queues a record and waits until it is committed, without a flush of its own: it survives
    /// the end of the process (the write-ahead log is in the kernel's page cache), and the next
    /// flushed commit carries it to the disk.
    pub(crate) async fn committed(&self, write: Write) -> Answer {
        self.wait(write, false).await
    }

    async fn wait(&self, write: Write, flush: bool) -> Answer {
        let (tx, rx) = oneshot::channel();
        self.send(Request {
            write,
            reply: Some(tx),
            flush,
        })?;
        rx.await
            .map_err(|_| JournalError::Failed("the journal writer stopped".into()))?
    }

    /// Queues a record without waiting for it.
    pub(crate) fn queue(&self, write: Write) -> Result<(), JournalError> {
        self.send(Request {
            write,
            reply: None,
            flush: false,
        })
    }

    /// Queues an audit record; never waits.
    pub(crate) fn audit(&self, entry: AuditEntry) {
        if self.audit.push(entry) {
            let _ = self.queue(Write::Nudge);
        }
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
            audit_written: self.counters.audit_written.load(Ordering::Relaxed),
            audit_dropped: self.audit.dropped.load(Ordering::Relaxed),
            flushes: self.counters.flushes.load(Ordering::Relaxed),
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

/// The writer thread's state.
struct Thread {
    conn: Connection,
    path: PathBuf,
    busy: Duration,
    owners: Arc<Owners>,
    counters: Arc<Counters>,
    audit: Arc<AuditQueue>,
    linger: Duration,
    /// Why the writer stopped accepting records, once it has.
    broken: Option<String>,
    /// Whether the connection is in `synchronous=FULL` (it is opened so).
    flushing: bool,
    /// Records nobody waits for, kept from a group that could not get the write lock.
    carried: Vec<Request>,
    /// Durable starts announced and not yet received ([`Writer::expect`]).
    expected: Arc<AtomicUsize>,
}

impl Thread {
    fn err(&self, e: rusqlite::Error) -> JournalError {
        sqlite_error(&self.path, &e, self.busy)
    }

    /// Groups, applies, commits, answers; at the end, commits what is left of the audit.
    fn run(&mut self, rx: mpsc::Receiver<Request>) {
        let mut open = true;
        while open {
            let mut group = std::mem::take(&mut self.carried);
            if group.is_empty() && self.audit.len() == 0 {
                match rx.recv() {
                    Ok(r) => self.take(&mut group, r),
                    Err(_) => break,
                }
            }
            while group.len() < MAX_GROUP {
                match rx.try_recv() {
                    Ok(r) => self.take(&mut group, r),
                    Err(mpsc::TryRecvError::Empty) => break,
                    Err(mpsc::TryRecvError::Disconnected) => {
                        open = false;
                        break;
                    }
                }
            }
            // Nobody waits for this commit: give more records a moment to join it.
            if open && !group.iter().any(|r| r.reply.is_some()) {
                open = self.linger(&rx, &mut group);
            }
            // Starts announced with this group's are on their way: one flush for them all.
            if open && group.iter().any(|r| r.flush) {
                open = self.gather(&rx, &mut group);
            }
            let audit = self.audit.take(MAX_AUDIT_GROUP);
            self.commit(group, audit);
        }
        while self.audit.len() > 0 && self.broken.is_none() {
            let audit = self.audit.take(MAX_AUDIT_GROUP);
            self.commit(Vec::new(), audit);
        }
        let _ = self.conn.execute(
            "DELETE FROM owners WHERE owner_id = ?1",
            params![self.owners.me()],
        );
    }

    /// Waits up to the linger for more records, until one is durable or the batch is full;
    /// false when the channel closed.
    fn linger(&self, rx: &mpsc::Receiver<Request>, group: &mut Vec<Request>) -> bool {
        if self.linger.is_zero() {
            return true;
        }
        let deadline = Instant::now() + self.linger;
        while group.len() < MAX_GROUP && self.audit.len() < AUDIT_BATCH {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match rx.recv_timeout(left) {
                Ok(r) => {
                    let durable = r.reply.is_some();
                    self.take(group, r);
                    if durable {
                        break;
                    }
                }
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return false,
            }
        }
        true
    }

    /// Adds a received request to the group, counting an announced start as arrived.
    fn take(&self, group: &mut Vec<Request>, r: Request) {
        if r.flush && matches!(r.write, Write::Claim(_) | Write::Start(_)) {
            let _ = self
                .expected
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
        }
        group.push(r);
    }

    /// Waits (at most [`GATHER_MAX`]) for the durable starts announced and not yet received;
    /// false when the channel closed. Those that do not come in time (a call refused before
    /// its claim, or still waiting for its resources) are not waited for again.
    fn gather(&self, rx: &mpsc::Receiver<Request>, group: &mut Vec<Request>) -> bool {
        let deadline = Instant::now() + GATHER_MAX;
        while group.len() < MAX_GROUP && self.expected.load(Ordering::Relaxed) > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                self.expected.store(0, Ordering::Relaxed);
                break;
            }
            match rx.recv_timeout(left) {
                Ok(r) => self.take(group, r),
                Err(RecvTimeoutError::Timeout) => {
                    self.expected.store(0, Ordering::Relaxed);
                    break;
                }
                Err(RecvTimeoutError::Disconnected) => return false,
            }
        }
        true
    }

    fn fail_all(&mut self, group: Vec<Request>, why: &str) {
        for r in group {
            answer(r.reply, Err(stopped(why)));
        }
    }

    /// One transaction: the group's records and a batch of audit records.
    fn commit(&mut self, group: Vec<Request>, audit: Vec<AuditEntry>) {
        if let Some(why) = self.broken.clone() {
            self.fail_all(group, &why);
            return;
        }
        let writes = group
            .iter()
            .filter(|r| !matches!(r.write, Write::Nudge))
            .count();
        if writes == 0 && audit.is_empty() {
            return;
        }
        // A group without a durable request (the records of calls that change nothing,
        // attempts, finishes, the audit) is committed without a flush: committed is all a
        // process crash needs, and the next durable commit flushes the write-ahead log with it,
        // in order. Saves a flush per read, and per side-effecting call its second one.
        let flush = group.iter().any(|r| r.flush);
        if flush != self.flushing {
            let mode = if flush { "FULL" } else { "NORMAL" };
            if let Err(e) = self.conn.pragma_update(None, "synchronous", mode) {
                let e = self.err(e).to_string();
                self.broken = Some(e.clone());
                self.fail_all(group, &e);
                return;
            }
            self.flushing = flush;
        }
        if let Err(e) = self.conn.execute_batch("BEGIN IMMEDIATE") {
            let busy = matches!(
                e.sqlite_error_code(),
                Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
            );
            let e = self.err(e);
            if busy {
                // Another process held the write lock past the busy timeout: the calls waiting
                // for this commit fail; what nobody waits for is tried again.
                let why = e.to_string();
                for r in group {
                    match r.reply {
                        Some(tx) => answer(Some(tx), Err(stopped_once(&why))),
                        None => self.carried.push(r),
                    }
                }
                self.requeue(audit);
                return;
            }
            let why = e.to_string();
            self.broken = Some(why.clone());
            self.fail_all(group, &why);
            return;
        }
        let mut pending = Vec::with_capacity(group.len());
        for r in group {
            if matches!(r.write, Write::Nudge) {
                continue;
            }
            let out = self.apply(r.write).map_err(|e| match e {
                Applied::Sql(e) => self.err(e),
                Applied::Journal(e) => e,
            });
            match (r.reply, out) {
                (Some(tx), out) => pending.push((tx, out)),
                (None, Ok(_)) => {}
                (None, Err(e)) => self.broken = Some(e.to_string()),
            }
        }
        let n_audit = audit.len() as u64;
        for e in &audit {
            if let Err(e) = insert_audit(&self.conn, e) {
                self.broken = Some(self.err(e).to_string());
                break;
            }
        }
        match self.conn.execute_batch("COMMIT") {
            Ok(()) => {
                let c = &self.counters;
                c.commits.fetch_add(1, Ordering::Relaxed);
                c.records
                    .fetch_add(writes as u64 + n_audit, Ordering::Relaxed);
                c.audit_written.fetch_add(n_audit, Ordering::Relaxed);
                if flush {
                    c.flushes.fetch_add(1, Ordering::Relaxed);
                }
                for (tx, out) in pending {
                    answer(Some(tx), out);
                }
            }
            Err(e) => {
                let _ = self.conn.execute_batch("ROLLBACK");
                let e = self.err(e).to_string();
                self.broken = Some(e.clone());
                for (tx, _) in pending {
                    answer(
                        Some(tx),
                        Err(JournalError::Failed(format!("commit failed: {e}"))),
                    );
                }
            }
        }
    }

    /// Puts audit records back at the front of the queue (a commit could not start).
    fn requeue(&self, audit: Vec<AuditEntry>) {
        self.audit.with(|q| {
            for e in audit.into_iter().rev() {
                q.push_front(e);
            }
        });
    }

    /// Whether the owner of a started operation is running; sets `running_in` when it is.
    fn liveness(&self, o: &mut Owned) -> Liveness {
        let l = self.owners.liveness(o.owner.as_deref());
        if l == Liveness::Live {
            o.record.running_in = o.pid.or(Some(std::process::id()));
        }
        l
    }

    fn claim(&self, op: &OperationStart) -> Result<Claim, Applied> {
        if let Some(mut earlier) = rows::by_key(
            &self.conn,
            &op.tool,
            &op.idempotency_key,
            op.key_source,
            op.claim_args(),
            &op.key_scope(),
        )? && claimed_by(&earlier.record, op)
        {
            if earlier.record.state() == OperationState::Started
                && self.liveness(&mut earlier) == Liveness::Ended
            {
                return Ok(Claim::Orphaned(Box::new(earlier.record)));
            }
            return Ok(Claim::Existing(Box::new(earlier.record)));
        }
        if op.blocked_by_uncertainty()
            && let Some(mut o) = rows::latest_uncertain(&self.conn, &op.tool, &op.arguments_hash)?
        {
            // Still running counts as unknown too: a retry from another connection while the
            // first attempt runs must not make it happen twice.
            if o.record.state() == OperationState::Started
                && self.liveness(&mut o) == Liveness::Ended
            {
                return Ok(Claim::Orphaned(Box::new(o.record)));
            }
            return Ok(Claim::Blocked(Box::new(o.record)));
        }
        insert(&self.conn, op, self.owners.me())?;
        Ok(Claim::Started)
    }

    fn settle(&self, s: &Settlement) -> Result<(), Applied> {
        let mut op = rows::by_id(&self.conn, &s.operation_id)?;
        if let Some(o) = op.as_mut()
            && o.record.state() == OperationState::Started
        {
            match self.liveness(o) {
                Liveness::Ended => {}
                Liveness::Live => {
                    return Err(Applied::Journal(JournalError::Invalid(format!(
                        "operation {} is still running in toolgate process {}; it can be settled once it has finished or that process has ended",
                        s.operation_id,
                        o.record.running_in.unwrap_or_default()
                    ))));
                }
                Liveness::Unknown(why) => {
                    return Err(Applied::Journal(JournalError::Invalid(format!(
                        "whether the process running operation {} has ended cannot be told ({why}); it was not settled",
                        s.operation_id
                    ))));
                }
            }
        }
        check_settle(op.as_ref().map(|o| &o.record), s).map_err(Applied::Journal)?;
        self.conn
            .prepare_cached(
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
        self.conn
            .prepare_cached("UPDATE operations SET state = ?2 WHERE operation_id = ?1")?
            .execute(params![s.operation_id, s.outcome.as_str()])?;
        Ok(())
    }

    fn apply(&self, w: Write) -> Result<Reply, Applied> {
        let conn = &self.conn;
        match w {
            Write::Start(op) => insert(conn, &op, self.owners.me()).map(|()| Reply::Done),
            Write::Claim(op) => self.claim(&op).map(Reply::Claim),
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
            Write::Finish(f) => finish(conn, &f).map(|()| Reply::Done),
            Write::Settle(s) => self.settle(&s).map(|()| Reply::Done),
            // A transaction that changes nothing writes nothing, so its commit flushes nothing:
            // the commits made without a flush before it reach the disk through an fsync of
            // the write-ahead log itself.
            Write::Flush => {
                let mut wal = self.path.clone().into_os_string();
                wal.push("-wal");
                match std::fs::File::open(&wal) {
                    Ok(f) => f.sync_all().map_err(|e| {
                        Applied::Journal(JournalError::Failed(format!(
                            "cannot flush {}: {e}",
                            std::path::Path::new(&wal).display()
                        )))
                    })?,
                    // No log: everything is in the database file, flushed by its checkpoint.
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => {
                        return Err(Applied::Journal(JournalError::Failed(format!(
                            "cannot flush {}: {e}",
                            std::path::Path::new(&wal).display()
                        ))));
                    }
                }
                Ok(Reply::Done)
            }
            Write::Nudge => Ok(Reply::Done),
            Write::Prune(p) => prune(conn, p).map(Reply::Pruned),
        }
    }
}

fn stopped(why: &str) -> JournalError {
    JournalError::Failed(format!(
        "the journal stopped accepting records after an error: {why}"
    ))
}

fn stopped_once(why: &str) -> JournalError {
    JournalError::Failed(format!("the journal could not record the call: {why}"))
}

fn answer(reply: Option<oneshot::Sender<Answer>>, out: Answer) {
    if let Some(tx) = reply {
        // The caller may have gone away (its call was cancelled); the record stands.
        let _ = tx.send(out);
    }
}

/// Why a write failed: SQLite, or the journal's own rules.
pub(super) enum Applied {
    Sql(rusqlite::Error),
    Journal(JournalError),
}

impl From<rusqlite::Error> for Applied {
    fn from(e: rusqlite::Error) -> Self {
        Applied::Sql(e)
    }
}
