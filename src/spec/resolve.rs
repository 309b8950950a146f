//! Resolution: spanned spec AST → [`ToolDefinition`], with defaults filled in, every CEL
//! expression compiled and checked, and permission examples run.
//!
//! Problems that make a contract invalid are reported as contract diagnostics (the `TGK`
//! rules); a tool with one gets no definition, so nothing downstream ever sees an invalid
//! contract. The checker's findings about CEL (unknown references, unbounded cost, ...) are kept
//! on each [`CelSite`] for the linter to report.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use ::cel::Program;
use indexmap::IndexMap;
use rayon::prelude::*;
use serde_json::{Value, json};

use crate::cel::{self, Analysis, Slot};
use crate::diagnostic::{Diagnostic, Severity};
use crate::ir::template::{self, TemplatePart};
use crate::ir::{
    ArgvElement, Backoff, CommandSpec, ConcurrencyGroup, Decision, Effect, EnvSpec, ErrorType,
    ExecSpec, FormatterKind, HandlerLanguage, Idempotency, OutputKeep, OutputPolicy,
    PermissionExample, PermissionPolicy, PermissionRule, ProjectConfig, ResourceSets, RetryPolicy,
    ToolDefinition, ValidationRule,
};
use crate::lint::Rule;
use crate::policy::examples::{ExampleOutcome, run_example};
use crate::policy::{CompiledPolicy, PolicyDecision};
use crate::spec::ast::{ExecAst, OneOrMany, StringOr, ToolSpec};
use crate::spec::cel_span;
use crate::spec::load::{LoadedSpecs, SpecFile};
use crate::spec::project::{ToolDefaults, resolve_project};
use crate::spec::source::{SourceFile, SourceId, Span, TextRange};
use crate::spec::yaml::{Node, NodeValue, Spanned};

/// Resolution settings.
#[derive(Clone, Debug)]
pub struct ResolveOptions {
    /// Highest CEL cost estimate accepted without a finding.
    pub cost_budget: u64,
}

impl Default for ResolveOptions {
    fn default() -> Self {
        ResolveOptions {
            cost_budget: cel::DEFAULT_COST_BUDGET,
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
    pub program: Option<Arc<Program>>,
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
    check_names(loaded, &tools, &mut diagnostics);
    check_toolsets(loaded, &project, &tools, &mut diagnostics);
    crate::spec::lifecycle::check(loaded, &tools, &mut diagnostics);
    Resolution {
        project,
        defaults,
        tools,
        diagnostics,
    }
}

fn check_names(loaded: &LoadedSpecs, tools: &[ResolvedTool], diags: &mut Vec<Diagnostic>) {
    // The first definition of each name, and how many there have been so far.
    let mut seen: HashMap<&str, (Span, usize)> = HashMap::new();
    for t in tools {
        let Some(ast) = loaded.files.get(t.file).and_then(|f| f.tools.get(t.index)) else {
            continue;
        };
        let Some(name) = &ast.value.name else {
            continue;
        };
        let span = name.range.in_file(t.source);
        match seen.get_mut(name.value.as_str()) {
            Some((first, count)) => {
                *count += 1;
                let message = match *count {
                    2 => format!("tool `{}` is defined twice", name.value),
                    n => format!(
                        "tool `{}` is defined again (definition {n} of the name)",
                        name.value
                    ),
                };
                diags.push(
                Diagnostic::new(
                    Some(Rule::DuplicateToolName.code()),
                    Severity::Error,
                    span,
                    message,
                )
                .with_label(*first, "first defined here")
                .with_help(
                    "tool names must be unique: rename one, or bump `version` in place of a copy",
                ),
            );
            }
            None => {
                seen.insert(name.value.as_str(), (span, 1));
            }
        }
    }
}

fn check_toolsets(
    loaded: &LoadedSpecs,
    project: &ProjectConfig,
    tools: &[ResolvedTool],
    diags: &mut Vec<Diagnostic>,
) {
    let Some((pid, pf)) = &loaded.project else {
        return;
    };
    let names: Vec<&str> = tools
        .iter()
        .filter_map(|t| {
            loaded
                .files
                .get(t.file)?
                .tools
                .get(t.index)?
                .value
                .name
                .as_ref()
        })
        .map(|n| n.value.as_str())
        .collect();
    for (set, ts) in &pf.toolsets {
        for member in &ts.value.tools {
            if !names.contains(&member.value.as_str()) {
                let help = crate::suggest::did_you_mean(&member.value, names.iter().copied())
                    .unwrap_or_else(|| "list tools by their `name`".into());
                diags.push(
                    Diagnostic::new(
                        Some(Rule::UnknownProjectReference.code()),
                        Severity::Error,
                        member.range.in_file(*pid),
                        format!(
                            "toolset `{set}` names `{}`, which no spec defines",
                            member.value
                        ),
                    )
                    .with_help(help),
                );
            }
        }
    }
    let _ = project;
}

struct ToolResolver<'a> {
    src: &'a SourceFile,
    source: SourceId,
    project: &'a ProjectConfig,
    defaults: &'a ToolDefaults,
    options: &'a ResolveOptions,
    /// The project's protected set, which policy tests judge paths against.
    protected: Arc<crate::policy::ProtectedSet>,
    /// Imported tool lists have no effect or exec of their own; those are not required.
    imported: bool,
    diags: Vec<Diagnostic>,
    cel: Vec<CelSite>,
}

impl ToolResolver<'_> {
    fn span(&self, r: TextRange) -> Span {
        r.in_file(self.source)
    }

