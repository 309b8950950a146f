//! `toolgate lint`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::check::{self, CheckedProject};
use crate::diagnostic::Severity;
use crate::lint::report::{self, Summary, human};
use crate::spec::import::ImportFormat;
use crate::spec::load::LoadOptions;

/// Output formats.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum FormatArg {
    /// Labelled YAML snippets.
    Human,
    /// A JSON document.
    Json,
    /// SARIF 2.1.0.
    Sarif,
    /// GitHub Actions annotations.
    Github,
}

/// The lowest severity that fails the run.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum FailOn {
    /// Only errors.
    Error,
    /// Warnings and errors.
    Warning,
    /// Any finding.
    Info,
}

/// Tool-list formats for `--from`.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum FromArg {
    /// OpenAI Chat Completions or Responses tools.
    Openai,
    /// Anthropic Messages tools.
    Anthropic,
    /// Gemini function declarations.
    Gemini,
    /// MCP `tools/list`.
    Mcp,
}

/// Arguments of `toolgate lint`.
#[derive(Debug, Args)]
pub struct LintArgs {
    /// Spec files, folders or globs (default: the project's specs, or tool-specs/).
    pub paths: Vec<PathBuf>,
    /// The project file (default: ./toolgate.yaml if present).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: FormatArg,
    /// The lowest severity that makes the exit code 1.
    #[arg(long, value_enum, default_value = "error")]
    pub fail_on: FailOn,
    /// Lint tool lists in a provider's format instead of specs.
    #[arg(long, value_enum)]
    pub from: Option<FromArg>,
}

/// Runs `toolgate lint`.
pub fn run(a: LintArgs) -> miette::Result<u8> {
    let cwd = std::env::current_dir()
        .map_err(|e| miette::miette!("cannot read the current folder: {e}"))?;
    let checked: CheckedProject = match a.from {
        Some(f) => {
            if a.paths.is_empty() {
                return Err(miette::miette!(
                    help = "e.g. `toolgate lint --from mcp tools.json`",
                    "--from needs at least one tool-list file"
                ));
            }
            let format = match f {
                FromArg::Openai => ImportFormat::Openai,
                FromArg::Anthropic => ImportFormat::Anthropic,
                FromArg::Gemini => ImportFormat::Gemini,
                FromArg::Mcp => ImportFormat::Mcp,
            };
            check::check_imported(&a.paths, &cwd, format)
        }
        None => check::check_specs(&LoadOptions {
            paths: a.paths.clone(),
            config: a.config.clone(),
            cwd,
        })
        .map_err(|e| miette::miette!("{e}"))?,
    };
    let diags = &checked.diagnostics;
    let summary = Summary::of(
        diags,
        checked.loaded.files.len(),
        checked.loaded.tool_count(),
    );
    let sources = &checked.loaded.sources;
    let text = match a.format {
        FormatArg::Human => {
            let style = if super::use_color() {
                human::Style::Color
            } else {
                human::Style::Narrated
            };
            human::render(diags, sources, style, summary)
        }
        FormatArg::Json => report::json::render(diags, sources, summary),
        FormatArg::Sarif => report::sarif::render(diags, sources),
        FormatArg::Github => report::github::render(diags, sources),
    };
    super::print(&text)?;
    if checked.has_load_errors() {
        return Ok(super::EXIT_ERROR);
    }
    let threshold = match a.fail_on {
        FailOn::Error => Severity::Error,
        FailOn::Warning => Severity::Warning,
        FailOn::Info => Severity::Info,
    };
    Ok(if diags.iter().any(|d| d.severity >= threshold) {
        super::EXIT_FINDINGS
    } else {
        super::EXIT_OK
    })
}
