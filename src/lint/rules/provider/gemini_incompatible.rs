//! TGV003 gemini-incompatible.

use crate::diagnostic::Severity;
use crate::emit::gemini::is_parameter_name;
use crate::ir::Target;
use crate::lint::context::{LintContext, SchemaNode, SchemaRole, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;
use crate::spec::yaml::{Node, NodeValue};

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::GeminiIncompatible,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds parameter schemas Gemini's function declarations cannot carry.",
    explanation: r#"## What it does
When `gemini` is a target, reports:

- property names that do not match `^[a-zA-Z_][a-zA-Z0-9_]{0,63}$` (Gemini's parameter-name
  rule: no `-`, `.` or leading digit);
- recursive `$ref`s (a reference to `#` or to a schema that contains it): they cannot be
  inlined, and Gemini clients inline references;

and what the OpenAPI-subset `parameters` form — the emitter's fallback where
`parametersJsonSchema` is not accepted — cannot express:

- `const` with a value that is not a string (a string `const` becomes `enum: [value]`);
- `enum` values that are not strings;
- `additionalProperties` that is `true` or a schema (maps with open keys);
- `$ref` with sibling keywords other than `description` and `default`;
- `type` lists other than `[T, "null"]` (which becomes `nullable: true`);
- arrays without `items`.

## Why is this bad?
Gemini refuses the whole request over one unknown or malformed field (`Invalid JSON payload
received. Unknown name "const"`, `Proto field is not repeating, cannot start list`,
`items: missing field`), and a parameter name it rejects cannot be called at all.

## Example
```yaml
parameters:
  type: object
  properties:
    replace-all: {type: boolean}
    level: {type: integer, enum: [1, 2, 3]}
```

Use instead:
```yaml
parameters:
  type: object
  properties:
    replace_all: {type: boolean}
    level: {type: string, enum: ["1", "2", "3"]}
```
"#,
};

/// Reports what Gemini cannot carry at one node.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView, node: &SchemaNode) {
    if node.role != SchemaRole::Parameters || !ctx.targets(Target::Gemini) {
        return;
    }
    if let Some((key, _)) = node.property
        && !is_parameter_name(&key.name)
    {
        ctx.report(
            tool.span(key.range),
            format!("Gemini rejects the parameter name `{}`: names must match `^[a-zA-Z_][a-zA-Z0-9_]{{0,63}}$`", key.name),
        )
        .help("use letters, digits and `_` only, starting with a letter or `_` (snake_case)");
    }
    for (key, value) in node.node.entries() {
        let at = tool.span(key.range);
        match key.name.as_str() {
            "const" if value.as_str().is_none() => {
                ctx.report(at, "Gemini's `parameters` has no `const`, and only a string constant can become `enum: [value]`")
                    .help("make the constant a string, or drop the property if it can only have one value");
            }
            "enum" if value.items().iter().any(|v| v.as_str().is_none()) => {
                ctx.report(at, "Gemini's `parameters` accepts only string `enum` values")
                    .help("use `type: string` with string values (`enum: [\"1\", \"2\"]`) and convert in the backend");
            }
            "additionalProperties"
                if matches!(value.value, NodeValue::Bool(true) | NodeValue::Map(_)) =>
            {
                ctx.report(at, "Gemini's `parameters` cannot express open-keyed objects (`additionalProperties` other than `false`)")
                    .help("list the keys under `properties`, or take an array of `{key, value}` objects");
            }
            "$ref" => check_ref(ctx, tool, node, key.range, value),
            "type" if !fits_nullable(value) => {
                ctx.report(at, "Gemini's `parameters` accepts a single `type` (or `[T, \"null\"]`, which becomes `nullable`)")
                    .help("use `anyOf` with one schema per type, or settle on one type");
            }
            _ => {}
        }
    }
    if node.is_type("array")
        && node.node.get("items").is_none()
        && node.node.get("prefixItems").is_none()
    {
        let at = node
            .node
            .entry("type")
            .map(|(k, _)| k.range)
            .unwrap_or(node.node.range);
        ctx.report(tool.span(at), "Gemini rejects arrays without `items`")
            .help("say what the array holds, e.g. `items: {type: string}`");
    }
}

/// Whether a `type` value is one type, or a pair of one type and `"null"`.
fn fits_nullable(t: &Node) -> bool {
    match &t.value {
        NodeValue::Seq(items) => {
            let non_null = items.iter().filter(|i| i.as_str() != Some("null")).count();
            non_null <= 1 && items.len() <= 2
        }
        _ => true,
    }
}

/// `$ref` rules: no recursion, no siblings but `description` and `default`.
fn check_ref(
    ctx: &mut LintContext,
    tool: &ToolView,
    node: &SchemaNode,
    key: crate::spec::source::TextRange,
    value: &Node,
) {
    let at = tool.span(key);
    if let Some(target) = value.as_str().and_then(|r| r.strip_prefix('#'))
        && (target.is_empty()
            || node.pointer == target
            || node.pointer.starts_with(&format!("{target}/")))
    {
        ctx.report(at, format!("`$ref: \"#{target}\"` makes the schema recursive, which Gemini clients cannot inline"))
            .help("bound the nesting: spell out the levels the tool needs, or pass the nested part as a JSON string checked by a `validate` rule");
    }
    let siblings: Vec<&str> = node
        .node
        .entries()
        .iter()
        .map(|(k, _)| k.name.as_str())
        .filter(|k| !matches!(*k, "$ref" | "description" | "default" | "$comment"))
        .collect();
    if !siblings.is_empty() {
        ctx.report(
            at,
            format!(
                "Gemini's `parameters` allows only `description` and `default` beside `$ref`; this one has {}",
                siblings.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
            ),
        )
        .help("move the other keywords into the referenced schema (or inline it)");
    }
}
