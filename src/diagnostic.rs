//! [`Diagnostic`]: one located message about the specs — a load error, a contract error or a
//! lint finding. Every reporter (human, JSON, SARIF, GitHub) renders this one type. A finding may
//! carry a [`Fix`]: text edits on the YAML source (`toolgate lint --fix`, editors' code actions).

use serde::Serialize;

use crate::source::Span;

/// How serious a diagnostic is; ordered so `max` is the most serious.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing.
    Info,
    /// Should be fixed.
    Warning,
    /// Must be fixed: the contract is invalid or dangerous.
    Error,
}

impl Severity {
    /// The spelling in configuration and output.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }

    /// Parses `error`, `warning` (or `warn`), `info`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "error" => Some(Severity::Error),
            "warning" | "warn" => Some(Severity::Warning),
            "info" => Some(Severity::Info),
            _ => None,
        }
    }
}

/// A secondary location with its own message.
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    /// Where.
    pub span: Span,
    /// What is there.
    pub message: String,
}

/// Whether a fix may be applied without a person reading it (ruff's applicability).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Applicability {
    /// Changes what the contract accepts beyond what its own text says; a person decides.
    Unsafe,
    /// Mechanical: declares what the spec already states or implies.
    Safe,
}

/// Replaces the bytes of `span` with `content` (an empty span inserts).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edit {
    /// The range replaced, in the file the span names.
    pub span: Span,
    /// The new text.
    pub content: String,
}

impl Edit {
    /// Inserts `content` at byte `at` of the file of `span`.
    pub fn insert(span_in_file: Span, at: usize, content: impl Into<String>) -> Self {
        Edit {
            span: Span::new(span_in_file.source, at, 0),
            content: content.into(),
        }
    }
}

/// A change that resolves a finding: non-overlapping edits in the finding's file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    /// What the fix does, in a few words ("add `maxItems: 100`").
    pub title: String,
    /// The edits, applied together or not at all.
    pub edits: Vec<Edit>,
    /// Whether `--fix` applies it unasked.
    pub applicability: Applicability,
}

impl Fix {
    /// A safe fix of one edit.
    pub fn safe(title: impl Into<String>, edit: Edit) -> Self {
        Fix {
            title: title.into(),
            edits: vec![edit],
            applicability: Applicability::Safe,
        }
    }

    /// Applies the edits to `text` (the text of the file they refer to); `None` when an edit
    /// falls outside the text, off a character boundary, or overlaps another.
    pub fn apply(&self, text: &str) -> Option<String> {
        let mut edits: Vec<&Edit> = self.edits.iter().collect();
        edits.sort_by_key(|e| (e.span.start, e.span.end));
        let mut out = String::with_capacity(text.len() + 64);
        let mut at = 0usize;
        for e in edits {
            let (start, end) = (e.span.start as usize, e.span.end as usize);
            if start < at || end < start {
                return None;
            }
            out.push_str(text.get(at..start)?);
            out.push_str(&e.content);
            at = end;
        }
        out.push_str(text.get(at..)?);
        Some(out)
    }
}

/// A located message.
#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    /// The rule code (`TGS001`), or `None` for a load error.
    pub code: Option<&'static str>,
    /// How serious.
    pub severity: Severity,
    /// The primary location.
    pub span: Span,
    /// What is wrong, in one sentence.
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
    /// Other relevant locations.
    pub labels: Vec<Label>,
    /// A change to the source that resolves it, when one is mechanical (boxed: most findings
    /// have none, and diagnostics travel in `Result`s).
    pub fix: Option<Box<Fix>>,
}

impl Diagnostic {
    /// A diagnostic without help or secondary labels.
    pub fn new(
        code: Option<&'static str>,
        severity: Severity,
        span: Span,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            code,
            severity,
            span,
            message: message.into(),
            help: None,
            labels: Vec::new(),
            fix: None,
        }
    }

    /// Adds help text.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Adds optional help text.
    pub fn with_help_opt(mut self, help: Option<String>) -> Self {
        self.help = help;
        self
    }

    /// Adds a secondary label.
    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Self {
        self.labels.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    /// Attaches a fix.
    pub fn with_fix(mut self, fix: Option<Fix>) -> Self {
        self.fix = fix.map(Box::new);
        self
    }

    /// Attaches a fix to a diagnostic being built in place.
    pub fn fix(&mut self, fix: Option<Fix>) -> &mut Self {
        self.fix = fix.map(Box::new);
        self
    }

    /// Sets help text on a diagnostic being built in place.
    pub fn help(&mut self, help: impl Into<String>) -> &mut Self {
        self.help = Some(help.into());
        self
    }

    /// Adds a label to a diagnostic being built in place.
    pub fn label(&mut self, span: Span, message: impl Into<String>) -> &mut Self {
        self.labels.push(Label {
            span,
            message: message.into(),
        });
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceId;

    fn edit(start: usize, end: usize, content: &str) -> Edit {
        Edit {
            span: Span::new(SourceId(0), start, end - start),
            content: content.to_owned(),
        }
    }

    #[test]
    fn fixes_apply_their_edits_in_order_and_refuse_overlaps() {
        let fix = |edits| Fix {
            title: String::new(),
            edits,
            applicability: Applicability::Safe,
        };
        assert_eq!(
            fix(vec![edit(5, 5, "!"), edit(0, 1, "J")]).apply("hello"),
            Some("Jello!".to_owned())
        );
        assert_eq!(
            fix(vec![edit(0, 3, "x"), edit(2, 4, "y")]).apply("hello"),
            None
        );
        assert_eq!(fix(vec![edit(4, 9, "x")]).apply("hello"), None);
        // Off a character boundary.
        assert_eq!(fix(vec![edit(1, 1, "x")]).apply("é"), None);
    }
}
