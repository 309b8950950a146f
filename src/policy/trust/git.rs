//! `--trust-git REV`: the trusted policy is the one committed at REV. Every policy file must
//! hold exactly what `git cat-file` gives for it at REV; a file that differs, or that REV does
//! not have, is refused. Read with the `git` command line, one `git cat-file --batch` for every
//! file.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::TrustError;
use super::fingerprint::PolicySnapshot;

/// A policy file that is not as committed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GitDifference {
    /// The file, as the fingerprint names it.
    pub path: String,
    /// Why: `differs from REV`, `is not in REV`, `is outside the repository`.
    pub why: String,
}

fn git(dir: &Path, args: &[&str]) -> Result<String, TrustError> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| TrustError::Git(format!("cannot run git: {e}")))?;
    if !out.status.success() {
        return Err(TrustError::Git(format!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The policy files that differ from their content at `rev` (empty: the policy is the
/// committed one).
pub fn differences_from_git(
    snapshot: &PolicySnapshot,
    rev: &str,
) -> Result<Vec<GitDifference>, TrustError> {
    let root = &snapshot.root;
    let top = PathBuf::from(git(root, &["rev-parse", "--show-toplevel"])?.trim());
    let top = std::fs::canonicalize(&top).unwrap_or(top);
    let commit = git(
        root,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ],
    )
    .map_err(|_| {
        TrustError::Git(format!(
            "`{rev}` is not a revision of the repository at {}",
            top.display()
        ))
    })?;
    let commit = commit.trim();
    let mut wanted = Vec::new();
    let mut out = Vec::new();
    for ((file, bytes), disk) in snapshot
        .fingerprint
        .files
        .iter()
        .zip(&snapshot.contents)
        .zip(&snapshot.paths)
    {
        let absolute = if Path::new(&file.path).is_absolute() {
            PathBuf::from(&file.path)
        } else {
            root.join(&file.path)
        };
        let in_repo = absolute
            .strip_prefix(&top)
            .ok()
            .or_else(|| disk.strip_prefix(&top).ok())
            .map(|p| p.to_string_lossy().replace('\\', "/"));
        match in_repo {
            Some(rel) => wanted.push((file.path.clone(), rel, bytes)),
            None => out.push(GitDifference {
                path: file.path.clone(),
                why: "is outside the repository".into(),
            }),
        }
    }
    let mut child = Command::new("git")
        .args(["cat-file", "--batch"])
        .current_dir(&top)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| TrustError::Git(format!("cannot run git: {e}")))?;
    let mut request = String::new();
    for (_, rel, _) in &wanted {
        request.push_str(&format!("{commit}:{rel}\n"));
    }
    // Written from a thread: git answers while it reads, and both pipes have a limit.
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| TrustError::Git("git cat-file has no input".into()))?;
    let writer = std::thread::spawn(move || stdin.write_all(request.as_bytes()));
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| TrustError::Git("git cat-file has no output".into()))?;
    let mut reader = BufReader::new(stdout);
    let broken = |e: std::io::Error| TrustError::Git(format!("git cat-file: {e}"));
    for (name, _, bytes) in &wanted {
        let mut header = String::new();
        reader.read_line(&mut header).map_err(broken)?;
        let fields: Vec<&str> = header.split_whitespace().collect();
        match fields.as_slice() {
            [_, "blob", size] => {
                let size: usize = size
                    .parse()
                    .map_err(|_| TrustError::Git(format!("git cat-file: bad header {header}")))?;
                let mut blob = vec![0; size];
                reader.read_exact(&mut blob).map_err(broken)?;
                let mut newline = [0u8; 1];
                reader.read_exact(&mut newline).map_err(broken)?;
                if blob != **bytes {
                    out.push(GitDifference {
                        path: name.clone(),
                        why: format!("differs from {rev}"),
                    });
                }
            }
            _ if header.trim_end().ends_with("missing") => out.push(GitDifference {
                path: name.clone(),
                why: format!("is not in {rev}"),
            }),
            _ => {
                // A tree or submodule at that path: not the committed file.
                let size = fields
                    .get(2)
                    .and_then(|s| s.parse::<u64>().ok())
                    .unwrap_or(0);
                std::io::copy(&mut (&mut reader).take(size + 1), &mut std::io::sink())
                    .map_err(broken)?;
                out.push(GitDifference {
                    path: name.clone(),
                    why: format!("is not a file in {rev}"),
                });
            }
        }
    }
    let _ = writer.join();
    let _ = child.wait();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::trust::Fingerprint;

    fn sh(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn committed_files_pass_and_changed_or_new_ones_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        sh(d, &["init", "-q"]);
        std::fs::write(d.join("toolgate.yaml"), "a\n").unwrap();
        std::fs::write(d.join("spec.yaml"), "b\n").unwrap();
        sh(d, &["add", "."]);
        sh(d, &["commit", "-q", "-m", "one"]);
        let files = [
            d.join("toolgate.yaml"),
            d.join("spec.yaml"),
            d.join("new.yaml"),
        ];
        let snap = Fingerprint::read(d, &files).unwrap();
        assert_eq!(differences_from_git(&snap, "HEAD").unwrap(), vec![]);
        std::fs::write(d.join("spec.yaml"), "changed\n").unwrap();
        std::fs::write(d.join("new.yaml"), "c\n").unwrap();
        let snap = Fingerprint::read(d, &files).unwrap();
        assert_eq!(
            differences_from_git(&snap, "HEAD").unwrap(),
            vec![
                GitDifference {
                    path: "new.yaml".into(),
                    why: "is not in HEAD".into()
                },
                GitDifference {
                    path: "spec.yaml".into(),
                    why: "differs from HEAD".into()
                },
            ]
        );
        assert!(matches!(
            differences_from_git(&snap, "nope"),
            Err(TrustError::Git(_))
        ));
    }
}