    /// An error of contract rule `rule` at `range` of this tool's file.
    fn error(&self, rule: Rule, range: TextRange, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(
            Some(rule.code()),
            Severity::Error,
            self.span(range),
            message,
        )
    }

    fn contract(&mut self, range: TextRange, message: impl Into<String>, help: Option<String>) {
        let d = self.error(Rule::InvalidContract, range, message);
        self.diags.push(d.with_help_opt(help));
    }

    fn reference(&mut self, range: TextRange, message: impl Into<String>, help: Option<String>) {
        let d = self.error(Rule::UnknownProjectReference, range, message);
        self.diags.push(d.with_help_opt(help));
    }

    fn resolve(&mut self, tool: &Spanned<ToolSpec>) -> (Option<ToolDefinition>, Vec<ExampleRun>) {
        let t = &tool.value;
        let whole = tool.range;
        let name = match &t.name {
            Some(n) => n.value.clone(),
            None => {
                self.contract(
                    whole,
                    "tool has no `name`",
                    Some("add `name: snake_case_name`".into()),
                );
                String::new()
            }
        };
        let effect = match &t.effect {
            Some(e) => e.value,
            None if self.imported => Effect::Destructive,
            None => {
                let at = t.name.as_ref().map(|n| n.range).unwrap_or(whole);
                self.contract(
                    at,
                    format!("tool `{name}` declares no `effect`"),
                    Some(format!(
                        "add `effect:` with one of {}; it drives permissions, scheduling and retries",
                        Effect::ALL.iter().map(|e| e.as_str()).collect::<Vec<_>>().join(", ")
                    )),
                );
                Effect::Destructive
            }
        };
        let (idempotency, idempotency_key_ast) = match &t.idempotency {
            None => (effect.default_idempotency(), None),
            Some(s) => match &s.value {
                StringOr::String(text) => match Idempotency::parse(text) {
                    Some(i) => (i, None),
                    None => {
                        let names: Vec<&str> =
                            Idempotency::ALL.iter().map(|i| i.as_str()).collect();
                        self.contract(
                            s.range,
                            format!("unknown idempotency class `{text}`"),
                            Some(did_you_mean(text, &names)),
                        );
                        (Idempotency::NonIdempotent, None)
                    }
                },
                StringOr::Map(m) => (m.class.value, m.key.as_ref()),
            },
        };

        let (parameters, validator) = match &t.parameters {
            Some(p) => {
                let v = self.check_schema(p, "parameters", true);
                (p.to_json(), v)
            }
            None => (
                json!({"type": "object", "properties": {}, "additionalProperties": false}),
                None,
            ),
        };
        let result = t.result.as_ref().map(|r| {
            self.check_schema(r, "result", false);
            r.to_json()
        });

        let idempotency_key = idempotency_key_ast.map(|k| {
            self.compile_site(CelRole::IdempotencyKey, k, &parameters);
            k.value.clone()
        });

        // validate
        let mut validate = Vec::new();
        let mut ids: HashSet<String> = HashSet::new();
        if let Some(rules) = &t.validate {
            for r in &rules.value {
                let r = &r.value;
                self.check_rule_id(&r.id, &mut ids);
                self.compile_site(CelRole::Validate(r.id.value.clone()), &r.expr, &parameters);
                validate.push(ValidationRule {
                    id: r.id.value.clone(),
                    expr: r.expr.value.clone(),
                    message: r
                        .message
                        .as_ref()
                        .map(|m| m.value.clone())
                        .unwrap_or_else(|| format!("argument check `{}` failed", r.id.value)),
                    hint: r.hint.as_ref().map(|h| h.value.clone()),
                });
            }
        }

        // permissions
        let default_decision = self
            .project
            .default_permissions
            .get(&effect)
            .copied()
            .unwrap_or_else(|| effect.default_permission());
        let mut rules = Vec::new();
        let mut compiled_rules = Vec::new();
        let mut example_asts = Vec::new();
        if let Some(p) = &t.permissions {
            for r in &p.value.rules {
                let rv = &r.value;
                self.check_rule_id(&rv.id, &mut ids);
                let decisions = rv.decisions();
                if decisions.len() != 1 {
                    self.contract(
                        r.range,
                        format!(
                            "permission rule `{}` must have exactly one of `allow`, `ask`, `deny` (it has {})",
                            rv.id.value,
                            decisions.len()
                        ),
                        Some("split it into one rule per decision".into()),
                    );
                }
                for (decision, expr) in decisions.into_iter().take(1) {
                    let program = self.compile_site(
                        CelRole::Permission(rv.id.value.clone(), decision),
                        expr,
                        &parameters,
                    );
                    let rule = PermissionRule {
                        id: rv.id.value.clone(),
                        decision,
                        expr: expr.value.clone(),
                        reason: rv.reason.as_ref().map(|r| r.value.clone()),
                    };
                    if let Some(program) = program {
                        compiled_rules.push((rule.clone(), program));
                    }
                    rules.push(rule);
                }
            }
            example_asts.extend(p.value.examples.iter());
        }
        let examples: Vec<PermissionExample> = example_asts
            .iter()
            .map(|e| PermissionExample {
                args: e.value.args.to_json(),
                context: e.value.context.as_ref().map(|c| c.value.clone()),
                expect: e.value.expect.value,
            })
            .collect();

        // resources
        let mut resources = ResourceSets::default();
        if let Some(res) = &t.resources {
            for (role, field) in [
                (CelRole::Reads, &res.value.reads),
                (CelRole::Writes, &res.value.writes),
            ] {
                let Some(field) = field else { continue };
                let exprs: Vec<Spanned<String>> = match &field.value {
                    OneOrMany::One(s) => vec![Spanned::new(s.clone(), field.range)],
                    OneOrMany::Many(items) => items.clone(),
                };
                for e in &exprs {
                    self.compile_site(role.clone(), e, &parameters);
                }
                let texts = exprs.into_iter().map(|e| e.value).collect();
                match role {
                    CelRole::Reads => resources.reads = texts,
                    _ => resources.writes = texts,
                }
            }
        }

        let concurrency_group = t.concurrency_group.as_ref().map(|g| match &g.value {
            StringOr::String(s) => ConcurrencyGroup {
                name: s.clone(),
                max: 1,
            },
            StringOr::Map(m) => ConcurrencyGroup {
                name: m.name.value.clone(),
                max: m.max.as_ref().map(|m| m.value).unwrap_or(1).max(1),
            },
        });

        let timeout = t
            .timeout
            .as_ref()
            .map(|t| t.value.0)
            .or(self.defaults.timeout)
            .unwrap_or_else(|| effect.default_timeout());
        let timeout_ms = (timeout.as_millis() as u64).max(1);

        let retry = self.resolve_retry(t, timeout_ms);
        let output = self.resolve_output(t, result.is_some());
        let errors = self.resolve_errors(t);

        let sandbox = t.sandbox.as_ref().map(|s| {
            if !self.project.sandbox_profiles.contains_key(&s.value) {
                let names: Vec<&str> = self
                    .project
                    .sandbox_profiles
                    .keys()
                    .map(String::as_str)
                    .collect();
                self.reference(
                    s.range,
                    format!("unknown sandbox profile `{}`", s.value),
                    Some(format!(
                        "{} Profiles are defined under `sandbox_profiles` in toolgate.yaml.",
                        did_you_mean(&s.value, &names)
                    )),
                );
            }
            s.value.clone()
        });

        let exec = match &t.exec {
            Some(e) => self.resolve_exec(e, &parameters),
            None if self.imported => ExecSpec::Handler {
                language: HandlerLanguage::Rust,
            },
            None => {
                let at = t.name.as_ref().map(|n| n.range).unwrap_or(whole);
                self.contract(
                    at,
                    format!("tool `{name}` has no `exec`"),
                    Some("add `exec:` with one of `builtin: NAME`, `command: {argv: [...]}`, `mcp: {server, tool}`, `handler: rust`".into()),
                );
                ExecSpec::Handler {
                    language: HandlerLanguage::Rust,
                }
            }
        };

        let definition = ToolDefinition {
            name,
            version: t.version.as_ref().map(|v| v.value).unwrap_or(1),
            aliases: crate::spec::lifecycle::aliases(t),
            deprecated: crate::spec::lifecycle::deprecation(t),
            title: t.title.as_ref().map(|v| v.value.clone()),
            description: t
                .description
                .as_ref()
                .map(|v| v.value.clone())
                .unwrap_or_default(),
            effect,
            idempotency,
            idempotency_key,
            parameters,
            result,
            validate,
            permissions: PermissionPolicy {
                rules,
                default: default_decision,
                examples,
            },
            resources,
            concurrency_group,
            timeout_ms,
            retry,
            output,
            errors,
            sandbox,
            exec,
        };

        let policy = CompiledPolicy::from_parts(compiled_rules, default_decision);
        let runs = self.run_examples(&definition, &policy, &example_asts, validator.as_ref());
        (Some(definition), runs)
    }

