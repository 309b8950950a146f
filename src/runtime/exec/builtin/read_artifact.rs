//! `read_artifact`: a line range or a byte range of a stored artifact (the full output of an
//! earlier call), with the artifact's total size so the model can page through it.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{BuiltinContext, Step, parse_args, to_usize};
use crate::ir::ErrorType;
use crate::runtime::artifacts::{ArtifactError, count_lines};
use crate::runtime::exec::{ExecFailure, RawOutcome};

/// Most bytes one byte-range read returns (the contract's `length` maximum).
const MAX_LENGTH: u64 = 65_536;

#[derive(Deserialize)]
struct Args {
    artifact_id: String,
    #[serde(default)]
    start_line: Option<u64>,
    #[serde(default)]
    end_line: Option<u64>,
    #[serde(default)]
    offset: Option<u64>,
    #[serde(default)]
    length: Option<u64>,
}

pub(super) fn run(args: &Value, cx: &BuiltinContext) -> Step<RawOutcome> {
    let a: Args = parse_args(args, "read_artifact")?;
    let by_lines = a.start_line.is_some() || a.end_line.is_some();
    let by_bytes = a.offset.is_some() || a.length.is_some();
    if by_lines && by_bytes {
        return Err(ExecFailure::new(
            ErrorType::SemanticValidationError,
            "give a line range (start_line/end_line) or a byte range (offset/length), not both",
        ));
    }
    let bytes = cx.artifacts.get(&a.artifact_id).map_err(|e| match e {
        ArtifactError::InvalidId(_) => ExecFailure::new(ErrorType::InvalidArguments, e.to_string()),
        ArtifactError::NotFound(_) => ExecFailure::new(ErrorType::ResourceNotFound, e.to_string()),
        ArtifactError::Io(_) => ExecFailure::new(ErrorType::RuntimeException, e.to_string()),
    })?;
    let total_bytes = bytes.len() as u64;
    let total_lines = count_lines(&bytes);
    let budget = cx.output.max_bytes.max(1);
    let (text, start, end, truncated) = if by_bytes {
        let offset = a.offset.unwrap_or(0);
        if offset > total_bytes || (offset == total_bytes && total_bytes > 0) {
            return Err(ExecFailure::new(
                ErrorType::SemanticValidationError,
                format!("offset {offset} is past the end of the artifact ({total_bytes} bytes)"),
            ));
        }
        let len = a.length.unwrap_or(MAX_LENGTH).min(MAX_LENGTH).min(budget);
        let end = offset.saturating_add(len).min(total_bytes);
        let slice = &bytes[to_usize(offset)..to_usize(end)];
        let text = String::from_utf8_lossy(slice).into_owned();
        (
            text,
            offset,
            end.saturating_sub(1).max(offset),
            end < total_bytes,
        )
    } else {
        let start = a.start_line.unwrap_or(1).max(1);
        if start > total_lines && total_lines > 0 {
            return Err(ExecFailure::new(
                ErrorType::SemanticValidationError,
                format!("start_line {start} is past the end of the artifact ({total_lines} lines)"),
            ));
        }
        let last = a
            .end_line
            .unwrap_or(u64::MAX)
            .min(start.saturating_add(cx.output.max_lines.max(1) - 1));
        let mut text = String::new();
        let mut end = start.saturating_sub(1);
        for (i, line) in bytes.split_inclusive(|b| *b == b'\n').enumerate() {
            let n = i as u64 + 1;
            if n < start {
                continue;
            }
            if n > last {
                break;
            }
            let line = String::from_utf8_lossy(line);
            if (text.len() + line.len()) as u64 > budget {
                break;
            }
            text.push_str(&line);
            end = n;
        }
        let asked_end = a.end_line.unwrap_or(total_lines).min(total_lines);
        (text, start, end, end < asked_end)
    };
    let unit = if by_bytes { "bytes" } else { "lines" };
    let mut shown_text = text.clone();
    if !shown_text.is_empty() && !shown_text.ends_with('\n') {
        shown_text.push('\n');
    }
    shown_text.push_str(&format!(
        "[{}: {unit} {start}-{end} of {}{}]\n",
        a.artifact_id,
        if by_bytes { total_bytes } else { total_lines },
        if truncated { "; more follows" } else { "" }
    ));
    let structured = json!({
        "text": text,
        "start": start,
        "end": end,
        "total_bytes": total_bytes,
        "total_lines": total_lines,
        "truncated": truncated,
    });
    let mut out = RawOutcome::success(structured, shown_text).with_summary(format!(
        "artifact {unit} {start}-{end} of {}",
        if by_bytes { total_bytes } else { total_lines }
    ));
    out.truncated = truncated;
    Ok(out)
}
