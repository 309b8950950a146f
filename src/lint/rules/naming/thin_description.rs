//! TGN005 thin-description.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, Group, RuleMeta};
use crate::lint::rules::naming::words::{
    self, expand, singular, split_identifier, tokens, word_count,
};

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    code: "TGN005",
    name: "thin-description",
    group: Group::Naming,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds tool descriptions too short to choose the tool by, and parameter descriptions that only repeat the name.",
    explanation: r#"## What it does
Reports a tool description with fewer words than `lint.options.description_min_words` (8 by
default), and a short one (under 20 words) that neither says what the tool returns nor when to use
it (it has no "returns", "use when", "use this to" …, and does not start with a reading verb such
as "Get" or "List"). It also reports parameter descriptions that only repeat the parameter's name
(`branch_id: "Branch identifier"`).

## Why is this bad?
Models choose between tools by their descriptions. "Create a branch" does not say from what, what
comes back, or why this tool and not `git_checkout`; a description that restates the name adds
tokens and no information.

## Example
```yaml
name: create_branch
description: Create a branch.
parameters:
  type: object
  properties:
    branch_name: {type: string, maxLength: 255, description: Branch name.}
```

Use instead:
```yaml
name: create_branch
description: >-
  Create a new branch from the current HEAD (or from `base`) without switching to it. Use before
  making changes that should not land on the default branch. Returns the new branch's commit.
parameters:
  type: object
  properties:
    branch_name: {type: string, maxLength: 255, description: "Name of the new branch, e.g. fix/login-timeout."}
```
"#,
};

/// Words that say what a tool returns or when to use it.
const WHAT_OR_WHEN: &[&str] = &[
    "output",
    "outputs",
    "result",
    "results",
    "return",
    "returned",
    "returning",
    "returns",
    "use",
    "useful",
    "when",
    "yields",
];
/// First words that make the result obvious: a description starting "List …" says what it returns.
const READING_VERBS: &[&str] = &[
    "analyse",
    "analyze",
    "calculate",
    "calculates",
    "capture",
    "captures",
    "check",
    "checks",
    "compare",
    "compares",
    "compute",
    "computes",
    "convert",
    "converts",
    "count",
    "counts",
    "describe",
    "describes",
    "diff",
    "display",
    "displays",
    "download",
    "downloads",
    "fetch",
    "fetches",
    "find",
    "finds",
    "get",
    "gets",
    "inspect",
    "inspects",
    "list",
    "lists",
    "load",
    "loads",
    "lookup",
    "print",
    "prints",
    "query",
    "queries",
    "read",
    "reads",
    "retrieve",
    "retrieves",
    "search",
    "searches",
    "show",
    "shows",
    "summarize",
    "summarizes",
    "view",
    "views",
];

/// Reports thin tool and parameter descriptions.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    let desc = tool.description();
    if let Some(d) = &tool.spec.value.description
        && !desc.trim().is_empty()
    {
        let n = word_count(desc);
        let min = ctx.settings.options.description_min_words;
        let toks = tokens(desc);
        // The first word that is not an adverb ("Recursively search ...").
        let first = toks
            .iter()
            .map(String::as_str)
            .find(|t| !t.ends_with("ly"))
            .unwrap_or("");
        if n < min {
            ctx.report(tool.span(d.range), format!("the description of `{}` has {n} words (at least {min} expected)", tool.name))
                .help("say what the tool does, when to use it rather than a similar tool, and what it returns");
        } else if n < 20
            && !READING_VERBS.contains(&first)
            && !toks.iter().any(|t| WHAT_OR_WHEN.contains(&t.as_str()))
        {
            ctx.report(
                tool.span(d.range),
                format!(
                    "the description of `{}` says neither what it returns nor when to use it",
                    tool.name
                ),
            )
            .help("add what the tool returns (\"Returns …\") and when to use it (\"Use when …\")");
        }
    }
    let Some(props) = tool.parameters().and_then(|p| p.get("properties")) else {
        return;
    };
    for (key, node) in props.entries() {
        let Some(d) = node.get("description") else {
            continue;
        };
        let Some(text) = d.as_str() else { continue };
        if repeats_name(&key.name, text) {
            ctx.report(
                tool.span(d.range),
                format!("the description of `{}` only repeats its name", key.name),
            )
            .help("say what the value means: its format, unit, allowed range, or an example");
        }
    }
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
}
