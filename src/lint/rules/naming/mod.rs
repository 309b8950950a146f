//! `TGN`: names and descriptions. A model picks a tool by its name and description and fills
//! arguments by theirs: both must be valid for every provider, distinct, and say enough.
//!
//! `words` splits identifiers and prose into the words these rules compare.

pub mod ambiguous_parameter_name;
pub mod deprecated_tool_beside_successor;
pub mod description_too_long;
pub mod hidden_characters;
pub mod inconsistent_naming;
pub mod missing_description;
pub mod overlapping_tools;
pub mod parameter_description_missing;
pub mod renamed_key;
pub mod thin_description;
pub mod tool_name_collision;
pub mod tool_name_invalid;

pub(crate) mod overlap_index;
pub(crate) mod words;

use crate::lint::rules::schema::shape;
use crate::spec::yaml::{Key, Node, NodeValue};

/// Text safe to put in a message: hidden and control characters shown as `\u{202E}`, so a
/// bidirectional override in a name cannot reorder the report around it.
pub(crate) fn printable(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if hidden_characters::is_hidden(c) {
            out.push_str(&format!("\\u{{{:04X}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Deepest nesting walked (the visitor's own bound).
const MAX_DEPTH: usize = 48;

/// Every property declared in a schema, nested ones included, with its display path
/// (`edits[].old_text`).
pub(crate) fn properties(root: &Node) -> Vec<(&Key, &Node, String)> {
    let mut out = Vec::new();
    collect(root, String::new(), 0, &mut out);
    out
}

fn collect<'n>(
    node: &'n Node,
    pointer: String,
    depth: usize,
    out: &mut Vec<(&'n Key, &'n Node, String)>,
) {
    if depth > MAX_DEPTH || !node.is_map() {
        return;
    }
    for (key, value) in node.entries() {
        let here = format!(
            "{pointer}/{}",
            key.name.replace('~', "~0").replace('/', "~1")
        );
        match key.name.as_str() {
            "properties" => {
                for (pk, pv) in value.entries() {
                    let p = format!("{here}/{}", pk.name.replace('~', "~0").replace('/', "~1"));
                    out.push((pk, pv, shape::display_path(&p)));
                    collect(pv, p, depth + 1, out);
                }
            }
            "$defs" | "definitions" => {
                for (pk, pv) in value.entries() {
                    collect(pv, format!("{here}/{}", pk.name), depth + 1, out);
                }
            }
            "items" | "additionalProperties" => collect(value, here, depth + 1, out),
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
                if let NodeValue::Seq(items) = &value.value {
                    for (i, item) in items.iter().enumerate() {
                        collect(item, format!("{here}/{i}"), depth + 1, out);
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::source::SourceFile;

    #[test]
    fn printable_text() {
        assert_eq!(printable("del\u{202E}x"), "del\\u{202E}x");
        assert_eq!(printable("naïve"), "naïve");
    }

    #[test]
    fn nested_properties_are_found() {
        let text = "properties:\n  a: {type: string}\n  b:\n    type: array\n    items: {properties: {c: {type: string}}}\n";
        let f = SourceFile::new("t.yaml", text);
        let n: Node = crate::spec::yaml::parse(text, |l, c| f.offset_of(l, c)).unwrap();
        let paths: Vec<String> = properties(&n).into_iter().map(|(_, _, p)| p).collect();
        assert_eq!(paths, ["a", "b", "b[].c"]);
    }
}
