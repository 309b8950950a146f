//! TGS001 multi-action-tool.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::naming::words::{is_stop_word, is_verb, singular, split_identifier};
use crate::lint::rules::schema::{hidden_operations, prose, shape};
use crate::rule::Rule;
use crate::spec::source::Span;
use crate::spec::yaml::{Key, Node};

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::MultiActionTool,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds tools that do several different operations, chosen by a switch parameter, a boolean, a special value, which parameters are set, or a small language.",
    explanation: r#"Smell: multi-action.

## What it does
Finds a tool that performs two or more different operations — different verbs, effects or kinds
of result — and lets each call choose among them:

- **A switch parameter**: a string with an `enum` (or a `oneOf` of `const` values) that is named
  like a switch (`action`, `command`, `method`, `mode`, `operation`, `kind`) or whose values are
  different verbs, or a string named like a switch whose description lists its values
  (`"slice" for simple ranges or "indentation" to expand around a line`). It is reported when its
  values are different operations (`read`, `write`, `delete`), or when other parameters belong to
  some values only: required by an `if`/`then` or a `oneOf` branch keyed by a `const`, described
  so ("Required for `create` command", "only used when mode is …"), an object named after one
  value, or an optional parameter named after one value (`scroll_amount` beside `action: scroll`).
  A switch whose values come from prose is reported only with such per-value parameters.
- **A boolean that turns the call into another operation**: named `dry_run`, `preview`,
  `append`, `restart` (and the like), or described as doing one thing "instead of" or "rather
  than" doing another ("… rather than waiting for a response"), or as sending "input to the
  running process". A string enum of `"true"`/`"false"` counts as a boolean.
- **A special value**: an empty or missing value with its own meaning ("may be empty to poll",
  "empty string to view more logs", "If omitted, the file chooser is cancelled").
- **Which parameters are set**: the description says "Provide `insert_line` to insert …
  Otherwise, …", "When provided, … inserts instead of replacing", "To append, set `start` and
  `end` to -1", or an edit tool "creates the file if it does not exist"; or the tool's
  description offers two ways of doing the task, each with its own optional parameters ("Change
  a record by merging fields (`fields`) or replacing it (`document`)").
- **A dispatcher**: a free string naming the operation (`operation`, `method`, `tool_name`,
  `function`) beside an open object of its arguments (an `object` without `properties`).
- **A small language**: a patch format whose sections add, update, delete or move files, or a
  code parameter whose description spells out five or more functions, one per line
  (`goto(url)`, `click(id)`, …).

What does not count: options that refine one operation (filters, output format, recursion, a
double instead of a single click, "instead of returning it", which is a result that varies:
TGS003), a general interpreter (a shell or Python parameter: TGS002), one operation whose scope
varies.

## Why is this bad?
The model must choose the tool, then the action, then guess which of the other parameters that
action needs: the error space multiplies. Permissions, effects, timeouts and retries can only be
declared per tool, so a tool that both reads and deletes gets the policy of the most dangerous
action — or, worse, of the most common one.

## Example
```yaml
name: file_operation
description: Read, write or delete a file in the workspace.
parameters:
  type: object
  properties:
    action: {type: string, enum: [read, write, delete]}
    path: {type: string}
    content: {type: string, description: Required for `write` action.}
  required: [action, path]
```

Use instead: one tool per action, each with only the parameters it needs and its own effect.
```yaml
name: write_file
description: Write a UTF-8 text file in the workspace, replacing it. Returns the new hash.
effect: local_write
parameters:
  type: object
  properties:
    path: {type: string, maxLength: 4096}
    content: {type: string, maxLength: 1048576}
  required: [path, content]
  additionalProperties: false
```
"#,
};

/// Parameter names that make a parameter a switch.
const SELECTOR_NAMES: &[&str] = &[
    "action",
    "cmd",
    "command",
    "kind",
    "method",
    "mode",
    "op",
    "operation",
    "subcommand",
    "verb",
];
/// Words in a tool name that name no object (`file_operation` is about files).
const GENERIC: &[&str] = &[
    "action",
    "actions",
    "command",
    "commands",
    "manage",
    "multi",
    "op",
    "operation",
    "operations",
    "ops",
    "str",
    "tool",
    "tools",
    "util",
];

