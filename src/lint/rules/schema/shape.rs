//! Questions about JSON Schema nodes that the schema-design rules share: where a node sits (data,
//! a partial branch, or a condition), what it accepts, and how to name it in a message.

use crate::lint::context::{SchemaNode, SchemaRole, ToolView};
use crate::spec::source::TextRange;
use crate::spec::yaml::{Node, NodeValue};

/// Where a schema node sits in its document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Position {
    /// It describes values (a property, items, a union branch with its own shape).
    Data,
    /// It adds to another schema (`allOf`, `then`, `else`, `dependentSchemas`, a branch holding only
    /// `required`): judge what it declares, not what it leaves open.
    Partial,
    /// It is a test (`if`, `not`, `contains`, `propertyNames`), never a value's shape.
    Condition,
}

/// Keywords whose value maps names to subschemas.
const NAMED: &[&str] = &[
    "properties",
    "$defs",
    "definitions",
    "patternProperties",
    "dependentSchemas",
];
/// Keywords whose value lists subschemas.
const INDEXED: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// One step of a schema pointer.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Step {
    /// A keyword (`items`, `not`, `anyOf` ...).
    Keyword(String),
    /// A name under a named keyword (a property name).
    Name(String, String),
    /// An index under an indexed keyword.
    Index(String, usize),
}

fn steps(pointer: &str) -> Vec<Step> {
    let mut out = Vec::new();
    let mut segs = pointer
        .split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"));
    while let Some(seg) = segs.next() {
        if NAMED.contains(&seg.as_str()) {
            let name = segs.next().unwrap_or_default();
            out.push(Step::Name(seg, name));
        } else if INDEXED.contains(&seg.as_str()) {
            let idx = segs.next().and_then(|i| i.parse().ok()).unwrap_or(0);
            out.push(Step::Index(seg, idx));
        } else {
            out.push(Step::Keyword(seg));
        }
    }
    out
}

/// Where the node at `pointer` inside `root` sits.
pub(crate) fn position(root: &Node, pointer: &str) -> Position {
    let steps = steps(pointer);
    let keyword = |s: &Step| match s {
        Step::Keyword(k) | Step::Name(k, _) | Step::Index(k, _) => k.clone(),
    };
    if steps.iter().any(|s| {
        matches!(
            keyword(s).as_str(),
            "if" | "not" | "contains" | "propertyNames"
        )
    }) {
        return Position::Condition;
    }
    if steps.iter().any(|s| {
        matches!(
            keyword(s).as_str(),
            "then" | "else" | "allOf" | "dependentSchemas"
        )
    }) {
        return Position::Partial;
    }
    // A union branch without a type constrains the schema it belongs to (`{properties: {kind:
    // {const: bug}}, required: [steps]}`) rather than describing a value; so does all below it.
    let mut prefix = String::new();
    for step in &steps {
        match step {
            Step::Keyword(k) => prefix.push_str(&format!("/{k}")),
            Step::Name(k, n) => {
                prefix.push_str(&format!("/{k}/{}", n.replace('~', "~0").replace('/', "~1")))
            }
            Step::Index(k, i) => {
                prefix.push_str(&format!("/{k}/{i}"));
                if (k == "anyOf" || k == "oneOf")
                    && root.at_pointer(&prefix).is_some_and(|b| {
                        ["type", "$ref", "enum", "const"]
                            .iter()
                            .all(|key| b.get(key).is_none())
                    })
                {
                    return Position::Partial;
                }
            }
        }
    }
    Position::Data
}

/// Where a visited schema node sits in its tool's `parameters` or `result`.
pub(crate) fn position_of(tool: &ToolView, n: &SchemaNode) -> Position {
    let root = match n.role {
        SchemaRole::Parameters => tool.parameters(),
        SchemaRole::Result => tool.spec.value.result.as_ref(),
    };
    match root {
        Some(r) => position(r, &n.pointer),
        None => Position::Data,
    }
}

