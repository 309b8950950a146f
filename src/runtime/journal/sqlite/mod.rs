//! [`SqliteJournal`]: the durable journal, one SQLite file in the project's state folder
//! (`<state_dir>/journal.db`, [`JOURNAL_FILE`]).
//!
//! - WAL, `synchronous=FULL` (a commit is on the disk when it returns), `busy_timeout`,
//!   `foreign_keys`; `PRAGMA quick_check` and the schema version are checked at open.
//! - Several processes share a journal (two `toolgate serve`, a `toolgate call` while `serve`
//!   runs): WAL lets them read while one writes, and `BEGIN IMMEDIATE` with the busy timeout
//!   orders their writes. Each open journal is an *owner* ([`owners`]) whose lock file the
//!   kernel frees when its process ends, so recovery settles exactly the operations of ended
//!   processes and never one a live process is running.
//! - One writer thread per process with group commit ([`writer`]); reads go to separate
//!   read-only connections.
//! - Side-effecting operations wait for their start and finish to be committed; the records of
//!   calls that change nothing, attempt records and the audit are queued without waiting.
//!
//! [`JournalReader`] opens a journal read-only, for inspection (`toolgate journal list|show|
//! stats`) while runtimes are running.

mod audit_queue;
mod listing;
mod owners;
mod rows;
mod schema;
mod writer;
mod writes;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, params};

pub use listing::{AuditRecord, CallSummary, Filter, RecordedArguments, Refusals, ToolStats};
pub use writer::CommitStats;
pub use writes::{Prune, PruneReport};

use super::{
    AttemptRecord, AuditEntry, Claim, Journal, JournalError, JournalFuture, OperationFinish,
    OperationRecord, OperationStart, OperationState, Settlement, claimed_by,
};
use owners::{Liveness, Owners};
use rows::Owned;
use writer::{Reply, Write, Writer, WriterSetup};

/// The journal's file name in the state folder.
pub const JOURNAL_FILE: &str = "journal.db";

/// The schema version this build reads and writes.
pub const SCHEMA_VERSION: i64 = schema::SCHEMA_VERSION;

/// How long a statement waits for a lock held by another process before failing.
pub const DEFAULT_BUSY_TIMEOUT_MS: u64 = 5_000;

/// How long the writer waits for more audit records before it commits a batch nobody waits
/// for: what a `kill -9` can lose of the audit is at most the calls of this window.
pub const DEFAULT_AUDIT_LINGER_MS: u64 = 10;

/// How many audit records may wait for the writer; past that, records are dropped (and
/// counted) rather than make a call wait for the disk.
pub const DEFAULT_AUDIT_CAPACITY: usize = 16_384;

/// How a journal is opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqliteOptions {
    /// How long to wait for a database lock held elsewhere.
    pub busy_timeout: Duration,
    /// Whether to run `PRAGMA quick_check` at open (reads the whole file once).
    pub integrity_check: bool,
    /// How long the writer gathers audit records before committing them.
    pub audit_linger: Duration,
    /// How many audit records may wait for the writer.
    pub audit_capacity: usize,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            busy_timeout: Duration::from_millis(DEFAULT_BUSY_TIMEOUT_MS),
            integrity_check: true,
            audit_linger: Duration::from_millis(DEFAULT_AUDIT_LINGER_MS),
            audit_capacity: DEFAULT_AUDIT_CAPACITY,
        }
    }
}

/// The durable journal.
pub struct SqliteJournal {
    path: PathBuf,
    opts: SqliteOptions,
    writer: Writer,
    readers: Mutex<Vec<Connection>>,
    owners: Arc<Owners>,
}

