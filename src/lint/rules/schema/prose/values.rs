//! Values listed in prose ("one of a, b", "'a' or 'b'", "a|b") and lists packed into one
//! string ("comma-separated", "JSON array").

use super::is_identifier;

/// The description's sentences, with `e.g.`/`i.e.` kept whole, each cut before an example cue
/// (`e.g.`, `for example`, `such as`), since examples are not lists of allowed values.
fn sentences(desc: &str) -> Vec<String> {
    let protected = desc
        .replace("e.g.", "e_g_")
        .replace("E.g.", "E_g_")
        .replace("i.e.", "i_e_");
    protected
        .split(['\n', ';'])
        .flat_map(|l| l.split(". "))
        .map(|s| {
            let lower = s.to_ascii_lowercase();
            let cut = [
                "e_g_",
                "for example",
                "such as",
                "example:",
                "examples:",
                "like ",
            ]
            .iter()
            .filter_map(|c| lower.find(c))
            .min()
            .unwrap_or(s.len());
            s[..cut].to_owned()
        })
        .filter(|s| !s.trim().is_empty())
        .collect()
}

/// The values a description lists for a string that should be an enum: `one of a, b, c`,
/// `'a' or 'b'`, `a|b|c`. Unquoted names in `exclude` (sibling parameters: "either text or
/// regex") are not values.
pub(crate) fn listed_values(desc: &str, exclude: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // Bare words may be prose (`either a file or ...`); quoted ones are values.
    let push = |v: &str, quoted: bool, out: &mut Vec<String>| {
        let lower = v.to_ascii_lowercase();
        let prose_word = crate::lint::rules::naming::words::is_stop_word(&lower)
            || exclude.iter().any(|e| e.eq_ignore_ascii_case(v));
        if (quoted || !prose_word) && !out.iter().any(|o| o == v) {
            out.push(v.to_owned());
        }
    };
    for sentence in sentences(desc) {
        let lower = sentence.to_ascii_lowercase();
        // `one of a, b, c` and friends.
        for (cue, quoted_only) in [
            ("one of", false),
            ("either", false),
            ("possible values", false),
            ("allowed values", false),
            ("valid values", false),
            ("supported values", false),
            ("accepted values", false),
            ("options are", false),
            ("options:", false),
            ("must be", true),
            ("can be", true),
            ("set to", true),
        ] {
            let Some(i) = lower.find(cue) else { continue };
            let items = list_after(&sentence[i + cue.len()..], quoted_only);
            if items.len() >= 2 {
                for (v, quoted) in items {
                    push(v, quoted, &mut out);
                }
            }
        }
        // `a|b|c`.
        for tok in sentence.split_whitespace() {
            let t = tok.trim_matches(|c: char| "()[]\"'`.,;:".contains(c));
            let parts: Vec<&str> = t.split('|').collect();
            if parts.len() >= 2 && parts.iter().all(|p| is_identifier(p)) {
                for p in parts {
                    push(p, true, &mut out);
                }
            }
        }
        // `Set to "x" to …; defaults to "y"`: the value to set and the default are the two values.
        if lower.contains("set to ")
            && let Some(i) = lower.find("set to ")
            && let Some(set) = quoted_tokens(&sentence[i..]).first().copied()
        {
            let whole = desc.to_ascii_lowercase();
            for cue in ["defaults to ", "default is ", "default: "] {
                if let Some(j) = whole.find(cue)
                    && let Some(default) = quoted_tokens(&desc[j..]).first().copied()
                    && default != set
                    && whole[j + cue.len()..].starts_with(['"', '\'', '`'])
                {
                    push(set, true, &mut out);
                    push(default, true, &mut out);
                }
            }
        }
        // `'a' or 'b'`: two quoted values and a word that makes them alternatives.
        let quoted = quoted_tokens(&sentence);
        if quoted.len() >= 2
            && [" or ", "one of", "either", "values", "options"]
                .iter()
                .any(|c| lower.contains(c))
        {
            for q in quoted {
                push(q, true, &mut out);
            }
        }
    }
    out
}

