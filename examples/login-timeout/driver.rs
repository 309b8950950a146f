//! The login-timeout task, driven through the governed runtime by a scripted model.
//!
//! Shared by the example (`examples/login_timeout.rs`) and its test
//! (`tests/examples_login_timeout.rs`): [`run`] copies the project into a temporary git
//! repository, builds the runtime from `tool-specs/` + `toolgate.yaml` (toolset
//! `login-timeout`: search_files, read_file, apply_patch, run_tests, read_artifact), plays the
//! script turn by turn, printing what the model would see, and returns a [`Report`] of what
//! happened.
//!
//! # The script (`model.jsonl`)
//!
//! One tool call per line, in the order a model would make them:
//!
//! ```json
//! {"turn": 2, "call_id": "c2", "name": "read_file", "arguments": {"path": "auth/session.py"}, "note": "why"}
//! ```
//!
//! Consecutive lines with the same `turn` are one model turn (the runtime schedules them
//! together). `call_id` defaults to `t<turn>-<n>`; `note` is the model's stated intent, printed
//! before the turn.
//!
//! A model copies what it read into its next calls; the script does the same with
//! placeholders in argument strings:
//!
//! - `{{turnN.TOOL.PATH}}` — the structured result of the call to `TOOL` in turn `N` (it must
//!   be the only call to that tool in that turn);
//! - `{{CALL_ID.PATH}}` — the structured result of the call with that id.
//!
//! `PATH` is a dot-separated walk into the result: object keys, and array indexes
//! (`files.0.path`). A string that is exactly one placeholder takes the value with its JSON
//! type; a placeholder inside a longer string is replaced by the value's text. A placeholder
//! that cannot be resolved stops the run: the script, not the runtime, is wrong.

use std::collections::BTreeSet;
use std::error::Error;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolgate::ir::{ErrorType, Status};
use toolgate::runtime::extend::ApprovalFuture;
use toolgate::runtime::extend::{ApprovalOutcome, ApprovalRequest, Approver};
use toolgate::runtime::{RuntimeBuilder, Session, ToolCall};
use toolgate::spec::load::LoadOptions;

/// Errors of the driver: the script, git, or the runtime's engine.
pub type BoxError = Box<dyn Error + Send + Sync>;

/// Where everything is.
#[derive(Clone, Debug)]
pub struct Options {
    /// The project to copy into the workspace.
    pub project: PathBuf,
    /// The scripted model.
    pub script: PathBuf,
    /// The toolgate project whose `toolgate.yaml` and `tool-specs/` define the tools.
    pub toolgate_root: PathBuf,
    /// The toolset the session sees.
    pub toolset: String,
    /// The program command tools run under as their exec shim: a toolgate binary, or a program
    /// that calls `toolgate::runtime::sandbox::run_shim()` when argv\[1\] is
    /// `__exec-shim` (the example does).
    pub shim: PathBuf,
}

impl Options {
    /// The example's own files, in this source tree.
    pub fn bundled(shim: PathBuf) -> Options {
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        Options {
            project: root.join("examples/login-timeout/project"),
            script: root.join("examples/login-timeout/model.jsonl"),
            toolgate_root: root,
            toolset: "login-timeout".into(),
            shim,
        }
    }
}

/// One `run_tests` result: what the user gets as evidence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestEvidence {
    /// The call.
    pub call_id: String,
    /// The command line that ran.
    pub command: String,
    /// The runner's exit code.
    pub exit_code: i64,
    /// "3 failed, 2 passed".
    pub summary: String,
    /// Failing tests, by name.
    pub failed: Vec<String>,
}

/// One call and how it ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The call id.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// How it ended.
    pub status: Status,
    /// Why it failed.
    pub error_type: Option<ErrorType>,
}

/// What happened, for the caller to check.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Every call, in order.
    pub outcomes: Vec<Outcome>,
    /// Every test run, in order.
    pub tests: Vec<TestEvidence>,
    /// What the person was asked, and answered, in order.
    pub approvals: Vec<Approval>,
    /// `git diff --name-only` of the workspace at the end.
    pub changed_files: Vec<String>,
    /// `git diff` of the workspace at the end: what the user reviews.
    pub diff: String,
}

impl Report {
    /// The outcome of one call.
    // Used by the test (tests/examples_login_timeout.rs), which shares this file.
    #[allow(dead_code)]
    pub fn outcome(&self, call_id: &str) -> Option<&Outcome> {
        self.outcomes.iter().find(|o| o.call_id == call_id)
    }

