//! What a description says about the result changing kind: "Read the contents of a file or list
//! a directory", "returning output or a session ID", "Save snapshot to markdown file instead of
//! returning it", "Returns actual log content instead of URLs".
//!
//! A sentence counts only when it names two *kinds* of result (content and a listing, inline text
//! and a file, output and a session, data and a link) or ties what comes back to an argument
//! ("Depending upon the selected output type, returns ..."). Errors are never a second kind: every
//! tool can fail.

use super::conditions::contains_words;
use super::sentences;

/// How a result varies, for the message and the fix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Variation {
    /// A file's content or a directory's listing.
    FileOrDirectory,
    /// Returned inline, or saved to a file instead.
    InlineOrFile,
    /// Two kinds of value named as alternatives (output or a session id, data or a link).
    Alternatives,
    /// Different media: text or an image, audio or an embedded resource.
    Media,
    /// What comes back depends on an argument ("depending on the output type").
    ByArgument,
    /// The call may return before the work is done (in the background, partial logs).
    Unfinished,
    /// One item when an identifier is given, a list of all when it is left out.
    OneOrMany,
    /// Another tool's or source's results when the first finds nothing ("falls back to").
    Fallback,
    /// A result per case: "returns X when …, otherwise Y", or per mode.
    ByCase,
}

impl Variation {
    /// What the message says varies.
    pub(crate) fn what(self) -> &'static str {
        match self {
            Variation::FileOrDirectory => "a file's content or a directory listing",
            Variation::InlineOrFile => "the result inline or a file it was saved to",
            Variation::Alternatives => "different kinds of value",
            Variation::Media => "different media",
            Variation::ByArgument => "a result chosen by an argument",
            Variation::Unfinished => "a finished result or an unfinished one",
            Variation::OneOrMany => "one item or a list of all",
            Variation::Fallback => "its own result or a fallback's",
            Variation::ByCase => "a different result per case",
        }
    }

    /// How to fix it.
    pub(crate) fn fix(self) -> &'static str {
        match self {
            Variation::FileOrDirectory => {
                "split reading a file from listing a directory (two tools), or return one object tagged by `kind` whose fields cover both"
            }
            Variation::InlineOrFile => {
                "always return the same thing: move saving to a file into its own tool or parameterless variant, or return an object with the content and the saved path as fields"
            }
            Variation::OneOrMany => {
                "split getting one item from listing all (two tools), or always return a list"
            }
            Variation::Alternatives
            | Variation::ByArgument
            | Variation::Media
            | Variation::Fallback
            | Variation::ByCase => {
                "declare one result object tagged by `kind` (`result`/`outputSchema` with a `oneOf` keyed by a `const`), or split the tool per kind"
            }
            Variation::Unfinished => {
                "return one object whatever the state: `status` (running or done), the output so far, and the handle to poll"
            }
        }
    }
}

/// Words naming a kind of result.
const KINDS: &[&str] = &[
    "audio",
    "base64",
    "bytes",
    "completion",
    "content",
    "contents",
    "data",
    "diff",
    "handle",
    "html",
    "id",
    "image",
    "json",
    "link",
    "listing",
    "log",
    "logs",
    "markdown",
    "output",
    "path",
    "preview",
    "reference",
    "resource",
    "session",
    "status",
    "summary",
    "text",
    "url",
    "urls",
];

/// Words that make a sentence talk about what comes back.
const RETURN_CUES: &[&str] = &[
    "return",
    "returned",
    "returning",
    "returns",
    "output",
    "outputs",
    "yields",
    "gives",
    "responds",
    "poll",
    "polls",
];

