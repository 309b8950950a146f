//! [`ToolResult`]: the normalized result of one call (chapter §27–29), and normalization — the
//! only code that builds one.
//!
//! Every call ends in exactly one `ToolResult`, success or not: unknown tools, rejected
//! arguments, refused permissions, failures, timeouts and cancellations are results the model
//! reads, not errors. Its fields are private and it has no public constructor, so neither a
//! hook nor an executor can forge one; executors report a [`RawOutcome`] and the functions here
//! turn it into a result: status and error type, output bounded by the output policy (whenever
//! that, or the formatter, cuts it, the full output is kept as an artifact within the budgets;
//! above `artifact_threshold` it is kept even when shown whole), redaction, the structured
//! result checked against the tool's `result` schema, and the hint — the spec's `errors` entry
//! for the error type, else a default. The text the model reads is the separate
//! [`Projection`].

use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::ir::{ErrorType, Status, ToolDefinition};
use crate::runtime::artifacts::{
    Allowance, ArtifactOrigin, ArtifactOwner, ArtifactRedaction, ArtifactRef, ArtifactStore,
};
use crate::runtime::exec::builtin::Builtin;
use crate::runtime::exec::sandbox::Protection;
use crate::runtime::exec::{OutputSource, RawOutcome};
use crate::runtime::journal::JournaledResult;
use crate::runtime::output::{Redactor, bound};
use crate::runtime::projection::Projection;
use crate::runtime::registry::{CompiledTool, UnknownTool};

pub use crate::runtime::output::REDACTED;

/// The normalized result of one tool call.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ToolResult {
    call_id: String,
    tool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_version: Option<u32>,
    status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    error_type: Option<ErrorType>,
    summary: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    output: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    structured: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    exit_code: Option<i32>,
    duration_ms: u64,
    /// The part of `duration_ms` the call waited for conflicting calls (see the scheduler).
    #[serde(skip_serializing_if = "is_zero")]
    queued_ms: u64,
    truncated: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    artifacts: Vec<ArtifactRef>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    protections: Vec<Protection>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    alternatives: Vec<String>,
    attempts: u32,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    replayed: bool,
    #[serde(skip)]
    projection: Projection,
}

impl ToolResult {
    /// The model's call id.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }
    /// The tool name (as the model wrote it, for unknown tools).
    pub fn tool(&self) -> &str {
        &self.tool
    }
    /// The contract version that ran.
    pub fn tool_version(&self) -> Option<u32> {
        self.tool_version
    }
    /// How the call ended.
    pub fn status(&self) -> Status {
        self.status
    }
    /// Why it did not succeed.
    pub fn error_type(&self) -> Option<ErrorType> {
        self.error_type
    }
    /// One line (or a short paragraph) on what happened.
    pub fn summary(&self) -> &str {
        &self.summary
    }
    /// The output text, bounded by the output policy.
    pub fn output(&self) -> Option<&str> {
        self.output.as_deref()
    }
    /// The structured result.
    pub fn structured(&self) -> Option<&Value> {
        self.structured.as_ref()
    }
    /// A process's exit code.
    pub fn exit_code(&self) -> Option<i32> {
        self.exit_code
    }
    /// Wall time from the start of the call's pipeline to its result.
    pub fn duration(&self) -> Duration {
        Duration::from_millis(self.duration_ms)
    }
    /// The part of [`ToolResult::duration`] the call waited for conflicting calls to finish.
    pub fn queued(&self) -> Duration {
        Duration::from_millis(self.queued_ms)
    }
    /// Whether output was left out (by the tool or the output policy).
    pub fn truncated(&self) -> bool {
        self.truncated
    }
    /// Artifacts holding full output.
    pub fn artifacts(&self) -> &[ArtifactRef] {
        &self.artifacts
    }
    /// The sandbox protections that were in force around a command tool.
    pub fn protections(&self) -> &[Protection] {
        &self.protections
    }
    /// What the model should do next.
    pub fn hint(&self) -> Option<&str> {
        self.hint.as_deref()
    }
    /// For UNKNOWN_TOOL: the tools to use instead.
    pub fn alternatives(&self) -> &[String] {
        &self.alternatives
    }
    /// Attempts made (0 when the call never ran).
    pub fn attempts(&self) -> u32 {
        self.attempts
    }
    /// Whether this is the journaled result of an earlier call with the same idempotency key.
    pub fn replayed(&self) -> bool {
        self.replayed
    }
    /// Whether the call succeeded.
    pub fn is_success(&self) -> bool {
        self.status == Status::Success
    }
    /// What the model reads.
    pub fn projection(&self) -> &Projection {
        &self.projection
    }

