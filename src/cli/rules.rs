//! `toolgate rules`.

use clap::{Args, ValueEnum};
use serde::Serialize;

use crate::lint::Rule;

/// Output formats.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum RulesFormat {
    /// A table.
    Text,
    /// JSON.
    Json,
}

/// Arguments of `toolgate rules`.
#[derive(Debug, Args)]
pub struct RulesArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: RulesFormat,
}

#[derive(Serialize)]
struct RuleRow {
    code: &'static str,
    name: &'static str,
    group: &'static str,
    severity: &'static str,
    applies_to_imported_lists: bool,
    purpose: &'static str,
    explanation: &'static str,
}

/// Lists the rules.
pub fn run(a: RulesArgs) -> miette::Result<u8> {
    let text = match a.format {
        RulesFormat::Text => {
            let mut s = String::new();
            for r in Rule::ALL {
                let m = r.meta();
                s.push_str(&format!(
                    "{:<7} {:<34} {:<8} {}\n",
                    m.code(),
                    m.name(),
                    m.severity.as_str(),
                    m.purpose
                ));
            }
            s
        }
        RulesFormat::Json => {
            let rows: Vec<RuleRow> = Rule::ALL
                .iter()
                .map(|r| {
                    let m = r.meta();
                    RuleRow {
                        code: m.code(),
                        name: m.name(),
                        group: m.group().name(),
                        severity: m.severity.as_str(),
                        applies_to_imported_lists: m.applies == crate::lint::Applies::Everywhere,
                        purpose: m.purpose,
                        explanation: m.explanation,
                    }
                })
                .collect();
            serde_json::to_string_pretty(&rows).map_err(|e| miette::miette!("{e}"))? + "\n"
        }
    };
    super::print(&text)?;
    Ok(super::EXIT_OK)
}
