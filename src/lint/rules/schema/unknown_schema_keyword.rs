//! TGS013 unknown-schema-keyword.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, SchemaNode, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;
use crate::spec::yaml::NodeValue;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::UnknownSchemaKeyword,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds keys in `parameters` and `result` schemas that are not JSON Schema keywords, such as the halves of a description split at a comma.",
    explanation: r#"## What it does
Reports keys of a schema object (not of `properties`, whose keys are parameter names) that are
not JSON Schema 2020-12 keywords, the common annotations (`example`, OpenAPI's `nullable`,
Gemini's `propertyOrdering`) or extensions (`x-…`). A key whose value is `null` is most often a
YAML slip: in a flow mapping such as `{type: string, description: The lines, each numbered.}`
an unquoted comma ends the description, and `each numbered.` becomes a key of its own.

## Why is this bad?
JSON Schema ignores unknown keywords, so the mistake is silent: the description the model reads
is cut short, the stray key is sent to every provider (some reject unknown keys, e.g. Gemini's
`parameters`), and a misspelt keyword (`maxLenght`) constrains nothing.

## Example
```yaml
result:
  type: object
  properties:
    content: {type: string, description: The lines, each prefixed with its number.}
```

Use instead:
```yaml
result:
  type: object
  properties:
    content: {type: string, description: "The lines, each prefixed with its number."}
```
"#,
};

/// JSON Schema 2020-12 keywords (core, applicator, validation, meta-data, format, content,
/// unevaluated), the pre-2019 names still in use, and widespread annotations.
const KEYWORDS: &[&str] = &[
    "$schema",
    "$id",
    "$ref",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$vocabulary",
    "$comment",
    "$defs",
    "$recursiveRef",
    "$recursiveAnchor",
    "definitions",
    "dependencies",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "prefixItems",
    "items",
    "additionalItems",
    "contains",
    "properties",
    "patternProperties",
    "additionalProperties",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "type",
    "enum",
    "const",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    "title",
    "description",
    "default",
    "deprecated",
    "readOnly",
    "writeOnly",
    "examples",
    "format",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    // Annotations other dialects and providers use.
    "example",
    "nullable",
    "propertyOrdering",
    "discriminator",
];

/// Reports unknown keys of one schema node.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView, node: &SchemaNode) {
    for (key, value) in node.node.entries() {
        let k = key.name.as_str();
        if KEYWORDS.contains(&k) || k.starts_with("x-") {
            continue;
        }
        if matches!(value.value, NodeValue::Null) {
            ctx.report(
                tool.span(key.range),
                format!("`{k}` is not a JSON Schema keyword and has no value: it looks like the rest of a text cut at a comma"),
            )
            .help("quote the text before it (`description: \"…, …\"`): in a YAML flow mapping an unquoted comma ends the value");
        } else {
            let help = match crate::suggest::did_you_mean(k, KEYWORDS.iter().copied()) {
                Some(s) => format!("{s} Unknown keywords constrain nothing; prefix an extension with `x-`"),
                None => "unknown keywords constrain nothing; prefix an extension with `x-`, or remove it".to_owned(),
            };
            ctx.report(
                tool.span(key.range),
                format!("`{k}` is not a JSON Schema keyword"),
            )
            .help(help);
        }
    }
}
