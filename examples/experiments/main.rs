//! The seed chapter's eight experiments (§49), each run through the governed runtime:
//! unknown tool, validation, concurrent reads, write conflict, timeout, cancellation,
//! crash + idempotency, artifact.
//!
//! ```sh
//! cargo run --example experiments            # all eight
//! cargo run --example experiments -- 5       # one of them
//! ```
//!
//! Each prints what it does, what the model sees, and what it shows; it checks its own facts
//! and the program exits non-zero when one does not hold. The tools are the standard library
//! (`tool-specs/`) plus the demonstration tools in `examples/experiments/tool-specs/`; every
//! experiment works in its own temporary folder.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use toolgate::runtime::sandbox::{SHIM_ARG, run_shim};

mod exp1_unknown_tool;
mod exp2_validation;
mod exp3_concurrent_reads;
mod exp4_write_conflict;
mod exp5_timeout;
mod exp6_cancellation;
mod exp7_crash;
mod exp8_artifact;
mod lab;

use lab::{BoxError, Lab};

/// The argument that makes this program experiment 7's crashing process.
const CRASH_CHILD_ARG: &str = "__experiment-7-child";

fn main() -> ExitCode {
    // Command tools run under the exec shim: this program re-executed with `__exec-shim`. It
    // must be dispatched before any runtime (and any thread) starts.
    let arg1 = std::env::args_os().nth(1);
    if arg1.as_deref().is_some_and(|a| a == SHIM_ARG) {
        run_shim();
    }
    if arg1.as_deref().is_some_and(|a| a == CRASH_CHILD_ARG) {
        return crash_child();
    }
    let which = match arg1.map(|a| a.to_string_lossy().into_owned()).as_deref() {
        None | Some("all") => (1..=8).collect(),
        Some(n) => match n.parse::<u32>() {
            Ok(n @ 1..=8) => vec![n],
            _ => {
                eprintln!("usage: experiments [1-8|all]");
                return ExitCode::from(2);
            }
        },
    };
    match run(&which) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("experiments: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Experiment 7's second process: it runs until it is killed.
fn crash_child() -> ExitCode {
    let (Some(root), Some(shim)) = (
        std::env::var_os(exp7_crash::CHILD_ENV),
        std::env::var_os(exp7_crash::SHIM_ENV),
    ) else {
        eprintln!("experiments: {CRASH_CHILD_ARG} needs its environment");
        return ExitCode::from(2);
    };
    match exp7_crash::child_main(&PathBuf::from(root), &PathBuf::from(shim)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("experiments ({CRASH_CHILD_ARG}): {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(which: &[u32]) -> Result<(), BoxError> {
    let exe = std::env::current_exe()?;
    let lab = Lab {
        shim: exe.clone(),
        crash_child: vec![exe.into_os_string(), OsString::from(CRASH_CHILD_ARG)],
    };
    let tokio = tokio::runtime::Runtime::new()?;
    let mut stdout = std::io::stdout().lock();
    let mut failed = Vec::new();
    for &n in which {
        let checked = tokio.block_on(async {
            Ok::<_, BoxError>(match n {
                1 => exp1_unknown_tool::run(&lab, &mut stdout).await?.check(),
                2 => exp2_validation::run(&lab, &mut stdout).await?.check(),
                3 => exp3_concurrent_reads::run(&lab, &mut stdout).await?.check(),
                4 => exp4_write_conflict::run(&lab, &mut stdout).await?.check(),
                5 => exp5_timeout::run(&lab, &mut stdout).await?.check(),
                6 => exp6_cancellation::run(&lab, &mut stdout).await?.check(),
                7 => exp7_crash::run(&lab, &mut stdout).await?.check(),
                _ => exp8_artifact::run(&lab, &mut stdout).await?.check(),
            })
        })?;
        if let Err(e) = checked {
            eprintln!("experiment {n} did not show what it should: {e}");
            failed.push(n);
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("experiments {failed:?} failed their checks").into())
    }
}
