//! The `toolgate` command: parse the command line, hand over to [`toolgate::cli`].
//!
//! One exception comes first, before any runtime starts: `toolgate __exec-shim …` is toolgate
//! re-executed as the per-tool exec shim (subreaper, cgroup, rlimits, Landlock, seccomp), which
//! must stay single-threaded until it has forked the tool.

use std::process::ExitCode;

use toolgate::runtime::sandbox::{SHIM_ARG, run_shim};

fn main() -> ExitCode {
    if std::env::args_os().nth(1).is_some_and(|a| a == SHIM_ARG) {
        run_shim();
    }
    toolgate::cli::main()
}
