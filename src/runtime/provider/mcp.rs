//! MCP: `tools/call` requests in, JSON-RPC responses holding a `CallToolResult` out.
//!
//! A call is `{"jsonrpc": "2.0", "id", "method": "tools/call", "params": {"name", "arguments"}}`
//! (one request, or a list of them run as one turn); its response is
//! `{"jsonrpc": "2.0", "id", "result": {"content": [{"type": "text", "text"}],
//! "structuredContent"?, "isError", "_meta"}}` (the MCP specification, `tools/call`). The
//! structured result is sent as `structuredContent`, under `result` when it is not an object
//! (the field must be one); `_meta` names the status, the error type and the artifacts, as
//! `toolgate serve` does. The call id is the request id's text.

use serde_json::{Map, Value, json};

use super::{ReplyError, WireArguments, WireCall, shape, string_at, structured_of, text_of};
use crate::ir::Provider;
use crate::runtime::ToolResult;

const P: Provider = Provider::Mcp;
const EXPECTED: &str = "an MCP call is `{\"jsonrpc\": \"2.0\", \"id\", \"method\": \"tools/call\", \"params\": {\"name\", \"arguments\"}}`, or a list of them";
/// The `_meta` key of a result's error type (as `toolgate serve` writes it; the MCP executor's
/// constant is in the `mcp` feature, which a runtime-only build lacks).
const ERROR_TYPE_META_KEY: &str = "io.toolgate/error_type";
/// The `_meta` key of a result's status (as `toolgate serve` writes it).
const STATUS_META_KEY: &str = "io.toolgate/status";
/// The `_meta` key of the artifacts a result's output is kept in.
const ARTIFACTS_META_KEY: &str = "io.toolgate/artifacts";

/// The `tools/call` requests of a message (one request or a batch).
pub(crate) fn parse(reply: &Value) -> Result<Vec<WireCall>, ReplyError> {
    let requests: Vec<(&Value, String)> = match reply {
        Value::Array(a) => a
            .iter()
            .enumerate()
            .map(|(i, r)| (r, format!("[{i}]")))
            .collect(),
        _ => vec![(reply, "request".to_owned())],
    };
    let mut out = Vec::new();
    for (r, at) in requests {
        let method = string_at(P, r, "method", &at, EXPECTED)?;
        if method != "tools/call" {
            return Err(shape(P, format!("{at}.method"), "`tools/call`", EXPECTED));
        }
        let rpc_id = match r.get("id") {
            Some(v @ (Value::String(_) | Value::Number(_))) => v.clone(),
            _ => return Err(shape(P, format!("{at}.id"), "string or number", EXPECTED)),
        };
        let id = match &rpc_id {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let params = r
            .get("params")
            .ok_or_else(|| shape(P, format!("{at}.params"), "object", EXPECTED))?;
        let called = string_at(P, params, "name", &format!("{at}.params"), EXPECTED)?;
        let arguments = WireArguments::Json(params.get("arguments").cloned().unwrap_or(json!({})));
        out.push(WireCall {
            id,
            called,
            arguments,
            rpc_id: Some(rpc_id),
            id_given: true,
        });
    }
    Ok(out)
}

/// One JSON-RPC response per result.
pub(crate) fn render(pairs: &[(&WireCall, &ToolResult)]) -> Vec<Value> {
    pairs
        .iter()
        .map(|(w, r)| {
            let mut result = Map::new();
            result.insert(
                "content".into(),
                json!([{"type": "text", "text": text_of(r)}]),
            );
            match structured_of(r) {
                Some(v @ Value::Object(_)) => {
                    result.insert("structuredContent".into(), v);
                }
                Some(v) => {
                    result.insert("structuredContent".into(), json!({"result": v}));
                }
                None => {}
            }
            result.insert("isError".into(), Value::Bool(!r.is_success()));
            let mut meta = Map::new();
            meta.insert(STATUS_META_KEY.into(), json!(r.status().as_str()));
            if let Some(t) = r.error_type() {
                meta.insert(ERROR_TYPE_META_KEY.into(), json!(t.as_str()));
            }
            if !r.artifacts().is_empty() {
                meta.insert(ARTIFACTS_META_KEY.into(), json!(r.artifacts()));
            }
            result.insert("_meta".into(), Value::Object(meta));
            json!({
                "jsonrpc": "2.0",
                "id": w.rpc_id.clone().unwrap_or_else(|| Value::String(w.id.clone())),
                "result": result,
            })
        })
        .collect()
}

#[cfg(all(test, feature = "mcp"))]
mod tests {
    /// The key is the one `toolgate serve` and the MCP executor use.
    #[test]
    fn error_type_key_matches_the_executors() {
        assert_eq!(
            super::ERROR_TYPE_META_KEY,
            crate::runtime::exec::mcp::ERROR_TYPE_META_KEY
        );
    }
}
