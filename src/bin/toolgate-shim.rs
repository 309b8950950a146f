//! `toolgate-shim`: the per-tool exec shim on its own, without the command line's code, so that
//! starting it per tool process costs a fraction of re-executing `toolgate` (fewer pages to
//! map and fault in). It takes the same arguments as `toolgate __exec-shim`.

use toolgate::runtime::sandbox::{SHIM_ARG, run_shim};

fn main() {
    if std::env::args_os().nth(1).is_some_and(|a| a == SHIM_ARG) {
        run_shim();
    }
    eprintln!(
        "toolgate-shim is started by the toolgate runtime for each tool process; it is not run by hand"
    );
    std::process::exit(2);
}
