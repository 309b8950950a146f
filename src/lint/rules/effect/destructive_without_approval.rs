//! TGE002 destructive-without-approval.

use crate::cel::{Bindings, Evaluator, ProblemKind};
use crate::diagnostic::Severity;
use crate::ir::{Decision, Effect};
use crate::lint::codes::Rule;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::spec::resolve::{CelRole, CelSite};
use crate::spec::source::{SourceId, Span};

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::DestructiveWithoutApproval,
    severity: Severity::Error,
    applies: Applies::Everywhere,
    purpose: "Finds destructive tools whose calls can run with no person approving them.",
    explanation: r#"Smell: none (whether a person approves destructive calls; a tool that says it is destructive has its signal — TGE011 reports those that do not).

## What it does
For a spec with `effect: destructive`, works out whether a call can be allowed without anyone
being asked:

- no permission rule asks or denies anything, and the project default for `destructive`
  (`defaults.permissions.destructive` in toolgate.yaml) is `allow`; or
- no rule asks or denies anything, and an `allow` rule matches every call (its condition is
  the constant `true`).

Tools with at least one `ask` or `deny` rule are not reported: someone decided which calls need a
person. For an imported MCP list, tools annotated `destructiveHint: true` (and not read-only)
are reported once per file, as an info: annotating them is all a list can do (it has no way to
require approval), so the finding names the tools whose client must ask a person, and how to make
toolgate ask.

## Why is this bad?
A destructive call cannot be undone. MCP says "there SHOULD always be a human in the loop with
the ability to deny tool invocations"; a model that misreads a task should meet a prompt before
it deletes a branch or a database, not after.

## Example
```yaml
# toolgate.yaml
defaults:
  permissions: {destructive: allow}
# tool-specs/drop_table.yaml
name: drop_table
effect: destructive
```

Use instead:
```yaml
name: drop_table
effect: destructive
permissions:
  rules:
    - id: never-prod
      deny: "args.database == 'prod'"
      reason: Production tables are dropped by migrations only.
    - id: confirm
      ask: "args.database != 'scratch'"
      reason: Dropping a table loses its data.
```
"#,
};

/// Reports destructive spec tools that run unattended, and each imported list's destructive tools.
pub(crate) fn check(ctx: &mut LintContext, tools: &[ToolView]) {
    let mut imported: Vec<(SourceId, Vec<&ToolView>)> = Vec::new();
    for tool in tools {
        if tool.effect != Some(Effect::Destructive)
            || ctx
                .settings
                .ignored_for(Rule::DestructiveWithoutApproval, &tool.file.display_path())
        {
            continue;
        }
        if tool.is_spec() {
            check_spec(ctx, tool);
        } else {
            match imported.iter_mut().find(|(s, _)| *s == tool.source) {
                Some((_, list)) => list.push(tool),
                None => imported.push((tool.source, vec![tool])),
            }
        }
    }
    for (_, list) in imported {
        report_imported(ctx, &list);
    }
}

fn check_spec(ctx: &mut LintContext, tool: &ToolView) {
    let Some(def) = tool.def else { return };
    let rules = tool
        .spec
        .value
        .permissions
        .as_ref()
        .map(|p| p.value.rules.as_slice())
        .unwrap_or(&[]);
    if rules
        .iter()
        .any(|r| r.value.ask.is_some() || r.value.deny.is_some())
    {
        return;
    }
    let effect_span = tool
        .spec
        .value
        .effect
        .as_ref()
        .map(|e| tool.span(e.range))
        .unwrap_or_else(|| tool.name_span());
    if def.permissions.default == Decision::Allow {
        let project_default = project_default_span(ctx);
        let d = ctx.report(
            effect_span,
            format!(
                "`{}` is destructive but every call runs without approval: no rule asks or denies, and the project default for `destructive` is `allow`",
                tool.name
            ),
        );
        if let Some(span) = project_default {
            d.label(span, "the project allows destructive calls by default");
        }
        d.help("add `ask` or `deny` rules for the calls that must not run unattended, or set `defaults.permissions.destructive: ask` in toolgate.yaml");
        return;
    }
    if let Some(site) = tool
        .resolved
        .cel
        .iter()
        .find(|s| is_allow_everything(s, def))
    {
        ctx.report(
            site.span,
            format!("this rule allows every call of destructive tool `{}`, and no rule asks or denies", tool.name),
        )
        .label(effect_span, "declared destructive here")
        .help("remove the allow-all rule so the `ask` default applies, or narrow it to the calls that are safe to run unattended");
    }
}

/// Whether a site is an `allow` rule whose condition is the constant `true`.
fn is_allow_everything(site: &CelSite, def: &crate::ir::ToolDefinition) -> bool {
    if !matches!(site.role, CelRole::Permission(_, Decision::Allow)) {
        return false;
    }
    let constant = site
        .analysis
        .as_ref()
        .is_some_and(|a| a.problems.iter().any(|p| p.kind == ProblemKind::Constant));
    let Some(program) = site.program.as_ref().filter(|_| constant) else {
        return false;
    };
    // A constant expression reads nothing from the call, so evaluating it with empty arguments
    // gives the answer every call gets.
    let args = serde_json::json!({});
    let bindings = Bindings {
        args: &args,
        tool_name: &def.name,
        tool_effect: def.effect.as_str(),
        tool_version: def.version,
        context: crate::ir::project::DEFAULT_CONTEXT,
        workspace: crate::policy::EXAMPLE_WORKSPACE,
    };
    Evaluator::new(&bindings)
        .and_then(|ev| ev.condition(program))
        .unwrap_or(false)
}

/// Where toolgate.yaml sets the `destructive` default, if it does.
fn project_default_span(ctx: &LintContext) -> Option<Span> {
    let (id, pf) = ctx.project_file?;
    let d = pf.defaults.as_ref()?;
    let decision = d.value.permissions.get(&Effect::Destructive)?;
    Some(decision.range.in_file(id))
}

fn report_imported(ctx: &mut LintContext, list: &[&ToolView]) {
    let Some(first) = list.first() else { return };
    let at = first
        .spec
        .value
        .effect
        .as_ref()
        .map(|e| first.span(e.range))
        .unwrap_or_else(|| first.name_span());
    let message = match list.len() {
        1 => format!(
            "`{}` is annotated destructive: the client that calls it must ask a person first, since a tool list cannot require approval",
            first.name
        ),
        n => format!(
            "{n} tools are annotated destructive ({}): the client that calls them must ask a person first, since a tool list cannot require approval",
            names(list)
        ),
    };
    let d = ctx.report(at, message);
    // The list did what it can (it annotated the tools); what is left is a check on the client.
    d.severity = d.severity.min(Severity::Info);
    d.label(first.name_span(), "destructive");
    for t in list.iter().skip(1).take(SHOWN - 1) {
        d.label(t.name_span(), "destructive");
    }
    d.help(
        "check that every client of this server confirms destructive calls with a person; to enforce it, serve the tools through toolgate (`toolgate import --from-mcp SERVER` writes specs that ask before every call)",
    );
}

/// How many tools an imported-list finding names and labels.
const SHOWN: usize = 5;

fn names(list: &[&ToolView]) -> String {
    let mut out: Vec<String> = list
        .iter()
        .take(SHOWN)
        .map(|t| format!("`{}`", t.name))
        .collect();
    if list.len() > SHOWN {
        out.push(format!("and {} more", list.len() - SHOWN));
    }
    out.join(", ")
}
