//! [`PolicyFiles`]: the files a loaded project's policy is read from, which no tool may change.
//!
//! A tool that rewrites `toolgate.yaml` or a spec changes the policy that governs the next call,
//! so these files are out of every tool's reach by construction: the builtins refuse to write
//! them, command tools see them read-only, and nothing in the policy can open them. The set is
//! computed once at start-up: the project file, every file the `specs:` globs match, the key
//! files the project reads (`jwks_file`), plus the `specs:` globs themselves (a spec created after
//! start-up that a glob matches is a policy file too), the state folder and the trust store
//! ([`crate::policy::trust::trust_dir`]). Schemas and permission examples are written inside the
//! spec files (a `$ref` is local to its document), so they add no files of their own; toolsets are
//! part of `toolgate.yaml`.

use std::path::{Component, Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::policy::spec_reach::SpecReach;

/// The spec globs of a project whose `toolgate.yaml` names none (as `spec::load` uses).
pub const DEFAULT_SPEC_GLOBS: &[&str] = &["tool-specs/**/*.{yaml,yml}"];

/// The project file names (`toolgate.yaml`, `toolgate.yml`).
const PROJECT_FILES: &[&str] = &["toolgate.yaml", "toolgate.yml"];

/// Folder recursion limit when expanding the spec globs (as the loader's).
const MAX_WALK_DEPTH: usize = 32;

/// Why a path is a policy file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PolicyFileReason {
    /// The project file (`toolgate.yaml`).
    ProjectFile,
    /// A spec file the project loaded.
    SpecFile,
    /// A path one of the `specs:` globs matches (a spec created after start-up included).
    SpecGlob {
        /// The glob, as written.
        glob: String,
    },
    /// A key file the project reads (`serve.auth.issuers[].jwks_file`).
    KeyFile,
    /// The state folder or a path inside it (journal, artifacts, locks).
    StateDir,
    /// The trust store or a path inside it.
    TrustDir,
}

impl PolicyFileReason {
    /// What the path is, as a phrase: "the project file", "inside the trust store".
    pub fn what(&self) -> String {
        match self {
            PolicyFileReason::ProjectFile => "the project file".to_owned(),
            PolicyFileReason::SpecFile => "a tool spec the project loads".to_owned(),
            PolicyFileReason::SpecGlob { glob } => {
                format!("matched by the project's `specs:` glob `{glob}`")
            }
            PolicyFileReason::KeyFile => "a key file the project reads (`jwks_file`)".to_owned(),
            PolicyFileReason::StateDir => {
                "inside the state folder (the journal and artifacts)".to_owned()
            }
            PolicyFileReason::TrustDir => "inside the trust store".to_owned(),
        }
    }

    /// The refusal a tool gets for writing `shown` (the path as the call named it).
    pub fn refusal(&self, shown: &str) -> String {
        format!(
            "{shown} is a policy file ({}): tools cannot change the policy that governs them; edit it yourself and run `toolgate trust`",
            self.what()
        )
    }
}

/// The files a loaded project's policy is read from, and the folders no tool may write.
#[derive(Clone, Debug)]
pub struct PolicyFiles {
    /// The project folder (canonical when it exists).
    root: PathBuf,
    /// The policy files, absolute, sorted, deduplicated.
    paths: Vec<PathBuf>,
    /// Why each of `paths` is one.
    reasons: Vec<PolicyFileReason>,
    /// Where the files' links lead (canonical), when that differs from the path.
    targets: Vec<(PathBuf, usize)>,
    /// Device and inode of each file that exists (a hard link is the same file).
    identities: Vec<((u64, u64), usize)>,
    /// The `specs:` globs, relative to the project folder.
    spec_globs: Vec<String>,
    /// The globs compiled (`*` within one folder, as the loader reads them).
    spec_set: GlobSet,
    /// The state folder, when known.
    state_dir: Option<PathBuf>,
    /// The trust store, when there is one.
    trust_dir: Option<PathBuf>,
}

/// A `specs:` glob that does not compile.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the spec glob `{glob}` is not valid: {message}")]
pub struct SpecGlobError {
    /// The glob.
    pub glob: String,
    /// Why.
    pub message: String,
}

