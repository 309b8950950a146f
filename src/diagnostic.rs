//! [`Diagnostic`]: one located message about the specs — a load error, a contract error or a
//! lint finding. Every reporter (human, JSON, SARIF, GitHub) renders this one type.

use serde::Serialize;

use crate::spec::source::Span;

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
