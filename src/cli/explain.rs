//! `toolgate explain ID`.

use clap::Args;

use crate::lint::Rule;

/// Arguments of `toolgate explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A rule code (`TGS001`) or name (`multi-action-tool`), or a change kind of `toolgate
    /// diff` (`TGD001`, `tool-removed`).
    pub rule: String,
}

/// Prints a rule's documentation.
pub fn run(a: ExplainArgs) -> miette::Result<u8> {
    if Rule::find(&a.rule).is_none()
        && let Some(kind) = crate::diff::ChangeKind::find(&a.rule)
    {
        return explain_change(kind);
    }
    let Some(rule) = Rule::find(&a.rule) else {
        return Err(miette::miette!(
            help = crate::lint::config::unknown_rule_help(&a.rule),
            "unknown rule `{}`",
            a.rule
        ));
    };
    super::print(&rule.meta().explain())?;
    Ok(super::EXIT_OK)
}

/// Prints a change kind's documentation: what it reports and its level for each caller.
fn explain_change(kind: crate::diff::ChangeKind) -> miette::Result<u8> {
    let m = kind.meta();
    let text = format!(
        "# {} {}\n\nChange kind of `toolgate diff` · class: {} · models: {} · harness (semver): {} · recorded sessions: {}\n\n{}\n\n{}\n",
        m.id,
        m.name,
        m.class.as_str(),
        m.models.as_str(),
        m.harness.as_str(),
        m.sessions.as_str(),
        m.purpose,
        m.explanation
    );
    super::print(&text)?;
    Ok(super::EXIT_OK)
}
