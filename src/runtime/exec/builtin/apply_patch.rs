//! `apply_patch`: exact-text replacements bound to the file's content hash. The edits apply only
//! when the file still hashes to `expected_hash` (else PRECONDITION_FAILED), so a stale or
//! replayed patch never clobbers newer content — conditionally idempotent. Each `old_text` must
//! occur exactly once (else SEMANTIC_VALIDATION_ERROR); all edits apply or none. Returns the new
//! hash and a unified diff. The check and the write happen under the folder's lock
//! ([`Workspace::lock_folder_of`](crate::runtime::workspace::Workspace::lock_folder_of)), so two
//! patches built on one hash never both apply, whatever the scheduler did.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{BuiltinContext, Step, checked, content_hash, io_failure, parse_args, shown};
use crate::ir::ErrorType;
use crate::runtime::exec::{ExecFailure, RawOutcome};

#[derive(Deserialize)]
struct Edit {
    old_text: String,
    new_text: String,
}

#[derive(Deserialize)]
struct Args {
    path: String,
    expected_hash: String,
    edits: Vec<Edit>,
}

pub(super) fn run(args: &Value, cx: &BuiltinContext) -> Step<RawOutcome> {
    let a: Args = parse_args(args, "apply_patch")?;
    let p = checked(cx, &a.path)?;
    let path = shown(&p).to_owned();
    // The hash check and the write are one step against every other writer of this folder;
    // a missing folder means a missing file, which the read reports.
    let _lock = match cx.workspace.lock_folder_of(&p) {
        Ok(lock) => Some(lock),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_failure(&e, &a.path)),
    };
    let bytes = cx
        .workspace
        .dir()
        .read(p.as_path())
        .map_err(|e| io_failure(&e, &a.path))?;
    let current = content_hash(&bytes);
    if current != a.expected_hash {
        return Err(ExecFailure::new(
            ErrorType::PreconditionFailed,
            format!(
                "`{path}` changed since it was read: its content hash is {current}, not expected_hash {}",
                a.expected_hash
            ),
        ));
    }
    let Ok(old) = String::from_utf8(bytes) else {
        return Err(ExecFailure::new(
            ErrorType::SemanticValidationError,
            format!("`{path}` is not UTF-8 text, so it cannot be patched by text"),
        ));
    };
    let mut new = old.clone();
    for (i, e) in a.edits.iter().enumerate() {
        match new.matches(e.old_text.as_str()).count() {
            1 => new = new.replacen(e.old_text.as_str(), &e.new_text, 1),
            0 => {
                return Err(ExecFailure::new(
                    ErrorType::SemanticValidationError,
                    format!(
                        "edit {}: old_text was not found in `{path}`; nothing was changed",
                        i + 1
                    ),
                ));
            }
            n => {
                return Err(ExecFailure::new(
                    ErrorType::SemanticValidationError,
                    format!(
                        "edit {}: old_text occurs {n} times in `{path}`; include more surrounding text so it occurs once. Nothing was changed",
                        i + 1
                    ),
                ));
            }
        }
    }
    cx.workspace
        .write_atomic(&p, new.as_bytes())
        .map_err(|e| io_failure(&e, &a.path))?;
    let new_hash = content_hash(new.as_bytes());
    let diff = similar::TextDiff::from_lines(&old, &new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string();
    let (added, removed) = diff.lines().fold((0, 0), |(a, r), l| {
        if l.starts_with('+') && !l.starts_with("+++") {
            (a + 1, r)
        } else if l.starts_with('-') && !l.starts_with("---") {
            (a, r + 1)
        } else {
            (a, r)
        }
    });
    let applied = a.edits.len();
    let structured = json!({"path": path, "new_hash": new_hash, "diff": diff, "applied": applied});
    let text = format!("{diff}[{path}: new content_hash {new_hash}]\n");
    let plural = if applied == 1 { "" } else { "s" };
    Ok(RawOutcome::success(structured, text).with_summary(format!(
        "applied {applied} edit{plural} to {path} (+{added} -{removed})"
    )))
}
