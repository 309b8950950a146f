//! The projection (chapter §29): what the model reads of a result, kept apart from the full
//! [`ToolResult`] that the harness stores and audits.
//!
//! The text is: a header line `tool: status [ERROR_TYPE]`, the summary, the bounded output, a
//! truncation note, where the full output is (artifact ids and how to read them), the
//! alternatives of an unknown tool and the hint. Hooks' [`Redactions`] apply to all of it.

use serde::Serialize;
use serde_json::Value;

use crate::ir::Status;
use crate::runtime::hooks::Redactions;
use crate::runtime::result::ToolResult;

/// What the model reads.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Projection {
    /// The text observation.
    pub text: String,
    /// The structured result, for clients that pass structured content on (MCP).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured: Option<Value>,
}

/// Projects a result for the model.
pub fn project(r: &ToolResult, redactions: &Redactions) -> Projection {
    let mut text = String::new();
    match r.error_type() {
        Some(t) => text.push_str(&format!("{}: {} {t}\n", r.tool(), r.status())),
        None => text.push_str(&format!("{}: {}\n", r.tool(), r.status())),
    }
    if r.replayed() {
        text.push_str("(the journaled result of an earlier call with the same idempotency key; the tool did not run again)\n");
    }
    push_block(&mut text, r.summary());
    if let Some(code) = r.exit_code().filter(|_| r.status() != Status::Success) {
        text.push_str(&format!("exit code: {code}\n"));
    }
    if let Some(out) = r.output() {
        push_block(&mut text, out);
    }
    if r.truncated() && r.artifacts().is_empty() {
        text.push_str("[output truncated]\n");
    }
    for a in r.artifacts() {
        text.push_str(&format!(
            "Full output: artifact {} ({} bytes, {} lines); read parts of it with read_artifact.\n",
            a.id, a.size, a.lines
        ));
    }
    if !r.alternatives().is_empty() {
        text.push_str(&format!(
            "Available alternatives: {}.\n",
            r.alternatives().join(", ")
        ));
    }
    if let Some(h) = r.hint() {
        text.push_str(&format!("Hint: {h}\n"));
    }
    let mut structured = r.structured().cloned();
    if !redactions.is_empty() {
        text = redactions.apply(&text);
        if let Some(v) = &mut structured {
            redact_json(v, redactions);
        }
    }
    Projection { text, structured }
}

fn push_block(text: &mut String, block: &str) {
    if block.is_empty() {
        return;
    }
    text.push_str(block);
    if !block.ends_with('\n') {
        text.push('\n');
    }
}

fn redact_json(v: &mut Value, r: &Redactions) {
    match v {
        Value::String(s) => *s = r.apply(s),
        Value::Array(items) => items.iter_mut().for_each(|i| redact_json(i, r)),
        Value::Object(m) => m.values_mut().for_each(|i| redact_json(i, r)),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}
