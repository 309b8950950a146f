//! [`PrefixMatcher`]: which globs match each folder prefix of a path, in one pass over it.
//!
//! Asking a glob set about every prefix of a path (`a`, `a/b`, `a/b/c`) separately costs the
//! folders times the length. Instead the globs' regexes (as globset writes them) are compiled
//! into one lazy DFA, searched anchored at the start of the path: the path's bytes are fed once,
//! and at each `/` (and at the end) the end-of-input transition from the state so far says
//! whether the prefix up to there matches in full, and which globs do, at O(1) beyond the pass.

use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::Arc;

use regex_automata::hybrid::LazyStateID;
use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::util::pool::Pool;
use regex_automata::util::syntax;
use regex_automata::{Anchored, Input, MatchKind, nfa::thompson};

/// A search that gave up: only a DFA configured to (a minimum cache clear count, quit bytes)
/// does, and this one is not.
struct GaveUp;

impl<E: std::error::Error> From<E> for GaveUp {
    fn from(_: E) -> GaveUp {
        GaveUp
    }
}

/// Makes a search cache for one thread.
type CacheFn = Box<dyn Fn() -> Cache + Send + Sync + UnwindSafe + RefUnwindSafe>;

/// What a path's prefixes match: the first protected glob the shortest matching prefix
/// matches, and whether any prefix matches an exception.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct PrefixMatches {
    /// Index of the protected glob, as [`PrefixMatcher::new`] was given them.
    pub(super) protected: Option<usize>,
    /// Whether some prefix matches an exception.
    pub(super) excepted: bool,
}

/// The protected globs and the exceptions as one multi-pattern DFA: patterns `0..protected`
/// are the protected globs, the rest the exceptions.
pub(super) struct PrefixMatcher {
    dfa: Arc<DFA>,
    protected: usize,
    has_exceptions: bool,
    caches: Pool<Cache, CacheFn>,
}

impl std::fmt::Debug for PrefixMatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrefixMatcher")
            .field("protected", &self.protected)
            .field("patterns", &self.dfa.pattern_len())
            .finish_non_exhaustive()
    }
}

impl PrefixMatcher {
    /// Compiles the regexes of the protected globs and of the exceptions (from
    /// `globset::Glob::regex`, so anchored and case-folded as the globs are).
    pub(super) fn new(protected: &[String], exceptions: &[String]) -> Result<Self, String> {
        Self::with_cache_capacity(protected, exceptions, None)
    }

    /// As [`PrefixMatcher::new`], with a cache capacity in bytes (`None`: the default).
    fn with_cache_capacity(
        protected: &[String],
        exceptions: &[String],
        capacity: Option<usize>,
    ) -> Result<Self, String> {
        let patterns: Vec<&str> = protected
            .iter()
            .chain(exceptions)
            .map(String::as_str)
            .collect();
        // As globset compiles the same regexes: bytes, not UTF-8, and `.` matches `\n`.
        let dfa = DFA::builder()
            .syntax(syntax::Config::new().utf8(false).dot_matches_new_line(true))
            .thompson(
                thompson::Config::new()
                    .utf8(false)
                    .nfa_size_limit(Some(10 * (1 << 20))),
            )
            // Every pattern's matches at every prefix, not the leftmost-first one's.
            .configure({
                let config = DFA::config().match_kind(MatchKind::All);
                match capacity {
                    Some(bytes) => config.cache_capacity(bytes).skip_cache_capacity_check(true),
                    None => config,
                }
            })
            .build_many(&patterns)
            .map_err(|e| e.to_string())?;
        let dfa = Arc::new(dfa);
        let for_caches = Arc::clone(&dfa);
        let create: CacheFn = Box::new(move || for_caches.create_cache());
        Ok(PrefixMatcher {
            dfa,
            protected: protected.len(),
            has_exceptions: !exceptions.is_empty(),
            caches: Pool::new(create),
        })
    }

    /// What the non-empty prefixes of `path` ending before a `/` or at its end match, or
    /// `None` if the DFA gave up (which this one, configured never to, does not). Stops early
    /// once the answer cannot change: an exception matched, or no glob can match any longer
    /// prefix.
    pub(super) fn judge(&self, path: &str) -> Option<PrefixMatches> {
        let mut cache = self.caches.get();
        self.search(&mut cache, path.as_bytes()).ok()
    }