impl std::fmt::Debug for SqliteJournal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteJournal")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl SqliteJournal {
    /// Opens (or creates) the journal at `path` with the default options.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, JournalError> {
        SqliteJournal::open_with(path, SqliteOptions::default())
    }

    /// Opens (or creates) the journal at `path`: creates the folder, becomes one of its owners,
    /// checks the file and its schema, and starts the writer.
    pub fn open_with(path: impl AsRef<Path>, opts: SqliteOptions) -> Result<Self, JournalError> {
        let path = path.as_ref().to_path_buf();
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&dir).map_err(|e| JournalError::Unwritable {
            dir: dir.clone(),
            detail: e.to_string(),
        })?;
        let owners = Arc::new(Owners::register(&path, &dir)?);
        let created = !path.exists();
        let conn = schema::open_writer(&path, &opts)?;
        if created {
            // The new file's name must survive a power loss too.
            let _ = File::open(&dir).and_then(|d| d.sync_all());
        }
        register(&conn, &owners).map_err(|e| schema::sqlite_error(&path, &e, opts.busy_timeout))?;
        let writer = Writer::spawn(WriterSetup {
            conn,
            path: path.clone(),
            busy: opts.busy_timeout,
            owners: owners.clone(),
            audit_capacity: opts.audit_capacity,
            audit_linger: opts.audit_linger,
        })?;
        Ok(SqliteJournal {
            path,
            opts,
            writer,
            readers: Mutex::new(Vec::new()),
            owners,
        })
    }

    /// This journal's owner id (what its operations record as their owner).
    pub fn owner(&self) -> &str {
        self.owners.me()
    }

    /// Deletes audit records and finished or settled operations that started before a moment
    /// (never an operation whose outcome is unknown).
    pub async fn prune(&self, p: Prune) -> Result<PruneReport, JournalError> {
        match self.writer.durable(Write::Prune(p)).await? {
            Reply::Pruned(r) => Ok(r),
            Reply::Done | Reply::Claim(_) => Err(JournalError::Failed(
                "the journal writer answered a prune without a report".into(),
            )),
        }
    }

    /// Sets `running_in` of a started operation whose owner runs; whether that owner ended.
    fn owned(&self, mut o: Owned) -> (OperationRecord, Liveness) {
        let live = if o.record.state() == OperationState::Started {
            self.owners.liveness(o.owner.as_deref())
        } else {
            Liveness::Ended
        };
        if live == Liveness::Live {
            o.record.running_in = o.pid;
        }
        (o.record, live)
    }

    /// The journal file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How the writer has grouped records into commits so far.
    pub fn commit_stats(&self) -> CommitStats {
        self.writer.stats()
    }

    /// A reader over the same file (sees what has been committed).
    pub fn reader(&self) -> Result<JournalReader, JournalError> {
        JournalReader::open_with(&self.path, self.opts.clone())
    }

    /// Runs a read on a pooled read-only connection.
    fn read<T>(
        &self,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, JournalError> {
        let pooled = match self.readers.lock() {
            Ok(mut r) => r.pop(),
            Err(p) => p.into_inner().pop(),
        };
        let conn = match pooled {
            Some(c) => c,
            None => schema::open_reader(&self.path, &self.opts)?,
        };
        let out =
            f(&conn).map_err(|e| schema::sqlite_error(&self.path, &e, self.opts.busy_timeout));
        match self.readers.lock() {
            Ok(mut r) => r.push(conn),
            Err(p) => p.into_inner().push(conn),
        }
        out
    }

    async fn write(&self, w: Write, durable: bool) -> Result<Reply, JournalError> {
        if durable {
            self.writer.durable(w).await
        } else {
            self.writer.queue(w).map(|()| Reply::Done)
        }
    }
}

fn done(r: Result<Reply, JournalError>) -> Result<(), JournalError> {
    r.map(|_| ())
}

impl Journal for SqliteJournal {
    fn start<'a>(&'a self, op: &'a OperationStart) -> JournalFuture<'a, ()> {
        let durable = !op.effect.is_read_only();
        Box::pin(async move {
            done(
                self.write(Write::Start(Box::new(op.clone())), durable)
                    .await,
            )
        })
    }

