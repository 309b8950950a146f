//! TGS003 unstable-result-shape.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::naming::words::split_identifier;
use crate::lint::rules::schema::{prose, result_kinds, shape};
use crate::rule::Rule;
use crate::spec::source::TextRange;
use crate::spec::yaml::Node;
use crate::words::verbs;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::UnstableResultShape,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds tools whose result changes kind or shape with the arguments or with state.",
    explanation: r#"Smell: unstable result.

## What it does
Reports a tool whose result is not one stable shape, from four kinds of evidence:

- **The result schema** (a spec's `result`, an MCP `outputSchema`) allows several shapes:
  several types (`type: [object, string]`), an `anyOf`/`oneOf` that mixes objects with strings
  or numbers, a union of objects with no `const` property telling them apart, or an object or
  empty schema that declares no properties at all. A declared result schema whose union tags
  each branch (a `const` or `enum` property, as MCP content blocks do with `type`) already says
  which kind came back, so the prose below is not read for it.
- **A selector's values** (a `method`/`action`/`mode` parameter, or a string enum of verb
  phrases) return different kinds: one item (`get`) beside a list (`list`, `get_comments`), or
  lists of different things (`list_runs` beside `list_jobs`), read from each value's verb and
  object with the verb table.
- **The tool's description** says what comes back changes kind: a file's content or a directory
  listing; two kinds of value offered as alternatives after a return verb ("returning output or
  a session ID"); a result "depending on the output type"; results per case ("returns X for …
  or Y for …", "… otherwise Y", two conditional sentences returning different kinds); a job's
  state ("result data when completed", "not yet finished"); a fallback ("falls back to … if no
  results …"); several modes ("in 3 modes"); leaving an identifier out lists everything ("if no
  path is provided, returns a list"); different media each "returned as" its own kind.
- **A parameter's description** changes what comes back: a file name that saves the result
  "instead of returning it" (or "if not provided, … returned as text"), a switch that "returns
  actual log content instead of URLs" or runs the work "in the background", an empty value that
  polls a running process, or an optional identifier that, left out, lists all ("if not
  provided, lists all …") — unless the tool's name already lists.

Descriptions are read sentence by sentence, hard-wrapped lines joined first.

What does not count: a result whose length varies, an error instead of a result (every tool can
fail), "or" between two things of one kind ("the content or the text"), a tool that declares no
result schema at all (that is TGS014, a different and milder finding), and the different results
of a multi-action tool's different actions (TGS001: a read beside changes such as `view` beside
`create`), unless one action itself varies; what a tool reads rather than returns ("reads text
or image files"); and an extra part of the same result (an "include an image" switch).

## Why is this bad?
A tool that sometimes returns a string, sometimes a mapping, sometimes a path to a file and
sometimes a handle makes every consumer branch: the runtime's normalization, the projection the
model reads, generated types and tests. The model cannot plan its next call before it sees which
kind it got. One stable shape — with status and error fields in it — is what makes results
comparable across calls and retries.

## Example
```yaml
name: get_weather
description: Current weather for a city; returns the report, or a message when unknown.
parameters:
  type: object
  properties:
    city: {type: string, maxLength: 100}
    save_to: {type: string, description: Save the report to this file instead of returning it.}
  required: [city]
result:
  type: [object, string]
  properties:
    temperature_c: {type: number}
```

Use instead: one shape for every outcome, and saving left to another tool.
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

/// Reports unstable result schemas and descriptions that say the result changes kind.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    if let Some(result) = &tool.spec.value.result
        && let Some((at, message, help)) = problem(result)
    {
        ctx.report(
            tool.span(at),
            format!("the result of `{}` {message}", tool.name),
        )
        .help(help);
        return;
    }
    if let Some(sw) = result_kinds::kind_switch(tool) {
        let [(a, a_kind), (b, b_kind)] = &sw.examples;
        ctx.report(
            tool.span(sw.key.range),
            format!(
                "`{}` chooses what kind of result `{}` returns: `{a}` returns {a_kind}, `{b}` {b_kind}",
                sw.key.name, tool.name
            ),
        )
        .help("split the tool per kind of result, or declare one result object tagged by `kind` whose fields cover every value");
        return;
    }
    // A declared result schema that tags its variants already says which kind came back.
    if tool.spec.value.result.as_ref().is_some_and(tags_variants) {
        return;
    }
    // A tool named for listing returns a list whether or not a filter is left out.
    let lists_anyway = split_identifier(tool.name)
        .first()
        .is_some_and(|w| verbs::lists(w));
    if let Some(d) = &tool.spec.value.description
        && let Some((sentence, how)) = prose::result_varies_in_description(&d.value)
        && !(lists_anyway && how == prose::Variation::OneOrMany)
    {
        ctx.report(
            tool.span(d.range),
            format!(
                "the result of `{}` changes kind, {}: \"{}\"",
                tool.name,
                how.what(),
                quote(&sentence)
            ),
        )
        .help(how.fix());
        return;
    }
    for (key, node, required) in tool.properties() {
        let Some(desc) = node.get("description").and_then(Node::as_str) else {
            continue;
        };
        let boolean = shape::single_type(node) == Some("boolean");
        let optional = !required && !lists_anyway;
        let found = prose::result_varies_by_parameter(desc, boolean).or_else(|| {
            optional
                .then(|| prose::result_varies_when_omitted(desc))
                .flatten()
        });
        if let Some((sentence, how)) = found {
            ctx.report(
                tool.span(key.range),
                format!(
                    "`{}` changes what `{}` returns, {}: \"{}\"",
                    key.name,
                    tool.name,
                    how.what(),
                    quote(&sentence)
                ),
            )
            .help(how.fix());
            return;
        }
    }
}

/// A sentence short enough to quote in a message.
pub(crate) fn quote(sentence: &str) -> String {
    let one_line = sentence.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= 160 {
        return one_line;
    }
    let cut: String = one_line.chars().take(157).collect();
    format!("{cut}…")
}

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

/// Whether a result schema tells its variants apart with a tag: a union (at the top, or in a
/// property or array items, a few levels down) whose object branches each fix a property with
/// `const` or `enum`, as MCP's content blocks do with `type`.
fn tags_variants(result: &Node) -> bool {
    fn walk(n: &Node, depth: usize) -> bool {
        if depth > 4 {
            return false;
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(union) = n.get(key) {
                let branches = union.items();
                let tagged = branches.len() >= 2
                    && branches.iter().all(|b| {
                        b.get("properties").is_some_and(|p| {
                            p.entries()
                                .iter()
                                .any(|(_, v)| v.get("const").is_some() || v.get("enum").is_some())
                        })
                    });
                if tagged {
                    return true;
                }
            }
        }
        let props: &[(_, Node)] = n.get("properties").map(Node::entries).unwrap_or_default();
        props.iter().any(|(_, v)| walk(v, depth + 1))
            || n.get("items").is_some_and(|i| walk(i, depth + 1))
    }
    walk(result, 0)
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
    use crate::lint::rules::schema::test_node as node;

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
