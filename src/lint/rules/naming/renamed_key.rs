//! TGN012 renamed-key.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::RenamedKey,
    severity: Severity::Warning,
    applies: Applies::SpecsOnly,
    purpose: "Finds a key of toolgate.yaml written in its older spelling.",
    explanation: r#"## What it does
Reports keys that still load but have a newer name: an upstream MCP server's `inherit_env:` (now
`env: {inherit: [...]}`) and its plain `env:` map of `NAME: value` (now `env: {set: {...}}`) — the
spelling command tools use for `exec.command.env`. The message names the new spelling.

## Why is this bad?
One concept with two spellings makes every reader translate: the docs, the editor schema and the
examples show only the new one, and a project mixing both is harder to review.

## Example
```yaml
mcp_servers:
  git:
    command: [python3, -m, mcp_server_git]
    inherit_env: [PATH, HOME]
    env: {GIT_PAGER: cat}
```

Use instead:
```yaml
mcp_servers:
  git:
    command: [python3, -m, mcp_server_git]
    env: {inherit: [PATH, HOME], set: {GIT_PAGER: cat}}
```
"#,
};

pub(crate) fn check(ctx: &mut LintContext, _tools: &[ToolView]) {
    let Some((file, pf)) = ctx.project_file else {
        return;
    };
    for (name, server) in &pf.mcp_servers {
        let s = &server.value;
        if let Some(inherit) = &s.inherit_env {
            let names: Vec<&str> = inherit.value.iter().map(|n| n.value.as_str()).collect();
            ctx.report(
                inherit.range.in_file(file),
                format!("`mcp_servers.{name}.inherit_env` is the older spelling of `env.inherit`"),
            )
            .help(format!(
                "write `env: {{inherit: [{}]}}` (beside `set:` when the server sets variables)",
                names.join(", ")
            ));
        }
        if let Some(env) = s.env.as_ref().filter(|e| e.value.flat) {
            let vars: Vec<&str> = env.value.set.keys().map(String::as_str).collect();
            ctx.report(
                env.range.in_file(file),
                format!(
                    "a plain `env:` map under `mcp_servers.{name}` is the older spelling of `env.set`"
                ),
            )
            .help(format!(
                "write `env: {{set: {{{}}}}}` (beside `inherit:` for variables passed through)",
                vars.iter()
                    .map(|v| format!("{v}: …"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
}
