//! TGN010 overlapping-tools.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, Group, RuleMeta};
use crate::lint::rules::naming::words::{
    is_stop_word, singular, split_identifier, synonyms, tokens,
};
use crate::lint::rules::schema::multi_action_tool::is_selector_name;
use crate::lint::rules::schema::prose::contains_words;
use crate::lint::rules::schema::shape;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    code: "TGN010",
    name: "overlapping-tools",
    group: Group::Naming,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds tools a model cannot tell apart by name, description and schema: duplicates, deprecated aliases, variants, and modes that repeat another tool.",
    explanation: r#"Smell: ambiguous sibling.

## What it does
Compares the tools of a set and finds two overlapping when
- they have the same name;
- one is marked deprecated in favour of the other ("DEPRECATED: Use read_text_file instead"), yet
  both are listed;
- one does what one value of the other's switch does, with a subset of its parameters (`view`
  beside `editor(command: view)`);
- their names differ only by a word that makes a synchronous or asynchronous variant (`async`,
  `sync`, `background`, `blocking`) and they take largely the same parameters;
- their descriptions are near-duplicates (at least 70% of their content words shared);
- their names differ only by a synonymous word — a verb (`get`/`fetch`/`read`,
  `list`/`search`/`find`, `delete`/`remove` …) or a listing form (`list`/`ls`/`tree`), in any
  order — and they take largely the same parameters;
- one name extends the other (`read_file`, `read_text_file`), the parameters of one are all
  parameters of the other, and most of the shorter description's words recur in the longer one.
Descriptions that differ exactly in the words that tell the names apart (`delete_entities`,
`delete_relations`) do not count as duplicates. Nor does an extending name whose added word names
a behaviour the longer description explains and the shorter tool cannot be asked for (neither in
its description nor a parameter): `double_click_mouse` beside `click_mouse`. A longer tool that
takes more parameters than the shorter one still overlaps it: it can do the shorter one's job
(`list_directory_with_sizes` beside `list_directory`).

Overlapping tools form groups (tools linked by overlapping pairs); every member of a group gets
its own finding, naming the tool it overlaps and why, and the other members.

## Why is this bad?
"Too many tools or overlapping tools can also distract agents" (Anthropic). When two tools could
serve the same call, the model picks one at random, permissions and effects differ between them,
and usage splits across two code paths that must both be maintained.

## Example
```yaml
tools:
  - name: get_file
    description: Get the contents of a file in the workspace; returns its lines.
    parameters: {type: object, properties: {path: {type: string}}}
  - name: fetch_file
    description: Fetch the contents of a file in the workspace; returns its lines.
    parameters: {type: object, properties: {path: {type: string}}}
```

Use instead: one tool, or descriptions that say when to use each.
```yaml
tools:
  - name: read_file
    description: Read a UTF-8 text file in the workspace; returns its numbered lines.
```
"#,
};

/// Share of content words two descriptions must have in common to count as duplicates.
const DUPLICATE_DESCRIPTIONS: f64 = 0.7;
/// Share of parameters two synonym-named tools must have in common.
const SHARED_PARAMETERS: f64 = 0.5;
/// Fewest shared parameters for two schemas to count as the same.
const SAME_SCHEMA_PARAMETERS: usize = 3;
/// Share of parameters two schemas must have in common to count as the same.
const SAME_SCHEMA: f64 = 0.8;
/// Share of the shorter description that must recur in the longer for an extending name to count.
const SHARED_DESCRIPTION: f64 = 0.6;
/// Name words that make a variant of the same operation (`-async`, `_sync`).
const VARIANT_WORDS: &[&str] = &[
    "async",
    "asynchronous",
    "sync",
    "synchronous",
    "blocking",
    "nonblocking",
    "background",
];

/// Fewest content words a description needs to be compared at all.
const MIN_CONTENT_WORDS: usize = 5;

/// Most other members a group's finding names and labels (the rest are counted).
const MAX_NAMED: usize = 10;

/// What one tool looks like to the comparison.
struct Profile {
    name: String,
    /// Name words, in order.
    words: Vec<String>,
    /// Name words, singular (as description words are compared).
    name_words: Vec<String>,
    /// Content words of the description: singular, sorted, deduplicated.
    content: Vec<String>,
    /// Parameter names, sorted.
    params: Vec<String>,
    /// The words of the parameter names: singular, sorted, deduplicated.
    param_words: Vec<String>,
}