    /// Whether the story ended as it should: tests red before, green after, only approved
    /// files changed.
    pub fn check(&self) -> Result<(), String> {
        let (Some(first), Some(last)) = (self.tests.first(), self.tests.last()) else {
            return Err("the script ran no tests".into());
        };
        if first.exit_code == 0 {
            return Err(format!("the first test run passed: {}", first.summary));
        }
        if last.exit_code != 0 {
            return Err(format!("the last test run failed: {}", last.summary));
        }
        let approved: BTreeSet<&str> = self
            .approvals
            .iter()
            .filter(|a| a.approved)
            .flat_map(|a| a.card.iter().map(String::as_str))
            .collect();
        if let Some(f) = self
            .changed_files
            .iter()
            .find(|f| !approved.contains(f.as_str()))
        {
            return Err(format!("{f} changed but was never approved"));
        }
        Ok(())
    }
}

/// One question to the person.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Approval {
    /// The call asked about.
    pub call_id: String,
    /// The files on the card the runtime proposed (the files this call writes).
    pub card: Vec<String>,
    /// The answer.
    pub approved: bool,
}

/// One line of the script.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptLine {
    turn: u32,
    #[serde(default)]
    call_id: Option<String>,
    name: String,
    #[serde(default)]
    arguments: Value,
    #[serde(default)]
    note: Option<String>,
}

/// A turn: the calls a model makes at once.
#[derive(Debug)]
struct Turn {
    number: u32,
    lines: Vec<ScriptLine>,
}

fn read_script(path: &Path) -> Result<Vec<Turn>, BoxError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the script {}: {e}", path.display()))?;
    let mut turns: Vec<Turn> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let mut l: ScriptLine =
            serde_json::from_str(line).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
        match turns.last_mut() {
            Some(t) if t.number == l.turn => {
                l.call_id
                    .get_or_insert_with(|| format!("t{}-{}", l.turn, t.lines.len() + 1));
                t.lines.push(l);
            }
            Some(t) if t.number > l.turn => {
                return Err(format!(
                    "{}:{}: turn {} after turn {}; turns must not go back",
                    path.display(),
                    i + 1,
                    l.turn,
                    t.number
                )
                .into());
            }
            _ => {
                l.call_id.get_or_insert_with(|| format!("t{}-1", l.turn));
                turns.push(Turn {
                    number: l.turn,
                    lines: vec![l],
                });
            }
        }
    }
    Ok(turns)
}

/// What the model has seen so far: the structured result of every call.
#[derive(Default)]
struct Observations(Vec<(u32, String, String, Option<Value>)>);

impl Observations {
    fn lookup(&self, reference: &str) -> Result<Value, BoxError> {
        let mut parts = reference.split('.');
        let head = parts.next().unwrap_or_default();
        let (observed, path): (_, Vec<&str>) = match head
            .strip_prefix("turn")
            .and_then(|n| n.parse::<u32>().ok())
        {
            Some(turn) => {
                let tool = parts.next().unwrap_or_default();
                let matching: Vec<_> = self
                    .0
                    .iter()
                    .filter(|(t, _, name, _)| *t == turn && name == tool)
                    .collect();
                match matching[..] {
                    [one] => (one, parts.collect()),
                    [] => {
                        return Err(format!(
                            "{{{{{reference}}}}}: turn {turn} made no {tool} call"
                        )
                        .into());
                    }
                    _ => {
                        return Err(format!(
                            "{{{{{reference}}}}}: turn {turn} called {tool} more than once; refer to the call id"
                        )
                        .into());
                    }
                }
            }
            None => match self.0.iter().find(|(_, id, _, _)| id == head) {
                Some(o) => (o, parts.collect()),
                None => return Err(format!("{{{{{reference}}}}}: no earlier call {head}").into()),
            },
        };
        let Some(mut value) = observed.3.as_ref() else {
            return Err(format!(
                "{{{{{reference}}}}}: call {} returned no structured result",
                observed.1
            )
            .into());
        };
        for step in path {
            value = match value {
                Value::Array(items) => step.parse::<usize>().ok().and_then(|i| items.get(i)),
                Value::Object(map) => map.get(step),
                _ => None,
            }
            .ok_or_else(|| format!("{{{{{reference}}}}}: the result has no `{step}`"))?;
        }
        Ok(value.clone())
    }

