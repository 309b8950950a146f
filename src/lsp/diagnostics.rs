//! Lint diagnostics as LSP diagnostics: the same range, code and message as `toolgate lint`.

use lsp_types::{DiagnosticRelatedInformation, DiagnosticSeverity, Location, NumberOrString, Uri};

use crate::diagnostic::{Diagnostic, Severity};
use crate::lsp::position;
use crate::spec::source::SourceFile;

/// Converts one diagnostic of `file` (published for `uri`).
pub fn to_lsp(d: &Diagnostic, file: &SourceFile, uri: &Uri) -> lsp_types::Diagnostic {
    let message = match &d.help {
        Some(help) => format!("{}\nhelp: {help}", d.message),
        None => d.message.clone(),
    };
    // Labels in the same file become related information; the editor links them.
    let related: Vec<DiagnosticRelatedInformation> = d
        .labels
        .iter()
        .filter(|l| l.span.source == d.span.source)
        .map(|l| DiagnosticRelatedInformation {
            location: Location {
                uri: uri.clone(),
                range: position::range(file, l.span.start, l.span.end),
            },
            message: l.message.clone(),
        })
        .collect();
    lsp_types::Diagnostic {
        range: position::range(file, d.span.start, d.span.end),
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
            Severity::Info => DiagnosticSeverity::INFORMATION,
        }),
        code: d.code.map(|c| NumberOrString::String(c.to_owned())),
        source: Some("toolgate".to_owned()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        ..Default::default()
    }
}
