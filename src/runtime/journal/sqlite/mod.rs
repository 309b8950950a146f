//! [`SqliteJournal`]: the durable journal, one SQLite file in the project's state folder
//! (`<state_dir>/journal.db`, [`JOURNAL_FILE`]).
//!
//! - WAL, `synchronous=FULL` (a commit is on the disk when it returns), `busy_timeout`,
//!   `foreign_keys`; `PRAGMA quick_check` and the schema version are checked at open.
//! - One runtime writes a journal at a time: opening takes an exclusive lock on
//!   `journal.db.lock` (and says which process holds it when it cannot). That is also what
//!   makes recovery safe — no operation marked started belongs to a live process.
//! - One writer thread with group commit ([`writer`]); reads go to separate read-only
//!   connections, which WAL lets run while the writer commits.
//! - Side-effecting operations wait for their start and finish to be committed; the records of
//!   calls that change nothing, and attempt records, are queued without waiting.
//!
//! [`JournalReader`] opens a journal read-only without the lock, for inspection
//! (`toolgate journal list|show|stats`) while a runtime is running.

mod rows;
mod schema;
mod writer;

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::Connection;

pub use rows::{Filter, OperationSummary, ToolStats};
pub use writer::CommitStats;

use super::{
    AttemptRecord, Claim, Journal, JournalError, JournalFuture, OperationFinish, OperationRecord,
    OperationStart, Settlement, claimed_by,
};
use writer::{Reply, Write, Writer};

/// The journal's file name in the state folder.
pub const JOURNAL_FILE: &str = "journal.db";

/// The schema version this build reads and writes.
pub const SCHEMA_VERSION: i64 = schema::SCHEMA_VERSION;

/// How long a statement waits for a lock held by another process before failing.
pub const DEFAULT_BUSY_TIMEOUT_MS: u64 = 5_000;

/// How a journal is opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqliteOptions {
    /// How long to wait for a database lock held elsewhere.
    pub busy_timeout: Duration,
    /// Whether to run `PRAGMA quick_check` at open (reads the whole file once).
    pub integrity_check: bool,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            busy_timeout: Duration::from_millis(DEFAULT_BUSY_TIMEOUT_MS),
            integrity_check: true,
        }
    }
}

/// The durable journal.
pub struct SqliteJournal {
    path: PathBuf,
    opts: SqliteOptions,
    writer: Writer,
    readers: Mutex<Vec<Connection>>,
    _lock: File,
}

impl std::fmt::Debug for SqliteJournal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteJournal")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// The lock file beside a journal.
fn lock_path(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".lock");
    PathBuf::from(p)
}

/// Takes the exclusive lock of a journal, writing this process's id into the lock file.
fn lock(path: &Path, dir: &Path) -> Result<File, JournalError> {
    let unwritable = |e: std::io::Error| JournalError::Unwritable {
        dir: dir.to_path_buf(),
        detail: e.to_string(),
    };
    let lp = lock_path(path);
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lp)
        .map_err(unwritable)?;
    match f.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = f.read_to_string(&mut holder);
            let holder = holder.trim();
            return Err(JournalError::InUse {
                path: path.to_path_buf(),
                holder: if holder.is_empty() {
                    String::new()
                } else {
                    format!(" (pid {holder})")
                },
            });
        }
        Err(TryLockError::Error(e)) => return Err(unwritable(e)),
    }
    f.set_len(0).map_err(unwritable)?;
    f.write_all(std::process::id().to_string().as_bytes())
        .map_err(unwritable)?;
    Ok(f)
}

impl SqliteJournal {
    /// Opens (or creates) the journal at `path` with the default options.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, JournalError> {
        SqliteJournal::open_with(path, SqliteOptions::default())
    }

    /// Opens (or creates) the journal at `path`: creates the folder, takes the lock, checks the
    /// file and its schema, and starts the writer.
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
        let lock = lock(&path, &dir)?;
        let created = !path.exists();
        let conn = schema::open_writer(&path, &opts)?;
        if created {
            // The new file's name must survive a power loss too.
            let _ = File::open(&dir).and_then(|d| d.sync_all());
        }
        let writer = Writer::spawn(conn, path.clone(), opts.busy_timeout)?;
        Ok(SqliteJournal {
            path,
            opts,
            writer,
            readers: Mutex::new(Vec::new()),
            _lock: lock,
        })
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
                if let Some(earlier) =
                    self.read(|c| rows::by_key(c, &op.tool, &op.idempotency_key, op.claim_args()))?
                    && claimed_by(&earlier, op)
                {
                    return Ok(Claim::Existing(Box::new(earlier)));
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
                Reply::Done => Err(JournalError::Failed(
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
        let durable = !finish.trace.effect.is_some_and(|e| e.is_read_only());
        Box::pin(async move {
            done(
                self.write(Write::Finish(Box::new(finish.clone())), durable)
                    .await,
            )
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
        let r = self.read(|c| rows::by_key(c, tool, key, None));
        Box::pin(async move { r })
    }

    fn operation<'a>(
        &'a self,
        operation_id: &'a str,
    ) -> JournalFuture<'a, Option<OperationRecord>> {
        let r = self.read(|c| rows::by_id(c, operation_id));
        Box::pin(async move { r })
    }

    fn unfinished<'a>(&'a self) -> JournalFuture<'a, Vec<OperationRecord>> {
        let r = self.read(rows::unfinished);
        Box::pin(async move { r })
    }

    fn records_read_only(&self) -> bool {
        true
    }
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

    /// One operation by id.
    pub fn operation(&self, operation_id: &str) -> Result<Option<OperationRecord>, JournalError> {
        self.run(|c| rows::by_id(c, operation_id))
    }

    /// Every operation of a call id (one per run of it), oldest first.
    pub fn by_call(&self, call_id: &str) -> Result<Vec<OperationRecord>, JournalError> {
        self.run(|c| rows::by_call(c, call_id))
    }

    /// The most recent operations matching a filter, oldest first.
    pub fn list(&self, filter: &Filter) -> Result<Vec<OperationSummary>, JournalError> {
        self.run(|c| rows::list(c, filter))
    }

    /// Counts and latency percentiles per tool and status.
    pub fn stats(&self, filter: &Filter) -> Result<Vec<ToolStats>, JournalError> {
        self.run(|c| rows::stats(c, filter))
    }

    /// Operations started and neither finished nor settled.
    pub fn unfinished(&self) -> Result<Vec<OperationRecord>, JournalError> {
        self.run(rows::unfinished)
    }
}
