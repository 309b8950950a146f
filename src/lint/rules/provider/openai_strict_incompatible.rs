//! TGV001 openai-strict-incompatible.

use crate::diagnostic::Severity;
use crate::emit::openai::{
    self, MAX_ENUM_VALUES, MAX_NESTING, MAX_PROPERTIES, MAX_STRING_BUDGET, StrictChange,
    StrictChangeKind, is_structural,
};
use crate::ir::Target;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::provider::locate;
use crate::rule::Rule;
use crate::spec::source::TextRange;
use crate::spec::yaml::Node;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::OpenaiStrictIncompatible,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds parameter schemas that OpenAI strict mode rejects, which the emitter must loosen or emit without strict mode.",
    explanation: r#"## What it does
When `openai-strict` is a target, reports what Structured Outputs rejects and no mechanical
rewrite can keep. The findings are the OpenAI emitter's own record of its strict conversion,
so a tool this rule is silent about is emitted strict and unchanged in meaning:

- a root `oneOf`, `anyOf` or `allOf`;
- `oneOf`, an `allOf` whose schemas do not merge, `not`, `if`/`then`/`else`,
  `dependentRequired`, `dependentSchemas` anywhere;
- `patternProperties` and `prefixItems`;
- free-form objects: `additionalProperties: true` or a schema (maps with open keys), and
  `type: object` schemas without `properties`; schemas without a type, and boolean schemas;
- more than 10 levels of object nesting, more than 5000 properties, more than 1000 enum values
  or more than 120,000 characters of property names and enum/const values in one schema.

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

/// Reports what the OpenAI emitter's strict conversion ([`openai::strict_conversion`]) loosens
/// or cannot do: the rule and the emitted list read the same function, so they cannot disagree.
/// Value constraints moved into descriptions are `constraint-dropped-by-target`'s.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    if !ctx.targets(Target::OpenaiStrict) {
        return;
    }
    let Some(params) = tool.parameters() else {
        return;
    };
    for change in openai::strict_conversion(&params.to_json()).changes {
        let Some(finding) = finding(params, &change) else {
            continue;
        };
        ctx.report(tool.span(finding.at), finding.message)
            .help(finding.help);
    }
}

/// One finding of this rule.
struct Finding {
    at: TextRange,
    message: String,
    help: &'static str,
}

/// The finding for one change of the strict conversion, if it is this rule's.
fn finding(params: &Node, change: &StrictChange) -> Option<Finding> {
    let at = |keyword: Option<&str>| locate(params, &change.pointer, keyword);
    let root = change.pointer.is_empty();
    let f = |at, message: String, help| Some(Finding { at, message, help });
    match &change.kind {
        StrictChangeKind::Moved { keyword, .. }
            if root && matches!(keyword.as_str(), "anyOf" | "oneOf" | "allOf") =>
        {
            f(
                at(Some(keyword)),
                format!("OpenAI strict mode rejects `{keyword}` at the root of `parameters`"),
                "the root must be one object: move the alternatives into a property (e.g. `target: {anyOf: [...]}`), or split the tool in two",
            )
        }
        StrictChangeKind::Moved { keyword, .. } if is_structural(keyword) => {
            let (what, help) = match keyword.as_str() {
                "allOf" => (
                    "`allOf` whose schemas do not merge",
                    "merge the schemas into one",
                ),
                "not" => (
                    "`not`",
                    "describe the allowed values positively (`enum`, `pattern`), or move the check into a `validate` rule",
                ),
                "if" | "then" | "else" => (
                    "conditional schemas (`if`/`then`/`else`)",
                    "split the variants with `anyOf`, or move the condition into a `validate` rule",
                ),
                _ => (
                    "dependent schemas",
                    "move the dependency into a `validate` rule (e.g. `!has(args.a) || has(args.b)`)",
                ),
            };
            let them = if matches!(keyword.as_str(), "not" | "allOf") {
                "it"
            } else {
                "them"
            };
            f(
                at(Some(keyword)),
                format!("OpenAI strict mode rejects {what}: the emitter moves {them} into the description, so the model is not held to {them}"),
                help,
            )
        }
        StrictChangeKind::Moved { .. } => None,
        StrictChangeKind::OneOfToAnyOf => f(
            at(Some("oneOf")),
            "OpenAI strict mode rejects `oneOf`: the emitter turns it into `anyOf`, which also accepts values matching several branches".into(),
            "use `anyOf` with branches a value cannot match twice (e.g. a `kind` property with `const`); the runtime still validates against the spec",
        ),
        StrictChangeKind::PatternProperties => f(
            at(Some("patternProperties")),
            format!("OpenAI strict mode rejects `patternProperties`: {NOT_STRICT}"),
            "strict mode needs fixed property names: use an array of `{key, value}` objects instead of a map",
        ),
        StrictChangeKind::PrefixItems => f(
            at(Some("prefixItems")),
            format!("OpenAI strict mode rejects tuple arrays (`prefixItems`): {NOT_STRICT}"),
            "use an object with named properties instead of a tuple",
        ),
        StrictChangeKind::OpenObject => {
            let node = params.at_pointer(&change.pointer);
            if node.is_some_and(|n| n.get("additionalProperties").is_some()) {
                f(
                    at(Some("additionalProperties")),
                    format!("OpenAI strict mode rejects free-form objects (`additionalProperties` other than `false`): {NOT_STRICT}"),
                    "strict mode needs fixed property names: list the keys under `properties`, or use an array of `{key, value}` objects",
                )
            } else {
                f(
                    at(Some("type")),
                    format!("OpenAI strict mode rejects free-form objects (`type: object` without `properties`): {NOT_STRICT}"),
                    "list the object's keys under `properties`; closing it as it is would let the model pass only `{}`",
                )
            }
        }
        StrictChangeKind::Untyped => f(
            at(None),
            format!("OpenAI strict mode rejects schemas without a type (any JSON value): {NOT_STRICT}"),
            "give it a `type` (or `enum`, `const`, `anyOf` of typed schemas)",
        ),
        StrictChangeKind::BooleanSchema => f(
            at(None),
            format!("OpenAI strict mode rejects boolean schemas (`true`/`false`): {NOT_STRICT}"),
            "write the schema out as an object with a `type`",
        ),
        StrictChangeKind::Nesting { deepest } => f(
            at(None),
            format!("OpenAI strict mode allows at most {MAX_NESTING} levels of nesting; this schema nests {deepest} deep, so {NOT_STRICT}"),
            "flatten the structure, e.g. by passing nested parts as separate parameters",
        ),
        StrictChangeKind::Properties { count } => f(
            at(Some("properties")),
            format!("OpenAI strict mode allows at most {MAX_PROPERTIES} properties in a schema; this one has {count}, so {NOT_STRICT}"),
            "split the tool, or turn repeated structures into arrays",
        ),
        StrictChangeKind::EnumValues { count } => f(
            at(Some("properties")),
            format!("OpenAI strict mode allows at most {MAX_ENUM_VALUES} enum values in a schema; this one has {count}, so {NOT_STRICT}"),
            "take large value sets as a string checked by a `validate` rule, or offer a search tool for them",
        ),
        StrictChangeKind::StringBudget { chars } => f(
            at(Some("properties")),
            format!("OpenAI strict mode allows at most {MAX_STRING_BUDGET} characters of property names, enum and const values in a schema; this one has {chars}, so {NOT_STRICT}"),
            "shorten long enum values or property names, or take large value sets as a string checked by a `validate` rule",
        ),
    }
}
