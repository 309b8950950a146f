//! `write_file`: create a file, or replace one when `overwrite` says so; atomic (temp file,
//! fsync, rename) beneath the workspace root. Writing the content a file already has succeeds
//! without `overwrite`, so a replayed call is harmless (the contract says idempotent). The path
//! arrives resolved: a symbolic link inside the workspace is written through (its target is
//! replaced, the link stays), and the rules judged that target.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{BuiltinContext, Step, checked, content_hash, io_failure, parse_args, shown};
use crate::ir::ErrorType;
use crate::runtime::exec::{ExecFailure, RawOutcome};

#[derive(Deserialize)]
struct Args {
    path: String,
    content: String,
    #[serde(default)]
    overwrite: bool,
}

pub(super) fn run(args: &Value, cx: &BuiltinContext) -> Step<RawOutcome> {
    let a: Args = parse_args(args, "write_file")?;
    let p = checked(cx, &a.path)?;
    let dir = cx.workspace.dir();
    // "Does it exist, and with what" and the write are one step against every other writer of
    // the folder (created first: the write would create it anyway).
    if let Some(parent) = p.as_path().parent().filter(|p| !p.as_os_str().is_empty()) {
        dir.create_dir_all(parent)
            .map_err(|e| io_failure(&e, &a.path))?;
    }
    let _lock = cx
        .workspace
        .lock_folder_of(&p)
        .map_err(|e| io_failure(&e, &a.path))?;
    let existing = match dir.symlink_metadata(p.as_path()) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_failure(&e, &a.path)),
    };
    if existing.as_ref().is_some_and(|m| m.is_dir()) {
        return Err(ExecFailure::new(
            ErrorType::SemanticValidationError,
            format!("`{}` is a folder", a.path),
        ));
    }
    let hash = content_hash(a.content.as_bytes());
    let path = shown(&p).to_owned();
    let created = existing.is_none();
    if !created && !a.overwrite {
        let same = dir
            .read(p.as_path())
            .is_ok_and(|old| content_hash(&old) == hash);
        if !same {
            return Err(ExecFailure::new(
                ErrorType::PreconditionFailed,
                format!("`{path}` exists already and overwrite is not set"),
            ));
        }
        let structured =
            json!({"path": path, "bytes": a.content.len(), "content_hash": hash, "created": false});
        let text = format!(
            "`{path}` already has this content ({} bytes); content_hash {hash}\n",
            a.content.len()
        );
        return Ok(RawOutcome::success(structured, text).with_summary(format!("{path} unchanged")));
    }
    cx.workspace
        .write_atomic(&p, a.content.as_bytes())
        .map_err(|e| io_failure(&e, &a.path))?;
    let verb = if created { "created" } else { "replaced" };
    let structured =
        json!({"path": path, "bytes": a.content.len(), "content_hash": hash, "created": created});
    let text = format!(
        "Wrote {} bytes to {path} ({verb}); content_hash {hash}\n",
        a.content.len()
    );
    Ok(RawOutcome::success(structured, text).with_summary(format!("{path} {verb}")))
}
