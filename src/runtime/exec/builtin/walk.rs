//! The walk of `search_files` and `glob`: the files beneath a workspace folder, sorted, never
//! following a link, never entering a protected folder or a `.git` folder.
//!
//! `.gitignore`/`.ignore` files are honoured (even outside a git repository) — for relevance
//! only: protection never depends on them. Every entry the ignore rules let through is judged
//! against [`Workspace::off_limits`](crate::runtime::workspace::Workspace::off_limits) first: a
//! protected file or folder is skipped whole and counted as withheld, whatever its name's
//! relation to the pattern (so the count says nothing about what a protected file contains or
//! whether it matches); hidden entries (`.name`) that are not protected are then skipped
//! without a count. The walk reads folders by path, so a folder swapped for a link mid-walk can
//! list names from elsewhere: callers open files only through the race-free opens and report a
//! name only after checking it beneath the root again.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{BuiltinContext, Step, stopped};
use crate::runtime::workspace::{WorkspacePath, off_limits};

/// Files visited before a walk stops (and the result says so).
pub(super) const MAX_WALK_FILES: usize = 100_000;

/// What a visitor made of a file.
pub(super) enum Seen {
    /// Looked at (or passed over) normally.
    Visited,
    /// Withheld: another name of a protected file, found when it was opened.
    Withheld,
}

/// What a walk saw besides the files it visited.
#[derive(Debug, Default)]
pub(super) struct Walked {
    /// Protected files and folders skipped.
    pub(super) withheld: usize,
    /// Whether the walk stopped at [`MAX_WALK_FILES`].
    pub(super) cut: bool,
}

/// Walks the files beneath `from` (a folder, or one file), calling `visit` with each file's
/// workspace-relative path.
pub(super) fn files(
    cx: &BuiltinContext,
    from: &WorkspacePath,
    mut visit: impl FnMut(&str) -> Step<Seen>,
) -> Step<Walked> {
    let withheld = Arc::new(AtomicUsize::new(0));
    let counter = withheld.clone();
    let protected = cx.workspace.protected().clone();
    let root = cx.workspace.root().to_path_buf();
    let mut w = ignore::WalkBuilder::new(cx.workspace.absolute(from));
    w.hidden(false)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(false)
        .ignore(true)
        .parents(true)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(move |e| {
            let Some(rel) = e.path().strip_prefix(&root).ok().and_then(|r| r.to_str()) else {
                return false;
            };
            if off_limits(&protected, rel).is_some() {
                counter.fetch_add(1, Ordering::Relaxed);
                return false;
            }
            !e.file_name().to_string_lossy().starts_with('.')
        });
    let mut walked = Walked::default();
    let mut visited = 0usize;
    for entry in w.build() {
        stopped(cx)?;
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        visited += 1;
        if visited > MAX_WALK_FILES {
            walked.cut = true;
            break;
        }
        let Some(rel) = entry
            .path()
            .strip_prefix(cx.workspace.root())
            .ok()
            .and_then(|r| r.to_str())
            .filter(|r| !r.is_empty())
        else {
            continue;
        };
        if let Seen::Withheld = visit(rel)? {
            walked.withheld += 1;
        }
    }
    walked.withheld += withheld.load(Ordering::Relaxed);
    Ok(walked)
}

/// The note the model reads about withheld entries, or nothing.
pub(super) fn withheld_note(n: usize) -> String {
    match n {
        0 => String::new(),
        1 => "[1 protected entry withheld]\n".to_owned(),
        n => format!("[{n} protected entries withheld]\n"),
    }
}
