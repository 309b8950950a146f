//! TGP001 missing-timeout.

use std::time::Duration;

use crate::diagnostic::Severity;
use crate::ir::Effect;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::MissingTimeout,
    severity: Severity::Warning,
    applies: Applies::SpecsOnly,
    purpose: "Finds tools that write, run processes or use the network without a chosen timeout.",
    explanation: r#"## What it does
Reports a tool whose effect is `local_write` or above (processes, network, external side
effects, destructive) when neither the spec sets `timeout:` nor toolgate.yaml sets
`defaults.timeout`. Such a tool still gets a built-in default for its effect class (30 s for
local writes, 60 s for network and destructive work, 300 s for processes), which nobody chose
for it.

## Why is this bad?
A hung build or a stalled upstream holds the agent's turn until the budget ends; a budget that
is too short kills a legitimate long test run and teaches the model to retry it. MCP says
clients SHOULD use timeouts; the right value depends on the tool, so write it down.

## Example
```yaml
name: run_tests
effect: process_execution
exec:
  command: {argv: [cargo, test]}
```

Use instead:
```yaml
name: run_tests
effect: process_execution
timeout: 10m
exec:
  command: {argv: [cargo, test]}
```
"#,
};

/// Reports a tool at or above `local_write` without a timeout.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    let Some(effect) = tool.effect else { return };
    if effect < Effect::LocalWrite || tool.spec.value.timeout.is_some() {
        return;
    }
    let project_default = ctx
        .project_file
        .and_then(|(_, pf)| pf.defaults.as_ref())
        .is_some_and(|d| d.value.timeout.is_some());
    if project_default {
        return;
    }
    let at = tool
        .spec
        .value
        .effect
        .as_ref()
        .map(|e| tool.span(e.range))
        .unwrap_or_else(|| tool.name_span());
    ctx.report(
        tool.name_span(),
        format!(
            "`{}` has no `timeout`: it gets the {} built-in default for effect `{effect}`",
            tool.name,
            human(effect.default_timeout())
        ),
    )
    .label(at, "this effect needs a budget")
    .help("set `timeout:` to what one call may take (e.g. `timeout: 2m`), or `defaults.timeout` in toolgate.yaml");
}

fn human(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 && s.is_multiple_of(60) {
        format!("{}-minute", s / 60)
    } else {
        format!("{s}-second")
    }
}
