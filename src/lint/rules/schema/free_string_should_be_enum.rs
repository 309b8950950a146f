//! TGS008 free-string-should-be-enum.

use crate::diagnostic::{Applicability, Severity};
use crate::lint::context::{LintContext, SchemaNode, SchemaRole, ToolView};
use crate::lint::fix::{add_keys, scalar};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::naming::words::split_identifier;
use crate::lint::rules::schema::prose;
use crate::lint::rules::schema::shape::{self, Position};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::FreeStringShouldBeEnum,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds free string parameters whose description lists their values or whose name denotes a closed set.",
    explanation: r#"Smell: missing constraints.

## What it does
Reports string parameters without `enum`, `const`, `pattern` or `format` when their description
lists the accepted values ("one of json, text", "'asc' or 'desc'", "a|b|c", "Possible values: …"),
or when their name denotes a closed set: `mode`, `sort`, `order`, `direction`, `unit`, `format`,
`kind`, `status`, `state`, `level`, `strategy`, `encoding`, `visibility`, `priority`, `severity`,
`method`, `action`, `operation`. Values that are the names of sibling parameters ("either text or
regex") are not counted, and parameters that name identifiers or text (`*_id`, `*_name`, `path`,
`query`, `message` …) are never reported.

## Why is this bad?
With an `enum` the model can only pick a valid value, providers can constrain generation to it, and
validation rejects the rest with a precise message. In prose, `"Desc"`, `"descending"` and
`"newest first"` are all plausible guesses, and the tool must either guess back or fail.

## Example
```yaml
name: list_issues
description: List the repository's issues, newest first; returns number, title and state.
parameters:
  type: object
  properties:
    order: {type: string, description: "Sort order: 'asc' or 'desc'."}
```

Use instead:
```yaml
parameters:
  type: object
  properties:
    order: {type: string, enum: [asc, desc], default: desc, description: Sort order.}
```
"#,
};

/// Names (last word of a parameter name) that denote a closed set.
const CLOSED_NAMES: &[&str] = &[
    "action",
    "alignment",
    "direction",
    "encoding",
    "format",
    "frequency",
    "granularity",
    "kind",
    "layout",
    "level",
    "method",
    "mode",
    "operation",
    "order",
    "orientation",
    "priority",
    "severity",
    "sort",
    "state",
    "status",
    "strategy",
    "unit",
    "units",
    "verbosity",
    "visibility",
];
/// Names (last word) of values that are never a closed set: identifiers, text, references.
const OPEN_NAMES: &[&str] = &[
    "body",
    "cmd",
    "code",
    "command",
    "comment",
    "content",
    "description",
    "file",
    "filename",
    "glob",
    "hash",
    "id",
    "key",
    "message",
    "name",
    "note",
    "path",
    "pattern",
    "prompt",
    "query",
    "ref",
    "regex",
    "script",
    "sha",
    "summary",
    "text",
    "title",
    "token",
    "uri",
    "url",
    "value",
];
/// Description words that say the value is free text after all (a date format, a custom mode).
const OPEN_HINTS: &[&str] = &[
    "custom",
    "template",
    "pattern",
    "regex",
    "expression",
    "free",
    "any ",
    "%",
    "strftime",
];

/// Reports a free string that should be an enum.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView, node: &SchemaNode) {
    let n = node.node;
    if node.role != SchemaRole::Parameters || shape::position_of(tool, node) == Position::Condition
    {
        return;
    }
    let Some((key, _)) = node.property else {
        return;
    };
    if shape::single_type(n) != Some("string")
        || shape::has_any(n, &["enum", "const", "pattern", "format"])
    {
        return;
    }
    let mut words = split_identifier(&key.name);
    if words
        .last()
        .is_some_and(|w| OPEN_NAMES.contains(&w.as_str()))
    {
        return;
    }
    let desc = node.description();
    // Siblings only ever take values away, so they are gathered (a scan of every parameter)
    // only for a description that lists two values without them: a tool with thousands of
    // parameters stays linear.
    let mut values = prose::listed_values(desc, &[]);
    if values.len() >= 2 {
        let siblings = tool
            .parameters()
            .map(|p| shape::sibling_names(p, &node.pointer))
            .unwrap_or_default();
        values = prose::listed_values(desc, &siblings);
    }
    let span = tool.span(key.range);
    if values.len() >= 2 {
        let shown: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
        ctx.report(
            span,
            format!(
                "`{}` is a free string, but its description lists its values ({})",
                key.name,
                shown.join(", ")
            ),
        )
        .help(format!(
            "declare `enum: [{}]` so the model can only choose a valid value",
            values.join(", ")
        ))
        .fix(add_keys(
            tool,
            n,
            &[(
                "enum",
                format!(
                    "[{}]",
                    values
                        .iter()
                        .map(|v| scalar(v))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )],
            Applicability::Safe,
        ));
        return;
    }
    if words.len() > 1 && words.last().is_some_and(|w| w == "by") {
        words.pop();
    }
    let lower = desc.to_ascii_lowercase();
    if words
        .last()
        .is_some_and(|w| CLOSED_NAMES.contains(&w.as_str()))
        && !OPEN_HINTS.iter().any(|h| lower.contains(h))
    {
        ctx.report(
            span,
            format!(
                "`{}` is a free string, but its name denotes a closed set of values",
                key.name
            ),
        )
        .help("list the accepted values with `enum` (and say what each means in the description)");
    }
}
