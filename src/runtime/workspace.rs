//! [`Workspace`]: the folder tools may touch, and the path policy that keeps them inside it.
//!
//! Two layers, because a check alone can be raced. At validation, [`Workspace::check`] refuses a
//! path that is absolute, climbs out with `..`, or resolves through a symbolic link to somewhere
//! outside — a model-facing SEMANTIC_VALIDATION_ERROR before anything runs — and otherwise
//! *resolves* it: symbolic links inside the workspace are followed, so `envlink` (a link to
//! `.env`) becomes `.env`. The pipeline puts the resolved path into the call, so the rules,
//! the resource keys and the tool all see the file that will actually be touched, whatever the
//! spelling.
//!
//! At use, builtin tools open through [`Workspace::open_file`], [`Workspace::open_folder`] and
//! [`Workspace::lock_folder_of`], which hold the rest of the discipline:
//! - the path is refused when it is protected ([`Workspace::off_limits`]: the project's
//!   protected set, and every `.git` folder at any depth);
//! - it is resolved and opened in one step beneath the root with no symbolic link followed in
//!   any component ([`beneath`]: openat2 `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`), so a link
//!   swapped in after the check makes the open fail instead of leading elsewhere;
//! - files are opened `O_NONBLOCK | O_NOCTTY` and judged by `fstat` of the open descriptor:
//!   anything but a regular file (a FIFO, a socket, a device) is refused, so nothing blocks;
//! - a file with several links is looked up in the [`identity`] index, so a hard link to a
//!   protected file is refused like the file itself;
//! - writes create their temporary file and rename it inside a folder descriptor opened the
//!   same way and locked, never by path.

mod beneath;
mod identity;

use std::io::{self, Write};
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use cap_std::ambient_authority;
use cap_std::fs::Dir;
use rustix::fs::OFlags;

use crate::ir::{Budgets, ErrorType, ProtectPolicy, ProtectedPath};
use crate::policy::ProtectedSet;
use identity::{IdentityIndex, Twin};

/// The default protected set, compiled once (its globs are fixed, so it always compiles).
static DEFAULT_SET: LazyLock<ProtectedSet> = LazyLock::new(|| {
    ProtectedSet::new(&ProtectPolicy::default())
        .unwrap_or_else(|e| unreachable!("the default protected globs compile: {e}"))
});

/// What is said when a builtin meets a `.git` folder: repository internals are never read,
/// listed or written by builtins, in the repository and in nested ones alike.
static REPOSITORY_INTERNALS: LazyLock<ProtectedPath> = LazyLock::new(|| {
    ProtectedPath {
    glob: ".git".to_owned(),
    reason: "Repository internals are never read or written by tools: git runs hooks and configuration from there outside any sandbox.".to_owned(),
    default: true,
}
});

/// The error text cap-std gives when a path resolves outside its `Dir`.
const ESCAPE_MESSAGE: &str = "a path led outside of the filesystem";

/// The workspace root, opened as a capability, with the paths inside it no tool may touch.
#[derive(Debug)]
pub struct Workspace {
    root: PathBuf,
    dir: Dir,
    protected: Arc<ProtectedSet>,
    limits: FileLimits,
    identities: IdentityIndex,
}

/// The largest files builtins work on (`budgets` in toolgate.yaml).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileLimits {
    /// The largest file `read_file` reads (it streams, so this bounds time, not memory).
    pub read: u64,
    /// Bytes of each file `search_files` searches.
    pub search: u64,
    /// The largest file `write_file` and `apply_patch` hold in memory.
    pub edit: u64,
}

impl FileLimits {
    /// The limits a project's budgets set.
    pub fn of(budgets: &Budgets) -> FileLimits {
        FileLimits {
            read: budgets.read_file_size,
            search: budgets.search_file_size,
            edit: budgets.edit_file_size,
        }
    }
}

impl Default for FileLimits {
    fn default() -> Self {
        FileLimits::of(&Budgets::default())
    }
}