    /// Replaces the placeholders in every string of `value`.
    fn resolve(&self, value: &Value) -> Result<Value, BoxError> {
        Ok(match value {
            Value::String(s) => self.resolve_str(s)?,
            Value::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|v| self.resolve(v))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| Ok((k.clone(), self.resolve(v)?)))
                    .collect::<Result<_, BoxError>>()?,
            ),
            other => other.clone(),
        })
    }

    fn resolve_str(&self, s: &str) -> Result<Value, BoxError> {
        let whole = s
            .strip_prefix("{{")
            .and_then(|r| r.strip_suffix("}}"))
            .filter(|r| !r.contains("{{") && !r.contains("}}"));
        if let Some(reference) = whole {
            return self.lookup(reference.trim());
        }
        let mut out = String::new();
        let mut rest = s;
        while let Some(start) = rest.find("{{") {
            let Some(len) = rest[start..].find("}}") else {
                break;
            };
            out.push_str(&rest[..start]);
            match self.lookup(rest[start + 2..start + len].trim())? {
                Value::String(text) => out.push_str(&text),
                other => out.push_str(&other.to_string()),
            }
            rest = &rest[start + len + 2..];
        }
        out.push_str(rest);
        Ok(Value::String(out))
    }
}

/// The person at the approval prompt, scripted: approves the card of the first change for the
/// session, and refuses anything that asks afterwards — a later call asks only when it writes
/// a file that is not on the approved card.
#[derive(Default)]
struct Person {
    log: Mutex<Vec<(Approval, Vec<String>)>>,
}

impl Person {
    /// The questions and answers since the last call, with the lines to print.
    fn take(&self) -> Vec<(Approval, Vec<String>)> {
        match self.log.lock() {
            Ok(mut log) => std::mem::take(&mut *log),
            Err(_) => Vec::new(),
        }
    }
}

impl Approver for Person {
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a> {
        let Ok(mut log) = self.log.lock() else {
            return Box::pin(async { ApprovalOutcome::Unavailable });
        };
        let card: Vec<String> = request
            .proposed_scope
            .iter()
            .flat_map(|s| s.writes.iter())
            .map(|w| w.strip_prefix("file:").unwrap_or(w).to_owned())
            .collect();
        let first = log.is_empty();
        let mut lines = vec![
            format!(
                "approval needed: {} (call {})",
                request.tool, request.call_id
            ),
            format!("reason: {}", request.reason.as_deref().unwrap_or("-")),
            format!("files this change may touch: {}", card.join(", ")),
        ];
        if let Ok(args) = serde_json::from_str::<Value>(&request.arguments) {
            for e in args["edits"].as_array().into_iter().flatten() {
                lines.push(format!(
                    "edit: {:?} -> {:?}",
                    e["old_text"].as_str().unwrap_or_default(),
                    e["new_text"].as_str().unwrap_or_default()
                ));
            }
        }
        let outcome = if first {
            lines.push("person: approved for this session, for the files on the card".into());
            ApprovalOutcome::AllowForSession {
                scope: request.proposed_scope.clone(),
            }
        } else {
            lines.push("person: denied (not on the approved card)".into());
            ApprovalOutcome::Deny {
                reason: Some(
                    "Only the fix in auth/session.py was approved; leave the tests as they are."
                        .into(),
                ),
            }
        };
        log.push((
            Approval {
                call_id: request.call_id.clone(),
                card,
                approved: first,
            },
            lines,
        ));
        Box::pin(async move { outcome })
    }
}

fn git(dir: &Path, args: &[&str]) -> Result<String, BoxError> {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=toolgate example",
            "-c",
            "user.email=example@toolgate.invalid",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("cannot run git (needed for the diff): {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Copies the project, leaving out caches a local test run may have left.
fn copy_project(from: &Path, to: &Path) -> Result<(), BoxError> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == "__pycache__" || name == ".pytest_cache" {
            continue;
        }
        if entry.file_type()?.is_dir() {
            copy_project(&entry.path(), &to.join(&name))?;
        } else {
            std::fs::copy(entry.path(), to.join(&name))?;
        }
    }
    Ok(())
}

fn indented(out: &mut dyn Write, prefix: &str, text: &str) -> std::io::Result<()> {
    for line in text.lines() {
        writeln!(out, "{prefix}{line}")?;
    }
    Ok(())
}

fn evidence(call_id: &str, structured: Option<&Value>) -> Option<TestEvidence> {
    let s = structured?;
    Some(TestEvidence {
        call_id: call_id.to_owned(),
        command: s["command"].as_str()?.to_owned(),
        exit_code: s["exit_code"].as_i64()?,
        summary: s["summary"].as_str()?.to_owned(),
        failed: s["failures"]
            .as_array()?
            .iter()
            .filter_map(|f| f["name"].as_str().map(str::to_owned))
            .collect(),
    })
}

