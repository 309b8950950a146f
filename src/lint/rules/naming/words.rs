//! Words in names and descriptions: splitting identifiers in any case style, tokenizing prose,
//! and the small vocabularies (stop words, abbreviations) the naming and schema rules share; the
//! verbs and their synonyms come from the one verb table, [`crate::words::verbs`].

pub(crate) use crate::words::verbs::{is_verb, synonyms};
pub(crate) use crate::words::{split_identifier, tokens};

/// Number of words in prose: whitespace-separated pieces holding a letter or digit.
pub(crate) fn word_count(text: &str) -> usize {
    text.split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .count()
}

/// Words that carry no meaning for comparing descriptions.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been",
    "before", "being", "both", "but", "by", "can", "could", "do", "does", "e", "each", "eg", "etc",
    "for", "from", "g", "given", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its",
    "may", "more", "most", "must", "no", "not", "of", "on", "one", "only", "or", "other", "over",
    "s", "same", "should", "so", "some", "such", "than", "that", "the", "their", "them", "then",
    "there", "these", "they", "this", "those", "to", "tool", "under", "up", "use", "used", "uses",
    "using", "via", "was", "we", "were", "what", "when", "where", "which", "while", "will", "with",
    "within", "without", "would", "you", "your",
];

/// Whether a lowercased word is a stop word.
pub(crate) fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

/// Common abbreviations in parameter names and the word they stand for.
const ABBREVIATIONS: &[(&str, &str)] = &[
    ("addr", "address"),
    ("arg", "argument"),
    ("args", "arguments"),
    ("cfg", "configuration"),
    ("config", "configuration"),
    ("desc", "description"),
    ("dir", "directory"),
    ("env", "environment"),
    ("id", "identifier"),
    ("idx", "index"),
    ("max", "maximum"),
    ("min", "minimum"),
    ("msg", "message"),
    ("num", "number"),
    ("pos", "position"),
    ("repo", "repository"),
    ("src", "source"),
    ("str", "string"),
    ("tmp", "temporary"),
    ("url", "address"),
];

/// The word an abbreviation stands for (the word itself when it is none).
pub(crate) fn expand(word: &str) -> &str {
    ABBREVIATIONS
        .iter()
        .find(|(a, _)| *a == word)
        .map(|(_, full)| *full)
        .unwrap_or(word)
}

/// A crude singular: `files` → `file`, `entries` → `entry`, `boxes` → `box`.
pub(crate) fn singular(word: &str) -> &str {
    if word.len() > 3 && (word.ends_with("sses") || word.ends_with("xes") || word.ends_with("ches"))
    {
        return &word[..word.len() - 2];
    }
    if word.len() > 2
        && word.ends_with('s')
        && !word.ends_with("ss")
        && !word.ends_with("us")
        && !word.ends_with("is")
    {
        return &word[..word.len() - 1];
    }
    word
}

/// The case style of a tool name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum CaseStyle {
    /// `read_file`
    Snake,
    /// `read-file`
    Kebab,
    /// `readFile`
    Camel,
    /// `ReadFile`
    Pascal,
    /// `READ_FILE`
    ScreamingSnake,
    /// `fs.read`
    Dotted,
    /// `read`: one lowercase word, compatible with every style.
    Word,
    /// Anything else (`Read_file`, `read_File-x`).
    Mixed,
}

impl CaseStyle {
    /// How the style is called in messages.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CaseStyle::Snake => "snake_case",
            CaseStyle::Kebab => "kebab-case",
            CaseStyle::Camel => "camelCase",
            CaseStyle::Pascal => "PascalCase",
            CaseStyle::ScreamingSnake => "SCREAMING_SNAKE_CASE",
            CaseStyle::Dotted => "dotted.names",
            CaseStyle::Word => "a single lowercase word",
            CaseStyle::Mixed => "mixed case",
        }
    }

    /// The style of a name.
    pub(crate) fn of(name: &str) -> CaseStyle {
        let has = |c: char| name.contains(c);
        let upper = name.chars().any(char::is_uppercase);
        let lower = name.chars().any(char::is_lowercase);
        let first_upper = name.chars().next().is_some_and(char::is_uppercase);
        let seps = [has('_'), has('-'), has('.')]
            .iter()
            .filter(|b| **b)
            .count();
        if seps > 1 {
            return CaseStyle::Mixed;
        }
        if has('.') {
            return CaseStyle::Dotted;
        }
        match (has('_'), has('-'), upper, lower) {
            (true, _, false, _) => CaseStyle::Snake,
            (true, _, true, false) => CaseStyle::ScreamingSnake,
            (_, true, false, _) => CaseStyle::Kebab,
            (false, false, false, _) => CaseStyle::Word,
            (false, false, true, true) if first_upper => CaseStyle::Pascal,
            (false, false, true, true) => CaseStyle::Camel,
            _ => CaseStyle::Mixed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(s: &str) -> Vec<String> {
        split_identifier(s)
    }

    #[test]
    fn identifiers_split_in_every_style() {
        assert_eq!(split("getFileContents"), ["get", "file", "contents"]);
        assert_eq!(split("read_file"), ["read", "file"]);
        assert_eq!(
            split("get-annotated-message"),
            ["get", "annotated", "message"]
        );
        assert_eq!(split("HTMLParser"), ["html", "parser"]);
        assert_eq!(split("DATA_EXPORT_v2"), ["data", "export", "v2"]);
        assert_eq!(split("admin.tools.list"), ["admin", "tools", "list"]);
        assert_eq!(split("sortBy"), ["sort", "by"]);
        assert_eq!(split(""), Vec::<String>::new());
    }

    #[test]
    fn vocabularies_are_sorted_for_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn singulars() {
        assert_eq!(singular("files"), "file");
        assert_eq!(singular("boxes"), "box");
        assert_eq!(singular("status"), "status");
        assert_eq!(singular("address"), "address");
        assert_eq!(singular("ids"), "id");
    }

    #[test]
    fn case_styles() {
        assert_eq!(CaseStyle::of("read_file"), CaseStyle::Snake);
        assert_eq!(CaseStyle::of("read-file"), CaseStyle::Kebab);
        assert_eq!(CaseStyle::of("readFile"), CaseStyle::Camel);
        assert_eq!(CaseStyle::of("ReadFile"), CaseStyle::Pascal);
        assert_eq!(CaseStyle::of("READ_FILE"), CaseStyle::ScreamingSnake);
        assert_eq!(CaseStyle::of("fs.read"), CaseStyle::Dotted);
        assert_eq!(CaseStyle::of("read"), CaseStyle::Word);
        assert_eq!(CaseStyle::of("read_file-x"), CaseStyle::Mixed);
        assert_eq!(CaseStyle::of("git_diff_v2"), CaseStyle::Snake);
    }
}