/// Quoted identifier-like tokens of a sentence.
fn quoted_tokens(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(i) = rest.find(['\'', '"', '`']) {
        let q = rest[i..].chars().next().unwrap_or('"');
        let after = &rest[i + 1..];
        let Some(j) = after.find(q) else { break };
        let inner = &after[..j];
        // An apostrophe inside a word (`file's`) is not a quote.
        let word_before = rest[..i]
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric);
        if is_identifier(inner) && !(q == '\'' && word_before) {
            out.push(inner);
            rest = &after[j + 1..];
        } else {
            rest = after;
        }
    }
    out
}

/// A list of values at the start of `s`: items separated by `,`, `/`, `|`, `or`, `and`.
fn list_after(s: &str, quoted_only: bool) -> Vec<(&str, bool)> {
    let mut items = Vec::new();
    let mut rest = s.trim_start_matches([':', ' ']);
    loop {
        rest = rest.trim_start();
        let (item, after, quoted) = match rest.chars().next() {
            Some(q @ ('\'' | '"' | '`')) => {
                let Some(j) = rest[1..].find(q) else { break };
                (&rest[1..1 + j], &rest[2 + j..], true)
            }
            Some(_) if !quoted_only => {
                let end = rest
                    .find(|c: char| {
                        !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '+'))
                    })
                    .unwrap_or(rest.len());
                let item = rest[..end].trim_end_matches('.');
                (item, &rest[item.len()..], false)
            }
            _ => break,
        };
        if !is_identifier(item) {
            break;
        }
        items.push((item, quoted));
        let mut a = after.trim_start();
        let mut sep = false;
        for s in [",", "/", "|"] {
            if let Some(x) = a.strip_prefix(s) {
                a = x.trim_start();
                sep = true;
            }
        }
        for w in ["or ", "and "] {
            if let Some(x) = a.strip_prefix(w) {
                a = x;
                sep = true;
            }
        }
        if !sep {
            break;
        }
        rest = a;
    }
    items
}

/// How a description says a string holds several values, if it does: `comma-separated`,
/// `JSON-encoded`, `a list`.
pub(crate) fn delimited(desc: &str) -> Option<&'static str> {
    const PHRASES: &[(&str, &str)] = &[
        ("comma-separated", "comma-separated"),
        ("comma separated", "comma-separated"),
        ("comma-delimited", "comma-separated"),
        ("comma delimited", "comma-separated"),
        ("separated by comma", "comma-separated"),
        ("separated by a comma", "comma-separated"),
        ("space-separated", "space-separated"),
        ("space separated", "space-separated"),
        ("whitespace-separated", "space-separated"),
        ("separated by space", "space-separated"),
        ("newline-separated", "newline-separated"),
        ("newline separated", "newline-separated"),
        ("line-separated", "newline-separated"),
        ("separated by newline", "newline-separated"),
        ("one per line", "newline-separated"),
        ("semicolon-separated", "semicolon-separated"),
        ("json string", "JSON-encoded"),
        ("json-encoded", "JSON-encoded"),
        ("json encoded", "JSON-encoded"),
        ("json-serialized", "JSON-encoded"),
        ("json.loads", "JSON-encoded"),
        ("stringified json", "JSON-encoded"),
        ("json array", "JSON-encoded"),
        ("json list", "JSON-encoded"),
        ("json object", "JSON-encoded"),
    ];
    let lower = desc.to_ascii_lowercase();
    if let Some((_, what)) = PHRASES.iter().find(|(p, _)| lower.contains(p)) {
        return Some(what);
    }
    let start = lower
        .trim_start()
        .trim_start_matches("optional")
        .trim_start_matches([':', ',', '.', ' '])
        .trim_start_matches("a ")
        .trim_start_matches("an ")
        .trim_start_matches("the ");
    (start.starts_with("list of ") || start.starts_with("array of ")).then_some("a list")
}

