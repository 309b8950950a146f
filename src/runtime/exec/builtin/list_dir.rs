//! `list_dir`: one folder's entries (not recursive), folders first, with kind and size. Kinds
//! come from the entry itself, so a symbolic link is listed as `symlink`, never followed.
//!
//! The folder is opened race-free beneath the root; a protected folder (or `.git`) is refused.
//! Protected entries in it — and files that are other names (hard links) of protected files —
//! are not listed: the result counts them as `withheld`.

use cap_std::fs::MetadataExt;

use serde::Deserialize;
use serde_json::{Value, json};

use super::walk::withheld_note;
use super::{BuiltinContext, Step, access_failure, checked, parse_args, shown, stopped, to_usize};
use crate::ir::ErrorType;
use crate::runtime::exec::{ExecFailure, RawOutcome};
use crate::runtime::workspace::AccessError;

#[derive(Deserialize)]
struct Args {
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    max_entries: Option<u64>,
}

pub(super) fn run(args: &Value, cx: &BuiltinContext) -> Step<RawOutcome> {
    let a: Args = parse_args(args, "list_dir")?;
    let raw = a.path.as_deref().unwrap_or(".");
    let p = checked(cx, raw)?;
    let dir = cx.workspace.open_folder(p.as_str()).map_err(|e| match e {
        AccessError::NotAFolder { .. } => ExecFailure::new(
            ErrorType::SemanticValidationError,
            format!("`{raw}` is a file, not a folder; use read_file to read it"),
        ),
        e => access_failure(e, "nothing was listed"),
    })?;
    let entries = dir.entries().map_err(|e| {
        access_failure(
            AccessError::Io {
                path: raw.to_owned(),
                source: e,
            },
            "nothing was listed",
        )
    })?;
    let path = shown(&p).to_owned();
    let child = |name: &str| {
        if path == "." {
            name.to_owned()
        } else {
            format!("{path}/{name}")
        }
    };
    let mut items: Vec<(u8, String, &'static str, u64)> = Vec::new();
    let mut withheld = 0usize;
    for entry in entries.flatten() {
        stopped(cx)?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if cx.workspace.off_limits(&child(&name)).is_some() {
            withheld += 1;
            continue;
        }
        let Ok(ft) = entry.file_type() else { continue };
        let (rank, kind) = if ft.is_dir() {
            (0, "dir")
        } else if ft.is_symlink() {
            (1, "symlink")
        } else if ft.is_file() {
            (1, "file")
        } else {
            (1, "other")
        };
        let mut size = 0;
        if kind == "file" {
            let meta = entry.metadata().ok();
            size = meta.as_ref().map_or(0, |m| m.len());
            // Another name of a protected file: not even its name and size are shown.
            if meta.is_some_and(|m| m.nlink() > 1)
                && cx
                    .workspace
                    .open_file(&child(&name))
                    .is_err_and(|e| e.is_protection())
            {
                withheld += 1;
                continue;
            }
        }
        items.push((rank, name, kind, size));
    }
    items.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
    let total = items.len();
    let max = to_usize(a.max_entries.unwrap_or(200)).max(1);
    let truncated = total > max;
    items.truncate(max);
    let mut text = String::new();
    for (_, name, kind, size) in &items {
        match *kind {
            "dir" => text.push_str(&format!("{name}/\n")),
            "file" => text.push_str(&format!("{name} ({size} bytes)\n")),
            other => text.push_str(&format!("{name} ({other})\n")),
        }
    }
    if truncated {
        text.push_str(&format!(
            "[{} more entries not shown; raise max_entries]\n",
            total - items.len()
        ));
    }
    text.push_str(&withheld_note(withheld));
    let structured = json!({
        "path": path,
        "entries": items.iter().map(|(_, name, kind, size)| json!({"name": name, "kind": kind, "size": size})).collect::<Vec<_>>(),
        "truncated": truncated,
        "withheld": withheld,
    });
    let mut out =
        RawOutcome::success(structured, text).with_summary(format!("{path}: {total} entries"));
    out.truncated = truncated;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::Builtin;
    use super::super::testing::{Tree, run};
    use crate::ir::ErrorType;
    use serde_json::json;

    #[test]
    fn protected_entries_are_withheld_and_protected_folders_refused() {
        let t = Tree::new();
        let list = |path: &str| run(&t.cx, Builtin::ListDir, json!({"path": path}));
        let root = list(".").structured.unwrap();
        assert_eq!(
            root["entries"],
            json!([
                {"name": "keys", "kind": "dir", "size": 0},
                {"name": "src", "kind": "dir", "size": 0},
                {"name": "vendor", "kind": "dir", "size": 0},
            ])
        );
        // .env, .git and notes.txt (another name of .env).
        assert_eq!(root["withheld"], 3);
        let keys = list("keys").structured.unwrap();
        assert_eq!(
            (keys["entries"].clone(), keys["withheld"].clone()),
            (json!([]), json!(2))
        );
        let lib = list("vendor/lib").structured.unwrap();
        assert_eq!(
            lib["entries"],
            json!([{"name": "lib.py", "kind": "file", "size": 10}])
        );
        assert_eq!(lib["withheld"], 2);
        for path in [".git", ".git/hooks", "vendor/lib/.git"] {
            let r = list(path);
            assert_eq!(
                r.failure.as_ref().map(|f| f.0),
                Some(ErrorType::PolicyDenied),
                "{path}"
            );
            assert!(r.failure.unwrap().1.ends_with("; nothing was listed"));
        }
    }
}
