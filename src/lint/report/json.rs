//! JSON output: one object per diagnostic with file, 1-based positions, rule and help.

use serde::Serialize;

use crate::diagnostic::{Diagnostic, Severity};
use crate::lint::codes::Rule;
use crate::lint::report::{Summary, positions};
use crate::spec::source::SourceMap;

#[derive(Serialize)]
struct Location {
    file: String,
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
}

#[derive(Serialize)]
struct JsonLabel {
    message: String,
    location: Option<Location>,
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    code: Option<&'a str>,
    rule: Option<&'a str>,
    severity: Severity,
    message: &'a str,
    help: Option<&'a str>,
    location: Option<Location>,
    labels: Vec<JsonLabel>,
}

#[derive(Serialize)]
struct Document<'a> {
    diagnostics: Vec<JsonDiagnostic<'a>>,
    summary: Summary,
}

fn location(sources: &SourceMap, span: crate::spec::source::Span) -> Option<Location> {
    positions(sources, span).map(|(file, s, e)| Location {
        file,
        line: s.line,
        column: s.column,
        end_line: e.line,
        end_column: e.column,
    })
}

/// Renders diagnostics as a JSON document.
pub fn render(diags: &[Diagnostic], sources: &SourceMap, summary: Summary) -> String {
    let doc = Document {
        diagnostics: diags
            .iter()
            .map(|d| JsonDiagnostic {
                code: d.code,
                rule: d.code.and_then(Rule::find).map(|r| r.meta().name()),
                severity: d.severity,
                message: &d.message,
                help: d.help.as_deref(),
                location: location(sources, d.span),
                labels: d
                    .labels
                    .iter()
                    .map(|l| JsonLabel {
                        message: l.message.clone(),
                        location: location(sources, l.span),
                    })
                    .collect(),
            })
            .collect(),
        summary,
    };
    let mut s =
        serde_json::to_string_pretty(&doc).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}
