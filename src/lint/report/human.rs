//! Human output through miette: labelled YAML spans, help, and rule codes. The same boxes
//! with or without colour (the caller decides: a terminal, `NO_COLOR`, `CLICOLOR_FORCE`); the
//! narratable handler's plain sentences, for screen readers, only when asked for.

use std::fmt;

use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, NarratableReportHandler,
};

use crate::diagnostic::{Applicability, Diagnostic, Severity};
use crate::lint::codes::Rule;
use crate::lint::report::Summary;
use crate::spec::source::SourceMap;

/// How to draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// Unicode boxes with colour.
    Color,
    /// Unicode boxes without colour (pipes, logs, snapshots).
    Plain,
    /// Plain sentences a screen reader can follow.
    Narrated,
}

struct Report<'a> {
    d: &'a Diagnostic,
    source: NamedSource<String>,
    labels: Vec<LabeledSpan>,
    url: Option<String>,
    help: Option<String>,
}

impl fmt::Debug for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.d.message)
    }
}

impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.d.message)
    }
}

impl std::error::Error for Report<'_> {}

impl miette::Diagnostic for Report<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        self.d.code.map(|c| {
            let name = Rule::find(c).map(|r| r.meta().name()).unwrap_or("");
            Box::new(format!("{c} {name}")) as Box<dyn fmt::Display>
        })
    }
    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.d.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Info => miette::Severity::Advice,
        })
    }
    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        self.help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }
    fn url<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        self.url
            .as_ref()
            .map(|u| Box::new(u) as Box<dyn fmt::Display>)
    }
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(&self.source)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        Some(Box::new(self.labels.iter().cloned()))
    }
}

/// Renders diagnostics and a summary line.
pub fn render(diags: &[Diagnostic], sources: &SourceMap, style: Style, summary: Summary) -> String {
    let mut out = render_findings(diags, sources, style);
    out.push_str(&summary_line(summary));
    out
}

/// Renders diagnostics, each followed by a blank line.
pub fn render_findings(diags: &[Diagnostic], sources: &SourceMap, style: Style) -> String {
    let mut out = String::new();
    for d in diags {
        let Some(file) = sources.get(d.span.source) else {
            continue;
        };
        let mut labels = vec![LabeledSpan::new_primary_with_span(
            None,
            (d.span.start as usize, d.span.len()),
        )];
        for l in &d.labels {
            // miette draws one file per report; labels in other files are named in the text.
            if l.span.source == d.span.source {
                labels.push(LabeledSpan::new_with_span(
                    Some(l.message.clone()),
                    (l.span.start as usize, l.span.len()),
                ));
            }
        }
        let fix = d.fix.as_ref().map(|f| match f.applicability {
            Applicability::Safe => format!("fix: {} (`toolgate lint --fix`)", f.title),
            Applicability::Unsafe => format!(
                "unsafe fix: {} (a guess to confirm; applied with --unsafe-fixes)",
                f.title
            ),
        });
        let help = match (&d.help, fix) {
            (Some(h), Some(f)) => Some(format!("{h}\n{f}")),
            (h, f) => h.clone().or(f),
        };
        let report = Report {
            d,
            source: NamedSource::new(file.display_path(), file.text.to_string()),
            labels,
            url: None,
            help,
        };
        let mut s = String::new();
        let rendered = match style {
            Style::Narrated => NarratableReportHandler::new().render_report(&mut s, &report),
            Style::Plain => GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor())
                .with_width(100)
                .render_report(&mut s, &report),
            Style::Color => GraphicalReportHandler::new_themed(GraphicalTheme::unicode())
                .with_width(100)
                .render_report(&mut s, &report),
        };
        if rendered.is_err() {
            s = format!("{}: {}\n", file.display_path(), d.message);
        }
        for l in &d.labels {
            if l.span.source != d.span.source
                && let Some((path, lc, _)) = super::positions(sources, l.span)
            {
                s.push_str(&format!(
                    "  note: {} at {path}:{}:{}\n",
                    l.message, lc.line, lc.column
                ));
            }
        }
        out.push_str(&s);
        out.push('\n');
    }
    out
}

/// "2 errors, 1 warning in 3 files (12 tools)".
pub fn summary_line(s: Summary) -> String {
    let plural = |n: usize, w: &str| {
        if n == 1 {
            format!("{n} {w}")
        } else {
            format!("{n} {w}s")
        }
    };
    if s.errors + s.warnings + s.infos == 0 {
        return format!(
            "No findings in {} ({}).\n",
            plural(s.files, "file"),
            plural(s.tools, "tool")
        );
    }
    format!(
        "{}, {}, {} in {} ({}).\n",
        plural(s.errors, "error"),
        plural(s.warnings, "warning"),
        plural(s.infos, "info"),
        plural(s.files, "file"),
        plural(s.tools, "tool"),
    )
}
