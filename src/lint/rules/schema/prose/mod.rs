//! What parameter descriptions say in prose that the schema should say in keywords: a default
//! ([`defaults`]), a closed list of values or a delimited encoding ([`values`]), a per-action
//! condition, a mutual exclusion or a dependency ([`conditions`]), and alternative groups of
//! parameters named in a tool's description ([`alternatives`]).
//!
//! Everything here works on ASCII-lowercased copies, which keep byte offsets, and is written to
//! miss rather than to guess: a rule that quotes a description back must be right about it.

mod alternatives;
mod conditions;
mod defaults;
mod values;

pub(crate) use alternatives::alternatives;
pub(crate) use conditions::{
    DEPENDENCY_ANYWHERE, contains_words, dependency_sentences, documents_value, exclusion_sentences,
};
pub(crate) use defaults::{DescribedDefault, described_default};
pub(crate) use values::{delimited, listed_values};

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
