//! The builtin tools (`exec: {builtin: NAME}`), one file each, implementing the contracts in
//! `tool-specs/` — the argument and result shapes there are what these read and return.
//!
//! Every file access goes through the workspace's `cap_std::fs::Dir`, so a path resolves beneath
//! the workspace root at the moment of use whatever happened since validation. File work runs on
//! tokio's blocking pool; `echo` runs inline (it is the benchmark of the pipeline's own cost).

mod apply_patch;
mod echo;
mod glob;
mod list_dir;
mod read_artifact;
mod read_file;
mod search_files;
mod write_file;

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::ir::{ErrorType, OutputPolicy};
use crate::runtime::artifacts::ArtifactStore;
use crate::runtime::exec::{ExecContext, ExecFailure, ExecFuture, Executor, RawOutcome};
use crate::runtime::permission::AuthorizedCall;
use crate::runtime::workspace::{PathViolation, Workspace, WorkspacePath, classify_io};

/// A builtin tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    /// `read_file`
    ReadFile,
    /// `search_files`
    SearchFiles,
    /// `glob`
    Glob,
    /// `list_dir`
    ListDir,
    /// `write_file`
    WriteFile,
    /// `apply_patch`
    ApplyPatch,
    /// `read_artifact`
    ReadArtifact,
    /// `echo`
    Echo,
}

impl Builtin {
    /// Every builtin.
    pub const ALL: &'static [Builtin] = &[
        Builtin::ReadFile,
        Builtin::SearchFiles,
        Builtin::Glob,
        Builtin::ListDir,
        Builtin::WriteFile,
        Builtin::ApplyPatch,
        Builtin::ReadArtifact,
        Builtin::Echo,
    ];

    /// The name specs use.
    pub fn as_str(self) -> &'static str {
        match self {
            Builtin::ReadFile => "read_file",
            Builtin::SearchFiles => "search_files",
            Builtin::Glob => "glob",
            Builtin::ListDir => "list_dir",
            Builtin::WriteFile => "write_file",
            Builtin::ApplyPatch => "apply_patch",
            Builtin::ReadArtifact => "read_artifact",
            Builtin::Echo => "echo",
        }
    }

    /// Parses a spec's builtin name.
    pub fn parse(name: &str) -> Option<Builtin> {
        Builtin::ALL.iter().copied().find(|b| b.as_str() == name)
    }

    /// Runs the builtin (blocking file work).
    pub(crate) fn run(self, args: &Value, cx: &BuiltinContext) -> RawOutcome {
        let r = match self {
            Builtin::ReadFile => read_file::run(args, cx),
            Builtin::SearchFiles => search_files::run(args, cx),
            Builtin::Glob => glob::run(args, cx),
            Builtin::ListDir => list_dir::run(args, cx),
            Builtin::WriteFile => write_file::run(args, cx),
            Builtin::ApplyPatch => apply_patch::run(args, cx),
            Builtin::ReadArtifact => read_artifact::run(args, cx),
            Builtin::Echo => echo::run(args),
        };
        r.unwrap_or_else(RawOutcome::from)
    }
}

/// What a builtin may use.
#[derive(Clone, Debug)]
pub(crate) struct BuiltinContext {
    pub(crate) workspace: Arc<Workspace>,
    pub(crate) artifacts: ArtifactStore,
    pub(crate) output: OutputPolicy,
}

/// The builtin backend.
#[derive(Clone, Copy, Debug, Default)]
pub struct BuiltinExecutor;

impl Executor for BuiltinExecutor {
    fn run<'a>(&'a self, call: AuthorizedCall, ctx: ExecContext) -> ExecFuture<'a> {
        let Some(builtin) = call.compiled().builtin else {
            return Box::pin(async move {
                RawOutcome::failure(
                    ErrorType::RuntimeException,
                    format!("`{}` is not a builtin tool", call.definition().name),
                )
            });
        };
        let cx = BuiltinContext {
            workspace: ctx.workspace,
            artifacts: ctx.artifacts,
            output: call.definition().output.clone(),
        };
        if builtin == Builtin::Echo {
            let out = builtin.run(call.arguments(), &cx);
            return Box::pin(async move { out });
        }
        let args = call.arguments().clone();
        Box::pin(async move {
            match tokio::task::spawn_blocking(move || builtin.run(&args, &cx)).await {
                Ok(out) => out,
                Err(e) => RawOutcome::failure(
                    ErrorType::RuntimeException,
                    format!("the builtin {} failed unexpectedly: {e}", builtin.as_str()),
                ),
            }
        })
    }
}

/// Builtin results: a failure is a complete outcome too.
type Step<T> = Result<T, ExecFailure>;

/// Reads typed arguments (they passed the schema, so a mismatch means the spec and the builtin
/// disagree — still a result, never a panic).
fn parse_args<T: DeserializeOwned>(args: &Value, tool: &str) -> Step<T> {
    serde_json::from_value(args.clone()).map_err(|e| {
        ExecFailure::new(
            ErrorType::InvalidArguments,
            format!("the arguments do not fit the builtin {tool}: {e}"),
        )
    })
}

/// Checks a path argument again at use (validation already did; the workspace may have changed).
/// The pipeline hands builtins resolved paths, which resolve to themselves; one that now
/// resolves elsewhere went through a symbolic link that appeared after the rules judged it, so
/// it is refused rather than followed to a file nobody checked.
fn checked(cx: &BuiltinContext, path: &str) -> Step<WorkspacePath> {
    let p = beneath(cx, path)?;
    if crate::cel::functions::normalize(path).as_deref() != Some(p.as_str()) {
        return Err(ExecFailure::new(
            ErrorType::SandboxViolation,
            format!(
                "`{path}` now leads to `{}` through a symbolic link that appeared after the call was checked; nothing was done",
                p.as_str()
            ),
        ));
    }
    Ok(p)
}

/// Checks and resolves a path that was not a path parameter (glob's literal prefix): the
/// policy applies, a link inside the workspace is followed.
fn beneath(cx: &BuiltinContext, path: &str) -> Step<WorkspacePath> {
    cx.workspace.check(path).map_err(|v| {
        let t = match v {
            PathViolation::Symlink(_) | PathViolation::BrokenLink(_) => ErrorType::SandboxViolation,
            _ => ErrorType::SemanticValidationError,
        };
        ExecFailure::new(t, v.to_string())
    })
}

/// A file-system error as an outcome.
fn io_failure(e: &std::io::Error, path: &str) -> ExecFailure {
    let (t, m) = classify_io(e, path);
    ExecFailure::new(t, m)
}

/// The content hash toolgate uses everywhere: blake3, hex.
pub(crate) fn content_hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// The workspace-relative display form of a path (`.` → the root).
fn shown(p: &WorkspacePath) -> &str {
    p.as_str()
}

/// Usize from a u64 argument, saturating.
fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}
