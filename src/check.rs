//! A checked project: load → resolve → lint, the sequence every command starts with.
//!
//! `toolgate lint` reports the diagnostics; `toolgate build` and the runtime refuse to go on when
//! any is an error, so nothing downstream ever sees a contract the linter rejects.

#[cfg(feature = "runtime")]
mod runtime;

#[cfg(feature = "runtime")]
pub use runtime::SpecsError;

use crate::diagnostic::{Diagnostic, Severity};
use crate::ir::Bundle;
use crate::lint::{self, LintSettings, RuleSelection};
use crate::spec::import::{self, ImportFormat};
use crate::spec::load::{self, LoadError, LoadOptions, LoadedSpecs, SpecFile};
use crate::spec::resolve::{self, Resolution, ResolveOptions};
use crate::spec::source::{SourceFile, SourceId};

/// A project after loading, resolution and linting.
pub struct CheckedProject {
    /// What was loaded.
    pub loaded: LoadedSpecs,
    /// What it resolved to.
    pub resolution: Resolution,
    /// The lint settings used.
    pub settings: LintSettings,
    /// Every diagnostic, sorted by position.
    pub diagnostics: Vec<Diagnostic>,
}

impl CheckedProject {
    /// Whether anything failed to load (exit code 2 territory).
    pub fn has_load_errors(&self) -> bool {
        self.diagnostics.iter().any(|d| d.code.is_none())
    }

    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error)
    }

    /// The bundle of every tool, when nothing is an error.
    pub fn bundle(&self) -> Option<Bundle> {
        if self.has_errors() {
            return None;
        }
        Some(Bundle::new(
            self.resolution.project.clone(),
            self.resolution.definitions().cloned().collect(),
        ))
    }
}

/// Loads, resolves and lints toolgate specs.
pub fn check_specs(opts: &LoadOptions) -> Result<CheckedProject, LoadError> {
    check_specs_selecting(opts, &RuleSelection::default())
}

/// [`check_specs`] with the command line's rule opt-ins (`--preview`, `--select`).
pub fn check_specs_selecting(
    opts: &LoadOptions,
    selection: &RuleSelection,
) -> Result<CheckedProject, LoadError> {
    let loaded = load::load(opts)?;
    Ok(finish(loaded, selection))
}

/// Loads, resolves and lints tool lists in a provider format.
pub fn check_imported(
    paths: &[std::path::PathBuf],
    cwd: &std::path::Path,
    format: ImportFormat,
) -> CheckedProject {
    check_imported_selecting(paths, cwd, format, &RuleSelection::default())
}

/// [`check_imported`] with the command line's rule opt-ins (`--preview`, `--select`).
pub fn check_imported_selecting(
    paths: &[std::path::PathBuf],
    cwd: &std::path::Path,
    format: ImportFormat,
    selection: &RuleSelection,
) -> CheckedProject {
    finish(import::load(paths, cwd, format), selection)
}

fn finish(loaded: LoadedSpecs, selection: &RuleSelection) -> CheckedProject {
    let mut extra = Vec::new();
    // Settings first: the cost budget is a lint option that resolution uses; the targets come
    // from the resolved project.
    let mut settings = LintSettings::from_project(
        loaded.project.as_ref().map(|(id, p)| (*id, p)),
        &[],
        &mut extra,
    );
    settings.apply_selection(selection);
    let resolution = resolve::resolve(
        &loaded,
        &ResolveOptions {
            cost_budget: settings.options.cel_cost_budget,
        },
    );
    settings.targets = resolution.project.targets.clone();
    let diagnostics = lint::lint(&loaded, &resolution, &settings, extra);
    CheckedProject {
        loaded,
        resolution,
        settings,
        diagnostics,
    }
}

/// Loads, resolves and lints specs given as text (tests, benchmarks, editors): `files` are
/// (path, text) pairs, `project` the text of a toolgate.yaml.
pub fn check_texts(
    files: &[(std::path::PathBuf, String)],
    project: Option<&str>,
) -> CheckedProject {
    let loaded = load::load_texts(files, project);
    finish(loaded, &RuleSelection::default())
}

/// The same project checked again with some files' text replaced (an editor's unsaved buffer,
/// a fix being tried), without reading the disk: the other files keep the text they were
/// loaded with. Only for specs: imported tool lists are not parsed as specs.
pub fn recheck(checked: &CheckedProject, replaced: &[(SourceId, String)]) -> CheckedProject {
    let old = &checked.loaded;
    let text_of = |id: SourceId, f: &SourceFile| -> String {
        replaced
            .iter()
            .find(|(r, _)| *r == id)
            .map_or_else(|| f.text.to_string(), |(_, t)| t.clone())
    };
    let mut loaded = LoadedSpecs::empty(old.root.clone());
    loaded.import = old.import;
    // Same order, so the ids stay the same.
    for (id, f) in old.sources.iter() {
        loaded.sources.add(f.path.clone(), text_of(id, f));
    }
    // What parsed before is parsed again from the (possibly replaced) text; the load errors of
    // files that never parsed are kept as they were.
    let project_id = old.project.as_ref().map(|(id, _)| *id);
    let reparsed =
        |id: SourceId| project_id == Some(id) || old.files.iter().any(|f| f.source == id);
    loaded.errors = old
        .errors
        .iter()
        .filter(|d| !reparsed(d.span.source))
        .cloned()
        .collect();
    if let Some(id) = project_id {
        match load::parse_in(&loaded.sources, id) {
            Ok(p) => loaded.project = Some((id, p)),
            Err(e) => loaded.errors.push(e),
        }
    }
    for f in &old.files {
        match load::parse_spec_source(&loaded.sources, f.source) {
            Ok(tools) => loaded.files.push(SpecFile {
                source: f.source,
                tools,
                imported: Vec::new(),
            }),
            Err(mut e) => loaded.errors.append(&mut e),
        }
    }
    // The same opt-ins as the first check: a fix is verified by the rules that found it.
    finish(loaded, &checked.settings.selection())
}
