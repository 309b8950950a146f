//! Anthropic Messages `tools`: `{name, description, input_schema}` (providers.md §3.1).
//!
//! The API takes arbitrary JSON Schema as guidance, but rejects names outside
//! `^[a-zA-Z0-9_-]{1,64}$` (such a name is written as its stand-in, [`Provider::tool_name`]), top-level property keys outside `^[a-zA-Z0-9_.-]{1,64}$`, and
//! `oneOf`/`anyOf`/`allOf` at the root. Local `$ref`s are inlined (recursive ones kept), private
//! `x-…` keywords stripped, and root combinators moved into the root description. Strict tool
//! use (§3.2) is not emitted: no `strict` key, so the API's default (off) applies.

use serde_json::{Value, json};

use crate::emit::{EmitError, name_matches, rewrite};
use crate::ir::{Provider, ToolDefinition};

const TARGET: &str = "anthropic";

/// The `tools` list.
pub fn tools(tools: &[&ToolDefinition]) -> Result<Value, EmitError> {
    let mut out = Vec::with_capacity(tools.len());
    for tool in tools {
        out.push(tool_param(tool)?);
    }
    Ok(Value::Array(out))
}

/// One tool of the list, under the name Anthropic accepts ([`Provider::tool_name`]).
pub(crate) fn tool_param(tool: &ToolDefinition) -> Result<Value, EmitError> {
    let schema = input_schema(&tool.parameters);
    for name in schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|p| p.keys())
    {
        if !is_property_key(name) {
            return Err(EmitError::InvalidName {
                target: TARGET,
                what: "property name",
                tool: tool.name.clone(),
                name: name.clone(),
                rule: "^[a-zA-Z0-9_.-]{1,64}$",
            });
        }
    }
    Ok(json!({
        "name": Provider::Anthropic.tool_name(&tool.name),
        "description": tool.model_description(),
        "input_schema": schema,
    }))
}

/// Whether a top-level property key is one Anthropic accepts (`^[a-zA-Z0-9_.-]{1,64}$`).
pub fn is_property_key(name: &str) -> bool {
    let key = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.';
    name_matches(name, key, key, 64)
}

/// The `input_schema` of a tool.
pub fn input_schema(parameters: &Value) -> Value {
    let mut s = parameters.clone();
    rewrite::strip_private(&mut s);
    rewrite::inline_refs(&mut s);
    rewrite::fix_root(&mut s);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn property_keys() {
        assert!(is_property_key("file.path-2_x"));
        assert!(!is_property_key("file path"));
        assert!(!is_property_key(""));
        assert!(!is_property_key(&"a".repeat(65)));
    }
}
