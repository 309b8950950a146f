//! Permission examples (`permissions.examples`): the one function that runs them, used by the
//! spec resolver (contract rule TGK, with spans) and by the runtime's registry (a tool whose
//! example fails does not load).
//!
//! Both run them with the same settings, chosen so that an example is a test of the policy and
//! nothing else: the workspace root is the stand-in [`EXAMPLE_WORKSPACE`] (not wherever the
//! runtime happens to start, so a verdict cannot change from machine to machine, and `lint`
//! passing means the runtime starts), and the arguments are checked against `parameters` first
//! (at run time a call with invalid arguments is refused by validation before the permission
//! stage, so such an example would test a decision no call can reach).

use std::sync::Arc;

use serde_json::Value;

use crate::cel::Bindings;
use crate::ir::project::DEFAULT_CONTEXT;
use crate::ir::{PermissionExample, ToolDefinition};
use crate::policy::{CompiledPolicy, PolicyDecision, ProtectedSet};

/// The workspace root examples are decided against (paths are judged lexically).
pub const EXAMPLE_WORKSPACE: &str = "/workspace";

/// How one permission example came out.
#[derive(Clone, Debug)]
pub enum ExampleOutcome {
    /// The arguments do not match `parameters` (each problem with where it is).
    InvalidArguments(Vec<String>),
    /// The rules could not be evaluated.
    Failed(String),
    /// The policy decided (which may or may not be the expected decision).
    Decided(PolicyDecision),
}

impl ExampleOutcome {
    /// Whether the policy decided what the example expects.
    pub fn passes(&self, example: &PermissionExample) -> bool {
        matches!(self, ExampleOutcome::Decided(d) if d.decision == example.expect)
    }
}

/// Runs one example: arguments checked against `parameters` (when given), then decided as the
/// permission stage decides a call, protected paths first.
pub fn run_example(
    def: &ToolDefinition,
    policy: &CompiledPolicy,
    protected: Arc<ProtectedSet>,
    parameters: Option<&jsonschema::Validator>,
    example: &PermissionExample,
) -> ExampleOutcome {
    if let Some(v) = parameters {
        let errs = argument_errors(v, &example.args);
        if !errs.is_empty() {
            return ExampleOutcome::InvalidArguments(errs);
        }
    }
    let bindings = Bindings {
        args: &example.args,
        tool_name: &def.name,
        tool_effect: def.effect.as_str(),
        tool_version: def.version,
        context: example.context.as_deref().unwrap_or(DEFAULT_CONTEXT),
        workspace: EXAMPLE_WORKSPACE,
    };
    match policy.decide_example(&bindings, def, protected) {
        Ok(d) => ExampleOutcome::Decided(d),
        Err(e) => ExampleOutcome::Failed(e.to_string()),
    }
}

/// What is wrong with `args` against `parameters`, each with where it is.
fn argument_errors(parameters: &jsonschema::Validator, args: &Value) -> Vec<String> {
    parameters
        .iter_errors(args)
        .map(|e| {
            let at = e.instance_path().as_str();
            if at.is_empty() {
                e.masked().to_string()
            } else {
                format!("{} at `{at}`", e.masked())
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ir::{Decision, PermissionPolicy, PermissionRule};

    fn tool() -> ToolDefinition {
        serde_json::from_value(json!({
            "name": "t", "version": 1, "description": "d", "effect": "local_write",
            "idempotency": "non_idempotent",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
            "permissions": {"default": "ask"},
            "timeout_ms": 30000,
            "retry": {"max_attempts": 1, "backoff": {"initial_ms": 200, "factor": 2.0, "max_ms": 5000, "jitter": true}, "budget_ms": 30000},
            "output": {"formatter": "json", "max_bytes": 32768, "max_lines": 400, "keep": "head_tail", "artifact_threshold": 65536, "redact_secrets": true},
            "exec": {"builtin": {"name": "write_file"}},
        }))
        .unwrap()
    }

    #[test]
    fn the_stand_in_workspace_and_the_schema_are_part_of_every_run() {
        let def = tool();
        let policy = CompiledPolicy::compile(&PermissionPolicy {
            rules: vec![PermissionRule {
                id: "in-ws".into(),
                decision: Decision::Allow,
                expr: "workspace == '/workspace'".into(),
                reason: None,
            }],
            default: Decision::Ask,
            examples: Vec::new(),
        })
        .unwrap();
        let validator = jsonschema::draft202012::new(&def.parameters).unwrap();
        let ex = |args: Value| PermissionExample {
            args,
            context: None,
            expect: Decision::Allow,
        };
        let ok = ex(json!({"path": "a.txt"}));
        let out = run_example(
            &def,
            &policy,
            crate::policy::protect::default_set(),
            Some(&validator),
            &ok,
        );
        assert!(out.passes(&ok), "{out:?}");
        let bad = ex(json!({"path": 3}));
        let out = run_example(
            &def,
            &policy,
            crate::policy::protect::default_set(),
            Some(&validator),
            &bad,
        );
        assert!(
            matches!(&out, ExampleOutcome::InvalidArguments(e) if e[0].contains("path")),
            "{out:?}"
        );
    }
}
