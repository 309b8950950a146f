//! `apply_patch`: exact-text replacements bound to the file's content hash. The edits apply only
//! when the file still hashes to `expected_hash` (else PRECONDITION_FAILED), so a stale or
//! replayed patch never clobbers newer content — conditionally idempotent. Each `old_text` must
//! occur exactly once (else SEMANTIC_VALIDATION_ERROR); all edits apply or none. Returns the new
//! hash and a unified diff. The check and the write happen under the folder's lock
//! ([`Workspace::lock_folder_of`](crate::runtime::workspace::Workspace::lock_folder_of)), so two
//! patches built on one hash never both apply, whatever the scheduler did.
//!
//! Protected paths and anything in a `.git` folder are refused (POLICY_DENIED); the file is
//! opened and replaced through the locked folder's descriptor, never through a link, and one
//! that is another name of a protected file is refused. The file is held in memory, so files
//! above `budgets.edit_file_size` are refused (OUTPUT_LIMIT).

use std::io::Read;
use std::os::unix::fs::PermissionsExt;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{
    BuiltinContext, Step, access_failure, checked, content_hash, io_failure, parse_args, shown,
    too_large,
};
use crate::ir::ErrorType;
use crate::runtime::exec::{ExecFailure, RawOutcome};
use crate::runtime::workspace::AccessError;

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
    let refused = |e: AccessError| access_failure(e, "nothing was changed");
    // The hash check and the write are one step against every other writer of this folder.
    let lock = cx.workspace.lock_folder_of(&p, false).map_err(refused)?;
    let Some(file) = lock.open_existing(&cx.workspace).map_err(refused)? else {
        return Err(ExecFailure::new(
            ErrorType::ResourceNotFound,
            format!("`{}` does not exist", a.path),
        ));
    };
    let cap = cx.workspace.file_limits().edit;
    if file.size() > cap {
        return Err(too_large(
            &path,
            file.size(),
            cap,
            "apply_patch",
            "edit_file_size",
            "Change it with a command tool.",
        ));
    }
    let file = file.into_file();
    let mode = file.metadata().ok().map(|m| m.permissions().mode());
    let mut bytes = Vec::new();
    file.take(cap)
        .read_to_end(&mut bytes)
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
    lock.replace(new.as_bytes(), mode)
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

#[cfg(test)]
mod tests {
    use super::super::Builtin;
    use super::super::content_hash;
    use super::super::testing::{Tree, run};
    use crate::ir::ErrorType;
    use serde_json::json;

    #[test]
    fn protected_targets_are_refused() {
        let t = Tree::new();
        let secret = format!("API_KEY={}\n", Tree::SECRET);
        let hash = content_hash(secret.as_bytes());
        for path in [
            ".env",
            "keys/server.pem",
            "vendor/lib/.git/config",
            "notes.txt",
        ] {
            let r = run(
                &t.cx,
                Builtin::ApplyPatch,
                json!({"path": path, "expected_hash": hash, "edits": [{"old_text": "API_KEY", "new_text": "X"}]}),
            );
            let (ty, message) = r.failure.unwrap();
            assert_eq!(ty, ErrorType::PolicyDenied, "{path}: {message}");
            assert!(!message.contains(Tree::SECRET));
            assert!(message.ends_with("; nothing was changed"), "{message}");
        }
        assert_eq!(std::fs::read_to_string(t.path(".env")).unwrap(), secret);
    }

    #[test]
    fn files_above_the_edit_cap_are_refused() {
        let mut t = Tree::new();
        let ws = crate::runtime::workspace::Workspace::open(t.dir.path())
            .unwrap()
            .with_file_limits(crate::runtime::workspace::FileLimits {
                read: 1 << 20,
                search: 1 << 20,
                edit: 4096,
            });
        t.cx.workspace = std::sync::Arc::new(ws);
        let text = "a\n".repeat(3000);
        std::fs::write(t.path("src/big.py"), &text).unwrap();
        let r = run(
            &t.cx,
            Builtin::ApplyPatch,
            json!({"path": "src/big.py", "expected_hash": content_hash(text.as_bytes()), "edits": [{"old_text": "a", "new_text": "b"}]}),
        );
        assert_eq!(
            r.failure.unwrap(),
            (
                ErrorType::OutputLimit,
                "`src/big.py` is 5.9 KiB (6000 bytes); apply_patch works on files up to 4 KiB (budgets.edit_file_size in toolgate.yaml). Change it with a command tool.".to_owned()
            )
        );
    }
}
