//! TGS007 unbounded-string.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, SchemaNode, SchemaRole, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::schema::shape::{self, Position};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::UnboundedString,
    severity: Severity::Info,
    applies: Applies::SpecsOnly,
    purpose: "Finds string parameters with no `maxLength`, `enum`, `const`, `pattern` or `format`.",
    explanation: r#"Smell: none (a size the description does not state is a policy choice, not a missing constraint; TGS015 reports stated ones).

## What it does
Reports every string in `parameters` (properties, array items, union branches) that nothing
bounds: no `maxLength`, and no `enum`, `const`, `pattern` or `format` that would close or shape it.
Imported tool lists (`--from`) are not checked: the reasons below are toolgate's own enforcement,
which does not run their tools, and over real lists the finding named nearly every string.

## Why is this bad?
An unbounded string is where oversized or injected input enters: a megabyte "path", a command with
a payload appended. toolgate's CEL cost check needs `maxLength` to bound rules that scan the
string (`contains`, `matches`), and the runtime can reject an oversized argument before anything
runs only when the schema says how long is too long.

## Example
```yaml
name: read_file
description: Read a UTF-8 text file in the workspace; returns its numbered lines.
parameters:
  type: object
  properties:
    path: {type: string, description: Workspace-relative path.}
  required: [path]
```

Use instead:
```yaml
parameters:
  type: object
  properties:
    path: {type: string, minLength: 1, maxLength: 4096, description: Workspace-relative path.}
  required: [path]
```
"#,
};

/// What bounds or closes a string.
const BOUNDS: &[&str] = &["maxLength", "enum", "const", "pattern", "format"];

/// Reports a string node that nothing bounds.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView, node: &SchemaNode) {
    let n = node.node;
    if node.role != SchemaRole::Parameters
        || shape::position_of(tool, node) == Position::Condition
        || !node.is_type("string")
        || BOUNDS.iter().any(|k| n.get(k).is_some())
    {
        return;
    }
    if let Some(parent) = shape::union_parent(&node.pointer)
        && tool
            .parameters()
            .and_then(|p| p.at_pointer(parent))
            .is_some_and(|p| BOUNDS.iter().any(|k| p.get(k).is_some()))
    {
        return;
    }
    let path = shape::display_path(&node.pointer);
    ctx.report(tool.span(shape::anchor(node)), format!("string `{path}` has no `maxLength`, `enum` or `pattern`"))
        .help("add `maxLength` with the longest value a call needs, or close the set with `enum` or `pattern`");
}
