//! MCP `tools/list` results (providers.md §1.2–1.6).
//!
//! Each `Tool` carries `name`, `title` (when the contract has one), `description`,
//! `inputSchema`, `outputSchema` and `annotations`. Schemas stay as authored (2020-12, local
//! `$ref`s kept), with private `x-…` keywords and `$schema` removed and boolean property
//! subschemas written as objects (the 2025-06-18 and 2025-11-25 schema files require objects).
//! `outputSchema` comes from `result` when its root is `type: object` (required up to
//! 2025-11-25); a non-object result has no `outputSchema`. The four hints are always emitted,
//! since MCP's defaults (`destructiveHint`, `openWorldHint` true) are not false.

use serde_json::{Map, Value, json};

use crate::emit::{EmitError, rewrite};
use crate::ir::{Effect, Idempotency, Provider, ToolDefinition};

/// The `tools/list` result `{tools: [...]}`.
pub fn list_tools_result(tools: &[&ToolDefinition]) -> Result<Value, EmitError> {
    let mut out = Vec::with_capacity(tools.len());
    for tool in tools {
        out.push(tool_object(tool)?);
    }
    Ok(json!({ "tools": out }))
}

/// One MCP `Tool`, under the name MCP accepts ([`Provider::tool_name`]).
pub fn tool_object(tool: &ToolDefinition) -> Result<Value, EmitError> {
    let mut obj = Map::new();
    obj.insert("name".into(), json!(Provider::Mcp.tool_name(&tool.name)));
    if let Some(title) = &tool.title {
        obj.insert("title".into(), json!(title));
    }
    obj.insert("description".into(), json!(tool.model_description()));
    obj.insert("inputSchema".into(), schema_for_mcp(&tool.parameters));
    if let Some(result) = &tool.result
        && result.get("type").and_then(Value::as_str) == Some("object")
    {
        obj.insert("outputSchema".into(), schema_for_mcp(result));
    }
    obj.insert(
        "annotations".into(),
        annotations(tool.effect, tool.idempotency),
    );
    Ok(Value::Object(obj))
}

/// The MCP hints a contract implies.
pub fn annotations(effect: Effect, idempotency: Idempotency) -> Value {
    json!({
        "readOnlyHint": effect.is_read_only(),
        "destructiveHint": effect == Effect::Destructive,
        "idempotentHint": matches!(idempotency, Idempotency::Pure | Idempotency::Idempotent),
        "openWorldHint": effect.is_open_world(),
    })
}

fn schema_for_mcp(schema: &Value) -> Value {
    let mut s = schema.clone();
    rewrite::strip_private(&mut s);
    rewrite::objectify_booleans(&mut s);
    s
}
