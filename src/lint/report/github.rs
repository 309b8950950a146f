//! GitHub Actions workflow commands: `::error file=…,line=…::message`, one line each.

use crate::diagnostic::{Diagnostic, Severity};
use crate::lint::codes::Rule;
use crate::lint::report::positions;
use crate::spec::source::SourceMap;

/// Escapes a message (workflow commands are one line).
fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a property value.
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// Renders diagnostics as workflow commands.
pub fn render(diags: &[Diagnostic], sources: &SourceMap) -> String {
    let mut out = String::new();
    for d in diags {
        let level = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        let title = match d.code {
            Some(c) => format!(
                "{c} {}",
                Rule::find(c).map(|r| r.meta().name()).unwrap_or("")
            ),
            None => "load error".to_owned(),
        };
        let mut message = d.message.clone();
        if let Some(h) = &d.help {
            message.push_str("\nhelp: ");
            message.push_str(h);
        }
        match positions(sources, d.span) {
            Some((file, s, e)) => out.push_str(&format!(
                "::{level} file={},line={},col={},endLine={},endColumn={},title={}::{}\n",
                escape_property(&file),
                s.line,
                s.column,
                e.line,
                e.column,
                escape_property(&title),
                escape_data(&message)
            )),
            None => out.push_str(&format!(
                "::{level} title={}::{}\n",
                escape_property(&title),
                escape_data(&message)
            )),
        }
    }
    out
}
