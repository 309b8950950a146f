//! OpenAI Chat Completions: `choices[0].message.tool_calls[]` in, one `role: tool` message per
//! call out.
//!
//! A call is `{"id", "type": "function", "function": {"name", "arguments"}}` with the arguments
//! as a JSON text the model wrote, which may not parse; its result is
//! `{"role": "tool", "tool_call_id": id, "content": text}` (OpenAI's function-calling guide).
//! The API has no error flag and no structured content for tool messages: the projection's
//! header line (`tool: error [ERROR_TYPE]`) carries the status. The reply may be the whole
//! completion or its `message` alone; of several choices the first is read.

use serde_json::{Value, json};

use super::{ReplyError, WireArguments, WireCall, array_at, shape, string_at, text_of};
use crate::ir::Provider;
use crate::runtime::ToolResult;

const P: Provider = Provider::OpenaiChat;
const EXPECTED: &str =
    "a Chat Completions reply is `{\"choices\": [{\"message\": {\"tool_calls\": [...]}}]}`";

/// The calls of a completion (or of its message).
pub(crate) fn parse(reply: &Value) -> Result<Vec<WireCall>, ReplyError> {
    let (message, at) = match reply.get("choices") {
        Some(Value::Array(choices)) => match choices.first() {
            Some(c) => (
                c.get("message")
                    .ok_or_else(|| shape(P, "choices[0].message", "object", EXPECTED))?,
                "choices[0].message",
            ),
            None => return Ok(Vec::new()),
        },
        Some(_) => return Err(shape(P, "choices", "array", EXPECTED)),
        None if reply.get("tool_calls").is_some() || reply.get("role").is_some() => {
            (reply, "message")
        }
        None => return Err(shape(P, "choices", "array", EXPECTED)),
    };
    let mut out = Vec::new();
    for (i, call) in array_at(P, message, "tool_calls", at, EXPECTED)?
        .iter()
        .enumerate()
    {
        let here = format!("{at}.tool_calls[{i}]");
        let id = string_at(P, call, "id", &here, EXPECTED)?;
        let function = call
            .get("function")
            .ok_or_else(|| shape(P, format!("{here}.function"), "object", EXPECTED))?;
        let fat = format!("{here}.function");
        let called = string_at(P, function, "name", &fat, EXPECTED)?;
        let arguments = WireArguments::from_openai(function.get("arguments"));
        out.push(WireCall::given(id, called, arguments));
    }
    Ok(out)
}

/// One `role: tool` message per result.
pub(crate) fn render(pairs: &[(&WireCall, &ToolResult)]) -> Vec<Value> {
    pairs
        .iter()
        .map(|(w, r)| {
            json!({
                "role": "tool",
                "tool_call_id": w.id,
                "content": text_of(r),
            })
        })
        .collect()
}
