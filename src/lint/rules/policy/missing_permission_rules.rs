//! TGP004 missing-permission-rules.

use crate::diagnostic::Severity;
use crate::ir::{Decision, Effect};
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::MissingPermissionRules,
    severity: Severity::Warning,
    applies: Applies::SpecsOnly,
    purpose: "Finds tools that change things but have no permission rules, only their effect's default.",
    explanation: r#"## What it does
Reports a tool whose effect writes or acts (`local_write`, `process_execution`,
`network_write`, `external_side_effect`, `destructive`) and that has no `permissions.rules` at
all, so every call gets the same decision: the default for its effect class (`ask` unless
toolgate.yaml says otherwise). Destructive tools whose default is `allow` are left to
`destructive-without-approval` (TGE002), which reports them as errors.

## Why is this bad?
One decision for every call is either too strict or too loose. With `ask` for everything,
people approve a stream of routine writes and stop reading the prompts; the call that writes
`.git/config` or `~/.ssh/authorized_keys` gets the same click. Rules say which calls are
routine (`allow`), which need a person (`ask`) and which never run (`deny`), with a reason the
model reads.

## Example
```yaml
name: write_file
effect: local_write
exec: {builtin: write_file}
```

Use instead:
```yaml
name: write_file
effect: local_write
permissions:
  rules:
    - id: no-git-internals
      deny: "path.matches_glob(args.path, ['.git/**'])"
      reason: Repository internals are changed through git tools only.
    - id: sources
      allow: "path.matches_glob(args.path, ['src/**', 'tests/**'])"
      reason: Source and test files are the agent's to edit.
exec: {builtin: write_file}
```
"#,
};

/// Reports a writing tool with no permission rules.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    let Some(effect) = tool.effect else { return };
    if effect.is_read_only() {
        return;
    }
    let has_rules = tool
        .spec
        .value
        .permissions
        .as_ref()
        .is_some_and(|p| !p.value.rules.is_empty());
    if has_rules {
        return;
    }
    let Some(def) = tool.def else { return };
    let default = def.permissions.default;
    if effect == Effect::Destructive && default == Decision::Allow {
        return;
    }
    ctx.report(
        tool.name_span(),
        format!(
            "`{}` has effect `{effect}` but no permission rules: every call gets the `{default}` default",
            tool.name
        ),
    )
    .help("add `permissions.rules`: `deny` what must never happen, `allow` the routine calls, `ask` for the rest, each with a `reason`");
}
