//! The `toolgate` command: parse the command line, hand over to [`toolgate::cli`].

use std::process::ExitCode;

fn main() -> ExitCode {
    toolgate::cli::main()
}
