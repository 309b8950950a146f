//! Resolution: spanned spec AST → [`ToolDefinition`], with defaults filled in, every CEL
//! expression compiled and checked, and permission examples run.
//!
//! Problems that make a contract invalid are reported as contract diagnostics (the `TGK`
//! rules); a tool with one gets no definition, so nothing downstream ever sees an invalid
//! contract. The checker's findings about CEL (unknown references, unbounded cost, ...) are kept
//! on each [`CelSite`] for the linter to report.
//!
//! One tool resolves in `tool` (the definition, key by key), which calls a file per concern:
//! `schema` (parameters and result), `cel` (expressions and templates), `effect` (effect,
//! idempotency, timeout, retry), `permissions` (validate and permission rules, their examples),
//! `resources` (resource sets, concurrency group), `output` (the output policy), `errors`
//! (error hints), `exec` (the backend and sandbox profile). Checks across the whole set live in
//! `set` (unique names, toolsets) and `lifecycle` (aliases and successors).

mod cel;
mod effect;
mod errors;
mod exec;
mod lifecycle;
mod output;
mod permissions;
mod resources;
mod schema;
mod set;
#[cfg(test)]
mod testing;
mod tool;

use std::sync::Arc;

use crate::cel::Compiled;
use rayon::prelude::*;

use crate::cel::{Analysis, Slot};
use crate::diagnostic::{Diagnostic, Severity};
use crate::ir::{Decision, ProjectConfig, ToolDefinition};
use crate::policy::PolicyDecision;
use crate::rule::Rule;
use crate::spec::ast::ToolSpec;
use crate::spec::load::{LoadedSpecs, SpecFile};
use crate::spec::project::{ToolDefaults, resolve_project};
use crate::spec::source::{SourceId, Span};
use crate::spec::yaml::Spanned;

use tool::ToolResolver;

/// Resolution settings.
#[derive(Clone, Debug)]
pub struct ResolveOptions {
    /// Highest CEL cost estimate accepted without a finding.
    pub cost_budget: u64,
}

impl Default for ResolveOptions {
    fn default() -> Self {
        ResolveOptions {
            cost_budget: crate::cel::DEFAULT_COST_BUDGET,
        }
    }
}

/// The resolved project.
#[derive(Debug)]
pub struct Resolution {
    /// Project settings.
    pub project: ProjectConfig,
    /// Defaults applied to tools.
    pub defaults: ToolDefaults,
    /// One entry per tool in the loaded files, in load order.
    pub tools: Vec<ResolvedTool>,
    /// Contract diagnostics.
    pub diagnostics: Vec<Diagnostic>,
}

impl Resolution {
    /// The valid definitions.
    pub fn definitions(&self) -> impl Iterator<Item = &ToolDefinition> {
        self.tools.iter().filter_map(|t| t.definition.as_ref())
    }
}

/// One tool after resolution.
#[derive(Debug)]
pub struct ResolvedTool {
    /// Index of the file in [`LoadedSpecs::files`].
    pub file: usize,
    /// Index of the tool in that file.
    pub index: usize,
    /// The file.
    pub source: SourceId,
    /// The definition, when the contract is valid.
    pub definition: Option<ToolDefinition>,
    /// Every CEL expression of the tool, checked.
    pub cel: Vec<CelSite>,
    /// What each permission example got.
    pub examples: Vec<ExampleRun>,
}

/// What an expression is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CelRole {
    /// A `validate` rule.
    Validate(String),
    /// A permission rule.
    Permission(String, Decision),
    /// `resources.reads`.
    Reads,
    /// `resources.writes`.
    Writes,
    /// `idempotency.key`.
    IdempotencyKey,
    /// An argv `when` condition.
    ArgvWhen,
    /// An argv `each` list.
    ArgvEach,
    /// A template placeholder.
    Template,
    /// `exec.command.stdin`.
    Stdin,
}

