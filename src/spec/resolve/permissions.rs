//! Argument checks and permissions: `validate` rules, permission rules with the effect's
//! default decision, rule ids, and the permission examples run as the runtime runs them
//! ([`run_example`]).

use std::collections::HashSet;
use std::sync::Arc;

use crate::cel::Compiled;
use serde_json::Value;

use crate::ir::{
    Decision, Effect, PermissionExample, PermissionRule, ToolDefinition, ValidationRule,
};
use crate::policy::examples::{ExampleOutcome, run_example};
use crate::policy::{CompiledPolicy, DecisionSource};
use crate::rule::Rule;
use crate::spec::ast::{PermissionExampleAst, ToolSpec};
use crate::spec::yaml::Spanned;

use super::tool::ToolResolver;
use super::{CelRole, ExampleRun, did_you_mean};

/// A tool's permission rules, resolved but not yet judged against its examples.
pub(super) struct Permissions<'t> {
    /// Every rule, in order.
    pub(super) rules: Vec<PermissionRule>,
    /// The rules whose expression compiled, with their programs.
    compiled: Vec<(PermissionRule, Arc<Compiled>)>,
    /// The decision when no rule matches.
    pub(super) default: Decision,
    /// The examples as written.
    asts: Vec<&'t Spanned<PermissionExampleAst>>,
}

impl Permissions<'_> {
    /// The examples as the IR keeps them.
    pub(super) fn examples(&self) -> Vec<PermissionExample> {
        self.asts.iter().map(|e| example(&e.value)).collect()
    }
}

fn example(e: &PermissionExampleAst) -> PermissionExample {
    PermissionExample {
        args: e.args.to_json(),
        context: e.context.as_ref().map(|c| c.value.clone()),
        expect: e.expect.value,
    }
}

