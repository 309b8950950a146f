//! Google Gemini: `candidates[0].content.parts[].functionCall` in, one user content of
//! `functionResponse` parts out.
//!
//! A call is `{"functionCall": {"name", "args", "id"?}}` with the arguments a JSON object; its
//! result is `{"functionResponse": {"id"?, "name", "response"}}` in one `role: user` content
//! (Gemini's function-calling guide). The response object holds the projection's text under
//! `output`, or under `error` for a result that is not a success — the keys the API documents
//! for the two — and the structured result, when there is one, under `result`.
//!
//! Gemini may leave out the call id. The adapter then makes one that is the same each time the
//! same reply is read — `gemini-` + the reply's `responseId` (else a hash of the reply) + the
//! call's position — so a reply run again in a session is recognised, and two replies are not
//! confused; such an id is not echoed back, since the model never sent it.

use serde_json::{Map, Value, json};

use super::{ReplyError, WireArguments, WireCall, shape, string_at, structured_of, text_of};
use crate::ir::Provider;
use crate::runtime::ToolResult;

const P: Provider = Provider::Gemini;
const EXPECTED: &str = "a Gemini reply is `{\"candidates\": [{\"content\": {\"parts\": [{\"functionCall\": {\"name\", \"args\"}}, ...]}}]}`";

/// The `functionCall` parts of the first candidate (or of a content given alone).
pub(crate) fn parse(reply: &Value) -> Result<Vec<WireCall>, ReplyError> {
    let (content, at) = match reply.get("candidates") {
        Some(Value::Array(c)) => match c.first() {
            Some(first) => match first.get("content") {
                Some(content) => (content, "candidates[0].content"),
                // A candidate stopped before any content (safety, length): no calls.
                None => return Ok(Vec::new()),
            },
            None => return Ok(Vec::new()),
        },
        Some(_) => return Err(shape(P, "candidates", "array", EXPECTED)),
        None if reply.get("parts").is_some() => (reply, "content"),
        None => return Err(shape(P, "candidates", "array", EXPECTED)),
    };
    let parts = match content.get("parts") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(p)) => p,
        Some(_) => return Err(shape(P, format!("{at}.parts"), "array", EXPECTED)),
    };
    let reply_key = match reply.get("responseId").and_then(Value::as_str) {
        Some(id) => id.to_owned(),
        None => {
            let text = serde_json::to_string(reply).unwrap_or_default();
            blake3::hash(text.as_bytes()).to_hex()[..12].to_owned()
        }
    };
    let mut out = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let Some(fc) = part.get("functionCall") else {
            continue;
        };
        let here = format!("{at}.parts[{i}].functionCall");
        let called = string_at(P, fc, "name", &here, EXPECTED)?;
        let given = fc
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty());
        let id = match given {
            Some(id) => id.to_owned(),
            None => format!("gemini-{reply_key}-{}", out.len() + 1),
        };
        let arguments = WireArguments::Json(fc.get("args").cloned().unwrap_or(json!({})));
        out.push(WireCall {
            id,
            called,
            arguments,
            rpc_id: None,
            id_given: given.is_some(),
        });
    }
    Ok(out)
}

/// One `role: user` content holding a `functionResponse` part per result.
pub(crate) fn render(pairs: &[(&WireCall, &ToolResult)]) -> Vec<Value> {
    let parts: Vec<Value> = pairs
        .iter()
        .map(|(w, r)| {
            let mut response = Map::new();
            let key = if r.is_success() { "output" } else { "error" };
            response.insert(key.into(), Value::String(text_of(r)));
            if let Some(s) = structured_of(r) {
                response.insert("result".into(), s);
            }
            let mut fr = Map::new();
            if w.id_given {
                fr.insert("id".into(), Value::String(w.id.clone()));
            }
            // The name the model called: a stand-in stays a stand-in.
            fr.insert("name".into(), Value::String(w.called.clone()));
            fr.insert("response".into(), Value::Object(response));
            json!({"functionResponse": fr})
        })
        .collect();
    vec![json!({"role": "user", "parts": parts})]
}