    fn check_rule_id(&mut self, id: &Spanned<String>, seen: &mut HashSet<String>) {
        let valid = !id.value.is_empty()
            && id
                .value
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !valid {
            self.diags.push(
                self.error(Rule::InvalidRuleId, id.range, format!("rule id `{}` may only use letters, digits, `-`, `_` and `.`", id.value),
                )
                .with_help("ids appear in decisions, traces and suppressions; keep them short and kebab-case"),
            );
        }
        if !seen.insert(id.value.clone()) {
            self.diags.push(
                self.error(
                    Rule::InvalidRuleId,
                    id.range,
                    format!("rule id `{}` is used twice in this tool", id.value),
                )
                .with_help("validate and permission rule ids must be unique within a tool"),
            );
        }
    }

    /// Compiles and checks one expression, recording a [`CelSite`]; syntax errors become contract
    /// diagnostics at their exact position.
    fn compile_site(
        &mut self,
        role: CelRole,
        expr: &Spanned<String>,
        parameters: &Value,
    ) -> Option<Arc<Program>> {
        let span = self.span(expr.range);
        if expr.value.trim().is_empty() {
            self.diags.push(
                Diagnostic::new(
                    Some(Rule::CelSyntaxError.code()),
                    Severity::Error,
                    span,
                    "empty expression",
                )
                .with_help("write a CEL expression, e.g. `args.path.startsWith('src/')`"),
            );
            self.cel.push(CelSite {
                role,
                span,
                text: expr.value.clone(),
                program: None,
                analysis: None,
                problem_spans: Vec::new(),
            });
            return None;
        }
        match cel::compile(&expr.value) {
            Ok(program) => {
                let analysis =
                    cel::check::check(&program, parameters, role.slot(), self.options.cost_budget);
                let problem_spans = analysis
                    .problems
                    .iter()
                    .map(|p| self.map_chars(expr, p.start, p.end))
                    .collect();
                let program = Arc::new(program);
                self.cel.push(CelSite {
                    role,
                    span,
                    text: expr.value.clone(),
                    program: Some(program.clone()),
                    analysis: Some(analysis),
                    problem_spans,
                });
                Some(program)
            }
            Err(errors) => {
                for e in errors.iter().take(3) {
                    let at = cel_span::char_index(&expr.value, e.line, e.column);
                    let s = self.map_chars(expr, at, at + 1);
                    self.diags.push(
                        Diagnostic::new(
                            Some(Rule::CelSyntaxError.code()),
                            Severity::Error,
                            s,
                            format!("CEL syntax error: {}", e.message),
                        )
                        .with_label(span, "in this expression"),
                    );
                }
                self.cel.push(CelSite {
                    role,
                    span,
                    text: expr.value.clone(),
                    program: None,
                    analysis: None,
                    problem_spans: Vec::new(),
                });
                None
            }
        }
    }

