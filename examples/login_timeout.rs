//! The seeds' login-timeout task, end to end: a scripted model fixes a login timeout bug with
//! the four narrow tools (search_files, read_file, apply_patch, run_tests) through the governed
//! runtime, and the user gets a reviewable diff and test evidence.
//!
//! ```sh
//! cargo run --example login_timeout
//! ```
//!
//! The project is `examples/login-timeout/project/`, the model's calls are
//! `examples/login-timeout/model.jsonl` (the placeholder syntax is documented in
//! `examples/login-timeout/driver.rs`). Needs `git` and `python3 -m pytest`.

use std::process::ExitCode;

use toolgate::runtime::sandbox::{SHIM_ARG, run_shim};

#[path = "login-timeout/driver.rs"]
mod driver;

fn main() -> ExitCode {
    // run_tests runs pytest under the exec shim: this program re-executed with `__exec-shim`.
    // It must be dispatched before any runtime (and any thread) starts.
    if std::env::args_os().nth(1).is_some_and(|a| a == SHIM_ARG) {
        run_shim();
    }
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("login_timeout: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), driver::BoxError> {
    let options = driver::Options::bundled(std::env::current_exe()?);
    let runtime = tokio::runtime::Runtime::new()?;
    let report = runtime.block_on(driver::run(&options, &mut std::io::stdout().lock()))?;
    report.check()?;
    Ok(())
}
