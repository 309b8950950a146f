//! Rewriting JSON Schemas for a target: visiting subschemas, inlining local `$ref`s, merging
//! `allOf`, and moving keywords a target cannot take into the description.
//!
//! Every provider emitter ([`super::openai`], [`super::anthropic`], [`super::gemini`],
//! [`super::mcp`]) is a sequence of these steps; none of them reorders keys, so the author's
//! property order survives.

use serde_json::{Map, Value};

/// Keywords whose value is one subschema.
const SINGLE: &[&str] = &[
    "additionalProperties",
    "items",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
];
/// Keywords whose value is a list of subschemas.
const LIST: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];
/// Keywords whose value maps names to subschemas.
const MAP: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Keywords dropped without a trace: identifiers and comments that tell a model nothing.
pub const SILENT: &[&str] = &["$schema", "$id", "$comment", "$anchor", "$dynamicAnchor"];

/// Calls `f` on `schema` and then on every subschema below it, depth first, in key order.
pub fn visit_mut(schema: &mut Value, f: &mut dyn FnMut(&mut Map<String, Value>)) {
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    f(obj);
    for (key, value) in obj.iter_mut() {
        let k = key.as_str();
        if SINGLE.contains(&k) {
            visit_mut(value, f);
        } else if LIST.contains(&k) {
            if let Some(items) = value.as_array_mut() {
                for item in items {
                    visit_mut(item, f);
                }
            }
        } else if MAP.contains(&k)
            && let Some(map) = value.as_object_mut()
        {
            for (_, sub) in map.iter_mut() {
                visit_mut(sub, f);
            }
        }
    }
}

/// Calls `f` on every subschema with its depth (the root is 0; `properties`, `items` and the
/// other applicators add one level; `$defs` entries start at 1).
pub fn visit(schema: &Value, depth: usize, f: &mut dyn FnMut(&Map<String, Value>, usize)) {
    let Some(obj) = schema.as_object() else {
        return;
    };
    f(obj, depth);
    for (key, value) in obj {
        let k = key.as_str();
        if SINGLE.contains(&k) {
            visit(value, depth + 1, f);
        } else if LIST.contains(&k) {
            for item in value.as_array().into_iter().flatten() {
                visit(item, depth + 1, f);
            }
        } else if MAP.contains(&k) {
            for sub in value.as_object().into_iter().flat_map(|m| m.values()) {
                visit(sub, depth + 1, f);
            }
        }
    }
}

/// Removes toolgate-only `x-…` keywords and the [`SILENT`] ones from every subschema.
pub fn strip_private(schema: &mut Value) {
    visit_mut(schema, &mut |obj| {
        obj.retain(|k, _| !k.starts_with("x-") && !SILENT.contains(&k.as_str()));
    });
}

/// Replaces boolean subschemas under `properties` with their object form (`true` → `{}`,
/// `false` → `{"not": {}}`), which every MCP revision's schema accepts.
pub fn objectify_booleans(schema: &mut Value) {
    visit_mut(schema, &mut |obj| {
        for key in MAP {
            if let Some(map) = obj.get_mut(*key).and_then(Value::as_object_mut) {
                for (_, sub) in map.iter_mut() {
                    match sub {
                        Value::Bool(true) => *sub = Value::Object(Map::new()),
                        Value::Bool(false) => {
                            *sub = serde_json::json!({"not": {}});
                        }
                        _ => {}
                    }
                }
            }
        }
    });
}

/// Inlines every local `$ref` (`#/...`) that does not lead back to itself; recursive
/// references stay `$ref`s and keep the `$defs` they point into. Sibling keywords of a `$ref`
/// override the referenced schema's (so a local `description` wins).
///
/// A schema whose inlined form would pass [`INLINED_NODES`] JSON nodes (shared definitions
/// referencing each other, a DAG that doubles at every level) or nest deeper than
/// [`MAX_INLINED_DEPTH`] JSON values (definitions chained one inside the other) is left as it
/// is, `$ref`s and `$defs` and all: inlining it would take memory exponential in the
/// document's size, or build a value deeper than the recursive walks after it (and any JSON
/// reader of what is written) can take.
pub fn inline_refs(schema: &mut Value) {
    if inlined_nodes(schema, INLINED_NODES) >= INLINED_NODES {
        return;
    }
    let root = schema.clone();
    let mut kept: Vec<String> = Vec::new();
    inline_in(schema, &root, &mut Vec::new(), &mut kept);
    if let Some(obj) = schema.as_object_mut() {
        for defs_key in ["$defs", "definitions"] {
            let Some(defs) = obj.get_mut(defs_key).and_then(Value::as_object_mut) else {
                continue;
            };
            defs.retain(|name, _| {
                let ptr = format!("#/{defs_key}/{}", escape_pointer(name));
                kept.iter()
                    .any(|k| k == &ptr || k.starts_with(&format!("{ptr}/")))
            });
            if defs.is_empty() {
                obj.shift_remove(defs_key);
            }
        }
    }
}

