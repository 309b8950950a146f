//! [`Workspace`]: the folder tools may touch, and the path policy that keeps them inside it.
//!
//! Two layers, because a check alone can be raced. At validation, [`Workspace::check`] refuses a
//! path that is absolute, climbs out with `..`, or resolves through a symbolic link to somewhere
//! outside — a model-facing SEMANTIC_VALIDATION_ERROR before anything runs. At use, builtin tools
//! open files only through the workspace's `cap_std::fs::Dir`, which resolves every path beneath
//! the root (openat2 `RESOLVE_BENEATH` on Linux, a checked manual walk elsewhere): a symlink
//! swapped in between the check and the open makes the open fail instead of escaping.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};

use crate::ir::ErrorType;

/// The error text cap-std gives when a path resolves outside its `Dir`.
const ESCAPE_MESSAGE: &str = "a path led outside of the filesystem";

/// The workspace root, opened as a capability.
#[derive(Debug)]
pub struct Workspace {
    root: PathBuf,
    dir: Dir,
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
}

/// A workspace-relative path that passed the policy: normalized, `.` for the root.
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
        })
    }

    /// The absolute, canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The root as a capability: every open through it stays beneath the root.
    pub fn dir(&self) -> &Dir {
        &self.dir
    }

    /// Checks a model-supplied path: lexically, then by resolving it beneath the root without
    /// letting a symlink lead out. A path that does not exist yet passes when its deepest
    /// existing ancestor does.
    pub fn check(&self, path: &str) -> Result<WorkspacePath, PathViolation> {
        let rel = lexical(path)?;
        let mut probe: Option<&Path> = Some(Path::new(&rel));
        while let Some(p) = probe {
            let target = if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            };
            match self.dir.canonicalize(target) {
                Ok(_) => return Ok(WorkspacePath(rel)),
                Err(e) if is_escape(&e) => return Err(PathViolation::Symlink(path.to_owned())),
                // Missing (or not a folder): judge the parent, which the path would be created in.
                Err(_) => probe = p.parent(),
            }
        }
        Ok(WorkspacePath(rel))
    }

    /// The absolute path of a checked path, for subprocess working directories.
    pub fn absolute(&self, p: &WorkspacePath) -> PathBuf {
        if p.0 == "." {
            self.root.clone()
        } else {
            self.root.join(&p.0)
        }
    }

    /// Replaces (or creates) a file atomically beneath the root: a temporary file in the same
    /// folder, fsync, rename. Missing parent folders are created. The old file's permissions
    /// are kept.
    pub fn write_atomic(&self, p: &WorkspacePath, bytes: &[u8]) -> io::Result<()> {
        let path = p.as_path();
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
        assert_eq!(w.check("alias/x.rs").unwrap().as_str(), "alias/x.rs");
        assert_eq!(
            w.check("out/secret"),
            Err(PathViolation::Symlink("out/secret".into()))
        );
        assert_eq!(w.check(".").unwrap().as_str(), ".");
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
