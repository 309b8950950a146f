//! Conditions stated in prose: a parameter that belongs to one value of a selector ("Required
//! for `create` command"), and parameters that exclude each other ("either text or regex").

/// Sentence endings that make the value after them a condition on the parameter.
const STRONG_CUES: &[&str] = &[
    "required for",
    "required by",
    "required with",
    "required in",
    "required when",
    "required if",
    "parameter of",
    "used for",
    "used by",
    "used with",
    "used in",
    "used when",
    "used only for",
    "used only by",
    "used only with",
    "used only in",
    "used only when",
    "only for",
    "only with",
    "only by",
    "only in",
    "only when",
    "only if",
    "ignored unless",
    "ignored for",
    "ignored when",
    "ignored if",
    "except",
    "except for",
    "needed for",
    "needed when",
    "applies to",
    "applies only to",
    "valid for",
    "valid only for",
    "relevant for",
    "relevant only for",
    "mandatory for",
];
/// Endings that count only when the selector was named right before the value (`when mode is x`).
const WEAK_CUES: &[&str] = &["when", "if", "for", "with", "where", "while", "unless"];
/// Generic names of a selector in prose.
const SELECTOR_NOUNS: &[&str] = &[
    "action",
    "command",
    "method",
    "mode",
    "operation",
    "op",
    "kind",
    "subcommand",
];

/// Whether a description documents that its parameter belongs to one value of a selector:
/// `Required for 'run_workflow' method`, `used only when method is list_jobs`, `action=write`.
pub(crate) fn documents_value(desc: &str, value: &str, selector: &str, values: &[String]) -> bool {
    let lower = desc.to_ascii_lowercase();
    let v = value.to_ascii_lowercase();
    if v.is_empty() {
        return false;
    }
    let sel = selector.to_ascii_lowercase();
    let mut from = 0;
    while let Some(found) = lower.get(from..).and_then(|s| s.find(&v)) {
        let start = from + found;
        let end = start + v.len();
        from = end;
        let is_word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        if is_word(lower[..start].chars().next_back()) || is_word(lower[end..].chars().next()) {
            continue;
        }
        // `for the undo subcommand`, `in list mode`: the selector named right after the value.
        let rest = lower[end..].trim_start_matches(['\'', '"', '`', ' ', '*']);
        let named_after = std::iter::once(sel.as_str())
            .chain(SELECTOR_NOUNS.iter().copied())
            .any(|noun| {
                rest.strip_prefix(noun)
                    .is_some_and(|r| !is_word(r.chars().next()))
            });
        if condition_before(&lower[..start], &sel, values, named_after) {
            return true;
        }
    }
    false
}

fn condition_before(before: &str, selector: &str, values: &[String], named_after: bool) -> bool {
    let mut b = before.trim_end_matches(['\'', '"', '`', ' ', '*']);
    let mut named = named_after;
    // `when action = x`, `if mode is x`, `action: x`.
    for op in ["==", "=", " is", ":"] {
        if let Some(x) = b.strip_suffix(op) {
            let x = x.trim_end_matches(['\'', '"', '`', ' ', '*']);
            for noun in std::iter::once(selector).chain(SELECTOR_NOUNS.iter().copied()) {
                if let Some(y) = x.strip_suffix(noun) {
                    b = y.trim_end_matches(['\'', '"', '`', ' ', '*']);
                    named = true;
                    break;
                }
            }
            if named {
                break;
            }
        }
    }
    // Lists of values: `used for close/select`, `for 'a', 'b' or 'c'`.
    loop {
        let trimmed = b.trim_end_matches(['\'', '"', '`', ' ', ',', '/', '|']);
        let trimmed = trimmed
            .strip_suffix(" or")
            .or_else(|| trimmed.strip_suffix(" and"))
            .unwrap_or(trimmed)
            .trim_end_matches(['\'', '"', '`', ' ']);
        let Some(v) = values
            .iter()
            .map(|v| v.to_ascii_lowercase())
            .find(|v| trimmed.ends_with(v.as_str()) && trimmed.len() < b.len())
        else {
            break;
        };
        b = &trimmed[..trimmed.len() - v.len()];
    }
    let b = b.trim_end_matches(['\'', '"', '`', ' ', '*']);
    let b = b.strip_suffix(" the").unwrap_or(b).trim_end();
    let b = b
        .strip_suffix(" all methods")
        .or_else(|| b.strip_suffix(" all actions"))
        .unwrap_or(b);
    let b = b.trim_end_matches(['*', ' ']);
    STRONG_CUES.iter().any(|c| ends_with_words(b, c))
        || (named && WEAK_CUES.iter().any(|c| ends_with_words(b, c)))
}