    fn claim<'a>(&'a self, op: &'a OperationStart) -> JournalFuture<'a, Claim> {
        Box::pin(async move {
            if op.effect.is_read_only() {
                // Safe to repeat: look up what is committed, record without waiting.
                if let Some(earlier) = self.read(|c| {
                    rows::by_key(
                        c,
                        &op.tool,
                        &op.idempotency_key,
                        op.key_source,
                        op.claim_args(),
                        &op.key_scope(),
                    )
                })? && claimed_by(&earlier.record, op)
                {
                    let (record, live) = self.owned(earlier);
                    if record.state() == OperationState::Started && live == Liveness::Ended {
                        return Ok(Claim::Orphaned(Box::new(record)));
                    }
                    return Ok(Claim::Existing(Box::new(record)));
                }
                self.writer.queue(Write::Start(Box::new(op.clone())))?;
                return Ok(Claim::Started);
            }
            match self
                .writer
                .durable(Write::Claim(Box::new(op.clone())))
                .await?
            {
                Reply::Claim(c) => Ok(c),
                Reply::Done | Reply::Pruned(_) => Err(JournalError::Failed(
                    "the journal writer answered a claim without a claim".into(),
                )),
            }
        })
    }

    fn attempt<'a>(&'a self, attempt: &'a AttemptRecord) -> JournalFuture<'a, ()> {
        let r = self.writer.queue(Write::Attempt(attempt.clone()));
        Box::pin(async move { r })
    }

    fn finish<'a>(&'a self, finish: &'a OperationFinish) -> JournalFuture<'a, ()> {
        let side_effect = !finish.trace.effect.is_some_and(|e| e.is_read_only());
        Box::pin(async move {
            let w = Write::Finish(Box::new(finish.clone()));
            if side_effect {
                // Committed before the result is returned, so a process crash never turns a
                // finished call into an unknown one; the flush is the next start's (or the
                // exit's): a power loss before it leaves the call started, whose recovery never
                // runs it twice.
                done(self.writer.committed(w).await)
            } else {
                done(self.write(w, false).await)
            }
        })
    }

    fn settle<'a>(&'a self, settlement: &'a Settlement) -> JournalFuture<'a, ()> {
        Box::pin(async move { done(self.write(Write::Settle(settlement.clone()), true).await) })
    }

    fn by_idempotency_key<'a>(
        &'a self,
        tool: &'a str,
        key: &'a str,
    ) -> JournalFuture<'a, Option<OperationRecord>> {
        let r = self.read(|c| {
            let spec = rows::by_key(c, tool, key, super::KeySource::Spec, None, "")?;
            match spec {
                Some(o) => Ok(Some(o)),
                None => rows::by_key(c, tool, key, super::KeySource::Derived, None, ""),
            }
        });
        let r = r.map(|o| o.map(|o| self.owned(o).0));
        Box::pin(async move { r })
    }

    fn operation<'a>(
        &'a self,
        operation_id: &'a str,
    ) -> JournalFuture<'a, Option<OperationRecord>> {
        let r = self
            .read(|c| rows::by_id(c, operation_id))
            .map(|o| o.map(|o| self.owned(o).0));
        Box::pin(async move { r })
    }

    /// Only the operations whose process has ended: those a live process runs are not
    /// unfinished, they are running.
    fn unfinished<'a>(&'a self) -> JournalFuture<'a, Vec<OperationRecord>> {
        let r = self.read(rows::unfinished).map(|ops| {
            ops.into_iter()
                .map(|o| self.owned(o))
                .filter(|(_, live)| *live == Liveness::Ended)
                .map(|(r, _)| r)
                .collect()
        });
        Box::pin(async move { r })
    }

    fn uncertain<'a>(
        &'a self,
        tool: &'a str,
        arguments_hash: &'a str,
    ) -> JournalFuture<'a, Option<OperationRecord>> {
        let r = self
            .read(|c| rows::latest_uncertain(c, tool, arguments_hash))
            .map(|o| {
                o.map(|o| self.owned(o)).and_then(|(record, live)| {
                    let orphan =
                        record.state() == OperationState::Started && live == Liveness::Ended;
                    (!orphan).then_some(record)
                })
            });
        Box::pin(async move { r })
    }

    fn records_read_only(&self) -> bool {
        true
    }

    fn records_audit(&self) -> bool {
        true
    }

    fn audit(&self, entry: AuditEntry) {
        self.writer.audit(entry);
    }

    fn expect_starts(&self, n: usize) {
        self.writer.expect(n);
    }

    fn flush(&self) -> JournalFuture<'_, ()> {
        Box::pin(async move { done(self.writer.durable(Write::Flush).await) })
    }
}

