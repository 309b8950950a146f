//! Opens beneath the workspace root that follow no symbolic link anywhere on the way.
//!
//! Paths reach the builtins already resolved (validation followed every link inside the
//! workspace and put the target's path into the call), so a link met at open time appeared
//! after the check: the open fails with `ELOOP` instead of following it. On Linux this is one
//! `openat2` call with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`; where
//! `openat2` is missing (Linux before 5.6, or a seccomp filter refusing it) the same guarantee
//! comes from a walk that opens one component at a time relative to the previous one with
//! `O_NOFOLLOW`. Either way the descriptor is opened in the folder that was reached, never by a
//! path string that could be swapped between two steps.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
#[cfg(target_os = "linux")]
use std::sync::OnceLock;

use rustix::fs::{Mode, OFlags};

/// Flags every open gets: close on exec, and never become the controlling terminal.
const ALWAYS: OFlags = OFlags::CLOEXEC.union(OFlags::NOCTTY);

/// `flags` with [`ALWAYS`] (less `O_NOCTTY` for an `O_PATH` open, which `openat2` refuses
/// with any flag but a few).
fn with_always(flags: OFlags) -> OFlags {
    #[cfg(target_os = "linux")]
    if flags.contains(OFlags::PATH) {
        return flags | OFlags::CLOEXEC;
    }
    flags | ALWAYS
}

/// Flags of the folders a walk passes through (readable, so the fallback works without
/// `O_PATH` where it is missing; a link there fails with `ELOOP`).
const STEP: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(ALWAYS);

/// Opens `rel` (a normalized workspace-relative path, `.` for the root) beneath `root` with
/// `flags`, following no symbolic link in any component.
pub(crate) fn open(root: BorrowedFd<'_>, rel: &str, flags: OFlags) -> io::Result<OwnedFd> {
    components(rel)?;
    #[cfg(target_os = "linux")]
    if openat2_works(root) {
        return openat2(root, rel, flags);
    }
    walk(root, rel, flags)
}

/// Whether this kernel (and any seccomp filter around this process) lets `openat2` through;
/// probed once.
#[cfg(target_os = "linux")]
fn openat2_works(root: BorrowedFd<'_>) -> bool {
    static WORKS: OnceLock<bool> = OnceLock::new();
    *WORKS.get_or_init(
        || match openat2(root, ".", OFlags::PATH | OFlags::DIRECTORY) {
            Ok(_) => true,
            Err(e) => !matches!(
                rustix::io::Errno::from_io_error(&e),
                Some(rustix::io::Errno::NOSYS | rustix::io::Errno::PERM)
            ),
        },
    )
}

/// One `openat2` call: beneath the root, no symbolic or magic link followed.
#[cfg(target_os = "linux")]
fn openat2(root: BorrowedFd<'_>, rel: &str, flags: OFlags) -> io::Result<OwnedFd> {
    use rustix::fs::ResolveFlags;
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    // EAGAIN: a concurrent rename or mount was seen while resolving (only `..` can cause it,
    // and normalized paths have none); a few tries, then the error.
    let mut tries = 0;
    loop {
        match rustix::fs::openat2(root, rel, with_always(flags), Mode::empty(), resolve) {
            Err(rustix::io::Errno::AGAIN) if tries < 8 => tries += 1,
            r => return r.map_err(io::Error::from),
        }
    }
}

/// The fallback: one component at a time, each opened relative to the folder before it with
/// `O_NOFOLLOW`.
pub(crate) fn walk(root: BorrowedFd<'_>, rel: &str, flags: OFlags) -> io::Result<OwnedFd> {
    let parts = components(rel)?;
    let Some((last, folders)) = parts.split_last() else {
        return at(root, ".", flags);
    };
    let mut here: Option<OwnedFd> = None;
    for part in folders {
        let next = step(here.as_ref().map_or(root, |f| f.as_fd()), part)?;
        here = Some(next);
    }
    at(
        here.as_ref().map_or(root, |f| f.as_fd()),
        last,
        flags | OFlags::NOFOLLOW,
    )
}

