//! TGV004 mcp-incompatible.

use crate::diagnostic::Severity;
use crate::ir::Target;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;
use crate::spec::yaml::{Node, NodeValue};

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::McpIncompatible,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds tools an MCP `tools/list` cannot carry as written.",
    explanation: r#"## What it does
When `mcp` is a target, reports:

- a `result` (MCP `outputSchema`) whose root is not `type: object`: revisions up to
  2025-11-25 require an object, and `structuredContent` must be a JSON object there;
- in an imported tool list, boolean subschemas (`true`/`false`) as property schemas of
  `inputSchema`: the 2025-06-18 and 2025-11-25 `schema.json` require each to be an object, so
  clients that validate messages reject the list. (For specs the emitter writes `{}` instead.)

A parameter root that is not an object is already an invalid contract, and names outside
MCP's `^[A-Za-z0-9._-]{1,128}$` are `tool-name-invalid` (TGN001).

## Why is this bad?
A client validating `tools/list` against the published schema drops the whole response. A tool
with an array or string result cannot return `structuredContent` to older clients at all:
`toolgate build` then omits its `outputSchema`, and clients cannot validate its result.

## Example
```yaml
name: list_files
result:
  type: array
  items: {type: string}
```

Use instead:
```yaml
name: list_files
result:
  type: object
  properties:
    files: {type: array, items: {type: string}}
  required: [files]
```
"#,
};

/// Reports MCP name, output-schema and boolean-subschema problems.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    if !ctx.targets(Target::Mcp) {
        return;
    }
    if let Some(result) = &tool.spec.value.result
        && result.is_map()
    {
        let ty = result.get("type");
        if ty.and_then(Node::as_str) != Some("object") {
            let at = ty.map(|t| t.range).unwrap_or(result.range);
            ctx.report(tool.span(at), "MCP output schemas must have `type: object` at the root (revisions up to 2025-11-25): `toolgate build` omits `outputSchema` for this tool, so clients cannot validate its structured result")
                .help("wrap the value in an object, e.g. `{type: object, properties: {items: <this schema>}, required: [items]}`");
        }
    }
    if tool.is_spec() {
        return;
    }
    let Some(props) = tool.parameters().and_then(|p| p.get("properties")) else {
        return;
    };
    for (key, value) in props.entries() {
        if let NodeValue::Bool(b) = value.value {
            ctx.report(
                tool.span(value.range),
                format!(
                    "property `{}` has the boolean schema `{b}`, which MCP's schema.json rejects",
                    key.name
                ),
            )
            .help(if b {
                "write `{}` (any value) instead of `true`"
            } else {
                "write `{\"not\": {}}` instead of `false`, or remove the property"
            });
        }
    }
}
