//! `glob`: workspace files whose relative path matches a glob (`**` crosses folders, `*` does
//! not), sorted by path, skipping what .gitignore/.ignore exclude and hidden files. The walk
//! starts at the pattern's literal prefix (`src/**/*.rs` walks only `src`); a prefix through a
//! symbolic link inside the workspace walks the link's target and reports the files there by
//! their resolved paths.
//!
//! Protected files and folders and `.git` folders are never listed: the walk
//! ([`walk`](super::walk)) skips them and the result counts them as `withheld`; a pattern whose
//! literal prefix is protected (`.git/**`) lists nothing and withholds that one entry.

use serde::Deserialize;
use serde_json::{Value, json};

use super::walk::{MAX_WALK_FILES, Seen, files, withheld_note};
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
    let mut walked = super::walk::Walked::default();
    if cx.workspace.off_limits(p.as_str()).is_some() {
        walked.withheld = 1;
    } else if cx.workspace.dir().is_dir(p.as_path()) {
        walked = files(cx, &p, |rel| {
            if matcher.is_match(rel) {
                paths.push(rel.to_owned());
            }
            Ok(Seen::Visited)
        })?;
    }
    paths.sort();
    let total = paths.len();
    let truncated = total > max || walked.cut;
    paths.truncate(max);
    let more = total - paths.len();
    // The walker lists folders by path; a folder swapped for a symlink mid-walk could list
    // names from outside. Names are all that could leak, and only these few are reported, so
    // each is checked once more: still a regular file reached beneath the root with no link
    // on the way.
    paths.retain(|p| cx.workspace.is_file(p));
    let mut text: String = paths.iter().map(|p| format!("{p}\n")).collect();
    if more > 0 {
        text.push_str(&format!(
            "[{more} more paths not shown; raise max_results or narrow the pattern]\n"
        ));
    }
    if walked.cut {
        text.push_str(&format!(
            "[the walk stopped after {MAX_WALK_FILES} files; narrow the pattern]\n"
        ));
    }
    text.push_str(&withheld_note(walked.withheld));
    let summary = format!(
        "{total} file{} match {}",
        if total == 1 { "" } else { "s" },
        a.pattern
    );
    let mut out = RawOutcome::success(
        json!({"paths": paths, "truncated": truncated, "withheld": walked.withheld}),
        text,
    )
    .with_summary(summary);
    out.truncated = truncated;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::Builtin;
    use super::super::testing::{Tree, run};
    use serde_json::json;

    /// Protected files and `.git` folders are never listed, whatever the pattern: `**/*`,
    /// `**/.env` and `.git/**` list no protected name and count what they withheld.
    #[test]
    fn protected_entries_are_withheld() {
        let t = Tree::new();
        let glob = |pattern: &str| {
            let r = run(&t.cx, Builtin::Glob, json!({"pattern": pattern}));
            r.structured.unwrap()
        };
        let all = glob("**/*");
        assert_eq!(
            all["paths"],
            json!(["notes.txt", "src/app.py", "vendor/lib/lib.py"])
        );
        // .env, .git, keys/server.pem, keys/id_rsa, vendor/lib/.env, vendor/lib/.git
        assert_eq!(all["withheld"], 6);
        let env = glob("**/.env");
        assert_eq!(
            (env["paths"].clone(), env["withheld"].clone()),
            (json!([]), json!(6))
        );
        for pattern in [".git/**", "vendor/lib/.git/**", ".git/config"] {
            let g = glob(pattern);
            assert_eq!(
                (g["paths"].clone(), g["withheld"].clone()),
                (json!([]), json!(1)),
                "{pattern}"
            );
        }
        let keys = glob("keys/*");
        assert_eq!(
            (keys["paths"].clone(), keys["withheld"].clone()),
            (json!([]), json!(2))
        );
    }
}
