//! TGV001 openai-strict-incompatible.

use crate::diagnostic::Severity;
use crate::ir::Target;
use crate::lint::context::{LintContext, SchemaNode, SchemaRole, ToolView};
use crate::lint::rule::{Applies, Group, RuleMeta};
use crate::lint::rules::provider::root_composition;
use crate::spec::yaml::{Node, NodeValue};

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    code: "TGV001",
    name: "openai-strict-incompatible",
    group: Group::Provider,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds parameter schemas that OpenAI strict mode rejects, which the emitter must loosen or emit without strict mode.",
    explanation: r#"## What it does
When `openai-strict` is a target, reports what Structured Outputs rejects and no mechanical
rewrite can keep:

- a root `oneOf`, `anyOf` or `allOf`;
- `oneOf`, `allOf` with more than one schema, `not`, `if`/`then`/`else`, `dependentRequired`,
  `dependentSchemas` anywhere;
- `patternProperties` and `prefixItems`;
- free-form objects: `additionalProperties: true` or a schema (maps with open keys), and nested
  `type: object` schemas without `properties`;
- more than 10 levels of nesting, more than 5000 properties or more than 1000 enum values in
  one schema.

Not reported, because the emitter fixes them silently: objects without
`additionalProperties: false` (it closes them) and optional properties (it lists every property
in `required` and makes the optional ones nullable). Keywords strict mode does not support but
that only constrain values (`default`, `minLength`, `format: uri`, `uniqueItems` ...) are moved
into the description instead; `constraint-dropped-by-target` (TGV006) lists those.

## Why is this bad?
OpenAI answers a request whose tool schema breaks these rules with a 400 error for the whole
request (`'oneOf' is not permitted`, `'additionalProperties' is required to be supplied and to
be false`), so `toolgate build` never sends them as they are: `oneOf` becomes `anyOf` (which
also accepts a value matching several branches), `not`, conditionals and dependencies move into
the description (the model is no longer held to them; the runtime still checks them), and a
tool with a free-form object, a tuple, a pattern-keyed map or a limit beyond strict mode's is
emitted with `strict: false` — the model may then send arguments the schema rejects, which the
runtime refuses and the model must retry.

## Example
```yaml
parameters:
  type: object
  properties:
    target:
      oneOf:
        - {type: object, properties: {path: {type: string}}, required: [path]}
        - {type: object, properties: {url: {type: string}}, required: [url]}
```

Use instead:
```yaml
parameters:
  type: object
  properties:
    target:
      anyOf:
        - {type: object, properties: {path: {type: string}}, required: [path]}
        - {type: object, properties: {url: {type: string}}, required: [url]}
```
"#,
};

/// What happens to a tool whose schema cannot be made strict.
const NOT_STRICT: &str = "the tool is emitted with `strict: false`";

/// OpenAI strict limits (Structured Outputs, "Supported schemas").
const MAX_DEPTH: usize = 10;
const MAX_PROPERTIES: usize = 5000;
const MAX_ENUM_VALUES: usize = 1000;

