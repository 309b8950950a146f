//! OpenAI function tools: Chat Completions (`{type, function: {…}}`) and Responses (flat).
//!
//! Strict mode (providers.md §2.3) needs every object closed and fully `required`, optional
//! fields as `[T, "null"]` (or `anyOf` with null for objects, arrays and unions), and only the
//! supported keywords; the rest moves into the description. A schema that cannot be made strict
//! without changing what it accepts (a free-form object, a typeless value, a limit exceeded)
//! is emitted with `strict: false` and the loose schema instead. `strict` is always explicit.

use serde_json::{Map, Value, json};

use crate::emit::rewrite::{self, is_object};
use crate::emit::{EmitError, truncate_chars};
use crate::ir::{Provider, ToolDefinition};

mod strict;

/// Longest description the API accepts (reported limit).
pub const MAX_DESCRIPTION: usize = 1024;
pub use strict::{
    MAX_ENUM_VALUES, MAX_NESTING, MAX_PROPERTIES, MAX_STRING_BUDGET, STRICT_FORMATS,
    STRICT_KEYWORDS, StrictChange, StrictChangeKind, StrictConversion, deepest_object,
    is_structural, make_nullable, strict_conversion, strict_keeps, strict_parameters,
};

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

/// The OpenAI form of a tool: strict when asked and possible, under the name OpenAI accepts
/// ([`Provider::tool_name`]).
pub(crate) fn function(tool: &ToolDefinition, strict: bool) -> Result<Function, EmitError> {
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
        // Both APIs share the rule: one name for Chat Completions and Responses.
        name: Provider::OpenaiChat.tool_name(&tool.name).into_owned(),
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
