//! What every lint rule carries: [`RuleMeta`].

use crate::diagnostic::Severity;
pub use crate::rule::Group;
use crate::rule::Rule;

/// Which inputs a rule can judge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applies {
    /// toolgate specs and imported tool lists alike (needs only name, description, schemas).
    Everywhere,
    /// Only toolgate specs: the rule reads toolgate-only keys (permissions, timeout, exec, ...).
    SpecsOnly,
}

/// A rule's identity and documentation.
#[derive(Debug)]
pub struct RuleMeta {
    /// The rule: its code, name and group ([`crate::rule`]).
    pub rule: Rule,
    /// Severity unless configured otherwise.
    pub severity: Severity,
    /// Which inputs it applies to.
    pub applies: Applies,
    /// One sentence: what it finds.
    pub purpose: &'static str,
    /// Markdown: `## What it does`, `## Why is this bad?`, `## Example`, `Use instead:`.
    pub explanation: &'static str,
}

impl RuleMeta {
    /// Stable code, e.g. `TGS001`; never reused.
    pub fn code(&self) -> &'static str {
        self.rule.code()
    }

    /// Kebab-case name of the flagged pattern, e.g. `multi-action-tool`.
    pub fn name(&self) -> &'static str {
        self.rule.name()
    }

    /// The rule's group.
    pub fn group(&self) -> Group {
        self.rule.group()
    }

    /// Whether the rule reports an invalid contract (fixed severity, cannot be suppressed).
    pub fn is_contract(&self) -> bool {
        self.rule.is_contract()
    }

    /// The rule's documentation as `toolgate explain` prints it (Markdown).
    pub fn explain(&self) -> String {
        format!(
            "# {} {}\n\nGroup: {} · default severity: {}{}\n\n{}\n\n{}\n",
            self.code(),
            self.name(),
            self.group().name(),
            self.severity.as_str(),
            if self.is_contract() { " (fixed)" } else { "" },
            self.purpose,
            self.explanation.trim_end()
        )
    }

    /// The documentation URL of the rule.
    pub fn help_uri(&self) -> String {
        format!(
            "https://github.com/toolgate/toolgate/blob/main/docs/rules.md#{}",
            self.code().to_ascii_lowercase()
        )
    }
}
