//! Per-tool formatters (chapter §31): each turns a process's raw output into a summary, the
//! structured fields of the tool's `result` schema, and the text the model reads.
//!
//! | formatter | structured result |
//! |---|---|
//! | `bash` ([`bash`]) | `command`, `exit_code`, `output` (head/tail with an omitted-lines marker), `truncated` |
//! | `tests` ([`tests`]) | `command`, `exit_code`, `passed`, `failed`, `skipped`, `failures[{name, details}]`, `summary` — pytest, cargo test, nextest, go test, jest, vitest |
//! | `grep` ([`grep`]) | `matches`, `files`, `top`, `truncated` |
//! | `read_file` ([`read_file`]) | `content`, `content_hash`, `start_line`, `end_line`, `total_lines`, `truncated` |
//! | `git_diff` ([`git`]) | `files`, `insertions`, `deletions`, `diff` (and hunks in the summary) |
//! | `git_status` ([`git`]) | `branch`, `changes` |
//! | `json` | stdout parsed as JSON |
//! | `text` | none |
//!
//! A formatter also decides whether the outcome is a failure: grep's exit code 1 means "no
//! match", not an error; a test run whose tests ran and some failed is a result (its counts and
//! failures are what the caller asked for), while a runner that failed without reporting a
//! failing test is a failure. Formatters never panic on
//! what a process printed, however malformed.

pub mod bash;
pub mod git;
pub mod grep;
pub mod read_file;
pub mod test_runs;

use serde_json::Value;

use crate::ir::FormatterKind;

/// What a formatter reads.
#[derive(Clone, Copy, Debug)]
pub struct FormatInput<'a> {
    /// The command line as shown.
    pub command: &'a str,
    /// The exit code (`None` when a signal ended the process).
    pub exit_code: Option<i32>,
    /// The signal that ended it.
    pub signal: Option<i32>,
    /// Standard output: head and tail, with an omission marker when the middle was left out.
    pub stdout: &'a str,
    /// Standard error, likewise.
    pub stderr: &'a str,
    /// Whether `stdout` holds the whole stream.
    pub stdout_complete: bool,
    /// Whether `stderr` holds the whole stream.
    pub stderr_complete: bool,
    /// Lines in the whole of stdout.
    pub stdout_lines: u64,
    /// blake3 (hex) of the whole of stdout.
    pub stdout_hash: &'a str,
    /// Most bytes of text the model sees.
    pub max_bytes: u64,
    /// Most lines of text the model sees.
    pub max_lines: u64,
}

impl FormatInput<'_> {
    /// The exit code, or 128 + the signal, as a shell reports it.
    pub fn shell_code(&self) -> i32 {
        self.exit_code
            .unwrap_or_else(|| 128 + self.signal.unwrap_or(0))
    }

    /// stdout and stderr together (stderr under a marker line).
    pub fn combined(&self) -> String {
        let mut text = self.stdout.to_owned();
        if !self.stderr.is_empty() {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str("--- stderr ---\n");
            text.push_str(self.stderr);
        }
        text
    }

    /// Whether the process exited with code 0.
    pub fn succeeded(&self) -> bool {
        self.exit_code == Some(0)
    }

    /// The default failure message for a non-zero exit or a signal.
    pub fn exit_failure(&self) -> Option<String> {
        match (self.exit_code, self.signal) {
            (Some(0), _) => None,
            (Some(c), _) => Some(format!("`{}` exited with code {c}", self.command)),
            (None, Some(s)) => Some(format!("`{}` was killed by signal {s}", self.command)),
            (None, None) => Some(format!("`{}` ended without an exit status", self.command)),
        }
    }
}

/// What a formatter makes of the output.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Formatted {
    /// A one-line summary (e.g. "2 failed, 3 passed").
    pub summary: Option<String>,
    /// The structured result.
    pub structured: Option<Value>,
    /// The text the model reads.
    pub text: String,
    /// `Some(message)` when the outcome is a failure.
    pub failure: Option<String>,
    /// Whether `text` leaves part of the output out (the formatter cut it, not the limits
    /// applied later): the full output is then kept as an artifact.
    pub left_out: bool,
}

/// Formats a process's output with the tool's formatter.
pub fn format(kind: FormatterKind, input: &FormatInput<'_>) -> Formatted {
    match kind {
        FormatterKind::Bash => bash::format(input),
        FormatterKind::Tests => test_runs::format(input),
        FormatterKind::Grep => grep::format(input),
        FormatterKind::ReadFile => read_file::format(input),
        FormatterKind::GitDiff => git::diff(input),
        FormatterKind::GitStatus => git::status(input),
        FormatterKind::Json => Formatted {
            structured: if input.succeeded() && input.stdout_complete {
                serde_json::from_str::<Value>(input.stdout).ok()
            } else {
                None
            },
            text: input.combined(),
            failure: input.exit_failure(),
            summary: None,
            left_out: false,
        },
        FormatterKind::Text => Formatted {
            text: input.combined(),
            failure: input.exit_failure(),
            ..Formatted::default()
        },
    }
}

/// Cuts a string to at most `max` bytes at a character boundary.
pub(crate) fn clip(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut cut = max;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    &s[..cut]
}

#[cfg(test)]
pub(crate) mod fixture {
    use super::FormatInput;

    /// An input with only stdout and an exit code.
    pub(crate) fn input<'a>(command: &'a str, code: i32, stdout: &'a str) -> FormatInput<'a> {
        FormatInput {
            command,
            exit_code: Some(code),
            signal: None,
            stdout,
            stderr: "",
            stdout_complete: true,
            stderr_complete: true,
            stdout_lines: stdout.lines().count() as u64,
            stdout_hash: "h",
            max_bytes: 16 * 1024,
            max_lines: 200,
        }
    }
}