/// Why a builtin may not touch a path, or could not: what the model reads.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AccessError {
    /// The path is protected (or inside a `.git` folder).
    #[error("`{path}` is protected (`{}`): {}", .protected.glob, .protected.reason)]
    Protected {
        /// The path as the call named it.
        path: String,
        /// The glob and reason.
        protected: ProtectedPath,
    },
    /// The file is another name (a hard link) of a protected file.
    #[error("`{path}` is another name (a hard link) of a protected file (`{}`): {}", .protected.glob, .protected.reason)]
    HardLink {
        /// The path as the call named it.
        path: String,
        /// The glob and reason of the protected file.
        protected: ProtectedPath,
    },
    /// The file has several links and the workspace is too large to rule out a protected one.
    #[error(
        "`{path}` has several names (hard links), and the workspace is too large to check that none of them is protected"
    )]
    Unverifiable {
        /// The path.
        path: String,
    },
    /// A symbolic link appeared on the way after the path was checked.
    #[error("`{path}` changed after it was checked: a symbolic link appeared on the way")]
    Changed {
        /// The path.
        path: String,
    },
    /// A FIFO, socket or device.
    #[error("`{path}` is a {kind}, not a regular file")]
    NotAFile {
        /// The path.
        path: String,
        /// What it is.
        kind: &'static str,
    },
    /// A folder where a file was expected.
    #[error("`{path}` is a folder, not a file")]
    IsAFolder {
        /// The path.
        path: String,
    },
    /// A file where a folder was expected.
    #[error("`{path}` is not a folder")]
    NotAFolder {
        /// The path.
        path: String,
    },
    /// The file system refused or failed.
    #[error("{}", classify_io(.source, .path).1)]
    Io {
        /// The path.
        path: String,
        /// The error.
        #[source]
        source: io::Error,
    },
}

impl AccessError {
    /// The error type the result carries: a protected target is POLICY_DENIED (a project
    /// policy refused it, whichever name reached it), a link that appeared after the check is
    /// SANDBOX_VIOLATION (the containment stopped an escape), the wrong kind of file is
    /// SEMANTIC_VALIDATION_ERROR (the same call would fail again).
    pub fn error_type(&self) -> ErrorType {
        match self {
            AccessError::Protected { .. }
            | AccessError::HardLink { .. }
            | AccessError::Unverifiable { .. } => ErrorType::PolicyDenied,
            AccessError::Changed { .. } => ErrorType::SandboxViolation,
            AccessError::NotAFile { .. }
            | AccessError::IsAFolder { .. }
            | AccessError::NotAFolder { .. } => ErrorType::SemanticValidationError,
            AccessError::Io { source, path } => classify_io(source, path).0,
        }
    }

    /// Whether the refusal is about protection (the path, or the file behind it).
    pub fn is_protection(&self) -> bool {
        self.error_type() == ErrorType::PolicyDenied
    }

    fn io(path: &str, source: io::Error) -> AccessError {
        if beneath::is_link_error(&source) {
            return AccessError::Changed {
                path: path.to_owned(),
            };
        }
        if rustix::io::Errno::from_io_error(&source) == Some(rustix::io::Errno::NXIO) {
            return AccessError::NotAFile {
                path: path.to_owned(),
                kind: "socket or device",
            };
        }
        AccessError::Io {
            path: path.to_owned(),
            source,
        }
    }
}

/// A regular file opened beneath the root and vetted: not protected, not another name of a
/// protected file.
#[derive(Debug)]
pub struct OpenedFile {
    file: std::fs::File,
    size: u64,
}

