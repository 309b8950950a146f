//! OpenAI function tools: Chat Completions (`{type, function: {…}}`) and Responses (flat).
//!
//! Strict mode (providers.md §2.3) needs every object closed and fully `required`, optional
//! fields as `[T, "null"]` (or `anyOf` with null for objects, arrays and unions), and only the
//! supported keywords; the rest moves into the description. A schema that cannot be made strict
//! without changing what it accepts (a free-form object, a typeless value, a limit exceeded)
//! is emitted with `strict: false` and the loose schema instead. `strict` is always explicit.

use serde_json::{Map, Value, json};

use crate::emit::rewrite::{self, is_object, types_of};
use crate::emit::{EmitError, name_matches, truncate_chars};
use crate::ir::ToolDefinition;

/// Provider name in errors.
const TARGET: &str = "openai";
/// Longest description the API accepts (reported limit).
pub const MAX_DESCRIPTION: usize = 1024;
/// Deepest object nesting strict mode accepts.
pub const MAX_NESTING: usize = 10;
/// Most object properties in one strict schema.
pub const MAX_PROPERTIES: usize = 5000;
/// Most enum values in one strict schema.
pub const MAX_ENUM_VALUES: usize = 1000;
/// Most characters of property names, definition names, enum and const values together.
pub const MAX_STRING_BUDGET: usize = 120_000;
/// String formats strict mode accepts.
pub const STRICT_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];
/// Keywords strict mode accepts (everything else moves into the description).
pub const STRICT_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "description",
    "title",
    "$ref",
    "$defs",
    "definitions",
    "pattern",
    "format",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
];

/// The Chat Completions `tools` list.
pub fn chat(tools: &[&ToolDefinition], strict: bool) -> Result<Value, EmitError> {
    let mut out = Vec::with_capacity(tools.len());
    for tool in tools {
        out.push(chat_entry(&function(tool, strict)?));
    }
    Ok(Value::Array(out))
}

/// The Responses API `tools` list.
pub fn responses(tools: &[&ToolDefinition], strict: bool) -> Result<Value, EmitError> {
    let mut out = Vec::with_capacity(tools.len());
    for tool in tools {
        out.push(responses_entry(&function(tool, strict)?));
    }
    Ok(Value::Array(out))
}

/// One tool as a Chat Completions entry.
pub(crate) fn chat_entry(f: &Function) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": f.name,
            "description": f.description,
            "parameters": f.parameters,
            "strict": f.strict,
        }
    })
}

/// One tool as a Responses API entry.
pub(crate) fn responses_entry(f: &Function) -> Value {
    json!({
        "type": "function",
        "name": f.name,
        "description": f.description,
        "parameters": f.parameters,
        "strict": f.strict,
    })
}

/// One tool in OpenAI's terms, shared by the Chat Completions and Responses forms (the strict
/// conversion is the costly part, so it runs once per tool).
pub(crate) struct Function {
    name: String,
    description: String,
    parameters: Value,
    strict: bool,
}

/// The OpenAI form of a tool: strict when asked and possible.
pub(crate) fn function(tool: &ToolDefinition, strict: bool) -> Result<Function, EmitError> {
    let ok = name_matches(
        &tool.name,
        |c| c.is_ascii_alphanumeric() || c == '_' || c == '-',
        |c| c.is_ascii_alphanumeric() || c == '_' || c == '-',
        64,
    );
    if !ok {
        return Err(EmitError::InvalidName {
            target: TARGET,
            what: "tool name",
            tool: tool.name.clone(),
            name: tool.name.clone(),
            rule: "^[a-zA-Z0-9_-]{1,64}$",
        });
    }
    let description = truncate_chars(&tool.model_description(), MAX_DESCRIPTION);
    let (parameters, strict) = if strict {
        match strict_parameters(&tool.parameters) {
            Ok(p) => (p, true),
            Err(_) => (loose_parameters(&tool.parameters), false),
        }
    } else {
        (loose_parameters(&tool.parameters), false)
    };
    Ok(Function {
        name: tool.name.clone(),
        description,
        parameters,
        strict,
    })
}

/// The non-strict form: the author's schema with private keywords stripped, local `$ref`s
/// inlined, a root object with `properties`, and `properties: {}` on every object without them.
pub fn loose_parameters(schema: &Value) -> Value {
    let mut s = schema.clone();
    rewrite::strip_private(&mut s);
    rewrite::inline_refs(&mut s);
    rewrite::fix_root(&mut s);
    rewrite::visit_mut(&mut s, &mut |obj| {
        if is_object(obj) && !obj.contains_key("properties") {
            obj.insert("properties".into(), Value::Object(Map::new()));
        }
    });
    s
}

