//! `read_artifact`: a line range or a byte range of a stored artifact (the full output of an
//! earlier call), with the artifact's total size so the model can page through it.

use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};

use serde::Deserialize;
use serde_json::{Value, json};

use super::{BuiltinContext, Step, parse_args, to_usize};
use crate::ir::ErrorType;
use crate::runtime::artifacts::ArtifactError;
use crate::runtime::exec::{ExecFailure, RawOutcome};
use crate::runtime::output::Redactor;

/// Lines of a file without metadata (an artifact from before metadata recorded them).
fn count_file_lines(file: &std::fs::File) -> std::io::Result<u64> {
    let mut r = BufReader::new(file);
    let (mut n, mut last) = (0u64, b'\n');
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        n += buf.iter().filter(|b| **b == b'\n').count() as u64;
        last = buf[buf.len() - 1];
        let len = buf.len();
        r.consume(len);
    }
    Ok(n + u64::from(last != b'\n'))
}

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
    let failure = |e: ArtifactError| match e {
        ArtifactError::InvalidId(_) => ExecFailure::new(ErrorType::InvalidArguments, e.to_string()),
        ArtifactError::NotFound(_) => ExecFailure::new(ErrorType::ResourceNotFound, e.to_string()),
        ArtifactError::Io(_) => ExecFailure::new(ErrorType::RuntimeException, e.to_string()),
    };
    // Artifacts can be gigabytes (a process tool's whole output, streamed to the store): read
    // only the range asked for, and take the totals from the metadata.
    let file = cx.artifacts.open(&a.artifact_id).map_err(failure)?;
    let io = |e: std::io::Error| ExecFailure::new(ErrorType::RuntimeException, e.to_string());
    let (total_bytes, total_lines, redaction) = match cx.artifacts.metadata(&a.artifact_id) {
        Ok(m) => (m.reference.size, m.reference.lines, m.redact),
        Err(_) => {
            let len = file.metadata().map_err(io)?.len();
            (
                len,
                count_file_lines(&file).map_err(io)?,
                Default::default(),
            )
        }
    };
    let budget = cx.output.max_bytes.max(1);
    let mut reader = BufReader::new(file);
    reader.seek(SeekFrom::Start(0)).map_err(io)?;
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
        reader.seek(SeekFrom::Start(offset)).map_err(io)?;
        let mut slice = vec![0u8; to_usize(end - offset)];
        reader.read_exact(&mut slice).map_err(io)?;
        let text = String::from_utf8_lossy(&slice).into_owned();
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
        let mut line = Vec::new();
        let mut n = 0u64;
        loop {
            line.clear();
            if reader.read_until(b'\n', &mut line).map_err(io)? == 0 {
                break;
            }
            n += 1;
            if n < start {
                continue;
            }
            if n > last {
                break;
            }
            let l = String::from_utf8_lossy(&line);
            if (text.len() + l.len()) as u64 > budget {
                break;
            }
            text.push_str(&l);
            end = n;
        }
        let asked_end = a.end_line.unwrap_or(total_lines).min(total_lines);
        (text, start, end, end < asked_end)
    };
    // The file keeps the raw output; what the model sees is redacted as the producing call's
    // output was.
    let patterns: Vec<regex::Regex> = redaction
        .patterns
        .iter()
        .filter_map(|p| regex::Regex::new(p).ok())
        .collect();
    let redactor = Redactor {
        secrets: redaction.secrets,
        patterns: &patterns,
        literals: &redaction.literals,
    };
    let text = redactor.edges(&redactor.text(&text));
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
