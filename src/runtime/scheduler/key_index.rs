//! Earlier calls of a plan indexed by resource key, so that [`super::Plan::build`] finds the
//! calls a new one conflicts with without comparing it to every earlier call.
//!
//! `file:`, `dir:` and `tree:` keys are paths ([`super::overlaps`]): a key is found by its own
//! path, by the `dir:`/`tree:` keys above it (looked up once per `/` in its path), and — for a
//! `dir:`/`tree:` key — by everything beneath it (each path key is also recorded under every
//! folder above it). Other keys match exactly. Each entry keeps only the earlier call with the
//! highest batch (the latest on a tie): the one a new call must follow.

use std::collections::HashMap;

/// An earlier call: its batch, then its position in the plan's inputs.
pub(super) type Latest = (usize, usize);

/// Keeps `candidate` in `slot` when it has a higher batch (or the same, later).
pub(super) fn raise(slot: &mut Option<Latest>, candidate: Latest) {
    if slot.is_none_or(|s| candidate > s) {
        *slot = Some(candidate);
    }
}

fn raise_in(map: &mut HashMap<String, Latest>, key: &str, candidate: Latest) {
    match map.get_mut(key) {
        Some(s) if candidate > *s => *s = candidate,
        Some(_) => {}
        None => {
            map.insert(key.to_owned(), candidate);
        }
    }
}

/// A resource key as the overlap rule sees it.
enum Key<'a> {
    /// A `file:`, `dir:` or `tree:` key: whether it covers what lies beneath, and its path.
    Path { covers: bool, path: &'a str },
    /// Any other key: matched as a whole.
    Other,
}

fn parse(key: &str) -> Key<'_> {
    match key.split_once(':') {
        Some(("file", path)) => Key::Path {
            covers: false,
            path,
        },
        Some(("dir" | "tree", path)) => Key::Path { covers: true, path },
        _ => Key::Other,
    }
}

/// The folders above `path`, as the overlap rule reads them: `path` up to each `/`.
fn above(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/').map(|(at, _)| &path[..at])
}

/// Earlier calls by the resource keys they read or write.
#[derive(Debug, Default)]
pub(super) struct KeyIndex {
    /// Keys that are not paths.
    exact: HashMap<String, Latest>,
    /// Path keys of any kind, by path.
    path: HashMap<String, Latest>,
    /// `dir:` and `tree:` keys, by path.
    covering: HashMap<String, Latest>,
    /// Path keys by every folder above their path.
    beneath: HashMap<String, Latest>,
    /// Every path key.
    any_path: Option<Latest>,
}

impl KeyIndex {
    /// Records that the call `at` touches `key`.
    pub(super) fn insert(&mut self, key: &str, at: Latest) {
        match parse(key) {
            Key::Other => raise_in(&mut self.exact, key, at),
            Key::Path { covers, path } => {
                raise_in(&mut self.path, path, at);
                if covers {
                    raise_in(&mut self.covering, path, at);
                }
                for folder in above(path) {
                    raise_in(&mut self.beneath, folder, at);
                }
                raise(&mut self.any_path, at);
            }
        }
    }

    /// The earlier call with the highest batch whose key overlaps `key`.
    pub(super) fn latest(&self, key: &str) -> Option<Latest> {
        let mut best = None;
        let mut take = |found: Option<&Latest>| {
            if let Some(&f) = found {
                raise(&mut best, f);
            }
        };
        match parse(key) {
            Key::Other => take(self.exact.get(key)),
            Key::Path { covers, path } => {
                take(self.path.get(path));
                take(self.covering.get("."));
                for folder in above(path) {
                    take(self.covering.get(folder));
                }
                if covers {
                    take(self.beneath.get(path));
                    if path == "." {
                        take(self.any_path.as_ref());
                    }
                }
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::scheduler::overlaps;

    const KEYS: &[&str] = &[
        "file:a",
        "file:a/b",
        "tree:a",
        "dir:a/b",
        "tree:.",
        "file:.",
        "tree:",
        "file:/x",
        "file:ab",
        "tree:a/",
        "file:a//b",
        "git:index",
        "git:a",
        "plain",
        "dir:b/c/d",
    ];

    /// The index finds exactly the keys `overlaps` says overlap, with the latest such call.
    #[test]
    fn agrees_with_overlaps() {
        for (n, stored) in KEYS.iter().enumerate() {
            let mut index = KeyIndex::default();
            index.insert(stored, (0, n));
            for query in KEYS {
                let found = index.latest(query).is_some();
                assert_eq!(found, overlaps(stored, query), "{stored} vs {query}");
            }
        }
        let mut index = KeyIndex::default();
        index.insert("file:a/b", (3, 0));
        index.insert("tree:a", (1, 1));
        index.insert("file:a/c", (3, 2));
        assert_eq!(index.latest("tree:a"), Some((3, 2)));
        assert_eq!(index.latest("file:a/b"), Some((3, 0)));
        assert_eq!(index.latest("file:a/d"), Some((1, 1)));
    }
}
