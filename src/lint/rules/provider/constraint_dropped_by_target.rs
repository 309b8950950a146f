//! TGV006 constraint-dropped-by-target.

use serde_json::Value;

use crate::diagnostic::Severity;
use crate::emit::dropped::dropped;
use crate::emit::openai::is_structural;
use crate::ir::Target;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::provider::locate;
use crate::rule::Rule;
use crate::spec::yaml::Node;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::ConstraintDroppedByTarget,
    severity: Severity::Info,
    applies: Applies::Everywhere,
    purpose: "Finds parameter constraints a target cannot express, which its model then sees only as description text.",
    explanation: r#"## What it does
For each parameter (at any depth, with its `items`), lists the value constraints a target in
use cannot carry and its emitter therefore moves into the description — the emitters' own
account of what they move (`emit::dropped`), so the rule and the output cannot disagree. With
`openai-strict` (when the tool can be strict at all) these are `minLength`, `maxLength`,
string `format`s other than date-time, time, date, duration, email, hostname, ipv4, ipv6 and
uuid (`uri` among them), `uniqueItems`, `minProperties`/`maxProperties` and any other keyword
strict mode lacks. The other targets (Gemini in its default `parametersJsonSchema` form) keep
the constraints of parameters.

`minLength` up to 10 and `maxLength` from 100 up are not listed (sanity limits a model does not
run into), nor a keyword the description already states (it mentions the number, the format,
"unique"), nor annotations such as `default` and `examples` or keywords JSON Schema does not
have, such as OpenAPI's `nullable` (they constrain nothing, so dropping them cannot make a call
fail). Structural keywords (`not`, conditionals) are
`openai-strict-incompatible`'s. One finding per parameter, naming the keywords and targets.

## Why is this bad?
It is not wrong — toolgate still validates every argument against the full schema at run time —
but the model of that target only reads the constraint as appended text such as
`{maxLength: 72}` and its output is not constrained by it, so expect more
`INVALID_ARGUMENTS` results there. Saying it in the description in your own words ("at most 72
characters") is usually clearer than the generated suffix.

## Example
```yaml
parameters:
  type: object
  properties:
    title: {type: string, maxLength: 72}
```

Use instead:
```yaml
parameters:
  type: object
  properties:
    title: {type: string, maxLength: 72, description: Commit title, at most 72 characters.}
```
"#,
};

/// Length bounds beyond which a bound is a sanity limit a model does not run into, not guidance.
const GENEROUS_MAX_LENGTH: f64 = 100.0;
/// See [`GENEROUS_MAX_LENGTH`]: floors up to this are sanity checks (`minLength: 1`, a summary of
/// at least 10 characters).
const GENEROUS_MIN_LENGTH: f64 = 10.0;
/// The JSON Schema keywords that constrain a value and that toolgate's validation enforces
/// (structural ones are `openai-strict-incompatible`'s; annotations such as `default`, and
/// keywords outside JSON Schema such as OpenAPI's `nullable`, constrain nothing).
const CONSTRAINTS: &[&str] = &[
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "minProperties",
    "maxProperties",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "enum",
    "const",
];

