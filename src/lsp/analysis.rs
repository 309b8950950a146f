//! Linting what the editor holds: the project around a document, with the text of open
//! documents in place of what is on disk.
//!
//! The project is found as `toolgate lint` finds it from the project's folder: the nearest
//! folder above the document that has a toolgate.yaml (else the editor's workspace folder), its
//! `specs` globs (default `tool-specs/**/*.{yaml,yml}`). So findings carry the same codes, spans
//! and messages as `lint`, project-wide rules (duplicate names, overlapping tools, toolgate.yaml's
//! settings and `protect:`) included. A YAML file outside every project's specs is left alone,
//! so a CI workflow or a compose file gets no toolgate findings.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::check::{self, CheckedProject};
use crate::diagnostic::Diagnostic;
use crate::spec::load::{self, LoadError, LoadOptions, PROJECT_FILE};
use crate::spec::source::{SourceFile, SourceId};

/// Open documents' text, by absolute path.
pub type Overlays = HashMap<PathBuf, String>;

/// A project linted with the editor's text.
pub struct Analysis {
    /// The project folder; sources' paths are relative to it.
    pub root: PathBuf,
    /// The load → resolve → lint result.
    pub checked: CheckedProject,
}

impl Analysis {
    /// Lints the project in `root`, reading open documents from `overlays`.
    pub fn run(root: &Path, overlays: &Overlays) -> Result<Analysis, LoadError> {
        let on_disk = load::load(&LoadOptions {
            paths: Vec::new(),
            config: None,
            cwd: root.to_path_buf(),
        })?;
        let text_of = |rel: &Path, disk: &str| -> String {
            overlays
                .get(&root.join(rel))
                .cloned()
                .unwrap_or_else(|| disk.to_owned())
        };
        let project_id = on_disk.project.as_ref().map(|(id, _)| *id);
        let project_path = root.join(PROJECT_FILE);
        // toolgate.yaml as the editor holds it, also when it is new and not saved yet.
        let project = match project_id.and_then(|id| on_disk.sources.get(id)) {
            Some(f) => Some(text_of(&f.path, &f.text)),
            None => overlays.get(&project_path).cloned(),
        };
        let files: Vec<(PathBuf, String)> = on_disk
            .sources
            .iter()
            .filter(|(id, _)| Some(*id) != project_id)
            .map(|(_, f)| (f.path.clone(), text_of(&f.path, &f.text)))
            .collect();
        Ok(Analysis {
            root: root.to_path_buf(),
            checked: check::check_texts(&files, project.as_deref()),
        })
    }

    /// The source of a file (by absolute path) in this project, if the project reads it.
    pub fn source_of(&self, path: &Path) -> Option<(SourceId, &SourceFile)> {
        let rel = path.strip_prefix(&self.root).ok()?;
        self.checked
            .loaded
            .sources
            .iter()
            .find(|(_, f)| f.path == rel)
    }

    /// The diagnostics located in one source.
    pub fn diagnostics_in(&self, id: SourceId) -> impl Iterator<Item = &Diagnostic> {
        self.checked
            .diagnostics
            .iter()
            .filter(move |d| d.span.source == id)
    }
}

/// The project folder of a document: the nearest folder with a toolgate.yaml, else the
/// workspace folder that holds it, else its own folder.
pub fn project_root(path: &Path, workspace_folders: &[PathBuf]) -> PathBuf {
    let folder = path.parent().unwrap_or(path);
    if let Some(found) = folder
        .ancestors()
        .find(|dir| dir.join(PROJECT_FILE).is_file())
    {
        return found.to_path_buf();
    }
    workspace_folders
        .iter()
        .filter(|w| path.starts_with(w))
        .max_by_key(|w| w.components().count())
        .cloned()
        .unwrap_or_else(|| folder.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = "name: echo\ndescription: Echo the text back to the caller unchanged.\neffect: pure\nparameters:\n  type: object\n  properties:\n    text: {type: string, maxLength: 100, description: The text.}\n  required: [text]\n  additionalProperties: false\ntimeout: 1s\nexec: {builtin: echo}\n";

    #[test]
    fn open_documents_replace_the_disk_and_project_rules_see_every_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join(PROJECT_FILE), "specs: [\"specs/*.yaml\"]\n").unwrap();
        std::fs::create_dir(root.join("specs")).unwrap();
        std::fs::write(root.join("specs/a.yaml"), SPEC).unwrap();
        std::fs::write(root.join("specs/b.yaml"), SPEC.replace("echo", "other")).unwrap();
        let doc = root.join("specs/b.yaml");
        assert_eq!(project_root(&doc, &[]), root);

        let clean = Analysis::run(root, &Overlays::new()).unwrap();
        let (b, _) = clean.source_of(&doc).unwrap();
        let dup = |a: &Analysis, id| a.diagnostics_in(id).any(|d| d.code == Some("TGK006"));
        assert!(!dup(&clean, b));

        // The editor renames b's tool to a's name: a duplicate across files, before any save.
        let overlays = Overlays::from([(doc.clone(), SPEC.to_owned())]);
        let edited = Analysis::run(root, &overlays).unwrap();
        let (b, file) = edited.source_of(&doc).unwrap();
        assert_eq!(&*file.text, SPEC);
        assert!(dup(&edited, b), "{:?}", edited.checked.diagnostics);

        // A YAML file the specs globs do not match is not the project's.
        assert!(edited.source_of(&root.join("ci.yaml")).is_none());
    }
}