impl PolicyFiles {
    /// The policy files of a project folder: its project file (`project_file`, else
    /// `toolgate.yaml` or `toolgate.yml` there, when present), every file `spec_globs` match
    /// (the default globs when empty), the `key_files` (relative to the folder), and the trust
    /// store. The state folder is added by [`PolicyFiles::with_state_dir`].
    pub fn new(
        root: &Path,
        project_file: Option<&Path>,
        spec_globs: &[String],
        key_files: &[String],
    ) -> Result<PolicyFiles, SpecGlobError> {
        let root = std::fs::canonicalize(root).unwrap_or_else(|_| absolute(root));
        let reach = SpecReach::new(&root);
        // A glob the loader refuses (absolute, or climbing out) is not expanded: the loader
        // reports it, and what it would reach is not the project's to protect.
        let spec_globs: Vec<String> = if spec_globs.is_empty() {
            DEFAULT_SPEC_GLOBS.iter().map(|g| (*g).to_owned()).collect()
        } else {
            spec_globs
                .iter()
                .filter(|g| reach.check_glob(g).is_ok())
                .cloned()
                .collect()
        };
        let spec_set = compile(&spec_globs)?;
        let mut files: Vec<(PathBuf, PolicyFileReason)> = Vec::new();
        match project_file {
            Some(p) => files.push((lexical(&root.join(p)), PolicyFileReason::ProjectFile)),
            None => files.extend(
                PROJECT_FILES
                    .iter()
                    .map(|n| root.join(n))
                    .filter(|p| p.is_file())
                    .map(|p| (p, PolicyFileReason::ProjectFile)),
            ),
        }
        for glob in &spec_globs {
            // As the loader: a file linked outside the project is not read, so not a spec.
            for f in expand(&root, glob)?
                .into_iter()
                .filter(|f| reach.check_file(f).is_ok())
            {
                files.push((f, PolicyFileReason::SpecFile));
            }
        }
        for k in key_files {
            files.push((lexical(&root.join(k)), PolicyFileReason::KeyFile));
        }
        files.sort_by(|a, b| a.0.cmp(&b.0));
        files.dedup_by(|a, b| a.0 == b.0);
        let mut targets = Vec::new();
        let mut identities = Vec::new();
        for (i, (f, _)) in files.iter().enumerate() {
            if let Ok(real) = std::fs::canonicalize(f)
                && real != *f
            {
                targets.push((real, i));
            }
            if let Some(id) = identity(f) {
                identities.push((id, i));
            }
        }
        let (paths, reasons) = files.into_iter().unzip();
        Ok(PolicyFiles {
            root,
            paths,
            reasons,
            targets,
            identities,
            spec_globs,
            spec_set,
            state_dir: None,
            trust_dir: crate::policy::trust::trust_dir().map(|d| lexical(&d)),
        })
    }

    /// The policy files of a project folder laid out by convention (its `toolgate.yaml`, the
    /// default spec globs): what a runtime made from a bundle alone protects.
    pub fn at_root(root: &Path) -> PolicyFiles {
        PolicyFiles::new(root, None, &[], &[])
            .unwrap_or_else(|e| unreachable!("the default spec globs compile: {e}"))
    }