    /// Cuts the summary to an output budget, keeping its head and tail: a refusal or an error
    /// message reaches the model, the journal and the CLI within the same budget as a result.
    pub(crate) fn bound_summary(&mut self, max_bytes: u64, max_lines: u64) {
        let bytes = u64::try_from(self.summary.len()).unwrap_or(u64::MAX);
        // Counting lines only when the bytes could hold more than the line budget.
        if bytes <= max_bytes
            && (bytes <= max_lines || self.summary.lines().count() as u64 <= max_lines)
        {
            return;
        }
        self.summary = crate::runtime::output::bound(
            &self.summary,
            max_bytes,
            max_lines,
            crate::ir::OutputKeep::HeadTail,
        )
        .text;
    }

    pub(crate) fn set_projection(&mut self, p: Projection) {
        self.projection = p;
    }

    pub(crate) fn set_duration(&mut self, d: Duration) {
        self.duration_ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    }

    pub(crate) fn set_queued(&mut self, d: Duration) {
        self.queued_ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The status an error type ends a call with.
pub fn status_for(error: ErrorType) -> Status {
    match error {
        ErrorType::PolicyDenied | ErrorType::UserDenied | ErrorType::ApprovalUnavailable => {
            Status::Denied
        }
        ErrorType::Timeout => Status::Timeout,
        ErrorType::Cancelled => Status::Cancelled,
        ErrorType::SandboxViolation => Status::SandboxViolation,
        ErrorType::UnknownOutcome => Status::UnknownOutcome,
        ErrorType::UnknownTool
        | ErrorType::InvalidArguments
        | ErrorType::SemanticValidationError
        | ErrorType::ProcessError
        | ErrorType::NetworkError
        | ErrorType::RateLimited
        | ErrorType::ResourceNotFound
        | ErrorType::PreconditionFailed
        | ErrorType::OutputLimit
        | ErrorType::CostLimit
        | ErrorType::SchedulingConflict
        | ErrorType::RuntimeException
        | ErrorType::UpstreamError => Status::Error,
    }
}

/// The hint for an error type when the spec gives none.
pub fn default_hint(error: ErrorType) -> &'static str {
    match error {
        ErrorType::UnknownTool => {
            "Call one of the available tools instead; do not retry this name."
        }
        ErrorType::InvalidArguments => {
            "Fix the arguments to match the tool's parameters and call it again."
        }
        ErrorType::SemanticValidationError => {
            "Change the arguments as the message says; the same call would be refused again."
        }
        ErrorType::PolicyDenied => {
            "The operation was blocked by policy. Do not repeat the same call unchanged; choose a read-only or less destructive alternative."
        }
        ErrorType::UserDenied => {
            "The user refused this action. Do not retry it; ask the user what they want instead."
        }
        ErrorType::ApprovalUnavailable => {
            "Nobody can approve this action here, so it did not run. Do not retry it; choose an action that needs no approval, or report what you would do."
        }
        ErrorType::Timeout => {
            "The call ran out of time and was stopped. Retry with a smaller task rather than the same call."
        }
        ErrorType::Cancelled => "The call was stopped on request. Do not retry it unless asked to.",
        ErrorType::SandboxViolation => {
            "The sandbox blocked an access outside the allowed area, or stopped the process at a resource limit. Stay inside the workspace and within the limits (do less per call); this is not retried."
        }
        ErrorType::ProcessError => {
            "The process failed; read its output for the cause before retrying."
        }
        ErrorType::NetworkError => {
            "A network request failed; retrying the same call at once rarely helps."
        }
        ErrorType::RateLimited => "The service asked to slow down; wait before calling it again.",
        ErrorType::ResourceNotFound => {
            "It does not exist. Check the name or path; list or search to find the right one."
        }
        ErrorType::PreconditionFailed => {
            "The state changed since you read it. Read it again and rebuild the call from the new state."
        }
        ErrorType::OutputLimit => {
            "It was too large to work on whole. Narrow the request (a smaller range, path or pattern), or use a tool that reads it in parts."
        }
        ErrorType::CostLimit => {
            "The arguments are too large for the tool's rules to check. Call it with fewer or smaller items (split the work into several calls); the same call would be refused again."
        }
        ErrorType::SchedulingConflict => {
            "The call conflicted with another; call it again after that one finished."
        }
        ErrorType::RuntimeException => {
            "The tool failed internally. Try a different approach; repeating the call is unlikely to help."
        }
        ErrorType::UnknownOutcome => {
            "It is unknown whether the action took effect. Check the current state before doing it again."
        }
        ErrorType::UpstreamError => {
            "The upstream MCP server failed the call; read its message for the cause. If the tool changes things, check the current state before doing it again."
        }
    }
}

/// The hint of a failure: a stage-specific hint (a validation rule's), else the spec's entry
/// for the error type, else the default.
fn hint(error: ErrorType, def: Option<&ToolDefinition>, specific: Option<String>) -> String {
    specific
        .or_else(|| def.and_then(|d| d.errors.get(&error).cloned()))
        .unwrap_or_else(|| default_hint(error).to_owned())
}

/// Who a result is about.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Subject<'a> {
    pub(crate) call_id: &'a str,
    pub(crate) tool: &'a str,
    pub(crate) definition: Option<&'a ToolDefinition>,
}