/// A parameter that selects what the tool does, with the evidence gathered for it.
pub(crate) struct Switch<'a> {
    /// The selecting parameter.
    pub key: &'a Key,
    /// Its values (from `enum`/`const`, or from prose).
    pub values: Vec<String>,
    /// Whether its values are different operations (different verbs).
    pub operations: bool,
    /// Parameters that belong to some values only: where, and why.
    pub per_value: Vec<(Span, String, String)>,
}

/// The switches among a tool's top-level properties that this rule reports.
pub(crate) fn switches<'a>(tool: &'a ToolView) -> Vec<Switch<'a>> {
    let mut out = Vec::new();
    let Some(params) = tool.parameters() else {
        return out;
    };
    let Some(props) = params.get("properties") else {
        return out;
    };
    let required = shape::required(params);
    for (key, node) in props.entries() {
        if shape::single_type(node).is_some_and(|t| t != "string") {
            continue;
        }
        let name_words = split_identifier(&key.name);
        let named = is_selector_name(&key.name);
        // A switch without an `enum` still lists its values in prose ("\"slice\" for simple
        // ranges or \"indentation\" to ..."); only a parameter named like a switch is read so.
        let mut values = shape::closed_values(node);
        let mut from_prose = false;
        if values.is_empty() && named {
            let desc = node.get("description").and_then(Node::as_str).unwrap_or("");
            values = prose::listed_values(desc, &[]);
            from_prose = true;
        }
        if values.len() < 2 {
            continue;
        }
        let exact = name_words.len() == 1 && named;
        let mut verbs: Vec<String> = Vec::new();
        let mut operations = 0;
        for v in &values {
            if let Some(verb) = first_verb(v) {
                operations += 1;
                if !verbs.contains(&verb) {
                    verbs.push(verb);
                }
            }
        }
        if !named && verbs.len() < 2 {
            continue;
        }
        let mut labels: Vec<(Span, String, String)> = Vec::new();
        for (value, at) in per_value_required(params, &key.name) {
            let names = at
                .items()
                .iter()
                .filter_map(Node::as_str)
                .filter(|n| *n != key.name)
                .collect::<Vec<_>>()
                .join(", ");
            labels.push((
                tool.span(at.extent()),
                names,
                format!("required only when `{}` is `{value}`", key.name),
            ));
        }
        for (other, onode) in props.entries() {
            if other.name == key.name {
                continue;
            }
            // `indentation: {...}` beside `mode` whose values include `indentation`: options
            // that only that value reads.
            if named
                && onode.is_map()
                && shape::single_type(onode) == Some("object")
                && let Some(v) = values.iter().find(|v| v.eq_ignore_ascii_case(&other.name))
            {
                labels.push((
                    tool.span(other.range),
                    other.name.clone(),
                    format!("options of `{}` `{v}` only", key.name),
                ));
                continue;
            }
            if let Some(text) = onode.get("description").and_then(Node::as_str)
                && let Some(v) = values
                    .iter()
                    .find(|v| prose::documents_value(text, v, &key.name, &values))
                && let Some(desc) = onode.get("description")
            {
                labels.push((
                    tool.span(desc.range),
                    other.name.clone(),
                    format!(
                        "only some `{}` values use `{}` (see `{v}`)",
                        key.name, other.name
                    ),
                ));
                continue;
            }
            // `scroll_amount` beside `action: [click, scroll, type]`: a parameter named after
            // one operation (and optional, so the others go without it).
            if named
                && !from_prose
                && !required.contains(&other.name.as_str())
                && let Some(v) = named_after_value(&other.name, &values)
            {
                labels.push((
                    tool.span(other.range),
                    other.name.clone(),
                    format!("named after `{}` `{v}`", key.name),
                ));
            }
        }
        // Values read from prose count only with evidence of parameters that differ by value.
        let switches_operations = named && verbs.len() >= 2 && !from_prose;
        let names_operations = exact && operations >= 3 && !from_prose;
        if !switches_operations && !names_operations && labels.is_empty() {
            continue;
        }
        out.push(Switch {
            key,
            values,
            operations: switches_operations || names_operations,
            per_value: labels,
        });
    }
    out
}

