//! TGE007 process-without-sandbox.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;
use crate::spec::ast::ExecAst;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::ProcessWithoutSandbox,
    severity: Severity::Warning,
    applies: Applies::SpecsOnly,
    purpose: "Finds tools that start a process without naming a sandbox profile.",
    explanation: r#"## What it does
Reports an `exec: {command: ...}` tool with no `sandbox:` key, whatever its effect: the sandbox
is what holds a process to the effect the contract declares. A command run through a shell
(`shell: true`) is called out as worse: every argument becomes shell syntax.

`sandbox: none` is an explicit, reviewable choice and is not reported. Builtin, MCP and handler
tools are not reported either; a sandbox profile applies to processes toolgate starts.

## Why is this bad?
Without a profile the process sees the host as the harness does — only the workspace's protected
files are masked — so it can read every other file the harness can (SSH keys in the home folder,
cloud credentials), write outside the workspace and open network connections, whatever `effect`
says.
A model that passes `--output=/etc/...` or a test that runs `curl | sh` is stopped only by a
sandbox. The chapter's rule: isolate tool execution from the agent process.

## Example
```yaml
name: run_tests
effect: process_execution
exec:
  command: {argv: [cargo, test, "{args.filter}"]}
```

Use instead:
```yaml
name: run_tests
effect: process_execution
sandbox: workspace-write
exec:
  command: {argv: [cargo, test, "{args.filter}"]}
```
"#,
};

/// Reports a command tool without a sandbox profile.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    let t = &tool.spec.value;
    if t.sandbox.is_some() {
        return;
    }
    let Some(exec) = &t.exec else { return };
    let ExecAst::Command(cmd) = &exec.value else {
        return;
    };
    let shell = cmd.shell.as_ref().filter(|s| s.value);
    let argv = &cmd.argv.value;
    let range = match (argv.first(), argv.last()) {
        (Some(first), Some(last)) => first.range.cover(last.range),
        _ => cmd.argv.range,
    };
    let at = tool.span(range);
    match shell {
        Some(s) => {
            ctx.report(
                tool.span(s.range),
                format!("`{}` runs its command through a shell with no sandbox profile", tool.name),
            )
            .label(at, "every argument here becomes shell syntax")
            .help("add `sandbox: workspace-read` or `sandbox: workspace-write` (or a profile from toolgate.yaml), and drop `shell: true` unless the tool needs pipes or globbing");
        }
        None => {
            ctx.report(at, format!("`{}` starts a process with no sandbox profile", tool.name)).help(
                "add `sandbox: workspace-read` (reads only) or `sandbox: workspace-write`, or a profile from toolgate.yaml; write `sandbox: none` to opt out explicitly",
            );
        }
    }
}