fn ends_with_words(text: &str, phrase: &str) -> bool {
    text.strip_suffix(phrase).is_some_and(|rest| {
        rest.chars()
            .next_back()
            .is_none_or(|c| !c.is_ascii_alphanumeric())
    })
}

/// Phrases that say two parameters exclude each other or that one overrides the other.
const EXCLUSION_CUES: &[&str] = &[
    "mutually exclusive",
    "alternative to",
    "cannot be used with",
    "can't be used with",
    "can not be used with",
    "cannot be combined",
    "can't be combined",
    "cannot be used together",
    "not be used together",
    "do not use together",
    "don't use together",
    "only one of",
    "exactly one of",
    "either",
    "not both",
    "if both",
    "instead of",
    "takes precedence",
    "is ignored if",
    "is ignored when",
    "will be ignored",
    "are ignored if",
    "cannot be specified with",
    "cannot be set with",
    "omit this when",
    "omit it when",
    "omit when",
];

/// The sentences of a description that state an exclusion, each with the cue it uses.
pub(crate) fn exclusion_sentences(desc: &str) -> Vec<(String, &'static str)> {
    let protected = desc.replace("e.g.", "e_g_").replace("i.e.", "i_e_");
    protected
        .split(['\n', ';'])
        .flat_map(|l| l.split(". "))
        .filter_map(|s| {
            let lower = s.to_ascii_lowercase();
            EXCLUSION_CUES
                .iter()
                .find(|c| contains_words(&lower, c))
                .map(|c| (s.to_owned(), *c))
        })
        .collect()
}

/// Phrases that make a parameter depend on a condition on another: on one of its values or on
/// the operation it selects ("required when state_reason is duplicate", "only valid when mode is
/// slice"). Each names the other parameter after the cue. Plain co-presence ("if provided, `b`
/// also needs to be provided", "if provided with `repo`, …") is left out on purpose: two
/// parameters that go together do not exclude each other, and the model is not misled into a
/// rejected call by filling both.
const DEPENDENCY_CUES: &[&str] = &[
    "required when",
    "required if",
    "only valid when",
    "only set if",
    "only set when",
    "only used if",
    "only used when",
    "only applies if",
    "only applies when",
    "only valid if",
    "only if",
    "only when",
];

/// The sentences of a description that make its parameter depend on another, each with its cue.
pub(crate) fn dependency_sentences(desc: &str) -> Vec<(String, &'static str)> {
    let protected = desc.replace("e.g.", "e_g_").replace("i.e.", "i_e_");
    protected
        .split(['\n', ';'])
        .flat_map(|l| l.split(". "))
        .filter_map(|s| {
            let lower = s.to_ascii_lowercase();
            DEPENDENCY_CUES
                .iter()
                .find(|c| contains_words(&lower, c))
                .map(|c| (s.to_owned(), *c))
        })
        .collect()
}

/// Whether `text` names the parameter `name`, as written or in snake case (`isFinal` as
/// `is_final`).
pub(crate) fn mentions(text: &str, name: &str) -> bool {
    if contains_words(text, name) {
        return true;
    }
    let snake = crate::lint::rules::naming::words::split_identifier(name).join("_");
    snake != name.to_ascii_lowercase() && contains_words(text, &snake)
}

/// Whether a sentence opens with "if" or "when" (the sentences [`conditioned_on`] can accept).
pub(crate) fn opens_with_condition(sentence: &str) -> bool {
    let t = sentence.trim_start().as_bytes();
    let starts = |p: &[u8]| t.len() >= p.len() && t[..p.len()].eq_ignore_ascii_case(p);
    starts(b"if ") || starts(b"when ") || starts(b"only if ") || starts(b"only when ")
}

/// Whether a sentence starts with a condition on the parameter `name`: "If is_final is
/// true, …", "When `mode` is …".
pub(crate) fn conditioned_on(sentence: &str, name: &str) -> bool {
    let l = sentence.trim_start().to_ascii_lowercase();
    let Some(rest) = l
        .strip_prefix("if ")
        .or_else(|| l.strip_prefix("when "))
        .or_else(|| l.strip_prefix("only if "))
        .or_else(|| l.strip_prefix("only when "))
    else {
        return false;
    };
    let rest = rest.trim_start_matches(['`', '\'', '"']);
    let mut spellings = vec![name.to_ascii_lowercase()];
    let snake = crate::lint::rules::naming::words::split_identifier(name).join("_");
    if !spellings.contains(&snake) {
        spellings.push(snake);
    }
    spellings.iter().any(|n| {
        rest.strip_prefix(n.as_str()).is_some_and(|after| {
            let after = after.trim_start_matches(['`', '\'', '"']);
            [
                " is ",
                " are ",
                " was ",
                " equals ",
                " ==",
                " = ",
                " is set",
                " is given",
            ]
            .iter()
            .any(|c| after.starts_with(c))
        })
    })
}

