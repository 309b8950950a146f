//! TGP008 unpaginated-list-output.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::effect::names::{VerbClass, is_page_bound, is_search_like, tool_verb};
use crate::lint::rules::naming::words::split_identifier;
use crate::lint::rules::schema::free_form_exec_parameter::executable;
use crate::lint::rules::schema::prose::{self, sentences};
use crate::lint::rules::schema::unstable_result_shape::quote;
use crate::rule::Rule;
use crate::spec::yaml::Node;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::UnpaginatedListOutput,
    severity: Severity::Info,
    applies: Applies::Everywhere,
    purpose: "Finds list, search and read tools whose output nothing bounds: no limit, page, range or size parameter and no stated cap.",
    explanation: r#"Smell: unbounded output.

## What it does
Reports a tool whose output can grow without bound — its name is built around `list`, `search`,
`find`, `grep`, `glob`, `query`, `ls` or `tree`; its `result` is an array or has a list field
(`items`, `results`, `matches` …); or its name or description reads or returns content that grows
with use (a file, a page, a diff, logs, console output, a graph, a map: "Read the entire knowledge
graph", "View the current diff", "Returns all console messages") — when no parameter bounds or
narrows it (`limit`, `max_*`, `page`, `per_page`, `cursor`, `offset`, `head`, `tail`, a line range,
`depth`, `part` …), the description states no cap ("only the first 100 results", "output may be
truncated", "reads are capped"), and the spec (or toolgate.yaml's `defaults.output`) sets no output
limit.

What does not count: free-form exec tools (what a command prints is what the command asks for:
TGS002); a tool that writes (`add_*`, `create_*`), whose output is bounded by its input; metadata,
status and handles (`get_file_info`, a resource link); a listing without parameters, which covers
one fixed scope (the open windows, the folders a server may use) — content read whole without
parameters still counts, since it grows with use.

## Why is this bad?
A search that matches 40,000 lines either floods the context or is cut at an arbitrary byte,
and the model cannot ask for the next part. Anthropic recommends "pagination, range selection,
filtering and truncation with sensible default parameter values"; Smithy flags list operations
without `@paginated`.

## Example
```yaml
name: list_branches
effect: read_only
parameters:
  type: object
  properties: {pattern: {type: string}}
```

Use instead:
```yaml
name: list_branches
effect: read_only
parameters:
  type: object
  properties:
    pattern: {type: string}
    limit: {type: integer, minimum: 1, maximum: 200, default: 50}
    cursor: {type: string, description: The `next_cursor` of the previous page.}
```
"#,
};

/// Field names that hold a result's list.
const LIST_FIELDS: &[&str] = &[
    "items", "results", "matches", "entries", "files", "records", "rows", "hits", "nodes", "list",
    "values", "objects", "paths",
];

/// Whether a result schema is a list, or an object carrying one in a list-named field.
fn returns_list(result: &Node) -> bool {
    let is_array = |n: &Node| match n.get("type") {
        Some(t) => {
            t.as_str() == Some("array") || t.items().iter().any(|i| i.as_str() == Some("array"))
        }
        None => false,
    };
    is_array(result)
        || result.get("properties").is_some_and(|p| {
            p.entries()
                .iter()
                .any(|(k, v)| LIST_FIELDS.contains(&k.name.as_str()) && is_array(v))
        })
}

/// Whether a description says the output is capped ("Only the first 100 results are returned",
/// "Output may be truncated", "returns the top results").
fn states_bound(description: &str) -> bool {
    let d = description.to_lowercase();
    if [
        "truncat",
        "paginat",
        "top results",
        "limited to",
        "capped",
        "clipped",
        "page through",
    ]
    .iter()
    .any(|c| d.contains(c))
    {
        return true;
    }
    // A cue followed closely by a number: "first 100", "at most 50", "up to ~200".
    [
        "first ",
        "top ",
        "up to ",
        "at most ",
        "no more than ",
        "maximum of ",
        "max ",
    ]
    .iter()
    .any(|cue| {
        d.match_indices(cue).any(|(i, _)| {
            d[i + cue.len()..]
                .chars()
                .take(3)
                .any(|c| c.is_ascii_digit())
        })
    })
}

/// Verbs that lead a sentence about reading or returning content.
const READ_VERBS: &[&str] = &[
    "read",
    "reads",
    "get",
    "gets",
    "fetch",
    "fetches",
    "view",
    "views",
    "show",
    "shows",
    "print",
    "prints",
    "return",
    "returns",
    "retrieve",
    "retrieves",
    "load",
    "loads",
    "dump",
    "dumps",
    "display",
    "displays",
    "download",
    "downloads",
    "cat",
];
/// Nouns for content whose size grows with use: files, pages, diffs, logs, graphs.
const CONTENT_NOUNS: &[&str] = &[
    "body", "code", "console", "content", "contents", "diff", "document", "file", "files", "graph",
    "history", "log", "logs", "map", "memory", "messages", "output", "page", "payload", "requests",
    "resource", "snippets", "text", "tree", "webpage", "website",
];
/// Words after a content noun that make it a small handle to the content, not the content.
const HANDLES: &[&str] = &[
    "id",
    "ids",
    "info",
    "link",
    "links",
    "metadata",
    "name",
    "names",
    "path",
    "paths",
    "reference",
    "references",
    "size",
    "status",
    "type",
    "uri",
    "url",
];

/// Words for facts about content rather than the content itself.
const FACTS: &[&str] = &[
    "count",
    "length",
    "number",
    "owner",
    "permissions",
    "schema",
    "time",
    "times",
    "title",
    "titles",
];

/// The sentence of a description that says the tool reads or returns content whose size grows
/// with use ("Read the entire knowledge graph", "View the current diff", "Returns all console
/// messages"), if one does.
fn dumps_content(name: &str, desc: &str) -> Option<String> {
    let mut texts = vec![name.replace(['_', '-', '.'], " ")];
    texts.extend(sentences(desc));
    for (i, s) in texts.iter().enumerate() {
        let l = s.to_ascii_lowercase();
        let toks: Vec<&str> = l
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        let Some(verb_at) = toks.iter().position(|w| READ_VERBS.contains(w)) else {
            // A name built around content read by default (`git_diff`, `activity_log`).
            if i == 0
                && let Some(w) = toks
                    .iter()
                    .find(|w| matches!(**w, "diff" | "log" | "logs" | "tree"))
            {
                return Some(format!(
                    "its name says it returns a {}",
                    w.trim_end_matches('s')
                ));
            }
            continue;
        };
        if [
            "metadata",
            "information about",
            "info about",
            "details about",
            "status",
        ]
        .iter()
        .any(|c| l.contains(c))
        {
            continue;
        }
        // "Get the size and modification time of a file" reads facts about the file, not the file.
        let found = toks.iter().enumerate().skip(verb_at + 1).any(|(j, w)| {
            CONTENT_NOUNS.contains(w)
                && !toks.get(j + 1).is_some_and(|n| HANDLES.contains(n))
                && !toks[verb_at + 1..j]
                    .iter()
                    .any(|b| HANDLES.contains(b) || FACTS.contains(b))
        });
        if found {
            return Some(if i == 0 {
                format!("its name, `{name}`")
            } else {
                format!("\"{}\"", quote(s))
            });
        }
    }
    None
}

/// Whether a parameter bounds or narrows how much comes back: a page bound, a range, a depth, a
/// part.
fn bounds_output(name: &str) -> bool {
    if is_page_bound(name) {
        return true;
    }
    let w = split_identifier(name);
    let has = |x: &str| w.iter().any(|y| y == x);
    has("range")
        || has("depth")
        || has("part")
        || (has("line") && (has("start") || has("end") || has("from") || has("to")))
}

/// Reports a list-returning tool without bounds.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    let t = &tool.spec.value;
    let params = tool.properties();
    // What a command prints is what the command asks for; free-form exec is TGS002's.
    if params
        .iter()
        .any(|(k, n, _)| executable(&k.name, n).is_some())
    {
        return;
    }
    let by_name = is_search_like(tool.name)
        || split_identifier(tool.name)
            .iter()
            .any(|w| matches!(w.as_str(), "tree" | "ls"));
    // A tool that changes things and returns a list returns what it was given: bounded by its input.
    let reads =
        tool_verb(tool.name).is_none_or(|v| matches!(v.class, VerbClass::Read | VerbClass::Other));
    let lists_by_result = reads && t.result.as_ref().is_some_and(returns_list);
    let dumps = if reads {
        dumps_content(tool.name, tool.description())
    } else {
        None
    };
    if !(by_name || lists_by_result || dumps.is_some()) {
        return;
    }
    // Without parameters (or with only one that must be empty) a listing covers one fixed scope
    // (the open windows, the allowed folders); content read whole still grows with use.
    let meaningful = params.iter().any(|(_, n, _)| {
        !n.get("description")
            .and_then(crate::spec::yaml::Node::as_str)
            .is_some_and(prose::fixed_empty)
    });
    if (!meaningful && dumps.is_none())
        || params.iter().any(|(k, _, _)| bounds_output(&k.name))
        || states_bound(tool.description())
    {
        return;
    }
    let own = t.output.as_ref().is_some_and(|o| {
        o.value.max_bytes.is_some()
            || o.value.max_lines.is_some()
            || o.value.artifact_threshold.is_some()
    });
    let project = tool.is_spec()
        && ctx
            .project_file
            .and_then(|(_, pf)| pf.defaults.as_ref())
            .and_then(|d| d.value.output.as_ref())
            .is_some_and(|o| {
                o.value.max_bytes.is_some()
                    || o.value.max_lines.is_some()
                    || o.value.artifact_threshold.is_some()
            });
    if own || project {
        return;
    }
    let what = if by_name {
        "lists or searches".to_owned()
    } else if let Some(evidence) = &dumps {
        format!("returns content whose size grows with use ({evidence})")
    } else {
        "returns a list".to_owned()
    };
    let help = if tool.is_spec() {
        "add a `limit` (with a `default` and a `maximum`) and a `cursor` or `offset` for the next page (for content: a line range or `max_bytes`), or set `output.max_bytes` with an `artifact_threshold` so long results are cut and kept"
    } else {
        "add a `limit` (with a default and a maximum) and a `cursor` or `offset` for the next page — for content, a line range or a size limit — or say in the description where the output is cut"
    };
    ctx.report(
        tool.name_span(),
        format!(
            "`{}` {what} but has no limit, page, range or size parameter and states no cap",
            tool.name
        ),
    )
    .help(help);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stated_bounds() {
        assert!(states_bound("Only the first 100 results are returned."));
        assert!(states_bound(
            "Output may be truncated; use targeted patterns"
        ));
        assert!(states_bound(
            "Performs a web search, returning top results."
        ));
        assert!(states_bound("Returns at most 50 matches."));
        assert!(!states_bound("List files and folders in a given directory"));
        assert!(!states_bound("Call this first to see what is there."));
    }
}
