//! [`Workspace`]: the folder tools may touch, and the path policy that keeps them inside it.
//!
//! Two layers, because a check alone can be raced. At validation, [`Workspace::check`] refuses a
//! path that is absolute, climbs out with `..`, or resolves through a symbolic link to somewhere
//! outside — a model-facing SEMANTIC_VALIDATION_ERROR before anything runs — and otherwise
//! *resolves* it: symbolic links inside the workspace are followed, so `envlink` (a link to
//! `.env`) becomes `.env`. The pipeline puts the resolved path into the call, so the rules,
//! the resource keys and the tool all see the file that will actually be touched, whatever the
//! spelling. At use, builtin tools open files only through the workspace's `cap_std::fs::Dir`,
//! which resolves every path beneath the root (openat2 `RESOLVE_BENEATH` on Linux, a checked
//! manual walk elsewhere): a symlink swapped in between the check and the open makes the open
//! fail instead of escaping.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};

use crate::ir::{ErrorType, ProtectPolicy};
use crate::policy::ProtectedSet;

/// The default protected set, compiled once (its globs are fixed, so it always compiles).
static DEFAULT_SET: LazyLock<ProtectedSet> = LazyLock::new(|| {
    ProtectedSet::new(&ProtectPolicy::default())
        .unwrap_or_else(|e| unreachable!("the default protected globs compile: {e}"))
});

/// The error text cap-std gives when a path resolves outside its `Dir`.
const ESCAPE_MESSAGE: &str = "a path led outside of the filesystem";

/// The workspace root, opened as a capability, with the paths inside it no tool may touch.
#[derive(Debug)]
pub struct Workspace {
    root: PathBuf,
    dir: Dir,
    protected: Arc<ProtectedSet>,
}

/// The workspace folder cannot be opened.
#[derive(Debug, thiserror::Error)]
#[error("cannot open workspace {path}: {source}")]
pub struct WorkspaceError {
    /// The folder.
    pub path: PathBuf,
    /// Why.
    #[source]
    pub source: io::Error,
}

/// A path that the policy refuses, with the reason the model reads.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PathViolation {
    /// An empty string.
    #[error("the path is empty")]
    Empty,
    /// A NUL byte in the path.
    #[error("the path contains a NUL character")]
    Nul,
    /// `/etc/passwd`.
    #[error("`{0}` is absolute; use a path relative to the workspace root")]
    Absolute(String),
    /// `../x` or `a/../../x`.
    #[error("`{0}` climbs out of the workspace with `..`")]
    ClimbsOut(String),
    /// A symbolic link on the way leads outside.
    #[error("`{0}` leads outside the workspace through a symbolic link")]
    Symlink(String),
    /// A symbolic link on the way leads to nothing (its target is missing, or links loop).
    #[error("`{0}` is a symbolic link whose target does not exist")]
    BrokenLink(String),
    /// The resolved path is not UTF-8, so it cannot be given to the rules or the tool.
    #[error("`{0}` resolves to a path that is not valid UTF-8")]
    NotUtf8(String),
}

/// A workspace-relative path that passed the policy: resolved beneath the root (no `.`, `..` or
/// symbolic link in it, as far as it exists), `.` for the root.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WorkspacePath(String);

impl WorkspacePath {
    /// The normalized relative path (`.` for the root).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// As a `Path`.
    pub fn as_path(&self) -> &Path {
        Path::new(&self.0)
    }
}

impl Workspace {
    /// Opens the workspace folder.
    pub fn open(root: &Path) -> Result<Self, WorkspaceError> {
        let err = |source| WorkspaceError {
            path: root.to_path_buf(),
            source,
        };
        let canonical = root.canonicalize().map_err(err)?;
        let dir = Dir::open_ambient_dir(&canonical, ambient_authority()).map_err(err)?;
        Ok(Workspace {
            root: canonical,
            dir,
            protected: Arc::new(DEFAULT_SET.clone()),
        })
    }

    /// Sets the protected paths (the default set until this is called).
    pub fn with_protected(mut self, protected: ProtectedSet) -> Self {
        self.protected = Arc::new(protected);
        self
    }