/// Whether two spellings name the same parameter (`is_final`, `isFinal`).
pub(crate) fn same_name(a: &str, b: &str) -> bool {
    let norm = |s: &str| crate::lint::rules::naming::words::split_identifier(s).concat();
    !a.is_empty() && norm(a) == norm(b)
}

/// Lines of a tool description that describe one parameter: `- name: text`, `* name: text`,
/// `` `name`: text ``.
pub(crate) fn parameter_lines(desc: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for line in desc.lines() {
        let t = line
            .trim_start()
            .trim_start_matches(['-', '*', '•'])
            .trim_start();
        let Some((name, text)) = t.split_once(':') else {
            continue;
        };
        let name = name.trim().trim_matches('`');
        if name.is_empty()
            || name.len() > 64
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            continue;
        }
        let text = text.trim();
        if !text.is_empty() {
            out.push((name.to_owned(), text.to_owned()));
        }
    }
    out
}

/// Pairs of opposites that make two restrictions exclusive ("only the first", "only the last").
const OPPOSITES: &[(&str, &str)] = &[
    ("first", "last"),
    ("head", "tail"),
    ("top", "bottom"),
    ("beginning", "end"),
    ("oldest", "newest"),
    ("earliest", "latest"),
    ("leading", "trailing"),
];

/// Two descriptions that restrict the result to opposite parts and are otherwise alike: "If
/// provided, returns only the first N lines" and "... only the last N lines". Returns what each
/// keeps (`first n lines`, `last n lines`).
/// The pairs `(i, j)`, `i < j` in order, of descriptions that [`opposite_restrictions`] may
/// accept: the same number of words, "only" among them, and differing in one word that is one
/// of a pair of opposites. Near-linear: each description is tokenized once and bucketed by its
/// words with the opposite word left out, instead of comparing every pair.
pub(crate) fn restriction_pairs(descriptions: &[&str]) -> Vec<(usize, usize)> {
    use std::collections::HashMap;
    let is_opposite = |w: &str| OPPOSITES.iter().any(|(p, q)| *p == w || *q == w);
    /// A description's words with the one at a position left out, and that position.
    type Frame = (usize, Vec<String>);
    // Each frame → the descriptions with an opposite word in its gap, and that word.
    let mut buckets: HashMap<Frame, Vec<(usize, String)>> = HashMap::new();
    for (i, d) in descriptions.iter().enumerate() {
        let words = crate::lint::rules::naming::words::tokens(d);
        if !words.iter().any(|w| w == "only") {
            continue;
        }
        for (k, w) in words.iter().enumerate() {
            if is_opposite(w) {
                let mut rest = words.clone();
                rest[k] = String::new();
                buckets.entry((k, rest)).or_default().push((i, w.clone()));
            }
        }
    }
    let mut pairs = Vec::new();
    for members in buckets.values() {
        for (n, (i, x)) in members.iter().enumerate() {
            for (j, y) in &members[n + 1..] {
                if x != y
                    && OPPOSITES
                        .iter()
                        .any(|(p, q)| (p == x && q == y) || (p == y && q == x))
                {
                    pairs.push(((*i).min(*j), (*i).max(*j)));
                }
            }
        }
    }
    pairs.sort_unstable();
    pairs.dedup();
    pairs
}

pub(crate) fn opposite_restrictions(a: &str, b: &str) -> Option<(String, String)> {
    let wa = crate::lint::rules::naming::words::tokens(a);
    let wb = crate::lint::rules::naming::words::tokens(b);
    if wa.len() != wb.len() || !wa.iter().any(|w| w == "only") {
        return None;
    }
    let diffs: Vec<usize> = (0..wa.len()).filter(|&i| wa[i] != wb[i]).collect();
    let [i] = diffs.as_slice() else { return None };
    let (x, y) = (wa[*i].as_str(), wb[*i].as_str());
    if !OPPOSITES
        .iter()
        .any(|(p, q)| (*p == x && *q == y) || (*p == y && *q == x))
    {
        return None;
    }
    let tail = |w: &[String]| {
        w[*i..]
            .iter()
            .take(3)
            .cloned()
            .collect::<Vec<_>>()
            .join(" ")
    };
    Some((tail(&wa), tail(&wb)))
}

