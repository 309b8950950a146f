//! Operations chosen without an action parameter: a boolean that turns the call into another
//! operation ("Preview changes instead of applying them"), a value whose presence or emptiness
//! has its own meaning ("may be empty to poll", "If omitted, the dialog is dismissed"), the tool
//! description choosing by which parameters are set ("Provide `line` to insert ... Otherwise, the
//! text is replaced"), a patch language whose sections add, update, move or delete files, and a
//! code parameter whose language is a list of named operations.

use super::conditions::contains_words;
use super::sentences;

/// Boolean names that are another operation whatever their description says.
const OPERATION_FLAGS: &[&[&str]] = &[
    &["dry", "run"],
    &["dryrun"],
    &["preview"],
    &["preview", "only"],
    &["validate", "only"],
    &["check", "only"],
    &["plan", "only"],
    &["simulate"],
    &["append"],
    &["restart"],
];

/// Whether a boolean parameter switches the tool to another operation, with the evidence: its name
/// (`dry_run`, `append`, `restart`) or a sentence of its description ("... rather than waiting
/// for a response", "the command is an input to the running process").
pub(crate) fn boolean_switch(name_words: &[String], desc: &str) -> Option<String> {
    if OPERATION_FLAGS
        .iter()
        .any(|f| f.len() == name_words.len() && f.iter().zip(name_words).all(|(a, b)| a == b))
    {
        let first = sentences(desc).into_iter().next();
        return Some(first.unwrap_or_else(|| name_words.join("_")));
    }
    sentences(desc).into_iter().find(|s| {
        let l = s.to_ascii_lowercase();
        instead_of_another_operation(&l)
            || [
                "to the running process",
                "input to the running",
                "to its stdin",
            ]
            .iter()
            .any(|c| l.contains(c))
    })
}

/// "X instead of doing Y" / "rather than doing Y": a gerund after the cue, which is not about
/// returning (that is a result that varies) and not the same verb as before the cue.
pub(crate) fn instead_of_another_operation(l: &str) -> bool {
    for cue in ["instead of ", "rather than "] {
        let mut from = 0;
        while let Some(found) = l.get(from..).and_then(|s| s.find(cue)) {
            let at = from + found;
            from = at + cue.len();
            let Some(next) = l[at + cue.len()..]
                .split(|c: char| !c.is_ascii_alphabetic())
                .find(|w| !w.is_empty())
            else {
                continue;
            };
            if next.len() <= 4 || !next.ends_with("ing") || next.starts_with("return") {
                continue;
            }
            // "Returns the raw bytes instead of decoding them" is about the result.
            let before = &l[..at];
            if ["return", "returns", "returned", "output"]
                .iter()
                .any(|w| contains_words(before, w))
            {
                continue;
            }
            // "Scan quickly instead of scanning every byte" is one operation.
            let mut stem = &next[..next.len() - 3];
            let b = stem.as_bytes();
            if b.len() > 2 && b[b.len() - 1] == b[b.len() - 2] {
                stem = &stem[..stem.len() - 1];
            }
            if before.contains(stem) {
                continue;
            }
            return true;
        }
    }
    false
}

/// Verbs of an operation that a special value selects ("polls", "cancel").
const SPECIAL_VERBS: &[&str] = &[
    "poll",
    "polls",
    "cancel",
    "cancels",
    "clear",
    "clears",
    "reset",
    "resets",
    "delete",
    "deletes",
    "remove",
    "removes",
    "close",
    "closes",
    "stop",
    "stops",
    "dismiss",
    "dismisses",
];

/// Operation verbs that, each after a different parameter, make one tool several operations:
/// "give old/new text to replace, an insert line to insert, or file text to create".
const OPERATION_VERBS: &[&str] = &[
    "replace",
    "insert",
    "create",
    "delete",
    "remove",
    "append",
    "rename",
    "move",
    "overwrite",
    "update",
    "edit",
    "add",
    "prepend",
];

/// A parameter whose absence or emptiness is an operation of its own: "may be empty to poll",
/// "empty string to view additional logs", "If omitted, the file chooser is cancelled".
pub(crate) fn special_value(desc: &str) -> Option<String> {
    sentences(desc).into_iter().find(|s| {
        let l = s.to_ascii_lowercase();
        let empty_to = [
            "be empty to ",
            "empty string to ",
            "an empty value to ",
            "empty to ",
        ]
        .iter()
        .any(|c| {
            l.find(c).is_some_and(|i| {
                l[i + c.len()..]
                    .split_whitespace()
                    .next()
                    .is_some_and(|w| w.len() > 2 && !matches!(w, "use" | "the" | "all"))
            })
        });
        let omitted_ends = (l.contains("if omitted") || l.contains("when omitted"))
            && [
                "cancelled",
                "canceled",
                "dismissed",
                "closed",
                "deleted",
                "removed",
                "cleared",
            ]
            .iter()
            .any(|w| contains_words(&l, w));
        // "An empty string polls for output", "omit the paths to cancel".
        let empty_does = ["empty string ", "empty value ", "empty "].iter().any(|c| {
            l.match_indices(c).any(|(i, m)| {
                l[i + m.len()..]
                    .split_whitespace()
                    .next()
                    .is_some_and(|w| SPECIAL_VERBS.contains(&w.trim_end_matches([',', '.'])))
            })
        });
        let omit_to = l.find("omit").is_some_and(|i| {
            l[i..].split(" to ").nth(1).is_some_and(|rest| {
                rest.split_whitespace()
                    .next()
                    .is_some_and(|w| SPECIAL_VERBS.contains(&w.trim_end_matches([',', '.'])))
            })
        });
        empty_to || omitted_ends || empty_does || omit_to
    })
}

