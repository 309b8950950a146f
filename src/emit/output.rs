//! [`OutputFiles`]: the files of one build, by relative path, and how they reach a folder.
//!
//! Writing is atomic per file (a temporary file in the same folder, then a rename) and skips
//! files whose content is unchanged, so timestamps only move when content does. The folder
//! keeps a manifest ([`MANIFEST`]) of what toolgate wrote there; a later build removes the
//! files it no longer produces, and nothing else (a `target/` or `Cargo.lock` that cargo left
//! in the generated crate stays). [`OutputFiles::check`] compares without writing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::emit::EmitError;

/// The manifest file listing what toolgate wrote into an output folder.
pub const MANIFEST: &str = ".toolgate-manifest";

/// Files by path relative to the output folder (`/`-separated), in path order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OutputFiles {
    files: BTreeMap<String, String>,
}

/// How a folder differs from a build's files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Drift {
    /// The file is missing.
    Missing {
        /// Relative path.
        path: String,
    },
    /// The file's content differs; `diff` is a unified diff from the folder to the build.
    Changed {
        /// Relative path.
        path: String,
        /// Unified diff.
        diff: String,
    },
    /// toolgate wrote the file earlier and the build no longer produces it.
    Stale {
        /// Relative path.
        path: String,
    },
}

impl std::fmt::Display for Drift {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Drift::Missing { path } => writeln!(f, "missing: {path}"),
            Drift::Changed { path, diff } => write!(f, "changed: {path}\n{diff}"),
            Drift::Stale { path } => writeln!(f, "stale (would be removed): {path}"),
        }
    }
}

impl OutputFiles {
    /// No files.
    pub fn new() -> Self {
        OutputFiles::default()
    }

    /// Adds (or replaces) a file.
    pub fn insert(&mut self, path: impl Into<String>, content: impl Into<String>) {
        self.files.insert(path.into(), content.into());
    }

    /// Adds every file of `other` under a folder prefix.
    pub fn extend_under(&mut self, prefix: &str, other: OutputFiles) {
        for (p, c) in other.files {
            self.files.insert(format!("{prefix}/{p}"), c);
        }
    }

    /// The content of one file.
    pub fn get(&self, path: &str) -> Option<&str> {
        self.files.get(path).map(String::as_str)
    }

    /// Every file, in path order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.files.iter().map(|(p, c)| (p.as_str(), c.as_str()))
    }

    /// Number of files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether there are no files.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    fn manifest(&self) -> String {
        let mut s = String::from(
            "# Files written by `toolgate build`; stale ones are removed on the next build.\n",
        );
        for p in self.files.keys() {
            s.push_str(p);
            s.push('\n');
        }
        s
    }

    /// Writes the files into `dir` and removes what an earlier build wrote and this one does
    /// not. Returns the number of files whose content changed.
    pub fn write_to(&self, dir: &Path) -> Result<usize, EmitError> {
        create_dir(dir)?;
        let previous = read_manifest(dir);
        let mut folders: BTreeSet<PathBuf> = BTreeSet::new();
        for rel in self.files.keys() {
            if let Some(parent) = dir.join(rel).parent() {
                folders.insert(parent.to_path_buf());
            }
        }
        for f in &folders {
            create_dir(f)?;
        }
        // Two writers: most of the cost is the file system's, per file.
        let entries: Vec<(&String, &String)> = self.files.iter().collect();
        let half = entries.len().div_ceil(2);
        let (first, second) = entries.split_at(half);
        let write_all = |chunk: &[(&String, &String)]| -> Result<usize, EmitError> {
            let mut changed = 0;
            for (rel, content) in chunk {
                let path = dir.join(rel);
                if std::fs::read(&path).is_ok_and(|old| old == content.as_bytes()) {
                    continue;
                }
                write_atomic(&path, content.as_bytes())?;
                changed += 1;
            }
            Ok(changed)
        };
        let mut changed = std::thread::scope(|scope| {
            let other = scope.spawn(|| write_all(second));
            let mine = write_all(first);
            let theirs = other.join().unwrap_or_else(|_| {
                Err(EmitError::Io {
                    path: dir.to_path_buf(),
                    source: std::io::Error::other("writer thread panicked"),
                })
            });
            Ok::<usize, EmitError>(mine? + theirs?)
        })?;
        for rel in previous {
            if !self.files.contains_key(&rel) && safe_relative(&rel) {
                let path = dir.join(&rel);
                match std::fs::remove_file(&path) {
                    Ok(()) => {
                        changed += 1;
                        remove_empty_parents(dir, &path);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(EmitError::Io { path, source: e }),
                }
            }
        }
        write_atomic(&dir.join(MANIFEST), self.manifest().as_bytes())?;
        Ok(changed)
    }

    /// How `dir` differs from these files (empty when it is up to date).
    pub fn check(&self, dir: &Path) -> Vec<Drift> {
        let mut out = Vec::new();
        for (rel, content) in &self.files {
            match std::fs::read_to_string(dir.join(rel)) {
                Ok(old) if old == *content => {}
                Ok(old) => out.push(Drift::Changed {
                    path: rel.clone(),
                    diff: unified_diff(&old, content, rel),
                }),
                Err(_) => out.push(Drift::Missing { path: rel.clone() }),
            }
        }
        for rel in read_manifest(dir) {
            if !self.files.contains_key(&rel) && dir.join(&rel).exists() {
                out.push(Drift::Stale { path: rel });
            }
        }
        out
    }
}

/// A unified diff with three lines of context, `a/` the folder and `b/` the build.
pub fn unified_diff(old: &str, new: &str, path: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}

fn read_manifest(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join(MANIFEST))
        .map(|s| {
            s.lines()
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// A manifest entry must stay inside the folder.
fn safe_relative(rel: &str) -> bool {
    let p = Path::new(rel);
    p.is_relative()
        && p.components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
}

fn create_dir(dir: &Path) -> Result<(), EmitError> {
    std::fs::create_dir_all(dir).map_err(|e| EmitError::Io {
        path: dir.to_path_buf(),
        source: e,
    })
}

/// Writes through a temporary file in the same folder and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), EmitError> {
    let io = |p: &Path, e: std::io::Error| EmitError::Io {
        path: p.to_path_buf(),
        source: e,
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp: PathBuf = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(|e| io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(path, e)
    })
}

fn remove_empty_parents(root: &Path, file: &Path) {
    let mut dir = file.parent();
    while let Some(d) = dir {
        if d == root || !d.starts_with(root) {
            break;
        }
        if std::fs::remove_dir(d).is_err() {
            break;
        }
        dir = d.parent();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_checks_and_removes_stale_files() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = OutputFiles::new();
        a.insert("x/one.json", "1\n");
        a.insert("two.json", "2\n");
        a.write_to(dir.path()).unwrap();
        std::fs::write(dir.path().join("user.txt"), "mine").unwrap();
        assert!(a.check(dir.path()).is_empty());

        let mut b = OutputFiles::new();
        b.insert("two.json", "two\n");
        let drift = b.check(dir.path());
        assert_eq!(drift.len(), 2, "{drift:?}");
        b.write_to(dir.path()).unwrap();
        assert!(!dir.path().join("x").exists());
        assert!(dir.path().join("user.txt").exists());
        assert!(b.check(dir.path()).is_empty());
    }
}
