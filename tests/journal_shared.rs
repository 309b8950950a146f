//! Several runtimes, one SQLite journal: in one process and across processes. Each open journal
//! is an owner whose lock the kernel frees when its process ends, so an operation a live
//! process runs is never settled by another, and one a killed process left is — by the next
//! claim that meets it, without a restart.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolgate::ir::{ErrorType, Status};
use toolgate::runtime::extend::{Journal, OperationState, Settled, SettledBy, Settlement};
use toolgate::runtime::{JOURNAL_FILE, JournalReader, SqliteJournal};
use toolgate::runtime::{RuntimeBuilder, Session, ToolCall, ToolResult, ToolRuntime};
use toolgate::spec::load::LoadOptions;

const WAIT_LIMIT: Duration = Duration::from_secs(60);

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn config() -> PathBuf {
    repo().join("tests/fixtures/mcp_durable/toolgate.yaml")
}

struct Lab {
    ws: tempfile::TempDir,
    state: tempfile::TempDir,
}

impl Lab {
    fn new() -> Self {
        Lab {
            ws: tempfile::tempdir().unwrap(),
            state: tempfile::tempdir().unwrap(),
        }
    }

    fn runtime(&self) -> ToolRuntime {
        RuntimeBuilder::from_specs(&LoadOptions {
            paths: Vec::new(),
            config: Some(config()),
            cwd: repo(),
        })
        .unwrap()
        .workspace(self.ws.path())
        .state_dir(self.state.path())
        .shim(env!("CARGO_BIN_EXE_toolgate-shim"))
        .sqlite_journal()
        .build()
        .unwrap()
    }

    fn marks(&self) -> usize {
        std::fs::read_to_string(self.ws.path().join("marks"))
            .unwrap_or_default()
            .lines()
            .count()
    }

    fn journal(&self) -> PathBuf {
        self.state.path().join(JOURNAL_FILE)
    }

    /// `toolgate call mark_once` in a process of its own.
    fn spawn_call(&self, name: &str) -> Child {
        Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(["call", "mark_once", "--args"])
            .arg(json!({"name": name}).to_string())
            .arg("--config")
            .arg(config())
            .arg("--workspace")
            .arg(self.ws.path())
            .arg("--state-dir")
            .arg(self.state.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < WAIT_LIMIT, "gave up waiting until {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

async fn mark(rt: &ToolRuntime, session: &Session, id: &str, name: &str) -> ToolResult {
    let call = ToolCall::new(id, "mark_once", json!({"name": name}));
    rt.execute(vec![call], session, CancellationToken::new())
        .await
        .unwrap()
        .pop()
        .unwrap()
}

/// Makes `mark_once` calls of that name wait (until `hold(…, false)`).
fn hold(ws: &Path, name: &str, on: bool) {
    let p = ws.join(format!("hold-{name}"));
    if on {
        std::fs::write(p, "").unwrap();
    } else {
        let _ = std::fs::remove_file(p);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_runtimes_in_one_process_share_a_journal() {
    let lab = Lab::new();
    let a = lab.runtime();
    let b = lab.runtime();
    let sa = Session::new("a", "headless");
    let sb = Session::new("b", "headless");
    assert_eq!(mark(&a, &sa, "1", "one").await.status(), Status::Success);
    assert_eq!(mark(&b, &sb, "1", "two").await.status(), Status::Success);
    // Each sees the other's operations: the same call id in another session is another call,
    // the same session and call id replays whichever runtime asks.
    let r = mark(&b, &sa, "1", "one").await;
    assert_eq!((r.status(), r.replayed()), (Status::Success, true));
    assert_eq!(lab.marks(), 2);
    a.journal().flush().await.unwrap();
    b.journal().flush().await.unwrap();
    let reader = JournalReader::open(lab.journal()).unwrap();
    let sessions: Vec<String> = reader
        .list(&Default::default())
        .unwrap()
        .into_iter()
        .map(|c| format!("{} {}", c.session_id, c.status))
        .collect();
    assert_eq!(sessions, vec!["a success", "b success", "a success"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_process_keeps_its_operation_and_a_killed_ones_is_settled_by_the_next_claim() {
    let lab = Lab::new();
    hold(lab.ws.path(), "held", true);
    let mut other = lab.spawn_call("held");
    wait_until("the other process wrote its mark", || lab.marks() == 1);

    // This runtime opens the journal while the other process runs its call: recovery leaves
    // the call alone, and so does a person.
    let rt = lab.runtime();
    let report = rt.recover().await.unwrap();
    assert!(report.is_empty(), "{report}");
    let reader = JournalReader::open(lab.journal()).unwrap();
    let open = reader.unfinished().unwrap();
    assert_eq!(open.len(), 1);
    let op = open[0].start.operation_id.clone();
    assert_eq!(open[0].running_in, Some(other.id()));
    let settle = Settlement {
        operation_id: op.clone(),
        outcome: Settled::Failed,
        by: SettledBy::Person,
        reason: "too early".into(),
        external_reference: None,
        at: "2026-12-01T00:00:00Z".into(),
    };
    let e = rt.journal().settle(&settle).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "journal: operation {op} is still running in toolgate process {}; it can be settled once it has finished or that process has ended",
            other.id()
        )
    );
    // The same call here while it runs there: not run.
    let s = Session::new("here", "headless");
    let r = mark(&rt, &s, "c1", "held").await;
    assert_eq!(r.error_type(), Some(ErrorType::UnknownOutcome));
    assert!(
        r.summary().contains(&format!(
            "is still running in toolgate process {}",
            other.id()
        )),
        "{}",
        r.summary()
    );

    // The other process is killed. This runtime is not restarted: the next claim that meets
    // the operation settles it as recovery would (not idempotent: unknown_outcome) and the
    // call is refused, naming it.
    other.kill().unwrap();
    other.wait().unwrap();
    hold(lab.ws.path(), "held", false);
    let r = mark(&rt, &s, "c2", "held").await;
    assert_eq!(r.error_type(), Some(ErrorType::UnknownOutcome));
    assert!(
        r.summary()
            .contains(&format!("(operation {op}, call call-1 of session cli-"))
            && r.summary()
                .contains("was cut off by a crash before it reported a result"),
        "{}",
        r.summary()
    );
    let settled = reader.operation(&op).unwrap().unwrap();
    assert_eq!(
        (settled.state(), settled.settlements[0].by),
        (
            OperationState::Settled(Settled::UnknownOutcome),
            SettledBy::Recovery
        )
    );
    assert_eq!(lab.marks(), 1);

    // A person settles it from yet another process; the call runs.
    let journal = SqliteJournal::open(lab.journal()).unwrap();
    journal
        .settle(&Settlement {
            reason: "no trace of it".into(),
            ..settle
        })
        .await
        .unwrap();
    drop(journal);
    let r = mark(&rt, &s, "c3", "held").await;
    assert_eq!(r.status(), Status::Success, "{}", r.summary());
    assert_eq!(lab.marks(), 2);
}
