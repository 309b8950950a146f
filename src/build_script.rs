//! Compiling tool contracts from a `build.rs`, in the style of `prost-build`.
//!
//! ```no_run
//! // build.rs
//! fn main() -> Result<(), toolgate::build_script::BuildError> {
//!     toolgate::build_script::Builder::new().specs("tool-specs").compile()?;
//!     Ok(())
//! }
//! // src/lib.rs
//! // include!(concat!(env!("OUT_DIR"), "/tools.rs"));
//! ```
//!
//! [`Builder::compile`] loads and lints the specs (an error finding stops the build, and the
//! error's `Debug` form is the lint report, which is what cargo shows for a `build.rs` that
//! returns `Err`), writes `bundle.json` and `tools.rs` into `OUT_DIR`, and prints
//! `cargo:rerun-if-changed` for every spec file, the project file and every folder specs come
//! from — the paths given, or the folders of the project's `specs` globs (or `tool-specs/`) —
//! so a new spec file reruns the build script too.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::check::{self, CheckedProject};
use crate::emit::{self, EmitError, output};
use crate::lint::report::{Summary, human};
use crate::policy::spec_reach::SpecReach;
use crate::spec::load::{DEFAULT_SPEC_GLOB, LoadError, LoadOptions};

/// Configures and runs the compilation.
#[derive(Clone, Debug, Default)]
pub struct Builder {
    specs: Vec<PathBuf>,
    config: Option<PathBuf>,
    out_dir: Option<PathBuf>,
    file_name: Option<String>,
    rerun_directives: Option<bool>,
}

/// What a compilation wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compiled {
    /// The Rust module to `include!`.
    pub module: PathBuf,
    /// The bundle the module embeds.
    pub bundle: PathBuf,
    /// Every file read (specs and the project file).
    pub inputs: Vec<PathBuf>,
    /// What `cargo:rerun-if-changed` names: the inputs and the folders specs come from (cargo
    /// scans a folder for new and changed files).
    pub rerun_if_changed: Vec<PathBuf>,
}

/// Why a compilation failed.
#[non_exhaustive]
pub enum BuildError {
    /// The project file or a spec path could not be found.
    Load(LoadError),
    /// Loading or linting found errors; the report is rendered like `toolgate lint`.
    Lint {
        /// The rendered findings.
        report: String,
    },
    /// Emitting failed.
    Emit(EmitError),
    /// Neither [`Builder::out_dir`] nor `OUT_DIR` is set.
    NoOutDir,
}

impl fmt::Debug for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Lint { report } => {
                write!(f, "toolgate: the tool contracts have errors\n\n{report}")
            }
            other => write!(f, "toolgate: {other}"),
        }
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BuildError::Load(e) => write!(f, "{e}"),
            BuildError::Lint { report } => write!(f, "{report}"),
            BuildError::Emit(e) => write!(f, "{e}"),
            BuildError::NoOutDir => {
                f.write_str("OUT_DIR is not set; call Builder::out_dir outside build scripts")
            }
        }
    }
}

impl std::error::Error for BuildError {}

impl Builder {
    /// A builder with no specs: the project's `specs` globs (or `tool-specs/`) are used.
    pub fn new() -> Self {
        Builder::default()
    }

    /// Adds a spec file, folder or glob (relative to the crate root).
    pub fn specs(mut self, path: impl Into<PathBuf>) -> Self {
        self.specs.push(path.into());
        self
    }

    /// The project file (default: `toolgate.yaml` in the crate root, if present).
    pub fn config(mut self, path: impl Into<PathBuf>) -> Self {
        self.config = Some(path.into());
        self
    }

    /// Where to write (default: `OUT_DIR`).
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// The module's file name (default: `tools.rs`).
    pub fn file_name(mut self, name: impl Into<String>) -> Self {
        self.file_name = Some(name.into());
        self
    }

    /// Whether to print `cargo:rerun-if-changed` lines (default: only when `OUT_DIR` is set).
    pub fn rerun_directives(mut self, yes: bool) -> Self {
        self.rerun_directives = Some(yes);
        self
    }

