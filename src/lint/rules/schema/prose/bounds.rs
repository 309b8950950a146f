//! Constraints a parameter's description states in words: a numeric bound ("Must be 1 or
//! greater", "one-based", "positive integer"), a length ("Max 256 chars"), a count ("array of two
//! integers", "Limit: 50 items per call"), a concrete format ("24-hour format (HH:MM)",
//! "YYYY-MM-DD") or a fixed value ("An empty string").
//!
//! Each finder returns the sentence that states the constraint and what it fixes, so the rule can
//! quote it and name the keyword; each misses rather than guesses (a sentence with a sentinel such
//! as "-1 means the end" states no simple bound).

use super::conditions::contains_words;
use super::sentences;

/// A numeric bound stated in prose.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Stated {
    /// The sentence that states it.
    pub sentence: String,
    /// The lowest value, if stated.
    pub min: Option<f64>,
    /// The highest value, if stated.
    pub max: Option<f64>,
    /// Whether the prose says the value is a whole number.
    pub integer: bool,
}

/// Units that make a number after "max" a count of items rather than a value.
const ITEM_UNITS: &[&str] = &[
    "items", "item", "entries", "elements", "values", "files", "paths", "urls", "ids", "names",
    "options", "keys", "objects", "requests", "queries", "commands",
];
/// Units that make a number a length of text.
const TEXT_UNITS: &[&str] = &["chars", "characters", "char", "bytes", "letters"];

/// A number (possibly negative, possibly with a thousands separator) at the start of `s`.
fn number_at(s: &str) -> Option<(f64, &str)> {
    let s = s.trim_start_matches([' ', '~', '(', ':']);
    let end = s
        .char_indices()
        .find(|(i, c)| !(c.is_ascii_digit() || *c == ',' || *c == '.' || (*i == 0 && *c == '-')))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    let digits = s[..end].trim_end_matches(['.', ',']).replace(',', "");
    let n: f64 = digits.parse().ok()?;
    Some((n, &s[end..]))
}

/// The unit word right after a number, if any.
fn unit_after(rest: &str) -> &str {
    rest.split(|c: char| !c.is_ascii_alphanumeric())
        .find(|w| !w.is_empty())
        .unwrap_or("")
}

/// Whether the words after a number make it relative to something else ("at most 2000 lines
/// after start_line"): no keyword says that.
fn relative(rest: &str) -> bool {
    rest.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(3)
        .any(|w| {
            matches!(
                w,
                "after" | "before" | "from" | "beyond" | "past" | "than" | "of"
            )
        })
}

