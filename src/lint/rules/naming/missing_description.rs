//! TGN003 missing-description.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, Group, RuleMeta};

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    code: "TGN003",
    name: "missing-description",
    group: Group::Naming,
    severity: Severity::Error,
    applies: Applies::Everywhere,
    purpose: "Finds tools without a description.",
    explanation: r#"## What it does
Reports a tool whose `description` is missing or blank.

## Why is this bad?
The description is most of what a model knows about a tool: what it does, when to use it rather
than another, and what it returns. Without one the model guesses from the name, and providers show
it to the model as an empty string.

## Example
```yaml
name: search_files
parameters:
  type: object
  properties:
    pattern: {type: string, maxLength: 200}
```

Use instead:
```yaml
name: search_files
description: >-
  Search file contents in the workspace with a regular expression. Use it to find where something
  is defined or used before reading files. Returns matching lines with paths and line numbers.
```
"#,
};

/// Reports a tool without a description.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    if !tool.description().trim().is_empty() {
        return;
    }
    let span = match &tool.spec.value.description {
        Some(d) => tool.span(d.range),
        None => tool.name_span(),
    };
    ctx.report(span, format!("`{}` has no description", tool.name))
        .help("add a `description` saying what the tool does, when to use it (and when not), and what it returns");
}
