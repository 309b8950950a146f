//! [`OutputFiles`]: the files of one build, by relative path, and how they reach a folder.
//!
//! Writing is atomic per file (a temporary file in the same folder, then a rename) and skips
//! files whose content is unchanged (a file of another size is not even read), so timestamps
//! only move when content does; the manifest too is written only when it changed. The folder
//! keeps a manifest ([`MANIFEST`]) of what toolgate wrote there, each file with its BLAKE3 hash,
//! and the build's fingerprint ([`crate::emit::fingerprint`]). A later build removes the files
//! it no longer produces, and nothing else (a `target/` or `Cargo.lock` that cargo left in the
//! generated crate stays); [`current`] lets a build with the same fingerprint skip emitting
//! when every file is still as written. [`OutputFiles::check`] compares without writing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::emit::EmitError;

/// The manifest file listing what toolgate wrote into an output folder.
pub const MANIFEST: &str = ".toolgate-manifest";

/// The manifest line that carries the build's fingerprint.
const FINGERPRINT_PREFIX: &str = "# fingerprint: ";

/// Files by path relative to the output folder (`/`-separated), in path order, and the
/// fingerprint of the build that made them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OutputFiles {
    files: BTreeMap<String, String>,
    fingerprint: Option<String>,
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

    /// Records the fingerprint of the build these files come from (written to the manifest).
    pub fn set_fingerprint(&mut self, fingerprint: impl Into<String>) {
        self.fingerprint = Some(fingerprint.into());
    }

    /// The fingerprint of the build these files come from, when known.
    pub fn fingerprint(&self) -> Option<&str> {
        self.fingerprint.as_deref()
    }

    /// The manifest text: a header, the fingerprint, and `<BLAKE3 hex>  <path>` per file (the
    /// line layout `b3sum` prints).
    fn manifest(&self) -> String {
        let mut s = String::from(
            "# Files written by `toolgate build`; stale ones are removed on the next build.\n",
        );
        if let Some(f) = &self.fingerprint {
            s.push_str(FINGERPRINT_PREFIX);
            s.push_str(f);
            s.push('\n');
        }
        for (p, content) in &self.files {
            s.push_str(blake3::hash(content.as_bytes()).to_hex().as_str());
            s.push_str("  ");
            s.push_str(p);
            s.push('\n');
        }
        s
    }

    /// Writes the files into `dir` and removes what an earlier build wrote and this one does
    /// not. Returns the number of files whose content changed.
    pub fn write_to(&self, dir: &Path) -> Result<usize, EmitError> {
        create_dir(dir)?;
        let manifest_text = std::fs::read_to_string(dir.join(MANIFEST)).unwrap_or_default();
        let previous = Manifest::parse(&manifest_text).paths();
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
                if same_content(&path, content.as_bytes()) {
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
        let manifest = self.manifest();
        if manifest != manifest_text {
            write_atomic(&dir.join(MANIFEST), manifest.as_bytes())?;
        }
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
        let manifest_text = std::fs::read_to_string(dir.join(MANIFEST)).unwrap_or_default();
        for rel in Manifest::parse(&manifest_text).paths() {
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

/// Whether a file holds exactly `content`; a file of another size is not read.
fn same_content(path: &Path, content: &[u8]) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.len() == content.len() as u64)
        && std::fs::read(path).is_ok_and(|old| old == content)
}

/// A parsed manifest. Manifests written before fingerprints list bare paths.
#[derive(Debug, Default, PartialEq, Eq)]
struct Manifest {
    fingerprint: Option<String>,
    /// Each file, with the hash of what was written when the manifest records it.
    files: Vec<(String, Option<String>)>,
}

impl Manifest {
    fn parse(text: &str) -> Manifest {
        let mut m = Manifest::default();
        for line in text.lines() {
            if let Some(f) = line.strip_prefix(FINGERPRINT_PREFIX) {
                m.fingerprint = Some(f.trim().to_owned());
                continue;
            }
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some((hash, path)) = line.split_once("  ")
                && hash.len() == 64
                && hash.bytes().all(|b| b.is_ascii_hexdigit())
            {
                m.files.push((path.to_owned(), Some(hash.to_owned())));
            } else {
                m.files.push((line.to_owned(), None));
            }
        }
        m
    }

    fn paths(self) -> Vec<String> {
        self.files.into_iter().map(|(p, _)| p).collect()
    }
}

/// The number of files in `dir` when it holds the output of a build with this fingerprint,
/// untouched: its manifest records the fingerprint, and every file it lists is there with the
/// recorded hash. A build may then skip emitting; anything else (an older manifest, an edited
/// or missing file) is `None`.
pub fn current(dir: &Path, fingerprint: &str) -> Option<usize> {
    let text = std::fs::read_to_string(dir.join(MANIFEST)).ok()?;
    let manifest = Manifest::parse(&text);
    if manifest.fingerprint.as_deref() != Some(fingerprint) || manifest.files.is_empty() {
        return None;
    }
    let intact = manifest.files.iter().all(|(rel, hash)| {
        hash.as_deref().is_some_and(|h| {
            safe_relative(rel)
                && std::fs::read(dir.join(rel))
                    .is_ok_and(|bytes| blake3::hash(&bytes).to_hex().as_str() == h)
        })
    });
    intact.then_some(manifest.files.len())
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

    #[cfg(unix)]
    fn inode(p: &Path) -> u64 {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(p).unwrap().ino()
    }

    #[test]
    fn the_manifest_records_hashes_and_the_fingerprint() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = OutputFiles::new();
        a.insert("x/one.json", "1\n");
        a.insert("two words.json", "2\n");
        assert_eq!(current(dir.path(), "f1"), None);
        a.set_fingerprint("f1");
        a.write_to(dir.path()).unwrap();
        let text = std::fs::read_to_string(dir.path().join(MANIFEST)).unwrap();
        let m = Manifest::parse(&text);
        assert_eq!(m.fingerprint.as_deref(), Some("f1"));
        assert_eq!(
            m.files,
            vec![
                (
                    "two words.json".to_owned(),
                    Some(blake3::hash(b"2\n").to_hex().to_string())
                ),
                (
                    "x/one.json".to_owned(),
                    Some(blake3::hash(b"1\n").to_hex().to_string())
                ),
            ]
        );
        assert_eq!(current(dir.path(), "f1"), Some(2));
        assert_eq!(current(dir.path(), "f2"), None);
        // An edited file, even of the same size, or a missing one: not current.
        std::fs::write(dir.path().join("x/one.json"), "9\n").unwrap();
        assert_eq!(current(dir.path(), "f1"), None);
        a.write_to(dir.path()).unwrap();
        assert_eq!(current(dir.path(), "f1"), Some(2));
        std::fs::remove_file(dir.path().join("two words.json")).unwrap();
        assert_eq!(current(dir.path(), "f1"), None);
    }

    #[test]
    fn manifests_without_hashes_still_name_stale_files() {
        let m =
            Manifest::parse("# Files written by `toolgate build`\nbundle.json\ntools/mcp.json\n");
        assert_eq!(m.fingerprint, None);
        assert_eq!(m.paths(), vec!["bundle.json", "tools/mcp.json"]);
    }

    #[cfg(unix)]
    #[test]
    fn unchanged_files_and_manifest_are_not_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = OutputFiles::new();
        a.insert("one.json", "1\n");
        a.insert("two.json", "2\n");
        a.set_fingerprint("f");
        assert_eq!(a.write_to(dir.path()).unwrap(), 2);
        let manifest = dir.path().join(MANIFEST);
        let before = (inode(&manifest), inode(&dir.path().join("one.json")));
        assert_eq!(a.write_to(dir.path()).unwrap(), 0);
        assert_eq!(
            before,
            (inode(&manifest), inode(&dir.path().join("one.json")))
        );
        // A file of another size is rewritten (and the manifest, whose hash changed).
        a.insert("one.json", "11\n");
        assert_eq!(a.write_to(dir.path()).unwrap(), 1);
        assert_ne!(before.0, inode(&manifest));
        assert_ne!(before.1, inode(&dir.path().join("one.json")));
    }
}
