//! TGN006 description-too-long.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;
use crate::spec::cel_span::map_range;
use crate::spec::source::TextRange;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::DescriptionTooLong,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds tool and parameter descriptions longer than providers accept.",
    explanation: r#"## What it does
Reports a tool or parameter description longer than `lint.options.description_max_chars`
(1024 characters by default, the limit OpenAI has been reported to enforce), pointing at the first
character past the limit.

## Why is this bad?
A provider that enforces the limit rejects the whole request, and one that does not still spends
those tokens on every turn. Long descriptions usually hold a manual (usage rules, examples, edge
cases) that belongs in the system prompt or in a separate, well-named tool.

## Example
```yaml
name: task_tracker
description: >-
  Track the tasks of the session. ... (five thousand characters of rules and examples)
```

Use instead: a description of what, when and what comes back, with the manual moved to the
system prompt or split across tools.
```yaml
name: task_tracker
description: >-
  Record or show the session's task list. Use it to plan multi-step work and to update each
  task's status as you go. Returns the current list.
```
"#,
};

/// Reports descriptions over the limit.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    let max = ctx.settings.options.description_max_chars;
    if let Some(d) = &tool.spec.value.description {
        report(
            ctx,
            tool,
            &d.value,
            d.range,
            max,
            format!("the description of `{}`", tool.name),
        );
    }
    let Some(params) = tool.parameters() else {
        return;
    };
    for (_, node, path) in super::properties(params) {
        let Some(d) = node.get("description") else {
            continue;
        };
        let Some(text) = d.as_str() else { continue };
        report(
            ctx,
            tool,
            text,
            d.range,
            max,
            format!("the description of parameter `{path}`"),
        );
    }
}

fn report(
    ctx: &mut LintContext,
    tool: &ToolView,
    text: &str,
    token: TextRange,
    max: usize,
    what: String,
) {
    let n = text.chars().count();
    if n <= max {
        return;
    }
    let at = map_range(&tool.file.text, token, text, max, max + 1);
    ctx.report(tool.span(at), format!("{what} is {n} characters long; the limit of {max} is reached here"))
        .help("keep what, when and what it returns; move usage manuals and examples to the system prompt or split the tool");
}