/// Records this owner, and forgets owners that have ended (their lock files too).
fn register(conn: &Connection, owners: &Owners) -> rusqlite::Result<()> {
    owners.sweep();
    let known: Vec<String> = conn
        .prepare("SELECT owner_id FROM owners")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for o in known {
        if owners.liveness(Some(&o)) == Liveness::Ended {
            conn.execute("DELETE FROM owners WHERE owner_id = ?1", params![o])?;
        }
    }
    conn.execute(
        "INSERT INTO owners (owner_id, pid, started_at, toolgate) VALUES (?1, ?2, ?3, ?4)",
        params![
            owners.me(),
            std::process::id(),
            super::now(),
            env!("CARGO_PKG_VERSION")
        ],
    )?;
    Ok(())
}

/// A read-only view of a journal, without the writer's lock: for inspecting a journal while a
/// runtime uses it, or after the fact.
pub struct JournalReader {
    path: PathBuf,
    opts: SqliteOptions,
    conn: Connection,
}

impl std::fmt::Debug for JournalReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JournalReader")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl JournalReader {
    /// Opens an existing journal (never creates one).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, JournalError> {
        JournalReader::open_with(path, SqliteOptions::default())
    }

    /// Opens an existing journal with options.
    pub fn open_with(path: impl AsRef<Path>, opts: SqliteOptions) -> Result<Self, JournalError> {
        let path = path.as_ref().to_path_buf();
        let conn = schema::open_reader(&path, &opts)?;
        Ok(JournalReader { path, opts, conn })
    }

    fn run<T>(
        &self,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, JournalError> {
        f(&self.conn).map_err(|e| schema::sqlite_error(&self.path, &e, self.opts.busy_timeout))
    }

    /// A started operation with `running_in` set when its process runs.
    fn owned(&self, mut o: Owned) -> OperationRecord {
        if o.record.state() == OperationState::Started
            && owners::is_running(&self.path, o.owner.as_deref()) == Some(true)
        {
            o.record.running_in = o.pid;
        }
        o.record
    }

    /// One operation by id.
    pub fn operation(&self, operation_id: &str) -> Result<Option<OperationRecord>, JournalError> {
        Ok(self
            .run(|c| rows::by_id(c, operation_id))?
            .map(|o| self.owned(o)))
    }

    /// Every operation of a call id (one per run of it), oldest first.
    pub fn by_call(&self, call_id: &str) -> Result<Vec<OperationRecord>, JournalError> {
        Ok(self
            .run(|c| rows::by_call(c, call_id))?
            .into_iter()
            .map(|o| self.owned(o))
            .collect())
    }

    /// The audit records of a call id that has no operation of its own (refused, unknown,
    /// replayed, pure), oldest first.
    pub fn audit_of_call(&self, call_id: &str) -> Result<Vec<AuditRecord>, JournalError> {
        self.run(|c| listing::audit_of_call(c, call_id))
    }

    /// The most recent calls matching a filter, oldest first: every call in the audit (with
    /// its operation's current state when it ran), and the operations that have no audit
    /// record (cut off by a crash, or still running). With `Filter::operations`, the
    /// operations alone.
    pub fn list(&self, filter: &Filter) -> Result<Vec<CallSummary>, JournalError> {
        self.run(|c| listing::list(c, filter))
    }

    /// Every call in the audit — tool, arguments as recorded (cut at 16 KiB) and context —
    /// oldest first: what `toolgate diff --replay` decides under both contract versions.
    pub fn recorded_calls(&self) -> Result<Vec<listing::RecordedArguments>, JournalError> {
        self.run(listing::recorded_calls)
    }

    /// Counts and latency percentiles per tool, status and error type.
    pub fn stats(&self, filter: &Filter) -> Result<Vec<ToolStats>, JournalError> {
        self.run(|c| listing::stats(c, filter))
    }

    /// Operations started and neither finished nor settled (running, or cut off).
    pub fn unfinished(&self) -> Result<Vec<OperationRecord>, JournalError> {
        Ok(self
            .run(rows::unfinished)?
            .into_iter()
            .map(|o| self.owned(o))
            .collect())
    }
}
