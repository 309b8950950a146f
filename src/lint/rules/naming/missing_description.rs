//! TGN003 missing-description.

use crate::diagnostic::Severity;
use crate::lint::context::{ImportFormat, LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;
use crate::spec::import::anthropic_native_type;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::MissingDescription,
    severity: Severity::Error,
    applies: Applies::Everywhere,
    purpose: "Finds tools without a description.",
    explanation: r#"Smell: vague description.

## What it does
Reports a tool whose `description` is missing or blank.

Provider-defined tools in an imported list (Anthropic's `{type: bash_20250124, name: bash}`,
OpenAI's `{type: web_search}`) carry no description: the provider supplies it, and they are not
reported. An Anthropic list that sends one of the names Anthropic reserves for its own tools
(`bash`, `computer`, `str_replace_editor`, `str_replace_based_edit_tool`, ...) with no
description and no `type` gets an info instead of an error: it most likely means the
model-native tool, which the list should then send by its `type`.

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
    if tool.is_imported_from(ImportFormat::Anthropic)
        && let Some(native) = anthropic_native_type(tool.name)
    {
        let d = ctx.report(
            span,
            format!(
                "`{}` has no description: if it is Anthropic's own `{}` tool, that is expected, but the list should say so with its `type`",
                tool.name, tool.name
            ),
        );
        d.severity = d.severity.min(Severity::Info);
        d.help(format!(
            "send Anthropic's tool as `{{\"type\": \"{native}\", \"name\": \"{}\"}}` (the API supplies its description and schema); if it is a tool of your own, give it a description and a name Anthropic does not reserve",
            tool.name
        ));
        return;
    }
    ctx.report(span, format!("`{}` has no description", tool.name))
        .help("add a `description` saying what the tool does, when to use it (and when not), and what it returns");
}
