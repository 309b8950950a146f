//! Alternative groups of parameters named in a tool's description: "Only one of display or
//! window_title should be specified", "At least one of paths or data must be provided", "Edit a
//! file by replacing exact text (old_str/new_str) or applying a unified diff".
//!
//! Plain "a or b" is everywhere in prose ("the `start` or `end` value"), so a sentence counts only
//! with an explicit cue, or when its "or" joins two ways of doing the task ("by replacing … or
//! applying …"), and only with different parameters named on either side.

use super::conditions::contains_words;

/// Cues that make an "a or b" in a tool description a choice between parameters.
const CUES: &[&str] = &[
    "only one of",
    "exactly one of",
    "at least one of",
    "either",
    "not both",
    "mutually exclusive",
];

/// Cues that make "a and b" before them a pair that excludes each other: "`a` and `b` are
/// mutually exclusive", "a and b cannot be combined".
const JOINT_CUES: &[&str] = &[
    "mutually exclusive",
    "cannot be used together",
    "can't be used together",
    "must not be used together",
    "cannot be combined",
    "can't be combined",
    "must not be combined",
    "cannot both be",
];

/// Two groups of parameters a tool description offers as alternatives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Alternatives {
    /// The parameters named before the "or".
    pub left: Vec<String>,
    /// The parameters named after it.
    pub right: Vec<String>,
    /// The cue (`only one of`, or `or` for two ways of doing the task).
    pub cue: &'static str,
    /// Whether the description asks for at least one group (rather than at most one).
    pub at_least_one: bool,
    /// Whether the groups are two ways of doing the task ("by replacing … or applying …"), each
    /// an operation of its own rather than two ways to name one input.
    pub ways: bool,
}

/// The alternative groups among `params` (the tool's optional parameters) that `desc` states.
pub(crate) fn alternatives(desc: &str, params: &[&str]) -> Vec<Alternatives> {
    let protected = desc.replace("e.g.", "e_g_").replace("i.e.", "i_e_");
    let mut out = Vec::new();
    for sentence in protected.split(['\n', ';']).flat_map(|l| l.split(". ")) {
        let lower = sentence.to_ascii_lowercase();
        let cue = CUES.iter().copied().find(|c| contains_words(&lower, c));
        let mut found_or = false;
        let mut from = 0;
        while let Some(found) = lower.get(from..).and_then(|s| s.find(" or ")) {
            let at = from + found;
            from = at + 4;
            let left = clause_before(&lower[..at], cue);
            let right = clause_after(&lower[at + 4..]);
            let ways = two_ways(left, right);
            let cue = match cue {
                Some(c) => c,
                None if ways || parallel(right, params) => "or",
                None => continue,
            };
            let named = |seg: &str| -> Vec<String> {
                params
                    .iter()
                    .filter(|p| contains_words(seg, p))
                    .map(|p| (*p).to_owned())
                    .collect()
            };
            let (l, r) = (named(left), named(right));
            if l.is_empty() || r.is_empty() || l.iter().any(|p| r.contains(p)) {
                continue;
            }
            out.push(Alternatives {
                left: l,
                right: r,
                cue,
                at_least_one: cue == "at least one of",
                ways,
            });
            found_or = true;
            break;
        }
        if !found_or && let Some(pair) = joint_exclusion(&lower, params) {
            out.push(pair);
        }
    }
    out
}

/// "`a` and `b` are mutually exclusive": the two parameters joined by "and" right before a joint
/// cue, each named on its own side.
fn joint_exclusion(lower: &str, params: &[&str]) -> Option<Alternatives> {
    let (cue, at) = JOINT_CUES
        .iter()
        .find_map(|c| lower.find(c).map(|i| (*c, i)))?;
    let clause = clause_before(&lower[..at], None);
    let (left, right) = clause.rsplit_once(" and ")?;
    let named = |seg: &str| -> Vec<String> {
        params
            .iter()
            .filter(|p| contains_words(seg, p))
            .map(|p| (*p).to_owned())
            .collect()
    };
    // The clause splits at its last "and"; a parameter on both sides is no pair.
    let (l, r) = (named(left), named(right));
    if l.is_empty() || r.is_empty() || l.iter().any(|p| r.contains(p)) {
        return None;
    }
    Some(Alternatives {
        left: l,
        right: r,
        cue,
        at_least_one: false,
        ways: false,
    })
}

