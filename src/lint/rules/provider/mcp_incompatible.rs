//! TGV004 mcp-incompatible.

use crate::diagnostic::Severity;
use crate::ir::Target;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, Group, RuleMeta};
use crate::lint::rules::provider::is_mcp_name;
use crate::spec::yaml::{Node, NodeValue};

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    code: "TGV004",
    name: "mcp-incompatible",
    group: Group::Provider,
    severity: Severity::Error,
    applies: Applies::Everywhere,
    purpose: "Finds tools an MCP `tools/list` cannot carry as written.",
    explanation: r#"## What it does
When `mcp` is a target, reports:

- tool names that do not match `^[A-Za-z0-9._-]{1,128}$` (MCP 2025-11-25, SEP-986);
- a `result` (MCP `outputSchema`) whose root is not `type: object`: revisions up to
  2025-11-25 require an object, and `structuredContent` must be a JSON object there;
- in an imported tool list, boolean subschemas (`true`/`false`) as property schemas of
  `inputSchema`: the 2025-06-18 and 2025-11-25 `schema.json` require each to be an object, so
  clients that validate messages reject the list. (For specs the emitter writes `{}` instead.)

A parameter root that is not an object is already an invalid contract.

## Why is this bad?
SDKs warn about or reject names outside the rule, aggregating clients mangle them, and a
client validating `tools/list` against the published schema drops the whole response. A tool
with an array or string result cannot return `structuredContent` to older clients at all.

## Example
```yaml
name: list files
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
    if !tool.name.is_empty() && !is_mcp_name(tool.name) {
        ctx.report(
            tool.name_span(),
            format!(
                "MCP tool names must match `^[A-Za-z0-9._-]{{1,128}}$`; `{}` does not",
                tool.name
            ),
        )
        .help("use letters, digits, `_`, `-` and `.` only (snake_case is safe for every provider)");
    }
    if let Some(result) = &tool.spec.value.result
        && result.is_map()
    {
        let ty = result.get("type");
        if ty.and_then(Node::as_str) != Some("object") {
            let at = ty.map(|t| t.range).unwrap_or(result.range);
            ctx.report(tool.span(at), "MCP output schemas must have `type: object` at the root (revisions up to 2025-11-25)")
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
