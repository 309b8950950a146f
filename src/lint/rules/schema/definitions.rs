//! Which `$defs` / `definitions` entries a schema uses: an entry nothing reaches by `$ref` is not
//! a parameter the model can fill, so the parameter rules skip it.

use std::collections::BTreeSet;

use crate::spec::yaml::{Node, NodeValue};

/// The keywords that hold named subschemas.
const DEFINITION_KEYWORDS: [&str; 2] = ["$defs", "definitions"];

/// Whether `pointer` (inside `root`) lies in a definition no `$ref` reaches from the schema's
/// own properties, directly or through other definitions.
pub(crate) fn in_unreferenced_definition(root: &Node, pointer: &str) -> bool {
    let mut steps = pointer.trim_start_matches('/').split('/');
    let (Some(keyword), Some(name)) = (steps.next(), steps.next()) else {
        return false;
    };
    if !DEFINITION_KEYWORDS.contains(&keyword) {
        return false;
    }
    !reachable_definitions(root).contains(&format!("/{keyword}/{name}"))
}

/// The definitions (`/$defs/NAME`) reached from the root by `$ref`, transitively.
fn reachable_definitions(root: &Node) -> BTreeSet<String> {
    let mut reached = BTreeSet::new();
    let mut pending = Vec::new();
    collect_refs(root, true, &mut pending);
    while let Some(target) = pending.pop() {
        if !reached.insert(target.clone()) {
            continue;
        }
        if let Some(def) = root.at_pointer(&target) {
            collect_refs(def, false, &mut pending);
        }
    }
    reached
}

/// Pushes the definition each local `$ref` under `node` points into; at the root, the
/// definition sections themselves are skipped (being defined is not being used).
fn collect_refs(node: &Node, at_root: bool, out: &mut Vec<String>) {
    match &node.value {
        NodeValue::Map(entries) => {
            for (key, value) in entries {
                if at_root && DEFINITION_KEYWORDS.contains(&key.name.as_str()) {
                    continue;
                }
                if key.name == "$ref"
                    && let Some(target) = value.as_str().and_then(definition_of)
                {
                    out.push(target);
                }
                collect_refs(value, false, out);
            }
        }
        NodeValue::Seq(items) => {
            for item in items {
                collect_refs(item, false, out);
            }
        }
        _ => {}
    }
}

/// `#/$defs/Name/properties/x` → `/$defs/Name`; other references → `None`.
fn definition_of(reference: &str) -> Option<String> {
    let pointer = reference.strip_prefix('#')?;
    let mut steps = pointer.trim_start_matches('/').split('/');
    let keyword = steps.next()?;
    let name = steps.next()?;
    DEFINITION_KEYWORDS
        .contains(&keyword)
        .then(|| format!("/{keyword}/{name}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::source::SourceFile;

    fn schema(text: &str) -> Node {
        let f = SourceFile::new("t.yaml", text);
        crate::spec::yaml::parse(text, |l, c| f.offset_of(l, c)).expect("test schema parses")
    }

    #[test]
    fn a_definition_counts_only_when_something_reaches_it() {
        let root = schema(
            r##"{"type": "object",
                "properties": {"stops": {"$ref": "#/$defs/Stops"}},
                "$defs": {
                    "Stops": {"type": "array", "items": {"$ref": "#/$defs/Stop"}},
                    "Stop": {"type": "object", "properties": {"tags": {"type": "array"}}},
                    "Legacy": {"type": "array", "items": {"type": "string"}}
                }}"##,
        );
        assert!(!in_unreferenced_definition(&root, "/$defs/Stops"));
        assert!(!in_unreferenced_definition(
            &root,
            "/$defs/Stop/properties/tags"
        ));
        assert!(in_unreferenced_definition(&root, "/$defs/Legacy"));
        assert!(!in_unreferenced_definition(&root, "/properties/stops"));
    }

    #[test]
    fn a_definition_reached_only_from_an_unused_one_is_unused() {
        let root = schema(
            r##"{"type": "object", "properties": {},
                "definitions": {"A": {"$ref": "#/definitions/B"}, "B": {"type": "array"}}}"##,
        );
        assert!(in_unreferenced_definition(&root, "/definitions/B"));
    }
}
