//! Experiment 2: schema validation and semantic validation refuse a call before it runs.

use std::io::Write;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolgate::ir::ErrorType;
use toolgate::runtime::{Session, ToolCall, ToolResult, ToolRuntime};

use crate::lab::{self, BoxError, Lab, Scratch, ensure};

/// One refused call.
#[derive(Debug)]
pub struct Refusal {
    /// Its error type.
    pub error_type: Option<ErrorType>,
    /// Its summary (the schema errors name the argument's path).
    pub summary: String,
    /// Attempts at running it.
    pub attempts: u32,
    /// The backend its trace record names (none: it never reached one).
    pub backend: Option<&'static str>,
    /// Whether its trace record has a permission decision (none: it never got that far).
    pub permission_decided: bool,
}

/// What happened.
#[derive(Debug)]
pub struct Report {
    /// read_file with start_line 100, end_line 10.
    pub semantic: Refusal,
    /// read_file with start_line 0 and end_line "ten".
    pub schema: Refusal,
    /// How the corrected call ended: the lines it returned.
    pub corrected: Option<(i64, i64)>,
}

impl Report {
    /// Whether the experiment showed what it should.
    pub fn check(&self) -> Result<(), String> {
        for (r, want) in [
            (&self.semantic, ErrorType::SemanticValidationError),
            (&self.schema, ErrorType::InvalidArguments),
        ] {
            ensure(r.error_type == Some(want), || {
                format!("ended {:?}, not {want}", r.error_type)
            })?;
            ensure(
                r.attempts == 0 && r.backend.is_none() && !r.permission_decided,
                || format!("a refused call got past validation: {r:?}"),
            )?;
        }
        // The schema stage reports every error at its argument, not just the first.
        ensure(
            self.schema.summary.contains("start_line") && self.schema.summary.contains("end_line"),
            || {
                format!(
                    "the schema errors do not name both arguments: {}",
                    self.schema.summary
                )
            },
        )?;
        ensure(self.corrected == Some((10, 12)), || {
            format!("the corrected read returned lines {:?}", self.corrected)
        })
    }
}

async fn call(
    runtime: &ToolRuntime,
    session: &Session,
    out: &mut dyn Write,
    id: &str,
    args: Value,
) -> Result<ToolResult, BoxError> {
    writeln!(out, "model -> {id} read_file({args})")?;
    let exec = runtime
        .run(
            vec![ToolCall::new(id, "read_file", args)],
            session,
            CancellationToken::new(),
        )
        .await?;
    let r = exec
        .results
        .into_iter()
        .next()
        .ok_or("no result for read_file")?;
    lab::model_sees(out, &r)?;
    Ok(r)
}

/// What the trace says about a refused call: how far it got.
fn refusal(
    runtime: &ToolRuntime,
    r: &ToolResult,
    out: &mut dyn Write,
) -> Result<Refusal, BoxError> {
    let trace = runtime
        .traces()
        .into_iter()
        .rfind(|t| t.call_id == r.call_id())
        .ok_or_else(|| format!("no trace record for {}", r.call_id()))?;
    writeln!(
        out,
        "  trace of {}: backend {}, permission {}, attempts {}",
        r.call_id(),
        trace.runtime.unwrap_or("none (never executed)"),
        if trace.permission.is_some() {
            "decided"
        } else {
            "never asked"
        },
        r.attempts()
    )?;
    Ok(Refusal {
        error_type: r.error_type(),
        summary: r.summary().to_owned(),
        attempts: r.attempts(),
        backend: trace.runtime,
        permission_decided: trace.permission.is_some(),
    })
}

/// Runs the experiment.
pub async fn run(lab: &Lab, out: &mut dyn Write) -> Result<Report, BoxError> {
    lab::header(
        out,
        2,
        "schema vs semantic validation",
        "read_file(start_line=100, end_line=10) is well-typed but impossible; read_file(start_line=0, end_line=\"ten\") is not even well-typed.",
    )?;
    let scratch = Scratch::new("exp2")?;
    let text: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    scratch.write("src/login.py", &text)?;
    let runtime = lab::builder(scratch.root(), &lab.shim)?.build()?;
    let session = Session::new("exp2", "interactive");

    let args = json!({"path": "src/login.py", "start_line": 100, "end_line": 10});
    let r = call(&runtime, &session, out, "c1", args).await?;
    let semantic = refusal(&runtime, &r, out)?;

    let args = json!({"path": "src/login.py", "start_line": 0, "end_line": "ten"});
    let r = call(&runtime, &session, out, "c2", args).await?;
    let schema = refusal(&runtime, &r, out)?;

    let args = json!({"path": "src/login.py", "start_line": 10, "end_line": 12});
    let r = call(&runtime, &session, out, "c3", args).await?;
    let corrected = r
        .structured()
        .and_then(|s| Some((s["start_line"].as_i64()?, s["end_line"].as_i64()?)));

    lab::shows(
        out,
        "both refusals happen before permission and execution (no backend, no attempt): the schema catches types and ranges per argument, the CEL rule catches the impossible combination.",
    )?;
    Ok(Report {
        semantic,
        schema,
        corrected,
    })
}
