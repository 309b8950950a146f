//! `toolgate explain ID`.

use clap::Args;

use crate::lint::Rule;

/// Arguments of `toolgate explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// A rule code (`TGS001`) or name (`multi-action-tool`).
    pub rule: String,
}

/// Prints a rule's documentation.
pub fn run(a: ExplainArgs) -> miette::Result<u8> {
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
