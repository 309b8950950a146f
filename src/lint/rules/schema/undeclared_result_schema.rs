//! TGS014 undeclared-result-schema.

use crate::diagnostic::Severity;
use crate::lint::codes::Rule;
use crate::lint::context::{ImportFormat, LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::spec::source::{SourceId, Span};

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::UndeclaredResultSchema,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds specs without a `result` schema, and tool lists that could declare result schemas but do not.",
    explanation: r#"Smell: none (an undeclared result is not an unstable one; TGS003 reports those).

## What it does
Reports a toolgate spec without a `result` schema, at its name. For an imported list in a format
that can declare result schemas (MCP's `outputSchema`, Gemini's `response`/`responseJsonSchema`),
reports once per file, at the start of the list rather than at any one tool, the tools that
declare none (all of them, usually), as an info. OpenAI and Anthropic tool lists have no place for
a result schema and are not reported.

Whether a result is *unstable* — its kind changing with the arguments or state — is a different
question, answered by TGS003 from the tools' descriptions and schemas. A list without result
schemas may well return one stable shape per tool; it just does not say which.

## Why is this bad?
Without a declared shape, the runtime cannot validate or normalize what comes back, generated
types fall back to untyped JSON, and clients of an MCP server cannot check `structuredContent`. It
is the MCP norm rather than a defect, so a list gets one info, not a finding per tool.

## Example
```json
{"tools": [
  {"name": "get_status", "description": "Report the build status. Returns the state and the failing jobs.",
   "inputSchema": {"type": "object", "properties": {}}}
]}
```

Use instead:
```json
{"tools": [
  {"name": "get_status", "description": "Report the build status. Returns the state and the failing jobs.",
   "inputSchema": {"type": "object", "properties": {}},
   "outputSchema": {"type": "object", "properties": {"state": {"type": "string"}}, "required": ["state"]}}
]}
```
"#,
};

/// Reports a spec without a `result` schema.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    if tool.is_spec() && tool.spec.value.result.is_none() {
        ctx.report(tool.name_span(), format!("`{}` declares no `result` schema", tool.name))
            .help("add `result:` with one object shape that every outcome fills (status and error fields included)");
    }
}

/// Reports, once per imported list that could declare result schemas, the tools that declare none.
pub(crate) fn check_list(ctx: &mut LintContext, tools: &[ToolView]) {
    let mut files: Vec<(SourceId, usize, Vec<&ToolView>)> = Vec::new();
    for tool in tools {
        let can_declare =
            tool.is_imported_from(ImportFormat::Mcp) || tool.is_imported_from(ImportFormat::Gemini);
        if !can_declare
            || ctx
                .settings
                .ignored_for(Rule::UndeclaredResultSchema, &tool.file.display_path())
        {
            continue;
        }
        let at = match files.iter().position(|(s, _, _)| *s == tool.source) {
            Some(i) => i,
            None => {
                files.push((tool.source, 0, Vec::new()));
                files.len() - 1
            }
        };
        let (_, total, missing) = &mut files[at];
        *total += 1;
        if tool.spec.value.result.is_none() && tool.native.is_none() {
            missing.push(tool);
        }
    }
    for (source, total, missing) in files {
        let Some(first) = missing.first() else {
            continue;
        };
        // What the list lacks, with its article: "an `outputSchema`", "a `response` schema".
        let key = if first.is_imported_from(ImportFormat::Gemini) {
            ("a", "`response` schema")
        } else {
            ("an", "`outputSchema`")
        };
        let mut shown: Vec<String> = missing
            .iter()
            .take(SHOWN)
            .map(|t| format!("`{}`", t.name))
            .collect();
        if missing.len() > SHOWN {
            shown.push(format!("and {} more", missing.len() - SHOWN));
        }
        let (article, what) = key;
        let message = if total == 1 {
            format!(
                "the only tool of this list, `{}`, declares no {what}: nothing pins down the shape of its result",
                first.name
            )
        } else if missing.len() == total {
            format!(
                "no tool of this list declares {article} {what} ({}): nothing pins down the shape of their results",
                shown.join(", ")
            )
        } else {
            let (verb, their) = if missing.len() == 1 {
                ("declares", "its result")
            } else {
                ("declare", "their results")
            };
            format!(
                "{} of {total} tools of this list {verb} no {what} ({}): nothing pins down the shape of {their}",
                missing.len(),
                shown.join(", ")
            )
        };
        // The finding is about the list, so it sits where the list starts, not on one tool.
        let start = first
            .file
            .text
            .find(|c: char| !c.is_whitespace())
            .unwrap_or(0);
        let d = ctx.report(Span::new(source, start, 1), message);
        // A list without result schemas is the MCP norm, not a defect: worth knowing, no more.
        d.severity = d.severity.min(Severity::Info);
        for t in missing.iter().take(SHOWN) {
            d.label(t.name_span(), format!("no {what}"));
        }
        d.help(format!(
            "declare {article} {what} (one object shape, status and error fields included) and return it as structured content, starting with the tools whose results other tools or code consume"
        ));
    }
}

/// How many tools the list finding names and labels.
const SHOWN: usize = 5;
