//! TGS001's second half: operations chosen without an action parameter — by a patch language or a
//! small language of functions, by a boolean, by a special value, or by which parameters are set.

use crate::lint::context::{LintContext, ToolView};
use crate::lint::rules::effect::names::tool_verb;
use crate::lint::rules::naming::words::split_identifier;
use crate::lint::rules::schema::unstable_result_shape::quote;
use crate::lint::rules::schema::{prose, shape};
use crate::spec::source::Span;
use crate::spec::yaml::Node;

/// Reports an operation chosen without an action parameter.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    let props = tool.properties();
    let desc = tool.description();
    let split_help = "split the operations into tools of their own (or one `action` enum with per-action parameters), so each has its own parameters, effect and result";
    // A patch language whose sections are different file operations.
    for (key, node, _) in &props {
        if shape::single_type(node) != Some("string") {
            continue;
        }
        let pdesc = node.get("description").and_then(Node::as_str).unwrap_or("");
        let ops = prose::patch_operations(&format!("{desc}\n{pdesc}"));
        if props.len() <= 2 && !ops.is_empty() {
            ctx.report(
                tool.span(key.range),
                format!(
                    "`{}` takes a patch language whose sections {} files: one call can do {} different operations",
                    key.name,
                    join_or(&ops),
                    ops.len()
                ),
            )
            .help("offer the operations that lose data (delete, move) as tools of their own with their own effect, or declare the patch's operations as a tagged `oneOf` the schema can check");
            return;
        }
        let functions = prose::listed_functions(pdesc);
        if !functions.is_empty() {
            let mut shown: Vec<String> =
                functions.iter().take(6).map(|f| format!("`{f}`")).collect();
            if functions.len() > 6 {
                shown.push("…".to_owned());
            }
            ctx.report(
                tool.span(key.range),
                format!(
                    "`{}` is a small language of {} operations ({}): the call chooses among them in free text",
                    key.name,
                    functions.len(),
                    shown.join(", ")
                ),
            )
            .help(split_help);
            return;
        }
    }
    // A dispatcher: a free string naming the operation and an open object of its arguments.
    if let Some((op, args)) = dispatcher(&props) {
        ctx.report(
            tool.span(op.range),
            format!(
                "`{}` names the operation to run as free text and `{}` takes its arguments as an open object: `{}` dispatches to any operation",
                op.name, args.name, tool.name
            ),
        )
        .help("offer each operation as a tool of its own with its own parameters, or make the operation an enum with a `oneOf` of argument objects keyed by it");
        return;
    }
    // A boolean (or a "true"/"false" string) that turns the call into another operation.
    for (key, node, _) in &props {
        let values = shape::closed_values(node);
        let boolean = shape::single_type(node) == Some("boolean")
            || (values.len() == 2
                && values
                    .iter()
                    .all(|v| v.eq_ignore_ascii_case("true") || v.eq_ignore_ascii_case("false")));
        if !boolean {
            continue;
        }
        let pdesc = node.get("description").and_then(Node::as_str).unwrap_or("");
        if let Some(evidence) = prose::boolean_switch(&split_identifier(&key.name), pdesc) {
            ctx.report(
                tool.span(key.range),
                format!(
                    "`{}` turns `{}` into another operation (\"{}\")",
                    key.name,
                    tool.name,
                    quote(&evidence)
                ),
            )
            .help(format!(
                "make that operation a tool of its own (e.g. `{}_{}`), with its own effect and result, instead of a flag",
                tool.name,
                split_identifier(&key.name).join("_")
            ));
            return;
        }
    }
    // A value whose absence or emptiness is an operation of its own.
    for (key, node, _) in &props {
        let pdesc = node.get("description").and_then(Node::as_str).unwrap_or("");
        if let Some(evidence) = prose::special_value(pdesc) {
            ctx.report(
                tool.span(key.range),
                format!(
                    "an empty or missing `{}` is another operation of `{}` (\"{}\")",
                    key.name,
                    tool.name,
                    quote(&evidence)
                ),
            )
            .help("give that operation its own tool (e.g. a `poll` or `cancel` tool) instead of a special value");
            return;
        }
    }
    // The description choosing the operation by which parameters are set.
    let names: Vec<&str> = props.iter().map(|(k, _, _)| k.name.as_str()).collect();
    let edits = tool_verb(tool.name).is_some_and(|v| {
        matches!(
            v.word.as_str(),
            "edit" | "modify" | "update" | "patch" | "replace" | "change"
        )
    }) || split_identifier(tool.name)
        .iter()
        .any(|w| matches!(w.as_str(), "editor" | "edit"));
    let mut texts: Vec<(Span, String)> = Vec::new();
    if let Some(d) = &tool.spec.value.description {
        texts.push((tool.span(d.range), d.value.clone()));
    }
    for (_, node, _) in &props {
        if let Some(d) = node.get("description")
            && let Some(t) = d.as_str()
        {
            texts.push((tool.span(d.range), t.to_owned()));
        }
    }
    for (span, text) in texts {
        if let Some(evidence) = prose::presence_switch(&text, &names, edits) {
            ctx.report(
                span,
                format!(
                    "`{}` chooses its operation by which parameters are set (\"{}\")",
                    tool.name,
                    quote(&evidence)
                ),
            )
            .help(split_help);
            return;
        }
    }
    // The description offering two ways of doing the task, each with its own optional
    // parameters ("by replacing text (old_str/new_str) or applying a diff"): the group given
    // chooses the operation, its effect and what it needs.
    let optional: Vec<&str> = props
        .iter()
        .filter(|(_, _, required)| !required)
        .map(|(k, _, _)| k.name.as_str())
        .collect();
    if let Some(d) = &tool.spec.value.description
        && let Some(alt) = prose::alternatives(&d.value, &optional)
            .into_iter()
            .find(|a| a.ways)
    {
        ctx.report(
            tool.span(d.range),
            format!(
                "`{}` does a different operation depending on which optional parameters are given: {} or {}, as its description offers them (\"{}\")",
                tool.name,
                join_group(&alt.left),
                join_group(&alt.right),
                quote(&d.value)
            ),
        )
        .help(split_help);
    }
}

