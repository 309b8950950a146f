//! Experiment 7: the process crashes after a side effect and before its result is recorded;
//! after the restart, recovery does not run it again.
//!
//! The crash is real: a second process (the example re-executed, or in the test the test
//! binary) builds a runtime on a SQLite journal in a shared state folder and calls
//! `append_note`, which appends its line to `notes.log` and then takes a minute to
//! "confirm". As soon as the line is there, this process kills the other with SIGKILL. Then it
//! opens the same journal, as a restarted harness would, and resubmits the same call.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolgate::ir::{ErrorType, Status};
use toolgate::runtime::extend::Settled;
use toolgate::runtime::{JOURNAL_FILE, JournalReader};
use toolgate::runtime::{Session, ToolCall};

use crate::lab::{self, BoxError, Lab, Scratch, ensure};

/// Names the crashing process's scratch root; its presence makes a process the crashing one.
pub const CHILD_ENV: &str = "TOOLGATE_EXPERIMENT7_ROOT";
/// Names the exec shim for the crashing process.
pub const SHIM_ENV: &str = "TOOLGATE_EXPERIMENT7_SHIM";

const SESSION: &str = "exp7";
const CALL_ID: &str = "c1";

fn arguments() -> Value {
    json!({"text": "deploy v2"})
}

fn the_call() -> ToolCall {
    ToolCall::new(CALL_ID, "append_note", arguments())
}

/// What happened.
#[derive(Debug)]
pub struct Report {
    /// The journal's state of the call after the crash: (started, finished).
    pub journal_after_crash: (bool, bool),
    /// How recovery settled the operation.
    pub settled: Vec<Settled>,
    /// How the resubmitted call ended.
    pub resubmitted: (Status, Option<ErrorType>),
    /// What the model read for it.
    pub resubmitted_text: String,
    /// The lines of notes.log at the end: the side effect, counted.
    pub notes: Vec<String>,
}

impl Report {
    /// Whether the experiment showed what it should.
    pub fn check(&self) -> Result<(), String> {
        ensure(self.journal_after_crash == (true, false), || {
            format!(
                "after the crash the journal had (started, finished) = {:?}",
                self.journal_after_crash
            )
        })?;
        ensure(self.settled == [Settled::UnknownOutcome], || {
            format!("recovery settled {:?}", self.settled)
        })?;
        ensure(
            self.resubmitted == (Status::UnknownOutcome, Some(ErrorType::UnknownOutcome)),
            || format!("the resubmitted call ended {:?}", self.resubmitted),
        )?;
        ensure(
            self.resubmitted_text.contains("Verify before repeating"),
            || {
                format!(
                    "the model was not told to verify: {}",
                    self.resubmitted_text
                )
            },
        )?;
        ensure(self.notes.len() == 1, || {
            format!("notes.log has {} lines: {:?}", self.notes.len(), self.notes)
        })
    }
}

/// The crashing process: runs the call on a SQLite journal until it is killed.
pub fn child_main(root: &Path, shim: &Path) -> Result<(), BoxError> {
    let tokio = tokio::runtime::Runtime::new()?;
    tokio.block_on(async {
        let runtime = lab::builder(root, shim)?.sqlite_journal().build()?;
        let session = Session::new(SESSION, "interactive");
        runtime
            .run(vec![the_call()], &session, CancellationToken::new())
            .await?;
        Err::<(), BoxError>("the call finished before the crash".into())
    })
}

fn notes(scratch: &Scratch) -> Vec<String> {
    scratch
        .read("notes.log")
        .map(|t| t.lines().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// Runs the experiment.
pub async fn run(lab: &Lab, out: &mut dyn Write) -> Result<Report, BoxError> {
    lab::header(
        out,
        7,
        "crash + idempotency",
        "a second process calls append_note (not idempotent); its line lands in notes.log, and the process is killed (SIGKILL) before the result is recorded. Then the journal is reopened and the same call resubmitted.",
    )?;
    let scratch = Scratch::new("exp7")?;
    let [program, args @ ..] = &lab.crash_child[..] else {
        return Err("no command line for the crashing process".into());
    };
    let mut child = Command::new(program)
        .args(args)
        .env(CHILD_ENV, scratch.root())
        .env(SHIM_ENV, &lab.shim)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the crashing process: {e}"))?;

    // Wait for the side effect; the journal recorded the start durably before it happened.
    let deadline = Instant::now() + Duration::from_secs(60);
    while notes(&scratch).is_empty() {
        if let Some(status) = child.try_wait()? {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                e.read_to_string(&mut err)?;
            }
            return Err(format!("the crashing process ended by itself ({status}): {err}").into());
        }
        if Instant::now() > deadline {
            child.kill()?;
            child.wait()?;
            return Err("append_note did not write its line within 60 s".into());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child.kill()?;
    child.wait()?;
    writeln!(
        out,
        "crash: process {} killed with SIGKILL; notes.log: {:?}",
        child.id(),
        notes(&scratch)
    )?;

    // What the dead process left in the journal.
    let reader = JournalReader::open(lab::state_of(scratch.root()).join(JOURNAL_FILE))?;
    let records = reader.by_call(CALL_ID)?;
    let journal_after_crash = (
        !records.is_empty(),
        records.iter().any(|r| r.finish.is_some()),
    );
    for r in &records {
        writeln!(
            out,
            "journal after the crash: {} {} ({}, key {}): started at {}, {}",
            r.start.operation_id,
            r.start.tool,
            r.start.idempotency,
            r.start.idempotency_key,
            r.start.started_at,
            if r.finish.is_some() {
                "finished"
            } else {
                "no finish recorded"
            }
        )?;
    }
    drop(reader);

    // The restart: a new runtime on the same journal settles what was cut off.
    let runtime = lab::builder(scratch.root(), &lab.shim)?
        .sqlite_journal()
        .build()?;
    let report = runtime.recover().await?;
    writeln!(out, "restart:")?;
    lab::indented(out, "  ", &report.to_string())?;

    writeln!(
        out,
        "model -> {CALL_ID} append_note({}) again (the harness resubmits the turn)",
        arguments()
    )?;
    let session = Session::new(SESSION, "interactive");
    let exec = runtime
        .run(vec![the_call()], &session, CancellationToken::new())
        .await?;
    let r = exec.results.first().ok_or("no result for append_note")?;
    lab::model_sees(out, r)?;
    let lines = notes(&scratch);
    writeln!(
        out,
        "notes.log at the end: {} line(s): {lines:?}",
        lines.len()
    )?;
    lab::shows(
        out,
        "a side effect whose result was lost is not run again blindly: recovery marks it unknown_outcome and the resubmission tells the model to verify first; the line exists once.",
    )?;
    Ok(Report {
        journal_after_crash,
        settled: report.operations.iter().map(|o| o.outcome).collect(),
        resubmitted: (r.status(), r.error_type()),
        resubmitted_text: r.projection().text.clone(),
        notes: lines,
    })
}
