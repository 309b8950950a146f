//! The builtin tools (`exec: {builtin: NAME}`), one file each, implementing the contracts in
//! `tool-specs/` — the argument and result shapes there are what these read and return.
//!
//! Every file access goes through the workspace's race-free opens
//! ([`Workspace::open_file`], [`Workspace::open_folder`], [`Workspace::lock_folder_of`]): a
//! path resolves beneath the workspace root with no symbolic link followed at the moment of
//! use, whatever happened since validation; only regular files are read; protected paths,
//! `.git` folders and other names (hard links) of protected files are refused. This holds
//! independently of the permission stage, which judges the arguments: the builtins judge the
//! files they actually touch, including those a walk finds — `search_files`, `glob` and
//! `list_dir` skip protected entries and say how many they withheld. Reads stream in bounded
//! memory and stop at the file size caps of `budgets` ([`FileLimits`](crate::runtime::workspace::FileLimits)).
//! File work runs on tokio's blocking pool and stops when the call is cancelled; `echo` runs
//! inline (it is the benchmark of the pipeline's own cost).

mod apply_patch;
mod echo;
mod glob;
mod lines;
mod list_dir;
mod read_artifact;
mod read_file;
mod search_files;
mod walk;
mod write_file;

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::ir::{ErrorType, OutputPolicy};
use crate::runtime::artifacts::{ArtifactOwner, ArtifactStore, size_exact, size_text};
use crate::runtime::exec::{ExecContext, ExecFailure, ExecFuture, Executor, RawOutcome};
use crate::runtime::permission::AuthorizedCall;
use crate::runtime::workspace::{
    AccessError, PathViolation, Workspace, WorkspacePath, classify_io,
};

/// A builtin tool: the vocabulary lives in the IR, so the spec resolver and this dispatch
/// cannot disagree on the names.
pub use crate::ir::Builtin;

impl Builtin {
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
    /// Who calls: `read_artifact` reads only what this session or principal stored.
    pub(crate) owner: ArtifactOwner,
    pub(crate) output: OutputPolicy,
    /// Fires when the call times out or is cancelled: long reads and walks stop.
    pub(crate) cancel: CancellationToken,
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
            owner: ctx.artifact_owner(),
            workspace: ctx.workspace,
            artifacts: ctx.artifacts,
            output: call.definition().output.clone(),
            cancel: ctx.cancel,
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
    if e.kind() == std::io::ErrorKind::Interrupted {
        return ExecFailure::new(ErrorType::Cancelled, "the call was stopped");
    }
    let (t, m) = classify_io(e, path);
    ExecFailure::new(t, m)
}

/// A refused or failed open as an outcome; `nothing` says what did not happen ("nothing was
/// read").
fn access_failure(e: AccessError, nothing: &str) -> ExecFailure {
    let t = e.error_type();
    let m = e.to_string();
    let m = m.trim_end_matches('.');
    ExecFailure::new(t, format!("{m}; {nothing}"))
}

/// A file above a builtin's size cap (`budgets.<key>` in toolgate.yaml).
fn too_large(path: &str, size: u64, cap: u64, tool: &str, key: &str, instead: &str) -> ExecFailure {
    ExecFailure::new(
        ErrorType::OutputLimit,
        format!(
            "`{path}` is {}; {tool} works on files up to {} (budgets.{key} in toolgate.yaml). {instead}",
            size_exact(size),
            size_text(cap)
        ),
    )
}

/// Stops when the call was cancelled or timed out.
fn stopped(cx: &BuiltinContext) -> Step<()> {
    if cx.cancel.is_cancelled() {
        return Err(ExecFailure::new(
            ErrorType::Cancelled,
            "the call was stopped",
        ));
    }
    Ok(())
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

#[cfg(test)]
pub(crate) mod testing {
    //! Builtins run directly, below the permission stage: what they refuse on their own.

    use super::*;

    /// A context over a workspace folder, with the output limits of the standard contracts.
    pub(crate) fn context(root: &std::path::Path, state: &std::path::Path) -> BuiltinContext {
        BuiltinContext {
            workspace: Arc::new(Workspace::open(root).unwrap()),
            artifacts: ArtifactStore::new(state),
            owner: ArtifactOwner::default(),
            output: OutputPolicy {
                formatter: crate::ir::FormatterKind::Text,
                max_bytes: 32 * 1024,
                max_lines: 2000,
                keep: crate::ir::OutputKeep::Head,
                artifact_threshold: 64 * 1024,
                redact: Vec::new(),
                redact_secrets: false,
                external_reference: None,
            },
            cancel: CancellationToken::new(),
        }
    }

    /// Runs a builtin on JSON arguments.
    pub(crate) fn run(cx: &BuiltinContext, b: Builtin, args: Value) -> RawOutcome {
        b.run(&args, cx)
    }

    /// A workspace with secrets where builtins meet them: `.env`, `keys/server.pem`,
    /// `keys/id_rsa`, a repository (`.git`) with a nested one (`vendor/lib`, its own `.env`),
    /// `notes.txt` (another name, a hard link, of `.env`) and plain source files. Each secret
    /// holds [`Tree::SECRET`].
    pub(crate) struct Tree {
        pub(crate) dir: tempfile::TempDir,
        /// The state folder (artifacts); kept for the test's lifetime.
        _state: tempfile::TempDir,
        pub(crate) cx: BuiltinContext,
    }

    impl Tree {
        pub(crate) const SECRET: &'static str = "TOPSECRET-1234";

        pub(crate) fn new() -> Tree {
            let dir = tempfile::tempdir().unwrap();
            let state = tempfile::tempdir().unwrap();
            let root = dir.path();
            let write = |rel: &str, text: &str| {
                let p = root.join(rel);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, text).unwrap();
            };
            let secret = format!("API_KEY={}\n", Tree::SECRET);
            for rel in [".env", "keys/server.pem", "keys/id_rsa", "vendor/lib/.env"] {
                write(rel, &secret);
            }
            write(
                ".git/config",
                &format!("[remote]\nurl = https://{}@x\n", Tree::SECRET),
            );
            write(".git/hooks/pre-commit.sample", "exit 0\n");
            write("vendor/lib/.git/config", &secret);
            write("vendor/lib/lib.py", "VALUE = 1\n");
            write("src/app.py", "import os\nAPI_KEY = os.environ['API_KEY']\n");
            std::fs::hard_link(root.join(".env"), root.join("notes.txt")).unwrap();
            let cx = context(root, state.path());
            Tree {
                dir,
                _state: state,
                cx,
            }
        }

        pub(crate) fn path(&self, rel: &str) -> std::path::PathBuf {
            self.dir.path().join(rel)
        }
    }
}
