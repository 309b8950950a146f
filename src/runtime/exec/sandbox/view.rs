//! The view: what a command tool sees of the file system, planned from its profile (pure) and
//! built by the shim in a private mount namespace ([`mounts`](super::mounts), Linux).
//!
//! Like bubblewrap, the shim starts from an empty root (a tmpfs) and binds into it, at the
//! same paths, only what the profile names: the system folders read-only, the tool's
//! toolchain read-only, the workspace read-only or writable, a private `/tmp`, a minimal
//! `/dev` (no block devices) and — with the PID namespace — a fresh `/proc`. A profile that
//! reads `/` starts from the host's root instead (read-only unless it also writes `/`). Then
//! every protected match in the workspace is masked (a file by an empty read-only file, a
//! folder by an empty read-only folder), `.git` is made read-only, and the root becomes the
//! tool's (`pivot_root`, the host's root detached).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::ir::ProtectedPath;
use crate::policy::{ProtectError, ProtectedSet};

/// The system folders `{system}` stands for (those present are bound read-only).
pub const SYSTEM_FOLDERS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
];

/// Secrets of the host inside the system folders, masked in every view that shows them
/// read-only (a `*` in the last component matches any run of characters).
pub const HOST_SECRETS: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/ssl/private",
    "/etc/ssh/ssh_host_*_key",
];

/// Credential files at the top of a toolchain folder (cargo's registry token, package
/// managers' tokens), masked when present.
pub const TOOLCHAIN_SECRETS: &[&str] = &[
    "credentials",
    "credentials.toml",
    ".credentials.toml",
    ".npmrc",
    ".pypirc",
    ".netrc",
    ".git-credentials",
    ".env",
];

/// What the view starts from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ViewBase {
    /// An empty root: only what is bound into it exists.
    Empty,
    /// The host's root, read-only.
    HostReadOnly,
    /// The host's root as it is (writable where the host allows).
    HostWritable,
}

/// The protected globs, as the shim rebuilds the [`ProtectedSet`] from them.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProtectSpec {
    /// Protected globs (the defaults, the project's, the state folder when it is inside).
    pub paths: Vec<ProtectedPath>,
    /// Exceptions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub except: Vec<ProtectedPath>,
}

impl ProtectSpec {
    /// The globs of a compiled set.
    pub fn of(set: &ProtectedSet) -> ProtectSpec {
        ProtectSpec {
            paths: set.paths().to_vec(),
            except: set.exceptions().to_vec(),
        }
    }

    /// The set again.
    pub fn compile(&self) -> Result<ProtectedSet, ProtectError> {
        ProtectedSet::from_parts(self.paths.clone(), self.except.clone())
    }

    /// The set again, compiled once per process for the same globs.
    ///
    /// Compiling the globs (a regex set) was a third of a forked shim's CPU per call. The fork
    /// server calls this before it forks, so every shim it forks finds the set of its
    /// runtime's globs already compiled in the copy of the server's memory it starts from.
    /// The set is a pure function of the globs: nothing of one call reaches the next.
    pub fn compiled(&self) -> Result<Arc<ProtectedSet>, ProtectError> {
        /// Sets kept: a runtime has one protected set; a few runtimes may share a server.
        const KEPT: usize = 4;
        static COMPILED: Mutex<Vec<(ProtectSpec, Arc<ProtectedSet>)>> = Mutex::new(Vec::new());
        let mut kept = COMPILED.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, set)) = kept.iter().find(|(spec, _)| spec == self) {
            return Ok(Arc::clone(set));
        }
        let set = Arc::new(self.compile()?);
        if kept.len() == KEPT {
            kept.remove(0);
        }
        kept.push((self.clone(), Arc::clone(&set)));
        Ok(set)
    }
}

/// The view of one tool process.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewPlan {
    /// What it starts from.
    pub base: ViewBase,
    /// Host folders bound read-only at the same paths (missing ones are skipped).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<PathBuf>,
    /// Host folders bound writable at the same paths.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<PathBuf>,
    /// A private `/tmp` (`Some(writable)`), or the base's (`None`).
    pub private_tmp: Option<bool>,
    /// Size cap of the private `/tmp` and `/dev/shm`, in bytes (`None`: the kernel's default,
    /// half the memory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tmp_size: Option<u64>,
    /// A fresh `/proc` for the tool's PID namespace.
    pub fresh_proc: bool,
    /// The workspace root (canonical): the walk for masks and `.git` starts here.
    pub workspace: PathBuf,
    /// The protected globs.
    pub protect: ProtectSpec,
    /// The state folder, masked wherever the view shows it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_dir: Option<PathBuf>,
    /// Other paths masked when present (host secrets, toolchain credentials).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hide: Vec<PathBuf>,
    /// Whether every `.git` in the workspace is made read-only.
    pub git_read_only: bool,
    /// The loaded policy's files and spec folders, bound read-only onto themselves where the
    /// view shows them (whatever the profile writes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub policy_read_only: Vec<PathBuf>,
    /// Whether the shim needs a user namespace to mount (not root with `CAP_SYS_ADMIN`).
    pub user_namespace: bool,
}