/// How a tool description says its one input packs several values, if it does: "Input should be
/// a json string with two keys", "Input is a comma-separated list of names".
pub(crate) fn delimited_input(desc: &str) -> Option<&'static str> {
    let lower = desc.to_ascii_lowercase();
    let about_input = [
        "input should be",
        "input is",
        "input must be",
        "the input should",
    ]
    .iter()
    .filter_map(|c| lower.find(c).map(|i| &lower[i..]))
    .next()?;
    // The clause about the input only: "Input is an empty string, output is a comma-separated
    // list" says nothing about the input's shape.
    let end = about_input
        .find([',', ';'])
        .into_iter()
        .chain(about_input.find(". "))
        .min()
        .unwrap_or(about_input.len());
    delimited(&about_input[..end]).filter(|w| *w != "a list")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listed_value_forms() {
        assert_eq!(
            listed_values("Output format, one of json, text or markdown.", &[]),
            ["json", "text", "markdown"]
        );
        assert_eq!(
            listed_values("Either 'asc' or 'desc'.", &[]),
            ["asc", "desc"]
        );
        assert_eq!(listed_values("Sort order: asc|desc", &[]), ["asc", "desc"]);
        assert_eq!(
            listed_values(
                "Whether to list local branches ('local'), remote branches ('remote') or all branches('all').",
                &[]
            ),
            ["local", "remote", "all"]
        );
        assert_eq!(
            listed_values(
                "Optional mode selector: \"slice\" for simple ranges (default) or \"indentation\" to expand.",
                &[]
            ),
            ["slice", "indentation"]
        );
    }

    #[test]
    fn set_to_and_default_values() {
        assert_eq!(
            listed_values(
                "Access level. Set to \"admin\" to manage members; defaults to \"member\".",
                &[]
            ),
            ["admin", "member"]
        );
        assert!(listed_values("Set to \"admin\" to manage members.", &[]).is_empty());
    }

    #[test]
    fn listed_values_ignore_examples_and_prose() {
        assert!(listed_values("The glob pattern (e.g., \"*.js\", \"src/*.ts\")", &[]).is_empty());
        assert!(
            listed_values(
                "Use regex with alternation (e.g., 'word1|word2|word3')",
                &[]
            )
            .is_empty()
        );
        assert!(listed_values("Must be 1 or greater.", &[]).is_empty());
        assert!(
            listed_values(
                "Provide either text or regex, not both.",
                &["text", "regex"]
            )
            .is_empty()
        );
        assert_eq!(
            listed_values("Mode: \"slice\" or \"indentation\".", &["indentation"]),
            ["slice", "indentation"]
        );
        assert!(listed_values("Can be a relative path or an absolute path.", &[]).is_empty());
        assert!(listed_values("Defaults to `page-{timestamp}.{png|jpeg|webp}`.", &[]).is_empty());
        assert!(
            listed_values(
                "IANA timezone name (e.g., 'America/New_York'). Use 'UTC' as local timezone.",
                &[]
            )
            .is_empty()
        );
    }

    #[test]
    fn delimited_inputs() {
        assert_eq!(
            delimited_input(
                "Posts a form. Input should be a json string with two keys: \"url\" and \"data\"."
            ),
            Some("JSON-encoded")
        );
        assert_eq!(
            delimited_input("Input is a comma-separated list of tags; output is the count."),
            Some("comma-separated")
        );
        assert_eq!(
            delimited_input("Returns a JSON string of the results."),
            None
        );
        assert_eq!(
            delimited_input(
                "Input is an empty string, output is a comma-separated list of tables."
            ),
            None
        );
    }

    #[test]
    fn delimited_forms() {
        assert_eq!(
            delimited("A comma-separated list of table names."),
            Some("comma-separated")
        );
        assert_eq!(
            delimited("JSON array of keys to press"),
            Some("JSON-encoded")
        );
        assert_eq!(delimited("List of shell commands to run."), Some("a list"));
        assert_eq!(delimited("Optional: list of labels"), Some("a list"));
        assert_eq!(delimited("The path to read; see the list of roots."), None);
    }
}
