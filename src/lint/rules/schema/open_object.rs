//! TGS009 open-object.

use crate::diagnostic::{Applicability, Severity};
use crate::lint::context::{ImportFormat, LintContext, SchemaNode, SchemaRole, ToolView};
use crate::lint::fix::add_keys;
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::schema::shape::{self, Position};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::OpenObject,
    severity: Severity::Info,
    applies: Applies::Everywhere,
    purpose: "Finds parameter objects that accept properties they do not declare.",
    explanation: r#"## What it does
Reports objects in `parameters` — the root included — that declare their properties but not
`additionalProperties: false` (or `unevaluatedProperties: false`). Objects whose extra properties
are typed on purpose (`additionalProperties: {type: string}`, `patternProperties`) and `allOf`
branches (where closing one branch would reject the others' properties) are not reported, nor are
Gemini function declarations, whose schema dialect has no `additionalProperties`.

## Why is this bad?
A misspelt or invented argument (`pth`, `force: true`) passes validation silently and is ignored,
so the call does something other than what the model meant. OpenAI strict mode and Anthropic
strict tool use require every object to be closed, and generated types cannot deny unknown fields.

## Example
```yaml
name: read_file
description: Read a UTF-8 text file in the workspace; returns its numbered lines.
parameters:
  type: object
  properties:
    path: {type: string, maxLength: 4096}
  required: [path]
```

Use instead:
```yaml
parameters:
  type: object
  properties:
    path: {type: string, maxLength: 4096}
  required: [path]
  additionalProperties: false
```
"#,
};

/// Reports an object node that is not closed.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView, node: &SchemaNode) {
    let n = node.node;
    if node.role != SchemaRole::Parameters || shape::position_of(tool, node) != Position::Data {
        return;
    }
    // Gemini's schema dialect has no `additionalProperties` to add: the advice cannot be followed.
    if tool.is_imported_from(ImportFormat::Gemini) {
        return;
    }
    let types = node.types();
    let object = types.contains(&"object") || (types.is_empty() && n.get("properties").is_some());
    let root = node.pointer.is_empty();
    let declared = n.get("properties").is_some_and(|p| !p.entries().is_empty());
    // A nested object with no properties is a map of anything: TGS010 reports it.
    if !object || (!declared && !root) {
        return;
    }
    let extra = n.get("additionalProperties");
    let closed = shape::is_false(extra) || shape::is_false(n.get("unevaluatedProperties"));
    let typed_extra = extra.is_some_and(|a| a.is_map() && !a.entries().is_empty())
        || n.get("patternProperties").is_some();
    let composed = ["allOf", "anyOf", "oneOf", "$ref"]
        .iter()
        .any(|k| n.get(k).is_some());
    if closed || typed_extra || composed {
        return;
    }
    let message = match (root, declared) {
        (true, false) => format!(
            "`{}` takes no parameters, but its schema accepts any object",
            tool.name
        ),
        (true, true) => format!(
            "the parameters of `{}` accept properties they do not declare",
            tool.name
        ),
        (false, _) => format!(
            "object `{}` accepts properties it does not declare",
            shape::display_path(&node.pointer)
        ),
    };
    let fix = add_keys(
        tool,
        n,
        &[("additionalProperties", "false".to_owned())],
        Applicability::Safe,
    );
    ctx.report(tool.span(shape::anchor(node)), message)
        .help("add `additionalProperties: false`, so a misspelt or invented argument is rejected instead of ignored")
        .fix(fix);
}