/// The strict form, or why the schema cannot be strict without accepting something else.
pub fn strict_parameters(schema: &Value) -> Result<Value, Vec<String>> {
    let mut s = schema.clone();
    rewrite::strip_private(&mut s);
    rewrite::inline_refs(&mut s);
    rewrite::merge_all_of(&mut s);
    rewrite::fix_root(&mut s);
    let mut blockers = Vec::new();
    strictify(&mut s, "", &mut blockers);
    check_limits(&s, &mut blockers);
    if blockers.is_empty() {
        Ok(s)
    } else {
        Err(blockers)
    }
}

fn strictify(node: &mut Value, path: &str, blockers: &mut Vec<String>) {
    let obj = match node {
        Value::Object(obj) => obj,
        Value::Bool(_) => {
            blockers.push(format!("{path}: a boolean schema has no type"));
            return;
        }
        _ => return,
    };
    if let Some(one_of) = obj.shift_remove("oneOf") {
        // Strict mode has no oneOf; anyOf accepts a superset (the runtime still checks).
        obj.insert("anyOf".into(), one_of);
    }
    for (key, what) in [
        (
            "patternProperties",
            "a pattern-keyed map (patternProperties)",
        ),
        ("prefixItems", "a tuple (prefixItems)"),
    ] {
        if obj.contains_key(key) {
            blockers.push(format!("{path}: {what}"));
        }
    }
    let typed = obj.contains_key("type")
        || obj.contains_key("enum")
        || obj.contains_key("const")
        || obj.contains_key("anyOf")
        || obj.contains_key("$ref");
    if !typed {
        blockers.push(format!("{path}: no type (any JSON value)"));
    }
    if is_object(obj) {
        match obj.get("additionalProperties") {
            Some(Value::Bool(false)) => {}
            None if obj.contains_key("properties") => {
                obj.insert("additionalProperties".into(), Value::Bool(false));
            }
            _ => blockers.push(format!("{path}: an open object (additional properties)")),
        }
        if !obj.contains_key("properties") {
            obj.insert("properties".into(), Value::Object(Map::new()));
        }
        let keys: Vec<String> = obj
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        let required: Vec<String> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        if let Some(props) = obj.get_mut("properties").and_then(Value::as_object_mut) {
            for (key, sub) in props.iter_mut() {
                strictify(sub, &format!("{path}/{key}"), blockers);
                if !required.contains(key) {
                    make_nullable(sub);
                }
            }
        }
        obj.insert(
            "required".into(),
            Value::Array(keys.into_iter().map(Value::String).collect()),
        );
    }
    for key in ["items", "$defs", "definitions", "anyOf"] {
        match obj.get_mut(key) {
            Some(Value::Array(items)) => {
                for (i, item) in items.iter_mut().enumerate() {
                    strictify(item, &format!("{path}/{key}/{i}"), blockers);
                }
            }
            Some(Value::Object(map)) if key != "items" => {
                for (name, sub) in map.iter_mut() {
                    strictify(sub, &format!("{path}/{key}/{name}"), blockers);
                }
            }
            Some(item @ (Value::Object(_) | Value::Bool(_))) => {
                strictify(item, &format!("{path}/{key}"), blockers)
            }
            _ => {}
        }
    }
    rewrite::demote_node(obj, &|k, v| {
        if k == "format" {
            return v.as_str().is_some_and(|f| STRICT_FORMATS.contains(&f));
        }
        STRICT_KEYWORDS.contains(&k)
    });
}

