//! OpenAI Responses: `output[]` items of type `function_call` in, `function_call_output` items
//! out.
//!
//! A call is `{"type": "function_call", "id", "call_id", "name", "arguments"}`, the arguments a
//! JSON text; its result is `{"type": "function_call_output", "call_id", "output": text}`
//! (OpenAI's function-calling guide). The item's own `id` (`fc_…`) is not the call id: results
//! answer `call_id`. Other output items (messages, reasoning) are not calls and are skipped.
//! There is no error flag: the projection's header line carries the status.

use serde_json::{Value, json};

use super::{ReplyError, WireArguments, WireCall, array_at, shape, string_at, text_of};
use crate::ir::Provider;
use crate::runtime::ToolResult;

const P: Provider = Provider::OpenaiResponses;
const EXPECTED: &str = "a Responses reply is `{\"output\": [{\"type\": \"function_call\", \"call_id\", \"name\", \"arguments\"}, ...]}`";

/// The `function_call` items of a response (or of its `output` array given alone).
pub(crate) fn parse(reply: &Value) -> Result<Vec<WireCall>, ReplyError> {
    let items: &[Value] = match reply {
        Value::Array(a) => a,
        Value::Object(_) if reply.get("output").is_some() => {
            array_at(P, reply, "output", "response", EXPECTED)?
        }
        _ => return Err(shape(P, "output", "array", EXPECTED)),
    };
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if item.get("type").and_then(Value::as_str) != Some("function_call") {
            continue;
        }
        let here = format!("output[{i}]");
        let id = string_at(P, item, "call_id", &here, EXPECTED)?;
        let called = string_at(P, item, "name", &here, EXPECTED)?;
        let arguments = WireArguments::from_openai(item.get("arguments"));
        out.push(WireCall::given(id, called, arguments));
    }
    Ok(out)
}

/// One `function_call_output` item per result.
pub(crate) fn render(pairs: &[(&WireCall, &ToolResult)]) -> Vec<Value> {
    pairs
        .iter()
        .map(|(w, r)| {
            json!({
                "type": "function_call_output",
                "call_id": w.id,
                "output": text_of(r),
            })
        })
        .collect()
}