    /// The paths command tools see read-only: every file, and every spec folder (so no new spec
    /// appears in one) that is not the workspace or above it (binding those read-only would
    /// make the whole workspace read-only).
    pub fn read_only_paths(&self, workspace: &Path) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = self
            .spec_folders()
            .into_iter()
            .filter(|f| !workspace.starts_with(f))
            .collect();
        for f in self.paths.iter().chain(self.targets.iter().map(|(t, _)| t)) {
            if !out.iter().any(|d| f.starts_with(d)) {
                out.push(f.clone());
            }
        }
        out.sort();
        out.dedup();
        out
    }

    /// The policy files of what the loader read: its project file, the files its `specs:`
    /// globs match and its `jwks_file`s.
    #[cfg(feature = "compiler")]
    pub fn of(loaded: &crate::spec::load::LoadedSpecs) -> Result<PolicyFiles, SpecGlobError> {
        let project = loaded.project.as_ref();
        // The loader's project file lies in its project folder by construction.
        let project_file = project
            .and_then(|(id, _)| loaded.sources.get(*id))
            .and_then(|f| f.path.file_name().map(PathBuf::from));
        let globs: Vec<String> = project
            .and_then(|(_, p)| p.specs.as_ref())
            .map(|s| s.value.iter().map(|g| g.value.clone()).collect())
            .unwrap_or_default();
        let keys: Vec<String> = project
            .and_then(|(_, p)| p.serve.as_ref())
            .and_then(|s| s.value.auth.as_ref())
            .map(|a| {
                a.value
                    .issuers
                    .iter()
                    .filter_map(|i| i.value.jwks_file.as_ref().map(|f| f.value.clone()))
                    .collect()
            })
            .unwrap_or_default();
        PolicyFiles::new(&loaded.root, project_file.as_deref(), &globs, &keys)
    }

    /// The same set with the state folder added.
    pub fn with_state_dir(mut self, dir: &Path) -> PolicyFiles {
        let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| lexical(&absolute(dir)));
        self.state_dir = Some(dir);
        self
    }

    /// The same set with another trust store (`None`: none).
    pub fn with_trust_dir(mut self, dir: Option<&Path>) -> PolicyFiles {
        self.trust_dir = dir.map(|d| lexical(&absolute(d)));
        self
    }

    /// The loaded policy's files, absolute, sorted and deduplicated (not the state folder or
    /// the trust store): what a fingerprint of the policy covers.
    pub fn files(&self) -> &[PathBuf] {
        &self.paths
    }

    /// The files with why each is one.
    pub fn entries(&self) -> impl Iterator<Item = (&Path, &PolicyFileReason)> {
        self.paths.iter().map(PathBuf::as_path).zip(&self.reasons)
    }

    /// The project folder (canonical).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The `specs:` globs, relative to the project folder.
    pub fn spec_globs(&self) -> &[String] {
        &self.spec_globs
    }

    /// The folders the spec globs start in (each glob's literal prefix), absolute: a new spec
    /// can only appear inside one of them.
    pub fn spec_folders(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = self
            .spec_globs
            .iter()
            .map(|g| lexical(&self.root.join(literal_prefix(g))))
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// The state folder, when known.
    pub fn state_dir(&self) -> Option<&Path> {
        self.state_dir.as_deref()
    }

    /// The trust store, when there is one.
    pub fn trust_dir(&self) -> Option<&Path> {
        self.trust_dir.as_deref()
    }

    /// Why writing `path` would change the policy, or `None` when it would not: one of the
    /// files (as written, through links, or as a hard link of one: same device and inode), a
    /// path a spec glob matches, or anything in the state folder or the trust store. A relative
    /// path is taken from the project folder.
    pub fn protects(&self, path: &Path) -> Option<PolicyFileReason> {
        let abs = lexical(&if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.root.join(path)
        });
        if let Some(r) = self.judge(&abs) {
            return Some(r);
        }
        // Through links: where the path leads (its folder's, when it does not exist yet).
        let real = std::fs::canonicalize(&abs).ok().or_else(|| {
            let parent = std::fs::canonicalize(abs.parent()?).ok()?;
            Some(parent.join(abs.file_name()?))
        });
        if let Some(real) = real.filter(|r| *r != abs)
            && let Some(r) = self.judge(&real)
        {
            return Some(r);
        }
        let id = identity(&abs)?;
        self.identities
            .iter()
            .find(|(i, _)| *i == id)
            .and_then(|(_, n)| self.reasons.get(*n).cloned())
    }

    /// Why a file with this device and inode is a policy file (it is one of them, under any
    /// name), or `None`.
    pub fn protects_identity(&self, dev: u64, ino: u64) -> Option<PolicyFileReason> {
        self.identities
            .iter()
            .find(|(i, _)| *i == (dev, ino))
            .and_then(|(_, n)| self.reasons.get(*n).cloned())
    }

    /// The lexical part of [`PolicyFiles::protects`], for an absolute normalized path.
    fn judge(&self, abs: &Path) -> Option<PolicyFileReason> {
        if let Ok(i) = self.paths.binary_search_by(|p| p.as_path().cmp(abs)) {
            return self.reasons.get(i).cloned();
        }
        if let Some((_, i)) = self.targets.iter().find(|(t, _)| t == abs) {
            return self.reasons.get(*i).cloned();
        }
        // The trust store first: it may lie inside the state folder, and is the more specific.
        if self
            .trust_dir
            .as_deref()
            .is_some_and(|d| abs.starts_with(d))
        {
            return Some(PolicyFileReason::TrustDir);
        }
        if self
            .state_dir
            .as_deref()
            .is_some_and(|d| abs.starts_with(d))
        {
            return Some(PolicyFileReason::StateDir);
        }
        let rel = abs.strip_prefix(&self.root).ok()?;
        let hit = self.spec_set.matches(rel).first().copied()?;
        Some(PolicyFileReason::SpecGlob {
            glob: self.spec_globs.get(hit)?.clone(),
        })
    }
}

/// Compiles spec globs as the loader does (`*` within one folder).
fn compile(globs: &[String]) -> Result<GlobSet, SpecGlobError> {
    let mut b = GlobSetBuilder::new();
    for g in globs {
        b.add(glob(g)?);
    }
    b.build().map_err(|e| SpecGlobError {
        glob: String::new(),
        message: e.to_string(),
    })
}

