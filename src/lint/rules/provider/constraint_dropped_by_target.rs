//! TGV006 constraint-dropped-by-target.

use crate::diagnostic::Severity;
use crate::ir::Target;
use crate::lint::context::{LintContext, SchemaNode, SchemaRole, ToolView};
use crate::lint::rule::{Applies, Group, RuleMeta};
use crate::spec::yaml::Node;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    code: "TGV006",
    name: "constraint-dropped-by-target",
    group: Group::Provider,
    severity: Severity::Info,
    applies: Applies::Everywhere,
    purpose: "Finds parameter constraints a target cannot express, which its model then sees only as description text.",
    explanation: r#"## What it does
For each parameter (at any depth, with its `items`), lists the keywords a target in use cannot
carry and the emitter therefore moves into the description:

- `openai-strict`: `minLength` above 10 and `maxLength` below 100 (not supported by strict
  mode; looser bounds are sanity limits a model does not run into, and are not listed);
  string `format`s other than date-time, time, date, duration, email, hostname, ipv4, ipv6 and
  uuid (`uri` among them); `uniqueItems`; `minProperties`/`maxProperties`;
- `gemini` (the `parameters` form): `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`,
  `uniqueItems`.

A keyword the description already states (it mentions the number, the format, "unique") is
not listed. `default` is not listed either: it constrains nothing, so dropping it cannot make a
call fail, and the emitter states it in the description. One finding per parameter, naming the
keywords and targets.

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

/// The string formats OpenAI strict mode supports.
const OPENAI_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];
/// Length bounds beyond which a bound is a sanity limit a model does not run into, not guidance.
const GENEROUS_MAX_LENGTH: f64 = 100.0;
/// See [`GENEROUS_MAX_LENGTH`]: floors up to this are sanity checks (`minLength: 1`, a summary of
/// at least 10 characters).
const GENEROUS_MIN_LENGTH: f64 = 10.0;

/// Reports, once per parameter, the keywords the targets in use drop.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView, node: &SchemaNode) {
    if node.role != SchemaRole::Parameters {
        return;
    }
    let Some((key, _)) = node.property else {
        return;
    };
    let desc = node.description().to_lowercase();
    let mut dropped: Vec<(Target, String)> = Vec::new();
    let mut scan = |schema: &Node, prefix: &str| {
        for (target, keyword) in dropped_keywords(ctx, schema, &desc) {
            dropped.push((target, format!("{prefix}{keyword}")));
        }
    };
    scan(node.node, "");
    if let Some(items) = node.node.get("items").filter(|i| i.is_map()) {
        scan(items, "items.");
    }
    if dropped.is_empty() {
        return;
    }
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
        tool.span(key.range),
        format!(
            "parameter `{}`: {}; the model there sees these constraints only as description text",
            key.name,
            parts.join("; ")
        ),
    )
    .help("toolgate still enforces them at run time; state them in the description in your own words if the model needs them to call the tool right");
}

/// The keywords of one schema the targets in use drop, skipping those the description states.
fn dropped_keywords(ctx: &LintContext, schema: &Node, desc: &str) -> Vec<(Target, &'static str)> {
    let mut out = Vec::new();
    let num = |k: &str| schema.get(k).and_then(Node::as_f64);
    let states_number = |n: f64| {
        let text = if n.fract() == 0.0 {
            format!("{}", n as i64)
        } else {
            format!("{n}")
        };
        desc.contains(&text)
    };
    let unique = schema.get("uniqueItems").and_then(Node::as_bool) == Some(true)
        && !["unique", "distinct", "duplicate"]
            .iter()
            .any(|w| desc.contains(w));
    if ctx.targets(Target::OpenaiStrict) {
        let t = Target::OpenaiStrict;
        if num("minLength").is_some_and(|n| n > GENEROUS_MIN_LENGTH && !states_number(n)) {
            out.push((t, "minLength"));
        }
        if num("maxLength").is_some_and(|n| n < GENEROUS_MAX_LENGTH && !states_number(n)) {
            out.push((t, "maxLength"));
        }
        // Numeric formats (`int32`, `uint64`) only restate the type; the range is in
        // `minimum`/`maximum`, which strict mode keeps.
        let stringish = schema.get("type").is_none_or(|t| {
            t.as_str() == Some("string") || t.items().iter().any(|i| i.as_str() == Some("string"))
        });
        if let Some(f) = schema.get("format").and_then(Node::as_str)
            && stringish
            && !OPENAI_FORMATS.contains(&f)
            && !states_format(f, desc)
        {
            out.push((t, "format"));
        }
        if unique {
            out.push((t, "uniqueItems"));
        }
        for k in ["minProperties", "maxProperties"] {
            if num(k).is_some_and(|n| !states_number(n)) {
                out.push((t, k));
            }
        }
    }
    if ctx.targets(Target::Gemini) {
        let t = Target::Gemini;
        for k in ["exclusiveMinimum", "exclusiveMaximum", "multipleOf"] {
            if num(k).is_some_and(|n| !states_number(n)) {
                out.push((t, k));
            }
        }
        if unique {
            out.push((t, "uniqueItems"));
        }
    }
    out
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
