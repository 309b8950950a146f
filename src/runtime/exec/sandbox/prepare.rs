//! The view resolved against the host, in the shim before anything forks: the real paths of
//! the binds (a missing root is left out), the links on their way (`/bin` → `usr/bin`, to
//! recreate in an empty view), the walk of the workspace ([`walk`](super::walk)) and every
//! mask. [`mounts::enter`](super::mounts) then builds it.

use std::path::{Component, Path, PathBuf};

use super::view::{ViewBase, ViewPlan, matches_star};
use super::walk::{self, Found};

/// A bind of a host folder at the same path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Bind {
    pub(super) path: PathBuf,
    pub(super) writable: bool,
    /// Whether the host has mounts beneath it (each must be made read-only too).
    pub(super) nested: bool,
}

/// A mask: an empty file or folder over a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Mask {
    pub(super) path: PathBuf,
    pub(super) folder: bool,
}

/// The view of one execution, with every path resolved on the host.
#[derive(Clone, Debug)]
pub(super) struct Prepared {
    pub(super) view: ViewPlan,
    pub(super) binds: Vec<Bind>,
    /// Links of the host to recreate in the view (`/bin` → `usr/bin`).
    pub(super) links: Vec<(PathBuf, PathBuf)>,
    /// `.git` folders and files (absolute), made read-only.
    pub(super) git: Vec<(PathBuf, bool)>,
    /// The masks.
    pub(super) masks: Vec<Mask>,
    /// What the walk found.
    pub(super) found: Found,
}

/// Follows a path as written: the links met on the way (to recreate in an empty view) and
/// the real path.
fn resolve(path: &Path) -> (Vec<(PathBuf, PathBuf)>, Option<PathBuf>) {
    let mut links = Vec::new();
    let mut cur = PathBuf::from("/");
    for c in path.components() {
        let Component::Normal(name) = c else {
            continue;
        };
        let next = cur.join(name);
        match std::fs::symlink_metadata(&next) {
            Ok(m) if m.file_type().is_symlink() => {
                if let Ok(target) = std::fs::read_link(&next) {
                    links.push((next.clone(), target));
                }
                match next.canonicalize() {
                    Ok(real) => cur = real,
                    Err(_) => return (links, None),
                }
            }
            Ok(_) => cur = next,
            Err(_) => return (links, None),
        }
    }
    (links, Some(cur))
}

/// Resolves a view against the host: real paths of the binds (missing ones dropped), the
/// links on their way, the walk of the workspace, the masks.
pub(super) fn prepare(view: &ViewPlan) -> Result<Prepared, String> {
    let mut binds: Vec<Bind> = Vec::new();
    let mut links = Vec::new();
    for (roots, writable) in [(&view.read, false), (&view.write, true)] {
        for r in roots {
            let (mut l, real) = resolve(r);
            if view.base == ViewBase::Empty {
                links.append(&mut l);
            }
            if let Some(path) = real {
                binds.retain(|b| b.path != path);
                binds.push(Bind {
                    path,
                    writable,
                    nested: false,
                });
            }
        }
    }
    binds.sort_by_key(|b| (b.path.components().count(), b.path.clone()));
    let host_mounts =
        mount_points(&std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default());
    for b in &mut binds {
        b.nested = host_mounts
            .iter()
            .any(|m| m != &b.path && m.starts_with(&b.path));
    }
    // A link that lands inside a bind already exists there (it is the host's).
    links.retain(|(at, _)| !binds.iter().any(|b| at.starts_with(&b.path)));
    links.sort();
    links.dedup();
    let prepared_view = view.clone();
    let mut out = Prepared {
        view: prepared_view,
        binds,
        links,
        git: Vec::new(),
        masks: Vec::new(),
        found: Found::default(),
    };
    if out.shows(&view.workspace) {
        let set = view
            .protect
            .compiled()
            .map_err(|e| format!("the protected globs do not compile: {e}"))?;
        let found = walk::walk(&view.workspace, &set);
        let ws = &view.workspace;
        out.masks.extend(found.files.iter().map(|r| Mask {
            path: ws.join(r),
            folder: false,
        }));
        out.masks.extend(found.folders.iter().map(|r| Mask {
            path: ws.join(r),
            folder: true,
        }));
        if view.git_read_only {
            out.git = found
                .git
                .iter()
                .map(|r| {
                    let p = ws.join(r);
                    let dir = p.is_dir();
                    (p, dir)
                })
                .collect();
        }
        out.found = found;
    }
    let mut extra: Vec<PathBuf> = Vec::new();
    for h in &view.hide {
        let name = h.file_name().and_then(|n| n.to_str()).unwrap_or("");
        match (name.contains('*'), h.parent()) {
            (true, Some(dir)) => {
                if let Ok(entries) = std::fs::read_dir(dir) {
                    extra.extend(
                        entries
                            .flatten()
                            .filter(|e| {
                                e.file_name()
                                    .to_str()
                                    .is_some_and(|n| matches_star(name, n))
                            })
                            .map(|e| e.path()),
                    );
                }
            }
            _ => extra.push(h.clone()),
        }
    }
    // The policy's files and spec folders: read-only binds onto themselves, like `.git` (a
    // bound name cannot be unlinked, renamed over or written; a bound folder takes no new file).
    for p in &view.policy_read_only {
        let Ok(meta) = std::fs::metadata(p) else {
            continue;
        };
        if !out.shows(p) || out.masks.iter().any(|m| p.starts_with(&m.path)) {
            continue;
        }
        out.git.push((p.clone(), meta.is_dir()));
    }
    extra.extend(view.state_dir.iter().cloned());
    for p in extra {
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.file_type().is_symlink() || !out.shows(&p) {
            continue;
        }
        if out.masks.iter().any(|m| p.starts_with(&m.path)) {
            continue;
        }
        out.masks.push(Mask {
            path: p,
            folder: meta.is_dir(),
        });
    }
    Ok(out)
}

impl Prepared {
    /// Whether a host path is visible in the view.
    fn shows(&self, p: &Path) -> bool {
        self.view.base != ViewBase::Empty
            || self.binds.iter().any(|b| p.starts_with(&b.path))
            || (self.view.private_tmp.is_none() && p.starts_with("/tmp"))
    }

    /// How many masks the view has.
    pub(super) fn mask_count(&self) -> usize {
        self.masks.len()
    }
}

/// Decodes the octal escapes of a mountinfo field (`\040` is a space).
pub(super) fn unescape(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() && b[i + 1..i + 4].iter().all(u8::is_ascii_digit) {
            let n = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(n);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The mount points of a mountinfo text.
pub(super) fn mount_points(mountinfo: &str) -> Vec<PathBuf> {
    mountinfo
        .lines()
        .filter_map(|l| l.split(' ').nth(4).map(unescape))
        .map(PathBuf::from)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_mountinfo_escapes() {
        assert_eq!(unescape("/a\\040b"), "/a b");
        assert_eq!(unescape("/plain"), "/plain");
        assert_eq!(unescape("/x\\"), "/x\\");
    }

    #[test]
    fn follows_links_on_the_way() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("usr/bin");
        std::fs::create_dir_all(&real).unwrap();
        std::os::unix::fs::symlink("usr/bin", d.path().join("bin")).unwrap();
        let (links, path) = resolve(&d.path().join("bin"));
        assert_eq!(
            links,
            vec![(d.path().join("bin"), PathBuf::from("usr/bin"))]
        );
        assert_eq!(path, Some(real.canonicalize().unwrap()));
        assert_eq!(resolve(&d.path().join("missing")).1, None);
    }
}
