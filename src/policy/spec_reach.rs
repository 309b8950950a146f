//! [`SpecReach`]: how far a project's `specs:` globs may reach, shared by the loader (which
//! reports what it refuses), the policy files (which protect what the loader reads) and the
//! build-script API (which names the folders specs come from), so that the three agree on which
//! globs and files count.
//!
//! A glob may reach the project folder, or the repository it is in (the nearest folder above it
//! holding `.git`), so that a shared spec library of the same repository
//! (`../../tool-specs/*.yaml`) can be read. An absolute glob, a `..` after a wildcard, or a `..`
//! that climbs past that root would read files outside the project (`/**`, `../../../**` the
//! whole file system). A file a glob matches (or names) must also resolve inside: a symbolic
//! link in the project to a file outside it is not read through.

use std::path::{Path, PathBuf};

/// Why a `specs:` glob is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum GlobRefusal {
    /// The glob is absolute.
    Absolute,
    /// Its `..` climb past the boundary (or follow a wildcard).
    ClimbsOut,
}

/// The boundary `specs:` globs of one project stay within.
#[derive(Clone, Debug)]
pub(crate) struct SpecReach {
    /// The project folder, canonical where it exists.
    root: PathBuf,
    /// The project's repository (or the project folder when it is in none), canonical.
    boundary: PathBuf,
}

impl SpecReach {
    /// The reach of the project whose `toolgate.yaml` is in `root`.
    pub(crate) fn new(root: &Path) -> SpecReach {
        let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        let boundary = root
            .ancestors()
            .find(|a| a.join(".git").exists())
            .map_or_else(|| root.clone(), Path::to_path_buf);
        SpecReach { root, boundary }
    }

    /// The folder nothing a glob reads may lie outside.
    #[cfg_attr(not(feature = "compiler"), allow(dead_code))]
    pub(crate) fn boundary(&self) -> &Path {
        &self.boundary
    }

    /// Whether the glob may be expanded; why not when it may not.
    pub(crate) fn check_glob(&self, glob: &str) -> Result<(), GlobRefusal> {
        if glob.starts_with(['/', '\\']) || Path::new(glob).is_absolute() {
            return Err(GlobRefusal::Absolute);
        }
        if self.stays_within(glob) {
            Ok(())
        } else {
            Err(GlobRefusal::ClimbsOut)
        }
    }

    /// Whether a file a glob matched may be read: `Err` with where it leads when it resolves
    /// (through symbolic links) outside the boundary. A file that cannot be resolved is left to
    /// the reader, whose error says why.
    pub(crate) fn check_file(&self, file: &Path) -> Result<(), PathBuf> {
        match std::fs::canonicalize(file) {
            Ok(real) if !real.starts_with(&self.boundary) => Err(real),
            _ => Ok(()),
        }
    }

    /// Whether a relative glob's `..` folders, all before its first wildcard, keep it at or
    /// below the boundary (resolved lexically from the project folder).
    fn stays_within(&self, glob: &str) -> bool {
        let mut at = self.root.clone();
        let mut wild = false;
        for part in glob.split(['/', '\\']) {
            wild |= part.contains(['*', '?', '[', '{']);
            match part {
                ".." if wild => return false,
                ".." => {
                    if !at.pop() {
                        return false;
                    }
                }
                "" | "." => {}
                _ if wild => {}
                p => at.push(p),
            }
        }
        at.starts_with(&self.boundary)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A repository with a project two folders down, a library beside it and a file outside.
    fn layout() -> (tempfile::TempDir, PathBuf) {
        let outer = tempfile::tempdir().unwrap();
        let repo = outer.path().join("repo");
        let root = repo.join("projects/a");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("lib")).unwrap();
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(repo.join("lib/echo.yaml"), "x").unwrap();
        std::fs::write(outer.path().join("outside.yaml"), "x").unwrap();
        (outer, root)
    }

    #[test]
    fn globs_stay_in_the_repository() {
        let (outer, root) = layout();
        let reach = SpecReach::new(&root);
        assert_eq!(
            reach.boundary(),
            std::fs::canonicalize(outer.path().join("repo")).unwrap()
        );
        assert_eq!(reach.check_glob("specs/*.yaml"), Ok(()));
        assert_eq!(reach.check_glob("../../lib/*.yaml"), Ok(()));
        assert_eq!(reach.check_glob("./a/../b/**"), Ok(()));
        assert_eq!(reach.check_glob("/**"), Err(GlobRefusal::Absolute));
        assert_eq!(reach.check_glob("\\x"), Err(GlobRefusal::Absolute));
        assert_eq!(
            reach.check_glob("../../../*.yaml"),
            Err(GlobRefusal::ClimbsOut)
        );
        assert_eq!(
            reach.check_glob("../*/../../../x.yaml"),
            Err(GlobRefusal::ClimbsOut)
        );
        // After a wildcard `..` could go anywhere the wildcard did.
        assert_eq!(reach.check_glob("*/../x.yaml"), Err(GlobRefusal::ClimbsOut));
    }

    #[test]
    fn without_a_repository_the_project_folder_is_the_boundary() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        std::fs::create_dir_all(&root).unwrap();
        let reach = SpecReach::new(&root);
        assert_eq!(reach.check_glob("x/../y.yaml"), Ok(()));
        assert_eq!(reach.check_glob("../y.yaml"), Err(GlobRefusal::ClimbsOut));
    }

    #[test]
    fn a_file_linked_to_outside_is_refused() {
        let (outer, root) = layout();
        let reach = SpecReach::new(&root);
        let repo = outer.path().join("repo");
        std::os::unix::fs::symlink(outer.path().join("outside.yaml"), root.join("out.yaml"))
            .unwrap();
        std::os::unix::fs::symlink(repo.join("lib/echo.yaml"), root.join("in.yaml")).unwrap();
        std::os::unix::fs::symlink(outer.path(), root.join("up")).unwrap();
        std::fs::write(root.join("plain.yaml"), "x").unwrap();
        let real = std::fs::canonicalize(outer.path().join("outside.yaml")).unwrap();
        assert_eq!(reach.check_file(&root.join("out.yaml")), Err(real.clone()));
        assert_eq!(reach.check_file(&root.join("up/outside.yaml")), Err(real));
        assert_eq!(reach.check_file(&root.join("in.yaml")), Ok(()));
        assert_eq!(reach.check_file(&root.join("plain.yaml")), Ok(()));
        // Nothing there: the reader reports it.
        assert_eq!(reach.check_file(&root.join("missing.yaml")), Ok(()));
    }
}