/// The value of a switch that a parameter is named after (`scroll_amount` and `scroll`), when the
/// shared word belongs to some values only.
fn named_after_value<'v>(param: &str, values: &'v [String]) -> Option<&'v String> {
    let words: Vec<String> = split_identifier(param)
        .iter()
        .map(|w| singular(w).to_owned())
        .collect();
    let value_words: Vec<Vec<String>> = values
        .iter()
        .map(|v| {
            split_identifier(v)
                .iter()
                .map(|w| singular(w).to_owned())
                .collect()
        })
        .collect();
    for w in &words {
        if w.len() < 3 || is_stop_word(w) {
            continue;
        }
        let holders: Vec<usize> = value_words
            .iter()
            .enumerate()
            .filter(|(_, vw)| vw.contains(w))
            .map(|(i, _)| i)
            .collect();
        if let Some(&first) = holders.first()
            && holders.len() < values.len()
        {
            return values.get(first);
        }
    }
    None
}

/// Reports switching parameters among the top-level properties, and operations chosen without
/// one: by a boolean, by a special value, by which parameters are set, or in a small language.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    let found = switches(tool);
    for sw in &found {
        let shown = show_values(&sw.values);
        let message = if sw.operations {
            format!(
                "`{}` switches `{}` between {} operations ({shown})",
                sw.key.name,
                tool.name,
                sw.values.len()
            )
        } else {
            format!(
                "`{}` switches `{}` between behaviours that take different parameters ({shown})",
                sw.key.name, tool.name
            )
        };
        let suggestions = suggest_names(tool.name, &sw.values);
        let d = ctx.report(tool.span(sw.key.range), message);
        d.help(format!(
            "split it into one tool per value (e.g. {suggestions}), each with only the parameters and the effect of that operation"
        ));
        for (span, _, msg) in sw.per_value.iter().take(3) {
            d.label(*span, msg.clone());
        }
    }
    if found.is_empty() {
        hidden_operations::check(ctx, tool);
    }
}

/// Whether a parameter is named like a switch (`action`, `mode`, `sub_command`).
pub(crate) fn is_selector_name(name: &str) -> bool {
    split_identifier(name)
        .last()
        .is_some_and(|w| SELECTOR_NAMES.contains(&w.as_str()))
}

/// The first word of a value that is a verb (`get` in `get_comments`, `click` in `left_click`).
fn first_verb(value: &str) -> Option<String> {
    split_identifier(value).into_iter().find(|w| is_verb(w))
}

/// `if: {properties: {p: {const: v}}}, then: {required: [...]}` (at the root or in `allOf`), and
/// `oneOf`/`anyOf` branches keyed by a `const` on `p` with their own `required`.
fn per_value_required<'n>(params: &'n Node, prop: &str) -> Vec<(String, &'n Node)> {
    let mut out = Vec::new();
    let mut conditionals = vec![params];
    if let Some(all) = params.get("allOf") {
        conditionals.extend(all.items());
    }
    for c in conditionals {
        let (Some(cond), Some(then)) = (c.get("if"), c.get("then")) else {
            continue;
        };
        let Some(value) = cond
            .get("properties")
            .and_then(|p| p.get(prop))
            .and_then(const_of)
        else {
            continue;
        };
        if let Some(req) = then.get("required").filter(|r| !r.items().is_empty()) {
            out.push((value, req));
        }
    }
    for key in ["oneOf", "anyOf"] {
        let Some(branches) = params.get(key) else {
            continue;
        };
        for b in branches.items() {
            let Some(value) = b
                .get("properties")
                .and_then(|p| p.get(prop))
                .and_then(const_of)
            else {
                continue;
            };
            if let Some(req) = b.get("required")
                && shape::required(b).iter().any(|r| *r != prop)
            {
                out.push((value, req));
            }
        }
    }
    out
}

fn const_of(n: &Node) -> Option<String> {
    if let Some(c) = n.get("const") {
        return shape::scalar_text(c);
    }
    match n.get("enum").map(Node::items) {
        Some([one]) => shape::scalar_text(one),
        _ => None,
    }
}

fn show_values(values: &[String]) -> String {
    let mut s = values
        .iter()
        .take(8)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if values.len() > 8 {
        s.push_str(", …");
    }
    s
}

