//! `glob`: workspace files whose relative path matches a glob (`**` crosses folders, `*` does
//! not), sorted by path, skipping what .gitignore/.ignore exclude and hidden files. The walk
//! starts at the pattern's literal prefix (`src/**/*.rs` walks only `src`); a prefix through a
//! symbolic link inside the workspace walks the link's target and reports the files there by
//! their resolved paths.

use serde::Deserialize;
use serde_json::{Value, json};

use super::search_files::{MAX_WALK_FILES, relative, walker};
use super::{BuiltinContext, Step, beneath, parse_args, to_usize};
use crate::ir::ErrorType;
use crate::runtime::exec::{ExecFailure, RawOutcome};

#[derive(Deserialize)]
struct Args {
    pattern: String,
    #[serde(default)]
    max_results: Option<u64>,
}

pub(super) fn run(args: &Value, cx: &BuiltinContext) -> Step<RawOutcome> {
    let a: Args = parse_args(args, "glob")?;
    let prefix: Vec<&str> = a
        .pattern
        .split('/')
        .take_while(|seg| !seg.contains(['*', '?', '[', '{']))
        .collect();
    // The last literal segment may be the file name itself; walk its folder.
    let walk_from = if prefix.len() == a.pattern.split('/').count() {
        prefix[..prefix.len().saturating_sub(1)].join("/")
    } else {
        prefix.join("/")
    };
    let p = beneath(
        cx,
        if walk_from.is_empty() {
            "."
        } else {
            &walk_from
        },
    )?;
    // The walk lists files by their resolved paths (a link in the prefix is followed, like
    // every path argument), so the pattern's prefix is matched in its resolved form too.
    let through_link = !walk_from.is_empty()
        && crate::cel::functions::normalize(&walk_from).as_deref() != Some(p.as_str());
    let rest = a.pattern[walk_from.len()..].trim_start_matches('/');
    let pattern = match (through_link, p.as_str()) {
        (false, _) => a.pattern.clone(),
        (true, ".") => rest.to_owned(),
        (true, resolved) => format!("{resolved}/{rest}"),
    };
    let matcher = globset::GlobBuilder::new(&pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| {
            ExecFailure::new(
                ErrorType::InvalidArguments,
                format!("pattern is not a valid glob: {e}"),
            )
        })?
        .compile_matcher();
    let max = to_usize(a.max_results.unwrap_or(200)).max(1);
    let mut paths = Vec::new();
    let mut visited = 0usize;
    let mut walk_cut = false;
    if cx.workspace.dir().is_dir(p.as_path()) {
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
            if let Some(rel) = relative(cx, entry.path())
                && matcher.is_match(&rel)
            {
                paths.push(rel);
            }
        }
    }
    paths.sort();
    let total = paths.len();
    let truncated = total > max || walk_cut;
    paths.truncate(max);
    // The walker lists folders by path; a folder swapped for a symlink mid-walk could list
    // names from outside. Names are all that could leak, and only these few are reported, so
    // each is checked beneath the root once more (and must still be its own resolved form).
    paths.retain(|p| cx.workspace.check(p).is_ok_and(|r| r.as_str() == p));
    let mut text: String = paths.iter().map(|p| format!("{p}\n")).collect();
    if total > paths.len() {
        text.push_str(&format!(
            "[{} more paths not shown; raise max_results or narrow the pattern]\n",
            total - paths.len()
        ));
    }
    let summary = format!(
        "{total} file{} match {}",
        if total == 1 { "" } else { "s" },
        a.pattern
    );
    let mut out = RawOutcome::success(json!({"paths": paths, "truncated": truncated}), text)
        .with_summary(summary);
    out.truncated = truncated;
    Ok(out)
}
