//! The project's lock file (`<state_dir>/resources.lock`): the resource locks every toolgate
//! process on one project shares, so that two MCP clients' `serve` processes, or a `call` while
//! `serve` runs, exclude each other as the calls of one runtime do.
//!
//! On 64-bit Linux a call's claim becomes byte-range locks in this one file, taken with open
//! file description locks (`F_OFD_SETLK`, fcntl(2)):
//!
//! - each lock belongs to the call's own open file description, not to the process, so two
//!   calls of one process that read one file hold two shared locks, and one releasing its lock
//!   does not release the other's (classic POSIX locks would merge them);
//! - the kernel releases them when the description closes — also when the process dies, so a
//!   crashed process leaves no stale lock;
//! - a range lock conflicts with every lock that overlaps it, so the file's offsets encode the
//!   resource keys such that keys that overlap get ranges that overlap: a path key is a point
//!   of 7 levels of 8 bits (a hash of each path component), `tree:`/`dir:` keys the range of
//!   every point beneath them; other keys a point of their own region; a concurrency group of
//!   `max: N` is N one-byte slots of which a call takes any one; and every call that changes
//!   something takes one byte shared, or exclusive when it runs alone. Distinct keys can share
//!   a lock (sibling names whose hashes agree, paths deeper than 7 levels), which orders calls
//!   that need not be — never the other way round.
//!
//! A call takes its locks all or nothing: it tries every lock without waiting; at the first one
//! held elsewhere it releases all it took and blocks — holding nothing — on that one lock, keeps
//! it once granted, and tries the rest again. Since nobody blocks while holding a lock, no
//! cycle of waiting processes (and no deadlock) can form. Fairness across processes is the
//! kernel's: a blocked waiter is woken when the lock is released, but a process whose next call
//! tries at that moment can take it first.
//!
//! Elsewhere (other systems, 32-bit Linux) one whole-file `flock` stands for every resource:
//! shared for read-only calls outside any group, exclusive otherwise — correct, but coarser.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::admission::{ResourceClaim, WaitedBehind};

/// The lock file's name in the state folder.
pub const LOCK_FILE: &str = "resources.lock";

/// How many released descriptions are kept open for later calls (opening one costs a syscall
/// pair per call).
const SPARE_MAX: usize = 16;

/// The project's lock file, opened.
#[derive(Debug)]
pub struct ProjectLocks {
    path: PathBuf,
    /// Open descriptions that hold no lock, for the next calls.
    spare: Arc<Mutex<Vec<File>>>,
    /// Which slot of a full concurrency group the next waiter blocks on.
    turn: AtomicU64,
}

/// One lock a call needs: `slots` one-byte ranges from `start` of which any one will do (a
/// group), or the range `start..start+len` (`slots` is 1).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Want {
    start: i64,
    len: i64,
    slots: i64,
    exclusive: bool,
    /// What it stands for, for the trace.
    what: String,
}

/// The lock a call found held elsewhere.
#[derive(Clone, Copy, Debug)]
struct Blocked {
    index: usize,
    start: i64,
    len: i64,
    exclusive: bool,
}

/// The locks a call took, and what it found held on the way.
#[derive(Debug)]
pub(crate) struct Acquired {
    /// The locks (none when the claim needs none).
    pub(crate) held: Option<HeldLocks>,
    /// The locks it waited for.
    pub(crate) waited: Vec<WaitedBehind>,
}

/// Why a call did not get its locks.
#[derive(Debug)]
pub(crate) enum NotAcquired {
    /// Cancelled while waiting, with what it waited for.
    Cancelled(Vec<WaitedBehind>),
    /// The lock file failed.
    Io(io::Error),
}

/// A call's locks; released when dropped.
#[derive(Debug)]
pub(crate) struct HeldLocks {
    file: Option<File>,
    spare: Arc<Mutex<Vec<File>>>,
}

impl Drop for HeldLocks {
    fn drop(&mut self) {
        if let Some(f) = self.file.take() {
            put_back(&self.spare, f);
        }
    }
}

