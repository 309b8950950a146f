//! What every lint rule carries: [`RuleMeta`].

use crate::diagnostic::Severity;

/// The rule groups, each with a code letter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Group {
    /// `TGK`: the contract is invalid; toolgate cannot use it. Not configurable.
    Contract,
    /// `TGS`: argument and result schema design.
    Schema,
    /// `TGN`: names and descriptions.
    Naming,
    /// `TGE`: effect and safety consistency.
    Effect,
    /// `TGP`: runtime policy completeness.
    Policy,
    /// `TGC`: CEL expressions that cannot be checked or bounded.
    Cel,
    /// `TGV`: provider compatibility.
    Provider,
}

impl Group {
    /// Every group.
    pub const ALL: &'static [Group] = &[
        Group::Contract,
        Group::Schema,
        Group::Naming,
        Group::Effect,
        Group::Policy,
        Group::Cel,
        Group::Provider,
    ];

    /// The group's name.
    pub fn name(self) -> &'static str {
        match self {
            Group::Contract => "contract",
            Group::Schema => "schema-design",
            Group::Naming => "naming",
            Group::Effect => "effect-safety",
            Group::Policy => "runtime-policy",
            Group::Cel => "cel",
            Group::Provider => "provider",
        }
    }

    /// The code prefix (`TGS`).
    pub fn prefix(self) -> &'static str {
        match self {
            Group::Contract => "TGK",
            Group::Schema => "TGS",
            Group::Naming => "TGN",
            Group::Effect => "TGE",
            Group::Policy => "TGP",
            Group::Cel => "TGC",
            Group::Provider => "TGV",
        }
    }
}

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
    /// Stable code, e.g. `TGS001`; never reused.
    pub code: &'static str,
    /// Kebab-case name of the flagged pattern, e.g. `multi-action-tool`.
    pub name: &'static str,
    /// Group.
    pub group: Group,
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
    /// Whether the rule reports an invalid contract (fixed severity, cannot be suppressed).
    pub fn is_contract(&self) -> bool {
        self.group == Group::Contract
    }

    /// The rule's documentation as `toolgate explain` prints it (Markdown).
    pub fn explain(&self) -> String {
        format!(
            "# {} {}\n\nGroup: {} · default severity: {}{}\n\n{}\n\n{}\n",
            self.code,
            self.name,
            self.group.name(),
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
            self.code.to_ascii_lowercase()
        )
    }
}