impl OpenedFile {
    /// Its size when it was opened.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The open file.
    pub fn into_file(self) -> std::fs::File {
        self.file
    }
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
            limits: FileLimits::default(),
            identities: IdentityIndex::default(),
        })
    }

    /// Sets the protected paths (the default set until this is called).
    pub fn with_protected(mut self, protected: ProtectedSet) -> Self {
        self.protected = Arc::new(protected);
        self.identities = IdentityIndex::default();
        self
    }

    /// Sets the largest files builtins work on (the defaults until this is called).
    pub fn with_file_limits(mut self, limits: FileLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The paths inside the workspace no tool may read or write.
    pub fn protected(&self) -> &Arc<ProtectedSet> {
        &self.protected
    }

    /// The largest files builtins work on.
    pub fn file_limits(&self) -> FileLimits {
        self.limits
    }

    /// Why builtins may not touch a workspace-relative path: the protected glob it falls under,
    /// or `.git` for anything in a `.git` folder at any depth. `None` when it is free.
    pub fn off_limits(&self, rel: &str) -> Option<ProtectedPath> {
        off_limits(&self.protected, rel)
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

    /// Opens a regular file for reading: `rel` is a normalized workspace-relative path (a
    /// checked one, or one a walk beneath the root found). Refused: a protected path, a path
    /// through a symbolic link, anything but a regular file, another name of a protected file.
    pub fn open_file(&self, rel: &str) -> Result<OpenedFile, AccessError> {
        self.refuse_protected(rel)?;
        let fd = beneath::open(self.dir.as_fd(), rel, OFlags::RDONLY | OFlags::NONBLOCK)
            .map_err(|e| AccessError::io(rel, e))?;
        self.vet(rel, std::fs::File::from(fd))
    }

    /// Opens a folder for listing, beneath the root, with no symbolic link on the way.
    pub fn open_folder(&self, rel: &str) -> Result<Dir, AccessError> {
        self.refuse_protected(rel)?;
        let fd = beneath::open(self.dir.as_fd(), rel, OFlags::RDONLY | OFlags::DIRECTORY).map_err(
            |e| match e.kind() {
                io::ErrorKind::NotADirectory => AccessError::NotAFolder {
                    path: rel.to_owned(),
                },
                _ => AccessError::io(rel, e),
            },
        )?;
        Ok(Dir::from_std_file(std::fs::File::from(fd)))
    }

    /// Whether a regular file is at `rel`, reached beneath the root with no symbolic link on
    /// the way (a name a walk found is still there, and not through a swapped link).
    pub fn is_file(&self, rel: &str) -> bool {
        #[cfg(target_os = "linux")]
        let flags = OFlags::PATH;
        #[cfg(not(target_os = "linux"))]
        let flags = OFlags::RDONLY | OFlags::NONBLOCK;
        beneath::open(self.dir.as_fd(), rel, flags)
            .ok()
            .map(std::fs::File::from)
            .and_then(|f| f.metadata().ok())
            .is_some_and(|m| m.is_file())
    }

    /// Locks the folder a file is in, exclusively, until the guard is dropped: a read-check-write
    /// (apply_patch's hash check, write_file's "does it exist") is then atomic against every
    /// other writer that takes the lock — other calls of this process and other toolgate
    /// processes alike (an advisory `flock` on the folder, which a rename into it does not
    /// replace). The folder is opened beneath the root with no symbolic link on the way
    /// (created first when `create` is set), and the file is then read and replaced through
    /// that folder's descriptor only. Blocks until the lock is free. Refused: a protected path.
    pub fn lock_folder_of(
        &self,
        p: &WorkspacePath,
        create: bool,
    ) -> Result<FolderLock, AccessError> {
        let rel = p.as_str();
        self.refuse_protected(rel)?;
        let (folder, name) = match rel.rsplit_once('/') {
            Some((folder, name)) => (folder, name),
            None => (".", rel),
        };
        if name == "." {
            return Err(AccessError::IsAFolder {
                path: rel.to_owned(),
            });
        }
        let fd = if create {
            beneath::create_folders(self.dir.as_fd(), folder)
        } else {
            beneath::open(self.dir.as_fd(), folder, OFlags::RDONLY | OFlags::DIRECTORY)
        }
        .map_err(|e| AccessError::io(rel, e))?;
        // Opened for reading, not `O_PATH` (which cannot be locked).
        let dir = std::fs::File::from(fd);
        dir.lock().map_err(|e| AccessError::io(rel, e))?;
        Ok(FolderLock {
            dir,
            name: name.to_owned(),
            path: rel.to_owned(),
        })
    }

    /// Refuses a protected path, and a path that is not in normalized form (which the opens
    /// would refuse anyway, less clearly).
    fn refuse_protected(&self, rel: &str) -> Result<(), AccessError> {
        if lexical(rel).ok().as_deref() != Some(rel) && rel != "." {
            return Err(AccessError::Io {
                path: rel.to_owned(),
                source: io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "not a normalized workspace-relative path",
                ),
            });
        }
        match self.off_limits(rel) {
            Some(protected) => Err(AccessError::Protected {
                path: rel.to_owned(),
                protected,
            }),
            None => Ok(()),
        }
    }

    /// Judges an opened file by its descriptor: its kind, and whether it is another name of a
    /// protected file.
    fn vet(&self, rel: &str, file: std::fs::File) -> Result<OpenedFile, AccessError> {
        let meta = file.metadata().map_err(|e| AccessError::io(rel, e))?;
        let path = || rel.to_owned();
        let ft = meta.file_type();
        if ft.is_dir() {
            return Err(AccessError::IsAFolder { path: path() });
        }
        if ft.is_symlink() {
            return Err(AccessError::Changed { path: path() });
        }
        if !ft.is_file() {
            use std::os::unix::fs::FileTypeExt;
            let kind = if ft.is_fifo() {
                "FIFO (named pipe)"
            } else if ft.is_socket() {
                "socket"
            } else {
                "device"
            };
            return Err(AccessError::NotAFile { path: path(), kind });
        }
        match self
            .identities
            .twin(&self.root, &meta, &|r| self.off_limits(r))
        {
            Twin::None => Ok(OpenedFile {
                size: meta.len(),
                file,
            }),
            Twin::Protected(protected) => Err(AccessError::HardLink {
                path: path(),
                protected,
            }),
            Twin::Unknown => Err(AccessError::Unverifiable { path: path() }),
        }
    }
}

