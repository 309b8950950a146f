//! The projection (chapter §29): what the model reads of a result, kept apart from the full
//! [`ToolResult`] that the harness stores and audits.
//!
//! The text is: a header line `tool: status [ERROR_TYPE]`, the summary, the bounded output, a
//! truncation note, where the full output is (artifact ids) and how to read it in this session
//! ([`ArtifactAccess`]: a tool that reads artifacts, MCP resources, or neither — a way that does
//! not work in the session is never named), the alternatives of an unknown tool and the hint.
//! Hooks' [`Redactions`] apply to all of it.

use serde::Serialize;
use serde_json::Value;

use crate::ir::Status;
use crate::runtime::Session;
use crate::runtime::artifacts::{artifact_uri, size_exact};
use crate::runtime::exec::builtin::Builtin;
use crate::runtime::hooks::Redactions;
use crate::runtime::registry::Registry;
use crate::runtime::result::ToolResult;

/// How the model's side can read an artifact in a session.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArtifactAccess {
    /// A tool of the session that reads artifacts (`exec: {builtin: read_artifact}`).
    pub tool: Option<String>,
    /// Whether the session is served over MCP, whose client can read the artifacts of its own
    /// connection as resources (`resources/read` of a `toolgate-artifact:` URI).
    pub resources: bool,
}

impl ArtifactAccess {
    /// The ways a session can read artifacts: the first tool it sees that reads them, and MCP
    /// resources when its client has them.
    pub fn of(session: &Session, registry: &Registry) -> ArtifactAccess {
        let tool = registry
            .names()
            .iter()
            .find(|n| {
                registry
                    .get(n)
                    .is_some_and(|t| t.builtin == Some(Builtin::ReadArtifact))
                    && session.sees(registry, n)
            })
            .cloned();
        ArtifactAccess {
            tool,
            resources: session.artifact_resources(),
        }
    }
}

/// What the model reads.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Projection {
    /// The text observation.
    pub text: String,
    /// The structured result, for clients that pass structured content on (MCP).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured: Option<Value>,
}

/// Projects a result for the model, naming the ways to read its artifacts that `access` says
/// work in the session.
pub fn project(r: &ToolResult, redactions: &Redactions, access: &ArtifactAccess) -> Projection {
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
    push_artifacts(&mut text, r, access);
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

/// The artifacts of a result and how to read them here.
fn push_artifacts(text: &mut String, r: &ToolResult, access: &ArtifactAccess) {
    let Some(first) = r.artifacts().first() else {
        return;
    };
    for a in r.artifacts() {
        let lines = if a.lines == 1 { "line" } else { "lines" };
        if a.is_whole() {
            text.push_str(&format!(
                "Full {}: artifact {} ({} bytes, {} {lines}).\n",
                a.part(),
                a.id,
                a.size,
                a.lines
            ));
        } else {
            text.push_str(&format!(
                "Start of the {}: artifact {} (the first {} bytes, {} {lines}); the other {} were not kept (an artifact budget was reached).\n",
                a.part(),
                a.id,
                a.size,
                a.lines,
                size_exact(a.dropped)
            ));
        }
    }
    let it = if r.artifacts().len() == 1 {
        "it"
    } else {
        "them"
    };
    if let Some(tool) = &access.tool {
        text.push_str(&format!(
            "Read {it} in parts with {tool}, e.g. {{\"artifact_id\": \"{}\", \"start_line\": 1}} (start_line/end_line, or offset/length for bytes).\n",
            first.id
        ));
    }
    if access.resources {
        let (resource, uri) = if r.artifacts().len() == 1 {
            ("the resource", artifact_uri(&first.id))
        } else {
            ("the resources", artifact_uri("ID"))
        };
        text.push_str(&format!(
            "The MCP client can {}read {it} as {resource} {uri} (linked in this result; resources/read, with ?start_line=N&end_line=M or ?offset=N&length=M for a part).\n",
            if access.tool.is_some() { "also " } else { "" },
        ));
    }
    if access.tool.is_none() && !access.resources {
        text.push_str(
            "No tool of this session reads artifacts; the full output stays in the project's artifact store.\n",
        );
    }
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
