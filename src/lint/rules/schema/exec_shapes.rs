//! Shapes that carry a program besides a plainly named string (TGS002): a free string whose
//! sibling enum picks its language, and an executable string nested in an object or in the
//! items of an array of objects (a list of browser actions, one of which runs a script).

use crate::lint::rules::naming::words::split_identifier;
use crate::lint::rules::schema::free_form_exec_parameter::executable;
use crate::lint::rules::schema::shape;
use crate::spec::yaml::Node;

/// How deep [`nested_executable`] looks into objects and arrays of objects.
pub(crate) const MAX_NESTING: usize = 3;

/// Values of an enum that name a programming language or shell.
const LANGUAGES: &[&str] = &[
    "bash",
    "sh",
    "zsh",
    "shell",
    "powershell",
    "python",
    "python3",
    "node",
    "nodejs",
    "javascript",
    "js",
    "typescript",
    "ts",
    "ruby",
    "perl",
    "php",
    "lua",
    "r",
    "sql",
];

/// The enum property that picks the language a sibling is written in (`language: [bash,
/// python, node]`): at least two of its values, and most of them, name languages.
pub(crate) fn language_selector(props: &Node) -> Option<&str> {
    props.entries().iter().find_map(|(key, node)| {
        let values: Vec<String> = shape::non_null(node)
            .get("enum")?
            .items()
            .iter()
            .filter_map(Node::as_str)
            .map(str::to_ascii_lowercase)
            .collect();
        let named = values
            .iter()
            .filter(|v| LANGUAGES.contains(&v.as_str()))
            .count();
        (named >= 2 && named * 2 > values.len()).then_some(key.name.as_str())
    })
}

/// Whether a parameter is the free-text body a language selector applies to: a string named
/// `code`, `source`, `program`, `snippet` or `script`.
pub(crate) fn code_payload(name: &str, node: &Node) -> bool {
    if shape::single_type(node) != Some("string")
        || shape::has_any(node, &["enum", "const", "pattern"])
    {
        return false;
    }
    let words = split_identifier(name);
    words.last().is_some_and(|w| {
        matches!(
            w.as_str(),
            "code" | "source" | "program" | "snippet" | "script" | "body"
        )
    })
}

/// An executable string inside an object parameter or its array items (`actions[].script`): its
/// path below the parameter, what it takes, and its string schema.
pub(crate) fn nested_executable(
    node: &Node,
    depth: usize,
) -> Option<(String, &'static str, &Node)> {
    if depth == 0 {
        return None;
    }
    let node = shape::non_null(node);
    let (prefix, object) = match shape::single_type(node) {
        Some("array") => ("[]", shape::non_null(node.get("items")?)),
        _ => ("", node),
    };
    let props = object.get("properties")?;
    let language = language_selector(props);
    props.entries().iter().find_map(|(key, child)| {
        let found = executable(&key.name, child).or_else(|| {
            language
                .filter(|_| code_payload(&key.name, child))
                .map(|_| ("code", child))
        });
        match found {
            Some((what, strings)) => Some((format!("{prefix}.{}", key.name), what, strings)),
            None => nested_executable(child, depth - 1).map(|(path, what, strings)| {
                (format!("{prefix}.{}{path}", key.name), what, strings)
            }),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::rules::schema::test_node as node;

    #[test]
    fn a_language_enum_makes_its_sibling_body_code() {
        let props = node(
            "body: {type: string}\nruntime: {type: string, enum: [python, ruby, lua]}\nname: {type: string}",
        );
        assert_eq!(language_selector(&props), Some("runtime"));
        let body = node("{type: string}");
        assert!(code_payload("body", &body));
        assert!(!code_payload("name", &body));
        // Output formats are not languages.
        let formats = node("format: {type: string, enum: [json, yaml, csv, r]}");
        assert_eq!(language_selector(&formats), None);
    }

    #[test]
    fn finds_a_script_in_array_items_and_nested_objects() {
        let steps = node(
            "type: array\nitems:\n  type: object\n  properties:\n    kind: {type: string, enum: [wait, click, evaluate]}\n    script: {type: string}",
        );
        let found = nested_executable(&steps, MAX_NESTING).map(|(p, w, _)| (p, w));
        assert_eq!(found, Some(("[].script".to_owned(), "a script")));
        let options = node(
            "type: object\nproperties:\n  hooks:\n    type: array\n    items: {type: object, properties: {command: {type: string}}}",
        );
        let found = nested_executable(&options, MAX_NESTING).map(|(p, w, _)| (p, w));
        assert_eq!(
            found,
            Some((".hooks[].command".to_owned(), "a shell command"))
        );
        // A fixed program's argv is structured: strings with an enum are not free text.
        let argv = node(
            "type: object\nproperties:\n  program: {type: string, enum: [ls, cat]}\n  args: {type: array, items: {type: string}}",
        );
        assert_eq!(
            nested_executable(&argv, MAX_NESTING).map(|(p, _, _)| p),
            None
        );
    }
}