impl CelRole {
    /// The slot its value goes into.
    pub fn slot(&self) -> Slot {
        match self {
            CelRole::Validate(_) | CelRole::Permission(..) | CelRole::ArgvWhen => Slot::Condition,
            CelRole::Reads | CelRole::Writes => Slot::Resources,
            CelRole::ArgvEach => Slot::List,
            CelRole::IdempotencyKey | CelRole::Stdin => Slot::String,
            CelRole::Template => Slot::Text,
        }
    }
}

/// One CEL expression in a spec.
#[derive(Debug)]
pub struct CelSite {
    /// What it is for.
    pub role: CelRole,
    /// The expression's text in the YAML file.
    pub span: Span,
    /// The expression.
    pub text: String,
    /// The compiled program (None when it does not parse).
    pub program: Option<Arc<Compiled>>,
    /// The checker's analysis (None when it does not parse).
    pub analysis: Option<Analysis>,
    /// The file span of each of `analysis.problems`, in the same order.
    pub problem_spans: Vec<Span>,
}

/// A permission example after running.
#[derive(Debug)]
pub struct ExampleRun {
    /// The example's span.
    pub span: Span,
    /// The expected decision.
    pub expect: Decision,
    /// What it got (an error message when it could not be decided).
    pub got: Result<PolicyDecision, String>,
}

/// Resolves every loaded tool.
pub fn resolve(loaded: &LoadedSpecs, options: &ResolveOptions) -> Resolution {
    let mut diagnostics = Vec::new();
    let (project, defaults) = resolve_project(
        loaded.project.as_ref().map(|(id, p)| (*id, p)),
        &mut diagnostics,
    );
    // An invalid `protect` glob is reported by `resolve_project`; tests then use the defaults.
    let protected = crate::policy::ProtectedSet::new(&project.protect)
        .map(Arc::new)
        .unwrap_or_else(|_| crate::policy::protect::default_set());
    // Tools resolve independently (CEL parsing dominates), so they resolve in parallel; the
    // results keep load order.
    let work: Vec<(usize, usize, &SpecFile, &Spanned<ToolSpec>)> = loaded
        .files
        .iter()
        .enumerate()
        .flat_map(|(fi, file)| {
            file.tools
                .iter()
                .enumerate()
                .map(move |(ti, t)| (fi, ti, file, t))
        })
        .collect();
    let resolved: Vec<(ResolvedTool, Vec<Diagnostic>)> = work
        .par_iter()
        .filter_map(|(fi, ti, file, tool)| {
            let src = loaded.sources.get(file.source)?;
            let mut r = ToolResolver {
                src,
                source: file.source,
                project: &project,
                defaults: &defaults,
                options,
                protected: protected.clone(),
                imported: loaded.import.is_some(),
                diags: Vec::new(),
                cel: Vec::new(),
            };
            let (definition, examples) = r.resolve(tool);
            let fatal = r.diags.iter().any(|d| d.severity == Severity::Error);
            Some((
                ResolvedTool {
                    file: *fi,
                    index: *ti,
                    source: file.source,
                    definition: if fatal { None } else { definition },
                    cel: r.cel,
                    examples,
                },
                r.diags,
            ))
        })
        .collect();
    let mut tools = Vec::with_capacity(resolved.len());
    for (t, mut d) in resolved {
        diagnostics.append(&mut d);
        tools.push(t);
    }
    set::check_names(loaded, &tools, &mut diagnostics);
    set::check_toolsets(loaded, &tools, &mut diagnostics);
    lifecycle::check(loaded, &tools, &mut diagnostics);
    Resolution {
        project,
        defaults,
        tools,
        diagnostics,
    }
}

/// An error of contract rule `rule` at `span`: every finding of resolution is one, and so
/// keeps the tool out of the IR.
fn error(rule: Rule, span: Span, message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(Some(rule.code()), Severity::Error, span, message)
}

/// "did you mean `x`?" or the list of valid names.
pub use crate::suggest::did_you_mean_or_list as did_you_mean;