/// Reports, once per parameter, the keywords the targets in use drop, as the emitters report
/// them ([`crate::emit::dropped`]): value constraints only (structural keywords are
/// `openai-strict-incompatible`'s), less those the description already states.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    let Some(params) = tool.parameters() else {
        return;
    };
    let json = params.to_json();
    // Parameter pointer -> (target, keyword as shown), in the order the emitters report them.
    let mut found: Vec<(String, Vec<(Target, String)>)> = Vec::new();
    for &target in Target::ALL {
        if !ctx.targets(target) {
            continue;
        }
        for d in dropped(target, &json) {
            if is_structural(&d.keyword) || !CONSTRAINTS.contains(&d.keyword.as_str()) {
                continue;
            }
            let (param, prefix) = match d.pointer.strip_suffix("/items") {
                Some(p) => (p, "items."),
                None => (d.pointer.as_str(), ""),
            };
            let Some(node) = parameter(params, param) else {
                continue;
            };
            let desc = node
                .get("description")
                .and_then(Node::as_str)
                .unwrap_or("")
                .to_lowercase();
            let schema = params.at_pointer(&d.pointer).unwrap_or(node);
            if !worth_reporting(&d.keyword, &d.value, schema, &desc) {
                continue;
            }
            let shown = (target, format!("{prefix}{}", d.keyword));
            match found.iter_mut().find(|(p, _)| p == param) {
                Some((_, list)) => list.push(shown),
                None => found.push((param.to_owned(), vec![shown])),
            }
        }
    }
    for (pointer, mut dropped) in found {
        // The parameter's own keywords first, then its items' (the emitter walks items first).
        dropped.sort_by_key(|(_, k)| k.starts_with("items."));
        let Some(name) = pointer.rsplit('/').next() else {
            continue;
        };
        let name = name.replace("~1", "/").replace("~0", "~");
        let mut parts = Vec::new();
        for target in Target::ALL {
            let kws: Vec<String> = dropped
                .iter()
                .filter(|(t, _)| t == target)
                .map(|(_, k)| format!("`{k}`"))
                .collect();
            if !kws.is_empty() {
                parts.push(format!("{} drops {}", target.as_str(), kws.join(", ")));
            }
        }
        ctx.report(
            tool.span(locate(params, &pointer, None)),
            format!(
                "parameter `{name}`: {}; the model there sees these constraints only as description text",
                parts.join("; ")
            ),
        )
        .help("toolgate still enforces them at run time; state them in the description in your own words if the model needs them to call the tool right");
    }
}

/// The node at `pointer` when it is a parameter (a property of an object schema, at any depth).
fn parameter<'a>(params: &'a Node, pointer: &str) -> Option<&'a Node> {
    let (parent, _) = pointer.rsplit_once('/')?;
    if !parent.ends_with("/properties") && parent != "/properties" {
        return None;
    }
    params.at_pointer(pointer)
}

/// Whether a dropped keyword is guidance the model loses, rather than a sanity limit or
/// something the description already says.
fn worth_reporting(keyword: &str, value: &Value, schema: &Node, desc: &str) -> bool {
    let states_number = |n: f64| {
        let text = if n.fract() == 0.0 {
            format!("{}", n as i64)
        } else {
            format!("{n}")
        };
        desc.contains(&text)
    };
    let num = value.as_f64();
    match keyword {
        "minLength" => num.is_some_and(|n| n > GENEROUS_MIN_LENGTH && !states_number(n)),
        "maxLength" => num.is_some_and(|n| n < GENEROUS_MAX_LENGTH && !states_number(n)),
        "format" => {
            // Numeric formats (`int32`, `uint64`) only restate the type; the range is in
            // `minimum`/`maximum`.
            let stringish = schema.get("type").is_none_or(|t| {
                t.as_str() == Some("string")
                    || t.items().iter().any(|i| i.as_str() == Some("string"))
            });
            stringish && !value.as_str().is_some_and(|f| states_format(f, desc))
        }
        "uniqueItems" => {
            value.as_bool() == Some(true)
                && !["unique", "distinct", "duplicate"]
                    .iter()
                    .any(|w| desc.contains(w))
        }
        _ => num.is_none_or(|n| !states_number(n)),
    }
}

/// Whether a description already says what a `format` requires.
fn states_format(format: &str, desc: &str) -> bool {
    let also: &[&str] = match format {
        "uri" | "uri-reference" | "iri" | "iri-reference" | "url" => &["url", "uri", "http"],
        "regex" => &["regular expression", "regex"],
        "json-pointer" | "relative-json-pointer" => &["json pointer", "pointer"],
        _ => &[],
    };
    desc.contains(format) || also.iter().any(|a| desc.contains(a))
}