/// The clause an "or" continues: from the cue, or from the last comma, colon or semicolon (a
/// comma right before the "or" ends the clause, it does not start it).
fn clause_before<'t>(text: &'t str, cue: Option<&str>) -> &'t str {
    if let Some(c) = cue
        && let Some(i) = text.rfind(c)
    {
        return &text[i..];
    }
    let text = text.trim_end().trim_end_matches(',');
    let start = text.rfind([',', ':']).map(|i| i + 1).unwrap_or(0);
    &text[start..]
}

/// Whether the alternative after an "or" is another parameter used the same way: "use the 'head'
/// parameter to …, or the 'tail' parameter to …".
fn parallel(right: &str, params: &[&str]) -> bool {
    let r = right.trim_start();
    let r = r.strip_prefix("the ").unwrap_or(r);
    let r = r.trim_start_matches(['\'', '"', '`']);
    params.iter().any(|p| {
        let p = p.to_ascii_lowercase();
        r.strip_prefix(p.as_str()).is_some_and(|rest| {
            let rest = rest.trim_start_matches(['\'', '"', '`']);
            rest.starts_with(" parameter")
                || rest.starts_with(" to ")
                || rest.starts_with(" for ")
                || rest.starts_with(" argument")
        })
    })
}

/// The parameters a tool description's first sentence offers as alternatives ("Wait for text to
/// appear or a specified time to pass" names `text` and `time`), in the order written; `None`
/// when it names fewer than two or no "or" separates them.
pub(crate) fn offered_group(desc: &str, params: &[&str]) -> Option<Vec<String>> {
    let first = super::sentences(desc).into_iter().next()?;
    let lower = first.to_ascii_lowercase();
    // "…, optionally only the staged ones or only some paths": none is needed.
    if [
        "optional",
        "optionally",
        "by default",
        "if given",
        "if provided",
        "or all",
    ]
    .iter()
    .any(|w| lower.contains(w))
    {
        return None;
    }
    let mut found: Vec<(usize, String)> = params
        .iter()
        .filter_map(|p| {
            let pl = p.to_ascii_lowercase();
            lower
                .match_indices(pl.as_str())
                .find(|(i, _)| {
                    let before = lower[..*i].chars().next_back();
                    let after = lower[i + pl.len()..].chars().next();
                    let word =
                        |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
                    !word(before) && !word(after)
                })
                .map(|(i, _)| (i, (*p).to_owned()))
        })
        .collect();
    found.sort();
    let first_at = found.first()?.0;
    if found.len() < 2 || !lower[first_at..].contains(" or ") {
        return None;
    }
    Some(found.into_iter().map(|(_, p)| p).collect())
}

/// The alternative after an "or", up to the end of its clause.
fn clause_after(text: &str) -> &str {
    let end = text.find([',', '.', ':', ')']).unwrap_or(text.len());
    &text[..end]
}