impl Profile {
    fn new(name: &str, description: &str, mut params: Vec<String>) -> Profile {
        let mut content: Vec<String> = tokens(description)
            .into_iter()
            .filter(|w| !is_stop_word(w))
            .map(|w| singular(&w).to_owned())
            .collect();
        content.sort();
        content.dedup();
        params.sort();
        let mut param_words: Vec<String> = params
            .iter()
            .flat_map(|p| split_identifier(p))
            .map(|w| singular(&w).to_owned())
            .collect();
        param_words.sort();
        param_words.dedup();
        let words = split_identifier(name);
        let name_words = words.iter().map(|w| singular(w).to_owned()).collect();
        Profile {
            name: name.to_owned(),
            words,
            name_words,
            content,
            params,
            param_words,
        }
    }
}

fn profile(t: &ToolView) -> Profile {
    let params = t
        .properties()
        .into_iter()
        .map(|(k, _, _)| k.name.clone())
        .collect();
    Profile::new(t.name, t.description(), params)
}

/// Size of the intersection of two sorted, deduplicated lists (a merge: the set rule compares
/// every pair of tools, so this must stay linear).
fn common(a: &[String], b: &[String]) -> usize {
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

fn jaccard(a: &[String], b: &[String]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let inter = common(a, b);
    let union = a.len() + b.len() - inter;
    inter as f64 / union as f64
}

/// Why two tools overlap, if they do.
fn overlap(a: &Profile, b: &Profile) -> Option<String> {
    let (lo, hi) = (
        a.content.len().min(b.content.len()),
        a.content.len().max(b.content.len()),
    );
    // Jaccard ≥ t needs the smaller set to hold at least t of the larger one.
    if lo >= MIN_CONTENT_WORDS && (lo as f64) >= DUPLICATE_DESCRIPTIONS * hi as f64 {
        let j = jaccard(&a.content, &b.content);
        if j >= DUPLICATE_DESCRIPTIONS && !explains_names(a, b) {
            return Some(format!(
                "their descriptions share {:.0}% of their words",
                j * 100.0
            ));
        }
    }
    if a.words.len() == b.words.len() {
        let mut diffs = a.words.iter().zip(&b.words).filter(|(x, y)| x != y);
        if let (Some((x, y)), None) = (diffs.next(), diffs.next())
            && synonyms(x, y)
            && jaccard(&a.params, &b.params) >= SHARED_PARAMETERS
        {
            return Some(format!(
                "their names differ only by `{x}`/`{y}` and they take largely the same parameters"
            ));
        }
    }
    // Synchronous and asynchronous variants of one operation.
    let plain = |p: &Profile| -> Vec<String> {
        p.words
            .iter()
            .filter(|w| !VARIANT_WORDS.contains(&w.as_str()))
            .cloned()
            .collect()
    };
    if plain(a) == plain(b)
        && a.words != b.words
        && !plain(a).is_empty()
        && jaccard(&a.params, &b.params) >= SHARED_PARAMETERS
    {
        let (base, variant) = if a.words.len() <= b.words.len() {
            (a, b)
        } else {
            (b, a)
        };
        return Some(format!(
            "`{}` is a synchronous/asynchronous variant of `{}` and takes the same parameters; nothing in the schema says when to use which",
            variant.name, base.name
        ));
    }
    // One schema all but equal to the other's, under names that share a word: nothing but the
    // names tells them apart.
    let shared = common(&a.params, &b.params);
    if shared >= SAME_SCHEMA_PARAMETERS
        && jaccard(&a.params, &b.params) >= SAME_SCHEMA
        && a.words
            .iter()
            .any(|w| !is_stop_word(w) && w.len() > 2 && b.words.contains(w))
    {
        return Some(format!(
            "they take the same {shared} parameters and their names share a word; nothing but the names tells them apart"
        ));
    }
    // The same words but one, in any order, where that one is a synonym (`list_directory`,
    // `directory_tree`).
    if a.words.len() == b.words.len() && a.words.len() > 1 {
        let only_a: Vec<&String> = a.words.iter().filter(|w| !b.words.contains(w)).collect();
        let only_b: Vec<&String> = b.words.iter().filter(|w| !a.words.contains(w)).collect();
        if let ([x], [y]) = (only_a.as_slice(), only_b.as_slice())
            && synonyms(x, y)
            && jaccard(&a.params, &b.params) >= SHARED_PARAMETERS
        {
            return Some(format!(
                "their names differ only by `{x}`/`{y}` and they take largely the same parameters"
            ));
        }
    }
    let (short, long) = if a.words.len() < b.words.len() {
        (a, b)
    } else {
        (b, a)
    };
    let extends =
        short.words.len() < long.words.len() && short.words.iter().all(|w| long.words.contains(w));
    let (few, many) = if short.params.len() <= long.params.len() {
        (short, long)
    } else {
        (long, short)
    };
    if !extends || few.params.is_empty() || !few.params.iter().all(|p| many.params.contains(p)) {
        return None;
    }
    let shared = containment(&a.content, &b.content);
    if shared < SHARED_DESCRIPTION || adds_behaviour(short, long) {
        return None;
    }
    let params = if few.params.len() == many.params.len() {
        "they take the same parameters".to_owned()
    } else {
        format!("`{}` takes every parameter of `{}`", many.name, few.name)
    };
    Some(format!(
        "the name `{}` extends `{}`, {params}, and {:.0}% of the shorter description's words recur in the longer one",
        long.name,
        short.name,
        shared * 100.0
    ))
}

/// Whether the longer name adds a word for something the shorter tool cannot be asked to do:
/// the longer description uses the word, while the shorter one has it neither in its
/// description nor in a parameter (`double_click_mouse` beside `click_mouse`,
/// `trigger-sampling-request-async` beside `trigger-sampling-request`). A longer tool taking
/// more parameters is a superset of the shorter one and never counts
/// (`list_directory_with_sizes` beside `list_directory`).
fn adds_behaviour(short: &Profile, long: &Profile) -> bool {
    if long.params.len() > short.params.len() {
        return false;
    }
    long.name_words
        .iter()
        .filter(|w| !short.name_words.contains(w) && !is_stop_word(w))
        .any(|w| {
            long.content.binary_search(w).is_ok()
                && short.content.binary_search(w).is_err()
                && short.param_words.binary_search(w).is_err()
        })
}

/// Whether the descriptions differ in a word that also tells the names apart (`delete_entities`
/// and `delete_relations` described alike except for "entities" and "relations").
fn explains_names(a: &Profile, b: &Profile) -> bool {
    // Runs for every pair with similar descriptions, so it allocates nothing.
    let names_differ = |w: &String| a.name_words.contains(w) != b.name_words.contains(w);
    let only_a = a
        .content
        .iter()
        .filter(|w| b.content.binary_search(w).is_err());
    let only_b = b
        .content
        .iter()
        .filter(|w| a.content.binary_search(w).is_err());
    only_a.chain(only_b).any(names_differ)
}

/// Share of the shorter description's content words that the other has too.
fn containment(a: &[String], b: &[String]) -> f64 {
    let min = a.len().min(b.len());
    if min == 0 {
        return 0.0;
    }
    common(a, b) as f64 / min as f64
}

/// A compact view of a [`Profile`] for the pairwise pre-check: the rule compares every pair of
/// tools, so the common case (no overlap) must cost a few machine words.
struct Fingerprint {
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

fn fingerprints(profiles: &[Profile]) -> Vec<Fingerprint> {
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

/// Whether [`overlap`] can possibly find something: a necessary condition of each of its tests.
fn may_overlap(a: &Fingerprint, b: &Fingerprint) -> bool {
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
struct Groups {
    parent: Vec<usize>,
    /// Overlapping pairs found, `(earlier, later, why)`, in the order found.
    pairs: Vec<(usize, usize, String)>,
}

impl Groups {
    fn new(n: usize) -> Groups {
        Groups {
            parent: (0..n).collect(),
            pairs: Vec::new(),
        }
    }

    fn root(&mut self, mut i: usize) -> usize {
        while self.parent[i] != i {
            self.parent[i] = self.parent[self.parent[i]];
            i = self.parent[i];
        }
        i
    }

    fn join(&mut self, i: usize, j: usize, why: String) {
        let (ri, rj) = (self.root(i), self.root(j));
        self.parent[ri.max(rj)] = ri.min(rj);
        self.pairs.push((i, j, why));
    }

    /// Each group of two tools or more: its members in tool order.
    fn members(&mut self) -> Vec<Vec<usize>> {
        let mut by_root: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
        for i in 0..self.parent.len() {
            let r = self.root(i);
            by_root.entry(r).or_default().push(i);
        }
        by_root.into_values().filter(|m| m.len() > 1).collect()
    }

    /// The first pair found that involves tool `i`: the other tool and why.
    fn first_pair(&self, i: usize) -> Option<(usize, &str)> {
        self.pairs
            .iter()
            .find_map(|(a, b, why)| match (*a == i, *b == i) {
                (true, _) => Some((*b, why.as_str())),
                (_, true) => Some((*a, why.as_str())),
                _ => None,
            })
    }
}

/// Reports each group of overlapping tools once.
pub(crate) fn check(ctx: &mut LintContext, tools: &[ToolView]) {
    let profiles: Vec<Profile> = tools.iter().map(profile).collect();
    let prints = fingerprints(&profiles);
    let mut groups = Groups::new(tools.len());
    for (i, j, why) in declared_overlaps(tools, &profiles) {
        if groups.root(i) != groups.root(j) {
            groups.join(i, j, why);
        }
    }
    for (j, b) in tools.iter().enumerate() {
        for (i, a) in tools.iter().enumerate().take(j) {
            if a.name == b.name
                || a.name.is_empty()
                || b.name.is_empty()
                // Already in one group: another pair adds nothing to report. However many
                // tools overlap, at most one comparison per tool finds an overlap; the others
                // stop at the cheap pre-check or allocate nothing.
                || groups.root(i) == groups.root(j)
                || !may_overlap(&prints[i], &prints[j])
            {
                continue;
            }
            if let Some(why) = overlap(&profiles[i], &profiles[j]) {
                groups.join(i, j, why);
            }
        }
    }
    let mut found = groups.members();
    found.sort_by_key(|m| m.last().copied());
    for members in found {
        report(ctx, tools, &groups, &members);
    }
}

/// Overlaps a list states outright, found without comparing every pair: two tools of one name,
/// a tool marked deprecated in favour of another one in the list, and a tool that does what one
/// value of another tool's switch does (`view` beside `editor(command: view)`). Pairs are
/// `(earlier, later, why)`.
fn declared_overlaps(tools: &[ToolView], profiles: &[Profile]) -> Vec<(usize, usize, String)> {
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

/// One finding for every member of a group, each naming the tool it overlaps.
fn report(ctx: &mut LintContext, tools: &[ToolView], groups: &Groups, members: &[usize]) {
    let others_of = |m: usize| -> Vec<String> {
        members
            .iter()
            .filter(|&&o| o != m)
            .take(MAX_NAMED)
            .map(|&o| format!("`{}`", tools[o].name))
            .collect()
    };
    for &m in members {
        let Some((partner, why)) = groups.first_pair(m) else {
            continue;
        };
        let (z, p) = (&tools[m], &tools[partner]);
        let message = if members.len() == 2 {
            format!("`{}` overlaps with `{}`: {why}", z.name, p.name)
        } else {
            let mut names = others_of(m);
            if members.len() - 1 > MAX_NAMED {
                names.push(format!("{} more", members.len() - 1 - MAX_NAMED));
            }
            format!(
                "`{}` is one of {} overlapping tools (with {}): with `{}`, {why}",
                z.name,
                members.len(),
                names.join(", "),
                p.name
            )
        };
        ctx.report(z.name_span(), message)
            .label(p.name_span(), format!("`{}` is defined here", p.name))
            .help(if members.len() == 2 {
                "merge the two tools, or make each description say when to use it instead of the other"
            } else {
                "merge these tools, or make each description say when to use it instead of the others"
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(name: &str, desc: &str, params: &[&str]) -> Profile {
        Profile::new(name, desc, params.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn overlaps() {
        assert!(
            overlap(
                &p("get_file", "x", &["path"]),
                &p("fetch_file", "y", &["path"])
            )
            .is_some()
        );
        let r = "Read the complete contents of a file as text";
        assert!(
            overlap(
                &p("read_file", r, &["head", "path", "tail"]),
                &p("read_text_file", r, &["head", "path", "tail"])
            )
            .is_some()
        );
        let d = "Read the complete contents of a file from the file system as text";
        assert!(overlap(&p("a", d, &[]), &p("b", d, &["x"])).is_some());
    }

    #[test]
    fn distinct_tools() {
        assert!(
            overlap(
                &p("get_file", "x", &["path"]),
                &p("delete_file", "y", &["path"])
            )
            .is_none()
        );
        assert!(
            overlap(
                &p("get_file", "x", &["path"]),
                &p("fetch_file", "y", &["url", "headers"])
            )
            .is_none()
        );
        assert!(
            overlap(
                &p("git_diff_staged", "x", &["repo_path"]),
                &p("git_diff_unstaged", "y", &["repo_path"])
            )
            .is_none()
        );
        assert!(
            overlap(
                &p(
                    "delete_entities",
                    "Delete multiple entities from the knowledge graph",
                    &["names"]
                ),
                &p(
                    "delete_relations",
                    "Delete multiple relations from the knowledge graph",
                    &["relations"]
                )
            )
            .is_none()
        );
        assert!(
            overlap(
                &p("read_file", "Read a text file", &["path"]),
                &p("read_media_file", "Return base64 image data", &["path"])
            )
            .is_none()
        );
    }

    /// The pairs of the real corpus (`/work/shared/corpus`): found, with the message telling
    /// what was measured.
    #[test]
    fn extending_names_that_overlap() {
        let why = overlap(
            &p(
                "update_pull_request",
                "Update an existing pull request in a GitHub repository.",
                &[
                    "base",
                    "body",
                    "owner",
                    "pullNumber",
                    "repo",
                    "state",
                    "title",
                ],
            ),
            &p(
                "update_pull_request_state",
                "Update the state of an existing pull request (open or closed).",
                &["owner", "pullNumber", "repo", "state"],
            ),
        );
        assert_eq!(
            why.as_deref(),
            Some(
                "the name `update_pull_request_state` extends `update_pull_request`, \
                 `update_pull_request` takes every parameter of `update_pull_request_state`, \
                 and 67% of the shorter description's words recur in the longer one"
            )
        );
        let listing = "Get a detailed listing of all files and directories in a specified path";
        assert!(
            overlap(
                &p("list_directory", listing, &["path"]),
                &p(
                    "list_directory_with_sizes",
                    &format!("{listing}, including sizes."),
                    &["path", "sortBy"]
                )
            )
            .is_some()
        );
        assert!(
            overlap(
                &p(
                    "shell",
                    "Runs a shell command and returns its output.",
                    &["command", "workdir"]
                ),
                &p(
                    "shell_command",
                    "Runs a shell command and returns its output.",
                    &["command", "login", "workdir"]
                )
            )
            .is_some()
        );
    }

    /// An added name word that the longer description explains and the shorter tool cannot be
    /// asked for is a different behaviour, not an overlap.
    #[test]
    fn extending_names_that_add_a_behaviour() {
        assert_eq!(
            overlap(
                &p(
                    "click_mouse",
                    "Click at the specified coordinates (shown as a red crosshair) on the current page",
                    &["x", "y", "button"]
                ),
                &p(
                    "double_click_mouse",
                    "Double-click at the specified coordinates (shown as a red crosshair) on the current page",
                    &["x", "y"]
                )
            ),
            None
        );
    }

    /// Synchronous and asynchronous variants of one operation overlap, whatever their
    /// descriptions say: nothing in the schema tells a model which to call.
    #[test]
    fn sync_and_async_variants() {
        assert!(
            overlap(
                &p("export_report", "Export a report as PDF.", &["id", "pages"]),
                &p(
                    "export_report_async",
                    "Export a report as PDF in the background; poll for the file later.",
                    &["id", "pages"]
                )
            )
            .is_some()
        );
        assert!(
            overlap(
                &p("export_report", "Export a report as PDF.", &["id"]),
                &p("export_chart_async", "Export a chart.", &["id"])
            )
            .is_none()
        );
    }

    #[test]
    fn listing_forms_in_any_order() {
        assert!(
            overlap(
                &p("list_folder", "Entries of a folder.", &["path"]),
                &p("folder_tree", "A nested view.", &["path", "exclude"])
            )
            .is_some()
        );
    }

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
