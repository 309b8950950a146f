//! Permission evaluation: the one evaluator behind load-time policy tests and run-time
//! decisions.
//!
//! First the protected paths ([`arguments::protected_decision`]): a call whose path or glob
//! argument the project's protected set covers is denied, whatever the rules say. Otherwise every
//! rule is evaluated; the decision is the strictest match (`deny > ask > allow`), else the
//! effect's default. The result records the whole chain so a decision can be explained.

pub mod arguments;
pub mod examples;
pub mod files;
pub mod protect;
pub(crate) mod spec_reach;
pub mod trust;

use std::sync::Arc;

use crate::cel::Compiled;
use serde::{Deserialize, Serialize};

use crate::cel::{Bindings, EvalError, Evaluator};
use crate::ir::{Decision, PermissionPolicy, PermissionRule, ToolDefinition};

pub use arguments::{PathParam, ProtectedArgument};
pub use examples::{EXAMPLE_WORKSPACE, ExampleOutcome, run_example};
pub use files::{PolicyFileReason, PolicyFiles, SpecGlobError};
pub use protect::{ProtectError, ProtectedPaths, ProtectedSet, Protection};

/// A permission policy with its rules compiled.
#[derive(Clone)]
pub struct CompiledPolicy {
    rules: Vec<(PermissionRule, Arc<Compiled>)>,
    default: Decision,
}

/// One rule's part in a decision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuleOutcome {
    /// The rule id.
    pub id: String,
    /// What the rule decides when it matches.
    pub decision: Decision,
    /// Whether it matched.
    pub matched: bool,
    /// Why the rule could not be evaluated, when it could not (the decision is then a deny).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Where a decision came from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum DecisionSource {
    /// The strictest matching rule.
    Rule {
        /// Its id.
        id: String,
    },
    /// No rule matched: the effect class default.
    Default,
    /// An argument names a protected path: denied before any rule, and no approval can
    /// change that.
    Protected {
        /// The parameter (`path`, `paths[1]`).
        parameter: String,
        /// The path judged (resolved).
        path: String,
        /// The protected glob it matches.
        glob: String,
    },
}

impl DecisionSource {
    /// How a decision's source reads in a sentence: "policy rule `no-secrets`", "the default
    /// for local_write tools", "the protected path `.env`".
    pub fn describe(&self, effect: crate::ir::Effect) -> String {
        match self {
            DecisionSource::Rule { id } => format!("policy rule `{id}`"),
            DecisionSource::Default => format!("the default for {effect} tools"),
            DecisionSource::Protected { path, .. } => format!("the protected path `{path}`"),
        }
    }
}

/// A decision and the rule chain that produced it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyDecision {
    /// The effective decision.
    pub decision: Decision,
    /// What decided it.
    pub source: DecisionSource,
    /// The reason of the deciding rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Every rule, in spec order, and whether it matched.
    pub chain: Vec<RuleOutcome>,
}

/// A rule whose expression could not be compiled.
#[derive(Debug, thiserror::Error)]
#[error("permission rule `{id}` does not compile: {message}")]
pub struct PolicyCompileError {
    /// The rule id.
    pub id: String,
    /// The parser's message.
    pub message: String,
}

/// A rule that failed while evaluating.
#[derive(Debug, thiserror::Error)]
#[error("permission rule `{id}` failed: {source}")]
pub struct PolicyEvalError {
    /// The rule id.
    pub id: String,
    /// Why.
    #[source]
    pub source: EvalError,
    /// The rules evaluated until then, ending with the failing one (its `error` set).
    pub chain: Vec<RuleOutcome>,
}

impl CompiledPolicy {
    /// Compiles every rule of a policy.
    pub fn compile(policy: &PermissionPolicy) -> Result<Self, PolicyCompileError> {
        let mut rules = Vec::with_capacity(policy.rules.len());
        for r in &policy.rules {
            let program = crate::cel::compile(&r.expr).map_err(|e| PolicyCompileError {
                id: r.id.clone(),
                message: e.first().map(|e| e.message.clone()).unwrap_or_default(),
            })?;
            rules.push((r.clone(), Arc::new(program)));
        }
        Ok(CompiledPolicy {
            rules,
            default: policy.default,
        })
    }

    /// Builds a compiled policy from rules already compiled.
    pub fn from_parts(rules: Vec<(PermissionRule, Arc<Compiled>)>, default: Decision) -> Self {
        CompiledPolicy { rules, default }
    }

    /// Decides a call. A rule that fails to evaluate is an error, never a silent non-match:
    /// a deny rule that cannot be evaluated must not let the call through.
    pub fn decide(&self, ev: &Evaluator<'_>) -> Result<PolicyDecision, PolicyEvalError> {
        let mut chain = Vec::with_capacity(self.rules.len());
        let mut best: Option<&PermissionRule> = None;
        for (rule, program) in &self.rules {
            let matched = match ev.condition(program) {
                Ok(m) => m,
                Err(source) => {
                    chain.push(RuleOutcome {
                        id: rule.id.clone(),
                        decision: rule.decision,
                        matched: false,
                        error: Some(source.to_string()),
                    });
                    return Err(PolicyEvalError {
                        id: rule.id.clone(),
                        source,
                        chain,
                    });
                }
            };
            chain.push(RuleOutcome {
                id: rule.id.clone(),
                decision: rule.decision,
                matched,
                error: None,
            });
            if matched && best.is_none_or(|b| rule.decision > b.decision) {
                best = Some(rule);
            }
        }
        Ok(match best {
            Some(rule) => PolicyDecision {
                decision: rule.decision,
                source: DecisionSource::Rule {
                    id: rule.id.clone(),
                },
                reason: rule.reason.clone(),
                chain,
            },
            None => PolicyDecision {
                decision: self.default,
                source: DecisionSource::Default,
                reason: None,
                chain,
            },
        })
    }

