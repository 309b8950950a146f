//! `toolgate lint`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use crate::check::{self, CheckedProject};
use crate::diagnostic::Severity;
use crate::lint::report::{self, Summary, human};
use crate::spec::import::ImportFormat;
use crate::spec::load::LoadOptions;

use super::output::{Stream, full_style};

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormatArg {
    /// Source lines with labels and help (colour on a terminal).
    #[value(alias = "full")]
    Human,
    /// One line per finding: `path:line:col: CODE message`.
    Concise,
    /// Plain sentences a screen reader can follow.
    Narrated,
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
    /// Print how many findings each rule reported instead of the findings (human, concise and
    /// narrated formats).
    #[arg(long)]
    pub statistics: bool,
    /// Print the findings only: no summary line, nothing when there are none.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Runs `toolgate lint`.
pub fn run(a: LintArgs) -> miette::Result<u8> {
    if a.statistics
        && matches!(
            a.format,
            FormatArg::Json | FormatArg::Sarif | FormatArg::Github
        )
    {
        return Err(miette::miette!(
            help = "the JSON report has the counts under `summary`; drop --statistics",
            "--statistics works with --format human, concise or narrated"
        ));
    }
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
        FormatArg::Human | FormatArg::Concise | FormatArg::Narrated => {
            let mut text = if a.statistics {
                report::statistics::render(diags)
            } else {
                match a.format {
                    FormatArg::Concise => report::concise::render(diags, sources),
                    FormatArg::Narrated => {
                        human::render_findings(diags, sources, human::Style::Narrated)
                    }
                    _ => human::render_findings(diags, sources, full_style(Stream::Stdout)),
                }
            };
            if !a.quiet {
                text.push_str(&human::summary_line(summary));
            }
            text
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