/// Whether "or" joins two ways of doing the task: "by replacing … or applying …".
fn two_ways(left: &str, right: &str) -> bool {
    let gerund = |w: &str| w.len() > 4 && w.ends_with("ing");
    let first = right
        .split_whitespace()
        .find(|w| *w != "by")
        .unwrap_or_default();
    gerund(first) && left.split_whitespace().any(gerund)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups(desc: &str, params: &[&str]) -> Vec<(Vec<String>, Vec<String>, &'static str)> {
        alternatives(desc, params)
            .into_iter()
            .map(|a| (a.left, a.right, a.cue))
            .collect()
    }

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn two_ways_of_doing_the_task_are_told_from_two_names_of_one_input() {
        let ways = alternatives(
            "Change a note by appending lines (lines) or rewriting it from a template (template).",
            &["lines", "template"],
        );
        assert!(ways.first().is_some_and(|a| a.ways), "{ways:?}");
        let names = alternatives(
            "Look up a user. Provide either the user_id or the email.",
            &["user_id", "email"],
        );
        assert!(names.first().is_some_and(|a| !a.ways), "{names:?}");
    }

    #[test]
    fn pairs_joined_by_and_before_a_joint_cue() {
        assert_eq!(
            groups(
                "List rows. `onlyTags` and `skipTags` are mutually exclusive tag filters.",
                &["onlyTags", "skipTags", "limit"]
            ),
            [(v(&["onlyTags"]), v(&["skipTags"]), "mutually exclusive")]
        );
        assert_eq!(
            groups(
                "Render a chart; width and aspect cannot be combined.",
                &["width", "aspect"]
            ),
            [(v(&["width"]), v(&["aspect"]), "cannot be combined")]
        );
        // One parameter and a plain word: no pair.
        assert!(
            groups(
                "Tags and labels are mutually exclusive concepts.",
                &["tags"]
            )
            .is_empty()
        );
        // "and" without a joint cue: independent filters.
        assert!(groups("Filter by owner and label.", &["owner", "label"]).is_empty());
    }

    #[test]
    fn alternatives_with_a_cue_or_two_ways() {
        assert_eq!(
            groups(
                "Capture a screenshot. Only one of display or window_title should be specified.",
                &["display", "window_title"]
            ),
            [(v(&["display"]), v(&["window_title"]), "only one of")]
        );
        assert_eq!(
            groups(
                "Drop files or data. At least one of \"paths\" or \"data\" must be provided.",
                &["paths", "data"]
            ),
            [(v(&["paths"]), v(&["data"]), "at least one of")]
        );
        assert_eq!(
            groups(
                "Edit a file by replacing exact text (old_str/new_str) or applying a unified diff.",
                &["diff", "new_str", "old_str"]
            ),
            [(v(&["new_str", "old_str"]), v(&["diff"]), "or")]
        );
    }

    #[test]
    fn parallel_parameters_and_offered_groups() {
        assert_eq!(
            groups(
                "Reads a log. Use the 'first' parameter to read only the first N lines, or the 'last' parameter to read only the last N lines.",
                &["first", "last"]
            ),
            [(v(&["first"]), v(&["last"]), "or")]
        );
        assert_eq!(
            offered_group(
                "Pause until a selector matches or a delay passes. Returns what happened.",
                &["selector", "delay", "frame"]
            ),
            Some(v(&["selector", "delay"]))
        );
        assert_eq!(
            offered_group(
                "Pause for the given delay. Returns when done.",
                &["delay", "frame"]
            ),
            None
        );
        assert_eq!(
            offered_group(
                "List issues with a label and a milestone.",
                &["label", "milestone"]
            ),
            None
        );
        assert_eq!(
            offered_group(
                "Show the changes, optionally only the staged ones or only some paths.",
                &["staged", "paths"]
            ),
            None
        );
    }

    /// The patterns the issue names, in its own (invented) words.
    #[test]
    fn the_issues_examples() {
        assert_eq!(
            groups(
                "Read a file: use head for the first N lines, or tail for the last N.",
                &["head", "tail"]
            ),
            [(v(&["head"]), v(&["tail"]), "or")]
        );
        assert_eq!(
            offered_group(
                "Wait for a time, for text to appear, or for text to disappear.",
                &["time", "text", "text_gone"]
            ),
            Some(v(&["time", "text"]))
        );
    }

    #[test]
    fn plain_or_is_prose() {
        assert!(
            groups(
                "-1 indicates the last line when used as the `start` or `end` value.",
                &["start", "end"]
            )
            .is_empty()
        );
        assert!(
            groups(
                "Wait for text to appear or disappear or a specified time to pass",
                &["text", "time"]
            )
            .is_empty()
        );
        // The same parameter on both sides is no choice between parameters.
        assert!(
            groups(
                "Either the element reference or the element selector.",
                &["element"]
            )
            .is_empty()
        );
    }
}