/// The node's place for messages: `path`, `edits[].old_text`, `options.*`, or `(root)`.
pub(crate) fn display_path(pointer: &str) -> String {
    let mut out = String::new();
    for step in steps(pointer) {
        match step {
            Step::Name(k, name) if k == "properties" || k == "patternProperties" => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&name);
            }
            Step::Name(k, name) if k == "$defs" || k == "definitions" => {
                out = format!("{k}.{name}");
            }
            Step::Index(k, i) if k == "prefixItems" => out.push_str(&format!("[{i}]")),
            Step::Keyword(k) if k == "items" => out.push_str("[]"),
            Step::Keyword(k) if k == "additionalProperties" => out.push_str(".*"),
            _ => {}
        }
    }
    if out.is_empty() {
        "(root)".to_owned()
    } else {
        out
    }
}

/// The pointer of the node that holds this one (`/properties/a/anyOf/0` → `/properties/a`) when
/// the node is a branch of a union; `None` otherwise.
pub(crate) fn union_parent(pointer: &str) -> Option<&str> {
    let (rest, idx) = pointer.rsplit_once('/')?;
    idx.parse::<usize>().ok()?;
    let (parent, kw) = rest.rsplit_once('/')?;
    matches!(kw, "anyOf" | "oneOf").then_some(parent)
}

/// Where a finding about a schema node points: the property's key, else its `type: ...`, else
/// its first key.
pub(crate) fn anchor(n: &SchemaNode) -> TextRange {
    if let Some((k, _)) = n.property {
        return k.range;
    }
    if let Some((k, v)) = n.node.entry("type") {
        return k.range.cover(v.range);
    }
    n.node
        .entries()
        .first()
        .map(|(k, _)| k.range)
        .unwrap_or(n.node.range)
}

/// The names of the properties beside the property at `pointer` (its siblings and itself).
pub(crate) fn sibling_names<'n>(root: &'n Node, pointer: &str) -> Vec<&'n str> {
    let Some((parent, _)) = pointer.rsplit_once("/properties/") else {
        return Vec::new();
    };
    root.at_pointer(parent)
        .and_then(|p| p.get("properties"))
        .map(|p| p.entries().iter().map(|(k, _)| k.name.as_str()).collect())
        .unwrap_or_default()
}

/// The names in the node's `type` keyword.
pub(crate) fn types(node: &Node) -> Vec<&str> {
    match node.get("type") {
        Some(t) => match t.as_str() {
            Some(s) => vec![s],
            None => t.items().iter().filter_map(Node::as_str).collect(),
        },
        None => Vec::new(),
    }
}

/// The schema a value takes apart from `null`: the node itself, or the one non-null branch of an
/// `anyOf`/`oneOf` such as `anyOf: [{type: string}, {type: "null"}]`.
pub(crate) fn non_null(node: &Node) -> &Node {
    if node.get("type").is_some() {
        return node;
    }
    for key in ["anyOf", "oneOf"] {
        let Some(branches) = node.get(key) else {
            continue;
        };
        let real: Vec<&Node> = branches
            .items()
            .iter()
            .filter(|b| types(b) != ["null"])
            .collect();
        if let [one] = real.as_slice()
            && branches.items().len() == 2
        {
            return one;
        }
    }
    node
}

/// The one non-null type a value has (`string` for `type: [string, "null"]`), if it has one.
pub(crate) fn single_type(node: &Node) -> Option<&str> {
    let real: Vec<&str> = types(non_null(node))
        .into_iter()
        .filter(|t| *t != "null")
        .collect();
    match real.as_slice() {
        [one] => Some(one),
        _ => None,
    }
}

/// Whether the node or its non-null branch has any of the keywords.
pub(crate) fn has_any(node: &Node, keys: &[&str]) -> bool {
    let inner = non_null(node);
    keys.iter()
        .any(|k| node.get(k).is_some() || inner.get(k).is_some())
}

/// The names listed in a node's `required`.
pub(crate) fn required(node: &Node) -> Vec<&str> {
    node.get("required")
        .map(|r| r.items().iter().filter_map(Node::as_str).collect())
        .unwrap_or_default()
}

