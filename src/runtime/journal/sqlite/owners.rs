//! Who writes a journal, and whether they are still alive.
//!
//! Every open [`SqliteJournal`](super::SqliteJournal) is an *owner*: a row in `owners` (its
//! pid, for messages) and a lock file `<journal>.owners/<owner>.lock` it holds with an
//! exclusive `flock` for as long as it is open. Every operation it starts records its owner.
//! The kernel drops a `flock` when the process that holds it ends, however it ends — `kill -9`
//! included — so whether the owner of a started operation is alive has an exact answer on this
//! host, without heartbeats or clocks: its lock file is locked. Recovery settles only the
//! operations of owners whose lock is free, never those a live process is still running.
//!
//! A lock file appears under its final name only once it is locked (it is locked under a
//! temporary name, then renamed), so a free lock file, or a missing one, always means an owner
//! that has ended.
//!
//! Beside them, every owner holds `<journal>.lock` *shared*: a toolgate from before shared
//! journals took that file exclusively, so an old and a new toolgate never write one journal
//! together (each refuses while the other has it).
//!
//! The lock files must be on a local file system of the host the processes run on.

use std::collections::HashSet;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::runtime::journal::JournalError;

/// Whether an owner's process is running.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Liveness {
    /// Its lock is held: it is running (it may be this process).
    Live,
    /// Its lock is free or gone: it has ended.
    Ended,
    /// Its lock file cannot be checked (what the system said).
    Unknown(String),
}

/// The owners of one journal, as this process sees them.
#[derive(Debug)]
pub(crate) struct Owners {
    dir: PathBuf,
    me: String,
    /// Owners found ended (an ended owner never comes back).
    ended: Mutex<HashSet<String>>,
    /// This owner's lock, held while the journal is open.
    _mine: File,
    /// The shared lock on `<journal>.lock`.
    _shared: File,
}

/// The lock file beside a journal.
pub(crate) fn lock_path(journal: &Path) -> PathBuf {
    let mut p = journal.as_os_str().to_owned();
    p.push(".lock");
    PathBuf::from(p)
}

/// The folder of the owners' lock files.
fn owners_dir(journal: &Path) -> PathBuf {
    let mut p = journal.as_os_str().to_owned();
    p.push(".owners");
    PathBuf::from(p)
}

impl Owners {
    /// Becomes an owner of the journal at `path` (whose folder is `dir`): takes the shared
    /// lock, and a lock file of its own.
    pub(crate) fn register(path: &Path, dir: &Path) -> Result<Owners, JournalError> {
        let unwritable = |e: std::io::Error| JournalError::Unwritable {
            dir: dir.to_path_buf(),
            detail: e.to_string(),
        };
        let mut shared = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(lock_path(path))
            .map_err(unwritable)?;
        match shared.try_lock_shared() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = shared.read_to_string(&mut holder);
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
        let owners = owners_dir(path);
        std::fs::create_dir_all(&owners).map_err(unwritable)?;
        let me = format!("own-{}", uuid::Uuid::now_v7().simple());
        let tmp = owners.join(format!(".{me}.tmp"));
        let mut mine = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(unwritable)?;
        mine.lock().map_err(unwritable)?;
        mine.write_all(std::process::id().to_string().as_bytes())
            .map_err(unwritable)?;
        std::fs::rename(&tmp, owners.join(format!("{me}.lock"))).map_err(unwritable)?;
        Ok(Owners {
            dir: owners,
            me,
            ended: Mutex::new(HashSet::new()),
            _mine: mine,
            _shared: shared,
        })
    }

    /// This owner's id.
    pub(crate) fn me(&self) -> &str {
        &self.me
    }

    fn file(&self, owner: &str) -> PathBuf {
        self.dir.join(format!("{owner}.lock"))
    }