impl ProjectLocks {
    /// Opens (creating it and its folder if needed) the lock file at `path`, and checks that
    /// its file system takes the locks.
    pub fn open(path: impl Into<PathBuf>) -> io::Result<ProjectLocks> {
        let path = path.into();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let file = open_file(&path)?;
        lock::probe(&file)?;
        Ok(ProjectLocks {
            path,
            spare: Arc::new(Mutex::new(vec![file])),
            turn: AtomicU64::new(0),
        })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Takes the locks of a claim, all or nothing, waiting while another holder has one;
    /// `cancel` ends the wait.
    pub(crate) async fn acquire(
        &self,
        claim: &ResourceClaim,
        cancel: &CancellationToken,
    ) -> Result<Acquired, NotAcquired> {
        let wants = lock::wants(claim);
        if wants.is_empty() {
            return Ok(Acquired {
                held: None,
                waited: Vec::new(),
            });
        }
        let mut file = self.take().map_err(NotAcquired::Io)?;
        // The group slot a blocking wait already took (trying the others again would take two).
        let mut kept: Option<usize> = None;
        let mut waited: Vec<WaitedBehind> = Vec::new();
        loop {
            let turn = self.turn.fetch_add(1, Ordering::Relaxed);
            let blocked = match try_all(&file, &wants, kept, turn) {
                Ok(None) => {
                    return Ok(Acquired {
                        held: Some(HeldLocks {
                            file: Some(file),
                            spare: self.spare.clone(),
                        }),
                        waited,
                    });
                }
                Ok(Some(b)) => b,
                Err(e) => return Err(NotAcquired::Io(e)),
            };
            let what = &wants[blocked.index].what;
            if !waited.iter().any(|w| &w.resource == what) {
                waited.push(WaitedBehind::lock(what.clone()));
            }
            put_back(&self.spare, file);
            file = match self.wait_for(blocked, cancel).await {
                Ok(f) => f,
                Err(NotAcquired::Cancelled(_)) => return Err(NotAcquired::Cancelled(waited)),
                Err(e) => return Err(e),
            };
            kept = (wants[blocked.index].slots > 1).then_some(blocked.index);
        }
    }

    /// A description that holds no lock.
    fn take(&self) -> io::Result<File> {
        let spare = self.spare.lock().unwrap_or_else(|p| p.into_inner()).pop();
        match spare {
            Some(f) => Ok(f),
            None => open_file(&self.path),
        }
    }

    /// Blocks, on a thread of its own and holding nothing else, until the lock is granted; the
    /// new description that holds it is returned. A cancelled wait leaves the thread blocked
    /// until the lock is free; it then closes the description, which releases the lock at once.
    async fn wait_for(&self, b: Blocked, cancel: &CancellationToken) -> Result<File, NotAcquired> {
        let (tx, rx) = oneshot::channel();
        let path = self.path.clone();
        std::thread::Builder::new()
            .name("toolgate-lock-wait".into())
            .spawn(move || {
                let r = open_file(&path).and_then(|f| {
                    lock::set(&f, b.start, b.len, b.exclusive, true)?;
                    Ok(f)
                });
                // A cancelled waiter dropped the receiver: the file closes here.
                let _ = tx.send(r);
            })
            .map_err(NotAcquired::Io)?;
        tokio::select! {
            r = rx => match r {
                Ok(Ok(f)) => Ok(f),
                Ok(Err(e)) => Err(NotAcquired::Io(e)),
                Err(_) => Err(NotAcquired::Io(io::Error::other(
                    "the thread waiting for a lock ended without an answer",
                ))),
            },
            () = cancel.cancelled() => Err(NotAcquired::Cancelled(Vec::new())),
        }
    }
}

fn open_file(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
}

/// Releases every lock of a description and keeps it for a later call (or closes it, which
/// releases them too).
fn put_back(spare: &Mutex<Vec<File>>, file: File) {
    if lock::release_all(&file).is_err() {
        return;
    }
    let mut s = spare.lock().unwrap_or_else(|p| p.into_inner());
    if s.len() < SPARE_MAX {
        s.push(file);
    }
}

/// Tries every lock without waiting (`kept`: one already held); the first held elsewhere.
fn try_all(
    file: &File,
    wants: &[Want],
    kept: Option<usize>,
    turn: u64,
) -> io::Result<Option<Blocked>> {
    for (index, w) in wants.iter().enumerate() {
        if kept == Some(index) {
            continue;
        }
        let mut got = false;
        for slot in 0..w.slots {
            if lock::set(file, w.start + slot, w.len, w.exclusive, false)? {
                got = true;
                break;
            }
        }
        if !got {
            let slot = i64::try_from(turn % u64::try_from(w.slots).unwrap_or(1)).unwrap_or(0);
            return Ok(Some(Blocked {
                index,
                start: w.start + slot,
                len: w.len,
                exclusive: w.exclusive,
            }));
        }
    }
    Ok(None)
}

/// Byte-range open file description locks.
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
mod lock {
    use std::fs::File;
    use std::io;

    use nix::errno::Errno;
    use nix::fcntl::{FcntlArg, fcntl};
    use nix::libc;

