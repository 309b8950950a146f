//! Contracts as MCP tools, and results as MCP `CallToolResult`s.
//!
//! A [`ToolDefinition`] becomes a `tools/list` entry: `name`, `title`, `description`,
//! `inputSchema` (the parameters), `outputSchema` (the `result` schema) and annotations that are
//! always explicit, derived from the contract — `readOnlyHint` from
//! [`Effect::is_read_only`], `destructiveHint` for the `destructive` effect, `idempotentHint`
//! for `pure`/`idempotent` idempotency, `openWorldHint` from [`Effect::is_open_world`]. MCP's
//! defaults (`destructiveHint: true`, `openWorldHint: true`) never stand in for the contract.
//!
//! Schemas lose toolgate-only `x-` keywords, and boolean subschemas under `properties` become
//! objects (`{}` / `{"not": {}}`): MCP 2025-11-25's schema.json requires objects there. Until
//! protocol 2026-07-28 an `outputSchema` (and `structuredContent`) must be an object, so a
//! result schema whose root is not an object is wrapped as `{"result": …}`, and so is the value.

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock, JsonObject, MetaObject, Tool, ToolAnnotations};
use serde_json::{Map, Value, json};

use crate::ir::{Effect, Idempotency, Provider, ToolDefinition};
use crate::runtime::ToolResult;
use crate::runtime::exec::mcp::ERROR_TYPE_META_KEY;

/// The `_meta` key holding a result's toolgate status.
pub const STATUS_META_KEY: &str = "io.toolgate/status";

/// The property a non-object structured result is wrapped in.
pub const WRAPPED_RESULT_KEY: &str = "result";

/// A contract as an MCP tool, and whether its structured results are wrapped.
#[derive(Clone, Debug)]
pub struct McpTool {
    /// The `tools/list` entry.
    pub tool: Tool,
    /// Whether `structuredContent` is `{"result": value}` (the result schema's root is not an
    /// object).
    pub wraps_result: bool,
}

/// The MCP tool of a contract, under the name MCP accepts ([`Provider::tool_name`]).
pub fn mcp_tool(def: &ToolDefinition) -> McpTool {
    let input = match clean_schema(&def.parameters) {
        Value::Object(m) => m,
        _ => JsonObject::new(),
    };
    let name = Provider::Mcp.tool_name(&def.name).into_owned();
    let mut tool = Tool::new(name, def.model_description().into_owned(), Arc::new(input));
    if let Some(t) = &def.title {
        tool = tool.with_title(t.clone());
    }
    tool = tool.with_annotations(annotations(def));
    let mut wraps_result = false;
    if let Some(result) = &def.result {
        let cleaned = clean_schema(result);
        let object_root = cleaned.get("type").and_then(Value::as_str) == Some("object");
        let schema = if object_root {
            cleaned
        } else {
            wraps_result = true;
            json!({
                "type": "object",
                "properties": {WRAPPED_RESULT_KEY: cleaned},
                "required": [WRAPPED_RESULT_KEY],
                "additionalProperties": false,
            })
        };
        if let Value::Object(m) = schema {
            tool = tool.with_raw_output_schema(Arc::new(m));
        }
    }
    McpTool { tool, wraps_result }
}

/// The annotations of a contract, every hint stated.
pub fn annotations(def: &ToolDefinition) -> ToolAnnotations {
    ToolAnnotations::from_raw(
        def.title.clone(),
        Some(def.effect.is_read_only()),
        Some(def.effect == Effect::Destructive),
        Some(matches!(
            def.idempotency,
            Idempotency::Pure | Idempotency::Idempotent
        )),
        Some(def.effect.is_open_world()),
    )
}

/// A JSON Schema without toolgate-only `x-` keywords, with object subschemas under
/// `properties`.
pub fn clean_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(m) => {
            let mut out = Map::with_capacity(m.len());
            for (k, v) in m {
                if k.starts_with("x-") {
                    continue;
                }
                let cleaned = match k.as_str() {
                    // Maps from names to subschemas: the names stay, the schemas are cleaned.
                    "properties" | "patternProperties" | "$defs" | "definitions"
                    | "dependentSchemas" => match v {
                        Value::Object(props) => Value::Object(
                            props
                                .iter()
                                .map(|(name, s)| (name.clone(), object_schema(s)))
                                .collect(),
                        ),
                        other => other.clone(),
                    },
                    // Keywords whose values are not schemas.
                    "enum" | "const" | "default" | "examples" | "required" => v.clone(),
                    _ => clean_schema(v),
                };
                out.insert(k.clone(), cleaned);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(clean_schema).collect()),
        other => other.clone(),
    }
}

/// A subschema as an object: `true` is `{}`, `false` is `{"not": {}}`.
fn object_schema(s: &Value) -> Value {
    match s {
        Value::Bool(true) => json!({}),
        Value::Bool(false) => json!({"not": {}}),
        other => clean_schema(other),
    }
}

/// A result as MCP returns it: the projection the model reads as a text block, the structured
/// result as `structuredContent`, `isError` for every outcome but success, and toolgate's
/// status and error type in `_meta`.
pub fn call_result(r: &ToolResult, wraps_result: bool) -> CallToolResult {
    let projection = r.projection();
    let content = vec![ContentBlock::text(projection.text.clone())];
    let mut out = if r.is_success() {
        CallToolResult::success(content)
    } else {
        CallToolResult::error(content)
    };
    out.structured_content = projection.structured.clone().map(|v| {
        if wraps_result {
            json!({WRAPPED_RESULT_KEY: v})
        } else {
            v
        }
    });
    let mut meta = MetaObject::new();
    meta.insert(
        STATUS_META_KEY.to_owned(),
        Value::String(r.status().as_str().to_owned()),
    );
    if let Some(t) = r.error_type() {
        meta.insert(
            ERROR_TYPE_META_KEY.to_owned(),
            Value::String(t.as_str().to_owned()),
        );
    }
    out.meta = Some(meta);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemas_lose_x_keywords_and_boolean_properties() {
        let s = json!({
            "type": "object",
            "x-toolgate-sensitive": true,
            "properties": {
                "x-name": {"type": "string", "x-secret": true},
                "any": true,
                "never": false,
                "list": {"type": "array", "items": {"type": "string", "x-k": 1}}
            },
            "required": ["x-name"],
            "enum": [{"x-keep": 1}]
        });
        assert_eq!(
            clean_schema(&s),
            json!({
                "type": "object",
                "properties": {
                    "x-name": {"type": "string"},
                    "any": {},
                    "never": {"not": {}},
                    "list": {"type": "array", "items": {"type": "string"}}
                },
                "required": ["x-name"],
                "enum": [{"x-keep": 1}]
            })
        );
    }
}
