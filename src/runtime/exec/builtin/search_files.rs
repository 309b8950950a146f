//! `search_files`: the workspace files whose text matches a regular expression, with the number
//! of matching lines in each. The walk honours .gitignore and .ignore files (even outside a git
//! repository) and skips hidden and binary files; every file is opened beneath the workspace
//! root, and symbolic links are not followed.

use std::io::Read;

use serde::Deserialize;
use serde_json::{Value, json};

use super::{BuiltinContext, Step, checked, io_failure, parse_args, shown, to_usize};
use crate::ir::ErrorType;
use crate::runtime::exec::{ExecFailure, RawOutcome};

/// Bytes of a file searched; the rest of a larger file is not.
const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;
/// Files visited before the walk stops (and the result says so).
pub(super) const MAX_WALK_FILES: usize = 100_000;
/// Bytes looked at to tell a binary file (a NUL byte) from text.
const BINARY_PROBE: usize = 8 * 1024;

#[derive(Deserialize)]
struct Args {
    pattern: String,
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    glob: Option<String>,
    #[serde(default)]
    case_sensitive: Option<bool>,
    #[serde(default)]
    max_results: Option<u64>,
}

pub(super) fn run(args: &Value, cx: &BuiltinContext) -> Step<RawOutcome> {
    let a: Args = parse_args(args, "search_files")?;
    let re = regex::bytes::RegexBuilder::new(&a.pattern)
        .case_insensitive(!a.case_sensitive.unwrap_or(true))
        .size_limit(10 * 1024 * 1024)
        .build()
        .map_err(|e| {
            ExecFailure::new(
                ErrorType::InvalidArguments,
                format!("pattern is not a valid regular expression: {e}"),
            )
        })?;
    let filter = match &a.glob {
        Some(g) => Some(
            globset::GlobBuilder::new(g)
                .literal_separator(true)
                .build()
                .map_err(|e| {
                    ExecFailure::new(
                        ErrorType::InvalidArguments,
                        format!("glob is not valid: {e}"),
                    )
                })?
                .compile_matcher(),
        ),
        None => None,
    };
    let root = a.path.as_deref().unwrap_or(".");
    let p = checked(cx, root)?;
    cx.workspace
        .dir()
        .metadata(p.as_path())
        .map_err(|e| io_failure(&e, root))?;
    let max = to_usize(a.max_results.unwrap_or(100)).max(1);

    let mut files: Vec<(String, u64)> = Vec::new();
    let mut visited = 0usize;
    let mut walk_cut = false;
    for entry in walker(cx, &p).build() {
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        visited += 1;
        if visited > MAX_WALK_FILES {
            walk_cut = true;
            break;
        }
        let Some(rel) = relative(cx, entry.path()) else {
            continue;
        };
        if filter.as_ref().is_some_and(|m| !m.is_match(&rel)) {
            continue;
        }
        let matches = count_matches(cx, &rel, &re);
        if matches > 0 {
            files.push((rel, matches));
        }
    }
    files.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let total = files.len();
    let truncated = total > max || walk_cut;
    files.truncate(max);
    let mut text: String = files.iter().map(|(f, n)| format!("{f}: {n}\n")).collect();
    if total > files.len() {
        text.push_str(&format!(
            "[{} more files not shown; raise max_results or narrow path/glob]\n",
            total - files.len()
        ));
    }
    if walk_cut {
        text.push_str(&format!(
            "[the search stopped after {MAX_WALK_FILES} files; narrow path or glob]\n"
        ));
    }
    let summary = format!(
        "{total} file{} under {} match /{}/",
        if total == 1 { "" } else { "s" },
        shown(&p),
        a.pattern
    );
    let structured = json!({
        "files": files.iter().map(|(path, matches)| json!({"path": path, "matches": matches})).collect::<Vec<_>>(),
        "total_files": total,
        "truncated": truncated,
    });
    let mut out = RawOutcome::success(structured, text).with_summary(summary);
    out.truncated = truncated;
    Ok(out)
}

/// The ignore-aware walker over a workspace folder, deterministic (sorted, no global config).
pub(super) fn walker(
    cx: &BuiltinContext,
    p: &crate::runtime::workspace::WorkspacePath,
) -> ignore::WalkBuilder {
    let mut w = ignore::WalkBuilder::new(cx.workspace.absolute(p));
    w.hidden(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .ignore(true)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b));
    w
}

/// The workspace-relative form of a walked path.
pub(super) fn relative(cx: &BuiltinContext, path: &std::path::Path) -> Option<String> {
    let rel = path.strip_prefix(cx.workspace.root()).ok()?;
    let s = rel.to_str()?;
    (!s.is_empty()).then(|| s.to_owned())
}

/// Matching lines in a text file, opened beneath the root (0 for binary or unreadable files).
fn count_matches(cx: &BuiltinContext, rel: &str, re: &regex::bytes::Regex) -> u64 {
    let Ok(file) = cx.workspace.dir().open(rel) else {
        return 0;
    };
    let mut bytes = Vec::new();
    if file
        .into_std()
        .take(MAX_FILE_BYTES)
        .read_to_end(&mut bytes)
        .is_err()
    {
        return 0;
    }
    if bytes[..bytes.len().min(BINARY_PROBE)].contains(&0) {
        return 0;
    }
    bytes
        .split(|b| *b == b'\n')
        .filter(|line| re.is_match(line))
        .count() as u64
}