    /// Loads, lints and writes the module and its bundle.
    pub fn compile(self) -> Result<Compiled, BuildError> {
        let env_out = std::env::var_os("OUT_DIR").map(PathBuf::from);
        let out = self
            .out_dir
            .clone()
            .or_else(|| env_out.clone())
            .ok_or(BuildError::NoOutDir)?;
        let cwd = std::env::var_os("CARGO_MANIFEST_DIR")
            .map(PathBuf::from)
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_default();
        let checked = check::check_specs(&LoadOptions {
            paths: self.specs.clone(),
            config: self.config.clone(),
            cwd: cwd.clone(),
        })
        .map_err(BuildError::Load)?;
        let inputs = inputs(&checked, &cwd);
        let mut rerun_if_changed = spec_folders(&self.specs, &checked, &cwd);
        rerun_if_changed.extend(inputs.iter().cloned());
        rerun_if_changed.sort();
        rerun_if_changed.dedup();
        if self.rerun_directives.unwrap_or(env_out.is_some()) {
            for p in &rerun_if_changed {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
        let Some(bundle) = checked.bundle().filter(|_| !checked.has_load_errors()) else {
            let summary = Summary::of(
                &checked.diagnostics,
                checked.loaded.files.len(),
                checked.loaded.tool_count(),
            );
            let report = human::render(
                &checked.diagnostics,
                &checked.loaded.sources,
                // Cargo shows a failing build script's output, never on a terminal.
                human::Style::Plain,
                summary,
            );
            return Err(BuildError::Lint { report });
        };
        let bundle_json = emit::to_json_text(
            &serde_json::to_value(&bundle).map_err(|e| BuildError::Emit(e.into()))?,
        )
        .map_err(BuildError::Emit)?;
        let module = emit::rust::build_module(&bundle).map_err(BuildError::Emit)?;
        std::fs::create_dir_all(&out).map_err(|e| {
            BuildError::Emit(EmitError::Io {
                path: out.clone(),
                source: e,
            })
        })?;
        let module_path = out.join(self.file_name.as_deref().unwrap_or("tools.rs"));
        let bundle_path = out.join("bundle.json");
        write_if_changed(&bundle_path, &bundle_json)?;
        write_if_changed(&module_path, &module)?;
        Ok(Compiled {
            module: module_path,
            bundle: bundle_path,
            inputs,
            rerun_if_changed,
        })
    }
}

fn inputs(checked: &CheckedProject, cwd: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = checked
        .loaded
        .sources
        .iter()
        .map(|(_, f)| cwd.join(&f.path))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Where specs come from: each path given (a glob by the folder it starts in), or else the
/// folders the project's `specs` globs (or the default glob) start in.
fn spec_folders(specs: &[PathBuf], checked: &CheckedProject, cwd: &Path) -> Vec<PathBuf> {
    if !specs.is_empty() {
        return specs.iter().map(|p| cwd.join(literal_prefix(p))).collect();
    }
    let globs: Vec<String> = checked
        .loaded
        .project
        .as_ref()
        .and_then(|(_, p)| p.specs.as_ref())
        .map(|s| s.value.iter().map(|g| g.value.clone()).collect())
        .unwrap_or_else(|| vec![DEFAULT_SPEC_GLOB.to_owned()]);
    // A glob the loader refused (absolute, or climbing out) names no folder: the loader
    // reported it, and `cargo:rerun-if-changed=/` would watch the whole file system.
    let reach = SpecReach::new(&checked.loaded.root);
    globs
        .iter()
        .filter(|g| reach.check_glob(g).is_ok())
        .map(|g| checked.loaded.root.join(literal_prefix(Path::new(g))))
        .collect()
}

/// The leading components of a path without glob characters: the folder a glob starts in.
fn literal_prefix(path: &Path) -> PathBuf {
    path.components()
        .take_while(|c| {
            !c.as_os_str()
                .to_string_lossy()
                .contains(['*', '?', '[', '{'])
        })
        .collect()
}

fn write_if_changed(path: &Path, text: &str) -> Result<(), BuildError> {
    if std::fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    output::write_atomic(path, text.as_bytes()).map_err(BuildError::Emit)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = "name: greet\nversion: 1\ndescription: Greet a person by name. Use when asked to say hello. Returns the greeting.\neffect: pure\nparameters:\n  type: object\n  properties:\n    name: {type: string, maxLength: 100, description: Who to greet.}\n  required: [name]\n  additionalProperties: false\nexec: {handler: rust}\n";

    /// Specs from the project's globs: every spec file, the project file and the folder each
    /// glob starts in (so a new file there reruns the build script).
    #[test]
    fn reruns_name_spec_files_and_the_folders_of_project_globs() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("contracts/people")).unwrap();
        std::fs::write(
            root.join("toolgate.yaml"),
            "specs: [\"contracts/**/*.yaml\"]\n",
        )
        .unwrap();
        std::fs::write(root.join("contracts/people/greet.yaml"), SPEC).unwrap();
        let compiled = Builder::new()
            .config(root.join("toolgate.yaml"))
            .out_dir(root.join("out"))
            .rerun_directives(false)
            .compile()
            .unwrap();
        assert!(compiled.module.is_file());
        assert_eq!(
            compiled.rerun_if_changed,
            vec![
                root.join("contracts"),
                root.join("contracts/people/greet.yaml"),
                root.join("toolgate.yaml"),
            ]
        );
    }

    /// A glob the loader refuses names no folder to watch (`/**` would watch everything).
    #[test]
    fn reruns_skip_the_globs_the_loader_refuses() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        std::fs::create_dir_all(root.join("contracts")).unwrap();
        std::fs::write(
            root.join("toolgate.yaml"),
            "specs: [\"contracts/*.yaml\", \"/**\", \"../*.yaml\"]\n",
        )
        .unwrap();
        std::fs::write(root.join("contracts/greet.yaml"), SPEC).unwrap();
        let checked = check::check_specs(&LoadOptions {
            paths: vec![],
            config: Some(root.join("toolgate.yaml")),
            cwd: root.clone(),
        })
        .unwrap();
        assert!(checked.has_load_errors());
        assert_eq!(
            spec_folders(&[], &checked, &root),
            vec![root.join("contracts")]
        );
    }

    /// Specs given as paths: each path, a glob by the folder it starts in.
    #[test]
    fn reruns_name_the_spec_paths_given() {
        assert_eq!(
            literal_prefix(Path::new("specs/**/*.yaml")),
            PathBuf::from("specs")
        );
        assert_eq!(
            literal_prefix(Path::new("specs/greet.yaml")),
            PathBuf::from("specs/greet.yaml")
        );
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("specs")).unwrap();
        std::fs::write(root.join("specs/greet.yaml"), SPEC).unwrap();
        std::fs::write(root.join("toolgate.yaml"), "targets: [mcp]\n").unwrap();
        let compiled = Builder::new()
            .specs(root.join("specs"))
            .config(root.join("toolgate.yaml"))
            .out_dir(root.join("out"))
            .rerun_directives(false)
            .compile()
            .unwrap();
        assert_eq!(
            compiled.rerun_if_changed,
            vec![
                root.join("specs"),
                root.join("specs/greet.yaml"),
                root.join("toolgate.yaml"),
            ]
        );
    }
}