    /// The paths inside the workspace no tool may read or write.
    pub fn protected(&self) -> &Arc<ProtectedSet> {
        &self.protected
    }

    /// The absolute, canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The root as a capability: every open through it stays beneath the root.
    pub fn dir(&self) -> &Dir {
        &self.dir
    }

    /// Checks a model-supplied path and resolves it: lexically first, then beneath the root,
    /// following symbolic links as long as they stay inside. A path that does not exist yet
    /// resolves its deepest existing ancestor and keeps the rest as written, so `alias/new.rs`
    /// (with `alias` a link to `src`) is `src/new.rs`. Refused: absolute paths, `..` out of the
    /// root, links that lead outside, and links that lead nowhere (a write through one would
    /// replace the link, not create its target).
    pub fn check(&self, path: &str) -> Result<WorkspacePath, PathViolation> {
        let rel = lexical(path)?;
        let mut probe = Path::new(&rel);
        // The components below the deepest ancestor that resolves, innermost first.
        let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
        let base = loop {
            let target = if probe.as_os_str().is_empty() {
                Path::new(".")
            } else {
                probe
            };
            match self.dir.canonicalize(target) {
                Ok(base) => break base,
                Err(e) if is_escape(&e) => return Err(PathViolation::Symlink(path.to_owned())),
                // Missing (or not a folder): judge the parent, which the path would be created in.
                Err(_) => match (probe.file_name(), probe.parent()) {
                    (Some(name), Some(parent)) => {
                        rest.push(name);
                        probe = parent;
                    }
                    // Not even the root resolves (the workspace is gone): the open will fail.
                    _ => return Ok(WorkspacePath(rel)),
                },
            }
        };
        // The first missing component may be a link that leads nowhere: following it on use
        // would create (or replace) something the rules never saw.
        if let Some(first) = rest.last()
            && self
                .dir
                .symlink_metadata(base.join(first))
                .is_ok_and(|m| m.file_type().is_symlink())
        {
            return Err(PathViolation::BrokenLink(path.to_owned()));
        }
        // `canonicalize(".")` is `.`; a resolved path has no `.` in it.
        let mut resolved: PathBuf = base
            .components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .collect();
        resolved.extend(rest.iter().rev());
        match resolved.to_str() {
            Some("") => Ok(WorkspacePath(".".to_owned())),
            Some(s) => Ok(WorkspacePath(s.to_owned())),
            None => Err(PathViolation::NotUtf8(path.to_owned())),
        }
    }

    /// The absolute path of a checked path, for subprocess working directories.
    pub fn absolute(&self, p: &WorkspacePath) -> PathBuf {
        if p.0 == "." {
            self.root.clone()
        } else {
            self.root.join(&p.0)
        }
    }

    /// Locks the folder a file is in, exclusively, until the guard is dropped: a read-check-write
    /// (apply_patch's hash check, write_file's "does it exist") is then atomic against every
    /// other writer that takes the lock — other calls of this process and other toolgate
    /// processes alike (an advisory `flock` on the folder, which a rename into it does not
    /// replace). The folder must exist. Blocks until the lock is free.
    pub fn lock_folder_of(&self, p: &WorkspacePath) -> io::Result<FolderLock> {
        let parent = p
            .as_path()
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        // Opened for reading, not as a `Dir` (an O_PATH descriptor, which cannot be locked).
        let folder = self
            .dir
            .open_with(parent, OpenOptions::new().read(true))?
            .into_std();
        if !folder.metadata()?.is_dir() {
            return Err(io::Error::from(io::ErrorKind::NotADirectory));
        }
        folder.lock()?;
        Ok(FolderLock(folder))
    }