/// A bound on a numeric value stated in `desc`.
pub(crate) fn numeric(desc: &str) -> Option<Stated> {
    for s in sentences(desc) {
        let l = s.to_ascii_lowercase();
        // Sentinels ("-1 means the end") make the allowed values more than a range.
        if l.contains("-1") {
            continue;
        }
        let mut st = Stated {
            sentence: s.clone(),
            min: None,
            max: None,
            integer: contains_words(&l, "integer") || contains_words(&l, "whole number"),
        };
        for cue in [
            "1-based",
            "one-based",
            "1-indexed",
            "one-indexed",
            "indexing at 1",
        ] {
            if l.contains(cue) {
                st.min = Some(1.0);
                st.integer = true;
            }
        }
        if contains_words(&l, "positive") {
            st.min = Some(if st.integer { 1.0 } else { 0.0 });
        }
        if [
            "non-negative",
            "nonnegative",
            "zero or greater",
            "0 or greater",
        ]
        .iter()
        .any(|c| l.contains(c))
        {
            st.min = Some(0.0);
        }
        for cue in [
            "must be at least ",
            "greater than or equal to ",
            ">= ",
            "(min ",
            "min: ",
            "minimum of ",
            "at least ",
        ] {
            if let Some(i) = l.find(cue)
                && let Some((n, rest)) = number_at(&l[i + cue.len()..])
                && !ITEM_UNITS.contains(&unit_after(rest))
                && !TEXT_UNITS.contains(&unit_after(rest))
            {
                st.min = Some(n);
            }
        }
        // "Must be 1 or greater", "2 or more".
        for cue in [" or greater", " or more", " or higher", " or above"] {
            if let Some(i) = l.find(cue) {
                let before = l[..i].trim_end();
                let start = before
                    .rfind(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
                    .map(|j| j + 1)
                    .unwrap_or(0);
                if let Ok(n) = before[start..].parse::<f64>() {
                    st.min = Some(n);
                }
            }
        }
        for cue in [
            "(max ",
            "max: ",
            "maximum of ",
            "at most ",
            "no more than ",
            "cannot exceed ",
            "must not exceed ",
            "less than or equal to ",
            "<= ",
        ] {
            if let Some(i) = l.find(cue)
                && let Some((n, rest)) = number_at(&l[i + cue.len()..])
                && !ITEM_UNITS.contains(&unit_after(rest))
                && !TEXT_UNITS.contains(&unit_after(rest))
                && !relative(rest)
            {
                st.max = Some(n);
            }
        }
        if let Some(i) = l.find("between ")
            && let Some((a, rest)) = number_at(&l[i + 8..])
            && let Some(rest) = rest.trim_start().strip_prefix("and ")
            && let Some((b, _)) = number_at(rest)
        {
            st.min = Some(a);
            st.max = Some(b);
        }
        if st.min.is_some() || st.max.is_some() {
            return Some(st);
        }
    }
    None
}

/// The longest a string may be, stated in `desc` ("Max 256 chars", "within 12000 characters").
pub(crate) fn length(desc: &str) -> Option<(String, f64)> {
    count_with_units(desc, TEXT_UNITS)
}

/// How many items an array holds, stated in `desc`: `(sentence, min, max)`.
pub(crate) fn count(desc: &str) -> Option<(String, Option<f64>, Option<f64>)> {
    for s in sentences(desc) {
        let l = s.to_ascii_lowercase();
        for (word, n) in [("two", 2.0), ("three", 3.0), ("four", 4.0)] {
            for form in [
                format!("array of {word} "),
                format!("list of {word} "),
                format!("exactly {word} "),
                format!("{word} integers"),
                format!("{word} numbers"),
            ] {
                if l.contains(&form) {
                    return Some((s.clone(), Some(n), Some(n)));
                }
            }
        }
    }
    count_with_units(desc, ITEM_UNITS).map(|(s, n)| (s, None, Some(n)))
}

/// Words that make a stated size advice rather than a limit ("keep it under 6000 characters when
/// possible").
const HEDGES: &[&str] = &[
    "when possible",
    "if possible",
    "where possible",
    "ideally",
    "preferably",
    "try to",
    "recommended",
];

/// "max N <unit>", "up to N <unit>", "limit: N <unit>", "within N <unit>", "at or below N <unit>".
fn count_with_units(desc: &str, units: &[&str]) -> Option<(String, f64)> {
    for s in sentences(desc) {
        let l = s.to_ascii_lowercase();
        if HEDGES.iter().any(|h| l.contains(h)) {
            continue;
        }
        for cue in [
            "max ",
            "max: ",
            "maximum ",
            "maximum of ",
            "up to ",
            "at most ",
            "no more than ",
            "limit: ",
            "limit of ",
            "within ",
            "at or below ",
            "cannot exceed ",
            "must not exceed ",
        ] {
            let mut from = 0;
            while let Some(found) = l.get(from..).and_then(|x| x.find(cue)) {
                let i = from + found;
                from = i + cue.len();
                if i > 0 && l.as_bytes()[i - 1].is_ascii_alphanumeric() {
                    continue;
                }
                if let Some((n, rest)) = number_at(&l[i + cue.len()..])
                    && units.contains(&unit_after(rest))
                {
                    return Some((s.clone(), n));
                }
            }
        }
        // "N characters or fewer", "(N chars max)".
        for u in units {
            let mut from = 0;
            while let Some(found) = l.get(from..).and_then(|x| x.find(u)) {
                let i = from + found;
                from = i + u.len();
                let after = l[i + u.len()..].trim_start();
                if !(after.starts_with("or fewer")
                    || after.starts_with("or less")
                    || after.starts_with("max"))
                {
                    continue;
                }
                let before = l[..i].trim_end();
                let start = before
                    .rfind(|c: char| !(c.is_ascii_digit() || c == ','))
                    .map(|j| j + 1)
                    .unwrap_or(0);
                if let Ok(n) = before[start..].replace(',', "").parse::<f64>() {
                    return Some((s.clone(), n));
                }
            }
        }
    }
    None
}

/// A concrete date or time format stated in `desc` ("24-hour format (HH:MM)", "YYYY-MM-DD",
/// "ISO 8601"), with the keyword that would say it (`format: date`, or a `pattern` where JSON
/// Schema has no format); `None` when the description also accepts free forms ("relative dates
/// such as 'yesterday'").
pub(crate) fn format(desc: &str) -> Option<(String, &'static str)> {
    let lower = desc.to_ascii_lowercase();
    if lower.contains("relative") || lower.contains("natural language") {
        return None;
    }
    for s in sentences(desc) {
        let l = s.to_ascii_lowercase();
        let which =
            if l.contains("yyyy-mm-ddthh") || l.contains("rfc 3339") || l.contains("rfc3339") {
                Some("`format: date-time`")
            } else if l.contains("iso 8601") || l.contains("iso-8601") || l.contains("iso8601") {
                Some(
                    if contains_words(&l, "timestamp") || l.contains("date-time") {
                        "`format: date-time`"
                    } else {
                        "`format: date`"
                    },
                )
            } else if l.contains("yyyy-mm-dd") {
                Some("`format: date`")
            } else if l.contains("hh:mm:ss") {
                Some("`format: time`")
            } else if l.contains("hh:mm") {
                Some("`pattern: \"^([01][0-9]|2[0-3]):[0-5][0-9]$\"`")
            } else {
                None
            };
        if let Some(w) = which {
            return Some((s, w));
        }
    }
    None
}

/// A description that fixes the value to the empty string ("An empty string", "must be empty").
pub(crate) fn fixed_empty(desc: &str) -> bool {
    let l = desc.trim().trim_end_matches('.').to_ascii_lowercase();
    l == "an empty string"
        || l == "empty string"
        || l.contains("must be an empty string")
        || l.contains("should be an empty string")
        || l.contains("must be empty")
        || l.contains("should be empty")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn minmax(d: &str) -> Option<(Option<f64>, Option<f64>, bool)> {
        numeric(d).map(|s| (s.min, s.max, s.integer))
    }

    #[test]
    fn numeric_bounds() {
        assert_eq!(
            minmax("The line to start from. Must be 1 or greater."),
            Some((Some(1.0), None, false))
        );
        assert_eq!(
            minmax("Optional positive one-based boundary line."),
            Some((Some(1.0), None, true))
        );
        assert_eq!(
            minmax("The first row. Must be a positive integer."),
            Some((Some(1.0), None, true))
        );
        assert_eq!(
            minmax("Retries, between 0 and 5."),
            Some((Some(0.0), Some(5.0), false))
        );
        assert_eq!(minmax("Zoom (max 400)."), Some((None, Some(400.0), false)));
        assert_eq!(minmax("Maximum number of lines to return."), None);
        assert_eq!(minmax("Defaults to 100."), None);
        assert_eq!(
            minmax("Line numbers are 1-indexed, and -1 means the end."),
            None
        );
        assert_eq!(minmax("Up to 50 items per call."), None);
        assert_eq!(
            minmax("Last line; at most 2000 lines after the first."),
            None
        );
    }

    #[test]
    fn lengths_and_counts() {
        assert_eq!(
            length("Search text. Max 256 chars.").map(|(_, n)| n),
            Some(256.0)
        );
        assert_eq!(
            length("Keep it within 12000 characters to avoid timeouts.").map(|(_, n)| n),
            Some(12000.0)
        );
        assert_eq!(
            length("A title of 80 characters or fewer.").map(|(_, n)| n),
            Some(80.0)
        );
        assert_eq!(length("Returns up to 3 matches."), None);
        assert_eq!(
            length("Keep it at or below 6000 characters when possible; split longer text."),
            None
        );
        assert_eq!(
            count("Rows to update. Limit: 50 items per call.").map(|(_, a, b)| (a, b)),
            Some((None, Some(50.0)))
        );
        assert_eq!(
            count("An array of two integers: the first and last line.").map(|(_, a, b)| (a, b)),
            Some((Some(2.0), Some(2.0)))
        );
        assert_eq!(count("Labels to add."), None);
    }

    #[test]
    fn formats_and_fixed_values() {
        assert_eq!(
            format("Start time in 24-hour format (HH:MM).").map(|(_, f)| f),
            Some("`pattern: \"^([01][0-9]|2[0-3]):[0-5][0-9]$\"`")
        );
        assert_eq!(
            format("Due date in YYYY-MM-DD format.").map(|(_, f)| f),
            Some("`format: date`")
        );
        assert_eq!(
            format("Only events after this ISO 8601 timestamp.").map(|(_, f)| f),
            Some("`format: date-time`")
        );
        assert_eq!(
            format("Accepts ISO 8601 dates or relative dates such as 'yesterday'."),
            None
        );
        assert!(fixed_empty("An empty string"));
        assert!(!fixed_empty("The text; may be empty."));
    }
}