/// Whether `text` contains `word` (an identifier) as a whole word.
pub(crate) fn contains_words(text: &str, word: &str) -> bool {
    // ASCII case folding leaves byte offsets alone, so the bytes are compared in place instead
    // of lowering a copy of the text on every call (rules call this per parameter).
    let (t, w) = (text.as_bytes(), word.as_bytes());
    if w.is_empty() || w.len() > t.len() {
        return false;
    }
    let is_word = |c: Option<&u8>| c.is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_');
    let mut start = 0;
    while start + w.len() <= t.len() {
        if t[start..start + w.len()].eq_ignore_ascii_case(w) {
            let end = start + w.len();
            // A match is found again only past its end, as `str::find` from `end` would.
            if !is_word(start.checked_sub(1).and_then(|i| t.get(i))) && !is_word(t.get(end)) {
                return true;
            }
            start = end;
        } else {
            start += 1;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restriction_pairs_are_the_pairs_opposite_restrictions_accepts() {
        let ds = [
            "Return only the first N lines.",
            "A name.",
            "Return only the last N lines.",
            "Return only the top N lines.",
            "Return only the bottom N lines.",
            "Return the last N lines.",
            "Return only the last N lines.",
        ];
        let mut all = Vec::new();
        for i in 0..ds.len() {
            for j in i + 1..ds.len() {
                if opposite_restrictions(ds[i], ds[j]).is_some() {
                    all.push((i, j));
                }
            }
        }
        assert_eq!(restriction_pairs(&ds), all);
        assert_eq!(all, vec![(0, 2), (0, 6), (3, 4)]);
    }

    #[test]
    fn conditions_on_a_sibling() {
        assert!(conditioned_on("If is_final is true, the reason", "isFinal"));
        assert!(conditioned_on("When `mode` is `fast`, the budget", "mode"));
        assert!(!conditioned_on("If provided, the reason", "provided"));
        assert!(!conditioned_on("If the path is a file, its lines", "path"));
    }

    #[test]
    fn per_value_documentation() {
        let values: Vec<String> = [
            "view",
            "create",
            "str_replace",
            "insert",
            "run_workflow",
            "close",
            "select",
            "new",
            "list_workflow_jobs",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let doc = |d: &str, v: &str, sel: &str| documents_value(d, v, sel, &values);
        assert!(doc(
            "Required parameter of `create` command, with the content.",
            "create",
            "command"
        ));
        assert!(doc(
            "Optional parameter of `view` command when `path` points to a file.",
            "view",
            "command"
        ));
        assert!(doc(
            "Only used for 'run_workflow' method.",
            "run_workflow",
            "method"
        ));
        assert!(doc(
            "Required for all methods except 'run_workflow'.",
            "run_workflow",
            "method"
        ));
        assert!(doc(
            "Filters for jobs. **ONLY** used when method is 'list_workflow_jobs'",
            "list_workflow_jobs",
            "method"
        ));
        assert!(doc("Tab index, used for close/select.", "select", "action"));
        assert!(doc(
            "URL to navigate to in the new tab, used for new.",
            "new",
            "action"
        ));
        assert!(doc("Only set when action=create.", "create", "action"));
        // A weak "for" counts when the selector is named right after the value.
        assert!(doc("Depth to scan (for the scan phase).", "scan", "phase"));
        assert!(doc(
            "Archive to read, for the `new` operation.",
            "new",
            "stage"
        ));
        assert!(!doc("Timeout for new connections.", "new", "stage"));
        assert!(!doc("The new content of the file.", "new", "action"));
        assert!(!doc("Text to insert into the file.", "insert", "command"));
        assert!(!doc(
            "Used for selecting a view of the file.",
            "view",
            "command"
        ));
    }

    #[test]
    fn exclusions() {
        let s = exclusion_sentences(
            "Plain text to search for. Provide either text or regex, not both.",
        );
        assert_eq!(s.len(), 1);
        assert!(s[0].0.contains("either text or regex"));
        assert!(exclusion_sentences("The text to find.").is_empty());
        assert!(contains_words("use ref or sha", "ref"));
    }

    #[test]
    fn dependencies() {
        let s = dependency_sentences("Target branch (required when mode is merge)");
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].1, "required when");
        // Co-presence is a dependency, not an exclusion: neither sentence is read.
        assert!(
            dependency_sentences("Sort order. If provided, sort_key must also be set.").is_empty()
        );
        assert!(
            dependency_sentences("Owner. If provided with repo, only that repo is listed.")
                .is_empty()
        );
        assert!(dependency_sentences("The run ID. Required.").is_empty());
        assert!(dependency_sentences("Page number; requires nothing else.").is_empty());
        assert!(!contains_words("use refs", "ref"));
    }
}