/// An exclusive lock on a workspace folder ([`Workspace::lock_folder_of`]), holding the
/// folder's descriptor: the file is read and replaced through it. Released on drop.
#[derive(Debug)]
pub struct FolderLock {
    dir: std::fs::File,
    name: String,
    path: String,
}

impl FolderLock {
    /// Opens the file the lock was taken for, if it exists, and vets it like
    /// [`Workspace::open_file`]: a link there (which appeared after the check), anything but a
    /// regular file, or another name of a protected file is refused.
    pub fn open_existing(&self, ws: &Workspace) -> Result<Option<OpenedFile>, AccessError> {
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOFOLLOW;
        match beneath::at(self.dir.as_fd(), &self.name, flags) {
            Ok(fd) => ws.vet(&self.path, std::fs::File::from(fd)).map(Some),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(AccessError::io(&self.path, e)),
        }
    }

    /// Replaces (or creates) the file atomically inside the locked folder: a temporary file
    /// there, fsync, rename over the name, fsync of the folder. `mode` keeps an old file's
    /// permission bits. A name that became a symbolic link is replaced by the file, never
    /// written through (rename replaces the entry itself).
    pub fn replace(&self, bytes: &[u8], mode: Option<u32>) -> io::Result<()> {
        use rustix::fs::Mode;
        let tmp = format!(".toolgate-{}.tmp", uuid::Uuid::now_v7().simple());
        let fd = rustix::fs::openat(
            self.dir.as_fd(),
            tmp.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o666),
        )?;
        let result = (|| {
            let mut file = std::fs::File::from(fd);
            file.write_all(bytes)?;
            if let Some(mode) = mode {
                rustix::fs::fchmod(&file, Mode::from_raw_mode(mode))?;
            }
            file.sync_all()?;
            drop(file);
            rustix::fs::renameat(
                self.dir.as_fd(),
                tmp.as_str(),
                self.dir.as_fd(),
                self.name.as_str(),
            )?;
            // The rename is durable once the folder entry is.
            rustix::fs::fsync(&self.dir)?;
            Ok(())
        })();
        if result.is_err() {
            let _ =
                rustix::fs::unlinkat(self.dir.as_fd(), tmp.as_str(), rustix::fs::AtFlags::empty());
        }
        result
    }
}

impl Drop for FolderLock {
    fn drop(&mut self) {
        // Closing the descriptor releases the lock too; unlocking first just says so.
        let _ = self.dir.unlock();
    }
}

