//! TGV002 anthropic-incompatible.

use crate::diagnostic::Severity;
use crate::emit::anthropic::is_property_key;
use crate::ir::Target;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::provider::root_composition;
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::AnthropicIncompatible,
    severity: Severity::Error,
    applies: Applies::Everywhere,
    purpose: "Finds parameter schemas the Anthropic Messages API rejects.",
    explanation: r#"## What it does
When `anthropic` is a target, reports:

- top-level property keys that do not match `^[a-zA-Z0-9_.-]{1,64}$` (the API answers
  `Property keys should match pattern ...`; Bedrock Converse has the same rule);
- `oneOf`, `anyOf` or `allOf` at the root of `parameters` (`input_schema does not support
  oneOf, allOf, or anyOf at the top level`).

Tool names are checked by the naming rules; a root that is not an object is an invalid
contract already.

## Why is this bad?
One tool the API rejects fails the whole request: no tool of the list can be used, and the
error names only the first offender.

## Example
```yaml
parameters:
  type: object
  properties:
    "file path": {type: string}
```

Use instead:
```yaml
parameters:
  type: object
  properties:
    file_path: {type: string}
```
"#,
};

/// Reports property keys and root unions Anthropic rejects.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    if !ctx.targets(Target::Anthropic) {
        return;
    }
    let Some(params) = tool.parameters() else {
        return;
    };
    if let Some(k) = root_composition(params) {
        ctx.report(
            tool.span(k.range),
            format!("Anthropic rejects `{}` at the root of the input schema", k.name),
        )
        .help("the root must be one object: move the alternatives into a property, or split the tool in two");
    }
    for (key, _, _) in tool.properties() {
        if !is_property_key(&key.name) {
            ctx.report(
                tool.span(key.range),
                format!("Anthropic rejects the property key `{}`: keys must match `^[a-zA-Z0-9_.-]{{1,64}}$`", key.name),
            )
            .help("rename it with letters, digits, `_`, `.` and `-` only, at most 64 characters (snake_case is safe for every provider)");
        }
    }
}
