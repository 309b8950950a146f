//! TGN011 deprecated-tool-beside-successor.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::DeprecatedToolBesideSuccessor,
    severity: Severity::Warning,
    applies: Applies::SpecsOnly,
    purpose: "Finds a deprecated tool still listed next to the tool that replaces it.",
    explanation: r#"## What it does
Reports a tool with `deprecated: {use: NEW}` that a toolset of toolgate.yaml lists together with
`NEW`; when the project has no toolsets (every tool is served together), it reports the tool
itself.

## Why is this bad?
The model then reads two tools for one job. It picks between them by their descriptions, keeps
calling the old one out of habit (its name is in earlier turns and in cached prompts), and every
turn pays for both schemas. A deprecation is meant to move callers, not to double the choice.

## Example
```yaml
# cat_file.yaml
name: cat_file
deprecated: {since: 2, use: read_text}
# toolgate.yaml
toolsets:
  coding: {tools: [cat_file, read_text]}
```

Use instead: list only the successor, and keep the old name working as its alias, so models and
recorded sessions that still say `cat_file` reach `read_text`:
```yaml
# read_text.yaml
name: read_text
aliases: [cat_file]
# toolgate.yaml
toolsets:
  coding: {tools: [read_text]}
```
"#,
};

/// Reports deprecated tools listed beside their successors.
pub(crate) fn check(ctx: &mut LintContext, tools: &[ToolView]) {
    for tool in tools {
        let Some(dep) = &tool.spec.value.deprecated else {
            continue;
        };
        let Some(use_) = &dep.value.successor else {
            continue;
        };
        let successor = use_.value.as_str();
        if !tools.iter().any(|t| t.name == successor) {
            // An unknown successor is a contract error (TGK002), reported by resolution.
            continue;
        }
        let help = format!(
            "list only `{successor}`, and give it `aliases: [{}]` so calls by the old name still reach it",
            tool.name
        );
        if ctx.project.toolsets.is_empty() {
            let span = tool.span(use_.range);
            ctx.report(
                span,
                format!(
                    "deprecated tool `{}` is served next to its successor `{successor}` (the project has no toolsets, so every tool is listed)",
                    tool.name
                ),
            )
            .help(help);
            continue;
        }
        let Some((pid, pf)) = ctx.project_file else {
            continue;
        };
        let mut hits = Vec::new();
        for (set, ts) in &pf.toolsets {
            let members = &ts.value.tools;
            if !members.iter().any(|m| m.value == successor) {
                continue;
            }
            if let Some(m) = members.iter().find(|m| m.value == tool.name) {
                hits.push((set.clone(), m.range.in_file(pid)));
            }
        }
        for (set, span) in hits {
            ctx.report(
                span,
                format!(
                    "toolset `{set}` lists deprecated tool `{}` next to its successor `{successor}`",
                    tool.name
                ),
            )
            .help(help.clone());
        }
    }
}
