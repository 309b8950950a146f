//! Experiment 4: two edits of one file in one turn are serialized, and the stale one refused.

use std::io::Write;
use std::sync::Arc;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolgate::ir::{ErrorType, Status};
use toolgate::runtime::extend::{ApprovalOutcome, FixedApprover};
use toolgate::runtime::{Session, ToolCall};

use crate::lab::{self, BoxError, Lab, Scratch, ensure};

/// The file before the turn.
pub const BEFORE: &str = "TIMEOUT = 5\nRETRIES = 1\n";

/// What happened.
#[derive(Debug)]
pub struct Report {
    /// The batches of the two-edit turn (call indexes).
    pub batches: Vec<Vec<usize>>,
    /// Why the second edit waits for the first, as the plan says.
    pub edge: Option<String>,
    /// How each edit ended.
    pub outcomes: Vec<(Status, Option<ErrorType>)>,
    /// The file after the turn.
    pub after: String,
}

impl Report {
    /// Whether the experiment showed what it should.
    pub fn check(&self) -> Result<(), String> {
        ensure(self.batches == [vec![0], vec![1]], || {
            format!("the edits were planned as {:?}", self.batches)
        })?;
        ensure(
            self.edge.as_deref() == Some("#1 writes file:config.py"),
            || format!("the order was given as {:?}", self.edge),
        )?;
        ensure(
            self.outcomes
                == [
                    (Status::Success, None),
                    (Status::Error, Some(ErrorType::PreconditionFailed)),
                ],
            || format!("the edits ended {:?}", self.outcomes),
        )?;
        ensure(self.after == "TIMEOUT = 30\nRETRIES = 1\n", || {
            format!("the file ended as {:?}", self.after)
        })
    }
}

/// Runs the experiment.
pub async fn run(lab: &Lab, out: &mut dyn Write) -> Result<Report, BoxError> {
    lab::header(
        out,
        4,
        "write conflict",
        "reads config.py, then sends two apply_patch calls for it in one turn, both built on the hash it read.",
    )?;
    let scratch = Scratch::new("exp4")?;
    scratch.write("config.py", BEFORE)?;
    // apply_patch asks a person; this one approves each edit once, so only the scheduler and
    // the precondition decide what happens.
    let runtime = lab::builder(scratch.root(), &lab.shim)?
        .approver(Arc::new(FixedApprover(ApprovalOutcome::AllowOnce)))
        .build()?;
    let session = Session::new("exp4", "interactive");

    let exec = runtime
        .run(
            vec![ToolCall::new(
                "c1",
                "read_file",
                json!({"path": "config.py"}),
            )],
            &session,
            CancellationToken::new(),
        )
        .await?;
    let hash = exec
        .results
        .first()
        .and_then(|r| r.structured())
        .and_then(|s| s["content_hash"].as_str())
        .ok_or("read_file returned no content_hash")?
        .to_owned();
    writeln!(out, "model -> c1 read_file(config.py): content_hash {hash}")?;

    let patch = |id: &str, old: &str, new: &str| {
        ToolCall::new(
            id,
            "apply_patch",
            json!({"path": "config.py", "expected_hash": hash, "edits": [{"old_text": old, "new_text": new}]}),
        )
    };
    writeln!(out, "model -> e1 apply_patch(TIMEOUT = 5 -> TIMEOUT = 30)")?;
    writeln!(
        out,
        "model -> e2 apply_patch(RETRIES = 1 -> RETRIES = 3)   (same turn, same expected_hash)"
    )?;
    let exec = runtime
        .run(
            vec![
                patch("e1", "TIMEOUT = 5", "TIMEOUT = 30"),
                patch("e2", "RETRIES = 1", "RETRIES = 3"),
            ],
            &session,
            CancellationToken::new(),
        )
        .await?;
    lab::indented(out, "  ", &exec.plan.to_string())?;
    for r in &exec.results {
        lab::model_sees(out, r)?;
    }
    let after = scratch.read("config.py")?;
    writeln!(out, "config.py after the turn:")?;
    lab::indented(out, "  ", &after)?;

    lab::shows(
        out,
        "writes to one file never run together; the second edit, made against a file that has since changed, is refused (PRECONDITION_FAILED) instead of clobbering the first.",
    )?;
    Ok(Report {
        batches: exec.plan.batches.clone(),
        edge: exec.plan.edges.first().map(|e| e.reason.clone()),
        outcomes: exec
            .results
            .iter()
            .map(|r| (r.status(), r.error_type()))
            .collect(),
        after,
    })
}
