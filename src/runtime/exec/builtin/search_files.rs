//! `search_files`: the workspace files whose text matches a regular expression, with the number
//! of matching lines in each.
//!
//! The walk ([`walk`](super::walk)) honours .gitignore and .ignore files (even outside a git
//! repository) and skips hidden files; it never enters protected folders or `.git`, and skips
//! protected files, counting them as withheld — before any matching, so the answer never says
//! whether a protected file matches (no oracle to recover a secret by bisection). A search
//! rooted at a protected path is refused. Every file is opened race-free and vetted, so another
//! name (a hard link) of a protected file is withheld too. Files are read line by line in
//! bounded memory, each up to `budgets.search_file_size` bytes; binary files (a NUL byte in the
//! first 8 KiB) are skipped.

use std::io::Read;

use serde::Deserialize;
use serde_json::{Value, json};

use super::lines::Lines;
use super::walk::{MAX_WALK_FILES, Seen, files, withheld_note};
use super::{
    BuiltinContext, Step, access_failure, checked, io_failure, parse_args, shown, to_usize,
};
use crate::ir::ErrorType;
use crate::runtime::artifacts::size_text;
use crate::runtime::exec::{ExecFailure, RawOutcome};

/// Bytes looked at to tell a binary file (a NUL byte) from text.
const BINARY_PROBE: usize = 8 * 1024;
/// Bytes of one line the pattern is matched against; the rest of a longer line is not.
const MAX_LINE: usize = 64 * 1024;

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
    if let Some(protected) = cx.workspace.off_limits(p.as_str()) {
        let e = crate::runtime::workspace::AccessError::Protected {
            path: p.as_str().to_owned(),
            protected,
        };
        return Err(access_failure(e, "nothing was searched"));
    }
    cx.workspace
        .dir()
        .symlink_metadata(p.as_path())
        .map_err(|e| io_failure(&e, root))?;
    let max = to_usize(a.max_results.unwrap_or(100)).max(1);
    let cap = cx.workspace.file_limits().search;

    let mut found: Vec<(String, u64)> = Vec::new();
    let mut partly = 0usize;
    let walked = files(cx, &p, |rel| {
        if filter.as_ref().is_some_and(|m| !m.is_match(rel)) {
            return Ok(Seen::Visited);
        }
        let file = match cx.workspace.open_file(rel) {
            Ok(f) => f,
            Err(e) if e.is_protection() => return Ok(Seen::Withheld),
            // Gone, swapped for a link, not a regular file: nothing to search.
            Err(_) => return Ok(Seen::Visited),
        };
        if file.size() > cap {
            partly += 1;
        }
        let matches = count_matches(file.into_file(), cap, &re, cx)?;
        if matches > 0 {
            found.push((rel.to_owned(), matches));
        }
        Ok(Seen::Visited)
    })?;
    found.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let total = found.len();
    let truncated = total > max || walked.cut;
    found.truncate(max);
    let mut text: String = found.iter().map(|(f, n)| format!("{f}: {n}\n")).collect();
    if total > found.len() {
        text.push_str(&format!(
            "[{} more files not shown; raise max_results or narrow path/glob]\n",
            total - found.len()
        ));
    }
    if walked.cut {
        text.push_str(&format!(
            "[the search stopped after {MAX_WALK_FILES} files; narrow path or glob]\n"
        ));
    }
    if partly > 0 {
        text.push_str(&format!(
            "[{partly} file{} larger than {} searched only in {} first {} (budgets.search_file_size)]\n",
            if partly == 1 { "" } else { "s" },
            size_text(cap),
            if partly == 1 { "its" } else { "their" },
            size_text(cap)
        ));
    }
    text.push_str(&withheld_note(walked.withheld));
    let summary = format!(
        "{total} file{} under {} match /{}/",
        if total == 1 { "" } else { "s" },
        shown(&p),
        a.pattern
    );
    let structured = json!({
        "files": found.iter().map(|(path, matches)| json!({"path": path, "matches": matches})).collect::<Vec<_>>(),
        "total_files": total,
        "truncated": truncated,
        "withheld": walked.withheld,
    });
    let mut out = RawOutcome::success(structured, text).with_summary(summary);
    out.truncated = truncated;
    Ok(out)
}

/// Matching lines in the first `cap` bytes of a text file (0 for a binary or unreadable one).
fn count_matches(
    file: std::fs::File,
    cap: u64,
    re: &regex::bytes::Regex,
    cx: &BuiltinContext,
) -> Step<u64> {
    let mut lines = Lines::new(file.take(cap), MAX_LINE, false, cx.cancel.clone());
    match lines.peek(BINARY_PROBE) {
        Ok(head) if !head.contains(&0) => {}
        Ok(_) => return Ok(0),
        Err(e) => return stop_or(e, 0),
    }
    let mut n = 0;
    loop {
        match lines.next_line(true) {
            Ok(Some(line)) => n += u64::from(re.is_match(line.bytes)),
            Ok(None) => return Ok(n),
            Err(e) => return stop_or(e, n),
        }
    }
}