/// The values a string parameter is closed to: its `enum`, its `const`, or the `const`s of a
/// `oneOf`/`anyOf` of single values (each possibly with its own description).
pub(crate) fn closed_values(node: &Node) -> Vec<String> {
    let inner = non_null(node);
    for n in [node, inner] {
        if let Some(e) = n.get("enum") {
            return e.items().iter().filter_map(scalar_text).collect();
        }
        if let Some(c) = n.get("const").and_then(scalar_text) {
            return vec![c];
        }
        for key in ["oneOf", "anyOf"] {
            let Some(branches) = n.get(key) else { continue };
            let consts: Vec<String> = branches
                .items()
                .iter()
                .filter_map(|b| b.get("const").and_then(scalar_text))
                .collect();
            if consts.len() >= 2 {
                return consts;
            }
        }
    }
    Vec::new()
}

/// The text of a scalar (`write`, `3`, `true`); `None` for collections and null.
pub(crate) fn scalar_text(n: &Node) -> Option<String> {
    match &n.value {
        NodeValue::String(s) => Some(s.clone()),
        NodeValue::Number(x) => Some(x.to_string()),
        NodeValue::Bool(b) => Some(b.to_string()),
        NodeValue::Null | NodeValue::Seq(_) | NodeValue::Map(_) => None,
    }
}

/// Whether a `additionalProperties`/`unevaluatedProperties` value closes the object.
pub(crate) fn is_false(n: Option<&Node>) -> bool {
    n.and_then(Node::as_bool) == Some(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::rules::schema::test_node as node;

    #[test]
    fn positions() {
        let n = node(
            "properties: {a: {anyOf: [{type: string}, {type: \"null\"}]}}\noneOf: [{properties: {a: {const: x}}, required: [b]}]",
        );
        assert_eq!(position(&n, "/properties/a"), Position::Data);
        assert_eq!(position(&n, "/properties/a/anyOf/0"), Position::Data);
        assert_eq!(position(&n, "/if/properties/action"), Position::Condition);
        assert_eq!(position(&n, "/properties/not"), Position::Data);
        assert_eq!(position(&n, "/allOf/1/properties/a"), Position::Partial);
        assert_eq!(position(&n, "/oneOf/0"), Position::Partial);
        assert_eq!(position(&n, "/oneOf/0/properties/a"), Position::Partial);
    }

    #[test]
    fn display_paths() {
        assert_eq!(display_path(""), "(root)");
        assert_eq!(display_path("/properties/path"), "path");
        assert_eq!(
            display_path("/properties/edits/items/properties/old"),
            "edits[].old"
        );
        assert_eq!(display_path("/properties/type/anyOf/0"), "type");
        assert_eq!(
            display_path("/properties/env/additionalProperties"),
            "env.*"
        );
        assert_eq!(
            display_path("/$defs/Edit/properties/a~1b"),
            "$defs.Edit.a/b"
        );
    }

    #[test]
    fn union_parents() {
        assert_eq!(union_parent("/properties/a/anyOf/0"), Some("/properties/a"));
        assert_eq!(union_parent("/properties/a"), None);
        assert_eq!(union_parent("/allOf/0"), None);
    }

    #[test]
    fn nullable_unions_are_seen_through() {
        let n = node("anyOf: [{type: string, maxLength: 3}, {type: \"null\"}]");
        assert_eq!(single_type(&n), Some("string"));
        assert!(has_any(&n, &["maxLength"]));
        let n = node("type: [array, \"null\"]");
        assert_eq!(single_type(&n), Some("array"));
        let n = node("anyOf: [{type: string}, {type: array}]");
        assert_eq!(single_type(&n), None);
    }

    #[test]
    fn closed_value_forms() {
        assert_eq!(
            closed_values(&node("enum: [read, write]")),
            ["read", "write"]
        );
        assert_eq!(
            closed_values(&node("oneOf: [{const: a}, {const: b}]")),
            ["a", "b"]
        );
        assert!(closed_values(&node("type: string")).is_empty());
    }
}
