//! Identifiers for generated Rust: every name that enters the output goes through here.
//!
//! - [`snake`] and [`pascal`] recase a JSON name with `heck` after turning every character that
//!   is not an ASCII letter or digit into a word break; an empty result becomes a placeholder
//!   (`field`, `Value`), a leading digit gets a prefix (`_1st`, `V1st`).
//! - A Rust keyword gets a `_` suffix (`type` → `type_`, `Self` → `Self_`); the original JSON
//!   name is kept for serde with `#[serde(rename = "…")]` by the caller.
//! - [`Namespace::claim`] makes names unique within one scope: the first claim of a name gets
//!   it as is, later ones get the smallest suffix from 2 up that is free (`foo_bar`,
//!   `foo_bar_2` for snake names; `Item`, `Item2` for Pascal names).
//! - [`ident`] turns a name into a `syn::Ident` without ever panicking.

use std::collections::BTreeSet;

use heck::{ToSnakeCase, ToUpperCamelCase};
use proc_macro2::Span;

/// Rust keywords (strict and reserved, 2024 edition) that cannot be plain identifiers.
const KEYWORDS: &[&str] = &[
    "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum", "extern",
    "false", "fn", "for", "gen", "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut",
    "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait", "true", "type",
    "unsafe", "use", "where", "while", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "try", "typeof", "unsized", "virtual", "yield",
];

fn words(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { ' ' })
        .collect()
}

fn unkeyword(mut s: String) -> String {
    if KEYWORDS.contains(&s.as_str()) {
        s.push('_');
    }
    s
}

/// A snake-case identifier for a field, function or builder method.
pub fn snake(name: &str) -> String {
    let mut s = words(name).to_snake_case();
    if s.is_empty() {
        s = "field".into();
    }
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    unkeyword(s)
}

/// A Pascal-case identifier for a type or variant.
pub fn pascal(name: &str) -> String {
    let mut s = words(name).to_upper_camel_case();
    if s.is_empty() {
        s = "Value".into();
    }
    if s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, 'V');
    }
    unkeyword(s)
}

/// A SCREAMING_SNAKE identifier for a constant.
pub fn screaming(name: &str) -> String {
    let s = snake(name);
    let s = s.trim_end_matches('_').to_ascii_uppercase();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        format!("N{s}")
    } else {
        s
    }
}

/// The identifier for an already sanitized name; a name that still is not an identifier (a
/// toolgate bug) becomes `invalid_identifier`, which the compile test would catch.
pub fn ident(name: &str) -> syn::Ident {
    if is_plain_ident(name) {
        syn::Ident::new(name, Span::call_site())
    } else {
        syn::Ident::new("invalid_identifier", Span::call_site())
    }
}

/// ASCII letters, digits and `_`, not starting with a digit, not `_` alone, not a keyword: the
/// names `syn::Ident::new` accepts without panicking.
fn is_plain_ident(name: &str) -> bool {
    let mut chars = name.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name != "_"
        && !KEYWORDS.contains(&name)
}

/// How a scope spells its collision suffixes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Case {
    /// `name_2`.
    Snake,
    /// `Name2`.
    Pascal,
}

/// Names taken in one scope (a module's types, a struct's fields, an enum's variants).
#[derive(Clone, Debug)]
pub struct Namespace {
    case: Case,
    taken: BTreeSet<String>,
}

impl Namespace {
    /// An empty scope.
    pub fn new(case: Case) -> Self {
        Namespace {
            case,
            taken: BTreeSet::new(),
        }
    }

    /// Marks names as taken without handing them out (generated items with fixed names).
    pub fn reserve(&mut self, name: &str) {
        self.taken.insert(name.to_owned());
    }

    /// Whether a name is taken.
    pub fn is_taken(&self, name: &str) -> bool {
        self.taken.contains(name)
    }

    /// Takes `base`, or `base` plus the smallest free suffix from 2 up.
    pub fn claim(&mut self, base: &str) -> String {
        if self.taken.insert(base.to_owned()) {
            return base.to_owned();
        }
        let stem = base.trim_end_matches('_');
        let mut n = 2usize;
        loop {
            let candidate = match self.case {
                Case::Snake => format!("{stem}_{n}"),
                Case::Pascal => format!("{stem}{n}"),
            };
            if self.taken.insert(candidate.clone()) {
                return candidate;
            }
            n += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recases_and_escapes_keywords() {
        assert_eq!(snake("startLine"), "start_line");
        assert_eq!(snake("foo-bar.baz"), "foo_bar_baz");
        assert_eq!(snake("type"), "type_");
        assert_eq!(snake("self"), "self_");
        assert_eq!(snake("1st"), "_1st");
        assert_eq!(snake("$"), "field");
        assert_eq!(snake("ünï"), "n");
        assert_eq!(pascal("read_file"), "ReadFile");
        assert_eq!(pascal("self"), "Self_");
        assert_eq!(pascal("2fa"), "V2fa");
        assert_eq!(pascal(""), "Value");
        assert_eq!(screaming("read_file"), "READ_FILE");
        assert_eq!(screaming("type"), "TYPE");
    }

    #[test]
    fn collisions_get_numbered_suffixes() {
        let mut fields = Namespace::new(Case::Snake);
        assert_eq!(fields.claim(&snake("foo-bar")), "foo_bar");
        assert_eq!(fields.claim(&snake("foo_bar")), "foo_bar_2");
        assert_eq!(fields.claim(&snake("fooBar")), "foo_bar_3");
        assert_eq!(fields.claim(&snake("type")), "type_");
        assert_eq!(fields.claim(&snake("type_")), "type_2");
        let mut types = Namespace::new(Case::Pascal);
        types.reserve("EchoHandler");
        assert_eq!(types.claim("EchoHandler"), "EchoHandler2");
        assert_eq!(types.claim("EchoHandler"), "EchoHandler3");
    }

    #[test]
    fn idents_never_panic() {
        assert_eq!(ident("type_").to_string(), "type_");
        assert_eq!(ident("not an ident").to_string(), "invalid_identifier");
        assert_eq!(ident("type").to_string(), "invalid_identifier");
        assert_eq!(ident("_").to_string(), "invalid_identifier");
        assert_eq!(ident("1a").to_string(), "invalid_identifier");
        assert_eq!(ident("é").to_string(), "invalid_identifier");
    }
}
