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

/// Whether a rule runs by default (ruff's preview tier, for rules not yet precise enough).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// Runs unless turned off.
    Stable,
    /// Runs only when opted in: `--preview` / `lint.preview: true` (all of them), `--select` /
    /// `lint.select` (by code or name), or a `lint.severity` entry naming the rule.
    Preview,
}

impl Tier {
    /// `stable` or `preview`, as `toolgate rules` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Stable => "stable",
            Tier::Preview => "preview",
        }
    }
}

/// Rules in the preview tier: each measured below 0.6 precision against the expert labels of a
/// labelled corpus (docs/lint-corpus.md has the table and the decision rule). Kept in one list,
/// not in each rule's [`RuleMeta`], so that moving a rule between tiers is one reviewed line.
pub const PREVIEW_RULES: &[Rule] = &[
    Rule::EffectVerbMismatch,
    Rule::ParameterDescriptionMissing,
    Rule::UnpaginatedListOutput,
];

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

    /// Whether the rule runs by default ([`Tier::Stable`]) or only when opted in.
    pub fn tier(&self) -> Tier {
        if PREVIEW_RULES.contains(&self.rule) {
            Tier::Preview
        } else {
            Tier::Stable
        }
    }

    /// The rule's documentation as `toolgate explain` prints it (Markdown).
    pub fn explain(&self) -> String {
        format!(
            "# {} {}\n\nGroup: {} · default severity: {}{} · tier: {}\n\n{}\n\n{}\n",
            self.code(),
            self.name(),
            self.group().name(),
            self.severity.as_str(),
            if self.is_contract() { " (fixed)" } else { "" },
            self.tier_note(),
            self.purpose,
            self.explanation.trim_end()
        )
    }

    /// The tier as `explain` and docs/rules.md state it: preview says how to turn it on.
    pub fn tier_note(&self) -> String {
        match self.tier() {
            Tier::Stable => "stable".into(),
            Tier::Preview => format!(
                "preview (off unless opted in: `--preview`, `--select {}` or `lint.preview: true`)",
                self.code()
            ),
        }
    }

    /// The documentation URL of the rule.
    pub fn help_uri(&self) -> String {
        format!(
            "https://github.com/toolgate/toolgate/blob/main/docs/rules.md#{}",
            self.code().to_ascii_lowercase()
        )
    }
}
