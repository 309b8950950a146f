//! [`JournalError`]: why a journal cannot do what was asked, said so that a person knows what
//! to do about it.

use std::path::PathBuf;

/// The journal cannot do what was asked: an engine failure (the tool does not run).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JournalError {
    /// The state folder or the journal file cannot be created or written.
    #[error("the journal cannot be written in {}: {detail}", .dir.display())]
    Unwritable {
        /// The state folder.
        dir: PathBuf,
        /// What the system said.
        detail: String,
    },
    /// The file is damaged or not a toolgate journal; it was left as it is.
    #[error("{} is damaged or not a toolgate journal ({detail}); it was left untouched: restore it from a backup, or move it aside to start a new journal", .path.display())]
    Corrupt {
        /// The journal file.
        path: PathBuf,
        /// What was found.
        detail: String,
    },
    /// A process that does not share journals (a toolgate from before shared journals) holds
    /// the journal exclusively.
    #[error("{} is held exclusively by another process{holder}, a toolgate that does not share its journal: stop it or upgrade it, or give this one another state folder", .path.display())]
    InUse {
        /// The journal file.
        path: PathBuf,
        /// ` (pid N)` when known.
        holder: String,
    },
    /// Another process holds a lock on the database longer than the busy timeout.
    #[error("{} is locked by another process and stayed locked for {waited_ms} ms ({detail})", .path.display())]
    Locked {
        /// The journal file.
        path: PathBuf,
        /// How long toolgate waited.
        waited_ms: u64,
        /// What SQLite said.
        detail: String,
    },
    /// Written by a newer toolgate.
    #[error("{} has journal schema version {found}, newer than this toolgate reads (up to {supported}); upgrade toolgate to use it", .path.display())]
    FutureSchema {
        /// The journal file.
        path: PathBuf,
        /// The version found.
        found: i64,
        /// The newest this build knows.
        supported: i64,
    },
    /// There is no journal to read.
    #[error("there is no journal at {} (no call has been journaled there)", .path.display())]
    Missing {
        /// Where it was looked for.
        path: PathBuf,
    },
    /// The PostgreSQL server cannot be reached, or refused the connection.
    #[error(
        "cannot use the PostgreSQL journal at {server}: {detail}; check that the server runs and accepts this user, and the journal URL (`journal:` in toolgate.yaml, TOOLGATE_JOURNAL or --journal)"
    )]
    Unreachable {
        /// `host:port/database` as user (never the password).
        server: String,
        /// What the driver said.
        detail: String,
    },
    /// The journal URL does not parse.
    #[error(
        "the journal URL is not a PostgreSQL URL: {detail}; write it as postgres://USER@HOST:PORT/DATABASE (the password in TOOLGATE_JOURNAL or PGPASSWORD-style settings rather than in toolgate.yaml)"
    )]
    BadUrl {
        /// What is wrong (never the URL itself, which may hold a password).
        detail: String,
    },
    /// The database holds tables of a journal's names that are not a toolgate journal's.
    #[error(
        "the database {server} is not a toolgate journal ({detail}); it was left untouched: give toolgate a database of its own"
    )]
    Foreign {
        /// `host:port/database`.
        server: String,
        /// What was found.
        detail: String,
    },
    /// A PostgreSQL journal written by a newer toolgate.
    #[error(
        "the PostgreSQL journal {server} has journal schema version {found}, newer than this toolgate reads (up to {supported}); upgrade toolgate to use it"
    )]
    FutureServerSchema {
        /// `host:port/database`.
        server: String,
        /// The version found.
        found: i64,
        /// The newest this build knows.
        supported: i64,
    },
    /// This process's lease on a shared journal expired (it could not renew it in time), so
    /// other hosts may already have settled its operations: it starts no more.
    #[error(
        "this toolgate's lease on the PostgreSQL journal {server} expired ({detail}); other hosts may have settled its operations, so it starts no new ones: restart it"
    )]
    LeaseExpired {
        /// `host:port/database`.
        server: String,
        /// When or why.
        detail: String,
    },
    /// A record that contradicts the journal (finished twice, unknown operation, …).
    #[error("journal: {0}")]
    Invalid(String),
    /// Reading or writing failed.
    #[error("journal: {0}")]
    Failed(String),
}