/// Opens the folders of `rel` beneath `root`, creating the missing ones (mode 0777 less the
/// umask), following no link: the folder a file is then created in is the one that was
/// reached, whatever is renamed meanwhile.
pub(crate) fn create_folders(root: BorrowedFd<'_>, rel: &str) -> io::Result<OwnedFd> {
    let mut here = at(root, ".", STEP)?;
    for part in components(rel)? {
        let next = match step(here.as_fd(), part) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                match rustix::fs::mkdirat(here.as_fd(), part, Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err(e.into()),
                }
                step(here.as_fd(), part)?
            }
            r => r?,
        };
        here = next;
    }
    Ok(here)
}

/// Opens the folder `name` in `dir` without following a link: a link there is `ELOOP`, like
/// `openat2` says it (`O_DIRECTORY | O_NOFOLLOW` alone reports it as `ENOTDIR`). An entry that
/// is a link or a folder by the time it is looked at again was swapped meanwhile: `ELOOP` too.
fn step(dir: BorrowedFd<'_>, name: &str) -> io::Result<OwnedFd> {
    use rustix::fs::FileType;
    at(dir, name, STEP).map_err(|e| {
        let swapped = rustix::io::Errno::from_io_error(&e) == Some(rustix::io::Errno::NOTDIR)
            && rustix::fs::statat(dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).is_ok_and(
                |st| {
                    matches!(
                        FileType::from_raw_mode(st.st_mode),
                        FileType::Symlink | FileType::Directory
                    )
                },
            );
        if swapped {
            io::Error::from(rustix::io::Errno::LOOP)
        } else {
            e
        }
    })
}

/// `openat(dir, name, flags)`.
pub(crate) fn at(dir: BorrowedFd<'_>, name: &str, flags: OFlags) -> io::Result<OwnedFd> {
    rustix::fs::openat(dir, name, with_always(flags), Mode::empty()).map_err(io::Error::from)
}

/// The components of a normalized relative path; anything else (`..`, `.` inside, an empty
/// component, an absolute path) is refused rather than interpreted.
fn components(rel: &str) -> io::Result<Vec<&str>> {
    if rel == "." || rel.is_empty() {
        return Ok(Vec::new());
    }
    let parts: Vec<&str> = rel.split('/').collect();
    if parts
        .iter()
        .any(|p| p.is_empty() || *p == "." || *p == "..")
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{rel}` is not a normalized workspace-relative path"),
        ));
    }
    Ok(parts)
}

/// Whether an open failed because a symbolic link was met (or the path left the root).
pub(crate) fn is_link_error(e: &io::Error) -> bool {
    matches!(
        rustix::io::Errno::from_io_error(e),
        Some(rustix::io::Errno::LOOP | rustix::io::Errno::XDEV)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn root(dir: &std::path::Path) -> std::fs::File {
        std::fs::File::open(dir).unwrap()
    }

    /// Both ways of opening refuse a link in any component and open plain paths.
    #[test]
    fn links_are_never_followed() {
        let ws = tempfile::tempdir().unwrap();
        let p = ws.path();
        std::fs::create_dir_all(p.join("a/b")).unwrap();
        std::fs::write(p.join("a/b/f.txt"), "x").unwrap();
        symlink("a", p.join("alias")).unwrap();
        symlink("b/f.txt", p.join("a/flink")).unwrap();
        let r = root(p);
        let ro = OFlags::RDONLY;
        for open_fn in [open, walk] {
            assert!(open_fn(r.as_fd(), "a/b/f.txt", ro).is_ok());
            assert!(open_fn(r.as_fd(), ".", ro | OFlags::DIRECTORY).is_ok());
            for linked in ["alias/b/f.txt", "a/flink", "alias"] {
                let e = open_fn(r.as_fd(), linked, ro).unwrap_err();
                assert!(is_link_error(&e), "{linked}: {e}");
            }
            assert_eq!(
                open_fn(r.as_fd(), "a/missing", ro).unwrap_err().kind(),
                io::ErrorKind::NotFound
            );
            assert_eq!(
                open_fn(r.as_fd(), "a/../a/b/f.txt", ro).unwrap_err().kind(),
                io::ErrorKind::InvalidInput
            );
        }
    }

    #[test]
    fn folders_are_created_without_following_links() {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        symlink(outside.path(), ws.path().join("out")).unwrap();
        let r = root(ws.path());
        create_folders(r.as_fd(), "x/y/z").unwrap();
        assert!(ws.path().join("x/y/z").is_dir());
        let e = create_folders(r.as_fd(), "out/new").unwrap_err();
        assert!(is_link_error(&e), "{e}");
        assert!(!outside.path().join("new").exists());
    }
}
