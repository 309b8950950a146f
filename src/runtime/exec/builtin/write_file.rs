//! `write_file`: create a file, or replace one when `overwrite` says so; atomic (temp file,
//! fsync, rename) beneath the workspace root. Writing the content a file already has succeeds
//! without `overwrite`, so a replayed call is harmless (the contract says idempotent). The path
//! arrives resolved: a symbolic link inside the workspace is written through (its target is
//! replaced, the link stays), and the rules judged that target.
//!
//! Protected paths and anything in a `.git` folder are refused (POLICY_DENIED). The folder is
//! opened (and created) race-free and locked; the old file is looked at and the new one renamed
//! into place through that folder's descriptor, so a link swapped into the path after the
//! check is never followed, and an existing file that is another name of a protected file is
//! neither compared nor replaced.

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
struct Args {
    path: String,
    content: String,
    #[serde(default)]
    overwrite: bool,
}

pub(super) fn run(args: &Value, cx: &BuiltinContext) -> Step<RawOutcome> {
    let a: Args = parse_args(args, "write_file")?;
    let p = checked(cx, &a.path)?;
    let cap = cx.workspace.file_limits().edit;
    if a.content.len() as u64 > cap {
        return Err(too_large(
            p.as_str(),
            a.content.len() as u64,
            cap,
            "write_file",
            "edit_file_size",
            "Write it in parts with a command tool.",
        ));
    }
    let refused = |e: AccessError| match e {
        AccessError::IsAFolder { .. } => ExecFailure::new(
            ErrorType::SemanticValidationError,
            format!("`{}` is a folder", a.path),
        ),
        e => access_failure(e, "nothing was written"),
    };
    // "Does it exist, and with what" and the write are one step against every other writer of
    // the folder (created first: the write would create it anyway).
    let lock = cx.workspace.lock_folder_of(&p, true).map_err(refused)?;
    let existing = lock.open_existing(&cx.workspace).map_err(refused)?;
    let hash = content_hash(a.content.as_bytes());
    let path = shown(&p).to_owned();
    let created = existing.is_none();
    let mut mode = None;
    if let Some(old) = existing {
        let size = old.size();
        let file = old.into_file();
        mode = file.metadata().ok().map(|m| m.permissions().mode());
        if !a.overwrite {
            let same = size == a.content.len() as u64
                && hash_of(file, cap).map_err(|e| io_failure(&e, &a.path))? == hash;
            if !same {
                return Err(ExecFailure::new(
                    ErrorType::PreconditionFailed,
                    format!("`{path}` exists already and overwrite is not set"),
                ));
            }
            let structured = json!({"path": path, "bytes": a.content.len(), "content_hash": hash, "created": false});
            let text = format!(
                "`{path}` already has this content ({} bytes); content_hash {hash}\n",
                a.content.len()
            );
            return Ok(
                RawOutcome::success(structured, text).with_summary(format!("{path} unchanged"))
            );
        }
    }
    lock.replace(a.content.as_bytes(), mode)
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

/// The content hash of an open file, streamed (at most `cap` bytes are read).
fn hash_of(file: std::fs::File, cap: u64) -> std::io::Result<String> {
    let mut h = blake3::Hasher::new();
    std::io::copy(&mut file.take(cap), &mut h)?;
    Ok(h.finalize().to_hex().to_string())
}

#[cfg(test)]
mod tests {
    use super::super::Builtin;
    use super::super::testing::{Tree, run};
    use crate::ir::ErrorType;
    use serde_json::json;

    /// Below the permission stage: protected targets and `.git` at any depth are refused, and
    /// nothing is written there; another name of `.env` is neither compared (no oracle on its
    /// content) nor replaced.
    #[test]
    fn protected_targets_are_refused() {
        let t = Tree::new();
        let secret = format!("API_KEY={}\n", Tree::SECRET);
        for (path, overwrite) in [
            (".env", true),
            ("keys/new.pem", false),
            (".git/hooks/pre-commit", false),
            ("vendor/lib/.git/hooks/post-checkout", false),
            (".git/config", true),
            ("notes.txt", false),
            ("notes.txt", true),
        ] {
            let r = run(
                &t.cx,
                Builtin::WriteFile,
                json!({"path": path, "content": secret, "overwrite": overwrite}),
            );
            let (ty, message) = r.failure.unwrap();
            assert_eq!(ty, ErrorType::PolicyDenied, "{path}: {message}");
            assert!(message.ends_with("; nothing was written"), "{message}");
        }
        assert!(!t.path(".git/hooks/pre-commit").exists());
        assert!(!t.path("vendor/lib/.git/hooks/post-checkout").exists());
        assert!(!t.path("keys/new.pem").exists());
        assert_eq!(
            std::fs::read_to_string(t.path("notes.txt")).unwrap(),
            secret
        );
        let ok = run(
            &t.cx,
            Builtin::WriteFile,
            json!({"path": "src/new/x.py", "content": "x\n"}),
        );
        assert!(ok.failure.is_none(), "{ok:?}");
        assert_eq!(
            std::fs::read_to_string(t.path("src/new/x.py")).unwrap(),
            "x\n"
        );
    }

    /// A path handed to the builtin that now leads through a link (here into `.git/hooks`) is
    /// refused, not followed; nothing lands where the link leads. (The race where the link
    /// appears after this check is the open's: see the workspace tests and
    /// tests/escape_builtins.rs.)
    #[test]
    fn a_folder_link_in_the_path_is_refused() {
        let t = Tree::new();
        std::os::unix::fs::symlink(".git/hooks", t.path("out")).unwrap();
        let r = run(
            &t.cx,
            Builtin::WriteFile,
            json!({"path": "out/pre-commit", "content": "x"}),
        );
        assert_eq!(r.failure.unwrap().0, ErrorType::SandboxViolation);
        assert!(!t.path(".git/hooks/pre-commit").exists());
    }
}
