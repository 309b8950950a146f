//! What the resolver's unit tests share: YAML in, the resolution and its sources out.

use std::ops::Deref;
use std::path::PathBuf;

use crate::diagnostic::Diagnostic;
use crate::rule::Rule;
use crate::spec::load::{self, LoadedSpecs};

use super::{Resolution, ResolveOptions, resolve};

/// The start of a valid tool with one string parameter `path`; tests append keys.
pub(super) const HEAD: &str = "name: t
description: Write a note into the workspace's notes folder and return its path.
effect: local_write
exec: {handler: rust}
parameters: {type: object, properties: {path: {type: string}}, required: [path]}
";

/// A resolution with the specs it was resolved from.
pub(super) struct Resolved {
    pub(super) loaded: LoadedSpecs,
    resolution: Resolution,
}

impl Deref for Resolved {
    type Target = Resolution;

    fn deref(&self) -> &Resolution {
        &self.resolution
    }
}

impl Resolved {
    /// The text of the first spec file.
    pub(super) fn source_text(&self) -> &str {
        let id = self.loaded.files[0].source;
        &self.loaded.sources.get(id).unwrap().text
    }
}

/// Resolves spec files given as (path, text), with an optional toolgate.yaml.
pub(super) fn resolve_files(files: &[(&str, &str)], project: Option<&str>) -> Resolved {
    let files: Vec<(PathBuf, String)> = files
        .iter()
        .map(|(p, t)| (PathBuf::from(p), (*t).to_owned()))
        .collect();
    let loaded = load::load_texts(&files, project);
    assert!(loaded.errors.is_empty(), "{:#?}", loaded.errors);
    let resolution = resolve(&loaded, &ResolveOptions::default());
    Resolved { loaded, resolution }
}

/// Resolves one spec file.
pub(super) fn resolve_tool(text: &str) -> Resolved {
    resolve_files(&[("t.yaml", text)], None)
}

/// Resolves one spec file with a toolgate.yaml.
pub(super) fn resolve_with_project(text: &str, project: &str) -> Resolved {
    resolve_files(&[("t.yaml", text)], Some(project))
}

/// The diagnostics of one rule, in order.
pub(super) fn errors(r: &Resolution, rule: Rule) -> Vec<&Diagnostic> {
    r.diagnostics
        .iter()
        .filter(|d| d.code == Some(rule.code()))
        .collect()
}

/// Where `needle` first stands in the first spec file (a flow collection's span covers only
/// its opening bracket, so tests locate those by offset).
pub(super) fn offset(r: &Resolved, needle: &str) -> u32 {
    r.source_text().find(needle).unwrap() as u32
}

/// The text a diagnostic points at.
pub(super) fn text_at<'r>(r: &'r Resolved, d: &Diagnostic) -> &'r str {
    let file = r.loaded.sources.get(d.span.source).unwrap();
    file.slice(d.span)
}
