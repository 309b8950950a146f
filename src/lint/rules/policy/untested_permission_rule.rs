//! TGP003 untested-permission-rule.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::UntestedPermissionRule,
    severity: Severity::Warning,
    applies: Applies::SpecsOnly,
    purpose: "Finds permission rules that no permission example makes match.",
    explanation: r#"## What it does
Runs every `permissions.examples` entry (as the contract rules do) and reports each permission
rule that matched in none of them — including every rule of a tool that has no examples at all.
An example exercises a rule when the rule's condition is true for its arguments, whether or not
a stricter rule then decided.

## Why is this bad?
A permission rule is code that guards a tool, and code nobody has run is wrong more often than
one would like: a glob that never matches, a comparison against the wrong case, a field that is
absent. An example that makes the rule fire turns it into a policy test that runs at every
lint and every registry load, like Cedar's or OPA's policy tests.

## Example
```yaml
permissions:
  rules:
    - {id: no-env, deny: "args.path.endsWith('.env')"}
  examples:
    - {args: {path: src/main.rs}, expect: allow}
```

Use instead:
```yaml
permissions:
  rules:
    - {id: no-env, deny: "args.path.endsWith('.env')"}
  examples:
    - {args: {path: src/main.rs}, expect: allow}
    - {args: {path: config/.env}, expect: deny}
```
"#,
};

/// Reports each permission rule no example makes match.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    // Examples only run for valid contracts; an invalid one has its contract errors to fix first.
    if tool.def.is_none() {
        return;
    }
    let Some(perms) = &tool.spec.value.permissions else {
        return;
    };
    let no_examples = perms.value.examples.is_empty();
    for rule in &perms.value.rules {
        let id = &rule.value.id.value;
        let matched = tool.resolved.examples.iter().any(|run| {
            run.got
                .as_ref()
                .is_ok_and(|d| d.chain.iter().any(|o| o.matched && &o.id == id))
        });
        if matched {
            continue;
        }
        let (message, help) = if no_examples {
            (
                format!(
                    "permission rule `{id}` is not tested: the tool has no `permissions.examples`"
                ),
                "add `examples:` with arguments this rule matches and the decision they must get (and one it must not match)",
            )
        } else {
            (
                format!("permission rule `{id}` matches none of the permission examples"),
                "add an example whose arguments this rule matches, with the decision it must get",
            )
        };
        ctx.report(tool.span(rule.value.id.range), message)
            .help(help);
    }
}