fn glob(g: &str) -> Result<globset::Glob, SpecGlobError> {
    GlobBuilder::new(g)
        .literal_separator(true)
        .build()
        .map_err(|e| SpecGlobError {
            glob: g.to_owned(),
            message: e.kind().to_string(),
        })
}

/// The folders of a glob before its first wildcard.
pub(crate) fn literal_prefix(glob: &str) -> PathBuf {
    Path::new(glob)
        .components()
        .take_while(|c| {
            !c.as_os_str()
                .to_string_lossy()
                .contains(['*', '?', '[', '{'])
        })
        .collect()
}

/// The files a glob matches beneath `root`, as the loader expands it: from its literal prefix,
/// links not followed, project files skipped.
fn expand(root: &Path, pattern: &str) -> Result<Vec<PathBuf>, SpecGlobError> {
    let mut set = GlobSetBuilder::new();
    set.add(glob(pattern)?);
    let set = set.build().map_err(|e| SpecGlobError {
        glob: pattern.to_owned(),
        message: e.to_string(),
    })?;
    let start = root.join(literal_prefix(pattern));
    let mut out = Vec::new();
    if start.is_file() {
        out.push(lexical(&start));
        return Ok(out);
    }
    walk(&start, 0, &mut |p| {
        let skip = p
            .file_name()
            .is_some_and(|n| PROJECT_FILES.iter().any(|f| n == *f));
        if !skip && p.strip_prefix(root).is_ok_and(|rel| set.is_match(rel)) {
            out.push(lexical(p));
        }
    });
    Ok(out)
}