/// A sentence of a tool description that says the result changes kind, and how.
pub(crate) fn in_tool_description(desc: &str) -> Option<(String, Variation)> {
    let all = sentences(desc);
    // "If `path` is a file, `view` displays ...; if `path` is a directory, `view` lists ...".
    let lower_all = desc.to_ascii_lowercase();
    for s in &all {
        let l = s.to_ascii_lowercase();
        if file_or_directory(&l) {
            return Some((s.clone(), Variation::FileOrDirectory));
        }
        // "…; if the path is a folder, returns its listing".
        if (l.contains("is a folder") || l.contains("is a directory"))
            && ["listing", "lists", "list", "entries"]
                .iter()
                .any(|w| contains_words(&l, w))
            && lower_all.contains("file")
        {
            return Some((s.clone(), Variation::FileOrDirectory));
        }
    }
    if (lower_all.contains("is a file") || lower_all.contains("points to a file"))
        && (lower_all.contains("is a directory") || lower_all.contains("is a folder"))
        && let Some(s) = all.iter().find(|s| {
            let l = s.to_ascii_lowercase();
            l.contains("is a directory") || l.contains("is a folder")
        })
    {
        return Some((s.clone(), Variation::FileOrDirectory));
    }
    for s in &all {
        let l = s.to_ascii_lowercase();
        if let Some(v) = sentence_variation(&l) {
            return Some((s.clone(), v));
        }
    }
    // Two "returned as" clauses naming different kinds: "Image files are returned as image
    // content; any other file type is returned as an embedded resource".
    let returned_as: Vec<&str> = lower_all
        .match_indices("returned as ")
        .filter_map(|(i, m)| first_kind(&lower_all[i + m.len()..], 4))
        .collect();
    if returned_as.len() >= 2
        && returned_as.iter().any(|k| *k != returned_as[0])
        && let Some(s) = all
            .iter()
            .find(|s| s.to_ascii_lowercase().contains("returned as "))
    {
        return Some((s.clone(), Variation::Media));
    }
    for s in &all {
        let l = s.to_ascii_lowercase();
        if let Some(v) = description_sentence(&l) {
            return Some((s.clone(), v));
        }
    }
    // Two sentences each returning a different kind under its own condition: "If a name is
    // given, returns its record. If not, returns the index."
    let conditional: Vec<(&String, &'static str)> = all
        .iter()
        .filter_map(|s| {
            let l = s.to_ascii_lowercase();
            let conditioned = CONDITIONS.iter().any(|c| l.starts_with(c))
                || l.contains(" if ")
                || l.contains(" when ");
            let returns = RETURN_CUES.iter().any(|c| contains_words(&l, c));
            (conditioned && returns && !mentions_error(&l))
                .then(|| first_kind(&l, 40))
                .flatten()
                .map(|k| (s, k))
        })
        .collect();
    if let Some((s, _)) = conditional.iter().find(|(_, k)| {
        conditional
            .first()
            .is_some_and(|(_, k0)| k0 != k && !same_kind(k0, k))
    }) {
        return Some(((*s).clone(), Variation::ByCase));
    }
    None
}

/// Words that open a condition.
const CONDITIONS: &[&str] = &["if ", "when ", "unless ", "once "];

/// What comes back left out: "if omitted", "if not provided", "when not set".
const OMISSIONS: &[&str] = &[
    "if omitted",
    "when omitted",
    "if not provided",
    "if not specified",
    "if not given",
    "if not set",
    "when not provided",
    "when not specified",
    "when not set",
    "if empty",
    "if left empty",
    "if none",
    "if no ",
    "without it",
];

/// States of a job or process that has not finished, and that has.
const STATES: &[&str] = &[
    "complete",
    "completed",
    "done",
    "finished",
    "finishes",
    "running",
    "processing",
    "pending",
];

/// A sentence (lowercased) of a tool description that ties the result to a case, a state, a
/// fallback, a mode or the presence of an argument.
fn description_sentence(l: &str) -> Option<Variation> {
    // "If no path is provided, returns a list of all available paths."
    if omits_and_lists(l) {
        return Some(Variation::OneOrMany);
    }
    // "falls back to the web search if no local results are found".
    let fallback = ["falls back to", "fall back to", "falling back to"]
        .iter()
        .any(|c| l.contains(c));
    if fallback
        && (contains_words(l, "results") || contains_words(l, "result"))
        && (contains_words(l, "if") || contains_words(l, "when"))
    {
        return Some(Variation::Fallback);
    }
    let returns = RETURN_CUES.iter().any(|c| contains_words(l, c));
    // "Returns the status, and the result data when completed"; "…, and is not yet finished".
    if returns
        && (["when ", "once ", "until ", "while "].iter().any(|c| {
            l.match_indices(c).any(|(i, m)| {
                l[i + m.len()..]
                    .split(|c: char| !c.is_ascii_alphanumeric())
                    .filter(|w| !w.is_empty())
                    .take(4)
                    .any(|w| STATES.contains(&w))
            })
        }) || l.contains("not yet finished")
            || l.contains("still running"))
        && !mentions_error(l)
    {
        return Some(Variation::Unfinished);
    }
    // "Returns the PID when started in the background, otherwise the output."
    if returns
        && let Some(at) = l.find("otherwise")
        && first_kind(&l[at..], 5).is_some()
        && !mentions_error(&l[at..])
    {
        return Some(Variation::ByCase);
    }
    // "Works in three modes: …".
    let words: Vec<&str> = l
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    if words.windows(2).any(|w| {
        w[1] == "modes"
            && (w[0].parse::<u32>().is_ok_and(|n| n >= 2)
                || ["two", "three", "four", "five", "several", "multiple"].contains(&w[0]))
    }) {
        return Some(Variation::ByCase);
    }
    None
}

/// A sentence that says leaving an argument out lists everything: "if omitted, lists all …".
fn omits_and_lists(l: &str) -> bool {
    let Some(at) = OMISSIONS.iter().filter_map(|o| l.find(o)).min() else {
        return false;
    };
    let rest = &l[at..];
    ["list", "lists", "listing"]
        .iter()
        .any(|w| contains_words(rest, w))
}

/// Whether a clause speaks of failure (an error is never a second kind of result).
fn mentions_error(l: &str) -> bool {
    ["error", "errors", "fails", "failure", "exception"]
        .iter()
        .any(|w| contains_words(l, w))
}

/// A sentence of an optional parameter's description that says leaving it out returns a list of
/// all instead of one item: "Name of the record (if not provided, lists all records)".
pub(crate) fn when_omitted(desc: &str) -> Option<(String, Variation)> {
    sentences(desc)
        .into_iter()
        .find(|s| omits_and_lists(&s.to_ascii_lowercase()))
        .map(|s| (s, Variation::OneOrMany))
}

/// A sentence of a parameter's description that makes the result change kind.
pub(crate) fn in_parameter(desc: &str, boolean: bool) -> Option<(String, Variation)> {
    // Saving to a file in one sentence, returning inline otherwise in the same or the next.
    let whole = desc.to_ascii_lowercase();
    let saves = ["save", "saves", "saved", "write", "writes", "written"]
        .iter()
        .any(|w| contains_words(&whole, w))
        && ["file", "filename", "path"]
            .iter()
            .any(|w| contains_words(&whole, w));
    if saves {
        for s in sentences(desc) {
            let l = s.to_ascii_lowercase();
            let inline_otherwise = [
                "instead of return",
                "rather than return",
                "instead of being return",
            ]
            .iter()
            .any(|c| l.contains(c))
                || ((l.contains("if not provided")
                    || l.contains("if omitted")
                    || l.contains("otherwise"))
                    && RETURN_CUES.iter().any(|c| contains_words(&l, c)));
            if inline_otherwise {
                return Some((s, Variation::InlineOrFile));
            }
        }
    }
    for s in sentences(desc) {
        let l = s.to_ascii_lowercase();
        if let Some(v) = sentence_variation(&l) {
            return Some((s, v));
        }
        // A switch that returns one thing instead of another: "Returns actual log content
        // instead of URLs".
        if boolean
            && let Some(at) = l.find("instead of ")
            && RETURN_CUES.iter().any(|c| contains_words(&l[..at], c))
            && first_kind(&l[..at], 40).is_some()
            && first_kind(&l[at + 11..], 3).is_some()
        {
            return Some((s, Variation::Alternatives));
        }
        // A switch that returns another form: "If true, return base64 data URI".
        if boolean
            && (l.starts_with("if true") || l.starts_with("when true") || l.starts_with("if set"))
            && RETURN_CUES.iter().any(|c| contains_words(&l, c))
            && first_kind(&l, 12).is_some()
        {
            return Some((s, Variation::Alternatives));
        }
        // An empty value that reads what a running process wrote instead of acting: "may be
        // empty to poll", "empty to view more logs".
        if contains_words(&l, "empty")
            && (contains_words(&l, "poll")
                || (["view", "retrieve", "read", "get", "see"]
                    .iter()
                    .any(|w| contains_words(&l, w))
                    && ["logs", "output"].iter().any(|w| contains_words(&l, w))))
        {
            return Some((s, Variation::Unfinished));
        }
        // A switch that leaves the work running: "Set to false to run the command in the
        // background".
        if boolean && l.contains("in the background") {
            return Some((s, Variation::Unfinished));
        }
    }
    None
}

/// "contents of a file or directory", "read a file or list a directory".
fn file_or_directory(l: &str) -> bool {
    let pairs = [
        "file or directory",
        "file or a directory",
        "file or folder",
        "file or a folder",
        "file or list a directory",
        "file or list directories",
        "file or list a folder",
        "files or list directories",
    ];
    let Some(at) = pairs.iter().filter_map(|p| l.find(p)).min() else {
        return false;
    };
    // What is read must be the content (not metadata about either).
    let before = &l[..at];
    [
        "content", "contents", "read", "reads", "view", "views", "show", "shows", "display", "open",
    ]
    .iter()
    .any(|w| contains_words(before, w))
        && ![
            "metadata",
            "information",
            "info",
            "size",
            "permission",
            "permissions",
            "move",
            "rename",
            "copy",
            "delete",
            "path",
        ]
        .iter()
        .any(|w| contains_words(before, w))
}

/// A sentence (lowercased) that names two kinds of result as alternatives, or ties the result to
/// an argument.
fn sentence_variation(l: &str) -> Option<Variation> {
    // "for new logs or completion": running and done, whatever the verb.
    for (a, b) in [
        ("logs", "completion"),
        ("output", "completion"),
        ("logs", "final status"),
        ("output", "final status"),
    ] {
        if l.contains(&format!("{a} or {b}")) || l.contains(&format!("{a} or the {b}")) {
            return Some(Variation::Unfinished);
        }
    }
    let cued = RETURN_CUES.iter().any(|c| contains_words(l, c));
    if !cued {
        return None;
    }
    if (l.contains("depending on") || l.contains("depending upon") || l.contains("depends on"))
        && (l.contains(" type") || l.contains(" format") || l.contains(" mode"))
    {
        return Some(Variation::ByArgument);
    }
    // "returns X for one case or Y for another": a result per case.
    if let Some(cue) = RETURN_CUES.iter().filter_map(|c| find_word(l, c)).min()
        && per_case(&l[cue..])
    {
        return Some(Variation::ByCase);
    }
    // "X or Y" with two different kinds right around the "or", after a return verb: what comes
    // back, not what is read ("the text or image files").
    let mut from = 0;
    while let Some(found) = l.get(from..).and_then(|s| s.find(" or ")) {
        let at = from + found;
        from = at + 4;
        let left = last_kind(&l[..at], 3);
        let right = first_kind(&l[at + 4..], 4);
        if let (Some(a), Some(b)) = (left, right)
            && RETURN_CUES.iter().any(|c| contains_words(&l[..at], c))
            && a != b
            && !same_kind(a, b)
            && !l[at + 4..].trim_start().starts_with("error")
        {
            if matches!(a, "log" | "logs" | "output") && matches!(b, "completion" | "status") {
                return Some(Variation::Unfinished);
            }
            return Some(Variation::Alternatives);
        }
    }
    None
}

/// Where a whole word starts in a lowercased text.
fn find_word(l: &str, word: &str) -> Option<usize> {
    l.match_indices(word).map(|(i, _)| i).find(|&i| {
        let before = l[..i].chars().next_back();
        let after = l[i + word.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_alphanumeric())
            && !after.is_some_and(|c| c.is_ascii_alphanumeric())
    })
}

/// "X for A or Y for B" (or `when`): two results, each with its own case; an error is no case.
fn per_case(clause: &str) -> bool {
    let Some(or) = clause.find(" or ") else {
        return false;
    };
    let (left, right) = (&clause[..or], clause[or + 4..].trim_start());
    let has_case = |t: &str| [" for ", " when ", " if "].iter().any(|c| t.contains(c));
    let first_word = right.split_whitespace().next().unwrap_or("");
    has_case(left)
        && has_case(right)
        && !["for", "when", "if"].contains(&first_word)
        && !mentions_error(right)
        && !right.starts_with("the same")
}

/// Kinds that are one kind for this purpose (`content` and `text`, `url` and `link`).
fn same_kind(a: &str, b: &str) -> bool {
    const GROUPS: &[&[&str]] = &[
        &["content", "contents", "text", "data", "output", "markdown"],
        &["url", "urls", "link", "path", "reference"],
        &["log", "logs"],
        &["id", "session", "handle"],
    ];
    GROUPS.iter().any(|g| g.contains(&a) && g.contains(&b))
}

/// The first kind word among the next `n` words.
fn first_kind(text: &str, n: usize) -> Option<&'static str> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(n)
        .find_map(|w| KINDS.iter().find(|k| **k == w).copied())
}