    fn map_chars(&self, expr: &Spanned<String>, start: usize, end: usize) -> Span {
        let total = expr.value.chars().count();
        let start = start.min(total.saturating_sub(1));
        let end = end.min(total).max(start + 1);
        cel_span::map_range(&self.src.text, expr.range, &expr.value, start, end)
            .in_file(self.source)
    }

    /// Checks a schema and returns its compiled validator when it is valid.
    fn check_schema(
        &mut self,
        node: &Node,
        key: &str,
        must_be_object: bool,
    ) -> Option<jsonschema::Validator> {
        let schema = node.to_json();
        if must_be_object {
            let ty = node.get("type");
            let is_object = ty.and_then(Node::as_str) == Some("object");
            if !is_object {
                let at = ty.map(|t| t.range).unwrap_or(node.range);
                self.diags.push(
                    self.error(Rule::InvalidJsonSchema, at, "`parameters` must be an object schema (`type: object`)",
                    )
                    .with_help("tool arguments are always a JSON object; put each argument under `properties`"),
                );
            }
        }
        if !node.is_map() {
            self.diags.push(self.error(
                Rule::InvalidJsonSchema,
                node.range,
                format!("`{key}` must be a JSON Schema mapping, not {}", node.kind()),
            ));
            return None;
        }
        let meta = jsonschema::draft202012::meta::validator();
        let mut reported = 0;
        for e in meta.iter_errors(&schema) {
            if reported >= 5 {
                break;
            }
            reported += 1;
            let ptr = e.instance_path().as_str().to_owned();
            let at = node.at_pointer(&ptr).map(|n| n.range).unwrap_or(node.range);
            self.diags.push(
                self.error(
                    Rule::InvalidJsonSchema,
                    at,
                    format!(
                        "`{key}{}` is not valid JSON Schema 2020-12: {}",
                        ptr,
                        e.masked()
                    ),
                )
                .with_help("see https://json-schema.org/draft/2020-12 for the keyword's form"),
            );
        }
        self.check_required(node);
        if reported > 0 {
            return None;
        }
        match jsonschema::draft202012::new(&schema) {
            Ok(v) => Some(v),
            Err(e) => {
                let ptr = e.schema_path().as_str().to_owned();
                let at = node.at_pointer(&ptr).map(|n| n.range).unwrap_or(node.range);
                self.diags.push(self.error(
                    Rule::InvalidJsonSchema,
                    at,
                    format!("`{key}` cannot be compiled: {}", e.masked()),
                ));
                None
            }
        }
    }

