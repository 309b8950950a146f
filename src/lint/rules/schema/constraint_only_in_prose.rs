//! TGS015 constraint-only-in-prose.

use crate::diagnostic::{Applicability, Severity};
use crate::lint::context::{LintContext, SchemaNode, SchemaRole, ToolView};
use crate::lint::fix::add_keys;
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::schema::prose;
use crate::lint::rules::schema::shape::{self, Position};
use crate::lint::rules::schema::unstable_result_shape::quote;
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::ConstraintOnlyInProse,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds parameters whose description states a bound, length, count, format or fixed value that the schema does not declare.",
    explanation: r#"Smell: missing constraints.

## What it does
Reads each parameter's description (nested ones included) for a constraint stated in words and
reports it when the schema lacks the keyword that would enforce it:

| stated in the description | missing keyword |
|---|---|
| "Must be 1 or greater", "one-based", "1-indexed", "positive", "between 0 and 5", "(max 400)" | `minimum` / `maximum` on a number (and `type: integer` when the prose says integer) |
| "Max 256 chars", "within 12000 characters", "80 characters or fewer" | `maxLength` on a string |
| "an array of two integers", "Limit: 50 items per call", "up to 10 files" | `minItems` / `maxItems` on an array |
| "24-hour format (HH:MM)", "YYYY-MM-DD", "ISO 8601 timestamp" | `format` (or `pattern`) on a string |
| "An empty string" | `const: ""` (or no parameter at all) |

It also reports a string whose `enum` is exactly `"true"` and `"false"`: a boolean carried as text.

What does not count: a bound the schema already declares; a sentence with a sentinel ("-1 means the
end of the file"), which states more than a range; dates that may also be "relative" or in natural
language; a missing `maxLength` or `maxItems` where the description states no bound (TGS006 and
TGS007 are about those). Values listed in prose are TGS008's, lists packed into strings TGS012's.

## Why is this bad?
The model sees the schema as the contract and the description as advice. A bound in prose is
learnt by failing: the call goes out with `0`, a 300-character query or a three-element range,
and the tool rejects it — or worse, accepts it and misbehaves. Providers can enforce keywords
during generation, and toolgate's validation turns them into precise errors.

## Example
```yaml
name: read_lines
description: Read a range of lines from a workspace file; returns the numbered lines.
parameters:
  type: object
  properties:
    path: {type: string, maxLength: 4096}
    offset: {type: number, description: The first line to return. Must be 1 or greater.}
    at: {type: string, description: "Only lines changed after this time, in 24-hour format (HH:MM)."}
```

Use instead:
```yaml
    offset: {type: integer, minimum: 1, description: The first line to return (1-based).}
    at: {type: string, pattern: "^([01][0-9]|2[0-3]):[0-5][0-9]$", description: "Only lines changed after this time (HH:MM)."}
```
"#,
};

