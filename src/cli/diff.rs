//! `toolgate diff`.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use crate::diff::report::{self, ReportContext};
use crate::diff::{self, Class, DiffOptions, Side, source};
use crate::spec::load::LoadOptions;

/// Output formats.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum FormatArg {
    /// A block per change, with its levels and witness.
    Human,
    /// One line per change.
    Concise,
    /// A JSON document.
    Json,
    /// SARIF 2.1.0.
    Sarif,
    /// GitHub Actions annotations.
    Github,
}

/// Which changes make the exit code 1.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum FailOn {
    /// Changes that break a caller (and missing version bumps).
    Breaking,
    /// Those, and changes that let through what was stopped.
    Widening,
    /// Any change.
    Any,
}

/// Arguments of `toolgate diff`.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// Spec files, folders or globs (default: the project's specs, or tool-specs/), in the
    /// working tree and at a git revision alike.
    pub paths: Vec<PathBuf>,
    /// What to compare against: a git revision (`main`, `HEAD~1`; read from git objects, no
    /// checkout), a project folder, or a bundle.json.
    #[arg(long, default_value = "HEAD")]
    pub against: String,
    /// The project file (default: ./toolgate.yaml if present).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: FormatArg,
    /// Which changes make the exit code 1.
    #[arg(long, value_enum, default_value = "breaking")]
    pub fail_on: FailOn,
    /// A journal (the project's `journal.db`): every call it recorded is decided by both
    /// versions too.
    #[arg(long, value_name = "JOURNAL")]
    pub replay: Option<PathBuf>,
}

/// Runs `toolgate diff`.
pub fn run(a: DiffArgs) -> miette::Result<u8> {
    let cwd = std::env::current_dir()
        .map_err(|e| miette::miette!("cannot read the current folder: {e}"))?;
    let opts = LoadOptions {
        paths: a.paths.clone(),
        config: a.config.clone(),
        cwd: cwd.clone(),
    };
    let old = match read_against(&a.against, &opts, &cwd) {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "{:?}",
                miette::miette!("cannot read the old contracts: {e}")
            );
            return Ok(super::EXIT_ERROR);
        }
    };
    let new = match source::from_specs(&opts, "working tree") {
        Ok(s) => s,
        Err(e) => {
            eprintln!(
                "{:?}",
                miette::miette!(help = "run `toolgate lint` for every finding", "{e}")
            );
            return Ok(super::EXIT_ERROR);
        }
    };
    let replay = match &a.replay {
        Some(path) => match super::journal::recorded_calls(path) {
            Ok(calls) => calls,
            Err(e) => {
                eprintln!(
                    "{:?}",
                    miette::miette!("cannot read the journal {}: {e}", path.display())
                );
                return Ok(super::EXIT_ERROR);
            }
        },
        None => Vec::new(),
    };
    let d = diff::diff(&old.bundle, &new.bundle, &DiffOptions { replay: &replay });
    let mut locations = old.locations.clone();
    locations.extend(new.locations.clone());
    let cx = ReportContext {
        old: &old.label,
        new: &new.label,
        locations: &locations,
    };
    let text = match a.format {
        FormatArg::Human => report::human(&d, &cx),
        FormatArg::Concise => report::concise(&d),
        FormatArg::Json => report::json(&d, &cx),
        FormatArg::Sarif => report::sarif(&d, &cx),
        FormatArg::Github => report::github(&d, &cx),
    };
    super::print(&text)?;
    let fails = match (a.fail_on, d.worst()) {
        (_, None) => false,
        (FailOn::Any, Some(_)) => true,
        (FailOn::Widening, Some(w)) => w >= Class::Widening,
        (FailOn::Breaking, Some(w)) => w == Class::Breaking,
    };
    Ok(if fails {
        super::EXIT_FINDINGS
    } else {
        super::EXIT_OK
    })
}

/// A folder, a bundle.json, or else a git revision.
fn read_against(
    against: &str,
    opts: &LoadOptions,
    cwd: &Path,
) -> Result<Side, source::SourceError> {
    let path = cwd.join(against);
    if path.is_dir() {
        let folder = LoadOptions {
            paths: Vec::new(),
            config: None,
            cwd: path,
        };
        return source::from_specs(&folder, against);
    }
    if path.is_file() {
        return source::from_bundle(&path);
    }
    source::from_git(against, opts)
}