/// A read error ends the file's search quietly, unless it is the call being stopped.
fn stop_or(e: std::io::Error, n: u64) -> Step<u64> {
    if e.kind() == std::io::ErrorKind::Interrupted {
        return Err(io_failure(&e, ""));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::super::Builtin;
    use super::super::testing::{Tree, run};
    use crate::ir::ErrorType;
    use serde_json::{Value, json};

    fn search(t: &Tree, args: Value) -> Value {
        let r = run(&t.cx, Builtin::SearchFiles, args);
        assert!(!r.text.clone().unwrap_or_default().contains(Tree::SECRET));
        r.structured.unwrap_or_else(|| panic!("{:?}", r.failure))
    }

    /// search_files as an oracle: whether the pattern is the secret or not, over the tree or
    /// any part of it, the answer is the same — no protected file is ever matched, and the
    /// withheld count does not depend on the pattern.
    #[test]
    fn protected_files_are_no_oracle() {
        let t = Tree::new();
        for pattern in [
            Tree::SECRET,
            "TOPSECRET-1",
            "TOPSECRET-9",
            "API_KEY=",
            "nothing-like-it",
        ] {
            let r = search(&t, json!({"pattern": pattern}));
            let files: Vec<&str> = r["files"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["path"].as_str().unwrap())
                .collect();
            assert!(
                files.iter().all(|f| *f == "src/app.py"),
                "{pattern}: {files:?}"
            );
            // .env, .git, keys/server.pem, keys/id_rsa, vendor/lib/.env, vendor/lib/.git,
            // and notes.txt (a hard link to .env, found when opened).
            assert_eq!(r["withheld"], 7, "{pattern}");
        }
        // A search rooted at a protected file or folder is refused outright.
        for path in [".env", "keys/server.pem", ".git", "vendor/lib/.git"] {
            let r = run(
                &t.cx,
                Builtin::SearchFiles,
                json!({"pattern": "TOPSECRET", "path": path}),
            );
            assert_eq!(
                r.failure.as_ref().map(|f| f.0),
                Some(ErrorType::PolicyDenied),
                "{path}"
            );
            assert!(r.failure.unwrap().1.ends_with("; nothing was searched"));
        }
        // Rooted at the hard link itself: withheld, not answered.
        let r = search(&t, json!({"pattern": "TOPSECRET", "path": "notes.txt"}));
        assert_eq!(
            (r["total_files"].clone(), r["withheld"].clone()),
            (json!(0), json!(1))
        );
        // A glob aimed at the secrets changes nothing.
        let r = search(&t, json!({"pattern": "TOPSECRET", "glob": "**/.env"}));
        assert_eq!(r["total_files"], 0);
    }

    /// Protection does not depend on ignore files: a `.env` that .gitignore does not list is
    /// still skipped, and one it does list too.
    #[test]
    fn protection_does_not_depend_on_gitignore() {
        let t = Tree::new();
        std::fs::write(t.path(".gitignore"), "*.log\n").unwrap();
        std::fs::write(t.path("config.env"), format!("K={}\n", Tree::SECRET)).unwrap();
        let r = search(&t, json!({"pattern": "TOPSECRET"}));
        assert_eq!(r["total_files"], 0);
        std::fs::write(t.path(".gitignore"), "!.env\n!*.pem\n").unwrap();
        let r = search(&t, json!({"pattern": "TOPSECRET"}));
        assert_eq!(r["total_files"], 0);
    }

    /// Files are read line by line up to the per-file cap; what lies beyond is not searched,
    /// and the text says so.
    #[test]
    fn the_per_file_cap_bounds_what_is_searched() {
        let mut t = Tree::new();
        let ws = crate::runtime::workspace::Workspace::open(t.dir.path())
            .unwrap()
            .with_file_limits(crate::runtime::workspace::FileLimits {
                read: 1 << 20,
                search: 2048,
                edit: 1 << 20,
            });
        t.cx.workspace = std::sync::Arc::new(ws);
        let text = format!("{}needle\n", "filler line\n".repeat(400));
        std::fs::write(t.path("src/long.txt"), text).unwrap();
        std::fs::write(t.path("src/short.txt"), "needle\n").unwrap();
        let r = run(&t.cx, Builtin::SearchFiles, json!({"pattern": "needle"}));
        assert_eq!(
            r.structured.unwrap()["files"],
            json!([{"path": "src/short.txt", "matches": 1}])
        );
        assert!(r.text.unwrap().contains(
            "[1 file larger than 2 KiB searched only in its first 2 KiB (budgets.search_file_size)]"
        ));
    }
}