    /// Replaces (or creates) a file atomically beneath the root: a temporary file in the same
    /// folder, fsync, rename. Missing parent folders are created. The old file's permissions
    /// are kept. A symbolic link is never replaced: checked paths are resolved, so one here
    /// appeared after the check.
    pub fn write_atomic(&self, p: &WorkspacePath, bytes: &[u8]) -> io::Result<()> {
        let path = p.as_path();
        if self
            .dir
            .symlink_metadata(path)
            .is_ok_and(|m| m.file_type().is_symlink())
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "it became a symbolic link after the call was checked; it was not replaced",
            ));
        }
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
        if let Some(parent) = parent {
            self.dir.create_dir_all(parent)?;
        }
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "file".into());
        let tmp_name = format!(".{name}.toolgate-{}.tmp", uuid::Uuid::now_v7().simple());
        let tmp = match parent {
            Some(parent) => parent.join(&tmp_name),
            None => PathBuf::from(&tmp_name),
        };
        let permissions = self.dir.metadata(path).ok().map(|m| m.permissions());
        let result = (|| {
            let mut file = self
                .dir
                .open_with(&tmp, OpenOptions::new().write(true).create_new(true))?;
            file.write_all(bytes)?;
            if let Some(perm) = permissions {
                file.set_permissions(perm)?;
            }
            file.sync_all()?;
            drop(file);
            self.dir.rename(&tmp, &self.dir, path)
        })();
        if result.is_err() {
            let _ = self.dir.remove_file(&tmp);
        }
        result
    }
}

/// An exclusive lock on a workspace folder ([`Workspace::lock_folder_of`]); released on drop.
#[derive(Debug)]
pub struct FolderLock(std::fs::File);

impl Drop for FolderLock {
    fn drop(&mut self) {
        // Closing the descriptor releases the lock too; unlocking first just says so.
        let _ = self.0.unlock();
    }
}

/// Lexical policy: relative, no NUL, never above the root.
fn lexical(path: &str) -> Result<String, PathViolation> {
    if path.is_empty() {
        return Err(PathViolation::Empty);
    }
    if path.contains('\0') {
        return Err(PathViolation::Nul);
    }
    if Path::new(path).is_absolute() {
        return Err(PathViolation::Absolute(path.to_owned()));
    }
    crate::cel::functions::normalize(path).ok_or_else(|| PathViolation::ClimbsOut(path.to_owned()))
}

/// Whether an I/O error is cap-std refusing a path that leads outside the root.
pub fn is_escape(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::PermissionDenied && e.to_string().contains(ESCAPE_MESSAGE)
}

