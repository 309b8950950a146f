//! `bash`: the command, its exit code, and the head and tail of stdout and stderr with a
//! marker saying how many lines were left out.

use serde_json::json;

use super::{FormatInput, Formatted};
use crate::ir::OutputKeep;
use crate::runtime::output::bound;

/// Formats a shell command's output.
pub fn format(input: &FormatInput<'_>) -> Formatted {
    let all = input.combined();
    let b = bound(&all, input.max_bytes, input.max_lines, OutputKeep::HeadTail);
    let code = input.shell_code();
    let truncated = b.truncated || !input.stdout_complete || !input.stderr_complete;
    Formatted {
        summary: Some(match input.exit_code {
            Some(c) => format!("`{}` exited with code {c}", input.command),
            None => format!("`{}` was killed by signal {}", input.command, code - 128),
        }),
        structured: Some(json!({
            "command": input.command,
            "exit_code": code,
            "output": b.text,
            "truncated": truncated,
        })),
        text: all,
        failure: input.exit_failure(),
        left_out: false,
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::runtime::format::fixture::input;

    #[test]
    fn keeps_command_code_and_bounded_output() {
        let out: String = (1..=10).map(|i| format!("l{i}\n")).collect();
        let mut i = input("make", 2, &out);
        i.max_lines = 4;
        let f = format(&i);
        assert_eq!(
            f.structured.unwrap(),
            json!({
                "command": "make",
                "exit_code": 2,
                "output": "l1\nl2\n[… 6 lines (18 bytes) omitted …]\nl9\nl10\n",
                "truncated": true,
            })
        );
        assert_eq!(f.failure.as_deref(), Some("`make` exited with code 2"));
        assert_eq!(f.summary.as_deref(), Some("`make` exited with code 2"));
    }
}