fn base(
    s: Subject<'_>,
    status: Status,
    error_type: Option<ErrorType>,
    summary: String,
) -> ToolResult {
    ToolResult {
        call_id: s.call_id.to_owned(),
        tool: s.tool.to_owned(),
        tool_version: s.definition.map(|d| d.version),
        status,
        error_type,
        summary,
        output: None,
        structured: None,
        exit_code: None,
        duration_ms: 0,
        queued_ms: 0,
        truncated: false,
        artifacts: Vec::new(),
        protections: Vec::new(),
        hint: None,
        alternatives: Vec::new(),
        attempts: 0,
        replayed: false,
        projection: Projection::default(),
    }
}

/// A call that never ran: refused by a stage, or cancelled before it started.
pub(crate) fn refused(
    s: Subject<'_>,
    error: ErrorType,
    message: String,
    specific_hint: Option<String>,
) -> ToolResult {
    let mut r = base(s, status_for(error), Some(error), message);
    r.hint = Some(hint(error, s.definition, specific_hint));
    r
}

/// UNKNOWN_TOOL with its alternatives.
pub(crate) fn unknown_tool(call_id: &str, u: UnknownTool) -> ToolResult {
    let s = Subject {
        call_id,
        tool: &u.name,
        definition: None,
    };
    let message = match &u.hidden_by_toolset {
        Some(set) => format!("Tool '{}' is not available in the toolset '{set}'.", u.name),
        None => format!("Unknown tool '{}'.", u.name),
    };
    let mut r = refused(s, ErrorType::UnknownTool, message, None);
    r.alternatives = u.alternatives;
    r
}

/// The journaled result of an earlier call with the same idempotency key, under the contract
/// version that produced it.
pub(crate) fn replayed(s: Subject<'_>, earlier: JournaledResult, ran_version: u32) -> ToolResult {
    let mut r = base(s, earlier.status, earlier.error_type, earlier.summary);
    if let Some(now) = r.tool_version.filter(|v| *v != ran_version) {
        r.summary.push_str(&format!(
            " (recorded under {} version {ran_version}; the contract is now version {now})",
            s.tool
        ));
    }
    r.tool_version = Some(ran_version);
    r.output = earlier.output;
    r.structured = earlier.structured;
    r.exit_code = earlier.exit_code;
    r.truncated = earlier.truncated;
    r.artifacts = earlier.artifacts;
    r.hint = earlier.hint;
    r.replayed = true;
    r
}

/// How an attempt was stopped from outside.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    Timeout(Duration),
    Cancelled,
}

/// Everything normalization needs about an executed call.
pub(crate) struct Executed<'a> {
    pub(crate) subject: Subject<'a>,
    pub(crate) tool: &'a CompiledTool,
    pub(crate) raw: RawOutcome,
    pub(crate) stop: Option<Stop>,
    pub(crate) attempts: u32,
    pub(crate) artifacts: &'a ArtifactStore,
    /// The session (and its principal), whose artifact budget the call draws on and who may
    /// read what it stores.
    pub(crate) owner: ArtifactOwner,
}

/// Keeps output a call's view left out, within the call's allowance.
struct Keeper<'a> {
    store: &'a ArtifactStore,
    allowance: Allowance,
    tool: &'a str,
    call_id: &'a str,
}

impl Keeper<'_> {
    /// Stores one output as an artifact of the result; what a budget or the disk refused is
    /// said in the summary, so the projection never promises what was not kept.
    fn keep(&self, r: &mut ToolResult, bytes: &[u8], media_type: &str, redact: ArtifactRedaction) {
        let origin = ArtifactOrigin {
            tool: self.tool,
            call_id: self.call_id,
            media_type,
        };
        let what = match media_type {
            m if m.contains("stream=stdout") => "stdout",
            m if m.contains("stream=stderr") => "stderr",
            _ => "output",
        };
        match self
            .store
            .put_within(bytes, origin, &self.allowance, redact)
        {
            Ok((a, cut)) => {
                r.artifacts.extend(a);
                if let Some(cut) = cut {
                    r.summary
                        .push_str(&format!(" (the full {what} could not be kept: {cut})"));
                }
            }
            Err(err) => r
                .summary
                .push_str(&format!(" (the full {what} could not be kept: {err})")),
        }
    }
}