/// A group of parameters as `a`/`b`.
fn join_group(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join("/")
}

/// Last words of a free string that names the operation a dispatcher runs (`tool_name`,
/// `operation`, `method`); `command` is a program (TGS002), not an operation name.
const OPERATION_NAMES: &[&str] = &[
    "action",
    "endpoint",
    "function",
    "method",
    "op",
    "operation",
    "procedure",
    "tool",
];

/// The operation-name string and the open arguments object of a dispatcher, if the tool is one.
fn dispatcher<'k>(
    props: &[(&'k crate::spec::yaml::Key, &Node, bool)],
) -> Option<(&'k crate::spec::yaml::Key, &'k crate::spec::yaml::Key)> {
    let op = props.iter().find_map(|(key, node, _)| {
        let free = shape::single_type(node) == Some("string")
            && !shape::has_any(node, &["enum", "const", "pattern", "format"]);
        let words = split_identifier(&key.name);
        let noun = match words.as_slice() {
            [.., noun, last] if last == "name" || last == "id" => noun.as_str(),
            [.., last] => last.as_str(),
            [] => return None,
        };
        (free && OPERATION_NAMES.contains(&noun)).then_some(*key)
    })?;
    let args = props.iter().find_map(|(key, node, _)| {
        let node = shape::non_null(node);
        let open = shape::single_type(node) == Some("object")
            && node
                .get("properties")
                .is_none_or(|p| p.entries().is_empty())
            && !shape::is_false(node.get("additionalProperties"));
        (open && key.name != op.name).then_some(*key)
    })?;
    Some((op, args))
}

fn join_or(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}