/// Why builtins may not touch a workspace-relative path ([`Workspace::off_limits`]), for
/// walks that hold the protected set without the workspace.
pub fn off_limits(protected: &ProtectedSet, rel: &str) -> Option<ProtectedPath> {
    if rel.split('/').any(|c| c.eq_ignore_ascii_case(".git")) {
        return Some(REPOSITORY_INTERNALS.clone());
    }
    protected.protects(rel).cloned()
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

    fn replace(w: &Workspace, rel: &str, bytes: &[u8]) -> Result<(), AccessError> {
        let p = w.check(rel).unwrap();
        let lock = w.lock_folder_of(&p, true)?;
        lock.replace(bytes, None).map_err(|e| AccessError::Io {
            path: rel.to_owned(),
            source: e,
        })
    }

    /// A name that became a link after the check is replaced, never written through.
    #[test]
    fn replace_never_writes_through_a_link() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("target.txt"), "old").unwrap();
        std::os::unix::fs::symlink("target.txt", ws.path().join("link")).unwrap();
        let w = Workspace::open(ws.path()).unwrap();
        // A path checked before the link appeared.
        let stale = WorkspacePath("link".to_owned());
        let lock = w.lock_folder_of(&stale, false).unwrap();
        assert!(matches!(
            lock.open_existing(&w),
            Err(AccessError::Changed { .. })
        ));
        lock.replace(b"new", None).unwrap();
        assert!(!ws.path().join("link").is_symlink());
        assert_eq!(
            std::fs::read_to_string(ws.path().join("target.txt")).unwrap(),
            "old"
        );
    }

    /// A folder on the way that became a link after the check: the write's folder cannot be
    /// opened, so nothing is created where the link leads.
    #[test]
    fn a_folder_link_on_the_way_stops_the_write() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(ws.path().join("repo/hooks")).unwrap();
        std::os::unix::fs::symlink("repo/hooks", ws.path().join("out")).unwrap();
        let w = Workspace::open(ws.path()).unwrap();
        for create in [true, false] {
            let stale = WorkspacePath("out/sub/pre-commit".to_owned());
            assert!(matches!(
                w.lock_folder_of(&stale, create),
                Err(AccessError::Changed { .. })
            ));
            let stale = WorkspacePath("out/pre-commit".to_owned());
            assert!(matches!(
                w.lock_folder_of(&stale, create),
                Err(AccessError::Changed { .. })
            ));
        }
        assert_eq!(
            std::fs::read_dir(ws.path().join("repo/hooks"))
                .unwrap()
                .count(),
            0
        );
        assert!(matches!(
            w.open_file("out/x"),
            Err(AccessError::Changed { .. })
        ));
    }

    #[test]
    fn folder_lock_excludes_a_second_holder() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir(ws.path().join("src")).unwrap();
        let w = Workspace::open(ws.path()).unwrap();
        let p = w.check("src/a.py").unwrap();
        let held = w.lock_folder_of(&p, false).unwrap();
        let other = std::fs::File::open(ws.path().join("src")).unwrap();
        assert!(matches!(
            other.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(held);
        other.try_lock().unwrap();
    }

    #[test]
    fn replace_creates_parents_keeps_the_mode_and_leaves_nothing_behind() {
        use std::os::unix::fs::PermissionsExt;
        let ws = tempfile::tempdir().unwrap();
        let w = Workspace::open(ws.path()).unwrap();
        replace(&w, "a/b/c.txt", b"one").unwrap();
        let path = ws.path().join("a/b/c.txt");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o750)).unwrap();
        let p = w.check("a/b/c.txt").unwrap();
        let lock = w.lock_folder_of(&p, false).unwrap();
        let old = lock.open_existing(&w).unwrap().unwrap();
        let mode = old.into_file().metadata().unwrap().permissions().mode();
        lock.replace(b"two", Some(mode)).unwrap();
        drop(lock);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o750
        );
        let leftovers: Vec<_> = std::fs::read_dir(ws.path().join("a/b")).unwrap().collect();
        assert_eq!(leftovers.len(), 1);
    }

    /// Protected paths and `.git` at any depth are refused for reading and writing alike, and
    /// so is another name (a hard link) of a protected file.
    #[test]
    fn protected_targets_are_refused() {
        let ws = tempfile::tempdir().unwrap();
        let root = ws.path();
        std::fs::create_dir_all(root.join("vendor/lib/.git/hooks")).unwrap();
        std::fs::write(root.join(".env"), "S=1\n").unwrap();
        std::fs::write(root.join("vendor/lib/.git/config"), "[core]\n").unwrap();
        std::fs::hard_link(root.join(".env"), root.join("notes.txt")).unwrap();
        let w = Workspace::open(root).unwrap();
        for rel in [".env", "vendor/lib/.git/config", "vendor/lib/.GIT/config"] {
            let e = w.open_file(rel).unwrap_err();
            assert!(matches!(e, AccessError::Protected { .. }), "{rel}: {e}");
            assert_eq!(e.error_type(), ErrorType::PolicyDenied);
        }
        let e = w.open_file("notes.txt").unwrap_err();
        assert!(matches!(e, AccessError::HardLink { .. }), "{e}");
        assert_eq!(
            e.to_string(),
            "`notes.txt` is another name (a hard link) of a protected file (`.env`): Secrets are never readable or writable by tools."
        );
        let hook = WorkspacePath("vendor/lib/.git/hooks/pre-commit".to_owned());
        assert!(matches!(
            w.lock_folder_of(&hook, true),
            Err(AccessError::Protected { .. })
        ));
        assert!(!root.join("vendor/lib/.git/hooks/pre-commit").exists());
        assert!(matches!(
            w.open_folder("vendor/lib/.git"),
            Err(AccessError::Protected { .. })
        ));
    }

    /// A FIFO is refused at once (opened without blocking, judged by its descriptor).
    #[test]
    fn fifos_are_refused_without_blocking() {
        let ws = tempfile::tempdir().unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            ws.path().join("pipe"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let w = Workspace::open(ws.path()).unwrap();
        let e = w.open_file("pipe").unwrap_err();
        assert_eq!(
            e.to_string(),
            "`pipe` is a FIFO (named pipe), not a regular file"
        );
        assert_eq!(e.error_type(), ErrorType::SemanticValidationError);
    }
}