/// A sentence of a tool description that chooses the operation by which parameters are set:
/// "Provide `insert_line` to insert ...; otherwise the text is replaced", "When `line` is given,
/// inserts instead of replacing", "To append, set both `start` and `end` to -1", or an edit that
/// creates the file when it does not exist.
pub(crate) fn presence_switch(desc: &str, params: &[&str], edits: bool) -> Option<String> {
    let all = sentences(desc);
    for (i, s) in all.iter().enumerate() {
        let l = s.to_ascii_lowercase();
        // Scanning every parameter name is the costly part (a tool may have thousands): done
        // only for a sentence whose cheap cues already hold.
        let names_param = || params.iter().any(|p| contains_words(&l, p));
        // "give `old`/`new` to replace, `line` to insert, or `text` to create".
        let mut verbs: Vec<&str> = Vec::new();
        for (at, _) in l.match_indices(" to ") {
            if let Some(v) = l[at + 4..]
                .split(|c: char| !c.is_ascii_alphabetic())
                .next()
                .filter(|v| OPERATION_VERBS.contains(v))
                && !verbs.contains(&v)
            {
                verbs.push(v);
            }
        }
        if verbs.len() >= 2
            && params
                .iter()
                .filter(|p| contains_words(&l, p))
                .nth(1)
                .is_some()
        {
            return Some(s.clone());
        }
        // "Provide X to insert ... Otherwise, the tool replaces ..."
        if (l.starts_with("provide ") || l.starts_with("give ") || l.starts_with("set "))
            && all
                .get(i + 1)
                .is_some_and(|n| n.to_ascii_lowercase().starts_with("otherwise"))
            && names_param()
        {
            return Some(format!("{s}. {}", all[i + 1]));
        }
        if (l.contains("when provided") || l.contains("if provided") || l.contains("when given"))
            && instead_of_another_operation(&l)
            && names_param()
        {
            return Some(s.clone());
        }
        // "To append to a file, set both `start` and `end` to `-1`."
        if let Some(rest) = l.strip_prefix("to ")
            && rest.split_whitespace().next().is_some_and(|v| {
                matches!(
                    v.trim_end_matches([',', ':']),
                    "append"
                        | "prepend"
                        | "create"
                        | "delete"
                        | "remove"
                        | "insert"
                        | "clear"
                        | "cancel"
                        | "reset"
                        | "rename"
                        | "move"
                )
            })
            && (l.contains(", set ") || l.contains(", pass ") || l.contains(", use "))
            && names_param()
        {
            return Some(s.clone());
        }
        // An edit that also creates: "or creates the file ... if file does not exist".
        if edits
            && (l.contains("does not exist") || l.contains("doesn't exist"))
            && ["create", "creates", "created"]
                .iter()
                .any(|w| contains_words(&l, w))
        {
            return Some(s.clone());
        }
    }
    None
}

/// The file operations a patch language offers, when a description spells out at least three:
/// `*** Add File`, `*** Delete File`, `*** Update File`, `*** Move to`.
pub(crate) fn patch_operations(desc: &str) -> Vec<&'static str> {
    let l = desc.to_ascii_lowercase();
    let mut ops = Vec::new();
    for (op, cues) in [
        ("add", &["add file", "create file", "new file:"][..]),
        ("update", &["update file", "modify file"][..]),
        ("delete", &["delete file", "remove file"][..]),
        ("move", &["move to:", "move file", "rename to:"][..]),
    ] {
        if cues.iter().any(|c| l.contains(c)) {
            ops.push(op);
        }
    }
    if ops.len() >= 3 {
        return ops;
    }
    // The same in prose: "A patch that can add, update, move or delete files".
    let mut ops = Vec::new();
    for s in sentences(desc) {
        let l = s.to_ascii_lowercase();
        if !(contains_words(&l, "files") || contains_words(&l, "file"))
            || !["patch", "diff", "changeset"].iter().any(|w| l.contains(w))
        {
            continue;
        }
        for (op, verbs) in [
            ("add", &["add", "adds", "create", "creates"][..]),
            (
                "update",
                &["update", "updates", "modify", "modifies", "edit", "edits"][..],
            ),
            ("delete", &["delete", "deletes", "remove", "removes"][..]),
            ("move", &["move", "moves", "rename", "renames"][..]),
        ] {
            if !ops.contains(&op) && verbs.iter().any(|v| contains_words(&l, v)) {
                ops.push(op);
            }
        }
    }
    if ops.len() >= 3 { ops } else { Vec::new() }
}

