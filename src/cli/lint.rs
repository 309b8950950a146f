//! `toolgate lint`.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use crate::check::{self, CheckedProject};
use crate::diagnostic::Severity;
use crate::fix;
use crate::lint::RuleSelection;
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
    /// Apply the safe fixes to the spec files (each kept only if the file still loads and no
    /// longer has the finding), then report what is left.
    #[arg(long, conflicts_with = "from")]
    pub fix: bool,
    /// Print the fixes `--fix` would apply as a unified diff; change nothing. Exit 1 when there
    /// is something to fix.
    #[arg(long, conflicts_with_all = ["from", "fix"])]
    pub diff: bool,
    /// With --fix or --diff, apply the unsafe fixes too (guesses a person should confirm, such
    /// as `maxItems: 100` where the description states no count).
    #[arg(long)]
    pub unsafe_fixes: bool,
    /// Run the preview rules too (`toolgate rules` shows each rule's tier); as
    /// `lint.preview: true`.
    #[arg(long)]
    pub preview: bool,
    /// Turn on these rules (codes or names, comma-separated) besides the default ones, preview
    /// rules included; as `lint.select`.
    #[arg(long, value_delimiter = ',', value_name = "RULE")]
    pub select: Vec<String>,
}

/// The `--preview` and `--select` opt-ins; an unknown rule is a usage error.
fn selection(a: &LintArgs) -> miette::Result<RuleSelection> {
    let mut select = Vec::new();
    for key in &a.select {
        let Some(rule) = crate::lint::Rule::find(key.trim()) else {
            return Err(miette::miette!(
                help = crate::lint::config::unknown_rule_help(key.trim()),
                "unknown rule `{}` in --select",
                key.trim()
            ));
        };
        select.push(rule);
    }
    Ok(RuleSelection {
        preview: a.preview,
        select,
    })
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
    let selection = selection(&a)?;
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
            check::check_imported_selecting(&a.paths, &cwd, format, &selection)
        }
        None => {
            let options = LoadOptions {
                paths: a.paths.clone(),
                config: a.config.clone(),
                cwd: cwd.clone(),
            };
            let checked = check::check_specs_selecting(&options, &selection)
                .map_err(|e| miette::miette!("{e}"))?;
            if a.diff {
                return diff(&checked, a.unsafe_fixes);
            }
            if a.fix {
                apply_fixes(&checked, &cwd, a.unsafe_fixes)?;
                // What is left, as the files now are.
                check::check_specs_selecting(&options, &selection)
                    .map_err(|e| miette::miette!("{e}"))?
            } else {
                checked
            }
        }
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

/// `--diff`: the fixes as a unified diff on stdout, a count on stderr.
fn diff(checked: &CheckedProject, include_unsafe: bool) -> miette::Result<u8> {
    let report = fix::fix_project(checked, include_unsafe);
    let text: String = report.files.iter().map(fix::unified_diff).collect();
    super::print(&text)?;
    eprintln!(
        "{} fixable finding(s) in {} file(s){}",
        report.fixed(),
        report.files.len(),
        not_fixed(&report)
    );
    Ok(if report.files.is_empty() {
        super::EXIT_OK
    } else {
        super::EXIT_FINDINGS
    })
}

/// `--fix`: writes the fixed files; says what was fixed on stderr.
fn apply_fixes(checked: &CheckedProject, cwd: &Path, include_unsafe: bool) -> miette::Result<()> {
    let report = fix::fix_project(checked, include_unsafe);
    for f in &report.files {
        let path = cwd.join(&f.path);
        std::fs::write(&path, &f.after)
            .map_err(|e| miette::miette!("cannot write {}: {e}", path.display()))?;
    }
    eprintln!(
        "fixed {} finding(s) in {} file(s){}",
        report.fixed(),
        report.files.len(),
        not_fixed(&report)
    );
    Ok(())
}

fn not_fixed(report: &fix::FixReport) -> String {
    if report.rejected.is_empty() {
        return String::new();
    }
    let codes: std::collections::BTreeSet<&str> =
        report.rejected.iter().map(|(r, _)| r.code).collect();
    format!(
        "; {} fix(es) dropped: the file would not load, would keep the finding, or would get a new error or warning ({})",
        report.rejected.len(),
        codes.into_iter().collect::<Vec<_>>().join(", ")
    )
}
