//! TGV005 too-many-tools.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::TooManyTools,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds toolsets that expose more tools at once than a model chooses among well.",
    explanation: r#"## What it does
Counts the tools of each toolset in toolgate.yaml (or, with no toolsets, every tool linted
together — an imported list is one set) and reports a set with more than
`lint.options.max_tools` (default 20). Above 128 the finding is an error whatever the
configured severity: OpenAI rejects requests with more than 128 tools.

## Why is this bad?
Every tool definition costs input tokens on every turn, and choice gets worse as the list
grows: OpenAI advises "fewer than 20 functions available at the start of a turn", Anthropic
warns that "too many tools or overlapping tools can also distract agents". Toolsets per phase
(explore, edit, deploy) keep each list short.

## Example
```yaml
# toolgate.yaml
toolsets:
  everything:
    tools: [read_file, search_files, glob, list_dir, write_file, apply_patch, run_tests, ...]  # 34 tools
```

Use instead:
```yaml
toolsets:
  explore: {tools: [read_file, search_files, glob, list_dir]}
  edit: {tools: [read_file, search_files, apply_patch, write_file, run_tests]}
```
"#,
};

/// OpenAI's hard limit on tools per request.
const OPENAI_MAX_TOOLS: usize = 128;

/// Reports toolsets (or the whole set) above the limit.
pub(crate) fn check(ctx: &mut LintContext, tools: &[ToolView]) {
    let max = ctx.settings.options.max_tools;
    if let Some((id, pf)) = ctx.project_file
        && !pf.toolsets.is_empty()
    {
        let mut found = Vec::new();
        for (name, set) in &pf.toolsets {
            let mut members: Vec<&str> = set.value.tools.iter().map(|t| t.value.as_str()).collect();
            members.sort_unstable();
            members.dedup();
            if members.len() > max {
                let over = set.value.tools.get(max).map(|t| t.range.in_file(id));
                let tools = &set.value.tools;
                let range = match (tools.first(), tools.last()) {
                    (Some(first), Some(last)) => first.range.cover(last.range),
                    _ => set.range,
                };
                found.push((name.clone(), members.len(), range.in_file(id), over));
            }
        }
        for (name, n, span, over) in found {
            let d = ctx.report(
                span,
                format!("toolset `{name}` exposes {n} tools, more than {max}"),
            );
            if let Some(o) = over {
                d.label(o, format!("tool {} of {n}", max + 1));
            }
            finish(d, n);
        }
        return;
    }
    let mut names: Vec<&str> = tools.iter().map(|t| t.name).collect();
    names.sort_unstable();
    names.dedup();
    let n = names.len();
    if n <= max {
        return;
    }
    let Some(over) = tools.get(max) else { return };
    let d = ctx.report(
        over.name_span(),
        format!(
            "{n} tools are exposed together, more than {max}: this is tool {}",
            max + 1
        ),
    );
    finish(d, n);
}

fn finish(d: &mut crate::diagnostic::Diagnostic, n: usize) {
    if n > OPENAI_MAX_TOOLS {
        d.severity = Severity::Error;
        d.help(format!(
            "OpenAI rejects more than {OPENAI_MAX_TOOLS} tools per request: split the tools into toolsets per task or phase"
        ));
    } else {
        d.help("split the tools into toolsets per task or phase in toolgate.yaml, or raise `lint.options.max_tools` if this set is deliberate");
    }
}