/// JSON nodes past which [`inline_refs`] keeps a schema's references.
pub const INLINED_NODES: u64 = 200_000;

/// Deepest nesting, in JSON values, of a schema [`inline_refs`] inlines. The loader reads spec
/// files 64 levels deep, but a chain of definitions each referencing the next inlines to their
/// depths added up; past this the references stay. 100 keeps an inlined schema, inside a
/// provider list or bundle (a few levels more), within serde_json's read limit of 128.
pub const MAX_INLINED_DEPTH: usize = 100;

/// How many JSON nodes `schema` would have with every local `$ref` inlined (a reference back
/// into its own chain counts as one node), counted up to `cap`; `cap` as well when the inlined
/// form would nest deeper than [`MAX_INLINED_DEPTH`]. Each target is counted once and
/// remembered with its height, so this costs the size of the schema, not of its inlined form.
pub fn inlined_nodes(schema: &Value, cap: u64) -> u64 {
    /// A counted subtree: its nodes and how many levels it nests below itself.
    #[derive(Clone, Copy)]
    struct Extent {
        nodes: u64,
        height: usize,
    }
    /// The walk's state: the schema references resolve in, each reference's extent, the
    /// references being counted (a reference back into them counts as one node), the cap.
    struct Count<'a> {
        root: &'a Value,
        memo: std::collections::HashMap<String, Extent>,
        stack: Vec<String>,
        cap: u64,
    }
    impl Count<'_> {
        fn full(&self) -> Extent {
            Extent {
                nodes: self.cap,
                height: 0,
            }
        }
        fn size(&mut self, v: &Value, depth: usize) -> Extent {
            // Checked on the way down: the walk itself recurses no deeper than the limit.
            if depth > MAX_INLINED_DEPTH {
                return self.full();
            }
            let mut here = Extent {
                nodes: 1,
                height: 0,
            };
            let add = |here: &mut Extent, sub: Extent| {
                here.nodes = here.nodes.saturating_add(sub.nodes);
                here.height = here.height.max(sub.height.saturating_add(1));
            };
            match v {
                Value::Object(obj) => {
                    if let Some(reference) = obj.get("$ref").and_then(Value::as_str)
                        && let Some(ptr) = reference.strip_prefix('#')
                    {
                        if let Some(k) = self.memo.get(reference).copied() {
                            add(&mut here, k);
                        } else if !self.stack.iter().any(|r| r == reference)
                            && let Some(target) = self.root.pointer(ptr)
                        {
                            self.stack.push(reference.to_string());
                            let k = self.size(target, depth + 1);
                            self.stack.pop();
                            self.memo.insert(reference.to_string(), k);
                            add(&mut here, k);
                        }
                    }
                    // The root's definitions too: `inline_in` inlines inside every one of
                    // them, referenced or not, before dropping those no reference kept.
                    for sub in obj.values() {
                        if here.nodes >= self.cap {
                            return self.full();
                        }
                        let k = self.size(sub, depth + 1);
                        add(&mut here, k);
                    }
                }
                Value::Array(items) => {
                    for sub in items {
                        if here.nodes >= self.cap {
                            return self.full();
                        }
                        let k = self.size(sub, depth + 1);
                        add(&mut here, k);
                    }
                }
                _ => {}
            }
            // A remembered target met deeper down than where it was counted: its height says
            // how deep it would inline here.
            if here.nodes >= self.cap || depth.saturating_add(here.height) > MAX_INLINED_DEPTH {
                return self.full();
            }
            here
        }
    }
    let mut count = Count {
        root: schema,
        memo: std::collections::HashMap::new(),
        stack: Vec::new(),
        cap,
    };
    count.size(schema, 0).nodes.min(cap)
}

