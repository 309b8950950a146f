//! Experiment 1: an unknown tool is an observation the model can recover from.

use std::io::Write;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolgate::ir::{ErrorType, Status};
use toolgate::runtime::{Session, ToolCall};

use crate::lab::{self, BoxError, Lab, Scratch, ensure};

/// What happened.
#[derive(Debug)]
pub struct Report {
    /// The unknown call's error type.
    pub unknown: Option<ErrorType>,
    /// The alternatives the runtime named.
    pub alternatives: Vec<String>,
    /// The text the model read for the unknown call.
    pub unknown_text: String,
    /// How the corrected call ended.
    pub corrected: Status,
    /// The file the corrected call found.
    pub found: Option<String>,
}

impl Report {
    /// Whether the experiment showed what it should.
    pub fn check(&self) -> Result<(), String> {
        ensure(self.unknown == Some(ErrorType::UnknownTool), || {
            format!("find_symbol ended {:?}, not UNKNOWN_TOOL", self.unknown)
        })?;
        ensure(
            self.alternatives.iter().any(|a| a == "search_files"),
            || format!("no search_files among {:?}", self.alternatives),
        )?;
        ensure(
            self.unknown_text.contains("Available alternatives:"),
            || {
                format!(
                    "the model was not told the alternatives: {}",
                    self.unknown_text
                )
            },
        )?;
        ensure(
            self.corrected == Status::Success && self.found.as_deref() == Some("src/auth/login.py"),
            || {
                format!(
                    "the corrected call ended {:?} and found {:?}",
                    self.corrected, self.found
                )
            },
        )
    }
}

/// Runs the experiment.
pub async fn run(lab: &Lab, out: &mut dyn Write) -> Result<Report, BoxError> {
    lab::header(
        out,
        1,
        "unknown tool self-healing",
        "the model calls find_symbol, which does not exist; then, reading the answer, search_files.",
    )?;
    let scratch = Scratch::new("exp1")?;
    scratch.write(
        "src/auth/login.py",
        "LOGIN_TIMEOUT = 5\n\ndef login(user, password):\n    return check(user, password)\n",
    )?;
    let runtime = lab::builder(scratch.root(), &lab.shim)?.build()?;
    let session = Session::new("exp1", "interactive").with_toolset("coding");

    let unknown = ToolCall::new("c1", "find_symbol", json!({"name": "login"}));
    writeln!(out, "model -> c1 find_symbol({{\"name\": \"login\"}})")?;
    let exec = runtime
        .run(vec![unknown], &session, CancellationToken::new())
        .await?;
    let Some(r1) = exec.results.first() else {
        return Err("no result for find_symbol".into());
    };
    lab::model_sees(out, r1)?;

    // What a model does with that answer: the same intent through a tool that exists.
    let args = json!({"pattern": "def login", "glob": "**/*.py"});
    writeln!(out, "model -> c2 search_files({args})")?;
    let exec = runtime
        .run(
            vec![ToolCall::new("c2", "search_files", args)],
            &session,
            CancellationToken::new(),
        )
        .await?;
    let Some(r2) = exec.results.first() else {
        return Err("no result for search_files".into());
    };
    lab::model_sees(out, r2)?;
    let found = r2
        .structured()
        .and_then(|s| s["files"].get(0))
        .and_then(|m| m["path"].as_str())
        .map(str::to_owned);

    lab::shows(
        out,
        "an unknown tool is a result naming real alternatives (not a crash), and the next call heals it.",
    )?;
    Ok(Report {
        unknown: r1.error_type(),
        alternatives: r1.alternatives().to_vec(),
        unknown_text: r1.projection().text.clone(),
        corrected: r2.status(),
        found,
    })
}
