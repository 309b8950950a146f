//! The builtins' opens: [`Workspace::open_file`], [`Workspace::open_folder`],
//! [`Workspace::lock_folder_of`] with its [`FolderLock`], and the [`AccessError`]s they return
//! (the module docs of [`super`] give the discipline).

use std::io::{self, Write};
use std::os::fd::AsFd;

use cap_std::fs::Dir;
use rustix::fs::OFlags;

use super::identity::Twin;
use super::{Workspace, WorkspacePath, beneath, classify_io, lexical};
use crate::ir::{ErrorType, ProtectedPath};

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
    /// Writing the path would change the loaded policy (a policy file, the state folder, the
    /// trust store).
    #[error("{}", .reason.refusal(&format!("`{path}`")))]
    PolicyFile {
        /// The path as the call named it.
        path: String,
        /// Why it is a policy file.
        reason: crate::policy::PolicyFileReason,
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
            | AccessError::PolicyFile { .. }
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
            Ok(fd) => {
                let file = ws.vet(&self.path, std::fs::File::from(fd))?;
                // The file opened, not only the name checked: a hard link of a policy file
                // made after the check is the policy file.
                if let Some(policy) = ws.policy_files()
                    && let Ok(meta) = file.file.metadata()
                    && let Some(reason) = {
                        use std::os::unix::fs::MetadataExt;
                        policy.protects_identity(meta.dev(), meta.ino())
                    }
                {
                    return Err(AccessError::PolicyFile {
                        path: self.path.clone(),
                        reason,
                    });
                }
                Ok(Some(file))
            }
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

impl Workspace {
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
        // Every caller writes: the policy's files are refused before anything is created.
        if let Some(policy) = &self.policy
            && let Some(reason) = policy.protects(&self.root.join(rel))
        {
            return Err(AccessError::PolicyFile {
                path: rel.to_owned(),
                reason,
            });
        }
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

#[cfg(test)]
mod tests {
    use super::*;

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
