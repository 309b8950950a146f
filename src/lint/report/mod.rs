//! Reporters: the same diagnostics as human text (miette), JSON, SARIF 2.1.0 or GitHub workflow
//! annotations.

pub mod concise;
pub mod github;
pub mod human;
pub mod json;
pub mod sarif;
pub mod statistics;

use crate::diagnostic::{Diagnostic, Severity};
use crate::spec::source::{LineColumn, SourceMap, Span};

/// An output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Labelled source snippets for people.
    Human,
    /// A JSON document.
    Json,
    /// SARIF 2.1.0 for code scanning.
    Sarif,
    /// GitHub Actions workflow commands.
    Github,
}

impl Format {
    /// Parses `human`, `json`, `sarif`, `github`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "human" => Some(Format::Human),
            "json" => Some(Format::Json),
            "sarif" => Some(Format::Sarif),
            "github" => Some(Format::Github),
            _ => None,
        }
    }
}

/// Counts of diagnostics by severity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    /// Errors.
    pub errors: usize,
    /// Warnings.
    pub warnings: usize,
    /// Infos.
    pub infos: usize,
    /// Files read.
    pub files: usize,
    /// Tools checked.
    pub tools: usize,
}

impl Summary {
    /// Counts diagnostics.
    pub fn of(diags: &[Diagnostic], files: usize, tools: usize) -> Self {
        let mut s = Summary {
            files,
            tools,
            ..Summary::default()
        };
        for d in diags {
            match d.severity {
                Severity::Error => s.errors += 1,
                Severity::Warning => s.warnings += 1,
                Severity::Info => s.infos += 1,
            }
        }
        s
    }
}

/// Start and end (1-based line/column) of a span.
pub(crate) fn positions(
    sources: &SourceMap,
    span: Span,
) -> Option<(String, LineColumn, LineColumn)> {
    let f = sources.get(span.source)?;
    let start = f.line_column(span.start);
    let end = f.line_column(span.end.max(span.start));
    Some((f.display_path(), start, end))
}
