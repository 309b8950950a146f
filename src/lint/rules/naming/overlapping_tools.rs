//! TGN010 overlapping-tools.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::naming::overlap_index::{
    Groups, declared_overlaps, fingerprints, may_overlap,
};
use crate::lint::rules::naming::words::{
    is_stop_word, is_verb, singular, split_identifier, synonyms, tokens,
};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::OverlappingTools,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds tools a model cannot tell apart by name, description and schema: duplicates, deprecated aliases, variants, and modes that repeat another tool.",
    explanation: r#"Smell: ambiguous sibling.

## What it does
Compares the tools of a set and finds two overlapping when
- they have the same name;
- one is marked deprecated in favour of the other ("DEPRECATED: use fetch_page instead"), yet
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
pub(super) const DUPLICATE_DESCRIPTIONS: f64 = 0.7;
/// Share of parameters two synonym-named tools must have in common.
const SHARED_PARAMETERS: f64 = 0.5;
/// Fewest shared parameters for two schemas to count as the same.
pub(super) const SAME_SCHEMA_PARAMETERS: usize = 3;
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
pub(super) const MIN_CONTENT_WORDS: usize = 5;

/// Most other members a group's finding names and labels (the rest are counted).
const MAX_NAMED: usize = 10;

/// What one tool looks like to the comparison.
pub(super) struct Profile {
    name: String,
    /// Name words, in order.
    pub(super) words: Vec<String>,
    /// Name words, singular (as description words are compared).
    name_words: Vec<String>,
    /// Content words of the description: singular, sorted, deduplicated.
    pub(super) content: Vec<String>,
    /// Parameter names, sorted.
    pub(super) params: Vec<String>,
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
    // One schema all but equal to the other's, under names that share a word that is not a verb
    // (`list_accounts` and `list_alerts` share only what they do): nothing but the names tells
    // them apart.
    let shared = common(&a.params, &b.params);
    if shared >= SAME_SCHEMA_PARAMETERS
        && jaccard(&a.params, &b.params) >= SAME_SCHEMA
        && a.words
            .iter()
            .any(|w| !is_stop_word(w) && !is_verb(w) && w.len() > 2 && b.words.contains(w))
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
    fn same_schemas_under_names_that_share_only_a_verb() {
        let params = &["cursor", "limit", "query"];
        assert!(
            overlap(
                &p("list_accounts", "Accounts of the team.", params),
                &p("list_alerts", "Open alerts.", params)
            )
            .is_none()
        );
        assert!(
            overlap(
                &p("note_editor", "", &["command", "path", "text"]),
                &p("note_edit_tool", "", &["command", "path", "text"])
            )
            .is_some()
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
}
