//! TGP008 unpaginated-list-output.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, Group, RuleMeta};
use crate::lint::rules::effect::names::{VerbClass, is_page_bound, is_search_like, tool_verb};
use crate::spec::yaml::Node;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    code: "TGP008",
    name: "unpaginated-list-output",
    group: Group::Policy,
    severity: Severity::Info,
    applies: Applies::Everywhere,
    purpose: "Finds list and search tools whose results cannot be bounded or paged.",
    explanation: r#"## What it does
Reports a tool that returns a list — its name is built around `list`, `search`, `find`,
`grep`, `glob` or `query`, or its `result` is an array or has a list field (`items`,
`results`, `matches`, `entries` ...) — when no parameter bounds or pages it (`limit`,
`max_*`, `page`, `per_page`, `cursor`, `offset`, `head` ...), the description states no cap
("only the first 100 results", "output may be truncated"), and the spec (or toolgate.yaml's
`defaults.output`) sets no output limit. A result list is not enough on its own for a tool that
writes (`add_*`, `create_*`): what it returns is bounded by what it was given. Tools without
parameters are not reported: they list one fixed scope (the open windows, the folders a server
may use), and whether that can grow large is not visible in the contract.

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
    if ["truncat", "paginat", "top results", "limited to"]
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

/// Reports a list-returning tool without bounds.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    let t = &tool.spec.value;
    let by_name = is_search_like(tool.name);
    // A tool that changes things and returns a list returns what it was given: bounded by its input.
    let reads =
        tool_verb(tool.name).is_none_or(|v| matches!(v.class, VerbClass::Read | VerbClass::Other));
    let lists_by_result = reads && t.result.as_ref().is_some_and(returns_list);
    if !(by_name || lists_by_result) {
        return;
    }
    let params = tool.properties();
    // Without parameters a tool lists one fixed scope (the open windows, the allowed folders).
    if params.is_empty()
        || params.iter().any(|(k, _, _)| is_page_bound(&k.name))
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
        "lists or searches"
    } else {
        "returns a list"
    };
    let help = if tool.is_spec() {
        "add a `limit` (with a `default` and a `maximum`) and a `cursor` or `offset` for the next page, or set `output.max_bytes` with an `artifact_threshold` so long results are cut and kept"
    } else {
        "add a `limit` (with a default and a maximum) and a `cursor` or `offset` parameter for the next page"
    };
    ctx.report(
        tool.name_span(),
        format!(
            "`{}` {what} but has no limit, page or cursor parameter",
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
