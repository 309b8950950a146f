//! TGP002 unbounded-output.

use crate::diagnostic::Severity;
use crate::ir::Effect;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::effect::names::is_search_like;
use crate::rule::Rule;
use crate::spec::ast::ExecAst;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::UnboundedOutput,
    severity: Severity::Warning,
    applies: Applies::SpecsOnly,
    purpose: "Finds process, network and search tools with no chosen output limit or artifact policy.",
    explanation: r#"Smell: unbounded output.

## What it does
Reports a tool whose output can be large — it runs a process (`exec: command` or effect
`process_execution`), reads from the network (`network_read`), or lists or searches (`list_*`,
`search_*`, `find_*`, `grep`, `glob`, `query`) — when its `output` sets none of `max_bytes`,
`max_lines` or `artifact_threshold` and toolgate.yaml has no `defaults.output` with one of them.

Such a tool gets the built-in limits (32 KiB, 400 lines, artifacts above 64 KiB), which were not
chosen for it.

## Why is this bad?
A build log, a web page or a recursive search can be megabytes; dumped into the context it
crowds out the task and costs a turn's budget. The chapter's rule: large results become
artifacts, and the model gets a summary, a reference and a way to read more. Whether 32 KiB is
right for a test runner (failures at the end) or a grep (first matches) is the author's call.

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
output: {formatter: tests, max_bytes: 16KiB, keep: tail, artifact_threshold: 64KiB}
exec:
  command: {argv: [cargo, test]}
```
"#,
};

/// Reports a large-output tool without output limits.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    let t = &tool.spec.value;
    let runs_process = matches!(t.exec.as_ref().map(|e| &e.value), Some(ExecAst::Command(_)));
    let why = match tool.effect {
        _ if runs_process => "runs a process",
        Some(Effect::ProcessExecution) => "runs a process",
        Some(Effect::NetworkRead) => "reads from the network",
        _ if is_search_like(tool.name) => "lists or searches",
        _ => return,
    };
    let own = t.output.as_ref().is_some_and(|o| {
        o.value.max_bytes.is_some()
            || o.value.max_lines.is_some()
            || o.value.artifact_threshold.is_some()
    });
    let project = ctx
        .project_file
        .and_then(|(_, pf)| pf.defaults.as_ref())
        .and_then(|d| d.value.output.as_ref())
        .is_some_and(|o| {
            o.value.max_bytes.is_some()
                || o.value.max_lines.is_some()
                || o.value.artifact_threshold.is_some()
        });
    if own || project {
        return;
    }
    ctx.report(
        tool.name_span(),
        format!("`{}` {why} but sets no output limit: the built-in 32 KiB / 400 lines apply", tool.name),
    )
    .help("set `output: {max_bytes: ..., artifact_threshold: ...}` (and `keep: tail` for logs whose end matters), or `defaults.output` in toolgate.yaml");
}