/// The operations of a small language spelled out as function signatures, one per line
/// (`goto(url: str)`, `click(bid: str, ...)`), when there are at least five.
pub(crate) fn listed_functions(desc: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in desc.lines() {
        let t = line.trim_start();
        let Some(open) = t.find('(') else { continue };
        let name = &t[..open];
        let signature = !name.is_empty()
            && name.len() <= 40
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            && name.chars().next().is_some_and(|c| c.is_ascii_lowercase())
            && t.trim_end().ends_with(')');
        if signature && !out.iter().any(|o| o == name) {
            out.push(name.to_owned());
        }
    }
    if out.len() >= 5 { out } else { Vec::new() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split('_').map(str::to_owned).collect()
    }

    #[test]
    fn booleans_that_switch_operations() {
        assert!(boolean_switch(&w("dry_run"), "Only show what would change.").is_some());
        assert!(boolean_switch(&w("append"), "").is_some());
        assert!(boolean_switch(&w("restart"), "Start a fresh session.").is_some());
        assert!(
            boolean_switch(
                &w("as_input"),
                "If true, the text is sent as input to the running process."
            )
            .is_some()
        );
        assert!(
            boolean_switch(
                &w("fail_fast"),
                "When true, raise the error rather than waiting for the queue to drain."
            )
            .is_some()
        );
    }

    #[test]
    fn booleans_that_refine_one_operation() {
        for (name, desc) in [
            (
                "double",
                "Whether to perform a double click instead of a single click.",
            ),
            (
                "full_page",
                "When true, captures the full page instead of the viewport.",
            ),
            ("raw", "Returns the raw bytes instead of decoding them."),
            ("recursive", "If true, lists folders recursively."),
            ("fast", "Scan quickly instead of scanning every byte."),
        ] {
            assert_eq!(boolean_switch(&w(name), desc), None, "{name}");
        }
    }

    #[test]
    fn special_values() {
        assert!(special_value("Text to send; may be empty to poll for output.").is_some());
        assert!(special_value("Command to run. Can be empty string to fetch more logs.").is_some());
        assert!(special_value("Files to attach. If omitted, the picker is cancelled.").is_some());
        assert_eq!(special_value("If omitted, all fields are returned."), None);
        assert_eq!(
            special_value("Leave empty to use the default branch."),
            None
        );
    }

    #[test]
    fn operations_chosen_by_parameters() {
        let p = ["line", "old", "new"];
        assert!(
            presence_switch(
                "Edits a note. Provide `line` to insert `new` there. Otherwise, `old` is replaced by `new`.",
                &p,
                true
            )
            .is_some()
        );
        assert!(
            presence_switch("Changes a note. To append, set `line` to -1.", &p, true).is_some()
        );
        assert!(
            presence_switch(
                "Replaces `old` with `new` in a note, or creates the note if it does not exist.",
                &p,
                true
            )
            .is_some()
        );
        // Creating a missing file is what a write does; only an edit that also creates counts.
        assert_eq!(
            presence_switch(
                "Writes the note, creating it if it does not exist.",
                &p,
                false
            ),
            None
        );
        assert_eq!(
            presence_switch("Provide `line` to jump there.", &p, true),
            None
        );
    }

    /// The patterns the issue names, in its own (invented) words.
    #[test]
    fn the_issues_examples() {
        assert!(
            presence_switch(
                "Give old/new text to replace, an insert line to insert, or file text to create.",
                &["old", "new", "line", "text"],
                true
            )
            .is_some()
        );
        assert!(special_value("An empty string polls for output.").is_some());
        assert!(special_value("The paths to upload; omit the paths to cancel.").is_some());
        assert!(boolean_switch(&w("dry_run"), "Preview instead of applying.").is_some());
        assert!(boolean_switch(&w("append"), "Append instead of overwrite.").is_some());
        assert!(
            boolean_switch(
                &w("is_input"),
                "Send the text to the running process instead of starting a command."
            )
            .is_some()
        );
        assert!(boolean_switch(&w("restart"), "Restart the session instead of running.").is_some());
        assert_eq!(
            patch_operations("A patch that can add, update, move or delete files."),
            ["add", "update", "delete", "move"]
        );
    }

    #[test]
    fn patch_languages() {
        let grammar = "Sections: `*** Add File: p`, `*** Update File: p` (optionally `*** Move to: q`), `*** Delete File: p`.";
        assert_eq!(
            patch_operations(grammar),
            ["add", "update", "delete", "move"]
        );
        assert!(patch_operations("A unified diff to apply to one file.").is_empty());
    }

    #[test]
    fn function_lists() {
        let doc = "Calls:\n\nopen(url: str)\n    Open a page.\nback()\nforward()\nclick(id: str)\ntype_text(id: str, text: str)\n";
        assert_eq!(
            listed_functions(doc),
            ["open", "back", "forward", "click", "type_text"]
        );
        assert!(listed_functions("Example:\nprint(x)\nfoo(y)\n").is_empty());
    }
}
