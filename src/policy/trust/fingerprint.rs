//! A policy's content fingerprint: every policy file by its project-relative path with the
//! blake3 hash of its bytes, sorted by path, and one hash over that list.
//!
//! The whole-policy hash is blake3 over the lines `<path>\0<hash>\n` in path order, so it
//! changes when any file's content changes, or a file appears, disappears or is renamed.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::TrustError;

/// One policy file: where it is and what it holds.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PolicyFile {
    /// Relative to the project folder with `/` separators (`tool-specs/bash.yaml`); absolute
    /// for a file outside the project (a key file elsewhere).
    pub path: String,
    /// blake3 of the file's bytes, hex.
    pub hash: String,
}

/// The fingerprint of a whole policy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// blake3 over the sorted file list, hex.
    pub policy: String,
    /// Every file, sorted by path.
    pub files: Vec<PolicyFile>,
}

/// A policy read from the disk: its fingerprint and the bytes that were hashed.
#[derive(Clone, Debug)]
pub struct PolicySnapshot {
    /// The project folder, canonical.
    pub root: PathBuf,
    /// What was read.
    pub fingerprint: Fingerprint,
    /// Each file's bytes, in the order of `fingerprint.files`.
    pub contents: Vec<Vec<u8>>,
    /// Each file's path on the disk, in the same order.
    pub paths: Vec<PathBuf>,
}

/// What differs between a policy and the one trusted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PolicyChanges {
    /// Files whose content changed.
    pub changed: Vec<String>,
    /// Files the policy has that the trusted one had not.
    pub added: Vec<String>,
    /// Files the trusted policy had that this one has not.
    pub removed: Vec<String>,
}

impl PolicyChanges {
    /// Whether nothing differs.
    pub fn is_empty(&self) -> bool {
        self.changed.is_empty() && self.added.is_empty() && self.removed.is_empty()
    }

    /// One line per kind of change: `changed: a, b` (empty kinds left out).
    pub fn lines(&self) -> Vec<String> {
        [
            ("changed", &self.changed),
            ("added", &self.added),
            ("removed", &self.removed),
        ]
        .into_iter()
        .filter(|(_, files)| !files.is_empty())
        .map(|(what, files)| format!("{what}: {}", files.join(", ")))
        .collect()
    }
}

