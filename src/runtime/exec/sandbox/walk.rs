//! The walk that finds what the view masks and makes read-only: every protected match in the
//! workspace, regular files that are hard links of a protected file, and every `.git`.
//!
//! The whole tree is walked — ignore files are not honoured (a secret is no less secret for
//! being git-ignored) and links are never followed (a link holds no secret of its own: what it
//! points to is masked where it is, or is outside the view). A protected folder is masked whole
//! and not searched for masks; it is still listed for the identities of its multiply-linked
//! files, so that a hard link elsewhere in the tree to a file inside it is masked too. The
//! walk runs in the shim before every tool process (its cost is measured in `benches/exec.rs`).

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::policy::ProtectedSet;

/// What the walk found, as paths relative to the workspace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Found {
    /// Protected files (and other non-folders), and hard links of protected files.
    pub files: Vec<PathBuf>,
    /// Protected folders.
    pub folders: Vec<PathBuf>,
    /// `.git` folders and files (`gitdir:` pointers of worktrees and submodules).
    pub git: Vec<PathBuf>,
    /// Entries looked at.
    pub entries: u64,
}

impl Found {
    /// How many masks the view needs.
    pub fn masks(&self) -> usize {
        self.files.len() + self.folders.len()
    }
}

/// Walks `root` (a folder) for the masks of `set`.
pub fn walk(root: &Path, set: &ProtectedSet) -> Found {
    let mut found = Found::default();
    // Identities of protected files with more than one link, and candidates elsewhere.
    let mut protected_ids: HashSet<(u64, u64)> = HashSet::new();
    let mut linked: HashMap<(u64, u64), Vec<PathBuf>> = HashMap::new();
    // (folder relative to the root, inside a protected folder, inside an excepted one)
    let mut stack: Vec<(PathBuf, bool, bool)> = vec![(PathBuf::new(), false, false)];
    while let Some((dir, hidden, excepted_above)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&dir)) else {
            continue;
        };
        for entry in entries.flatten() {
            found.entries += 1;
            let rel = dir.join(entry.file_name());
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_symlink() {
                continue;
            }
            // Paths that are not UTF-8 are matched lossily (a protected name stays one).
            let (protected, excepted) = if hidden {
                (false, excepted_above)
            } else {
                set.judge_entry(&rel.to_string_lossy(), excepted_above)
            };
            if kind.is_dir() {
                if protected {
                    found.folders.push(rel.clone());
                } else if !hidden && entry.file_name() == ".git" {
                    found.git.push(rel.clone());
                }
                stack.push((rel, hidden || protected, excepted));
                continue;
            }
            if !hidden && entry.file_name() == ".git" {
                found.git.push(rel.clone());
            }
            if protected {
                found.files.push(rel.clone());
            }
            if kind.is_file()
                && let Ok(meta) = entry.metadata()
                && meta.nlink() > 1
            {
                let id = (meta.dev(), meta.ino());
                if protected || hidden {
                    protected_ids.insert(id);
                } else {
                    linked.entry(id).or_default().push(rel);
                }
            }
        }
    }
    for (id, paths) in linked {
        if protected_ids.contains(&id) {
            found.files.extend(paths);
        }
    }
    found.files.sort();
    found.folders.sort();
    found.git.sort();
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::ProtectPolicy;

    #[test]
    fn finds_protected_matches_links_and_git() {
        let ws = tempfile::tempdir().unwrap();
        let w = ws.path();
        for (f, t) in [
            (".env", "SECRET"),
            ("src/app.py", "x"),
            ("config/.env.production", "SECRET"),
            ("deploy/.aws/credentials", "SECRET"),
            ("vendor/lib/.env", "SECRET"),
            ("vendor/lib/.git/config", "[core]"),
            (".git/HEAD", "ref"),
            ("sub/.git", "gitdir: /elsewhere"),
            ("node_modules/pkg/.env", "SECRET"),
        ] {
            let p = w.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, t).unwrap();
        }
        // A hard link to .env under an innocent name, one into the protected folder, and a
        // symbolic link (never followed, never masked).
        std::fs::hard_link(w.join(".env"), w.join("src/notes.txt")).unwrap();
        std::fs::hard_link(w.join("deploy/.aws/credentials"), w.join("creds.txt")).unwrap();
        std::fs::hard_link(w.join("src/app.py"), w.join("src/app2.py")).unwrap();
        std::os::unix::fs::symlink(".env", w.join("link")).unwrap();
        let set = ProtectedSet::new(&ProtectPolicy::default()).unwrap();
        let found = walk(w, &set);
        let p = |v: &[&str]| v.iter().map(PathBuf::from).collect::<Vec<_>>();
        assert_eq!(
            found.files,
            p(&[
                ".env",
                "config/.env.production",
                "creds.txt",
                "node_modules/pkg/.env",
                "src/notes.txt",
                "vendor/lib/.env",
            ])
        );
        assert_eq!(found.folders, p(&["deploy/.aws"]));
        // The walk's one-step judgement agrees with the whole-path one, exceptions included.
        let mut policy = ProtectPolicy::default();
        policy.except.push(crate::ir::ProtectedPath {
            glob: "/node_modules".into(),
            reason: "test".into(),
            default: false,
        });
        let excepting = ProtectedSet::new(&policy).unwrap();
        let narrower = walk(w, &excepting);
        assert!(
            !narrower
                .files
                .contains(&PathBuf::from("node_modules/pkg/.env"))
        );
        for f in &narrower.files {
            let hard_link = ["creds.txt", "src/notes.txt"].contains(&f.to_str().unwrap());
            assert!(
                hard_link || excepting.protects(f.to_str().unwrap()).is_some(),
                "{f:?}"
            );
        }
        assert_eq!(found.git, p(&[".git", "sub/.git", "vendor/lib/.git"]));
        assert_eq!(found.masks(), 7);
    }
}
