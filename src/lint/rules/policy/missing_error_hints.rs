//! TGP006 missing-error-hints.

use crate::diagnostic::Severity;
use crate::ir::{Effect, ErrorType};
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::effect::names::{is_path_like, tool_verb};
use crate::rule::Rule;
use crate::spec::ast::ExecAst;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::MissingErrorHints,
    severity: Severity::Info,
    applies: Applies::SpecsOnly,
    purpose: "Finds tools without the error hints that tell the model how to recover from their common failures.",
    explanation: r#"## What it does
Reports a tool (other than a `pure` one) with no `errors` hints at all, and a tool missing the
hints for the failures it is bound to meet:

- file tools — effect `read_only` or `local_write` with a required path parameter (`path`,
  `file_path`, `dir` ...), except ones that create files — need `RESOURCE_NOT_FOUND`;
- tools that run a process — command tools (`exec: command`) and any tool of effect
  `process_execution` — need `PROCESS_ERROR`, and
  `process_execution` tools (whose run time nobody can predict) need `TIMEOUT` too.

## Why is this bad?
The error type tells the model *what* failed; the hint tells it what to do next. "The file
does not exist. Use search_files or glob to find the right path." turns a dead end into one
more call; without it the model guesses paths or gives up. A timed-out test run should suggest
running a narrower filter, not the same command again.

## Example
```yaml
name: read_file
effect: read_only
parameters:
  type: object
  properties: {path: {type: string}}
exec: {builtin: read_file}
```

Use instead:
```yaml
name: read_file
effect: read_only
parameters:
  type: object
  properties: {path: {type: string}}
errors:
  RESOURCE_NOT_FOUND: The file does not exist. Use search_files or glob to find the right path.
exec: {builtin: read_file}
```
"#,
};

/// Reports missing error hints.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    let Some(effect) = tool.effect else { return };
    let t = &tool.spec.value;
    let mut expected: Vec<(ErrorType, &str)> = Vec::new();
    let creates = tool_verb(tool.name)
        .is_some_and(|v| matches!(v.word.as_str(), "create" | "write" | "mkdir" | "save"));
    // A required path is the file the tool acts on; an optional one is usually a filter.
    let has_path = tool
        .properties()
        .iter()
        .any(|(k, _, required)| *required && is_path_like(&k.name));
    if matches!(effect, Effect::ReadOnly | Effect::LocalWrite) && has_path && !creates {
        expected.push((ErrorType::ResourceNotFound, "it takes a path"));
    }
    let runs_process = matches!(t.exec.as_ref().map(|e| &e.value), Some(ExecAst::Command(_)));
    if runs_process || effect == Effect::ProcessExecution {
        expected.push((ErrorType::ProcessError, "it runs a process"));
    }
    if effect == Effect::ProcessExecution {
        expected.push((ErrorType::Timeout, "it runs a process"));
    }
    let written: Vec<&str> = t
        .errors
        .as_ref()
        .map(|e| e.entries().iter().map(|(k, _)| k.name.as_str()).collect())
        .unwrap_or_default();
    let missing: Vec<&(ErrorType, &str)> = expected
        .iter()
        .filter(|(e, _)| !written.contains(&e.as_str()))
        .collect();
    let list = |m: &[&(ErrorType, &str)]| {
        m.iter()
            .map(|(e, _)| format!("`{e}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut reasons: Vec<&str> = missing.iter().map(|(_, why)| *why).collect();
    reasons.dedup();
    let reasons = reasons.join(" and ");
    if written.is_empty() {
        if effect == Effect::Pure && missing.is_empty() {
            return;
        }
        let help = if missing.is_empty() {
            "add `errors:` with a hint for each failure this tool commonly meets, saying what the model should do next".to_owned()
        } else {
            format!(
                "add `errors:` with at least {} ({reasons}), each saying what the model should do next",
                list(&missing)
            )
        };
        ctx.report(
            tool.name_span(),
            format!("`{}` gives the model no error hints", tool.name),
        )
        .help(help);
        return;
    }
    if missing.is_empty() {
        return;
    }
    let first_hint = t
        .errors
        .as_ref()
        .and_then(|e| e.entries().first())
        .map(|(k, _)| tool.span(k.range));
    let d = ctx.report(
        tool.name_span(),
        format!(
            "`{}` has no hint for {} although {reasons}",
            tool.name,
            list(&missing)
        ),
    );
    if let Some(span) = first_hint {
        d.label(span, "the hints it has");
    }
    d.help("say what the model should do next, e.g. `RESOURCE_NOT_FOUND: Use search_files to find the path.` or `TIMEOUT: Run a narrower test filter.`");
}
