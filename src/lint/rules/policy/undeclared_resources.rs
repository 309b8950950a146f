//! TGP007 undeclared-resources.

use crate::diagnostic::Severity;
use crate::ir::Effect;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::effect::names::is_path_like;
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::UndeclaredResources,
    severity: Severity::Warning,
    applies: Applies::SpecsOnly,
    purpose: "Finds tools the scheduler cannot place because they declare no resources.",
    explanation: r#"## What it does
Reports a tool that declares nothing the scheduler can reason about:

- `local_write` and `destructive` tools without `resources.reads`/`resources.writes`;
- `read_only` tools with a path parameter without `resources.reads`;
- `process_execution`, `network_write` and `external_side_effect` tools with neither
  `resources` nor a `concurrency_group`.

## Why is this bad?
The scheduler runs calls in parallel when their resources do not conflict. A writing tool with
no resource keys must be treated as conflicting with everything, so one `write_file` serializes
the whole batch — and a reading tool that declares no keys cannot be ordered after the write to
the same file it reads. `resources.writes: "'file:' + args.path"` lets two edits to different
files run at once, and keeps a read of `a.py` behind a write of `a.py`. A process or an
external action usually cannot name its keys; a `concurrency_group` (`cargo`, `deploy`) still
keeps two of them from racing.

## Example
```yaml
name: write_file
effect: local_write
parameters:
  type: object
  properties: {path: {type: string}, content: {type: string}}
```

Use instead:
```yaml
name: write_file
effect: local_write
parameters:
  type: object
  properties: {path: {type: string}, content: {type: string}}
resources:
  writes: "'file:' + path.normalize(args.path)"
```
"#,
};

/// Reports a tool with no resources where the scheduler needs them.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    let Some(effect) = tool.effect else { return };
    let t = &tool.spec.value;
    let has_resources = t
        .resources
        .as_ref()
        .is_some_and(|r| r.value.reads.is_some() || r.value.writes.is_some());
    if has_resources {
        return;
    }
    let has_group = t.concurrency_group.is_some();
    let (why, help) = match effect {
        Effect::LocalWrite | Effect::Destructive => (
            "so the scheduler must treat every call as conflicting with every other call",
            "declare what a call touches, e.g. `resources: {writes: \"'file:' + path.normalize(args.path)\"}`",
        ),
        Effect::ReadOnly
            if tool
                .properties()
                .iter()
                .any(|(k, _, _)| is_path_like(&k.name)) =>
        {
            (
                "so its reads cannot be ordered after writes to the same path",
                "declare what a call reads, e.g. `resources: {reads: \"'file:' + path.normalize(args.path)\"}`",
            )
        }
        Effect::ProcessExecution | Effect::NetworkWrite | Effect::ExternalSideEffect
            if !has_group =>
        {
            (
                "and no `concurrency_group`, so the scheduler must treat every call as conflicting with every other call",
                "declare the resources a call touches, or put the tool in a `concurrency_group` (e.g. `concurrency_group: cargo`) so calls that would race run one at a time",
            )
        }
        Effect::Pure
        | Effect::ReadOnly
        | Effect::NetworkRead
        | Effect::ProcessExecution
        | Effect::NetworkWrite
        | Effect::ExternalSideEffect => return,
    };
    ctx.report(
        tool.name_span(),
        format!(
            "`{}` has effect `{effect}` but declares no `resources`, {why}",
            tool.name
        ),
    )
    .help(help);
}
