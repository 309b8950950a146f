//! `{toolchain}`: the folders outside the system folders a tool's programs need, found from
//! the tool's own command and environment — never a home folder as a whole.
//!
//! Candidates: every absolute folder on the tool's `PATH`; the folder of the program as `PATH`
//! resolves it, and the folder of its real path (links followed); the values of the toolchain
//! variables in [`TOOLCHAIN_VARIABLES`] (`CARGO_HOME`, `VIRTUAL_ENV`, …). A candidate inside a
//! system folder or the workspace is already in the view. Otherwise its toolchain root is its
//! parent when it is a `bin`, `sbin` or `shims` folder (`~/.cargo/bin` → `~/.cargo`,
//! `~/.pyenv/shims` → `~/.pyenv`), else itself. A root that is `/`, a home folder (the tool's
//! `HOME`, `/root`, `/home/*`) or above one, or that holds the state folder, is refused, and the
//! candidate itself is used instead when it passes the same test (`~/bin` stays `~/bin`,
//! `~/.local/bin` stays `~/.local/bin`). A `.cargo` root brings its sibling `.rustup` when
//! `RUSTUP_HOME` is not set (rustup's default).

use std::path::{Path, PathBuf};

use super::view::{SYSTEM_FOLDERS, outermost};

/// Environment variables that name a toolchain's folder.
pub const TOOLCHAIN_VARIABLES: &[&str] = &[
    "CARGO_HOME",
    "RUSTUP_HOME",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "PYENV_ROOT",
    "GOROOT",
    "GOPATH",
    "JAVA_HOME",
    "NVM_DIR",
    "VOLTA_HOME",
    "PNPM_HOME",
    "BUN_INSTALL",
    "RBENV_ROOT",
    "GEM_HOME",
];

/// What a toolchain root must stay clear of.
#[derive(Clone, Debug)]
pub struct Guard<'a> {
    /// The workspace (already in the view; a root inside it would shadow it).
    pub workspace: &'a Path,
    /// The state folder (a root holding it is refused).
    pub state_dir: Option<&'a Path>,
}

fn var<'a>(env: &'a [(String, String)], name: &str) -> Option<&'a str> {
    env.iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn in_system(p: &Path) -> bool {
    SYSTEM_FOLDERS.iter().any(|s| p.starts_with(s))
}

/// The toolchain roots of a program run with an environment (existing folders only).
pub fn roots(
    program: &str,
    env: &[(String, String)],
    cwd: &Path,
    guard: &Guard<'_>,
) -> Vec<PathBuf> {
    let path_dirs: Vec<PathBuf> = var(env, "PATH")
        .unwrap_or("")
        .split(':')
        .filter(|d| d.starts_with('/'))
        .map(PathBuf::from)
        .collect();
    let mut candidates: Vec<PathBuf> = path_dirs.clone();
    let resolved = if program.contains('/') {
        Some(cwd.join(program))
    } else {
        path_dirs
            .iter()
            .map(|d| d.join(program))
            .find(|p| p.is_file())
    };
    if let Some(p) = resolved {
        candidates.extend(p.parent().map(Path::to_path_buf));
        if let Ok(real) = p.canonicalize() {
            candidates.extend(real.parent().map(Path::to_path_buf));
        }
    }
    let homes = homes(var(env, "HOME"));
    let mut out = Vec::new();
    for v in TOOLCHAIN_VARIABLES {
        if let Some(value) = var(env, v).filter(|x| x.starts_with('/')) {
            let p = PathBuf::from(value);
            if acceptable(&p, &homes, guard) {
                out.push(p);
            }
        }
    }
    for c in candidates {
        if in_system(&c) || c.starts_with(guard.workspace) || !c.is_dir() {
            continue;
        }
        let named = c.file_name().and_then(|n| n.to_str());
        let root = match (named, c.parent()) {
            (Some("bin" | "sbin" | "shims"), Some(parent)) => parent.to_path_buf(),
            _ => c.clone(),
        };
        let chosen = if acceptable(&root, &homes, guard) {
            root
        } else if acceptable(&c, &homes, guard) {
            c
        } else {
            continue;
        };
        if chosen.file_name().is_some_and(|n| n == ".cargo")
            && var(env, "RUSTUP_HOME").is_none()
            && let Some(rustup) = chosen.parent().map(|p| p.join(".rustup"))
            && rustup.is_dir()
            && acceptable(&rustup, &homes, guard)
        {
            out.push(rustup);
        }
        out.push(chosen);
    }
    out.retain(|p| p.is_dir() && !in_system(p));
    outermost(out)
}

/// The home folders a root must not be or contain: the tool's `HOME`, `/root`, and every
/// folder under `/home`.
fn homes(home: Option<&str>) -> Vec<PathBuf> {
    let mut h = vec![PathBuf::from("/root")];
    if let Some(home) = home.filter(|x| x.starts_with('/')) {
        h.push(PathBuf::from(home));
    }
    if let Ok(entries) = std::fs::read_dir("/home") {
        h.extend(entries.flatten().map(|e| e.path()));
    }
    h
}

/// Whether a folder may be shown as a toolchain root.
fn acceptable(p: &Path, homes: &[PathBuf], guard: &Guard<'_>) -> bool {
    let p = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    if p == Path::new("/") || p.parent() == Some(Path::new("/home")) || in_system(&p) {
        return false;
    }
    if homes.iter().any(|h| h.starts_with(&p)) {
        return false;
    }
    if guard.workspace.starts_with(&p) || p.starts_with(guard.workspace) {
        return false;
    }
    !guard.state_dir.is_some_and(|s| s.starts_with(&p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn a_bin_folder_brings_its_toolchain_never_a_home() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        for d in [
            ".cargo/bin",
            ".rustup/toolchains",
            ".pyenv/shims",
            ".pyenv/versions/3.11/bin",
            "bin",
            ".local/bin",
            ".local/state/toolgate/p",
        ] {
            std::fs::create_dir_all(h.join(d)).unwrap();
        }
        std::fs::write(h.join(".pyenv/versions/3.11/bin/python3"), "").unwrap();
        std::os::unix::fs::symlink(
            h.join(".pyenv/versions/3.11/bin/python3"),
            h.join(".local/bin/python3"),
        )
        .unwrap();
        let ws = tempfile::tempdir().unwrap();
        let state = h.join(".local/state/toolgate/p");
        let path = [".cargo/bin", ".pyenv/shims", "bin", ".local/bin"]
            .map(|d| h.join(d).to_string_lossy().into_owned())
            .join(":")
            + ":/usr/bin";
        let e = env(&[("PATH", &path), ("HOME", &h.to_string_lossy())]);
        let guard = Guard {
            workspace: ws.path(),
            state_dir: Some(&state),
        };
        let got = roots("python3", &e, ws.path(), &guard);
        assert_eq!(
            got,
            vec![
                h.join(".cargo"),
                h.join(".local/bin"),
                h.join(".pyenv"),
                h.join(".rustup"),
                h.join("bin"),
            ]
        );
        // RUSTUP_HOME set: it names the folder, no sibling is guessed.
        let mut e2 = e.clone();
        e2.push(("RUSTUP_HOME".into(), "/nonexistent/rustup".into()));
        assert!(!roots("true", &e2, ws.path(), &guard).contains(&h.join(".rustup")));
        // A home folder given as a toolchain variable is refused.
        let e3 = env(&[
            ("VIRTUAL_ENV", &h.to_string_lossy()),
            ("HOME", &h.to_string_lossy()),
        ]);
        assert_eq!(roots("true", &e3, ws.path(), &guard), Vec::<PathBuf>::new());
    }
}
