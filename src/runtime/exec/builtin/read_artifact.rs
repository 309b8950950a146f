//! `read_artifact`: a line range or a byte range of a stored artifact (the full output of an
//! earlier call), with the artifact's total size so the model can page through it.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{BuiltinContext, Step, parse_args};
use crate::ir::ErrorType;
use crate::runtime::artifacts::{ArtifactError, ArtifactRange, PartError, ReadLimits};
use crate::runtime::exec::{ExecFailure, RawOutcome};

/// Most bytes one byte-range read returns (the contract's `length` maximum).
const MAX_LENGTH: u64 = 65_536;
/// Room left under the output limits for the footer line, so that the output policy never
/// cuts the footer (or anything) off a part.
const FOOTER_BYTES: u64 = 256;

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
    let range = if by_bytes {
        ArtifactRange::Bytes {
            offset: a.offset.unwrap_or(0),
            length: Some(a.length.unwrap_or(MAX_LENGTH).min(MAX_LENGTH)),
        }
    } else {
        ArtifactRange::Lines {
            start: a.start_line.unwrap_or(1),
            end: a.end_line,
        }
    };
    let limits = ReadLimits {
        max_bytes: cx
            .output
            .max_bytes
            .saturating_sub(FOOTER_BYTES)
            .clamp(1, MAX_LENGTH),
        max_lines: cx.output.max_lines.saturating_sub(1).max(1),
    };
    // Artifacts can be gigabytes (a command tool's whole output, streamed to the store): only
    // the range asked for is read.
    let part = cx
        .artifacts
        .read_part_as(&a.artifact_id, &cx.owner, range, limits)
        .map_err(|e| match e {
            PartError::PastEnd(m) => ExecFailure::new(ErrorType::SemanticValidationError, m),
            PartError::Artifact(e @ ArtifactError::InvalidId(_)) => {
                ExecFailure::new(ErrorType::InvalidArguments, e.to_string())
            }
            PartError::Artifact(e @ ArtifactError::NotFound(_)) => {
                ExecFailure::new(ErrorType::ResourceNotFound, e.to_string())
            }
            PartError::Artifact(e @ ArtifactError::Io(_)) => {
                ExecFailure::new(ErrorType::RuntimeException, e.to_string())
            }
        })?;
    let mut shown = part.text.clone();
    if !shown.is_empty() && !shown.ends_with('\n') {
        shown.push('\n');
    }
    shown.push_str(&part.footer(&a.artifact_id));
    shown.push('\n');
    let (unit, total) = if by_bytes {
        ("bytes", part.total_bytes)
    } else {
        ("lines", part.total_lines)
    };
    let summary = format!("artifact {unit} {}-{} of {total}", part.start, part.end);
    let structured = json!({
        "text": part.text,
        "start": part.start,
        "end": part.end,
        "total_bytes": part.total_bytes,
        "total_lines": part.total_lines,
        "truncated": part.truncated,
    });
    let mut out = RawOutcome::success(structured, shown).with_summary(summary);
    out.truncated = part.truncated;
    Ok(out)
}
