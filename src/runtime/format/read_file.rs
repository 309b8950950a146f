//! `read_file` for command tools that print a file (`cat`, `git show`, a generator): the lines
//! shown, numbered, the blake3 hash of the whole output and a truncation marker when the byte
//! or line limit cut it. The same shape as the builtin `read_file`.

use serde_json::json;

use super::{FormatInput, Formatted};

/// Room kept under the byte limit for the footer.
const FOOTER_RESERVE: u64 = 512;

/// Formats a file's content.
pub fn format(input: &FormatInput<'_>) -> Formatted {
    let budget = usize::try_from(input.max_bytes.saturating_sub(FOOTER_RESERVE).max(256))
        .unwrap_or(usize::MAX);
    let max_lines = input.max_lines.max(1);
    let mut content = String::new();
    let mut end = 0u64;
    for (i, line) in input.stdout.lines().enumerate() {
        let n = i as u64 + 1;
        if n > max_lines || line.starts_with("[… ") {
            break;
        }
        let numbered = format!("{n:>6}\t{line}\n");
        if content.len() + numbered.len() > budget {
            break;
        }
        content.push_str(&numbered);
        end = n;
    }
    let total = input.stdout_lines;
    let truncated = end < total;
    let range = if total == 0 {
        "empty".to_owned()
    } else {
        format!("lines 1-{end} of {total}")
    };
    let mut text = content.clone();
    text.push_str(&format!("[{range}; content_hash {}]\n", input.stdout_hash));
    if truncated {
        text.push_str(&format!(
            "[truncated: lines {}-{total} not shown]\n",
            end + 1
        ));
    }
    Formatted {
        summary: Some(range),
        structured: Some(json!({
            "content": content,
            "content_hash": input.stdout_hash,
            "start_line": 1,
            "end_line": end,
            "total_lines": total,
            "truncated": truncated,
        })),
        text,
        failure: input.exit_failure(),
        left_out: truncated,
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::runtime::format::fixture::input;

    #[test]
    fn numbers_lines_and_marks_truncation() {
        let mut i = input("cat a", 0, "a\nb\nc\n");
        i.max_lines = 2;
        let f = format(&i);
        assert_eq!(
            f.structured.unwrap(),
            json!({
                "content": "     1\ta\n     2\tb\n",
                "content_hash": "h",
                "start_line": 1,
                "end_line": 2,
                "total_lines": 3,
                "truncated": true,
            })
        );
        assert_eq!(
            f.text,
            "     1\ta\n     2\tb\n[lines 1-2 of 3; content_hash h]\n[truncated: lines 3-3 not shown]\n"
        );
    }
}
