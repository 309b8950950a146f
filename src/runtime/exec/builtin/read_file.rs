//! `read_file`: a range of numbered lines, the blake3 hash of the whole file (apply_patch's
//! `expected_hash`) and a truncation marker when the range or the byte limit cut the output.

use std::io::{BufRead, BufReader};

use serde::Deserialize;
use serde_json::{Value, json};

use super::{BuiltinContext, Step, checked, io_failure, parse_args, shown, to_usize};
use crate::ir::ErrorType;
use crate::runtime::exec::{ExecFailure, RawOutcome};

/// The most lines one call returns (the contract says 2000 after start_line).
const MAX_RANGE_LINES: u64 = 2000;
/// Room left under the byte limit for the footer the model reads.
const FOOTER_RESERVE: u64 = 512;

#[derive(Deserialize)]
struct Args {
    path: String,
    #[serde(default)]
    start_line: Option<u64>,
    #[serde(default)]
    end_line: Option<u64>,
}

pub(super) fn run(args: &Value, cx: &BuiltinContext) -> Step<RawOutcome> {
    let a: Args = parse_args(args, "read_file")?;
    let p = checked(cx, &a.path)?;
    let file = cx
        .workspace
        .dir()
        .open(p.as_path())
        .map_err(|e| io_failure(&e, &a.path))?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(ExecFailure::new(
            ErrorType::SemanticValidationError,
            format!(
                "`{}` is a folder; use list_dir to see what is in it",
                a.path
            ),
        ));
    }
    let start = a.start_line.unwrap_or(1).max(1);
    let max_lines = MAX_RANGE_LINES.min(cx.output.max_lines.max(1));
    let last_wanted = a
        .end_line
        .unwrap_or(u64::MAX)
        .min(start.saturating_add(max_lines - 1));
    let budget = to_usize(cx.output.max_bytes.saturating_sub(FOOTER_RESERVE).max(256));

    let mut reader = BufReader::new(file.into_std());
    let mut hasher = blake3::Hasher::new();
    let mut buf = Vec::new();
    let mut content = String::new();
    let (mut n, mut last_shown) = (0u64, 0u64);
    let mut cut_by_bytes = false;
    loop {
        buf.clear();
        let read = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| io_failure(&e, &a.path))?;
        if read == 0 {
            break;
        }
        hasher.update(&buf);
        n += 1;
        if n < start || n > last_wanted || cut_by_bytes {
            continue;
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim_end_matches('\n').trim_end_matches('\r');
        let numbered = format!("{n:>6}\t{line}\n");
        if content.len() + numbered.len() > budget {
            cut_by_bytes = true;
            continue;
        }
        content.push_str(&numbered);
        last_shown = n;
    }
    let total = n;
    let hash = hasher.finalize().to_hex().to_string();
    if start > total && total > 0 {
        return Err(ExecFailure::new(
            ErrorType::SemanticValidationError,
            format!(
                "start_line {start} is past the end of `{}`, which has {total} lines",
                a.path
            ),
        ));
    }
    let end = if last_shown == 0 {
        start - 1
    } else {
        last_shown
    };
    let asked_end = a.end_line.unwrap_or(total).min(total);
    let truncated = end < asked_end;
    let path = shown(&p).to_owned();
    let mut text = content.clone();
    let range = if total == 0 {
        "empty file".to_owned()
    } else {
        format!("lines {start}-{end} of {total}")
    };
    text.push_str(&format!("[{path}: {range}; content_hash {hash}]\n"));
    if truncated {
        text.push_str(&format!(
            "[truncated: lines {}-{asked_end} not shown; continue with start_line={}]\n",
            end + 1,
            end + 1
        ));
    }
    let structured = json!({
        "content": content,
        "content_hash": hash,
        "start_line": start,
        "end_line": end,
        "total_lines": total,
        "truncated": truncated,
    });
    let mut out = RawOutcome::success(structured, text).with_summary(format!("{path}: {range}"));
    out.truncated = truncated;
    Ok(out)
}