fn escape_pointer(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

fn inline_in(node: &mut Value, root: &Value, stack: &mut Vec<String>, kept: &mut Vec<String>) {
    let Some(obj) = node.as_object_mut() else {
        return;
    };
    if let Some(Value::String(reference)) = obj.get("$ref").cloned()
        && let Some(ptr) = reference.strip_prefix('#')
    {
        if stack.contains(&reference) {
            kept.push(reference);
            return;
        }
        if let Some(target) = root.pointer(ptr) {
            let mut merged = target.clone();
            stack.push(reference.clone());
            inline_in(&mut merged, root, stack, kept);
            stack.pop();
            obj.shift_remove("$ref");
            let siblings = std::mem::take(obj);
            if let Value::Object(mut target_obj) = merged {
                for (k, v) in siblings {
                    target_obj.insert(k, v);
                }
                *obj = target_obj;
            } else {
                // A boolean target: `true` adds nothing to the siblings, `false` rejects all.
                *obj = siblings;
                if merged == Value::Bool(false) {
                    obj.insert("not".into(), Value::Object(Map::new()));
                }
            }
            // The target's subschemas were inlined above, with the reference on the stack.
            return;
        }
    }
    for (key, value) in obj.iter_mut() {
        let k = key.as_str();
        if k == "$defs" || k == "definitions" {
            continue;
        }
        if SINGLE.contains(&k) {
            inline_in(value, root, stack, kept);
        } else if LIST.contains(&k) {
            for item in value.as_array_mut().into_iter().flatten() {
                inline_in(item, root, stack, kept);
            }
        } else if MAP.contains(&k) {
            for (_, sub) in value.as_object_mut().into_iter().flatten() {
                inline_in(sub, root, stack, kept);
            }
        }
    }
    // References inside kept definitions must keep working too.
    if stack.is_empty() {
        for defs_key in ["$defs", "definitions"] {
            if let Some(defs) = obj.get_mut(defs_key).and_then(Value::as_object_mut) {
                for (name, sub) in defs.iter_mut() {
                    let ptr = format!("#/{defs_key}/{}", escape_pointer(name));
                    stack.push(ptr);
                    inline_in(sub, root, stack, kept);
                    stack.pop();
                }
            }
        }
    }
}

/// Merges `allOf` branches that are plain schemas into the node (properties and required are
/// united; other keywords are taken where the node has none). A branch whose keywords clash
/// with the node's (or that is not an object) leaves that `allOf` as it was.
pub fn merge_all_of(schema: &mut Value) {
    visit_mut(schema, &mut |obj| {
        let Some(Value::Array(branches)) = obj.get("allOf").cloned() else {
            return;
        };
        let mut merged = obj.clone();
        merged.shift_remove("allOf");
        for branch in &branches {
            let Some(b) = branch.as_object() else {
                return;
            };
            for (k, v) in b {
                match (k.as_str(), merged.get_mut(k)) {
                    ("properties", Some(Value::Object(props))) => {
                        if let Value::Object(more) = v {
                            for (pk, pv) in more {
                                if props.contains_key(pk) {
                                    return;
                                }
                                props.insert(pk.clone(), pv.clone());
                            }
                        }
                    }
                    ("required", Some(Value::Array(req))) => {
                        for r in v.as_array().into_iter().flatten() {
                            if !req.contains(r) {
                                req.push(r.clone());
                            }
                        }
                    }
                    ("description", Some(_)) => {}
                    (_, Some(existing)) => {
                        if existing != v {
                            return;
                        }
                    }
                    (_, None) => {
                        merged.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        *obj = merged;
    });
}

/// Decides per keyword and value whether a node keeps it.
pub type Keep<'a> = &'a dyn Fn(&str, &Value) -> bool;

/// Moves keywords into the node's description in the Anthropic SDK's compact form
/// (`description\n\n{minLength: 1, pattern: "^a"}`), so a model still reads what the target
/// cannot enforce. `keep` decides per keyword and value; the [`SILENT`] keywords and `x-…`
/// are dropped instead.
pub fn demote(schema: &mut Value, keep: Keep<'_>) {
    visit_mut(schema, &mut |obj| demote_node(obj, keep));
}

/// [`demote`] on one node only (not its subschemas).
pub fn demote_node(obj: &mut Map<String, Value>, keep: Keep<'_>) {
    let mut moved: Vec<(String, Value)> = Vec::new();
    obj.retain(|k, v| {
        if k.starts_with("x-") || SILENT.contains(&k.as_str()) {
            return false;
        }
        if keep(k, v) {
            return true;
        }
        moved.push((k.clone(), v.clone()));
        false
    });
    if !moved.is_empty() {
        append_description(obj, &moved);
    }
}

/// Appends `{k: v, …}` to a node's description.
pub fn append_description(obj: &mut Map<String, Value>, moved: &[(String, Value)]) {
    let note = format!(
        "{{{}}}",
        moved
            .iter()
            .map(|(k, v)| format!("{k}: {}", compact(v)))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let text = match obj.get("description").and_then(Value::as_str) {
        Some(d) if !d.is_empty() => format!("{d}\n\n{note}"),
        _ => note,
    };
    obj.insert("description".into(), Value::String(text));
}

/// One-line JSON of a value.
fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// The `type` keyword as a list of type names.
pub fn types_of(obj: &Map<String, Value>) -> Vec<&str> {
    match obj.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Whether a node describes objects (by `type`, or by having `properties`).
pub fn is_object(obj: &Map<String, Value>) -> bool {
    types_of(obj).contains(&"object")
        || (obj.get("type").is_none() && obj.contains_key("properties"))
}

/// Root keywords providers reject at the top level of a tool's parameters: [`fix_root`] moves
/// them into the root description.
pub const ROOT_COMBINATORS: &[&str] = &[
    "anyOf", "oneOf", "allOf", "not", "enum", "const", "if", "then", "else",
];

/// Moves root-level combinators a provider rejects (`anyOf`, `oneOf`, `allOf`, `not`, `enum`,
/// `if`/`then`/`else`) into the root description and makes sure the root is an object schema
/// with `properties`.
pub fn fix_root(schema: &mut Value) {
    if !schema.is_object() {
        *schema = serde_json::json!({"type": "object"});
    }
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    demote_node(obj, &|k, _| !ROOT_COMBINATORS.contains(&k));
    obj.insert("type".into(), Value::String("object".into()));
    if !obj.contains_key("properties") {
        obj.insert("properties".into(), Value::Object(Map::new()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Thirty definitions, each naming the next from eight properties: 8^30 nodes inlined.
    #[test]
    fn a_dag_of_shared_definitions_keeps_its_references() {
        let mut defs = Map::new();
        for i in 0..30 {
            let props: Map<String, Value> = (0..8)
                .map(|p| {
                    (
                        format!("p{p}"),
                        serde_json::json!({"$ref": format!("#/$defs/S{}", i + 1)}),
                    )
                })
                .collect();
            defs.insert(
                format!("S{i}"),
                serde_json::json!({"type": "object", "properties": props}),
            );
        }
        defs.insert("S30".into(), serde_json::json!({"type": "string"}));
        let mut schema = serde_json::json!({"type": "object", "properties": {"root": {"$ref": "#/$defs/S0"}}, "$defs": defs});
        let before = schema.clone();
        assert_eq!(inlined_nodes(&schema, INLINED_NODES), INLINED_NODES);
        inline_refs(&mut schema);
        assert_eq!(schema, before);
    }

    #[test]
    fn a_small_shared_definition_is_inlined_and_counted() {
        let mut schema = serde_json::json!({
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/N"}, "b": {"$ref": "#/$defs/N"}},
            "$defs": {"N": {"type": "integer"}}
        });
        // The root (1), `type` (1), `properties` (1), each property with its `$ref` and the
        // inlined `N` (4 + 4), and the definitions as `inline_in` walks them (1 + 2).
        assert_eq!(inlined_nodes(&schema, 1000), 14);
        inline_refs(&mut schema);
        assert_eq!(
            schema,
            serde_json::json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}})
        );
    }
    use serde_json::json;

    /// Definitions `d0`…`d{count}`, each `levels` properties deep around a reference to the
    /// next, and a root that names them last first (so each is counted, and remembered, near
    /// the root before a longer chain meets it again).
    fn chained_definitions(count: usize, levels: usize) -> Value {
        let mut defs = Map::new();
        for i in 0..=count {
            let mut body = if i < count {
                json!({"$ref": format!("#/$defs/d{}", i + 1)})
            } else {
                json!({"type": "string"})
            };
            for _ in 0..levels {
                body = json!({"properties": {"x": body}});
            }
            defs.insert(format!("d{i}"), body);
        }
        let props: Map<String, Value> = (0..=count)
            .map(|j| {
                (
                    format!("p{j}"),
                    json!({"$ref": format!("#/$defs/d{}", count - j)}),
                )
            })
            .collect();
        json!({"type": "object", "properties": props, "$defs": defs})
    }

    /// Nesting of a JSON value, counted in objects and arrays (a scalar is 0).
    fn nesting(v: &Value) -> usize {
        match v {
            Value::Object(m) => 1 + m.values().map(nesting).max().unwrap_or(0),
            Value::Array(a) => 1 + a.iter().map(nesting).max().unwrap_or(0),
            _ => 0,
        }
    }

    /// Sixty definitions of 28 levels each would inline to some 3,400 levels (and, walked by
    /// the emitters, took minutes); remembered targets met deeper down count their height.
    #[test]
    fn a_chain_of_definitions_past_the_depth_limit_keeps_its_references() {
        let mut schema = chained_definitions(60, 28);
        assert!(nesting(&schema) < 64);
        assert_eq!(inlined_nodes(&schema, INLINED_NODES), INLINED_NODES);
        let before = schema.clone();
        inline_refs(&mut schema);
        assert_eq!(schema, before);
    }

    /// A short chain inlines, and stays within the limit.
    #[test]
    fn a_chain_within_the_depth_limit_is_inlined() {
        let mut schema = chained_definitions(2, 10);
        assert!(inlined_nodes(&schema, INLINED_NODES) < INLINED_NODES);
        inline_refs(&mut schema);
        assert!(schema.get("$defs").is_none(), "{schema}");
        assert!(nesting(&schema) <= MAX_INLINED_DEPTH);
        assert!(nesting(&schema) > 60, "{}", nesting(&schema));
    }

    /// A DAG that doubles at every level, in definitions the root never names: `inline_in`
    /// walks every definition, so the count does too.
    #[test]
    fn a_dag_in_unreferenced_definitions_keeps_its_references() {
        let mut defs = Map::new();
        for i in 0..30 {
            let next = json!({"$ref": format!("#/$defs/S{}", i + 1)});
            defs.insert(
                format!("S{i}"),
                json!({"type": "object", "properties": {"a": next, "b": next, "c": next}}),
            );
        }
        defs.insert("S30".into(), json!({"type": "string"}));
        let mut schema = json!({"type": "object", "$defs": defs});
        assert_eq!(inlined_nodes(&schema, INLINED_NODES), INLINED_NODES);
        let before = schema.clone();
        inline_refs(&mut schema);
        assert_eq!(schema, before);
    }

    #[test]
    fn inlines_refs_and_keeps_recursive_ones() {
        let mut s = json!({
            "type": "object",
            "properties": {
                "a": {"$ref": "#/$defs/Leaf", "description": "local"},
                "t": {"$ref": "#/$defs/Tree"}
            },
            "$defs": {
                "Leaf": {"type": "string", "description": "def"},
                "Tree": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}}
            }
        });
        inline_refs(&mut s);
        assert_eq!(
            s,
            json!({
                "type": "object",
                "properties": {
                    "a": {"type": "string", "description": "local"},
                    "t": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}}
                },
                "$defs": {
                    "Tree": {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}}
                }
            })
        );
    }

    #[test]
    fn demotes_into_description() {
        let mut s = json!({"type": "string", "description": "A path.", "maxLength": 10, "x-sensitive": true, "$comment": "c"});
        demote(&mut s, &|k, _| k != "maxLength");
        assert_eq!(
            s,
            json!({"type": "string", "description": "A path.\n\n{maxLength: 10}"})
        );
    }

    #[test]
    fn merges_all_of() {
        let mut s = json!({"type": "object", "allOf": [
            {"properties": {"a": {"type": "string"}}, "required": ["a"]},
            {"properties": {"b": {"type": "string"}}}
        ], "properties": {}, "required": []});
        merge_all_of(&mut s);
        assert_eq!(
            s,
            json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["a"]})
        );
    }
}
