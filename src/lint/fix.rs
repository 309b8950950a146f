//! Fixes as text edits on the YAML source: a key added to a mapping in the mapping's own style
//! (block or flow), so comments, key order and formatting stay as written.
//!
//! Rules attach them to their findings ([`crate::diagnostic::Fix`]); `toolgate lint --fix`
//! ([`crate::fix`]) applies the safe ones and keeps only those after which the file still loads
//! and no longer has the finding.

use crate::diagnostic::{Applicability, Edit, Fix};
use crate::lint::context::ToolView;
use crate::spec::yaml::{Node, NodeValue};

/// A fix adding `key: value` entries (values already YAML text) after the last entry of the
/// mapping `map` of `tool`'s file; only for specs (imported JSON lists are not edited), and
/// only keys the mapping lacks.
pub(crate) fn add_keys(
    tool: &ToolView,
    map: &Node,
    pairs: &[(&str, String)],
    applicability: Applicability,
) -> Option<Fix> {
    if !tool.is_spec() || pairs.is_empty() || pairs.iter().any(|(k, _)| map.get(k).is_some()) {
        return None;
    }
    let (at, content) = insertion(&tool.file.text, map, pairs)?;
    let shown: Vec<String> = pairs.iter().map(|(k, v)| format!("`{k}: {v}`")).collect();
    Some(Fix {
        title: format!("add {}", shown.join(" and ")),
        edits: vec![Edit {
            span: crate::spec::source::Span::new(tool.source, at, 0),
            content,
        }],
        applicability,
    })
}

/// Where and what to insert so that `map` gains `key: value`: after the last entry of a flow
/// mapping (`{a: 1}` → `{a: 1, key: value}`), or as a new line at the mapping's indentation
/// after the last line of a block mapping.
fn insertion(text: &str, map: &Node, pairs: &[(&str, String)]) -> Option<(usize, String)> {
    let NodeValue::Map(entries) = &map.value else {
        return None;
    };
    let (first, _) = entries.first()?;
    let (last_key, _) = entries.last()?;
    let first_start = first.range.start as usize;
    // A flow mapping: the first key follows `{` (after blanks).
    let before = text.get(..first_start)?.trim_end();
    if before.ends_with('{') {
        let close = closing_brace(text, before.len() - 1)?;
        let at = text.get(..close)?.trim_end().len();
        let comma = if text.get(..at)?.ends_with(',') {
            " "
        } else {
            ", "
        };
        let entries: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        return Some((at, format!("{comma}{}", entries.join(", "))));
    }
    // A block mapping: every entry starts at the first key's column.
    let line_start = text.get(..first_start)?.rfind('\n').map_or(0, |i| i + 1);
    let indent = first_start - line_start;
    let prefix = text.get(line_start..first_start)?;
    // `- key: value`: the entries are indented to the key, with spaces in place of the dash.
    if !prefix.chars().all(|c| c == ' ' || c == '-') {
        return None;
    }
    // The last entry runs to the last non-blank line indented deeper than the entries.
    let last_start = last_key.range.start as usize;
    let mut pos = text
        .get(last_start..)?
        .find('\n')
        .map_or(text.len(), |i| last_start + i + 1);
    let mut end_of_entry = pos;
    while pos < text.len() {
        let line_end = text
            .get(pos..)?
            .find('\n')
            .map_or(text.len(), |i| pos + i + 1);
        let line = text.get(pos..line_end)?;
        let content = line.trim_start_matches(' ');
        let depth = line.len() - content.len();
        if content.trim().is_empty() {
            pos = line_end;
            continue;
        }
        // A block sequence may sit at its key's own indentation (`required:\n- path`).
        let sequence_entry = content.starts_with("- ") || content.trim_end() == "-";
        if depth < indent || (depth == indent && !sequence_entry) {
            break;
        }
        end_of_entry = line_end;
        pos = line_end;
    }
    let mut content = String::new();
    if end_of_entry > 0 && text.as_bytes().get(end_of_entry - 1) != Some(&b'\n') {
        content.push('\n');
    }
    for (k, v) in pairs {
        content.push_str(&" ".repeat(indent));
        content.push_str(&format!("{k}: {v}\n"));
    }
    Some((end_of_entry, content))
}

