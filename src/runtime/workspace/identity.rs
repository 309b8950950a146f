//! [`IdentityIndex`]: the device and inode numbers of the protected files that have more than
//! one name, so that a hard link to `.env` under an innocent name is recognized when it is
//! opened.
//!
//! A path check cannot see hard links: `notes.txt` and `.env` may be two names of one file.
//! The open is what knows — its `fstat` gives the file's identity and its link count. Only a
//! file with several links can be another name of a protected file, and the protected file
//! then has several links too; so the index holds only protected files with `st_nlink > 1`,
//! and is consulted only for opened files with `st_nlink > 1`. It is built on first need by a
//! walk of the whole workspace that ignores `.gitignore` and friends and follows no link.
//!
//! Staleness is settled by the inode's change time: making a link, renaming a name of it, or
//! changing its link count sets `ctime`. A multiply-linked file whose `ctime` is older than the
//! walk cannot have become another name of a protected file since (its link set is what the
//! walk saw), so its lookup is final; a newer one makes the index walk again first. Files inside
//! `.git` folders count as protected here (their `objects` folders, content-addressed copies of
//! what the work tree already shows, are not walked). A workspace too large to walk completely
//! leaves the index partial, and a multiply-linked file that it cannot clear is refused.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use crate::ir::ProtectedPath;

/// Entries the walk visits before it gives up (the index is then partial).
const MAX_WALK_ENTRIES: usize = 1_000_000;
/// How much older than the walk a file's `ctime` must be for the walk to have seen its links:
/// inode times come from a coarse clock that may lag the wall clock by a tick.
const CTIME_SLACK: Duration = Duration::from_secs(1);

/// A file's identity: device and inode.
pub(crate) type FileId = (u64, u64);

/// What the index knows about a multiply-linked file.
#[derive(Debug)]
pub(crate) enum Twin {
    /// It is not another name of a protected file.
    None,
    /// It is another name of this protected file.
    Protected(ProtectedPath),
    /// The workspace is too large for the index to say.
    Unknown,
}

/// The identities of the workspace's multiply-linked protected files.
#[derive(Debug, Default)]
pub(crate) struct IdentityIndex {
    snapshot: Mutex<Option<Snapshot>>,
}

#[derive(Debug)]
struct Snapshot {
    /// When the walk started.
    taken: SystemTime,
    ids: HashMap<FileId, ProtectedPath>,
    /// Whether the walk saw the whole workspace.
    complete: bool,
}

impl IdentityIndex {
    /// Whether an opened file with several links is another name of a protected file.
    /// `off_limits` says whether a workspace-relative path is protected.
    pub(crate) fn twin(
        &self,
        root: &Path,
        meta: &std::fs::Metadata,
        off_limits: &dyn Fn(&str) -> Option<ProtectedPath>,
    ) -> Twin {
        if meta.nlink() <= 1 {
            return Twin::None;
        }
        let id = (meta.dev(), meta.ino());
        let changed = changed_at(meta);
        // A poisoned lock only means another lookup panicked; the snapshot is still whole.
        let mut guard = self
            .snapshot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let stale = match &*guard {
            None => true,
            Some(s) => !s.ids.contains_key(&id) && changed + CTIME_SLACK >= s.taken,
        };
        if stale {
            *guard = Some(Snapshot::walk(root, off_limits));
        }
        match &*guard {
            Some(s) => match s.ids.get(&id) {
                Some(p) => Twin::Protected(p.clone()),
                None if s.complete => Twin::None,
                None => Twin::Unknown,
            },
            None => Twin::Unknown,
        }
    }
}

impl Snapshot {
    fn walk(root: &Path, off_limits: &dyn Fn(&str) -> Option<ProtectedPath>) -> Snapshot {
        let taken = SystemTime::now();
        let mut ids = HashMap::new();
        let mut complete = true;
        let walker = ignore::WalkBuilder::new(root)
            .standard_filters(false)
            .follow_links(false)
            // Git's object store holds compressed copies of what the work tree shows; the
            // rest of `.git` (config, hooks, index, refs) is walked.
            .filter_entry(|e| {
                !(e.file_name() == "objects"
                    && e.path()
                        .parent()
                        .and_then(Path::file_name)
                        .is_some_and(|p| p.eq_ignore_ascii_case(".git")))
            })
            .build();
        for (n, entry) in walker.enumerate() {
            if n >= MAX_WALK_ENTRIES {
                complete = false;
                break;
            }
            let Ok(entry) = entry else { continue };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let Ok(meta) = entry.metadata() else { continue };
            if meta.nlink() <= 1 {
                continue;
            }
            let Some(rel) = entry.path().strip_prefix(root).ok().and_then(Path::to_str) else {
                continue;
            };
            if let Some(p) = off_limits(rel) {
                ids.insert((meta.dev(), meta.ino()), p);
            }
        }
        Snapshot {
            taken,
            ids,
            complete,
        }
    }
}

/// The inode's change time.
fn changed_at(meta: &std::fs::Metadata) -> SystemTime {
    let secs = u64::try_from(meta.ctime()).unwrap_or(0);
    let nanos = u32::try_from(meta.ctime_nsec()).unwrap_or(0);
    SystemTime::UNIX_EPOCH + Duration::new(secs, nanos)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn protected(rel: &str) -> Option<ProtectedPath> {
        (rel.ends_with(".env") || rel.starts_with(".git/")).then(|| ProtectedPath {
            glob: ".env".into(),
            reason: "secret".into(),
            default: true,
        })
    }

    #[test]
    fn hard_links_made_before_and_after_the_walk_are_found() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path();
        std::fs::write(root.join(".env"), "S=1\n").unwrap();
        std::fs::write(root.join("plain.txt"), "x\n").unwrap();
        std::fs::hard_link(root.join("plain.txt"), root.join("plain2.txt")).unwrap();
        std::fs::hard_link(root.join(".env"), root.join("notes.txt")).unwrap();
        let index = IdentityIndex::default();
        let meta = |p: &str| std::fs::metadata(root.join(p)).unwrap();
        assert!(matches!(
            index.twin(root, &meta("notes.txt"), &protected),
            Twin::Protected(_)
        ));
        assert!(matches!(
            index.twin(root, &meta("plain2.txt"), &protected),
            Twin::None
        ));
        // A link made after the index was built: its ctime is newer, so the index walks again.
        std::fs::write(root.join("b.env"), "S=2\n").unwrap();
        std::fs::hard_link(root.join("b.env"), root.join("later.txt")).unwrap();
        assert!(matches!(
            index.twin(root, &meta("later.txt"), &protected),
            Twin::Protected(_)
        ));
        // A file with one link is never another name of anything.
        std::fs::write(root.join("solo.env"), "S=3\n").unwrap();
        assert!(matches!(
            index.twin(root, &meta("solo.env"), &protected),
            Twin::None
        ));
    }
}
