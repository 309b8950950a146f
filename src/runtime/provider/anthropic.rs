//! Anthropic Messages: `content[]` blocks of type `tool_use` in, one user message of
//! `tool_result` blocks out.
//!
//! A call is `{"type": "tool_use", "id", "name", "input"}` with the input a JSON value; the
//! results of all calls of a reply go back in ONE user message, a `tool_result` block each
//! (`{"type": "tool_result", "tool_use_id", "content", "is_error"}`), as Anthropic's tool-use
//! guide requires. The content is the projection's text; `is_error` is set for every result
//! that is not a success. The reply may be the whole message or its `content` array alone.

use serde_json::{Value, json};

use super::{ReplyError, WireArguments, WireCall, shape, string_at, text_of};
use crate::ir::Provider;
use crate::runtime::ToolResult;

const P: Provider = Provider::Anthropic;
const EXPECTED: &str = "a Messages reply is `{\"content\": [{\"type\": \"tool_use\", \"id\", \"name\", \"input\"}, ...]}`";

/// The `tool_use` blocks of a message.
pub(crate) fn parse(reply: &Value) -> Result<Vec<WireCall>, ReplyError> {
    let blocks: &[Value] = match reply {
        Value::Array(a) => a,
        _ => match reply.get("content") {
            Some(Value::Array(a)) => a,
            // A message of plain text: no calls.
            Some(Value::String(_)) => return Ok(Vec::new()),
            _ => return Err(shape(P, "content", "array", EXPECTED)),
        },
    };
    let mut out = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        if block.get("type").and_then(Value::as_str) != Some("tool_use") {
            continue;
        }
        let here = format!("content[{i}]");
        let id = string_at(P, block, "id", &here, EXPECTED)?;
        let called = string_at(P, block, "name", &here, EXPECTED)?;
        let arguments = WireArguments::Json(block.get("input").cloned().unwrap_or(json!({})));
        out.push(WireCall::given(id, called, arguments));
    }
    Ok(out)
}

/// One user message holding a `tool_result` block per result.
pub(crate) fn render(pairs: &[(&WireCall, &ToolResult)]) -> Vec<Value> {
    let blocks: Vec<Value> = pairs
        .iter()
        .map(|(w, r)| {
            json!({
                "type": "tool_result",
                "tool_use_id": w.id,
                "content": text_of(r),
                "is_error": !r.is_success(),
            })
        })
        .collect();
    vec![json!({"role": "user", "content": blocks})]
}
