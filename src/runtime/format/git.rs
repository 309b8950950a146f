//! `git_diff`: changed files, hunks and +/- line counts of a unified diff; `git_status`: the
//! branch line and the changed files of `git status --porcelain=v1 --branch`.

use serde_json::json;

use super::{FormatInput, Formatted};
use crate::ir::OutputKeep;
use crate::runtime::output::bound;

/// The stats of a unified diff.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiffStats {
    /// Changed files (the `b/` side; the `a/` side for deletions).
    pub files: Vec<String>,
    /// Hunks.
    pub hunks: u64,
    /// Added lines.
    pub insertions: u64,
    /// Removed lines.
    pub deletions: u64,
}

/// Counts files, hunks and +/- lines.
pub fn diff_stats(diff: &str) -> DiffStats {
    let mut s = DiffStats::default();
    let mut in_header = false;
    for line in diff.lines() {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            in_header = true;
            // `a/x b/x`: take the b side; quoted or spaced names fall back to the whole rest.
            let name = rest
                .rsplit_once(" b/")
                .map_or(rest, |(_, b)| b)
                .trim_matches('"');
            s.files.push(name.to_owned());
        } else if line.starts_with("@@") {
            in_header = false;
            s.hunks += 1;
        } else if in_header {
            // ---/+++ and mode lines belong to the header, not to the counts.
        } else if line.starts_with('+') {
            s.insertions += 1;
        } else if line.starts_with('-') {
            s.deletions += 1;
        }
    }
    s
}

/// Formats `git diff` output.
pub fn diff(input: &FormatInput<'_>) -> Formatted {
    let stats = diff_stats(input.stdout);
    let b = bound(
        input.stdout,
        input.max_bytes,
        input.max_lines,
        OutputKeep::Head,
    );
    let at_least = if input.stdout_complete {
        ""
    } else {
        "at least "
    };
    let summary = if stats.files.is_empty() {
        "no changes".to_owned()
    } else {
        format!(
            "{at_least}{} file{} changed, {} hunk{}, {} insertion{}(+), {} deletion{}(-)",
            stats.files.len(),
            plural(stats.files.len() as u64),
            stats.hunks,
            plural(stats.hunks),
            stats.insertions,
            plural(stats.insertions),
            stats.deletions,
            plural(stats.deletions),
        )
    };
    Formatted {
        summary: Some(summary),
        structured: Some(json!({
            "files": stats.files,
            "insertions": stats.insertions,
            "deletions": stats.deletions,
            "diff": b.text,
        })),
        text: input.combined(),
        failure: input.exit_failure(),
        left_out: false,
    }
}

/// Formats `git status --porcelain=v1 --branch` output.
pub fn status(input: &FormatInput<'_>) -> Formatted {
    let mut branch = String::new();
    let mut changes = Vec::new();
    for line in input.stdout.lines() {
        match line.strip_prefix("## ") {
            Some(b) if branch.is_empty() => branch = format!("## {b}"),
            _ if !line.trim().is_empty() && !line.starts_with("[… ") => {
                changes.push(line.to_owned());
            }
            _ => {}
        }
    }
    let summary = match changes.len() {
        0 => format!("{branch}: clean"),
        n => format!("{branch}: {n} changed file{}", plural(n as u64)),
    };
    Formatted {
        summary: Some(summary.trim_start_matches("## ").to_owned()),
        structured: Some(json!({"branch": branch, "changes": changes})),
        text: input.combined(),
        failure: input.exit_failure(),
        left_out: false,
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::runtime::format::fixture::input;

    const DIFF: &str = "\
diff --git a/src/a.py b/src/a.py
index 1..2 100644
--- a/src/a.py
+++ b/src/a.py
@@ -1,2 +1,2 @@
-TIMEOUT = 5
+TIMEOUT = 30
 RETRIES = 1
@@ -9 +9,2 @@
+# new
 x
diff --git a/old.txt b/old.txt
deleted file mode 100644
--- a/old.txt
+++ /dev/null
@@ -1 +0,0 @@
-gone
";

    #[test]
    fn counts_files_hunks_and_lines() {
        assert_eq!(
            diff_stats(DIFF),
            DiffStats {
                files: vec!["src/a.py".into(), "old.txt".into()],
                hunks: 3,
                insertions: 2,
                deletions: 2,
            }
        );
        let f = diff(&input("git diff", 0, DIFF));
        assert_eq!(
            f.summary.as_deref(),
            Some("2 files changed, 3 hunks, 2 insertions(+), 2 deletions(-)")
        );
        assert_eq!(
            f.structured.unwrap()["files"],
            json!(["src/a.py", "old.txt"])
        );
        assert_eq!(
            diff(&input("git diff", 0, "")).summary.as_deref(),
            Some("no changes")
        );
    }

    #[test]
    fn status_has_branch_and_changes() {
        let f = status(&input(
            "git status",
            0,
            "## main...origin/main\n M src/a.py\n?? new.txt\n",
        ));
        assert_eq!(
            f.structured.unwrap(),
            json!({"branch": "## main...origin/main", "changes": [" M src/a.py", "?? new.txt"]})
        );
        assert_eq!(
            f.summary.as_deref(),
            Some("main...origin/main: 2 changed files")
        );
    }
}