fn walk(dir: &Path, depth: usize, f: &mut dyn FnMut(&Path)) {
    if depth > MAX_WALK_DEPTH {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.filter_map(Result::ok) {
        let Ok(ft) = e.file_type() else { continue };
        let path = e.path();
        if ft.is_dir() {
            walk(&path, depth + 1, f);
        } else if ft.is_file() {
            f(&path);
        }
    }
}

/// A path made absolute against the current folder (unchanged when it already is).
fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// A path with `.` and `..` removed, without touching the file system.
pub(crate) fn lexical(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// A file's device and inode (links followed), where the platform has them.
fn identity(p: &Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(p).ok()?;
        m.is_file().then(|| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = p;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        for (rel, text) in [
            ("toolgate.yaml", "specs: [\"tool-specs/**/*.yaml\"]\n"),
            ("tool-specs/bash.yaml", "name: bash\n"),
            ("tool-specs/nested/grep.yaml", "name: grep\n"),
            ("tool-specs/nested/toolgate.yaml", "specs: []\n"),
            ("tool-specs/README.md", "not a spec\n"),
            ("keys/jwks.json", "{}\n"),
            ("src/main.py", "print()\n"),
        ] {
            let p = root.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        (d, root)
    }

    fn files(root: &Path) -> PolicyFiles {
        PolicyFiles::new(
            root,
            Some(Path::new("toolgate.yaml")),
            &["tool-specs/**/*.yaml".to_owned()],
            &["keys/jwks.json".to_owned()],
        )
        .unwrap()
        .with_trust_dir(Some(&root.join("../trust")))
    }

    #[test]
    fn lists_the_loaded_files_sorted() {
        let (_d, root) = project();
        let f = files(&root);
        assert_eq!(
            f.files(),
            [
                root.join("keys/jwks.json"),
                root.join("tool-specs/bash.yaml"),
                root.join("tool-specs/nested/grep.yaml"),
                root.join("toolgate.yaml"),
            ]
        );
        assert_eq!(f.spec_folders(), [root.join("tool-specs")]);
    }

    #[test]
    fn protects_files_globs_state_and_trust() {
        let (_d, root) = project();
        let state = root.join("state");
        let f = files(&root).with_state_dir(&state);
        let judge = |p: &str| f.protects(Path::new(p));
        assert_eq!(judge("toolgate.yaml"), Some(PolicyFileReason::ProjectFile));
        assert_eq!(
            judge("src/../toolgate.yaml"),
            Some(PolicyFileReason::ProjectFile)
        );
        assert_eq!(
            judge("tool-specs/bash.yaml"),
            Some(PolicyFileReason::SpecFile)
        );
        assert_eq!(judge("keys/jwks.json"), Some(PolicyFileReason::KeyFile));
        assert_eq!(
            judge("tool-specs/new/added.yaml"),
            Some(PolicyFileReason::SpecGlob {
                glob: "tool-specs/**/*.yaml".into()
            })
        );
        assert_eq!(judge("state/journal.db"), Some(PolicyFileReason::StateDir));
        assert_eq!(
            f.protects(&root.join("../trust/abc")),
            Some(PolicyFileReason::TrustDir)
        );
        assert_eq!(judge("tool-specs/README.md"), None);
        assert_eq!(judge("src/main.py"), None);
        assert_eq!(judge("tool-specs"), None);
    }

    #[cfg(unix)]
    #[test]
    fn links_reach_the_file_they_lead_to() {
        let (_d, root) = project();
        let f = files(&root);
        std::os::unix::fs::symlink(root.join("toolgate.yaml"), root.join("src/sym.yaml")).unwrap();
        std::fs::hard_link(root.join("tool-specs/bash.yaml"), root.join("src/hard.txt")).unwrap();
        std::os::unix::fs::symlink(root.join("tool-specs"), root.join("src/specs")).unwrap();
        assert_eq!(
            f.protects(Path::new("src/sym.yaml")),
            Some(PolicyFileReason::ProjectFile)
        );
        assert_eq!(
            f.protects(Path::new("src/hard.txt")),
            Some(PolicyFileReason::SpecFile)
        );
        // A new file through a linked folder lands where a spec glob matches.
        assert!(matches!(
            f.protects(Path::new("src/specs/new.yaml")),
            Some(PolicyFileReason::SpecGlob { .. })
        ));
        assert_eq!(f.protects(Path::new("src/main.py")), None);
    }

    /// Command tools get the files and the spec folders, never the workspace or a folder above
    /// it (a spec glob rooted at the project folder binds the files it matched instead).
    #[test]
    fn read_only_paths_are_files_and_spec_folders_below_the_workspace() {
        let (_d, root) = project();
        let f = files(&root);
        assert_eq!(
            f.read_only_paths(&root),
            [
                root.join("keys/jwks.json"),
                root.join("tool-specs"),
                root.join("toolgate.yaml"),
            ]
        );
        let flat = PolicyFiles::new(&root, None, &["*.yaml".to_owned()], &[]).unwrap();
        assert_eq!(flat.spec_folders(), std::slice::from_ref(&root));
        assert_eq!(flat.read_only_paths(&root), [root.join("toolgate.yaml")]);
    }

    #[test]
    fn the_default_globs_apply_without_specs() {
        let (_d, root) = project();
        let f = PolicyFiles::new(&root, None, &[], &[]).unwrap();
        assert_eq!(f.spec_globs(), DEFAULT_SPEC_GLOBS);
        assert!(f.files().contains(&root.join("toolgate.yaml")));
        assert!(f.files().contains(&root.join("tool-specs/bash.yaml")));
    }

    #[test]
    fn globs_and_files_the_loader_refuses_are_skipped() {
        let (d, root) = project();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("x.yaml"), "name: x\n").unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("x.yaml"),
            root.join("tool-specs/linked.yaml"),
        )
        .unwrap();
        let globs = ["tool-specs/*.yaml", "/**", "../*.yaml"].map(str::to_owned);
        let f = PolicyFiles::new(&root, None, &globs, &[]).unwrap();
        assert_eq!(f.spec_globs(), ["tool-specs/*.yaml"]);
        assert_eq!(f.spec_folders(), [root.join("tool-specs")]);
        assert!(f.files().contains(&root.join("tool-specs/bash.yaml")));
        assert!(!f.files().contains(&root.join("tool-specs/linked.yaml")));
        assert!(f.protects(&d.path().join("elsewhere.yaml")).is_none());
    }

    #[cfg(feature = "compiler")]
    #[test]
    fn expands_globs_as_the_loader_does() {
        let (_d, root) = project();
        let globs = [
            "tool-specs/**/*.yaml".to_owned(),
            crate::spec::load::DEFAULT_SPEC_GLOB.to_owned(),
        ];
        assert_eq!(DEFAULT_SPEC_GLOBS, [crate::spec::load::DEFAULT_SPEC_GLOB]);
        for g in &globs {
            let mut mine = expand(&root, g).unwrap();
            mine.sort();
            assert_eq!(
                mine,
                crate::spec::load::expand_globs(&root, std::slice::from_ref(g)).unwrap()
            );
        }
    }

    #[test]
    fn invalid_globs_are_errors() {
        let d = tempfile::tempdir().unwrap();
        let e = PolicyFiles::new(d.path(), None, &["[x".to_owned()], &[]).unwrap_err();
        assert_eq!(e.glob, "[x");
    }
}
