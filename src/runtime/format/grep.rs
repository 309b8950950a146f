//! `grep`: match and file counts and the top matches of `grep -rn` output
//! (`path:line:text`). Exit code 1 is "no match" — a result, not an error.

use std::collections::BTreeSet;

use serde_json::json;

use super::{FormatInput, Formatted, clip};

/// Matching lines listed in `top`.
const TOP_MATCHES: usize = 50;
/// Longest match line kept in `top`.
const MAX_MATCH_BYTES: usize = 300;

/// Formats grep output.
pub fn format(input: &FormatInput<'_>) -> Formatted {
    let no_match = input.exit_code == Some(1) && input.stdout.trim().is_empty();
    let failure = if no_match { None } else { input.exit_failure() };
    // Every stdout line is one match (`-n`, binary files skipped); the count is exact even
    // when the middle of the output was left out, the file count then covers what was kept.
    let lines: Vec<&str> = input
        .stdout
        .lines()
        .filter(|l| !l.starts_with("[… "))
        .collect();
    let files: BTreeSet<&str> = lines.iter().filter_map(|l| file_of(l)).collect();
    let matches = if input.stdout_complete {
        lines.len() as u64
    } else {
        input.stdout_lines
    };
    let top: Vec<&str> = lines
        .iter()
        .take(TOP_MATCHES)
        .map(|l| clip(l, MAX_MATCH_BYTES))
        .collect();
    let truncated = !input.stdout_complete || lines.len() > TOP_MATCHES;
    let summary = if no_match {
        "no matches".to_owned()
    } else {
        format!(
            "{matches} match{} in {}{} file{}",
            if matches == 1 { "" } else { "es" },
            if input.stdout_complete {
                ""
            } else {
                "at least "
            },
            files.len(),
            if files.len() == 1 { "" } else { "s" }
        )
    };
    Formatted {
        summary: Some(summary),
        structured: Some(json!({
            "matches": matches,
            "files": files.len(),
            "top": top,
            "truncated": truncated,
        })),
        text: input.combined(),
        failure,
        left_out: false,
    }
}

/// The path of a `path:line:text` line (a path may itself contain colons: the line number is
/// the first all-digit field).
fn file_of(line: &str) -> Option<&str> {
    let mut start = 0;
    while let Some(i) = line[start..].find(':') {
        let at = start + i;
        let rest = &line[at + 1..];
        if let Some(j) = rest.find(':')
            && j > 0
            && rest[..j].bytes().all(|b| b.is_ascii_digit())
        {
            return Some(&line[..at]);
        }
        start = at + 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::runtime::format::fixture::input;

    #[test]
    fn counts_matches_and_files() {
        let out = "src/a.py:3:TIMEOUT = 5\nsrc/a.py:9:x = TIMEOUT\nsrc/b:c.py:1:TIMEOUT\n";
        let f = format(&input("grep", 0, out));
        assert_eq!(
            f.structured.unwrap(),
            json!({
                "matches": 3,
                "files": 2,
                "top": ["src/a.py:3:TIMEOUT = 5", "src/a.py:9:x = TIMEOUT", "src/b:c.py:1:TIMEOUT"],
                "truncated": false,
            })
        );
        assert_eq!(f.summary.as_deref(), Some("3 matches in 2 files"));
        assert_eq!(f.failure, None);
    }

    #[test]
    fn exit_one_without_output_is_no_match_and_two_is_an_error() {
        let f = format(&input("grep", 1, ""));
        assert_eq!(
            (f.summary.as_deref(), f.failure),
            (Some("no matches"), None)
        );
        let f = format(&input("grep", 2, ""));
        assert_eq!(f.failure.as_deref(), Some("`grep` exited with code 2"));
    }
}
