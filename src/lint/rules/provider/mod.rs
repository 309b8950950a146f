//! `TGV`: provider compatibility. Each rule runs only when its target is in use (toolgate.yaml's
//! `targets`, by default openai-strict, anthropic, gemini and mcp); the name and keyword rules
//! follow `providers.md` §0–§4 and its keyword matrix (§7).

pub mod anthropic_incompatible;
pub mod constraint_dropped_by_target;
pub mod gemini_incompatible;
pub mod mcp_incompatible;
pub mod openai_strict_incompatible;
pub mod too_many_tools;

use crate::spec::yaml::{Key, Node};

/// Whether `s` is 1 to `max` characters, the first passing `first` and the rest passing `rest`.
fn fits(s: &str, max: usize, first: impl Fn(char) -> bool, rest: impl Fn(char) -> bool) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if first(c) => {}
        _ => return false,
    }
    chars.all(rest) && s.chars().count() <= max
}

/// Anthropic's property-key rule: `^[a-zA-Z0-9_.-]{1,64}$`.
pub(crate) fn is_anthropic_key(s: &str) -> bool {
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-');
    fits(s, 64, ok, ok)
}

/// Gemini's parameter-name rule: `^[a-zA-Z_][a-zA-Z0-9_]{0,63}$`.
pub(crate) fn is_gemini_param(s: &str) -> bool {
    fits(
        s,
        64,
        |c| c.is_ascii_alphabetic() || c == '_',
        |c| c.is_ascii_alphanumeric() || c == '_',
    )
}

/// The composition keyword (`oneOf`, `anyOf`, `allOf`) at the root of a schema, if any.
pub(crate) fn root_composition(root: &Node) -> Option<&Key> {
    root.entries()
        .iter()
        .find(|(k, _)| matches!(k.name.as_str(), "oneOf" | "anyOf" | "allOf"))
        .map(|(k, _)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_rules() {
        assert!(is_anthropic_key("file.path-2_x"));
        assert!(!is_anthropic_key("file path"));
        assert!(!is_anthropic_key(""));
        assert!(!is_anthropic_key(&"a".repeat(65)));
        assert!(is_gemini_param("_private"));
        assert!(is_gemini_param("start_line"));
        assert!(!is_gemini_param("replace-all"));
        assert!(!is_gemini_param("2fa"));
        assert!(!is_gemini_param("a.b"));
    }
}