    /// Whether an owner (as recorded with an operation; `None` for operations from before
    /// shared journals, whose writer held the journal alone) is running.
    pub(crate) fn liveness(&self, owner: Option<&str>) -> Liveness {
        let Some(owner) = owner else {
            // Written by a toolgate that held the journal exclusively: it is not running, or
            // this process could not have opened the journal.
            return Liveness::Ended;
        };
        if owner == self.me {
            return Liveness::Live;
        }
        if self.is_known_ended(owner) {
            return Liveness::Ended;
        }
        let state = match File::open(self.file(owner)) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Liveness::Ended,
            Err(e) => Liveness::Unknown(e.to_string()),
            Ok(f) => match f.try_lock_shared() {
                Ok(()) => Liveness::Ended,
                Err(TryLockError::WouldBlock) => Liveness::Live,
                Err(TryLockError::Error(e)) => Liveness::Unknown(e.to_string()),
            },
        };
        if state == Liveness::Ended {
            self.note_ended(owner);
        }
        state
    }

    fn is_known_ended(&self, owner: &str) -> bool {
        match self.ended.lock() {
            Ok(s) => s.contains(owner),
            Err(p) => p.into_inner().contains(owner),
        }
    }

    fn note_ended(&self, owner: &str) {
        match self.ended.lock() {
            Ok(mut s) => s.insert(owner.to_owned()),
            Err(p) => p.into_inner().insert(owner.to_owned()),
        };
    }

    /// Removes the lock files of owners that have ended (and temporary files a crash left
    /// behind, once they are older than [`TMP_GRACE`]); returns their ids.
    pub(crate) fn sweep(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut ended = Vec::new();
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let owner = if let Some(tmp) = name.strip_prefix('.') {
                tmp.strip_suffix(".tmp").map(|_| None)
            } else {
                name.strip_suffix(".lock").map(|o| Some(o.to_owned()))
            };
            let Some(owner) = owner else { continue };
            if owner.as_deref() == Some(self.me.as_str()) {
                continue;
            }
            // A temporary file may belong to an owner that is registering right now (created,
            // not yet locked): only one left long ago is a crash's.
            let young = || {
                e.metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_none_or(|age| age < TMP_GRACE)
            };
            if owner.is_none() && young() {
                continue;
            }
            let free = File::open(e.path()).is_ok_and(|f| f.try_lock().is_ok());
            if free {
                let _ = std::fs::remove_file(e.path());
                if let Some(o) = owner {
                    self.note_ended(&o);
                    ended.push(o);
                }
            }
        }
        ended
    }
}

impl Drop for Owners {
    /// Removes this owner's lock file before the lock is released: a missing file means an
    /// ended owner, as a free one does.
    fn drop(&mut self) {
        let _ = std::fs::remove_file(self.file(&self.me));
    }
}

/// How old a temporary lock file must be before a sweep removes it.
const TMP_GRACE: std::time::Duration = std::time::Duration::from_secs(60);

/// The path of an owner's lock file, for a reader that is not an owner.
pub(crate) fn owner_file(journal: &Path, owner: &str) -> PathBuf {
    owners_dir(journal).join(format!("{owner}.lock"))
}

/// Whether an owner is running, for a reader that is not an owner (`None`: cannot tell).
pub(crate) fn is_running(journal: &Path, owner: Option<&str>) -> Option<bool> {
    let owner = owner?;
    match File::open(owner_file(journal, owner)) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(false),
        Err(_) => None,
        Ok(f) => match f.try_lock_shared() {
            Ok(()) => Some(false),
            Err(TryLockError::WouldBlock) => Some(true),
            Err(TryLockError::Error(_)) => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owner_is_live_while_its_journal_is_open_and_ended_after() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.db");
        let a = Owners::register(&path, dir.path()).unwrap();
        let b = Owners::register(&path, dir.path()).unwrap();
        assert_eq!(a.liveness(Some(b.me())), Liveness::Live);
        assert_eq!(b.liveness(Some(a.me())), Liveness::Live);
        assert_eq!(a.liveness(Some(a.me())), Liveness::Live);
        assert_eq!(is_running(&path, Some(b.me())), Some(true));
        let gone = b.me().to_owned();
        drop(b);
        assert_eq!(a.liveness(Some(&gone)), Liveness::Ended);
        assert_eq!(a.liveness(Some("own-never")), Liveness::Ended);
        assert_eq!(a.liveness(None), Liveness::Ended);
        assert_eq!(is_running(&path, Some(&gone)), Some(false));
        assert!(!owner_file(&path, &gone).exists(), "removed when it closed");
        // A lock file a crashed owner left behind is swept.
        let crashed = owner_file(&path, "own-crashed");
        std::fs::write(&crashed, "1").unwrap();
        assert_eq!(a.sweep(), vec!["own-crashed".to_owned()]);
        assert!(!crashed.exists());
        assert!(owner_file(&path, a.me()).exists());
        assert_eq!(
            std::fs::read_to_string(owner_file(&path, a.me())).unwrap(),
            std::process::id().to_string()
        );
    }

    #[test]
    fn an_exclusive_holder_of_the_old_lock_keeps_owners_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("journal.db");
        let mut old = File::create(lock_path(&path)).unwrap();
        old.lock().unwrap();
        old.write_all(b"4242").unwrap();
        let e = Owners::register(&path, dir.path()).unwrap_err();
        assert!(
            matches!(&e, JournalError::InUse { holder, .. } if holder == " (pid 4242)"),
            "{e}"
        );
    }
}
