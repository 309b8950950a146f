//! TGS003 unstable-result-shape.

use crate::diagnostic::Severity;
use crate::lint::codes::Rule;
use crate::lint::context::{ImportFormat, LintContext, ToolView};
use crate::lint::rule::{Applies, Group, RuleMeta};
use crate::lint::rules::schema::shape;
use crate::spec::source::{SourceId, TextRange};
use crate::spec::yaml::Node;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    code: "TGS003",
    name: "unstable-result-shape",
    group: Group::Schema,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds tools whose result has no schema or more than one shape.",
    explanation: r#"## What it does
Reports a toolgate spec without a `result` schema, and any result schema (an imported tool's
`outputSchema` included) whose root allows several shapes: several types (`type: [object, string]`),
an `anyOf`/`oneOf` that mixes objects with strings or numbers, a union of objects with no `const`
property telling them apart, or an object or empty schema that declares no properties at all.

An imported MCP list gets one info per file naming its tools without an `outputSchema`: MCP can
declare a result shape (and clients validate `structuredContent` against it), so a tool without
one returns free text whose shape nothing pins down. OpenAI and Anthropic tool lists have no place
for a result schema, so they are not reported.

## Why is this bad?
A tool that sometimes returns a string, sometimes a mapping and sometimes nothing makes every
consumer branch: the runtime's normalization, the projection the model reads, generated types
and tests. One stable shape — with status and error fields in it — is what makes results
comparable across calls and retries.

## Example
```yaml
name: get_weather
description: Current weather for a city; returns the report, or a message when unknown.
parameters:
  type: object
  properties:
    city: {type: string, maxLength: 100}
  required: [city]
result:
  type: [object, string]
  properties:
    temperature_c: {type: number}
```

Use instead:
```yaml
result:
  type: object
  properties:
    found: {type: boolean}
    temperature_c: {type: number}
    message: {type: string}
  required: [found]
  additionalProperties: false
```
"#,
};

/// Reports missing and unstable result schemas.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    let Some(result) = &tool.spec.value.result else {
        if tool.is_spec() {
            ctx.report(tool.name_span(), format!("`{}` declares no `result` schema", tool.name))
                .help("add `result:` with one object shape that every outcome fills (status and error fields included)");
        }
        return;
    };
    if let Some((at, message, help)) = problem(result) {
        ctx.report(
            tool.span(at),
            format!("the result of `{}` {message}", tool.name),
        )
        .help(help);
    }
}

/// Reports, once per imported MCP list, the tools that declare no `outputSchema`.
pub(crate) fn check_list(ctx: &mut LintContext, tools: &[ToolView]) {
    let mut files: Vec<(SourceId, usize, Vec<&ToolView>)> = Vec::new();
    for tool in tools {
        if !tool.is_imported_from(ImportFormat::Mcp)
            || ctx
                .settings
                .ignored_for(Rule::UnstableResultShape, &tool.file.display_path())
        {
            continue;
        }
        let at = match files.iter().position(|(s, _, _)| *s == tool.source) {
            Some(i) => i,
            None => {
                files.push((tool.source, 0, Vec::new()));
                files.len() - 1
            }
        };
        let (_, total, missing) = &mut files[at];
        *total += 1;
        if tool.spec.value.result.is_none() {
            missing.push(tool);
        }
    }
    for (_, total, missing) in files {
        let Some(first) = missing.first() else {
            continue;
        };
        let mut shown: Vec<String> = missing
            .iter()
            .take(SHOWN)
            .map(|t| format!("`{}`", t.name))
            .collect();
        if missing.len() > SHOWN {
            shown.push(format!("and {} more", missing.len() - SHOWN));
        }
        let message = match (missing.len(), total) {
            (1, 1) => format!(
                "`{}` declares no `outputSchema`: its result is free text whose shape nothing pins down",
                first.name
            ),
            (1, _) => format!(
                "`{}` declares no `outputSchema` (1 of {total} tools): its result is free text whose shape nothing pins down",
                first.name
            ),
            (n, _) => format!(
                "{n} of {total} tools declare no `outputSchema` ({}): their results are free text whose shape nothing pins down",
                shown.join(", ")
            ),
        };
        let d = ctx.report(first.name_span(), message);
        // A list without result schemas is the MCP norm, not a defect: worth knowing, no more.
        d.severity = d.severity.min(Severity::Info);
        // The first tool is the finding's own span; the others get labels.
        for t in missing.iter().skip(1).take(SHOWN - 1) {
            d.label(t.name_span(), "no `outputSchema`");
        }
        d.help("declare an `outputSchema` (one object shape, status and error fields included) and return it as `structuredContent`, starting with the tools whose results other tools or code consume");
    }
}

