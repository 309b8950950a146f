//! TGN004 parameter-description-missing.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, SchemaNode, SchemaRole, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::naming::words::{self, expand, singular, split_identifier, tokens};
use crate::lint::rules::schema::shape::{self, Position};
use crate::rule::Rule;
use crate::spec::yaml::Node;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::ParameterDescriptionMissing,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds parameters without a description, or whose description only repeats their name.",
    explanation: r#"Smell: none (parameter descriptions; the vague-description smell is about the tool's own description, TGN005).

## What it does
Reports every property in `parameters` — nested object properties included — with no
`description` (a `title` does not count; a `$ref` counts when the referenced schema has one), or
whose description only repeats the parameter's name (`branch_id: "Branch identifier"`).
Result properties, and properties re-stated as constraints in `if`/`then`, `allOf` or untyped
`oneOf`/`anyOf` branches, are not checked. A missing description is not reported where the schema
itself says what the value is: a closed set (`enum`, `const`), a `format` (`uri`, `date-time` …) or
a boolean, whose name is the condition it switches on. A description that only repeats the name is
still reported on them.

## Why is this bad?
The model fills a parameter from its name and description. `path` alone does not say whether the
path is absolute or relative to the workspace, `limit` does not say its unit, `target` does not say
what it is a target of. Each guess the description could have prevented is a failed call.

## Example
```yaml
name: read_file
description: Read a UTF-8 text file in the workspace; returns its numbered lines.
parameters:
  type: object
  properties:
    path: {type: string, maxLength: 4096}
```

Use instead:
```yaml
parameters:
  type: object
  properties:
    path: {type: string, maxLength: 4096, description: "Workspace-relative path, e.g. src/main.rs."}
```
"#,
};

/// Reports a parameter property without a description.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView, node: &SchemaNode) {
    if node.role != SchemaRole::Parameters || shape::position_of(tool, node) != Position::Data {
        return;
    }
    let Some((key, _)) = node.property else {
        return;
    };
    if let Some(d) = node.node.get("description")
        && let Some(text) = d.as_str()
        && repeats_name(&key.name, text)
    {
        ctx.report(
            tool.span(d.range),
            format!("the description of `{}` only repeats its name", key.name),
        )
        .help("say what the value means: its format, unit, allowed range, or an example");
        return;
    }
    if described(node.node) || self_describing(node.node) {
        return;
    }
    if let Some(target) = node
        .node
        .get("$ref")
        .and_then(Node::as_str)
        .and_then(|r| r.strip_prefix('#'))
        && tool
            .parameters()
            .and_then(|p| p.at_pointer(target))
            .is_some_and(described)
    {
        return;
    }
    let path = shape::display_path(&node.pointer);
    ctx.report(
        tool.span(key.range),
        format!("parameter `{path}` has no description"),
    )
    .help("describe what the value means, its format and unit, with an example where it helps");
}

/// Whether the schema states what values mean without prose: the values are listed, their
/// format is named, or the value is a flag.
fn self_describing(n: &Node) -> bool {
    let inner = shape::non_null(n);
    !shape::closed_values(n).is_empty()
        || shape::has_any(n, &["format"])
        || shape::single_type(inner) == Some("boolean")
}

fn described(n: &Node) -> bool {
    n.get("description")
        .and_then(Node::as_str)
        .is_some_and(|d| !d.trim().is_empty())
}

/// Whether every content word of a description is a word of the name.
fn repeats_name(name: &str, desc: &str) -> bool {
    let norm = |w: &str| singular(expand(w)).to_owned();
    let name_words: Vec<String> = split_identifier(name).iter().map(|w| norm(w)).collect();
    let content: Vec<String> = tokens(desc)
        .iter()
        .filter(|w| !words::is_stop_word(w))
        .map(|w| norm(w))
        .collect();
    !content.is_empty() && content.iter().all(|w| name_words.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_repetitions() {
        assert!(repeats_name("branchId", "Branch identifier"));
        assert!(repeats_name("repo", "The repository."));
        assert!(repeats_name("file_path", "Path of the file"));
        assert!(!repeats_name("owner", "Repository owner"));
        assert!(!repeats_name(
            "path",
            "Workspace-relative path, e.g. src/main.rs"
        ));
        assert!(!repeats_name("path", ""));
    }

    fn schema(text: &str) -> Node {
        let f = crate::spec::source::SourceFile::new("t.yaml", text);
        crate::spec::yaml::parse(text, |l, c| f.offset_of(l, c)).expect("test schema parses")
    }

    #[test]
    fn schemas_that_say_what_the_value_is() {
        assert!(self_describing(&schema(
            "{type: string, enum: [asc, desc]}"
        )));
        assert!(self_describing(&schema(
            "{type: string, format: date-time}"
        )));
        assert!(self_describing(&schema("{type: boolean}")));
        assert!(self_describing(&schema("{type: [boolean, \"null\"]}")));
        assert!(!self_describing(&schema("{type: string}")));
        assert!(!self_describing(&schema("{type: integer, minimum: 0}")));
        assert!(!self_describing(&schema(
            "{type: array, items: {type: string}}"
        )));
    }
}
