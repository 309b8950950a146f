//! TGP012 unreadable-cut-output.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;
use crate::spec::ast::ExecAst;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::UnreadableCutOutput,
    severity: Severity::Warning,
    applies: Applies::SpecsOnly,
    purpose: "Finds toolsets whose tools' output may be cut but that have no tool to read the artifact holding the rest.",
    explanation: r#"## What it does
Reports a toolset in toolgate.yaml that lists a tool whose output the output limits
(`max_bytes`, `max_lines`) may cut — a process (`exec: command`), an upstream MCP tool, an
embedded handler, or a builtin other than `read_file` and `read_artifact`, which page
themselves within the limits — but no tool that reads artifacts (`exec: {builtin:
read_artifact}`).

## Why is this bad?
Whenever the limits cut an output, toolgate keeps the whole of it as an artifact (within the
`budgets`) and the result names it. A model given only this toolset sees the artifact's id and
no way to read it: the failing test at line 4,000 of the log, or the rest of the diff, is out of
reach, and the model either guesses or runs the tool again with the same cut. The chapter's
rule for large results: a summary, a reference, and a way to read more.

`toolgate serve` also offers a connection's artifacts as MCP resources, which the client (not
the model) can read; a toolset served only over MCP to a client that does may ignore this rule.

## Example
```yaml
# toolgate.yaml
toolsets:
  login-timeout:
    tools: [search_files, read_file, apply_patch, run_tests]
```

Use instead:
```yaml
toolsets:
  login-timeout:
    tools: [search_files, read_file, apply_patch, run_tests, read_artifact]
```

## References
- docs/runtime.md, "Results and what the model reads": when output is kept and how it is read.
"#,
};

/// Tools a finding names before it counts the rest.
const MAX_NAMED: usize = 5;

/// Builtins that never produce more than their output limits show: they page themselves.
const SELF_PAGING: &[&str] = &["read_file", "read_artifact"];

/// Whether the output limits may cut what a tool returns.
fn may_be_cut(tool: &ToolView) -> bool {
    match tool.spec.value.exec.as_ref().map(|e| &e.value) {
        Some(ExecAst::Builtin(name)) => !SELF_PAGING.contains(&name.value.as_str()),
        Some(ExecAst::Command(_) | ExecAst::Mcp(_) | ExecAst::Handler(_) | ExecAst::Http(_)) => {
            true
        }
        None => false,
    }
}

/// Whether a tool reads artifacts.
fn reads_artifacts(tool: &ToolView) -> bool {
    matches!(
        tool.spec.value.exec.as_ref().map(|e| &e.value),
        Some(ExecAst::Builtin(name)) if name.value == "read_artifact"
    )
}

/// Reports toolsets with cut output and no reader.
pub(crate) fn check(ctx: &mut LintContext, tools: &[ToolView]) {
    let Some((id, pf)) = ctx.project_file else {
        return;
    };
    let mut found = Vec::new();
    for (name, set) in &pf.toolsets {
        let members: Vec<(&ToolView, crate::spec::source::TextRange)> = set
            .value
            .tools
            .iter()
            .filter_map(|m| {
                tools
                    .iter()
                    .find(|t| t.name == m.value && t.is_spec())
                    .map(|t| (t, m.range))
            })
            .collect();
        if members.iter().any(|(t, _)| reads_artifacts(t)) {
            continue;
        }
        let mut cut: Vec<(&str, crate::spec::source::TextRange)> = members
            .iter()
            .filter(|(t, _)| may_be_cut(t))
            .map(|(t, r)| (t.name, *r))
            .collect();
        let mut seen = std::collections::HashSet::new();
        cut.retain(|(n, _)| seen.insert(*n));
        let Some((_, first)) = cut.first() else {
            continue;
        };
        let range = match (set.value.tools.first(), set.value.tools.last()) {
            (Some(a), Some(b)) => a.range.cover(b.range),
            _ => set.range,
        };
        let names: Vec<String> = cut.iter().map(|(n, _)| format!("`{n}`")).collect();
        found.push((name.clone(), names, range.in_file(id), first.in_file(id)));
    }
    for (name, names, span, first) in found {
        let (list, whose) = match names.as_slice() {
            [one] => (one.clone(), "whose output"),
            many if many.len() > MAX_NAMED => (
                format!(
                    "{} and {} more tools",
                    many[..MAX_NAMED].join(", "),
                    many.len() - MAX_NAMED
                ),
                "whose outputs",
            ),
            [init @ .., last] => (format!("{} and {last}", init.join(", ")), "whose outputs"),
            [] => continue,
        };
        ctx.report(
            span,
            format!(
                "toolset `{name}` lists {list}, {whose} `max_bytes`/`max_lines` may cut, but no tool that reads the artifact holding the rest"
            ),
        )
        .label(first, "its output may be cut")
        .help("add `read_artifact` (exec: {builtin: read_artifact}) to the toolset; a toolset served only over MCP, whose client reads artifacts as resources, may ignore TGP012");
    }
}
