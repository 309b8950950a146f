//! TGS005 unpredictable-default.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, SchemaNode, SchemaRole, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::schema::prose::{self, DescribedDefault};
use crate::lint::rules::schema::shape::{self, Position};
use crate::rule::Rule;
use crate::spec::yaml::Node;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::UnpredictableDefault,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds parameter defaults that only prose states, that never apply, that the schema rejects, or that depend on the environment.",
    explanation: r#"Smell: none (a default stated only in prose is not one of the nine smells).

## What it does
For each parameter it checks that the default is a fact of the schema:
- the description says "defaults to X" or "(default: X)" but there is no `default` keyword;
- the description and the `default` keyword disagree;
- a `default` is given for a required parameter (it can never apply);
- the `default` is not valid against the parameter's own schema (wrong type, not in `enum`, out
  of range);
- the default depends on where or when the call runs ("defaults to the current directory",
  "Default: now", "a random id") and no fixed value is given.

## Why is this bad?
The model decides whether to fill a parameter by what happens when it doesn't. A default stated
only in prose is invisible to validation, generated code and documentation; one that depends on the
environment makes the same call do different things in different places, so results cannot be
reproduced or retried safely.

## Example
```yaml
name: list_dir
description: List the entries of a directory; returns names and sizes.
parameters:
  type: object
  properties:
    path: {type: string, description: Directory to list. Defaults to the current working directory.}
    limit: {type: integer, description: Most entries to return (default 100).}
```

Use instead:
```yaml
parameters:
  type: object
  properties:
    path: {type: string, default: ".", description: Workspace-relative directory to list.}
    limit: {type: integer, minimum: 1, maximum: 1000, default: 100, description: Most entries to return.}
```
"#,
};

/// Checks the default of one parameter.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView, node: &SchemaNode) {
    if node.role != SchemaRole::Parameters || shape::position_of(tool, node) == Position::Condition
    {
        return;
    }
    let Some((key, required)) = node.property else {
        return;
    };
    let n = node.node;
    let name = &key.name;
    let desc = n.get("description");
    let desc_span = tool.span(desc.map(|d| d.range).unwrap_or(key.range));
    let described = prose::described_default(node.description());
    if let Some((dkey, default)) = n.entry("default") {
        let at = tool.span(dkey.range.cover(default.range));
        if required {
            ctx.report(
                at,
                format!("`{name}` is required, so its `default` never applies"),
            )
            .help(format!(
                "remove the `default`, or remove `{name}` from `required`"
            ));
        } else if let Some(why) = invalid(n, default) {
            ctx.report(
                at,
                format!("the `default` of `{name}` does not match its own schema: {why}"),
            )
            .help("change the default to a value the schema accepts");
        } else if let Some(DescribedDefault::Literal(lit)) = &described
            && fits(n, &lit.to_json())
            && !same(&lit.to_json(), &default.to_json())
        {
            ctx.report(
                at,
                format!(
                    "the description of `{name}` says it defaults to `{}`, but `default` is `{}`",
                    lit.show(),
                    default.to_json()
                ),
            )
            .label(desc_span, "the description says otherwise")
            .help("make the description and the `default` keyword agree");
        }
        return;
    }
    match described {
        Some(DescribedDefault::Literal(lit)) if fits(n, &lit.to_json()) => {
            ctx.report(desc_span, format!("the description of `{name}` says it defaults to `{}`, but the schema has no `default`", lit.show()))
                .help(format!("add `default: {}` so validation, generated code and the model all see it", lit.to_json()));
        }
        Some(DescribedDefault::Environment(what)) => {
            ctx.report(desc_span, format!("when `{name}` is omitted, its value depends on the environment (\"{what}\")"))
                .help(format!("give `{name}` a fixed `default` (e.g. a workspace-relative path), or make it required"));
        }
        _ => {}
    }
}

/// Why `default` does not validate against the node's own schema.
fn invalid(n: &Node, default: &Node) -> Option<String> {
    let value = default.to_json();
    if value.is_null() && n.get("nullable").and_then(Node::as_bool) == Some(true) {
        return None;
    }
    let mut schema = n.to_json();
    if schema.to_string().contains("\"$ref\"") {
        return None;
    }
    if let Some(o) = schema.as_object_mut() {
        o.remove("default");
        o.remove("nullable");
    }
    let validator = jsonschema::draft202012::new(&schema).ok()?;
    let err = validator.iter_errors(&value).next()?;
    Some(err.masked().to_string())
}

/// Whether a value validates against the node (so a parsed literal is a plausible default).
fn fits(n: &Node, value: &serde_json::Value) -> bool {
    let mut schema = n.to_json();
    if let Some(o) = schema.as_object_mut() {
        o.remove("default");
        o.remove("nullable");
    }
    match jsonschema::draft202012::new(&schema) {
        Ok(v) => v.is_valid(value),
        Err(_) => false,
    }
}

/// Equal as JSON values, with `1` and `1.0` the same.
fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::rules::schema::test_node as node;

    fn invalid_default(text: &str) -> Option<String> {
        let n = node(text);
        let d = n.get("default").unwrap().clone();
        invalid(&n, &d)
    }

    #[test]
    fn defaults_against_their_schema() {
        assert!(invalid_default("{type: integer, default: \"10\"}").is_some());
        assert!(invalid_default("{type: string, enum: [a, b], default: c}").is_some());
        assert!(invalid_default("{type: integer, minimum: 1, default: 0}").is_some());
        assert_eq!(invalid_default("{type: integer, default: 3}"), None);
        assert_eq!(
            invalid_default("{type: integer, nullable: true, default: null}"),
            None
        );
        assert_eq!(
            invalid_default("{anyOf: [{type: string}, {type: \"null\"}], default: null}"),
            None
        );
    }

    #[test]
    fn literals_must_fit() {
        let n = node("{type: string, enum: [left, right]}");
        assert!(fits(&n, &serde_json::json!("left")));
        assert!(!fits(&n, &serde_json::json!("best")));
        assert!(same(&serde_json::json!(1), &serde_json::json!(1.0)));
    }
}
