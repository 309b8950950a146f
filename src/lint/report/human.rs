//! Human output through miette: labelled YAML spans, help, and rule codes. The same boxes
//! with or without colour (the caller decides: a terminal, `NO_COLOR`, `CLICOLOR_FORCE`); the
//! narratable handler's plain sentences, for screen readers, only when asked for.

use std::fmt;

use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, MietteSpanContents,
    NarratableReportHandler, SourceCode, SourceSpan, SpanContents,
};

use crate::diagnostic::{Applicability, Diagnostic, Severity};
use crate::lint::codes::Rule;
use crate::lint::report::Summary;
use crate::spec::source::{SourceFile, SourceMap};

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

/// Lines around which miette draws context, beyond the spans themselves (its default is 1).
const CONTEXT_LINES: usize = 3;

/// The lines of a file that one report draws: its spans and a few lines around them. miette
/// reads its source from the start to find a span's line, so handing it the whole file made
/// each finding cost the file's size, and a file with thousands of findings quadratic.
struct Excerpt {
    name: String,
    text: String,
    /// The excerpt's first line in the file (0-based).
    first_line: usize,
}

impl Excerpt {
    /// The lines of `file` holding `[start, end)` with [`CONTEXT_LINES`] around them, and the
    /// byte offset of the excerpt in the file.
    fn of(file: &SourceFile, start: usize, end: usize) -> (Excerpt, usize) {
        let at = |offset: usize| {
            file.line_column(u32::try_from(offset).unwrap_or(u32::MAX))
                .line
                .saturating_sub(1)
        };
        let first = at(start).saturating_sub(CONTEXT_LINES);
        let last = at(end).saturating_add(CONTEXT_LINES + 1);
        let from = file.offset_of(first + 1, 1).unwrap_or(0);
        let to = file
            .offset_of(last + 1, 1)
            .unwrap_or(file.text.len())
            .clamp(from, file.text.len());
        let text = file.text.get(from..to).unwrap_or_default().to_owned();
        let excerpt = Excerpt {
            name: file.display_path(),
            text,
            first_line: first,
        };
        (excerpt, from)
    }
}

impl SourceCode for Excerpt {
    fn read_span<'a>(
        &'a self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'a> + 'a>, MietteError> {
        let inner = self
            .text
            .read_span(span, context_lines_before, context_lines_after)?;
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            *inner.span(),
            inner.line() + self.first_line,
            inner.column(),
            // miette's own `str` source counts these lines from the start of the text, and
            // merges two labels' snippets by that count: shifted the same way, a report looks
            // exactly as it did when miette read the whole file.
            inner.line_count() + self.first_line,
        )))
    }
}

struct Report<'a> {
    d: &'a Diagnostic,
    source: Excerpt,
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
        // miette draws one file per report; labels in other files are named in the text.
        let here = || d.labels.iter().filter(|l| l.span.source == d.span.source);
        let start = here()
            .map(|l| l.span.start as usize)
            .fold(d.span.start as usize, usize::min);
        let end = here()
            .map(|l| l.span.start as usize + l.span.len())
            .fold(d.span.start as usize + d.span.len(), usize::max);
        let (source, base) = Excerpt::of(file, start, end);
        let local = |at: u32| (at as usize).saturating_sub(base);
        let mut labels = vec![LabeledSpan::new_primary_with_span(
            None,
            (local(d.span.start), d.span.len()),
        )];
        for l in here() {
            labels.push(LabeledSpan::new_with_span(
                Some(l.message.clone()),
                (local(l.span.start), l.span.len()),
            ));
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
        // miette's boxes break on very long lines (a one-line JSON list: its column counter
        // overflows past 65,535 and panics); past a column nobody reads in a box, the finding
        // is drawn as a located line with an excerpt instead.
        let long = std::iter::once(d.span)
            .chain(
                d.labels
                    .iter()
                    .map(|l| l.span)
                    .filter(|sp| sp.source == d.span.source),
            )
            .any(|sp| {
                file.line_column(sp.start).column > LONG_LINE_COLUMN
                    || file.line_column(sp.end.max(sp.start)).column > LONG_LINE_COLUMN
            });
        let report = Report {
            d,
            source,
            labels,
            url: None,
            help,
        };
        let mut s = String::new();
        let rendered = match style {
            _ if long => {
                s = located_line(d, file, report.help.as_deref());
                Ok(())
            }
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

/// The column past which a finding is drawn by [`located_line`] instead of in a miette box.
const LONG_LINE_COLUMN: usize = 1000;

/// Characters of the line shown on each side of a long line's span.
const EXCERPT_CHARS: usize = 60;

/// A finding on a very long line: severity, code and message, `path:line:column`, an excerpt
/// of the line around the span with `…` where it is cut, a caret under the span's start, the
/// labels' positions and the help.
fn located_line(d: &Diagnostic, file: &crate::source::SourceFile, help: Option<&str>) -> String {
    let severity = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "advice",
    };
    let code = d
        .code
        .map(|c| {
            let name = Rule::find(c).map(|r| r.meta().name()).unwrap_or("");
            format!("[{c} {name}] ")
        })
        .unwrap_or_default();
    let at = file.line_column(d.span.start);
    let path = file.display_path();
    let mut s = format!(
        "  {severity}: {code}{}\n  at {path}:{}:{}\n",
        d.message, at.line, at.column
    );
    // The span's line, cut to a window around the span's start.
    let text = &file.text;
    let start = (d.span.start as usize).min(text.len());
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let before: Vec<char> = text[line_start..start].chars().collect();
    let after: String = text[start..line_end].chars().take(EXCERPT_CHARS).collect();
    let shown_before: String = before[before.len().saturating_sub(EXCERPT_CHARS)..]
        .iter()
        .collect();
    let head = if before.len() > EXCERPT_CHARS {
        "…"
    } else {
        ""
    };
    let tail = if text[start..line_end].chars().count() > EXCERPT_CHARS {
        "…"
    } else {
        ""
    };
    let excerpt = format!("{head}{shown_before}{after}{tail}");
    let caret = " ".repeat(head.chars().count() + shown_before.chars().count());
    s.push_str(&format!("   | {excerpt}\n   | {caret}^\n"));
    for l in &d.labels {
        if l.span.source == d.span.source {
            let lc = file.line_column(l.span.start);
            s.push_str(&format!(
                "  note: {} at {path}:{}:{}\n",
                l.message, lc.line, lc.column
            ));
        }
    }
    if let Some(h) = help {
        s.push_str(&format!("  help: {h}\n"));
    }
    s
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