    /// `required` must only name declared properties (recursively).
    fn check_required(&mut self, node: &Node) {
        if let (Some(req), Some(props)) = (node.get("required"), node.get("properties")) {
            let declared: Vec<&str> = props
                .entries()
                .iter()
                .map(|(k, _)| k.name.as_str())
                .collect();
            for r in req.items() {
                if let Some(name) = r.as_str()
                    && !declared.contains(&name)
                {
                    self.diags.push(
                        self.error(
                            Rule::InvalidJsonSchema,
                            r.range,
                            format!("`required` names `{name}`, which is not under `properties`"),
                        )
                        .with_help(did_you_mean(name, &declared)),
                    );
                }
            }
        }
        if let NodeValue::Map(entries) = &node.value {
            for (_, v) in entries {
                match &v.value {
                    NodeValue::Map(_) => self.check_required(v),
                    NodeValue::Seq(items) => {
                        for i in items {
                            self.check_required(i);
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    fn resolve_retry(&mut self, t: &ToolSpec, timeout_ms: u64) -> RetryPolicy {
        let Some(r) = &t.retry else {
            return RetryPolicy::none(timeout_ms);
        };
        let r = &r.value;
        let max_attempts = r.max_attempts.as_ref().map(|m| m.value).unwrap_or(3).max(1);
        let mut on = Vec::new();
        if let Some(list) = &r.on {
            for e in &list.value {
                match ErrorType::parse(&e.value) {
                    Some(et) => on.push(et),
                    None => self.unknown_error_type(e.range, &e.value),
                }
            }
        }
        let mut backoff = Backoff::default();
        if let Some(b) = &r.backoff {
            if let Some(v) = &b.value.initial {
                backoff.initial_ms = v.value.0.as_millis() as u64;
            }
            if let Some(v) = &b.value.factor {
                if !(v.value.is_finite() && v.value >= 1.0) {
                    self.contract(
                        v.range,
                        "backoff `factor` must be a number of at least 1",
                        None,
                    );
                }
                backoff.factor = v.value;
            }
            if let Some(v) = &b.value.max {
                backoff.max_ms = v.value.0.as_millis() as u64;
            }
            if let Some(v) = &b.value.jitter {
                backoff.jitter = v.value;
            }
        }
        let budget_ms = r
            .budget
            .as_ref()
            .map(|b| b.value.0.as_millis() as u64)
            .unwrap_or_else(|| timeout_ms.saturating_mul(u64::from(max_attempts)));
        RetryPolicy {
            max_attempts,
            on,
            backoff,
            budget_ms,
        }
    }

    fn unknown_error_type(&mut self, range: TextRange, text: &str) {
        let names: Vec<&str> = ErrorType::ALL.iter().map(|e| e.as_str()).collect();
        self.contract(
            range,
            format!("unknown error type `{text}`"),
            Some(did_you_mean(text, &names)),
        );
    }

    fn resolve_output(&mut self, t: &ToolSpec, has_result: bool) -> OutputPolicy {
        let o = t.output.as_ref().map(|o| &o.value);
        let default_formatter = self.defaults.formatter.unwrap_or(match &t.exec {
            Some(e) if matches!(e.value, ExecAst::Command(_)) => FormatterKind::Bash,
            _ if has_result => FormatterKind::Json,
            _ => FormatterKind::Text,
        });
        let keep = o
            .and_then(|o| o.keep.as_ref())
            .map_or(OutputKeep::HeadTail, |k| k.value);
        let mut redact = Vec::new();
        if let Some(list) = o.and_then(|o| o.redact.as_ref()) {
            for r in &list.value {
                if let Err(e) = crate::ir::tool::compile_redaction(&r.value) {
                    self.contract(
                        r.range,
                        format!("`redact` pattern is not a valid regular expression: {e}"),
                        None,
                    );
                }
                redact.push(r.value.clone());
            }
        }
        let external_reference = o
            .and_then(|o| o.external_reference.as_ref())
            .and_then(|p| self.check_external_reference(t, p));
        OutputPolicy {
            formatter: o
                .and_then(|o| o.formatter.as_ref())
                .map(|f| f.value)
                .unwrap_or(default_formatter),
            max_bytes: o
                .and_then(|o| o.max_bytes.as_ref())
                .map(|v| v.value.0)
                .unwrap_or(self.defaults.max_bytes),
            max_lines: o
                .and_then(|o| o.max_lines.as_ref())
                .map(|v| v.value)
                .unwrap_or(self.defaults.max_lines),
            keep,
            artifact_threshold: o
                .and_then(|o| o.artifact_threshold.as_ref())
                .map(|v| v.value.0)
                .unwrap_or(self.defaults.artifact_threshold),
            redact,
            redact_secrets: o
                .and_then(|o| o.redact_secrets.as_ref())
                .map(|v| v.value)
                .unwrap_or(true),
            external_reference,
        }
    }

    /// Checks `output.external_reference`: a JSON Pointer to a property the `result` schema
    /// declares.
    fn check_external_reference(&mut self, t: &ToolSpec, p: &Spanned<String>) -> Option<String> {
        let Some(result) = &t.result else {
            self.contract(
                p.range,
                "`external_reference` points into the structured result, but the tool has no `result` schema",
                Some("add a `result` schema that declares the field, or remove `external_reference`".into()),
            );
            return None;
        };
        if !p.value.starts_with('/') {
            self.contract(
                p.range,
                format!(
                    "`external_reference` must be a JSON Pointer such as `/id`, not `{}`",
                    p.value
                ),
                Some(format!("write `/{}`", p.value.trim_start_matches('/'))),
            );
            return None;
        }
        let mut node = result;
        for token in p.value[1..].split('/') {
            let token = token.replace("~1", "/").replace("~0", "~");
            let props = node.get("properties");
            match props.and_then(|props| props.get(&token)) {
                Some(next) => node = next,
                None => {
                    let names: Vec<&str> = props
                        .map(|props| {
                            props
                                .entries()
                                .iter()
                                .map(|(k, _)| k.name.as_str())
                                .collect()
                        })
                        .unwrap_or_default();
                    let help = if names.is_empty() {
                        "point at a property the `result` schema declares".to_owned()
                    } else {
                        did_you_mean(&token, &names)
                    };
                    self.contract(
                        p.range,
                        format!("`external_reference` names `{token}`, which the `result` schema does not declare"),
                        Some(help),
                    );
                    return None;
                }
            }
        }
        Some(p.value.clone())
    }

    fn resolve_errors(&mut self, t: &ToolSpec) -> IndexMap<ErrorType, String> {
        let mut out = IndexMap::new();
        let Some(node) = &t.errors else { return out };
        if !node.is_map() {
            self.contract(
                node.range,
                format!(
                    "`errors` must map error types to hints, not {}",
                    node.kind()
                ),
                None,
            );
            return out;
        }
        for (k, v) in node.entries() {
            let Some(et) = ErrorType::parse(&k.name) else {
                self.unknown_error_type(k.range, &k.name);
                continue;
            };
            match v.as_str() {
                Some(hint) => {
                    out.insert(et, hint.to_owned());
                }
                None => self.contract(
                    v.range,
                    format!("the hint for `{}` must be text, not {}", k.name, v.kind()),
                    None,
                ),
            }
        }
        out
    }

    fn resolve_exec(&mut self, e: &Spanned<ExecAst>, parameters: &Value) -> ExecSpec {
        match &e.value {
            ExecAst::Builtin(name) => {
                if crate::ir::Builtin::parse(&name.value).is_none() {
                    self.reference(
                        name.range,
                        format!("unknown builtin tool `{}`", name.value),
                        Some(did_you_mean(&name.value, &crate::ir::Builtin::names())),
                    );
                }
                ExecSpec::Builtin {
                    name: name.value.clone(),
                }
            }
            ExecAst::Handler(lang) => ExecSpec::Handler {
                language: lang.value,
            },
            ExecAst::Http(h) => ExecSpec::Http(crate::spec::http::resolve(
                h,
                parameters,
                &mut |(r, m, help)| self.contract(r, m, help),
            )),
            ExecAst::Mcp(m) => {
                if !self.project.mcp_servers.contains_key(&m.server.value) {
                    let names: Vec<&str> = self
                        .project
                        .mcp_servers
                        .keys()
                        .map(String::as_str)
                        .collect();
                    self.reference(
                        m.server.range,
                        format!("unknown MCP server `{}`", m.server.value),
                        Some(format!(
                            "{} Declare it under `mcp_servers` in toolgate.yaml.",
                            did_you_mean(&m.server.value, &names)
                        )),
                    );
                }
                ExecSpec::Mcp {
                    server: m.server.value.clone(),
                    tool: m.tool.value.clone(),
                }
            }
            ExecAst::Command(c) => {
                if c.argv.value.is_empty() {
                    self.contract(
                        c.argv.range,
                        "`argv` is empty",
                        Some("the first element is the program, e.g. `argv: [git, status]`".into()),
                    );
                }
                let mut argv = Vec::new();
                for el in &c.argv.value {
                    match &el.value {
                        StringOr::String(s) => {
                            self.check_template(&Spanned::new(s.clone(), el.range), parameters);
                            argv.push(ArgvElement::Template(s.clone()));
                        }
                        StringOr::Map(m) => match (&m.when, &m.value, &m.each) {
                            (Some(when), Some(value), None) => {
                                self.compile_site(CelRole::ArgvWhen, when, parameters);
                                self.check_template(value, parameters);
                                argv.push(ArgvElement::When {
                                    when: when.value.clone(),
                                    value: value.value.clone(),
                                });
                            }
                            (None, None, Some(each)) => {
                                self.compile_site(CelRole::ArgvEach, each, parameters);
                                argv.push(ArgvElement::Each(each.value.clone()));
                            }
                            _ => self.contract(
                                el.range,
                                "an argv element mapping is either `{when: CEL, value: TEMPLATE}` or `{each: CEL}`",
                                None,
                            ),
                        },
                    }
                }
                if let Some(cwd) = &c.cwd {
                    self.check_template(cwd, parameters);
                }
                if let Some(stdin) = &c.stdin {
                    self.compile_site(CelRole::Stdin, stdin, parameters);
                }
                let env = c
                    .env
                    .as_ref()
                    .map(|env| {
                        for v in env.value.set.values() {
                            self.check_template(v, parameters);
                        }
                        EnvSpec {
                            inherit: env.value.inherit.iter().map(|s| s.value.clone()).collect(),
                            set: env
                                .value
                                .set
                                .iter()
                                .map(|(k, v)| (k.clone(), v.value.clone()))
                                .collect(),
                            secret: env.value.secret.iter().map(|s| s.value.clone()).collect(),
                        }
                    })
                    .unwrap_or_default();
                ExecSpec::Command(CommandSpec {
                    argv,
                    cwd: c.cwd.as_ref().map(|s| s.value.clone()),
                    env,
                    stdin: c.stdin.as_ref().map(|s| s.value.clone()),
                    shell: c.shell.as_ref().is_some_and(|s| s.value),
                })
            }
        }
    }

    /// Parses a template and checks each placeholder as an expression at its own position.
    fn check_template(&mut self, t: &Spanned<String>, parameters: &Value) {
        match template::parse(&t.value) {
            Ok(parts) => {
                for p in parts {
                    if let TemplatePart::Expr { source, start } = p {
                        let len = source.chars().count();
                        let span = self.map_chars(t, start, start + len);
                        let sub = Spanned::new(
                            source,
                            TextRange {
                                start: span.start,
                                end: span.end,
                            },
                        );
                        self.compile_site_at(CelRole::Template, &sub, t, start, parameters);
                    }
                }
            }
            Err(e) => {
                let s = self.map_chars(t, e.at, e.at + 1);
                self.diags.push(Diagnostic::new(
                    Some(Rule::InvalidContract.code()),
                    Severity::Error,
                    s,
                    e.message,
                ));
            }
        }
    }

    /// Like [`Self::compile_site`] for an expression embedded in a template at `offset` chars.
    fn compile_site_at(
        &mut self,
        role: CelRole,
        sub: &Spanned<String>,
        whole: &Spanned<String>,
        offset: usize,
        parameters: &Value,
    ) {
        let before = self.cel.len();
        let diags_before = self.diags.len();
        self.compile_site(role, sub, parameters);
        // Re-map spans relative to the enclosing template, whose token the walk understands.
        if let Some(site) = self.cel.get_mut(before) {
            site.span = cel_span::map_range(
                &self.src.text,
                whole.range,
                &whole.value,
                offset,
                offset + sub.value.chars().count(),
            )
            .in_file(self.source);
            if let Some(a) = &site.analysis {
                site.problem_spans = a
                    .problems
                    .iter()
                    .map(|p| {
                        cel_span::map_range(
                            &self.src.text,
                            whole.range,
                            &whole.value,
                            offset + p.start,
                            offset + p.end,
                        )
                        .in_file(self.source)
                    })
                    .collect();
            }
        }
        for d in self.diags.iter_mut().skip(diags_before) {
            if d.code == Some(Rule::CelSyntaxError.code()) {
                d.span = cel_span::map_range(
                    &self.src.text,
                    whole.range,
                    &whole.value,
                    offset,
                    offset + 1,
                )
                .in_file(self.source);
            }
        }
    }

    fn run_examples(
        &mut self,
        def: &ToolDefinition,
        policy: &CompiledPolicy,
        asts: &[&Spanned<crate::spec::ast::PermissionExampleAst>],
        validator: Option<&jsonschema::Validator>,
    ) -> Vec<ExampleRun> {
        let mut runs = Vec::new();
        for ex in asts {
            let span = self.span(ex.range);
            let args = ex.value.args.to_json();
            if let Some(c) = &ex.value.context
                && !self.project.contexts.contains_key(&c.value)
            {
                let names: Vec<&str> = self.project.contexts.keys().map(String::as_str).collect();
                self.reference(
                    c.range,
                    format!("unknown context `{}`", c.value),
                    Some(did_you_mean(&c.value, &names)),
                );
            }
            let example = PermissionExample {
                args,
                context: ex.value.context.as_ref().map(|c| c.value.clone()),
                expect: ex.value.expect.value,
            };
            let got = match run_example(def, policy, self.protected.clone(), validator, &example) {
                ExampleOutcome::InvalidArguments(errs) => {
                    self.diags.push(
                        self.error(
                            Rule::PermissionExampleFailed,
                            ex.value.args.range,
                            format!(
                                "example arguments do not match `parameters`: {}",
                                errs.join("; ")
                            ),
                        )
                        .with_help("a policy test must use arguments the tool would accept"),
                    );
                    runs.push(ExampleRun {
                        span,
                        expect: ex.value.expect.value,
                        got: Err("invalid arguments".into()),
                    });
                    continue;
                }
                ExampleOutcome::Failed(m) => Err(m),
                ExampleOutcome::Decided(d) => Ok(d),
            };
            match &got {
                Ok(d) if d.decision != ex.value.expect.value => {
                    let by = match &d.source {
                        crate::policy::DecisionSource::Rule { id } => format!("rule `{id}`"),
                        crate::policy::DecisionSource::Default => {
                            format!(
                                "the `{}` default for effect `{}` (no rule matched)",
                                d.decision, def.effect
                            )
                        }
                        crate::policy::DecisionSource::Protected { parameter, .. } => format!(
                            "`protect` before any rule: {} ({parameter})",
                            d.reason.as_deref().unwrap_or("a protected path")
                        ),
                    };
                    self.diags.push(
                        self.error(
                            Rule::PermissionExampleFailed,
                            ex.value.expect.range,
                            format!(
                                "example expects `{}` but the policy decides `{}` by {by}",
                                ex.value.expect.value, d.decision
                            ),
                        )
                        .with_label(self.span(ex.value.args.range), "for these arguments")
                        .with_help("fix the rules, or the example if the policy is right"),
                    );
                }
                Err(msg) => {
                    self.diags.push(self.error(
                        Rule::PermissionExampleFailed,
                        ex.value.args.range,
                        format!("example could not be decided: {msg}"),
                    ));
                }
                Ok(_) => {}
            }
            runs.push(ExampleRun {
                span,
                expect: ex.value.expect.value,
                got,
            });
        }
        runs
    }
}

/// "did you mean `x`?" or the list of valid names.
pub use crate::suggest::did_you_mean_or_list as did_you_mean;

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use crate::check::{CheckedProject, check_texts};
    use crate::ir::{Decision, Effect, Idempotency};
    use crate::lint::Rule;

    const HEAD: &str = "name: t
description: Write a note into the workspace's notes folder and return its path.
parameters: {type: object, properties: {path: {type: string}}, required: [path]}
";

    fn check(body: &str) -> CheckedProject {
        check_texts(&[(PathBuf::from("t.yaml"), format!("{HEAD}{body}"))], None)
    }

    fn errors(c: &CheckedProject, rule: Rule) -> Vec<&crate::diagnostic::Diagnostic> {
        c.diagnostics
            .iter()
            .filter(|d| d.code == Some(rule.code()))
            .collect()
    }

    #[test]
    fn defaults_come_from_the_effect() {
        let c = check("effect: local_write\nexec: {builtin: write_file}\n");
        let def = c.resolution.definitions().next().unwrap();
        assert_eq!(def.idempotency, Effect::LocalWrite.default_idempotency());
        assert_eq!(def.idempotency, Idempotency::NonIdempotent);
        assert_eq!(
            def.timeout_ms,
            Effect::LocalWrite.default_timeout().as_millis() as u64
        );
        assert_eq!(def.permissions.default, Decision::Ask);
    }

    #[test]
    fn an_unknown_builtin_is_a_located_reference_error_with_a_suggestion() {
        let c = check("effect: local_write\nexec: {builtin: write_fil}\n");
        let e = errors(&c, Rule::UnknownProjectReference);
        assert_eq!(e.len(), 1, "{:#?}", c.diagnostics);
        assert_eq!(e[0].help.as_deref(), Some("did you mean `write_file`?"));
        assert!(c.resolution.definitions().next().is_none());
    }

    #[test]
    fn examples_with_arguments_the_schema_rejects_fail_before_the_policy_runs() {
        let c = check(
            "effect: local_write
exec: {builtin: write_file}
permissions:
  rules: [{id: notes, allow: \"args.path.startsWith('notes/')\"}]
  examples:
    - {args: {path: notes/a.md}, expect: allow}
    - {args: {path: 3}, expect: allow}
",
        );
        let e = errors(&c, Rule::PermissionExampleFailed);
        assert_eq!(e.len(), 1, "{:#?}", c.diagnostics);
        assert!(e[0].message.contains("do not match `parameters`"), "{e:?}");
        let runs = &c.resolution.tools[0].examples;
        assert!(
            runs[0]
                .got
                .as_ref()
                .is_ok_and(|d| d.decision == Decision::Allow)
        );
        assert!(runs[1].got.is_err());
    }
}