/// Reports what strict mode rejects at one node.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView, node: &SchemaNode) {
    if node.role != SchemaRole::Parameters || !ctx.targets(Target::OpenaiStrict) {
        return;
    }
    let root = node.pointer.is_empty();
    let root_union = if root {
        root_composition(node.node)
    } else {
        None
    };
    if let Some(k) = root_union {
        ctx.report(
            tool.span(k.range),
            format!("OpenAI strict mode rejects `{}` at the root of `parameters`", k.name),
        )
        .help("the root must be one object: move the alternatives into a property (e.g. `target: {anyOf: [...]}`), or split the tool in two");
    }
    for (key, value) in node.node.entries() {
        if root_union.is_some_and(|k| k.range == key.range) {
            continue;
        }
        let (what, consequence, help) = match key.name.as_str() {
            "oneOf" => (
                "`oneOf`",
                "the emitter turns it into `anyOf`, which also accepts values matching several branches",
                "use `anyOf` with branches a value cannot match twice (e.g. a `kind` property with `const`); the runtime still validates against the spec",
            ),
            "allOf" if value.items().len() > 1 => (
                "`allOf`",
                "the emitter merges the schemas, and drops what does not merge into the description",
                "merge the schemas into one",
            ),
            "not" => (
                "`not`",
                "the emitter moves it into the description, so the model is not held to it",
                "describe the allowed values positively (`enum`, `pattern`), or move the check into a `validate` rule",
            ),
            "if" | "then" | "else" => (
                "conditional schemas (`if`/`then`/`else`)",
                "the emitter moves them into the description, so the model is not held to them",
                "split the variants with `anyOf`, or move the condition into a `validate` rule",
            ),
            "dependentRequired" | "dependentSchemas" | "dependencies" => (
                "dependent schemas",
                "the emitter moves them into the description, so the model is not held to them",
                "move the dependency into a `validate` rule (e.g. `!has(args.a) || has(args.b)`)",
            ),
            "patternProperties" => (
                "`patternProperties`",
                NOT_STRICT,
                "strict mode needs fixed property names: use an array of `{key, value}` objects instead of a map",
            ),
            "prefixItems" => (
                "tuple arrays (`prefixItems`)",
                NOT_STRICT,
                "use an object with named properties instead of a tuple",
            ),
            "additionalProperties"
                if matches!(value.value, NodeValue::Bool(true) | NodeValue::Map(_)) =>
            {
                (
                    "free-form objects (`additionalProperties` other than `false`)",
                    NOT_STRICT,
                    "strict mode needs fixed property names: list the keys under `properties`, or use an array of `{key, value}` objects",
                )
            }
            _ => continue,
        };
        ctx.report(
            tool.span(key.range),
            format!("OpenAI strict mode rejects {what}: {consequence}"),
        )
        .help(help);
    }
    let composed = node
        .node
        .entries()
        .iter()
        .any(|(k, _)| matches!(k.name.as_str(), "anyOf" | "oneOf" | "allOf" | "$ref"));
    if !root
        && node.is_type("object")
        && node.node.get("properties").is_none()
        && node.node.get("additionalProperties").is_none()
        && node.node.get("patternProperties").is_none()
        && !composed
    {
        let at = node
            .node
            .entry("type")
            .map(|(k, _)| k.range)
            .unwrap_or(node.node.range);
        ctx.report(
            tool.span(at),
            format!("OpenAI strict mode rejects free-form objects (`type: object` without `properties`): {NOT_STRICT}"),
        )
        .help("list the object's keys under `properties`; closing it as it is would let the model pass only `{}`");
    }
    if node.depth == MAX_DEPTH + 1 {
        ctx.report(
            tool.span(node.node.range),
            format!("OpenAI strict mode allows at most {MAX_DEPTH} levels of nesting; this schema is nested deeper, so {NOT_STRICT}"),
        )
        .help("flatten the structure, e.g. by passing nested parts as separate parameters");
    }
    if root {
        let mut counts = Counts::default();
        counts.add(node.node);
        let at = node
            .node
            .entry("properties")
            .map(|(k, _)| k.range)
            .unwrap_or(node.node.range);
        if counts.properties > MAX_PROPERTIES {
            ctx.report(
                tool.span(at),
                format!("OpenAI strict mode allows at most {MAX_PROPERTIES} properties in a schema; this one has {}, so {NOT_STRICT}", counts.properties),
            )
            .help("split the tool, or turn repeated structures into arrays");
        }
        if counts.enum_values > MAX_ENUM_VALUES {
            ctx.report(
                tool.span(at),
                format!("OpenAI strict mode allows at most {MAX_ENUM_VALUES} enum values in a schema; this one has {}, so {NOT_STRICT}", counts.enum_values),
            )
            .help("take large value sets as a string checked by a `validate` rule, or offer a search tool for them");
        }
    }
}

/// Property and enum-value totals of a whole schema.
#[derive(Default)]
struct Counts {
    properties: usize,
    enum_values: usize,
}

impl Counts {
    fn add(&mut self, node: &Node) {
        match &node.value {
            NodeValue::Map(entries) => {
                for (k, v) in entries {
                    match k.name.as_str() {
                        "properties" => self.properties += v.entries().len(),
                        "enum" => self.enum_values += v.items().len(),
                        // Values, not schemas.
                        "const" | "default" | "examples" | "example" => continue,
                        _ => {}
                    }
                    self.add(v);
                }
            }
            NodeValue::Seq(items) => {
                for i in items {
                    self.add(i);
                }
            }
            NodeValue::Null | NodeValue::Bool(_) | NodeValue::Number(_) | NodeValue::String(_) => {}
        }
    }
}
