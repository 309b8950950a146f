//! TGN010's index: fingerprints that let the pairwise comparison of a tool set skip, in a few
//! machine words, every pair that cannot overlap; the overlaps a list states outright; and the
//! groups that overlapping pairs join.

use crate::lint::context::ToolView;
use crate::lint::rules::naming::overlapping_tools::{
    DUPLICATE_DESCRIPTIONS, MIN_CONTENT_WORDS, Profile, SAME_SCHEMA_PARAMETERS,
};
use crate::lint::rules::naming::words::split_identifier;
use crate::lint::rules::schema::multi_action_tool::is_selector_name;
use crate::lint::rules::schema::prose::contains_words;
use crate::lint::rules::schema::shape;

/// A compact view of a [`Profile`] for the pairwise pre-check: the rule compares every pair of
/// tools, so the common case (no overlap) must cost a few machine words.
pub(super) struct Fingerprint {
    /// Name words in order, hashed.
    words: Vec<u64>,
    /// Name words, hashed and sorted.
    words_sorted: Vec<u64>,
    /// Content words as a bit set over the vocabulary of all descriptions.
    content: Vec<u64>,
    /// Number of content words.
    content_len: usize,
    /// Parameter names, hashed and sorted.
    params: Vec<u64>,
}

fn hash(s: &str) -> u64 {
    // FNV-1a: stable and fast; a collision can only cause an extra exact comparison.
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

pub(super) fn fingerprints(profiles: &[Profile]) -> Vec<Fingerprint> {
    let mut vocabulary: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for p in profiles {
        for w in &p.content {
            let next = vocabulary.len();
            vocabulary.entry(w.as_str()).or_insert(next);
        }
    }
    let blocks = vocabulary.len().div_ceil(64);
    profiles
        .iter()
        .map(|p| {
            let words: Vec<u64> = p.words.iter().map(|w| hash(w)).collect();
            let mut words_sorted = words.clone();
            words_sorted.sort_unstable();
            let mut content = vec![0u64; blocks];
            for w in &p.content {
                if let Some(&i) = vocabulary.get(w.as_str()) {
                    content[i / 64] |= 1 << (i % 64);
                }
            }
            let mut params: Vec<u64> = p.params.iter().map(|x| hash(x)).collect();
            params.sort_unstable();
            params.dedup();
            Fingerprint {
                words,
                words_sorted,
                content,
                content_len: p.content.len(),
                params,
            }
        })
        .collect()
}

fn common_hashed(a: &[u64], b: &[u64]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

/// Whether the pairwise comparison can possibly find something: a necessary condition of each of its tests.
pub(super) fn may_overlap(a: &Fingerprint, b: &Fingerprint) -> bool {
    let (lo, hi) = (
        a.content_len.min(b.content_len),
        a.content_len.max(b.content_len),
    );
    if lo >= MIN_CONTENT_WORDS && (lo as f64) >= DUPLICATE_DESCRIPTIONS * hi as f64 {
        let inter: usize = a
            .content
            .iter()
            .zip(&b.content)
            .map(|(x, y)| (x & y).count_ones() as usize)
            .sum();
        if inter as f64 >= DUPLICATE_DESCRIPTIONS * (a.content_len + b.content_len - inter) as f64 {
            return true;
        }
    }
    // Names differing in exactly one word, in any order (synonym verbs, listing forms).
    if a.words.len() == b.words.len()
        && common_hashed(&a.words_sorted, &b.words_sorted) + 1 >= a.words_sorted.len()
    {
        return true;
    }
    // Nearly the same schema (at least three shared parameters).
    if a.params.len().min(b.params.len()) >= SAME_SCHEMA_PARAMETERS
        && common_hashed(&a.params, &b.params) >= SAME_SCHEMA_PARAMETERS
        && common_hashed(&a.words_sorted, &b.words_sorted) > 0
    {
        return true;
    }
    // One name's words all in the other's (an extending name).
    let (short, long) = if a.words.len() < b.words.len() {
        (a, b)
    } else {
        (b, a)
    };
    short.words.len() < long.words.len()
        && common_hashed(&short.words_sorted, &long.words_sorted) == short.words_sorted.len()
}

/// Groups of overlapping tools, joined as pairs are found (union-find).
pub(super) struct Groups {
    parent: Vec<usize>,
    /// Overlapping pairs found, `(earlier, later, why)`, in the order found.
    pub(super) pairs: Vec<(usize, usize, String)>,
}

impl Groups {
    pub(super) fn new(n: usize) -> Groups {
        Groups {
            parent: (0..n).collect(),
            pairs: Vec::new(),
        }
    }

    pub(super) fn root(&mut self, mut i: usize) -> usize {
        while self.parent[i] != i {
            self.parent[i] = self.parent[self.parent[i]];
            i = self.parent[i];
        }
        i
    }

    pub(super) fn join(&mut self, i: usize, j: usize, why: String) {
        let (ri, rj) = (self.root(i), self.root(j));
        self.parent[ri.max(rj)] = ri.min(rj);
        self.pairs.push((i, j, why));
    }

    /// Each group of two tools or more: its members in tool order.
    pub(super) fn members(&mut self) -> Vec<Vec<usize>> {
        let mut by_root: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
        for i in 0..self.parent.len() {
            let r = self.root(i);
            by_root.entry(r).or_default().push(i);
        }
        by_root.into_values().filter(|m| m.len() > 1).collect()
    }

    /// The first pair found that involves tool `i`: the other tool and why.
    pub(super) fn first_pair(&self, i: usize) -> Option<(usize, &str)> {
        self.pairs
            .iter()
            .find_map(|(a, b, why)| match (*a == i, *b == i) {
                (true, _) => Some((*b, why.as_str())),
                (_, true) => Some((*a, why.as_str())),
                _ => None,
            })
    }
}

/// Overlaps a list states outright, found without comparing every pair: two tools of one name,
/// a tool marked deprecated in favour of another one in the list, and a tool that does what one
/// value of another tool's switch does (`view` beside `editor(command: view)`). Pairs are
/// `(earlier, later, why)`.
pub(super) fn declared_overlaps(
    tools: &[ToolView],
    profiles: &[Profile],
) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    let mut by_name: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (j, t) in tools.iter().enumerate() {
        if t.name.is_empty() {
            continue;
        }
        match by_name.get(t.name) {
            Some(&i) => out.push((i, j, "they have the same name".to_owned())),
            None => {
                by_name.insert(t.name, j);
            }
        }
    }
    for (i, t) in tools.iter().enumerate() {
        let desc = t.description().to_ascii_lowercase();
        if desc.contains("deprecated") {
            for (j, other) in tools.iter().enumerate() {
                if j != i
                    && !other.name.is_empty()
                    && other.name != t.name
                    && contains_words(&desc, other.name)
                {
                    out.push((
                        i.min(j),
                        i.max(j),
                        format!(
                            "`{}` is marked deprecated in favour of `{}`, yet both are listed",
                            t.name, other.name
                        ),
                    ));
                }
            }
        }
        // A switch value that another tool is named after, with no parameter of its own.
        for (key, node, _) in t.properties() {
            if !is_selector_name(&key.name) {
                continue;
            }
            for value in shape::closed_values(node) {
                let vw = split_identifier(&value);
                for (j, other) in tools.iter().enumerate() {
                    if j == i || profiles[j].params.is_empty() {
                        continue;
                    }
                    let same = other.name == value || profiles[j].words == vw;
                    if same
                        && profiles[j]
                            .params
                            .iter()
                            .all(|p| profiles[i].params.contains(p))
                    {
                        out.push((
                            i.min(j),
                            i.max(j),
                            format!(
                                "`{}` does what `{}` does with `{}: {value}`, with a subset of its parameters",
                                other.name, t.name, key.name
                            ),
                        ));
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_join_pairs_and_remember_why() {
        let mut g = Groups::new(5);
        g.join(0, 2, "a".into());
        g.join(2, 4, "b".into());
        g.join(1, 3, "c".into());
        assert_eq!(g.members(), vec![vec![0, 2, 4], vec![1, 3]]);
        assert_eq!(g.first_pair(4), Some((2, "b")));
        assert_eq!(g.first_pair(2), Some((0, "a")));
        assert_eq!(g.root(4), g.root(0));
    }
}
