//! TGS006 unbounded-array.

use crate::diagnostic::{Applicability, Severity};
use crate::lint::context::{LintContext, SchemaNode, SchemaRole, ToolView};
use crate::lint::fix::add_keys;
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::schema::definitions;
use crate::lint::rules::schema::shape::{self, Position};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::UnboundedArray,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds array parameters without `maxItems`.",
    explanation: r#"Smell: none (a size the description does not state is a policy choice, not a missing constraint; TGS015 reports stated ones).

## What it does
Reports every array in `parameters` (top-level, nested, or the items of another array) that has no
`maxItems`. Arrays of distinct enum values (`uniqueItems: true` with an `enum` on the items) and
closed tuples (`prefixItems` with `items: false`) are bounded already and not reported. Nor are
arrays in a `$defs` / `definitions` entry that no `$ref` reaches (directly or through other
definitions): an unused definition is not a parameter. Results are not checked: a tool's output is
bounded by its output policy instead.

## Why is this bad?
A model can send ten thousand paths as easily as ten. Without a bound, schema validation, every CEL
rule that iterates the list (`args.paths.all(...)`), permission checks, scheduling and the work
itself have no upper cost, and toolgate cannot prove a rule's cost is bounded.

## Example
```yaml
name: read_files
description: Read several UTF-8 files at once; returns each file's numbered lines.
parameters:
  type: object
  properties:
    paths: {type: array, items: {type: string, maxLength: 4096}}
  required: [paths]
```

Use instead:
```yaml
parameters:
  type: object
  properties:
    paths: {type: array, items: {type: string, maxLength: 4096}, minItems: 1, maxItems: 20}
  required: [paths]
```
"#,
};

/// Reports an array node without `maxItems`.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView, node: &SchemaNode) {
    let n = node.node;
    if node.role != SchemaRole::Parameters
        || shape::position_of(tool, node) == Position::Condition
        || !node.is_type("array")
        || n.get("maxItems").is_some()
    {
        return;
    }
    // A definition nothing references is not a parameter the model fills.
    if tool
        .parameters()
        .is_some_and(|p| definitions::in_unreferenced_definition(p, &node.pointer))
    {
        return;
    }
    if let Some(parent) = shape::union_parent(&node.pointer)
        && tool
            .parameters()
            .and_then(|p| p.at_pointer(parent))
            .is_some_and(|p| p.get("maxItems").is_some())
    {
        return;
    }
    let items = n.get("items");
    let closed_tuple = n.get("prefixItems").is_some() && shape::is_false(items);
    let distinct_enum = n.get("uniqueItems").and_then(|u| u.as_bool()) == Some(true)
        && items.is_some_and(|i| !shape::closed_values(i).is_empty());
    if closed_tuple || distinct_enum {
        return;
    }
    let path = shape::display_path(&node.pointer);
    // No count is stated (TGS015 fixes those that are): 100 is a guess a person confirms.
    let fix = add_keys(
        tool,
        n,
        &[("maxItems", "100".to_owned())],
        Applicability::Unsafe,
    )
    .filter(|_| crate::lint::rules::schema::prose::stated_count(node.description()).is_none());
    ctx.report(tool.span(shape::anchor(node)), format!("array `{path}` has no `maxItems`"))
        .help("add `maxItems` with the most items one call should handle; validation, CEL rules and the work itself then have a bounded cost")
        .fix(fix);
}
