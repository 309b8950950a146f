//! TGS012 delimited-string-list.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, SchemaNode, SchemaRole, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::naming::words::split_identifier;
use crate::lint::rules::schema::prose;
use crate::lint::rules::schema::shape::{self, Position};
use crate::rule::Rule;
use crate::spec::yaml::Node;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::DelimitedStringList,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds string parameters that carry a list (comma-separated, JSON-encoded, or named in the plural).",
    explanation: r#"Smell: missing constraints.

## What it does
Reports string parameters whose description says they hold several values — "comma-separated",
"space-separated", "one per line", "JSON string", "JSON array", "list of …" — or whose name is a
plural of a countable thing (`paths`, `files`, `ids`, `tags`, `names`, `labels`, `keys`, `globs` …).

## Why is this bad?
The model has to format and escape the list itself, which it does inconsistently (spaces after
commas, quotes, trailing separators), and the tool has to parse it back. Validation cannot check
the elements, CEL rules cannot iterate them, and a path containing a comma breaks the format.

## Example
```yaml
name: get_table_schema
description: Describe database tables; returns each table's columns and types.
parameters:
  type: object
  properties:
    table_names: {type: string, description: "A comma-separated list of table names."}
```

Use instead:
```yaml
parameters:
  type: object
  properties:
    table_names:
      type: array
      items: {type: string, maxLength: 128}
      minItems: 1
      maxItems: 20
      description: The tables to describe.
```
"#,
};

/// Plural names of countable things a list parameter holds.
const PLURALS: &[&str] = &[
    "assignees",
    "branches",
    "categories",
    "columns",
    "commits",
    "directories",
    "dirs",
    "domains",
    "emails",
    "extensions",
    "fields",
    "filenames",
    "filepaths",
    "files",
    "folders",
    "globs",
    "headers",
    "hosts",
    "ids",
    "items",
    "keys",
    "labels",
    "links",
    "modules",
    "names",
    "packages",
    "paths",
    "patterns",
    "ports",
    "recipients",
    "reviewers",
    "selectors",
    "tags",
    "topics",
    "uris",
    "urls",
    "usernames",
    "users",
    "values",
];

/// Reports a string that carries a list.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView, node: &SchemaNode) {
    let n = node.node;
    if node.role != SchemaRole::Parameters || shape::position_of(tool, node) == Position::Condition
    {
        return;
    }
    let Some((key, _)) = node.property else {
        return;
    };
    let union_with_string = shape::single_type(n).is_none()
        && ["anyOf", "oneOf"]
            .iter()
            .filter_map(|k| n.get(k))
            .flat_map(Node::items)
            .any(|b| shape::single_type(b) == Some("string"));
    if union_with_string {
        // `anyOf: [string, array]` described as "Deserialized using json.loads": the string
        // branch is the list packed as JSON.
        if let Some((key, _)) = node.property
            && prose::delimited(node.description()) == Some("JSON-encoded")
        {
            ctx.report(
                tool.span(key.range),
                format!("`{}` accepts its value packed as JSON in a string", key.name),
            )
            .help("drop the string form and keep the structured one (`type: array` or `type: object`), so the schema checks every value");
        }
        return;
    }
    if shape::single_type(n) != Some("string") || shape::has_any(n, &["enum", "const", "format"]) {
        return;
    }
    let span = tool.span(key.range);
    let help = "make it `type: array` with `items: {type: string}` and a `maxItems`, so each value is validated on its own";
    // A tool's one parameter, described only by the tool: "Input should be a json string with two
    // keys".
    let only_string = node.depth == 1
        && node.description().is_empty()
        && tool
            .properties()
            .iter()
            .filter(|(_, p, _)| shape::single_type(p) == Some("string"))
            .count()
            == 1;
    let described = if only_string {
        prose::delimited_input(tool.description())
    } else {
        prose::delimited(node.description())
    };
    if let Some(how) = described {
        let (what, help) = match how {
            "a list" => ("a list".to_owned(), help.to_owned()),
            "JSON-encoded" => (
                "JSON".to_owned(),
                "declare the structure in the schema (`type: array` or `type: object` with its items or properties) instead of a JSON string".to_owned(),
            ),
            other => (format!("a {other} list"), help.to_owned()),
        };
        ctx.report(span, format!("`{}` packs {what} into one string", key.name))
            .help(help);
        return;
    }
    if split_identifier(&key.name)
        .last()
        .is_some_and(|w| PLURALS.contains(&w.as_str()))
    {
        ctx.report(
            span,
            format!("`{}` is a single string, but its name is plural", key.name),
        )
        .help(help);
    }
}
