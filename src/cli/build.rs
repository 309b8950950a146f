//! `toolgate build` and the loading step it shares with `toolgate export`.

use std::path::PathBuf;

use clap::Args;

use crate::check::{self, CheckedProject};
use crate::emit::rust::{RustOptions, ToolgateDependency};
use crate::emit::{self, BuildOptions, GeminiForm, ListOptions};
use crate::ir::Bundle;
use crate::spec::load::LoadOptions;

/// The output folder when `--out` is not given, relative to the project folder.
pub const DEFAULT_OUT: &str = "build/toolgate";

/// Arguments of `toolgate build`.
#[derive(Debug, Args)]
pub struct BuildArgs {
    /// Spec files, folders or globs (default: the project's specs, or tool-specs/).
    pub paths: Vec<PathBuf>,
    /// The project file (default: ./toolgate.yaml if present).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The output folder (default: build/toolgate in the project folder).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Write nothing; exit 1 with a diff when the output folder is not up to date.
    #[arg(long)]
    pub check: bool,
    /// The generated crate's package name.
    #[arg(long, default_value = "toolgate-tools")]
    pub crate_name: String,
    /// The toolgate source tree the generated crate depends on, as cargo resolves it from
    /// `<out>/rust` (default: this toolgate's source tree, relative to there, while it exists;
    /// else this toolgate's version from the registry).
    #[arg(long, conflicts_with = "toolgate_version")]
    pub toolgate_path: Option<String>,
    /// Depend on toolgate from the registry with this version requirement instead of a path.
    #[arg(long)]
    pub toolgate_version: Option<String>,
    /// Skip the generated crate (`rust/`).
    #[arg(long)]
    pub no_rust: bool,
    /// How Gemini declarations carry parameters: `json-schema` (parametersJsonSchema) or
    /// `openapi` (the OpenAPI-subset `parameters`).
    #[arg(long, default_value = "json-schema", value_parser = ["json-schema", "openapi"])]
    pub gemini_form: String,
}

/// Loads and lints; on errors prints the findings the way `toolgate lint` does and returns the
/// exit code to stop with.
pub(crate) fn load_bundle(
    paths: &[PathBuf],
    config: &Option<PathBuf>,
) -> miette::Result<Result<(CheckedProject, Bundle), u8>> {
    let cwd = std::env::current_dir()
        .map_err(|e| miette::miette!("cannot read the current folder: {e}"))?;
    let checked = match check::check_specs(&LoadOptions {
        paths: paths.to_vec(),
        config: config.clone(),
        cwd,
    }) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return Ok(Err(super::EXIT_ERROR));
        }
    };
    let bundle = checked.bundle();
    match bundle {
        Some(b) if !checked.has_load_errors() => Ok(Ok((checked, b))),
        _ => {
            let text = super::output::findings(&checked, super::output::Stream::Stderr);
            eprint!("{text}");
            eprintln!("build stopped: fix the errors above (or run `toolgate lint`).");
            Ok(Err(if checked.has_load_errors() {
                super::EXIT_ERROR
            } else {
                super::EXIT_FINDINGS
            }))
        }
    }
}

/// Runs `toolgate build`.
pub fn run(a: BuildArgs) -> miette::Result<u8> {
    let (checked, bundle) = match load_bundle(&a.paths, &a.config)? {
        Ok(x) => x,
        Err(code) => return Ok(code),
    };
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| checked.loaded.root.join(DEFAULT_OUT));
    let mut lists = ListOptions::for_project(&bundle.project);
    lists.gemini_form = GeminiForm::parse(&a.gemini_form).unwrap_or_default();
    let toolgate = match (&a.toolgate_path, &a.toolgate_version) {
        (Some(p), _) => ToolgateDependency::Path(p.clone()),
        (None, Some(v)) => ToolgateDependency::Version(v.clone()),
        (None, None) => ToolgateDependency::for_crate_dir(&out.join("rust")),
    };
    let options = BuildOptions {
        lists,
        rust: (!a.no_rust).then(|| RustOptions {
            crate_name: a.crate_name.clone(),
            toolgate,
            conformance_tests: false,
        }),
    };
    if a.check {
        let files = emit::build_files(&bundle, &options).map_err(|e| miette::miette!("{e}"))?;
        let drift = files.check(&out);
        if drift.is_empty() {
            eprintln!("{} is up to date ({} files)", out.display(), files.len());
            return Ok(super::EXIT_OK);
        }
        let text: String = drift.iter().map(ToString::to_string).collect();
        super::print(&text)?;
        eprintln!(
            "{} is out of date ({} differences); run `toolgate build` to update it",
            out.display(),
            drift.len()
        );
        return Ok(super::EXIT_FINDINGS);
    }
    let written = emit::write_build(&bundle, &options, &out).map_err(|e| miette::miette!("{e}"))?;
    let warnings = checked.diagnostics.len();
    let what = if written.skipped {
        format!(
            "{} is up to date ({} files, fingerprint unchanged)",
            out.display(),
            written.files
        )
    } else {
        format!(
            "wrote {} files to {} ({} changed)",
            written.files,
            out.display(),
            written.changed
        )
    };
    eprintln!(
        "{what}{}",
        if warnings > 0 {
            format!("; {warnings} lint findings below error level (see `toolgate lint`)")
        } else {
            String::new()
        }
    );
    Ok(super::EXIT_OK)
}
