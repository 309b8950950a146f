//! What parameter descriptions say in prose that the schema should say in keywords: a default
//! ([`defaults`]), a closed list of values or a delimited encoding ([`values`]), a per-action
//! condition, a mutual exclusion or a dependency ([`conditions`]), and alternative groups of
//! parameters named in a tool's description ([`alternatives`]), and results that change kind
//! ([`results`]).
//!
//! Everything here works on ASCII-lowercased copies, which keep byte offsets, and is written to
//! miss rather than to guess: a rule that quotes a description back must be right about it.

mod alternatives;
mod bounds;
mod conditions;
mod defaults;
mod results;
mod switches;
mod values;

pub(crate) use alternatives::{alternatives, offered_group};
pub(crate) use bounds::{
    count as stated_count, fixed_empty, format as stated_format, length as stated_length,
    numeric as stated_bound,
};
pub(crate) use conditions::{
    conditioned_on, contains_words, dependency_sentences, documents_value, exclusion_sentences,
    mentions, opens_with_condition, opposite_restrictions, parameter_lines, restriction_pairs,
    same_name,
};
pub(crate) use defaults::{DescribedDefault, described_default};
pub(crate) use results::{
    Variation, in_parameter as result_varies_by_parameter,
    in_tool_description as result_varies_in_description,
    when_omitted as result_varies_when_omitted,
};
pub(crate) use switches::{
    boolean_switch, listed_functions, patch_operations, presence_switch, special_value,
};
pub(crate) use values::{delimited, delimited_input, listed_values};

/// The sentences of a description, trimmed: hard-wrapped lines joined, then split at
/// semicolons and ". ", with `e.g.` and `i.e.` kept whole.
pub(crate) fn sentences(desc: &str) -> Vec<String> {
    let protected = unwrap_lines(desc)
        .replace("e.g.", "e_g_")
        .replace("E.g.", "E_g_")
        .replace("i.e.", "i_e_");
    protected
        .split(['\n', ';'])
        .flat_map(|l| l.split(". "))
        .map(|s| {
            s.trim()
                .replace("e_g_", "e.g.")
                .replace("E_g_", "E.g.")
                .replace("i_e_", "i.e.")
        })
        .filter(|s| !s.is_empty())
        .collect()
}

/// A description with hard-wrapped lines joined: a line break inside a sentence is a space. A
/// break stays where a paragraph ends (a blank line), before a list item or a heading, and after
/// a line that ends a sentence or introduces a list (`.`, `:`, `!`, `?`).
fn unwrap_lines(desc: &str) -> String {
    let mut out = String::with_capacity(desc.len());
    let mut prev: Option<&str> = None;
    for line in desc.lines() {
        let trimmed = line.trim();
        if let Some(p) = prev {
            let keeps_break = p.is_empty()
                || trimmed.is_empty()
                || p.ends_with(['.', ':', '!', '?'])
                || starts_item(trimmed);
            out.push(if keeps_break { '\n' } else { ' ' });
        }
        out.push_str(trimmed);
        prev = Some(trimmed);
    }
    out
}

/// Whether a line opens a list item or a heading: `- `, `* `, `• `, `1. `, `2) `, `#`.
fn starts_item(line: &str) -> bool {
    if line.starts_with(['-', '*', '•', '+', '#', '|', '>']) {
        return true;
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    digits > 0 && line[digits..].starts_with(['.', ')'])
}

/// The inside of `'x'`, `"x"` or `` `x` ``.
fn unquote(s: &str) -> Option<&str> {
    let first = s.chars().next()?;
    if !matches!(first, '\'' | '"' | '`') || s.len() < 2 || !s.ends_with(first) {
        return None;
    }
    let inner = &s[1..s.len() - 1];
    (!inner.contains(first)).then_some(inner)
}

/// Whether a token could be an enum value: `read`, `request-body`, `v1.2`, `ASC`.
fn is_identifier(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 40
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '+'))
        && s.chars().any(|c| c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_lines_are_one_sentence() {
        assert_eq!(
            sentences("Returns the report for a city,\nor a notice when the city is unknown."),
            vec!["Returns the report for a city, or a notice when the city is unknown."]
        );
        assert_eq!(
            sentences("Modes:\n- fast: skims\n- full: reads all\n\nDone"),
            vec!["Modes:", "- fast: skims", "- full: reads all", "Done"]
        );
        assert_eq!(
            sentences("First line ends here.\nSecond starts here"),
            vec!["First line ends here.", "Second starts here"]
        );
        assert_eq!(
            sentences("Steps\n1) open\n2) close; e.g. a file"),
            vec!["Steps", "1) open", "2) close", "e.g. a file"]
        );
    }
}