/// How many tools the list finding names and labels.
const SHOWN: usize = 5;

/// What is unstable about a result schema: where, what, how to fix.
fn problem(result: &Node) -> Option<(TextRange, String, &'static str)> {
    let types = shape::types(result);
    let key_of = |k: &str| result.entry(k).map(|(key, v)| key.range.cover(v.extent()));
    if types.len() > 1 {
        let at = key_of("type").unwrap_or(result.range);
        return Some((
            at,
            format!("can have {} types ({})", types.len(), types.join(", ")),
            "choose one type, usually an object whose fields cover every outcome",
        ));
    }
    for key in ["anyOf", "oneOf"] {
        let Some((union_key, union)) = result.entry(key) else {
            continue;
        };
        let branches = union.items();
        let objects = branches.iter().filter(|b| is_object(b)).count();
        let others: Vec<&str> = branches
            .iter()
            .filter(|b| !is_object(b))
            .flat_map(|b| shape::types(b))
            .collect();
        if objects > 0 && !others.is_empty() {
            return Some((
                union_key.range,
                format!("is an `{key}` of objects and {}", others.join(", ")),
                "return one object shape and put the scalar in one of its fields",
            ));
        }
        if objects >= 2 && discriminator(branches).is_none() {
            return Some((
                union_key.range,
                format!(
                    "is an `{key}` of {objects} object shapes with no `const` field telling them apart"
                ),
                "give every branch a tag such as `kind: {const: found}`, or merge the shapes into one object",
            ));
        }
    }
    let object = is_object(result) || types.is_empty();
    let declared = [
        "properties",
        "patternProperties",
        "$ref",
        "allOf",
        "anyOf",
        "oneOf",
        "items",
        "enum",
        "const",
    ]
    .iter()
    .any(|k| result.get(k).is_some());
    let typed_map = result
        .get("additionalProperties")
        .is_some_and(|a| a.is_map() && !a.entries().is_empty());
    if object && !declared && !typed_map {
        let what = if types.is_empty() {
            "says nothing about its shape"
        } else {
            "is an object with no declared properties"
        };
        let at = key_of("type")
            .or_else(|| result.entries().first().map(|(k, _)| k.range))
            .unwrap_or(result.range);
        return Some((
            at,
            what.to_owned(),
            "declare the result's `properties` (and `required`) so every call returns the same fields",
        ));
    }
    None
}

fn is_object(n: &Node) -> bool {
    shape::types(n).contains(&"object")
        || (n.get("type").is_none() && n.get("properties").is_some())
}

/// A property that every branch fixes with a `const` (or one-value `enum`).
fn discriminator(branches: &[Node]) -> Option<&str> {
    let first = branches.first()?;
    first
        .get("properties")?
        .entries()
        .iter()
        .map(|(k, _)| k.name.as_str())
        .find(|name| {
            branches.iter().all(|b| {
                b.get("properties")
                    .and_then(|p| p.get(name))
                    .is_some_and(|p| {
                        p.get("const").is_some()
                            || p.get("enum").is_some_and(|e| e.items().len() == 1)
                    })
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::source::SourceFile;

    fn node(text: &str) -> Node {
        let f = SourceFile::new("t.yaml", text);
        crate::spec::yaml::parse(text, |l, c| f.offset_of(l, c)).unwrap()
    }

    fn msg(text: &str) -> Option<String> {
        problem(&node(text)).map(|(_, m, _)| m)
    }

    #[test]
    fn unstable_shapes() {
        assert_eq!(
            msg("type: [object, string]").as_deref(),
            Some("can have 2 types (object, string)")
        );
        assert_eq!(
            msg("anyOf: [{type: object, properties: {a: {type: string}}}, {type: string}]")
                .as_deref(),
            Some("is an `anyOf` of objects and string")
        );
        assert!(
            msg(
                "oneOf: [{type: object, properties: {a: {}}}, {type: object, properties: {b: {}}}]"
            )
            .is_some()
        );
        assert_eq!(
            msg("type: object").as_deref(),
            Some("is an object with no declared properties")
        );
        assert_eq!(
            msg("description: anything").as_deref(),
            Some("says nothing about its shape")
        );
    }

    #[test]
    fn stable_shapes() {
        assert_eq!(msg("type: object\nproperties: {a: {type: string}}"), None);
        assert_eq!(
            msg(
                "oneOf:\n  - {type: object, properties: {kind: {const: a}}}\n  - {type: object, properties: {kind: {const: b}}}"
            ),
            None
        );
        assert_eq!(
            msg("type: object\nadditionalProperties: {type: string}"),
            None
        );
        assert_eq!(msg("type: array\nitems: {type: string}"), None);
        assert_eq!(msg("type: string"), None);
    }
}