/// Maps a file-system error to the error type and message the model reads.
pub fn classify_io(e: &io::Error, path: &str) -> (ErrorType, String) {
    if is_escape(e) {
        return (
            ErrorType::SandboxViolation,
            format!(
                "`{path}` leads outside the workspace (through a symbolic link); access was refused"
            ),
        );
    }
    match e.kind() {
        io::ErrorKind::NotFound => (
            ErrorType::ResourceNotFound,
            format!("`{path}` does not exist"),
        ),
        io::ErrorKind::NotADirectory => (
            ErrorType::SemanticValidationError,
            format!("a component of `{path}` is a file, not a folder"),
        ),
        io::ErrorKind::IsADirectory => (
            ErrorType::SemanticValidationError,
            format!("`{path}` is a folder, not a file"),
        ),
        io::ErrorKind::PermissionDenied => (
            ErrorType::RuntimeException,
            format!("the operating system refused access to `{path}`"),
        ),
        _ => (ErrorType::RuntimeException, format!("`{path}`: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_policy() {
        assert_eq!(lexical("a/./b/../c").unwrap(), "a/c");
        assert_eq!(
            lexical("/etc/passwd"),
            Err(PathViolation::Absolute("/etc/passwd".into()))
        );
        assert_eq!(
            lexical("a/../../x"),
            Err(PathViolation::ClimbsOut("a/../../x".into()))
        );
        assert_eq!(lexical(""), Err(PathViolation::Empty));
    }

    #[test]
    fn symlinks_out_are_refused_and_inside_ones_pass() {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(ws.path().join("src")).unwrap();
        std::os::unix::fs::symlink(outside.path(), ws.path().join("out")).unwrap();
        std::os::unix::fs::symlink("src", ws.path().join("alias")).unwrap();
        let w = Workspace::open(ws.path()).unwrap();
        assert_eq!(w.check("src/new.rs").unwrap().as_str(), "src/new.rs");
        assert_eq!(w.check("new.rs").unwrap().as_str(), "new.rs");
        assert_eq!(w.check("new/x.rs").unwrap().as_str(), "new/x.rs");
        assert_eq!(w.check("alias/x.rs").unwrap().as_str(), "src/x.rs");
        assert_eq!(
            w.check("out/secret"),
            Err(PathViolation::Symlink("out/secret".into()))
        );
        assert_eq!(w.check(".").unwrap().as_str(), ".");
        assert_eq!(w.check("./src/../alias").unwrap().as_str(), "src");
    }

    /// Links inside the workspace resolve to what they lead to, whatever the spelling; links
    /// that lead nowhere are refused.
    #[test]
    fn inside_links_resolve_to_their_targets() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        std::fs::write(root.join(".env"), "SECRET=1\n").unwrap();
        std::fs::write(root.join("src/login.py"), "x\n").unwrap();
        let link = |target: &str, at: &str| std::os::unix::fs::symlink(target, root.join(at));
        link(".env", "envlink").unwrap();
        link("../../.env", "src/deep/up").unwrap();
        link("src", "alias").unwrap();
        link("alias", "alias2").unwrap();
        link("missing.txt", "dangling").unwrap();
        link("loop", "loop").unwrap();
        let w = Workspace::open(root).unwrap();
        let resolved = |p: &str| w.check(p).map(|p| p.as_str().to_owned());
        assert_eq!(resolved("envlink").unwrap(), ".env");
        assert_eq!(resolved("src/deep/up").unwrap(), ".env");
        assert_eq!(resolved("alias/login.py").unwrap(), "src/login.py");
        assert_eq!(resolved("alias2/login.py").unwrap(), "src/login.py");
        assert_eq!(resolved("alias2/new/x.py").unwrap(), "src/new/x.py");
        // A file used as a folder: resolved as far as it goes; the open reports the rest.
        assert_eq!(resolved("src/login.py/x").unwrap(), "src/login.py/x");
        assert_eq!(
            resolved("dangling"),
            Err(PathViolation::BrokenLink("dangling".into()))
        );
        assert_eq!(
            resolved("loop/x"),
            Err(PathViolation::BrokenLink("loop/x".into()))
        );
    }

    #[test]
    fn atomic_write_never_replaces_a_link() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("target.txt"), "old").unwrap();
        std::os::unix::fs::symlink("target.txt", ws.path().join("link")).unwrap();
        let w = Workspace::open(ws.path()).unwrap();
        // A path checked before the link appeared.
        let stale = WorkspacePath("link".to_owned());
        assert!(w.write_atomic(&stale, b"new").is_err());
        assert!(ws.path().join("link").is_symlink());
        assert_eq!(
            std::fs::read_to_string(ws.path().join("target.txt")).unwrap(),
            "old"
        );
    }

    #[test]
    fn folder_lock_excludes_a_second_holder() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir(ws.path().join("src")).unwrap();
        let w = Workspace::open(ws.path()).unwrap();
        let p = w.check("src/a.py").unwrap();
        let held = w.lock_folder_of(&p).unwrap();
        let other = std::fs::File::open(ws.path().join("src")).unwrap();
        assert!(matches!(
            other.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(held);
        other.try_lock().unwrap();
    }

    #[test]
    fn atomic_write_creates_parents_and_replaces() {
        let ws = tempfile::tempdir().unwrap();
        let w = Workspace::open(ws.path()).unwrap();
        let p = w.check("a/b/c.txt").unwrap();
        w.write_atomic(&p, b"one").unwrap();
        w.write_atomic(&p, b"two").unwrap();
        assert_eq!(
            std::fs::read_to_string(ws.path().join("a/b/c.txt")).unwrap(),
            "two"
        );
        let leftovers: Vec<_> = std::fs::read_dir(ws.path().join("a/b")).unwrap().collect();
        assert_eq!(leftovers.len(), 1);
    }
}