    use super::Want;
    use crate::ir::Effect;
    use crate::runtime::scheduler::admission::ResourceClaim;

    /// Every call that changes something: shared, or exclusive when it runs alone.
    const WORLD: i64 = 0;
    /// `file:`, `dir:` and `tree:` keys.
    const PATHS: i64 = 1 << 60;
    /// Other keys.
    const KEYS: i64 = 2 << 60;
    /// Concurrency groups.
    const GROUPS: i64 = 3 << 60;
    /// The size of a region.
    const REGION: i64 = 1 << 60;
    /// Path components encoded, 8 bits each (56 bits); deeper paths share the lock of their
    /// ancestor at this depth.
    const LEVELS: usize = 7;
    /// Slots per group (a larger `max` is capped: more calls than this across processes).
    const GROUP_SLOTS: i64 = 1 << 16;

    /// The locks of a claim: shared ones first, so that an exclusive lock on a range inside a
    /// shared one of the same call stays exclusive (a description's own locks replace each
    /// other); the group's slot last.
    pub(super) fn wants(claim: &ResourceClaim) -> Vec<Want> {
        let mut shared = Vec::new();
        let mut exclusive = Vec::new();
        if claim.effect != Effect::Pure {
            if claim.exclusive.is_some() {
                exclusive.push(range(
                    (WORLD, 1),
                    true,
                    "everything: this call runs alone".into(),
                ));
            } else {
                shared.push(range(
                    (WORLD, 1),
                    false,
                    "everything: a call that runs alone".into(),
                ));
                if !claim.declares_resources {
                    let what = "any resource: this call reads without declared resources";
                    shared.push(range((PATHS, REGION), false, what.into()));
                    shared.push(range((KEYS, REGION), false, what.into()));
                }
                let fp = &claim.footprint;
                for k in fp.reads.iter().filter(|k| !fp.writes.contains(*k)) {
                    shared.push(range(key_range(k), false, k.clone()));
                }
                for k in &fp.writes {
                    exclusive.push(range(key_range(k), true, k.clone()));
                }
            }
        }
        shared.extend(exclusive);
        if let Some(g) = &claim.group {
            let base = GROUPS + ((hash(&g.name) & ((1 << 44) - 1)) << 16);
            shared.push(Want {
                start: base,
                len: 1,
                slots: i64::from(g.max.max(1)).min(GROUP_SLOTS),
                exclusive: true,
                what: format!("concurrency group {} (max {})", g.name, g.max.max(1)),
            });
        }
        shared
    }

    fn range((start, len): (i64, i64), exclusive: bool, what: String) -> Want {
        Want {
            start,
            len,
            slots: 1,
            exclusive,
            what,
        }
    }

    fn hash(s: &str) -> i64 {
        let h = blake3::hash(s.as_bytes());
        let mut b = [0u8; 8];
        b.copy_from_slice(&h.as_bytes()[..8]);
        i64::from_le_bytes(b) & (REGION - 1)
    }

    /// The range of a resource key: paths by component, other keys by hash.
    pub(super) fn key_range(key: &str) -> (i64, i64) {
        match key.split_once(':') {
            Some((kind @ ("file" | "dir" | "tree"), path)) => path_range(path, kind != "file"),
            _ => (KEYS + hash(key), 1),
        }
    }

    /// A path's point, or (`subtree`) the range of every point beneath it, itself included.
    fn path_range(path: &str, subtree: bool) -> (i64, i64) {
        let parts: Vec<&str> = path
            .split('/')
            .filter(|p| !p.is_empty() && *p != ".")
            .collect();
        let mut code = 0i64;
        for (level, part) in parts.iter().take(LEVELS).enumerate() {
            // 1..=255: 0 is "no component at this level", so a folder's point differs from
            // the points of what is in it.
            let byte = 1 + i64::from(blake3::hash(part.as_bytes()).as_bytes()[0] % 255);
            code |= byte << (8 * (LEVELS - 1 - level));
        }
        let depth = parts.len().min(LEVELS);
        let len = if subtree {
            1i64 << (8 * (LEVELS - depth))
        } else {
            1
        };
        (PATHS + code, len)
    }

    /// Locks (or, not `wait`ing, tries to lock) a range; `Ok(false)` when it is held
    /// elsewhere.
    pub(super) fn set(
        file: &File,
        start: i64,
        len: i64,
        exclusive: bool,
        wait: bool,
    ) -> io::Result<bool> {
        let kind = if exclusive {
            libc::F_WRLCK
        } else {
            libc::F_RDLCK
        };
        apply(file, start, len, kind, wait)
    }

