//! The linter: rules as typed visitors over the spanned AST, run in one pass.
//!
//! [`lint`] takes what [`crate::spec`] loaded and resolved, runs every enabled rule
//! ([`visit::run`]), applies suppressions ([`suppress`]), and returns all diagnostics sorted by
//! position — load errors and contract errors included, so one list feeds every reporter.

pub mod codes;
pub mod config;
pub mod context;
pub(crate) mod fix;
pub mod report;
pub mod rule;
pub mod rules;
pub mod suppress;
pub mod visit;

pub use codes::Rule;
pub use config::{LintOptions, LintSettings, RuleSelection};
pub use rule::{Applies, Group, RuleMeta, Tier};

use crate::diagnostic::Diagnostic;
use crate::lint::context::{LintContext, Origin, ToolView};
use crate::spec::load::LoadedSpecs;
use crate::spec::resolve::Resolution;

/// Lints loaded and resolved specs; `extra` holds diagnostics found earlier (settings).
pub fn lint(
    loaded: &LoadedSpecs,
    resolution: &Resolution,
    settings: &LintSettings,
    extra: Vec<Diagnostic>,
) -> Vec<Diagnostic> {
    let mut diagnostics: Vec<Diagnostic> = loaded.errors.clone();
    diagnostics.extend(extra);
    diagnostics.extend(resolution.diagnostics.iter().cloned());

    let mut views = Vec::with_capacity(resolution.tools.len());
    for rt in &resolution.tools {
        let Some(file) = loaded.files.get(rt.file) else {
            continue;
        };
        let Some(spec) = file.tools.get(rt.index) else {
            continue;
        };
        let Some(src) = loaded.sources.get(rt.source) else {
            continue;
        };
        let imported = file.imported.get(rt.index);
        views.push(ToolView {
            source: rt.source,
            file: src,
            spec,
            resolved: rt,
            def: rt.definition.as_ref(),
            origin: match loaded.import {
                Some(f) => Origin::Imported(f),
                None => Origin::Spec,
            },
            name: spec
                .value
                .name
                .as_ref()
                .map(|n| n.value.as_str())
                .unwrap_or(""),
            effect: spec.value.effect.as_ref().map(|e| e.value),
            annotations: imported.and_then(|i| i.annotations.as_ref()),
            native: imported.and_then(|i| i.native.as_deref()),
        });
    }

    let mut ctx = LintContext::new(&loaded.sources, settings, &resolution.project)
        .with_project_file(loaded.project.as_ref().map(|(id, p)| (*id, p)));
    visit::run(&mut ctx, &views);
    let mut findings = ctx.into_findings();

    if settings.inline_ignores {
        let files: Vec<_> = loaded
            .files
            .iter()
            .filter_map(|f| {
                let src = loaded.sources.get(f.source)?;
                Some((f.source, src, suppress::parse(f.source, src)))
            })
            .collect();
        findings = suppress::apply(
            findings,
            &files,
            settings.severity_of(Rule::UnusedSuppression),
        );
    }
    diagnostics.extend(findings);
    diagnostics.sort_by(|a, b| {
        (a.span.source, a.span.start, a.code, &a.message).cmp(&(
            b.span.source,
            b.span.start,
            b.code,
            &b.message,
        ))
    });
    diagnostics.dedup();
    diagnostics
}