/// blake3 of some bytes, hex.
pub fn hash_bytes(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

impl Fingerprint {
    /// The fingerprint of a file list (sorted here; the policy hash computed over it).
    pub fn from_files(mut files: Vec<PolicyFile>) -> Self {
        files.sort();
        files.dedup_by(|a, b| a.path == b.path);
        let mut hasher = blake3::Hasher::new();
        for f in &files {
            hasher.update(f.path.as_bytes());
            hasher.update(b"\0");
            hasher.update(f.hash.as_bytes());
            hasher.update(b"\n");
        }
        Fingerprint {
            policy: hasher.finalize().to_hex().to_string(),
            files,
        }
    }

    /// Reads and hashes the policy files of the project at `root`. Relative paths are taken
    /// from the current folder. A file that does not exist is not part of the policy (if it
    /// appears later, it is an added file).
    pub fn read(root: &Path, files: &[PathBuf]) -> Result<PolicySnapshot, TrustError> {
        Self::read_with(root, files, &[])
    }

    /// [`Fingerprint::read`], taking the bytes of the files in `loaded` (path as in `files`,
    /// bytes) from there rather than from the disk: the fingerprint is then of exactly what
    /// the loader read, not of what a file holds a moment later.
    pub fn read_with(
        root: &Path,
        files: &[PathBuf],
        loaded: &[(PathBuf, &[u8])],
    ) -> Result<PolicySnapshot, TrustError> {
        let cwd = std::env::current_dir().map_err(|source| TrustError::Read {
            path: PathBuf::from("."),
            source,
        })?;
        let root_given = cwd.join(root);
        let root = std::fs::canonicalize(&root_given).map_err(|source| TrustError::Read {
            path: root_given.clone(),
            source,
        })?;
        // (file, bytes, path on the disk, whether the bytes are the loader's)
        let mut read: Vec<(PolicyFile, Vec<u8>, PathBuf, bool)> = Vec::with_capacity(files.len());
        for file in files {
            let path = cwd.join(file);
            let preloaded = loaded.iter().find(|(p, _)| cwd.join(p) == path);
            let bytes = match preloaded {
                Some((_, b)) => b.to_vec(),
                None => match std::fs::read(&path) {
                    Ok(b) => b,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    Err(source) => return Err(TrustError::Read { path, source }),
                },
            };
            let name = project_path(&root, &root_given, &path);
            read.push((
                PolicyFile {
                    path: name,
                    hash: hash_bytes(&bytes),
                },
                bytes,
                path,
                preloaded.is_some(),
            ));
        }
        // One entry per name; of a file named twice (two spellings of one path), the bytes
        // the loader read.
        read.sort_by(|a, b| (&a.0.path, !a.3).cmp(&(&b.0.path, !b.3)));
        read.dedup_by(|later, first| later.0.path == first.0.path);
        let mut contents = Vec::with_capacity(read.len());
        let mut paths = Vec::with_capacity(read.len());
        let mut list = Vec::with_capacity(read.len());
        for (f, bytes, path, _) in read {
            list.push(f);
            contents.push(bytes);
            paths.push(path);
        }
        Ok(PolicySnapshot {
            root,
            fingerprint: Fingerprint::from_files(list),
            contents,
            paths,
        })
    }

    /// What differs in `self` against the `trusted` fingerprint.
    pub fn changes_since(&self, trusted: &Fingerprint) -> PolicyChanges {
        let mut c = PolicyChanges::default();
        for f in &self.files {
            match trusted.files.iter().find(|t| t.path == f.path) {
                None => c.added.push(f.path.clone()),
                Some(t) if t.hash != f.hash => c.changed.push(f.path.clone()),
                Some(_) => {}
            }
        }
        for t in &trusted.files {
            if !self.files.iter().any(|f| f.path == t.path) {
                c.removed.push(t.path.clone());
            }
        }
        c
    }
}

/// A file's name in the fingerprint: relative to the project folder (as given or canonical),
/// lexically normalised, with `/`; the absolute path for a file outside it.
fn project_path(root: &Path, root_given: &Path, path: &Path) -> String {
    let normal = normalise(path);
    let rel = normal
        .strip_prefix(normalise(root_given))
        .or_else(|_| normal.strip_prefix(root))
        .map(Path::to_path_buf)
        .or_else(|_| {
            // A file reached through a symlinked folder: its real place may be inside.
            std::fs::canonicalize(path)
                .ok()
                .and_then(|c| c.strip_prefix(root).ok().map(Path::to_path_buf))
                .ok_or(())
        });
    match rel {
        Ok(r) => r.to_string_lossy().replace('\\', "/"),
        Err(()) => normal.to_string_lossy().into_owned(),
    }
}

/// `a/./b/../c` → `a/c`, without touching the disk (a symlink is named as given, not followed).
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, hash: &str) -> PolicyFile {
        PolicyFile {
            path: path.into(),
            hash: hash.into(),
        }
    }

    #[test]
    fn order_does_not_change_the_policy_hash_and_content_does() {
        let a = Fingerprint::from_files(vec![file("b", "1"), file("a", "2")]);
        let b = Fingerprint::from_files(vec![file("a", "2"), file("b", "1")]);
        let c = Fingerprint::from_files(vec![file("a", "2"), file("b", "3")]);
        let renamed = Fingerprint::from_files(vec![file("a", "2"), file("c", "1")]);
        assert_eq!(a, b);
        assert_ne!(a.policy, c.policy);
        assert_ne!(a.policy, renamed.policy);
        assert_eq!(
            a.files,
            vec![file("a", "2"), file("b", "1")],
            "sorted by path"
        );
    }

    #[test]
    fn changes_name_changed_added_and_removed_files() {
        let trusted = Fingerprint::from_files(vec![file("a", "1"), file("b", "1")]);
        let now = Fingerprint::from_files(vec![file("a", "2"), file("c", "1")]);
        let c = now.changes_since(&trusted);
        assert_eq!(
            c,
            PolicyChanges {
                changed: vec!["a".into()],
                added: vec!["c".into()],
                removed: vec!["b".into()],
            }
        );
        assert_eq!(c.lines(), vec!["changed: a", "added: c", "removed: b"]);
        assert!(trusted.changes_since(&trusted).is_empty());
    }

    #[test]
    fn reads_relative_names_and_skips_missing_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("specs")).unwrap();
        std::fs::write(dir.path().join("toolgate.yaml"), "a").unwrap();
        std::fs::write(dir.path().join("specs/x.yaml"), "b").unwrap();
        let snap = Fingerprint::read(
            dir.path(),
            &[
                dir.path().join("specs/./x.yaml"),
                dir.path().join("toolgate.yaml"),
                dir.path().join("gone.yaml"),
            ],
        )
        .unwrap();
        let names: Vec<&str> = snap
            .fingerprint
            .files
            .iter()
            .map(|f| f.path.as_str())
            .collect();
        assert_eq!(names, vec!["specs/x.yaml", "toolgate.yaml"]);
        assert_eq!(snap.contents, vec![b"b".to_vec(), b"a".to_vec()]);
        assert_eq!(snap.fingerprint.files[1].hash, hash_bytes(b"a"));
        // What the loader read counts, not what the disk holds a moment later.
        let loaded = [(dir.path().join("toolgate.yaml"), b"as loaded".as_slice())];
        let snap = Fingerprint::read_with(dir.path(), &[dir.path().join("toolgate.yaml")], &loaded)
            .unwrap();
        assert_eq!(snap.fingerprint.files[0].hash, hash_bytes(b"as loaded"));
    }
}
