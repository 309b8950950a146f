//! `list_dir`: one folder's entries (not recursive), folders first, with kind and size. Kinds
//! come from the entry itself, so a symbolic link is listed as `symlink`, never followed.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{BuiltinContext, Step, checked, io_failure, parse_args, shown, to_usize};
use crate::ir::ErrorType;
use crate::runtime::exec::{ExecFailure, RawOutcome};

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
    let dir = cx.workspace.dir();
    let meta = dir.metadata(p.as_path()).map_err(|e| io_failure(&e, raw))?;
    if !meta.is_dir() {
        return Err(ExecFailure::new(
            ErrorType::SemanticValidationError,
            format!("`{raw}` is a file, not a folder; use read_file to read it"),
        ));
    }
    let entries = if p.as_str() == "." {
        dir.entries()
    } else {
        dir.read_dir(p.as_path())
    }
    .map_err(|e| io_failure(&e, raw))?;
    let mut items: Vec<(u8, String, &'static str, u64)> = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
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
        let size = if kind == "file" {
            entry.metadata().map(|m| m.len()).unwrap_or(0)
        } else {
            0
        };
        items.push((rank, name, kind, size));
    }
    items.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
    let total = items.len();
    let max = to_usize(a.max_entries.unwrap_or(200)).max(1);
    let truncated = total > max;
    items.truncate(max);
    let path = shown(&p).to_owned();
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
    let structured = json!({
        "path": path,
        "entries": items.iter().map(|(_, name, kind, size)| json!({"name": name, "kind": kind, "size": size})).collect::<Vec<_>>(),
        "truncated": truncated,
    });
    let mut out =
        RawOutcome::success(structured, text).with_summary(format!("{path}: {total} entries"));
    out.truncated = truncated;
    Ok(out)
}