    fn apply(file: &File, start: i64, len: i64, kind: i32, wait: bool) -> io::Result<bool> {
        let fl = libc::flock {
            l_type: kind as libc::c_short,
            l_whence: libc::SEEK_SET as libc::c_short,
            l_start: start,
            l_len: len,
            l_pid: 0,
        };
        loop {
            let arg = if wait {
                FcntlArg::F_OFD_SETLKW(&fl)
            } else {
                FcntlArg::F_OFD_SETLK(&fl)
            };
            match fcntl(file, arg) {
                Ok(_) => return Ok(true),
                Err(Errno::EINTR) => continue,
                Err(Errno::EAGAIN | Errno::EACCES) if !wait => return Ok(false),
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Releases every lock the description holds.
    pub(super) fn release_all(file: &File) -> io::Result<()> {
        apply(file, 0, 0, libc::F_UNLCK, false).map(|_| ())
    }

    /// Whether the file system takes the locks.
    pub(super) fn probe(file: &File) -> io::Result<()> {
        set(file, WORLD, 1, false, false)?;
        release_all(file)
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use crate::runtime::scheduler::overlaps;

        fn intersects(a: (i64, i64), b: (i64, i64)) -> bool {
            a.0 < b.0 + b.1 && b.0 < a.0 + a.1
        }

        #[test]
        fn overlapping_keys_get_overlapping_ranges() {
            let keys = [
                "file:a",
                "file:b",
                "file:src/a.py",
                "file:src/b.py",
                "file:srcx/a.py",
                "tree:src",
                "dir:src",
                "tree:.",
                "tree:src/lib",
                "file:src/lib/x/y/z/w/v/u/t.rs",
                "file:src/lib/x/y/z/w/v/u/s.rs",
                "tree:src/lib/x/y/z/w/v/u/q",
                "git:index",
                "svc:notes",
                "file:./src/a.py",
            ];
            for a in keys {
                for b in keys {
                    if overlaps(a, b) {
                        assert!(
                            intersects(key_range(a), key_range(b)),
                            "{a} and {b} overlap, their locks must too"
                        );
                    }
                }
            }
            // Keys that do not overlap get separate locks here (no hash collision among them).
            for (a, b) in [
                ("file:a", "file:b"),
                ("file:src/a.py", "file:src/b.py"),
                ("file:srcx/a.py", "tree:src"),
                ("git:index", "svc:notes"),
                ("git:index", "tree:."),
                ("tree:src/lib", "file:src/a.py"),
            ] {
                assert!(!intersects(key_range(a), key_range(b)), "{a} / {b}");
            }
        }

        #[test]
        fn ranges_stay_inside_their_region() {
            for k in ["tree:.", "file:a/b/c/d/e/f/g/h/i", "x", "svc:y"] {
                let (start, len) = key_range(k);
                assert!(start >= PATHS && start + len <= GROUPS, "{k}");
            }
        }
    }
}

/// One whole-file lock for everything (systems without open file description range locks).
#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
mod lock {
    use std::fs::{File, TryLockError};
    use std::io;

    use super::Want;
    use crate::ir::Effect;
    use crate::runtime::scheduler::admission::ResourceClaim;

    pub(super) fn wants(claim: &ResourceClaim) -> Vec<Want> {
        let shared =
            claim.effect.is_read_only() && claim.exclusive.is_none() && claim.group.is_none();
        if claim.effect == Effect::Pure && claim.group.is_none() {
            return Vec::new();
        }
        vec![Want {
            start: 0,
            len: 0,
            slots: 1,
            exclusive: !shared,
            what: "the project's lock file (one lock for every resource on this system)".into(),
        }]
    }

    pub(super) fn set(
        file: &File,
        _start: i64,
        _len: i64,
        exclusive: bool,
        wait: bool,
    ) -> io::Result<bool> {
        let r = match (exclusive, wait) {
            (true, true) => return file.lock().map(|()| true),
            (false, true) => return file.lock_shared().map(|()| true),
            (true, false) => file.try_lock(),
            (false, false) => file.try_lock_shared(),
        };
        match r {
            Ok(()) => Ok(true),
            Err(TryLockError::WouldBlock) => Ok(false),
            Err(TryLockError::Error(e)) => Err(e),
        }
    }

    pub(super) fn release_all(file: &File) -> io::Result<()> {
        file.unlock()
    }

    pub(super) fn probe(file: &File) -> io::Result<()> {
        set(file, 0, 0, false, false)?;
        release_all(file)
    }
}

#[cfg(test)]
mod tests;