/// Makes an optional property accept `null`: `[T, "null"]` for simple types, `anyOf` with a
/// null branch for objects, arrays, unions and references.
pub fn make_nullable(node: &mut Value) {
    let Some(obj) = node.as_object_mut() else {
        return;
    };
    let types: Vec<String> = types_of(obj).into_iter().map(str::to_owned).collect();
    if types.iter().any(|t| t == "null") {
        return;
    }
    if let Some(Value::Array(branches)) = obj.get_mut("anyOf") {
        if !branches
            .iter()
            .any(|b| b.get("type") == Some(&json!("null")))
        {
            branches.push(json!({"type": "null"}));
        }
        return;
    }
    let simple = types.len() == 1
        && !matches!(types[0].as_str(), "object" | "array")
        && !obj.contains_key("$ref");
    if simple {
        obj.insert("type".into(), json!([types[0], "null"]));
        if let Some(Value::Array(values)) = obj.get_mut("enum")
            && !values.contains(&Value::Null)
        {
            values.push(Value::Null);
        }
        return;
    }
    if types.is_empty()
        && !obj.contains_key("$ref")
        && let Some(Value::Array(values)) = obj.get_mut("enum")
    {
        if !values.contains(&Value::Null) {
            values.push(Value::Null);
        }
        return;
    }
    // Wrap: the description and title stay outside, the rest becomes the first branch.
    let mut outer = Map::new();
    for key in ["description", "title"] {
        if let Some(v) = obj.shift_remove(key) {
            outer.insert(key.into(), v);
        }
    }
    let inner = std::mem::take(obj);
    obj.insert(
        "anyOf".into(),
        json!([Value::Object(inner), {"type": "null"}]),
    );
    for (k, v) in outer {
        obj.insert(k, v);
    }
}

fn check_limits(schema: &Value, blockers: &mut Vec<String>) {
    let mut properties = 0usize;
    let mut enum_values = 0usize;
    let mut chars = 0usize;
    let mut deepest = 0usize;
    object_depth(schema, 0, &mut deepest);
    rewrite::visit(schema, 0, &mut |obj, _| {
        if let Some(p) = obj.get("properties").and_then(Value::as_object) {
            properties += p.len();
            chars += p.keys().map(|k| k.chars().count()).sum::<usize>();
        }
        for key in ["$defs", "definitions"] {
            if let Some(d) = obj.get(key).and_then(Value::as_object) {
                chars += d.keys().map(|k| k.chars().count()).sum::<usize>();
            }
        }
        if let Some(e) = obj.get("enum").and_then(Value::as_array) {
            enum_values += e.len();
            chars += e
                .iter()
                .filter_map(Value::as_str)
                .map(|s| s.chars().count())
                .sum::<usize>();
        }
        if let Some(Value::String(c)) = obj.get("const") {
            chars += c.chars().count();
        }
    });
    if deepest > MAX_NESTING {
        blockers.push(format!("objects nest {deepest} deep (limit {MAX_NESTING})"));
    }
    if properties > MAX_PROPERTIES {
        blockers.push(format!("{properties} properties (limit {MAX_PROPERTIES})"));
    }
    if enum_values > MAX_ENUM_VALUES {
        blockers.push(format!(
            "{enum_values} enum values (limit {MAX_ENUM_VALUES})"
        ));
    }
    if chars > MAX_STRING_BUDGET {
        blockers.push(format!(
            "{chars} characters of names and values (limit {MAX_STRING_BUDGET})"
        ));
    }
}

/// The deepest object nesting: the root object is level 1, an object property of it level 2.
pub fn object_depth(schema: &Value, level: usize, deepest: &mut usize) {
    let Some(obj) = schema.as_object() else {
        return;
    };
    let level = if is_object(obj) { level + 1 } else { level };
    *deepest = (*deepest).max(level);
    for key in ["properties", "$defs", "definitions"] {
        for sub in obj
            .get(key)
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|m| m.values())
        {
            object_depth(sub, level, deepest);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(sub) = obj.get(key) {
            object_depth(sub, level, deepest);
        }
    }
    for sub in obj
        .get("anyOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        object_depth(sub, level, deepest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_fields_become_nullable_and_required() {
        let s = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "maxLength": 10, "default": "a"},
                "mode": {"type": "string", "enum": ["r", "w"]},
                "opts": {"type": "object", "properties": {"x": {"type": "integer"}}, "description": "Options."}
            },
            "required": ["mode"]
        });
        let out = strict_parameters(&s).unwrap();
        assert_eq!(
            out,
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": ["string", "null"], "description": "{maxLength: 10, default: \"a\"}"},
                    "mode": {"type": "string", "enum": ["r", "w"]},
                    "opts": {
                        "anyOf": [
                            {"type": "object", "properties": {"x": {"type": ["integer", "null"]}}, "additionalProperties": false, "required": ["x"]},
                            {"type": "null"}
                        ],
                        "description": "Options."
                    }
                },
                "required": ["path", "mode", "opts"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn free_form_objects_are_not_strict() {
        let s = json!({"type": "object", "properties": {"meta": {"type": "object"}}});
        assert!(strict_parameters(&s).is_err());
    }
}