/// Tool names for the values: `read_file` for `file_operation(action=read)`,
/// `get_issue_comments` for `issue_read(method=get_comments)`, `list_workflows` for a value that
/// is already a name, else `<tool>_<value>`.
fn suggest_names(tool: &str, values: &[String]) -> String {
    let nouns: Vec<String> = split_identifier(tool)
        .into_iter()
        .filter(|w| {
            let agent_or_participle =
                w.len() > 4 && ["er", "or", "ed", "ing"].iter().any(|s| w.ends_with(s));
            !(is_verb(w) || GENERIC.contains(&w.as_str()) || agent_or_participle)
        })
        .collect();
    // A tool named for its operation (`read_file`) switched by ways of doing it (`slice`):
    // the variants keep the operation's name.
    let tool_is_operation = split_identifier(tool).first().is_some_and(|w| is_verb(w));
    let names: Vec<String> = values
        .iter()
        .take(4)
        .map(|v| {
            let vw = split_identifier(v);
            let Some((first, rest)) = vw.split_first() else {
                return format!("`{tool}`");
            };
            if tool_is_operation && !is_verb(first) {
                return format!("`{tool}_{}`", vw.join("_"));
            }
            let names_object = vw
                .iter()
                .any(|w| nouns.iter().any(|n| n == w || singular(n) == w));
            if is_verb(first)
                && rest.iter().any(|w| !is_verb(w))
                && (names_object || nouns.is_empty())
            {
                return format!("`{}`", vw.join("_"));
            }
            if nouns.is_empty() {
                return format!("`{tool}_{}`", vw.join("_"));
            }
            let mut object = nouns.clone();
            if !crate::words::verbs::lists(first)
                && let Some(last) = object.last_mut()
            {
                *last = singular(last).to_owned();
            }
            let parts: Vec<String> = if is_verb(first) {
                std::iter::once(first.clone())
                    .chain(object)
                    .chain(rest.iter().cloned())
                    .collect()
            } else {
                vw.iter().cloned().chain(object).collect()
            };
            format!("`{}`", parts.join("_"))
        })
        .collect();
    let mut s = names.join(", ");
    if values.len() > 4 {
        s.push_str(", …");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The multi-action rule reads the one verb table: a value's first verb is a table verb that
    /// is not a noun too.
    #[test]
    fn values_are_read_with_the_one_verb_table() {
        for v in crate::words::verbs::all() {
            let value = format!("widget_{}", v.word);
            let expected = (!v.noun_too).then(|| v.word.to_owned());
            assert_eq!(first_verb(&value), expected, "{value}");
        }
    }

    fn vals(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn suggested_names() {
        assert_eq!(
            suggest_names("file_operation", &vals(&["read", "write"])),
            "`read_file`, `write_file`"
        );
        assert_eq!(
            suggest_names("issue_read", &vals(&["get", "get_comments"])),
            "`get_issue`, `get_issue_comments`"
        );
        assert_eq!(
            suggest_names("str_replace_editor", &vals(&["view", "create"])),
            "`str_replace_editor_view`, `str_replace_editor_create`"
        );
        assert_eq!(
            suggest_names("computer", &vals(&["left_click"])),
            "`computer_left_click`"
        );
        assert_eq!(
            suggest_names("browser_tabs", &vals(&["list", "new", "close"])),
            "`list_tabs`, `new_tab`, `close_tab`"
        );
        assert_eq!(
            suggest_names("actions_list", &vals(&["list_workflows"])),
            "`list_workflows`"
        );
        assert_eq!(
            suggest_names("projects_write", &vals(&["add_project_item"])),
            "`add_project_item`"
        );
        assert_eq!(
            suggest_names("read_file", &vals(&["slice", "indentation"])),
            "`read_file_slice`, `read_file_indentation`"
        );
        assert_eq!(
            suggest_names("str_replace_based_edit_tool", &vals(&["view"])),
            "`str_replace_based_edit_tool_view`"
        );
    }

    #[test]
    fn verbs_in_values() {
        assert_eq!(first_verb("get_comments").as_deref(), Some("get"));
        assert_eq!(first_verb("left_click").as_deref(), Some("click"));
        assert_eq!(first_verb("slice"), None);
    }
}
