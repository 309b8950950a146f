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
//!   any component (`beneath.rs`: openat2 `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`), so a link
//!   swapped in after the check makes the open fail instead of leading elsewhere;
//! - files are opened `O_NONBLOCK | O_NOCTTY` and judged by `fstat` of the open descriptor:
//!   anything but a regular file (a FIFO, a socket, a device) is refused, so nothing blocks;
//! - a file with several links is looked up in the identity index (`identity.rs`), so a hard
//!   link to a protected file is refused like the file itself;
//! - writes create their temporary file and rename it inside a folder descriptor opened the
//!   same way and locked, never by path.

mod access;
mod beneath;
mod identity;
#[cfg(test)]
mod policy_tests;

pub use access::AccessError;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use cap_std::ambient_authority;
use cap_std::fs::Dir;

use crate::ir::{Budgets, ErrorType, ProtectPolicy, ProtectedPath};
use crate::policy::ProtectedSet;
use identity::IdentityIndex;

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
    /// The loaded policy's files, which builtins never write (`None`: none known).
    policy: Option<Arc<crate::policy::PolicyFiles>>,
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
            policy: None,
        })
    }

    /// Sets the protected paths (the default set until this is called).
    pub fn with_protected(mut self, protected: ProtectedSet) -> Self {
        self.protected = Arc::new(protected);
        self.identities = IdentityIndex::default();
        self
    }

    /// Sets the loaded policy's files, which builtins then refuse to write.
    pub fn with_policy_files(mut self, policy: Arc<crate::policy::PolicyFiles>) -> Self {
        self.policy = Some(policy);
        self
    }

    /// The loaded policy's files, when known.
    pub fn policy_files(&self) -> Option<&Arc<crate::policy::PolicyFiles>> {
        self.policy.as_ref()
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

    /// The open itself is safe: a path checked while `sub` was a folder fails to open once `sub`
    /// is a symlink to the outside.
    #[test]
    fn swapped_symlink_cannot_escape_at_open() {
        let f = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("file.txt"), "SECRET\n").unwrap();
        std::fs::create_dir(f.path().join("sub")).unwrap();
        std::fs::write(f.path().join("sub/file.txt"), "inside\n").unwrap();
        let ws = Workspace::open(f.path()).unwrap();
        let checked = ws.check("sub/file.txt").unwrap();
        std::fs::rename(f.path().join("sub"), f.path().join("sub.old")).unwrap();
        std::os::unix::fs::symlink(outside.path(), f.path().join("sub")).unwrap();
        let err = ws.dir().open(checked.as_path()).unwrap_err();
        assert!(is_escape(&err), "{err}");
        assert_eq!(
            ws.check("sub/file.txt"),
            Err(PathViolation::Symlink("sub/file.txt".into()))
        );
    }

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
}
