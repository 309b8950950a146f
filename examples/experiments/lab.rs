//! What every experiment shares: a temporary workspace and state folder, the runtime over
//! `examples/experiments/tool-specs`, and the way results are printed.
//!
//! Shared by the example (`examples/experiments/main.rs`) and its test
//! (`tests/examples_experiments.rs`), which includes these files with `#[path]`.

use std::error::Error;
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use toolgate::runtime::{RuntimeBuilder, ToolResult};
use toolgate::spec::load::LoadOptions;

/// Errors of an experiment: its set-up, or the runtime's engine.
pub type BoxError = Box<dyn Error + Send + Sync>;

/// How the experiments reach the programs they need.
#[derive(Clone, Debug)]
pub struct Lab {
    /// The exec shim command tools run under: a toolgate binary, or a program that calls
    /// `run_shim()` when argv\[1\] is `__exec-shim` (the example does).
    pub shim: PathBuf,
    /// The command line that starts experiment 7's crashing process (program, then arguments);
    /// it finds its folder in the environment (`exp7_crash::CHILD_ENV`).
    pub crash_child: Vec<OsString>,
}

/// A temporary folder with a workspace and a state folder, removed when dropped.
pub struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    /// A fresh, empty workspace and state folder.
    pub fn new(name: &str) -> Result<Scratch, BoxError> {
        let dir = tempfile::Builder::new()
            .prefix(&format!("toolgate-{name}-"))
            .tempdir()?;
        std::fs::create_dir(dir.path().join("workspace"))?;
        Ok(Scratch { dir })
    }

    /// The folder holding both.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// The workspace the tools work in.
    pub fn workspace(&self) -> PathBuf {
        workspace_of(self.root())
    }

    /// Writes a workspace file.
    pub fn write(&self, rel: &str, text: &str) -> Result<(), BoxError> {
        let path = self.workspace().join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(())
    }

    /// Reads a workspace file.
    pub fn read(&self, rel: &str) -> Result<String, BoxError> {
        let path = self.workspace().join(rel);
        Ok(std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?)
    }
}

/// The workspace beneath a scratch root.
pub fn workspace_of(root: &Path) -> PathBuf {
    root.join("workspace")
}

/// The state folder beneath a scratch root.
pub fn state_of(root: &Path) -> PathBuf {
    root.join("state")
}

/// The experiments' toolgate project: `examples/experiments/tool-specs/toolgate.yaml`.
pub fn project_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/experiments/tool-specs")
}

/// A runtime builder over the experiments' specs (the standard library plus the demonstration
/// tools), working in `root`'s workspace and state folder.
pub fn builder(root: &Path, shim: &Path) -> Result<RuntimeBuilder, BoxError> {
    let dir = project_dir();
    Ok(RuntimeBuilder::from_specs(&LoadOptions {
        paths: Vec::new(),
        config: Some(dir.join("toolgate.yaml")),
        cwd: dir,
    })?
    .workspace(workspace_of(root))
    .state_dir(state_of(root))
    .shim(shim))
}

/// Prints an experiment's header and what it does.
pub fn header(out: &mut dyn Write, n: u32, title: &str, does: &str) -> std::io::Result<()> {
    writeln!(out, "\n=== Experiment {n}: {title} ===")?;
    writeln!(out, "what it does: {does}")
}

/// Prints `text` with every line behind `prefix`.
pub fn indented(out: &mut dyn Write, prefix: &str, text: &str) -> std::io::Result<()> {
    for line in text.lines() {
        writeln!(out, "{prefix}{line}")?;
    }
    Ok(())
}

/// Prints what the model reads for one result.
pub fn model_sees(out: &mut dyn Write, r: &ToolResult) -> std::io::Result<()> {
    writeln!(out, "what the model sees ({}):", r.call_id())?;
    indented(out, "  | ", &r.projection().text)
}

/// Prints the experiment's one-line conclusion.
pub fn shows(out: &mut dyn Write, conclusion: &str) -> std::io::Result<()> {
    writeln!(out, "shows: {conclusion}")
}

/// Turns a failed expectation into the experiment's error.
pub fn ensure(ok: bool, what: impl FnOnce() -> String) -> Result<(), String> {
    if ok { Ok(()) } else { Err(what()) }
}