impl ViewPlan {
    /// Whether a host path is visible in the view (the tool may see it at the same path): it
    /// is beneath a bound root, the host's root is the base, or it is one of the fixed folders
    /// (`/tmp`, `/dev`, `/proc`).
    pub fn shows(&self, path: &Path) -> bool {
        if self.base != ViewBase::Empty {
            return true;
        }
        let fixed = ["/tmp", "/dev", "/proc"].iter().map(Path::new);
        self.read
            .iter()
            .chain(self.write.iter())
            .map(PathBuf::as_path)
            .chain(fixed)
            .any(|root| path.starts_with(root))
    }

    /// Whether the workspace is writable in the view.
    pub fn workspace_writable(&self) -> bool {
        self.base == ViewBase::HostWritable
            || self
                .write
                .iter()
                .any(|w| self.workspace.starts_with(w) || w.starts_with(&self.workspace))
    }
}

/// How a profile path lands in a view.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Root {
    /// `/`: the host's root as the base.
    Host,
    /// `/tmp`: the private `/tmp`.
    Tmp,
    /// `/dev`, `/proc` or beneath: the view's own.
    Fixed,
    /// A host folder bound at the same path.
    Bind(PathBuf),
}

/// Classifies a resolved profile path.
pub(super) fn root_of(path: &Path) -> Root {
    if path == Path::new("/") {
        Root::Host
    } else if path == Path::new("/tmp") {
        Root::Tmp
    } else if path.starts_with("/dev") || path.starts_with("/proc") {
        Root::Fixed
    } else {
        Root::Bind(path.to_path_buf())
    }
}

/// Removes roots already beneath another root of the same list, and duplicates.
pub(super) fn outermost(mut roots: Vec<PathBuf>) -> Vec<PathBuf> {
    roots.sort();
    roots.dedup();
    let all = roots.clone();
    roots.retain(|r| !all.iter().any(|o| o != r && r.starts_with(o)));
    roots
}

/// Whether `name` matches a pattern with at most one `*`.
pub(super) fn matches_star(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, tail)) => {
            name.len() >= head.len() + tail.len() && name.starts_with(head) && name.ends_with(tail)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(globs: &[&str]) -> ProtectSpec {
        ProtectSpec {
            paths: globs
                .iter()
                .map(|g| ProtectedPath {
                    glob: (*g).to_owned(),
                    reason: "test".to_owned(),
                    default: false,
                })
                .collect(),
            except: Vec::new(),
        }
    }

    #[test]
    fn compiled_protected_sets_are_kept_per_globs() {
        let a = spec(&["cache-test-a/*.key"]);
        let first = a.compiled().unwrap();
        let again = a.clone().compiled().unwrap();
        assert!(Arc::ptr_eq(&first, &again), "the same globs compile once");
        assert!(first.protects("x/cache-test-a/id.key").is_some());
        let b = spec(&["cache-test-b/*.key"]);
        let other = b.compiled().unwrap();
        assert!(!Arc::ptr_eq(&first, &other));
        assert!(other.protects("cache-test-a/id.key").is_none());
        assert!(other.protects("cache-test-b/id.key").is_some());
        // A glob that does not compile is an error every time, never a kept set.
        let bad = spec(&["[unclosed"]);
        assert!(bad.compiled().is_err());
        assert!(bad.compiled().is_err());
    }

    #[test]
    fn classifies_profile_paths() {
        assert_eq!(root_of(Path::new("/")), Root::Host);
        assert_eq!(root_of(Path::new("/tmp")), Root::Tmp);
        assert_eq!(root_of(Path::new("/dev/null")), Root::Fixed);
        assert_eq!(root_of(Path::new("/proc")), Root::Fixed);
        assert_eq!(root_of(Path::new("/tmp/ws")), Root::Bind("/tmp/ws".into()));
        assert_eq!(
            root_of(Path::new("/devices")),
            Root::Bind("/devices".into())
        );
    }

    #[test]
    fn keeps_the_outermost_roots() {
        let r = outermost(vec![
            "/usr/lib".into(),
            "/usr".into(),
            "/root/.cargo".into(),
            "/usr".into(),
            "/root/.cargo/bin".into(),
            "/root/.rustup".into(),
        ]);
        assert_eq!(
            r,
            vec![
                PathBuf::from("/root/.cargo"),
                PathBuf::from("/root/.rustup"),
                PathBuf::from("/usr")
            ]
        );
    }

    #[test]
    fn star_patterns() {
        assert!(matches_star("ssh_host_*_key", "ssh_host_rsa_key"));
        assert!(!matches_star("ssh_host_*_key", "ssh_host_rsa_key.pub"));
        assert!(matches_star("shadow", "shadow"));
        assert!(!matches_star("a*a", "a"));
    }

    #[test]
    fn what_a_view_shows() {
        let v = ViewPlan {
            base: ViewBase::Empty,
            read: vec!["/usr".into()],
            write: vec!["/work/ws".into()],
            private_tmp: Some(true),
            tmp_size: None,
            fresh_proc: true,
            workspace: "/work/ws".into(),
            protect: ProtectSpec::default(),
            state_dir: None,
            hide: vec![],
            git_read_only: true,
            policy_read_only: vec![],
            user_namespace: false,
        };
        assert!(v.shows(Path::new("/usr/bin/env")));
        assert!(v.shows(Path::new("/work/ws/a")));
        assert!(v.shows(Path::new("/tmp/x")));
        assert!(!v.shows(Path::new("/work/other")));
        assert!(!v.shows(Path::new("/root/.ssh/id_rsa")));
        assert!(v.workspace_writable());
    }
}