impl ToolResolver<'_> {
    /// The `validate` rules, each compiled as a condition.
    pub(super) fn validate(
        &mut self,
        t: &ToolSpec,
        parameters: &Value,
        ids: &mut HashSet<String>,
    ) -> Vec<ValidationRule> {
        let mut validate = Vec::new();
        let Some(rules) = &t.validate else {
            return validate;
        };
        for r in &rules.value {
            let r = &r.value;
            self.check_rule_id(&r.id, ids);
            self.compile_site(CelRole::Validate(r.id.value.clone()), &r.expr, parameters);
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
        validate
    }

    /// The permission rules, and the default decision: toolgate.yaml's for the effect, else
    /// the effect's own.
    pub(super) fn permissions<'t>(
        &mut self,
        t: &'t ToolSpec,
        effect: Effect,
        parameters: &Value,
        ids: &mut HashSet<String>,
    ) -> Permissions<'t> {
        let default = self
            .project
            .default_permissions
            .get(&effect)
            .copied()
            .unwrap_or_else(|| effect.default_permission());
        let mut out = Permissions {
            rules: Vec::new(),
            compiled: Vec::new(),
            default,
            asts: Vec::new(),
        };
        let Some(p) = &t.permissions else {
            return out;
        };
        for r in &p.value.rules {
            let rv = &r.value;
            self.check_rule_id(&rv.id, ids);
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
                    parameters,
                );
                let rule = PermissionRule {
                    id: rv.id.value.clone(),
                    decision,
                    expr: expr.value.clone(),
                    reason: rv.reason.as_ref().map(|r| r.value.clone()),
                };
                if let Some(program) = program {
                    out.compiled.push((rule.clone(), program));
                }
                out.rules.push(rule);
            }
        }
        out.asts.extend(p.value.examples.iter());
        out
    }

    /// A rule id is a short word of letters, digits, `-`, `_` and `.`, unique within the tool.
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

    /// Runs each example against the compiled rules; a wrong decision, arguments the schema
    /// rejects or an undecidable example is a TGK finding at the example.
    pub(super) fn run_examples(
        &mut self,
        def: &ToolDefinition,
        permissions: Permissions<'_>,
        validator: Option<&jsonschema::Validator>,
    ) -> Vec<ExampleRun> {
        let policy = CompiledPolicy::from_parts(permissions.compiled, permissions.default);
        let mut runs = Vec::new();
        for ex in permissions.asts {
            let span = self.span(ex.range);
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
            let example = example(&ex.value);
            let got = match run_example(def, &policy, self.protected.clone(), validator, &example) {
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
                        DecisionSource::Rule { id } => format!("rule `{id}`"),
                        DecisionSource::Default => {
                            format!(
                                "the `{}` default for effect `{}` (no rule matched)",
                                d.decision, def.effect
                            )
                        }
                        DecisionSource::Protected { parameter, .. } => format!(
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

#[cfg(test)]
mod tests {
    use super::super::testing::{
        HEAD, errors, offset, resolve_tool, resolve_with_project, text_at,
    };
    use crate::ir::{Decision, PermissionRule};
    use crate::rule::Rule;

    #[test]
    fn rules_and_examples_resolve_into_the_policy() {
        let r = resolve_tool(&format!(
            "{HEAD}validate:
  - {{id: relative, expr: \"!args.path.startsWith('/')\"}}
permissions:
  rules: [{{id: notes, allow: \"args.path.startsWith('notes/')\", reason: notes are free}}]
  examples:
    - {{args: {{path: notes/a.md}}, expect: allow}}
    - {{args: {{path: src/a.rs}}, expect: ask, context: interactive}}
"
        ));
        assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
        let def = r.definitions().next().unwrap();
        assert_eq!(def.validate[0].message, "argument check `relative` failed");
        assert_eq!(
            def.permissions.rules,
            [PermissionRule {
                id: "notes".into(),
                decision: Decision::Allow,
                expr: "args.path.startsWith('notes/')".into(),
                reason: Some("notes are free".into()),
            }]
        );
        assert_eq!(def.permissions.examples.len(), 2);
        assert_eq!(
            def.permissions.examples[1].context.as_deref(),
            Some("interactive")
        );
        let runs = &r.tools[0].examples;
        assert!(
            runs.iter()
                .all(|e| e.got.as_ref().is_ok_and(|d| d.decision == e.expect))
        );
    }

    #[test]
    fn the_default_decision_comes_from_toolgate_yaml_before_the_effect() {
        let r = resolve_with_project(HEAD, "defaults: {permissions: {local_write: deny}}\n");
        assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
        assert_eq!(
            r.definitions().next().unwrap().permissions.default,
            Decision::Deny
        );
    }

    #[test]
    fn rule_ids_must_be_words_and_unique_within_the_tool() {
        let r = resolve_tool(&format!(
            "{HEAD}validate: [{{id: 'no spaces', expr: 'true'}}, {{id: twice, expr: 'true'}}]
permissions:
  rules: [{{id: twice, allow: 'true'}}]
"
        ));
        let e = errors(&r, Rule::InvalidRuleId);
        let messages: Vec<&str> = e.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "rule id `no spaces` may only use letters, digits, `-`, `_` and `.`",
                "rule id `twice` is used twice in this tool"
            ]
        );
        assert_eq!(text_at(&r, e[1]), "twice");
        assert_eq!(
            e[1].span.start as usize,
            r.source_text().rfind("twice").unwrap()
        );
    }

    #[test]
    fn a_rule_with_two_decisions_is_a_contract_error() {
        let r = resolve_tool(&format!(
            "{HEAD}permissions:\n  rules: [{{id: both, allow: 'true', deny: 'false'}}]\n"
        ));
        let e = errors(&r, Rule::InvalidContract);
        assert_eq!(e.len(), 1, "{:#?}", r.diagnostics);
        assert_eq!(
            e[0].message,
            "permission rule `both` must have exactly one of `allow`, `ask`, `deny` (it has 2)"
        );
        assert_eq!(
            e[0].help.as_deref(),
            Some("split it into one rule per decision")
        );
    }

    #[test]
    fn an_example_in_an_unknown_context_is_a_reference_error() {
        let r = resolve_tool(&format!(
            "{HEAD}permissions:\n  examples: [{{args: {{path: a}}, expect: ask, context: interactiv}}]\n"
        ));
        let e = errors(&r, Rule::UnknownProjectReference);
        assert_eq!(e.len(), 1, "{:#?}", r.diagnostics);
        assert_eq!(e[0].message, "unknown context `interactiv`");
        assert_eq!(e[0].help.as_deref(), Some("did you mean `interactive`?"));
        assert_eq!(text_at(&r, e[0]), "interactiv");
    }

    #[test]
    fn a_wrong_expectation_names_what_decided() {
        let r = resolve_tool(&format!(
            "{HEAD}permissions:
  rules: [{{id: notes, allow: \"args.path.startsWith('notes/')\"}}]
  examples:
    - {{args: {{path: notes/a.md}}, expect: deny}}
    - {{args: {{path: src/a.rs}}, expect: allow}}
    - {{args: {{path: .env}}, expect: ask}}
"
        ));
        let e = errors(&r, Rule::PermissionExampleFailed);
        let messages: Vec<&str> = e.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages[0],
            "example expects `deny` but the policy decides `allow` by rule `notes`"
        );
        assert_eq!(
            messages[1],
            "example expects `allow` but the policy decides `ask` by the `ask` default for effect `local_write` (no rule matched)"
        );
        assert!(
            messages[2].starts_with(
                "example expects `ask` but the policy decides `deny` by `protect` before any rule:"
            ),
            "{messages:?}"
        );
        assert_eq!(messages.len(), 3);
        assert_eq!(text_at(&r, e[0]), "deny");
        assert_eq!(e[0].labels[0].message, "for these arguments");
    }

    #[test]
    fn an_example_the_policy_cannot_decide_is_reported_at_its_arguments() {
        let r = resolve_tool(&format!(
            "{HEAD}permissions:
  rules: [{{id: numeric, allow: 'int(args.path) > 0'}}]
  examples: [{{args: {{path: abc}}, expect: allow}}]
"
        ));
        let e = errors(&r, Rule::PermissionExampleFailed);
        assert_eq!(e.len(), 1, "{:#?}", r.diagnostics);
        assert!(
            e[0].message.starts_with("example could not be decided: "),
            "{}",
            e[0].message
        );
        assert_eq!(e[0].span.start, offset(&r, "{path: abc}"));
        assert!(r.tools[0].examples[0].got.is_err());
    }

    #[test]
    fn examples_with_arguments_the_schema_rejects_fail_before_the_policy_runs() {
        let r = resolve_tool(&format!(
            "{HEAD}permissions:
  rules: [{{id: notes, allow: \"args.path.startsWith('notes/')\"}}]
  examples:
    - {{args: {{path: notes/a.md}}, expect: allow}}
    - {{args: {{path: 3}}, expect: allow}}
"
        ));
        let e = errors(&r, Rule::PermissionExampleFailed);
        assert_eq!(e.len(), 1, "{:#?}", r.diagnostics);
        assert!(e[0].message.contains("do not match `parameters`"), "{e:?}");
        let runs = &r.tools[0].examples;
        assert!(
            runs[0]
                .got
                .as_ref()
                .is_ok_and(|d| d.decision == Decision::Allow)
        );
        assert_eq!(
            runs[1].got.as_ref().err().map(String::as_str),
            Some("invalid arguments")
        );
    }
}
