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
    DEPENDENCY_ANYWHERE, conditioned_on, contains_words, dependency_sentences, documents_value,
    exclusion_sentences, mentions, opens_with_condition, opposite_restrictions, parameter_lines,
    restriction_pairs, same_name,
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

/// The sentences of a description, trimmed: split at line breaks, semicolons and ". ", with
/// `e.g.` and `i.e.` kept whole.
pub(crate) fn sentences(desc: &str) -> Vec<String> {
    let protected = desc
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