/// Normalizes the outcome of the last attempt.
pub(crate) fn executed(e: Executed<'_>) -> ToolResult {
    let def = &e.tool.definition;
    let policy = &def.output;
    // Secret environment values are redacted by the command backend, which knows them.
    let redactor = Redactor {
        secrets: policy.redact_secrets,
        patterns: &e.tool.redact,
        literals: &[],
    };
    let mut raw = e.raw;
    let mut failure = raw.failure.take();
    // What the sandbox contained while the call ran out of time (a fork bomb, say) stays in
    // the message.
    let contained = match &failure {
        Some((ErrorType::SandboxViolation, m)) => Some(m.clone()),
        _ => None,
    };
    if let Some(stop) = e.stop {
        let (t, m) = match stop {
            Stop::Timeout(d) => (
                ErrorType::Timeout,
                format!(
                    "{} ran longer than its {} budget and was stopped",
                    def.name,
                    humantime::format_duration(d)
                ),
            ),
            Stop::Cancelled => (
                ErrorType::Cancelled,
                format!("{} was cancelled while running", def.name),
            ),
        };
        let m = match &contained {
            Some(c) => format!("{m}; {c}"),
            None => m,
        };
        failure = Some((t, m));
    }
    // A successful structured result must keep the contract's shape.
    if failure.is_none()
        && let (Some(schema), Some(value)) = (&e.tool.result, &raw.structured)
        && !schema.is_valid(value)
    {
        let problems: Vec<String> = schema
            .iter_errors(value)
            .take(5)
            .map(|err| format!("{} {err}", err.instance_path()))
            .collect();
        failure = Some((
            ErrorType::RuntimeException,
            format!(
                "{} returned a result that breaks its contract: {}",
                def.name,
                problems.join("; ")
            ),
        ));
        raw.structured = None;
    }
    // The summary is model-facing like the output, whatever the outcome: a formatter's
    // summary quotes the command line and the output's first lines.
    let (status, error_type, summary) = match &failure {
        None => (
            Status::Success,
            None,
            raw.summary.take().unwrap_or_else(|| match raw.exit_code {
                Some(code) => format!("{} exited with code {code}", def.name),
                None => format!("{} succeeded", def.name),
            }),
        ),
        Some((t, m)) => (status_for(*t), Some(*t), m.clone()),
    };
    let summary = redactor.text(&summary);
    let mut r = base(e.subject, status, error_type, summary);
    r.exit_code = raw.exit_code;
    r.attempts = e.attempts;
    r.truncated = raw.truncated;
    r.artifacts = raw.artifacts;
    r.protections = raw.protections;
    if let Some(mut structured) = raw.structured {
        redactor.json(&mut structured);
        r.structured = Some(structured);
    }
    // Whether the model's view leaves out part of the output: the formatter's cut, or the
    // output limits below.
    let mut cut = matches!(raw.source, OutputSource::Streams { left_out: true, .. });
    let mut whole_text = None;
    if let Some(text) = raw.text.filter(|t| !t.is_empty()) {
        let text = redactor.text(&text);
        let b = bound(&text, policy.max_bytes, policy.max_lines, policy.keep);
        cut |= b.truncated;
        r.truncated |= b.truncated;
        r.output = Some(b.text);
        whole_text = Some(text);
    }
    // Nothing cut is lost: whatever the view leaves out is kept as an artifact, within the
    // budgets. read_artifact reads from the store: a part of an artifact is never stored again.
    if e.tool.builtin != Some(Builtin::ReadArtifact) {
        let keep = Keeper {
            store: e.artifacts,
            allowance: e.artifacts.allowance_of(e.owner.clone()),
            tool: &def.name,
            call_id: e.subject.call_id,
        };
        match raw.source {
            OutputSource::Text => {
                // Whole output above the threshold is kept even when it was shown in full.
                if let Some(text) =
                    whole_text.filter(|t| cut || t.len() as u64 > policy.artifact_threshold)
                {
                    // Already redacted: what the model could see of it is what it may read.
                    keep.keep(
                        &mut r,
                        text.as_bytes(),
                        "text/plain",
                        ArtifactRedaction::default(),
                    );
                }
            }
            OutputSource::Streams { held, .. } => {
                if cut {
                    for h in held {
                        keep.keep(&mut r, &h.bytes, h.media_type, h.redact);
                    }
                    // stdout before stderr, whichever was kept first.
                    r.artifacts.sort_by_key(|a| a.part() == "stderr");
                }
            }
        }
    }
    if let Some(t) = error_type {
        r.hint = Some(hint(t, Some(def), None));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_type_has_a_status_and_a_hint() {
        for e in ErrorType::ALL {
            assert_ne!(status_for(*e), Status::Success);
            assert!(default_hint(*e).ends_with('.'));
        }
    }
}