/// Reports constraints stated in a parameter's description and missing from its schema.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView, node: &SchemaNode) {
    if node.role != SchemaRole::Parameters || shape::position_of(tool, node) != Position::Data {
        return;
    }
    let n = node.node;
    // A parameter, or the items of an array parameter (described on the array when bare).
    let (name, anchor) = match node.property {
        Some((k, _)) => (k.name.clone(), k.range),
        None if node.pointer.ends_with("/items") => {
            (shape::display_path(&node.pointer), shape::anchor(node))
        }
        None => return,
    };
    let desc = node.description();
    let span = tool.span(anchor);
    let types = shape::types(shape::non_null(n));

    // A boolean carried as the strings "true" and "false".
    let values = shape::closed_values(n);
    if values.len() == 2
        && values.iter().any(|v| v.eq_ignore_ascii_case("true"))
        && values.iter().any(|v| v.eq_ignore_ascii_case("false"))
        && shape::single_type(n) == Some("string")
    {
        ctx.report(
            span,
            format!("`{name}` is a boolean carried as the strings \"true\" and \"false\""),
        )
        .help("declare `type: boolean`, so the model sends `true` or `false` and validation rejects anything else");
        return;
    }
    if desc.is_empty() {
        return;
    }
    let numeric = types.iter().any(|t| *t == "integer" || *t == "number");
    // A sentinel the tool's description states for this parameter ("-1 indicates the last line
    // when used as the `start` value") makes its values more than a range.
    let sentinel = prose::sentences(tool.description())
        .iter()
        .any(|s| s.contains("-1") && prose::mentions(s, &name));
    if numeric
        && !sentinel
        && let Some(st) = prose::stated_bound(desc)
    {
        let mut missing = Vec::new();
        let mut keys = Vec::new();
        if let Some(min) = st.min
            && !shape::has_any(n, &["minimum", "exclusiveMinimum"])
        {
            missing.push(format!("`minimum: {}`", show(min)));
            keys.push(("minimum", show(min)));
        }
        if let Some(max) = st.max
            && !shape::has_any(n, &["maximum", "exclusiveMaximum"])
        {
            missing.push(format!("`maximum: {}`", show(max)));
            keys.push(("maximum", show(max)));
        }
        let retype = st.integer && types.contains(&"number") && !types.contains(&"integer");
        if retype {
            missing.push("`type: integer`".to_owned());
        }
        // Changing `type` is not an addition: no fix then.
        let fix = (!retype)
            .then(|| add_keys(tool, n, &keys, Applicability::Safe))
            .flatten();
        if !missing.is_empty() {
            ctx.report(
                span,
                format!(
                    "`{name}` is bounded in its description (\"{}\") but not in its schema",
                    quote(&st.sentence)
                ),
            )
            .help(format!(
                "declare {} so the schema says what the description says",
                join(&missing)
            ))
            .fix(fix);
            return;
        }
    }
    if types.contains(&"string") {
        if let Some((sentence, max)) = prose::stated_length(desc)
            && !shape::has_any(n, &["maxLength", "enum", "const"])
        {
            ctx.report(
                span,
                format!(
                    "`{name}` has a length limit in its description (\"{}\") but no `maxLength`",
                    quote(&sentence)
                ),
            )
            .help(format!(
                "declare `maxLength: {}` so an overlong value is refused before the call",
                show(max)
            ))
            .fix(add_keys(
                tool,
                n,
                &[("maxLength", show(max))],
                Applicability::Safe,
            ));
            return;
        }
        if let Some((sentence, format)) = prose::stated_format(desc)
            && !shape::has_any(n, &["format", "pattern", "enum", "const"])
        {
            ctx.report(
                span,
                format!(
                    "`{name}` has a format in its description (\"{}\") but no `format` or `pattern`",
                    quote(&sentence)
                ),
            )
            .help(format!(
                "declare {format} so malformed values are refused with a precise error"
            ));
            return;
        }
        if prose::fixed_empty(desc) && !shape::has_any(n, &["const", "enum", "maxLength"]) {
            ctx.report(
                span,
                format!("`{name}` must be an empty string, as its description says, but the schema accepts any string"),
            )
            .help("drop the parameter, or declare `const: \"\"` so nothing else can be sent");
            return;
        }
    }
    if types.contains(&"array")
        && let Some((sentence, min, max)) = prose::stated_count(desc)
    {
        let mut missing = Vec::new();
        let mut keys = Vec::new();
        if let Some(min) = min
            && !shape::has_any(n, &["minItems"])
        {
            missing.push(format!("`minItems: {}`", show(min)));
            keys.push(("minItems", show(min)));
        }
        if let Some(max) = max
            && !shape::has_any(n, &["maxItems"])
        {
            missing.push(format!("`maxItems: {}`", show(max)));
            keys.push(("maxItems", show(max)));
        }
        if !missing.is_empty() {
            ctx.report(
                span,
                format!(
                    "`{name}` has a size in its description (\"{}\") but not in its schema",
                    quote(&sentence)
                ),
            )
            .help(format!("declare {}", join(&missing)))
            .fix(add_keys(tool, n, &keys, Applicability::Safe));
        }
    }
}

/// A number as a schema keyword value: `1`, not `1.0`.
fn show(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        x.to_string()
    }
}

fn join(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}