/// The `}` closing the flow mapping opened at `open`: nesting and quoted strings skipped.
fn closing_brace(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut chars = text.get(open..)?.char_indices();
    let mut prev = ' ';
    while let Some((i, c)) = chars.next() {
        let blank_before = prev.is_whitespace();
        prev = c;
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return (c == '}').then_some(open + i);
                }
            }
            '"' => {
                let mut escaped = false;
                for (_, q) in chars.by_ref() {
                    match (escaped, q) {
                        (false, '\\') => escaped = true,
                        (false, '"') => break,
                        _ => escaped = false,
                    }
                }
            }
            '\'' => {
                // '' inside single quotes is an escaped quote: it closes and reopens, same effect.
                for (_, q) in chars.by_ref() {
                    if q == '\'' {
                        break;
                    }
                }
            }
            '#' if blank_before => {
                for (_, q) in chars.by_ref() {
                    if q == '\n' {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    None
}

/// A string as a YAML scalar that reads back as that string: plain when unambiguous, else
/// double-quoted (JSON's quoting, which YAML reads).
pub(crate) fn scalar(s: &str) -> String {
    let plain = s
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "false" | "null" | "yes" | "no" | "on" | "off" | "y" | "n"
        );
    if plain {
        s.to_owned()
    } else {
        serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::yaml;

    /// Parses `text`, finds the mapping at `pointer`, inserts `k: v`.
    fn add(text: &str, pointer: &str) -> String {
        let file = crate::spec::source::SourceFile::new("x.yaml", text);
        let root: Node = yaml::parse(text, |l, c| file.offset_of(l, c)).unwrap();
        let map = root.at_pointer(pointer).unwrap();
        let (at, content) = insertion(text, map, &[("k", "v".to_owned())]).unwrap();
        let mut out = text.to_owned();
        out.insert_str(at, &content);
        // The result still parses, and has the key where it was asked for.
        let file = crate::spec::source::SourceFile::new("x.yaml", out.as_str());
        let back: Node = yaml::parse(&out, |l, c| file.offset_of(l, c)).unwrap();
        assert_eq!(
            back.at_pointer(pointer)
                .unwrap()
                .get("k")
                .and_then(Node::as_str),
            Some("v"),
            "{out}"
        );
        out
    }

    #[test]
    fn block_mappings_get_a_line_at_their_indentation() {
        let text = "a:\n  b: 1\n  c:\n    d: 2   # note\n\n# after\ne: 3\n";
        assert_eq!(
            add(text, "/a"),
            "a:\n  b: 1\n  c:\n    d: 2   # note\n  k: v\n\n# after\ne: 3\n"
        );
        assert_eq!(
            add(text, "/a/c"),
            "a:\n  b: 1\n  c:\n    d: 2   # note\n    k: v\n\n# after\ne: 3\n"
        );
    }

    #[test]
    fn block_scalars_and_files_without_a_final_newline() {
        let text = "p:\n  description: >-\n    two\n    lines\n  type: string";
        assert_eq!(
            add(text, "/p"),
            "p:\n  description: >-\n    two\n    lines\n  type: string\n  k: v\n"
        );
        let text = "p:\n  type: string\n  description: |\n    two\n\n    lines\nq: 1\n";
        assert_eq!(
            add(text, "/p"),
            "p:\n  type: string\n  description: |\n    two\n\n    lines\n  k: v\nq: 1\n"
        );
    }

    #[test]
    fn sequences_at_their_keys_indentation() {
        let text = "p:\n  type: object\n  required:\n  - a\n  - b\nq: 1\n";
        assert_eq!(
            add(text, "/p"),
            "p:\n  type: object\n  required:\n  - a\n  - b\n  k: v\nq: 1\n"
        );
    }

    #[test]
    fn sequence_items() {
        let text = "l:\n  - type: object\n    x: 1\n  - type: string\n";
        assert_eq!(
            add(text, "/l/0"),
            "l:\n  - type: object\n    x: 1\n    k: v\n  - type: string\n"
        );
    }

    #[test]
    fn flow_mappings_get_an_entry_before_the_brace() {
        assert_eq!(
            add("p: {type: string, maxLength: 3}\n", "/p"),
            "p: {type: string, maxLength: 3, k: v}\n"
        );
        assert_eq!(add("p: {a: \"x}\" }\n", "/p"), "p: {a: \"x}\", k: v }\n");
        assert_eq!(
            add("p: {\n  a: 'q',\n  b: [1, 2]\n}\n", "/p"),
            "p: {\n  a: 'q',\n  b: [1, 2], k: v\n}\n"
        );
    }

    #[test]
    fn scalars_that_would_change_type_are_quoted() {
        assert_eq!(scalar("asc"), "asc");
        assert_eq!(scalar("no"), "\"no\"");
        assert_eq!(scalar("1"), "\"1\"");
        assert_eq!(scalar("a b"), "\"a b\"");
        assert_eq!(scalar("x: y"), "\"x: y\"");
    }
}
