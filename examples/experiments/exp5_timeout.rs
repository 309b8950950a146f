//! Experiment 5: `sleep 60` under a tool with a short budget ends TIMEOUT, with a hint.

use std::io::Write;
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolgate::ir::{ErrorType, Status};
use toolgate::runtime::{Session, ToolCall};

use crate::lab::{self, BoxError, Lab, Scratch, ensure};

/// What happened.
#[derive(Debug)]
pub struct Report {
    /// How the call ended.
    pub status: Status,
    /// Its error type.
    pub error_type: Option<ErrorType>,
    /// The hint the model read.
    pub hint: Option<String>,
    /// The text the model read.
    pub text: String,
    /// How long the call took.
    pub duration: Duration,
}

impl Report {
    /// Whether the experiment showed what it should.
    pub fn check(&self) -> Result<(), String> {
        ensure(
            (self.status, self.error_type) == (Status::Timeout, Some(ErrorType::Timeout)),
            || format!("sleep 60 ended {:?} {:?}", self.status, self.error_type),
        )?;
        ensure(self.text.starts_with("job: timeout TIMEOUT\n"), || {
            format!("the model read {:?}", self.text)
        })?;
        ensure(
            self.hint
                .as_deref()
                .is_some_and(|h| h.contains("1 second budget")),
            || format!("the hint was {:?}", self.hint),
        )?;
        // The budget is 1 s, the stop grace 2 s: far from the 60 s the command asked for.
        ensure(self.duration < Duration::from_secs(30), || {
            format!("the call took {:?}", self.duration)
        })
    }
}

/// Runs the experiment.
pub async fn run(lab: &Lab, out: &mut dyn Write) -> Result<Report, BoxError> {
    lab::header(
        out,
        5,
        "timeout",
        "runs `sleep 60` with the tool `job`, whose contract says `timeout: 1s` (the chapter uses 5 s; 1 s keeps the example quick, nothing else changes).",
    )?;
    let scratch = Scratch::new("exp5")?;
    let runtime = lab::builder(scratch.root(), &lab.shim)?.build()?;
    let session = Session::new("exp5", "interactive");
    writeln!(out, "model -> c1 job({{\"command\": \"sleep 60\"}})")?;
    let exec = runtime
        .run(
            vec![ToolCall::new("c1", "job", json!({"command": "sleep 60"}))],
            &session,
            CancellationToken::new(),
        )
        .await?;
    let r = exec.results.first().ok_or("no result for job")?;
    lab::model_sees(out, r)?;
    writeln!(
        out,
        "the call took {} ms (budget 1000 ms; then the process tree was stopped)",
        r.duration().as_millis()
    )?;
    lab::shows(
        out,
        "a hung command becomes a TIMEOUT result with the contract's own hint (do not rerun as is), distinct from a failing exit code, and the turn goes on.",
    )?;
    Ok(Report {
        status: r.status(),
        error_type: r.error_type(),
        hint: r.hint().map(str::to_owned),
        text: r.projection().text.clone(),
        duration: r.duration(),
    })
}
