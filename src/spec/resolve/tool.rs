//! One tool: the resolver's state, its diagnostic helpers, and the definition assembled key by
//! key from the concern files beside this one.

use std::collections::HashSet;
use std::sync::Arc;

use crate::diagnostic::Diagnostic;
use crate::ir::{PermissionPolicy, ProjectConfig, ToolDefinition};
use crate::policy::ProtectedSet;
use crate::rule::Rule;
use crate::spec::ast::ToolSpec;
use crate::spec::project::ToolDefaults;
use crate::spec::source::{SourceFile, SourceId, Span, TextRange};
use crate::spec::yaml::Spanned;

use super::{CelSite, ExampleRun, ResolveOptions, lifecycle};

/// Resolves the tools of one file (one resolver per tool).
pub(super) struct ToolResolver<'a> {
    pub(super) src: &'a SourceFile,
    pub(super) source: SourceId,
    pub(super) project: &'a ProjectConfig,
    pub(super) defaults: &'a ToolDefaults,
    pub(super) options: &'a ResolveOptions,
    /// The project's protected set, which policy tests judge paths against.
    pub(super) protected: Arc<ProtectedSet>,
    /// Imported tool lists have no effect or exec of their own; those are not required.
    pub(super) imported: bool,
    pub(super) diags: Vec<Diagnostic>,
    pub(super) cel: Vec<CelSite>,
}

impl ToolResolver<'_> {
    pub(super) fn span(&self, r: TextRange) -> Span {
        r.in_file(self.source)
    }

    /// An error of contract rule `rule` at `range` of this tool's file.
    pub(super) fn error(
        &self,
        rule: Rule,
        range: TextRange,
        message: impl Into<String>,
    ) -> Diagnostic {
        super::error(rule, self.span(range), message)
    }

    /// Reports an invalid contract (TGK001).
    pub(super) fn contract(
        &mut self,
        range: TextRange,
        message: impl Into<String>,
        help: Option<String>,
    ) {
        let d = self.error(Rule::InvalidContract, range, message);
        self.diags.push(d.with_help_opt(help));
    }

    /// Reports a name the project does not define (TGK002).
    pub(super) fn reference(
        &mut self,
        range: TextRange,
        message: impl Into<String>,
        help: Option<String>,
    ) {
        let d = self.error(Rule::UnknownProjectReference, range, message);
        self.diags.push(d.with_help_opt(help));
    }

    /// The tool's definition (even with errors, for the linter's sake; the caller drops it when
    /// any diagnostic is an error) and what its permission examples got.
    ///
    /// The keys resolve in a fixed order, so that diagnostics and CEL sites keep it.
    pub(super) fn resolve(
        &mut self,
        tool: &Spanned<ToolSpec>,
    ) -> (Option<ToolDefinition>, Vec<ExampleRun>) {
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
        // Missing `effect` and `exec` are reported at the name, where the tool starts.
        let at = t.name.as_ref().map(|n| n.range).unwrap_or(whole);
        let effect = self.effect(t, &name, at);
        let (idempotency, key) = self.idempotency(t, effect);
        let (parameters, validator) = self.parameters(t);
        let result = self.result(t);
        let idempotency_key = key.map(|k| self.idempotency_key(k, &parameters));

        // Validate and permission rule ids share one namespace within the tool.
        let mut ids: HashSet<String> = HashSet::new();
        let validate = self.validate(t, &parameters, &mut ids);
        let permissions = self.permissions(t, effect, &parameters, &mut ids);

        let resources = self.resources(t, &parameters);
        let concurrency_group = super::resources::concurrency_group(t);
        let timeout_ms = self.timeout_ms(t, effect);
        let retry = self.retry(t, timeout_ms);
        let output = self.output(t, result.is_some());
        let errors = self.error_hints(t);
        let sandbox = self.sandbox(t);
        let exec = self.exec(t, &name, at, &parameters);

        let definition = ToolDefinition {
            name,
            version: t.version.as_ref().map(|v| v.value).unwrap_or(1),
            aliases: lifecycle::aliases(t),
            deprecated: lifecycle::deprecation(t),
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
                rules: permissions.rules.clone(),
                default: permissions.default,
                examples: permissions.examples(),
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
        let runs = self.run_examples(&definition, permissions, validator.as_ref());
        (Some(definition), runs)
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{errors, resolve_tool, text_at};
    use crate::ir::{Decision, Effect, ExecSpec, HandlerLanguage, Idempotency};
    use crate::rule::Rule;

    #[test]
    fn a_tool_without_name_effect_or_exec_has_three_located_errors_and_no_definition() {
        let r = resolve_tool("description: Write a note.\n");
        let e = errors(&r, Rule::InvalidContract);
        let messages: Vec<&str> = e.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "tool has no `name`",
                "tool `` declares no `effect`",
                "tool `` has no `exec`"
            ]
        );
        assert_eq!(e[0].help.as_deref(), Some("add `name: snake_case_name`"));
        assert!(r.definitions().next().is_none());
    }

    #[test]
    fn a_missing_effect_and_exec_are_reported_at_the_name() {
        let r = resolve_tool("name: note\ndescription: Write a note.\n");
        let e = errors(&r, Rule::InvalidContract);
        assert_eq!(e.len(), 2, "{e:#?}");
        for d in &e {
            assert_eq!(text_at(&r, d), "note");
        }
        assert!(
            e[0].help
                .as_deref()
                .is_some_and(|h| h.contains("read_only") && h.contains("destructive")),
            "{:?}",
            e[0].help
        );
        assert!(e[1].message.contains("has no `exec`"));
    }

    #[test]
    fn a_valid_tool_resolves_with_its_defaults() {
        let r = resolve_tool(
            "name: note
description: Write a note.
effect: local_write
exec: {handler: rust}
",
        );
        assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
        let def = r.definitions().next().unwrap();
        assert_eq!(def.name, "note");
        assert_eq!(def.version, 1);
        assert_eq!(def.effect, Effect::LocalWrite);
        assert_eq!(def.idempotency, Idempotency::NonIdempotent);
        assert_eq!(def.permissions.default, Decision::Ask);
        assert_eq!(
            def.parameters,
            serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false})
        );
        assert_eq!(
            def.exec,
            ExecSpec::Handler {
                language: HandlerLanguage::Rust
            }
        );
    }
}