/// The last kind word among the previous `n` words.
fn last_kind(text: &str, n: usize) -> Option<&'static str> {
    let words: Vec<&str> = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    words
        .iter()
        .rev()
        .take(n)
        .find_map(|w| KINDS.iter().find(|k| *k == w).copied())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(d: &str) -> Option<Variation> {
        in_tool_description(d).map(|(_, v)| v)
    }

    fn param(d: &str, boolean: bool) -> Option<Variation> {
        in_parameter(d, boolean).map(|(_, v)| v)
    }

    #[test]
    fn varying_results_in_tool_descriptions() {
        assert_eq!(
            tool("Show what is at a path: the text of a file, or list a directory's entries."),
            None,
            "no reading verb before the pair"
        );
        assert_eq!(
            tool("Read the text of a file or list a directory, one level deep."),
            Some(Variation::FileOrDirectory)
        );
        assert_eq!(
            tool("Fetch the contents of a file or directory in the bucket."),
            Some(Variation::FileOrDirectory)
        );
        assert_eq!(
            tool(
                "Opens a path. If `path` is a file, shows its lines. If `path` is a directory, shows its entries."
            ),
            Some(Variation::FileOrDirectory)
        );
        assert_eq!(
            tool("Starts a job, returning its output or a session ID to poll later."),
            Some(Variation::Alternatives)
        );
        assert_eq!(
            tool("Check a running build for new logs or completion; returns what changed."),
            Some(Variation::Unfinished)
        );
        assert_eq!(
            tool(
                "Packs a folder. Depending on the chosen output type, returns the archive bytes or a download link."
            ),
            Some(Variation::ByArgument)
        );
        assert_eq!(
            tool(
                "Loads a document. Spreadsheets are returned as JSON rows; any other document is returned as plain text."
            ),
            Some(Variation::Media)
        );
    }

    /// The patterns the issue names, in its own (invented) words.
    #[test]
    fn the_issues_examples() {
        assert_eq!(
            tool("Returns the file's text; if the path is a folder, returns its listing."),
            Some(Variation::FileOrDirectory)
        );
        assert_eq!(
            tool("Returns the command's output, or a session id while it is still running."),
            Some(Variation::Alternatives)
        );
        assert!(
            tool("Returns an embedded resource or a link, depending on `output_type`.").is_some()
        );
        assert_eq!(
            tool("Returns incremental logs, or the final status when done."),
            Some(Variation::Unfinished)
        );
        assert_eq!(
            param(
                "Saves the snapshot to this file instead of returning it.",
                false
            ),
            Some(Variation::InlineOrFile)
        );
    }

    #[test]
    fn results_per_case_state_fallback_and_presence() {
        assert_eq!(
            tool("Returns a signed link for public buckets or the object bytes for private ones."),
            Some(Variation::ByCase)
        );
        assert_eq!(
            tool("Returns the PID when started detached, otherwise the full output."),
            Some(Variation::ByCase)
        );
        assert_eq!(
            tool(
                "If a key is given, returns its JSON record. If no key is given, returns a summary."
            ),
            Some(Variation::ByCase)
        );
        assert_eq!(
            tool("Looks up a build. Returns its progress, and the artifacts once finished."),
            Some(Variation::Unfinished)
        );
        assert_eq!(
            tool("Searches the catalogue; falls back to a fuzzy search if no exact results match."),
            Some(Variation::Fallback)
        );
        assert_eq!(
            tool("Shows a recipe. If no slug is given, lists every recipe instead."),
            Some(Variation::OneOrMany)
        );
        assert_eq!(
            tool(
                "Inspects a repository in two modes: a summary of the tree, or a single file's outline."
            ),
            Some(Variation::ByCase)
        );
        assert_eq!(
            param("Recipe slug (if omitted, lists all recipes).", false),
            None,
            "the presence reader for parameters is `when_omitted`"
        );
        assert!(when_omitted("Recipe slug (if omitted, lists all recipes).").is_some());
        assert!(when_omitted("Recipe slug. If omitted, the default book is used.").is_none());
    }

    #[test]
    fn stable_results_in_tool_descriptions() {
        assert_eq!(
            tool("Retrieve metadata about a file or directory: size, times and permissions."),
            None
        );
        assert_eq!(
            tool("Move or rename files and directories. Returns the new path."),
            None
        );
        assert_eq!(
            tool("Returns the file contents or an error message for each path."),
            None
        );
        assert_eq!(
            tool("List files and directories in a folder; returns one name per line."),
            None
        );
        assert_eq!(
            tool("Returns the diff, or an empty string when nothing changed."),
            None
        );
        assert_eq!(
            tool("Reads text or image files and returns their contents."),
            None,
            "what is read, not what comes back"
        );
        assert_eq!(
            tool("Returns the rows for the query, or an error for a bad one."),
            None
        );
        assert_eq!(
            tool("Waits until the deploy is finished; returns its final report."),
            None,
            "waits for the end: one kind"
        );
        assert_eq!(
            tool("Reads the setting; falls back to the default value."),
            None
        );
    }

    #[test]
    fn varying_results_in_parameters() {
        assert_eq!(
            param(
                "Save the report to this markdown file instead of returning it.",
                false
            ),
            Some(Variation::InlineOrFile)
        );
        assert_eq!(
            param(
                "File to write the rows to. If not provided, rows are returned as text.",
                false
            ),
            Some(Variation::InlineOrFile)
        );
        assert_eq!(
            param(
                "Filename to save the table to. If not provided, it is returned as text.",
                false
            ),
            Some(Variation::InlineOrFile)
        );
        assert_eq!(
            param(
                "Returns the raw archive bytes instead of download URLs.",
                true
            ),
            Some(Variation::Alternatives)
        );
        assert_eq!(
            param(
                "Whether to wait for the job. Set to false to start it in the background.",
                true
            ),
            Some(Variation::Unfinished)
        );
    }

    #[test]
    fn stable_results_in_parameters() {
        assert_eq!(
            param(
                "File name to save the chart to. Defaults to chart-{timestamp}.png.",
                false
            ),
            None
        );
        assert_eq!(
            param(
                "Whether to perform a double click instead of a single click.",
                true
            ),
            None
        );
        assert_eq!(param("Include hidden files in the listing.", true), None);
        assert_eq!(
            param("Whether to add a thumbnail image to the reply.", true),
            None,
            "one more part of the same result"
        );
        assert_eq!(param("If true, follow symbolic links.", true), None);
        assert_eq!(param("Maximum number of lines to return.", false), None);
    }
}