    /// Decides a call from its bindings (the rules only; `path.protected` over the default set).
    pub fn decide_for(&self, bindings: &Bindings<'_>) -> Result<PolicyDecision, PolicyEvalError> {
        let ev = Evaluator::new(bindings).map_err(|source| PolicyEvalError {
            id: String::new(),
            source,
            chain: Vec::new(),
        })?;
        self.decide(&ev)
    }

    /// Decides a policy test (a `permissions.examples` entry) as the permission stage decides a
    /// call: a protected path argument denies before any rule; otherwise the rules, with
    /// `path.protected` asking `protected`. Paths are judged lexically (there is no workspace).
    pub fn decide_example(
        &self,
        bindings: &Bindings<'_>,
        def: &ToolDefinition,
        protected: Arc<ProtectedSet>,
    ) -> Result<PolicyDecision, PolicyEvalError> {
        let paths = arguments::path_params(&def.parameters);
        let globs = arguments::glob_params(&def.parameters, &def.exec);
        let hit = arguments::protected_decision(bindings.args, &paths, &globs, protected.as_ref());
        let ev = Evaluator::new(bindings)
            .and_then(|ev| ev.with_protected(protected))
            .map_err(|source| PolicyEvalError {
                id: String::new(),
                source,
                chain: Vec::new(),
            })?;
        match hit {
            Some((d, _)) => Ok(self.explain_protected(d, &ev)),
            None => self.decide(&ev),
        }
    }

    /// A protected-path denial with the rules' chain filled in: what the rules would have
    /// matched, for the record and for policy tests (the decision stays the denial).
    pub fn explain_protected(
        &self,
        mut denial: PolicyDecision,
        ev: &Evaluator<'_>,
    ) -> PolicyDecision {
        denial.chain = match self.decide(ev) {
            Ok(d) => d.chain,
            Err(e) => e.chain,
        };
        denial
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn policy() -> CompiledPolicy {
        let rule = |id: &str, d: Decision, e: &str| PermissionRule {
            id: id.into(),
            decision: d,
            expr: e.into(),
            reason: Some(format!("{id} reason")),
        };
        CompiledPolicy::compile(&PermissionPolicy {
            rules: vec![
                rule("src-ok", Decision::Allow, "args.path.startsWith('src/')"),
                rule(
                    "secrets",
                    Decision::Deny,
                    "path.matches_glob(args.path, ['**/.env'])",
                ),
                rule("big", Decision::Ask, "args.path.endsWith('.lock')"),
            ],
            default: Decision::Ask,
            examples: vec![],
        })
        .unwrap()
    }

    fn decide(p: &CompiledPolicy, path: &str) -> PolicyDecision {
        let args = json!({ "path": path });
        p.decide_for(&Bindings {
            args: &args,
            tool_name: "read_file",
            tool_effect: "read_only",
            tool_version: 1,
            context: "interactive",
            workspace: "/w",
        })
        .unwrap()
    }

    #[test]
    fn deny_beats_allow() {
        let d = decide(&policy(), "src/.env");
        assert_eq!(d.decision, Decision::Deny);
        assert_eq!(
            d.source,
            DecisionSource::Rule {
                id: "secrets".into()
            }
        );
        assert_eq!(d.chain.iter().filter(|r| r.matched).count(), 2);
    }

    #[test]
    fn allow_matches_and_default_applies_otherwise() {
        assert_eq!(decide(&policy(), "src/a.rs").decision, Decision::Allow);
        let d = decide(&policy(), "docs/a.md");
        assert_eq!(
            (d.decision, d.source),
            (Decision::Ask, DecisionSource::Default)
        );
    }

    #[test]
    fn failing_rule_is_an_error_not_a_non_match() {
        let p = CompiledPolicy::compile(&PermissionPolicy {
            rules: vec![PermissionRule {
                id: "x".into(),
                decision: Decision::Deny,
                expr: "args.nope == 1".into(),
                reason: None,
            }],
            default: Decision::Allow,
            examples: vec![],
        })
        .unwrap();
        let args = json!({});
        let r = p.decide_for(&Bindings {
            args: &args,
            tool_name: "t",
            tool_effect: "pure",
            tool_version: 1,
            context: "ci",
            workspace: "/",
        });
        let e = r.unwrap_err();
        assert_eq!(e.id, "x");
        assert_eq!(e.chain.len(), 1);
        assert_eq!((e.chain[0].id.as_str(), e.chain[0].matched), ("x", false));
        assert!(e.chain[0].error.is_some());
    }
}
