//! Experiment 6: the user presses Stop; the command and the child it started both end.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolgate::ir::{ErrorType, Status};
use toolgate::runtime::extend::{ApprovalOutcome, FixedApprover};
use toolgate::runtime::{Session, ToolCall};

use crate::lab::{self, BoxError, Lab, Scratch, ensure};

/// The command: a background child and a foreground sleep; it writes both pids first.
pub const COMMAND: &str = "sleep 300 & echo \"$$ $!\" > pids; sleep 300";

/// What happened.
#[derive(Debug)]
pub struct Report {
    /// How the call ended.
    pub status: Status,
    /// Its error type.
    pub error_type: Option<ErrorType>,
    /// The shell's exit code: 143 when TERM ended it, 137 when it took SIGKILL.
    pub exit_code: Option<i64>,
    /// The shell's pid and its background child's, as the command wrote them.
    pub pids: Vec<u32>,
    /// Those of them still alive after the result came back (and a grace of a few seconds).
    pub alive: Vec<u32>,
    /// Any other process still working in the workspace.
    pub leftovers: Vec<u32>,
}

impl Report {
    /// Whether the experiment showed what it should.
    pub fn check(&self) -> Result<(), String> {
        ensure(
            (self.status, self.error_type) == (Status::Cancelled, Some(ErrorType::Cancelled)),
            || {
                format!(
                    "the stopped call ended {:?} {:?}",
                    self.status, self.error_type
                )
            },
        )?;
        // TERM, not the SIGKILL that follows the grace, ended the shell: the stop is graceful.
        ensure(self.exit_code == Some(143), || {
            format!(
                "the shell ended with exit code {:?}, not 143 (TERM)",
                self.exit_code
            )
        })?;
        ensure(self.pids.len() == 2, || {
            format!("the command wrote pids {:?}", self.pids)
        })?;
        ensure(self.alive.is_empty() && self.leftovers.is_empty(), || {
            format!(
                "processes survived the stop: {:?}, in the workspace: {:?}",
                self.alive, self.leftovers
            )
        })
    }
}

/// Whether a process is running (a zombie that is not reaped yet counts as ended).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// The pid this process knows a process by, given the pid the process has in its own PID
/// namespace (the tool runs in one: `$$` there is a small number) and a folder it works in:
/// the last `NSpid` of `/proc/<pid>/status` is the innermost namespace's.
pub fn host_pid(inner: u32, dir: &Path) -> Option<u32> {
    working_in(dir).into_iter().find(|pid| {
        std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("NSpid:"))
                .and_then(|ids| ids.split_whitespace().last())
                .and_then(|id| id.parse::<u32>().ok())
                == Some(inner)
        })
    })
}

/// Every live process whose working folder is inside `dir`: what a stop would have missed.
pub fn working_in(dir: &Path) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(dir))
                && alive(*pid)
        })
        .collect()
}

/// Runs the experiment.
pub async fn run(lab: &Lab, out: &mut dyn Write) -> Result<Report, BoxError> {
    lab::header(
        out,
        6,
        "cancellation",
        "runs, with the standard bash tool (2 minute budget), a command that starts a child (`sleep 300 &`) and waits (`sleep 300`); the user approves it, then presses Stop 300 ms after both are running.",
    )?;
    let scratch = Scratch::new("exp6")?;
    let workspace = scratch.workspace().canonicalize()?;
    // bash asks before running a command with `&`; the user says yes once.
    let runtime = lab::builder(scratch.root(), &lab.shim)?
        .approver(Arc::new(FixedApprover(ApprovalOutcome::AllowOnce)))
        .build()?;
    let session = Session::new("exp6", "interactive");

    // The Stop button: cancels the turn's token once the command has written its pids.
    let stop = CancellationToken::new();
    let button = stop.clone();
    let pidfile = workspace.join("pids");
    let tree = workspace.clone();
    let pressed = tokio::spawn(async move {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !pidfile.exists() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        // The command wrote the pids of its own PID namespace; these are the same processes
        // as this process sees them.
        let text = std::fs::read_to_string(&pidfile).unwrap_or_default();
        let pids: Vec<u32> = text
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .filter_map(|p| host_pid(p, &tree))
            .collect();
        let at = Instant::now();
        button.cancel();
        (at, pids)
    });

    writeln!(out, "model -> c1 bash({{\"command\": {COMMAND:?}}})")?;
    let exec = runtime
        .run(
            vec![ToolCall::new("c1", "bash", json!({"command": COMMAND}))],
            &session,
            stop,
        )
        .await?;
    let (pressed_at, pids) = pressed.await?;
    let r = exec.results.first().ok_or("no result for bash")?;
    writeln!(
        out,
        "user pressed Stop; the result came back {} ms later",
        pressed_at.elapsed().as_millis()
    )?;
    lab::model_sees(out, r)?;
    let exit_code = r.structured().and_then(|s| s["exit_code"].as_i64());
    writeln!(
        out,
        "the shell's exit code: {} (143: ended by SIGTERM within the grace; 137: needed SIGKILL)",
        exit_code.map_or("none".to_owned(), |c| c.to_string())
    )?;

    // The stop has finished when the result returns; the short wait only absorbs the kernel's
    // bookkeeping, so a survivor is reported rather than waited for.
    let deadline = Instant::now() + Duration::from_secs(3);
    while pids.iter().any(|p| alive(*p)) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let still: Vec<u32> = pids.iter().copied().filter(|p| alive(*p)).collect();
    for (role, pid) in ["parent (the shell)", "child (sleep 300 &)"]
        .iter()
        .zip(&pids)
    {
        writeln!(
            out,
            "/proc/{pid}: {role}: {}",
            if alive(*pid) { "STILL RUNNING" } else { "gone" }
        )?;
    }
    let leftovers = working_in(&workspace);
    writeln!(
        out,
        "processes still working in the workspace: {}",
        if leftovers.is_empty() {
            "none".to_owned()
        } else {
            format!("{leftovers:?}")
        }
    )?;
    lab::shows(
        out,
        "Stop reaches the whole process tree (the shell and the child it started), and the model is told the call was cancelled, not that it failed.",
    )?;
    Ok(Report {
        status: r.status(),
        error_type: r.error_type(),
        exit_code,
        pids,
        alive: still,
        leftovers,
    })
}
