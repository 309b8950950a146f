//! TGS010 free-form-object.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, SchemaNode, SchemaRole, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::schema::shape::{self, Position};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::FreeFormObject,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds parameters that accept an object of anything, or any value at all.",
    explanation: r#"Smell: missing constraints.

## What it does
Reports parameters (below the root) that are `type: object` with no `properties` and no typed
`additionalProperties` or `patternProperties` — a map of anything — and parameters whose schema
sets no type-defining keyword at all (`{}` or only a `description`), which accept any JSON value.
A map whose values are typed (`additionalProperties: {type: string}`) is not reported.

## Why is this bad?
The model has nothing to go by but prose, validation checks nothing, generated code gets an untyped
map, and CEL rules cannot be checked against it. Whatever the tool does with the contents is
invisible to permissions and scheduling.

## Example
```yaml
name: trigger_workflow
description: Start a CI workflow run; returns the run id.
parameters:
  type: object
  properties:
    workflow: {type: string, maxLength: 200}
    inputs: {type: object, description: Inputs the workflow accepts.}
```

Use instead:
```yaml
    inputs:
      type: object
      description: Inputs the workflow accepts (names and string values).
      propertyNames: {pattern: "^[a-z_][a-z0-9_]*$"}
      additionalProperties: {type: string, maxLength: 1000}
      maxProperties: 20
```
"#,
};

/// Keywords that give a schema a shape.
const SHAPING: &[&str] = &[
    "type",
    "properties",
    "items",
    "prefixItems",
    "enum",
    "const",
    "$ref",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "format",
    "pattern",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "additionalProperties",
    "patternProperties",
    "if",
];

/// Reports a parameter node that accepts an object of anything, or anything.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView, node: &SchemaNode) {
    let n = node.node;
    if node.role != SchemaRole::Parameters
        || node.pointer.is_empty()
        || shape::position_of(tool, node) != Position::Data
    {
        return;
    }
    let path = shape::display_path(&node.pointer);
    if node.property.is_some() && !SHAPING.iter().any(|k| n.get(k).is_some()) {
        ctx.report(tool.span(shape::anchor(node)), format!("`{path}` accepts any value: its schema sets no type"))
            .help("give it a `type` (and for objects their `properties`), so validation and the model know what to send");
        return;
    }
    if !node.is_type("object") {
        return;
    }
    let has_props = n.get("properties").is_some_and(|p| !p.entries().is_empty());
    let extra = n.get("additionalProperties");
    let typed_extra = extra.is_some_and(|a| a.is_map() && !a.entries().is_empty())
        || n.get("patternProperties").is_some();
    let composed = ["allOf", "anyOf", "oneOf", "$ref"]
        .iter()
        .any(|k| n.get(k).is_some());
    if has_props || typed_extra || composed || shape::is_false(extra) {
        return;
    }
    ctx.report(tool.span(shape::anchor(node)), format!("object `{path}` is a map of anything: no `properties` and no typed `additionalProperties`"))
        .help("declare its `properties` with `additionalProperties: false`; if it is a map, type its values with `additionalProperties: {type: ...}`");
}