    fn search(&self, cache: &mut Cache, path: &[u8]) -> Result<PrefixMatches, GaveUp> {
        let mut found = PrefixMatches {
            protected: None,
            excepted: false,
        };
        let mut sid = self.start(cache)?;
        for (i, &b) in path.iter().enumerate() {
            if b == b'/' && i > 0 {
                sid = self.at_boundary(cache, sid, &path[..i], &mut found)?;
                if found.excepted || (found.protected.is_some() && !self.has_exceptions) {
                    return Ok(found);
                }
            }
            sid = self.dfa.next_state(cache, sid, b)?;
            if sid.is_dead() {
                return Ok(found);
            }
        }
        if !path.is_empty() {
            self.at_boundary(cache, sid, path, &mut found)?;
        }
        Ok(found)
    }

    fn start(&self, cache: &mut Cache) -> Result<LazyStateID, GaveUp> {
        let input = Input::new("").anchored(Anchored::Yes);
        // No look-behind, no quit bytes, an anchored mode every DFA supports: this does not
        // fail.
        Ok(self.dfa.start_state_forward(cache, &input)?)
    }

    /// Records what `prefix` (the bytes fed so far, ending in `sid`) matches; returns the
    /// state to go on from, which is `sid` unless looking ahead cleared the cache.
    fn at_boundary(
        &self,
        cache: &mut Cache,
        sid: LazyStateID,
        prefix: &[u8],
        found: &mut PrefixMatches,
    ) -> Result<LazyStateID, GaveUp> {
        let clears = cache.clear_count();
        let end = self.dfa.next_eoi_state(cache, sid)?;
        if end.is_match() {
            // The shortest prefix that matches a protected glob decides; at it, the first glob.
            let decided = found.protected.is_some();
            for k in 0..self.dfa.match_len(cache, end) {
                let pattern = self.dfa.match_pattern(cache, end, k).as_usize();
                if pattern >= self.protected {
                    found.excepted = true;
                } else if !decided && found.protected.is_none_or(|p| pattern < p) {
                    found.protected = Some(pattern);
                }
            }
        }
        if cache.clear_count() == clears {
            return Ok(sid);
        }
        // The lookahead filled the cache, which was cleared: `sid` is gone. Feed the prefix
        // again (once per clear, and a clear takes a cache's worth of new states).
        let mut again = self.start(cache)?;
        for &b in prefix {
            again = self.dfa.next_state(cache, again, b)?;
        }
        Ok(again)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regexes(globs: &[String]) -> Vec<String> {
        globs
            .iter()
            .map(|g| {
                globset::GlobBuilder::new(g)
                    .literal_separator(true)
                    .case_insensitive(true)
                    .build()
                    .unwrap()
                    .regex()
                    .to_owned()
            })
            .collect()
    }

    #[test]
    fn a_cache_cleared_mid_path_does_not_lose_the_place() {
        // Many globs with wildcards and a path of distinct folders make new states all along;
        // a tiny cache is cleared again and again while the path is fed.
        let protected = regexes(&(0..30).map(|i| format!("**/*{i}*y{i}")).collect::<Vec<_>>());
        let exceptions = regexes(&["**/keep".to_owned()]);
        let roomy = PrefixMatcher::new(&protected, &exceptions).unwrap();
        let tiny = PrefixMatcher::with_cache_capacity(&protected, &exceptions, Some(0)).unwrap();
        let mut cache = tiny.caches.get();
        for path in [
            (0..300)
                .map(|i| format!("{i}a{}", i % 7))
                .collect::<Vec<_>>()
                .join("/"),
            format!(
                "{}/29xy29",
                (0..200)
                    .map(|i| format!("{i}"))
                    .collect::<Vec<_>>()
                    .join("/")
            ),
            format!(
                "{}/keep/x",
                (0..100)
                    .map(|i| format!("{i}y{i}"))
                    .collect::<Vec<_>>()
                    .join("/")
            ),
        ] {
            let before = cache.clear_count();
            let want = roomy.judge(&path).unwrap();
            let Ok(got) = tiny.search(&mut cache, path.as_bytes()) else {
                panic!("the search gave up");
            };
            assert!(cache.clear_count() > before, "the cache was never cleared");
            assert_eq!(got, want, "{path}");
        }
        assert_eq!(roomy.judge("a/29y29/b").unwrap().protected, Some(29));
        assert!(roomy.judge("a/keep/b").unwrap().excepted);
    }
}