/// Runs the task and prints it to `out`.
pub async fn run(opts: &Options, out: &mut dyn Write) -> Result<Report, BoxError> {
    let turns = read_script(&opts.script)?;
    // A temporary folder with the workspace (a git repository, so the change is a diff) and
    // the state folder (artifacts, kept out of the repository).
    let tmp = tempfile::Builder::new()
        .prefix("login-timeout-")
        .tempdir()?;
    let workspace = tmp.path().join("workspace");
    copy_project(&opts.project, &workspace)?;
    git(&workspace, &["init", "-q"])?;
    git(&workspace, &["add", "-A"])?;
    git(
        &workspace,
        &["commit", "-q", "-m", "example-app before the fix"],
    )?;

    let person = Arc::new(Person::default());
    let runtime = RuntimeBuilder::from_specs(&LoadOptions {
        paths: Vec::new(),
        config: Some(opts.toolgate_root.join("toolgate.yaml")),
        cwd: opts.toolgate_root.clone(),
    })?
    .workspace(&workspace)
    .state_dir(tmp.path().join("state"))
    .shim(&opts.shim)
    .approver(person.clone())
    .build()?;
    let session = Session::new("login-timeout", "interactive").with_toolset(&opts.toolset);

    writeln!(
        out,
        "workspace: a copy of {} (git repository, one commit)",
        opts.project.display()
    )?;
    let tools = runtime
        .project()
        .toolsets
        .get(&opts.toolset)
        .map(|t| t.tools.join(", "))
        .ok_or_else(|| format!("toolgate.yaml has no toolset {}", opts.toolset))?;
    writeln!(out, "tools (toolset {}): {tools}", opts.toolset)?;

    let mut seen = Observations::default();
    let mut report = Report::default();
    for turn in &turns {
        writeln!(out, "\n=== turn {} ===", turn.number)?;
        let mut calls = Vec::new();
        for line in &turn.lines {
            if let Some(note) = &line.note {
                writeln!(out, "model: {note}")?;
            }
            let arguments = seen.resolve(&line.arguments)?;
            let call_id = line.call_id.clone().unwrap_or_default();
            writeln!(
                out,
                "  -> {call_id} {}({})",
                line.name,
                serde_json::to_string(&arguments)?
            )?;
            calls.push(ToolCall::new(call_id, line.name.clone(), arguments));
        }
        let execution = runtime
            .run(calls, &session, CancellationToken::new())
            .await?;
        for (approval, lines) in person.take() {
            writeln!(out)?;
            for l in &lines {
                writeln!(out, "  [approval] {l}")?;
            }
            report.approvals.push(approval);
        }
        if turn.lines.len() > 1 {
            writeln!(out)?;
            indented(out, "  ", &execution.plan.to_string())?;
        }
        for (line, result) in turn.lines.iter().zip(&execution.results) {
            writeln!(out, "\n  what the model sees ({}):", result.call_id())?;
            indented(out, "  | ", &result.projection().text)?;
            if line.name == "run_tests"
                && let Some(e) = evidence(result.call_id(), result.structured())
            {
                report.tests.push(e);
            }
            report.outcomes.push(Outcome {
                call_id: result.call_id().to_owned(),
                tool: result.tool().to_owned(),
                status: result.status(),
                error_type: result.error_type(),
            });
            seen.0.push((
                turn.number,
                result.call_id().to_owned(),
                result.tool().to_owned(),
                result.structured().cloned(),
            ));
        }
    }

    report.diff = git(&workspace, &["diff", "--no-color", "--no-ext-diff"])?;
    report.changed_files = git(&workspace, &["diff", "--name-only"])?
        .lines()
        .map(str::to_owned)
        .collect();
    writeln!(out, "\n=== for review ===")?;
    writeln!(out, "the diff (git diff in the workspace):")?;
    indented(out, "  ", &report.diff)?;
    writeln!(out, "test evidence:")?;
    for (when, e) in [
        ("before", report.tests.first()),
        ("after", report.tests.last()),
    ] {
        if let Some(e) = e {
            writeln!(
                out,
                "  {when:<6} ({}): `{}` exit code {}: {}",
                e.call_id, e.command, e.exit_code, e.summary
            )?;
        }
    }
    for o in report
        .outcomes
        .iter()
        .filter(|o| !matches!(o.status, Status::Success))
    {
        writeln!(
            out,
            "refused: {} {} ({} {})",
            o.call_id,
            o.tool,
            o.status.as_str(),
            o.error_type.map_or("", |t| t.as_str())
        )?;
    }
    writeln!(
        out,
        "nothing was committed or pushed: merging stays a human decision."
    )?;
    Ok(report)
}
