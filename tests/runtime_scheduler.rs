//! The scheduler across `execute()`s: calls of many concurrent turns (as `serve` makes them, one
//! `execute()` per request) and of two runtimes on one project (as two processes are) meet in
//! one admission table and one lock file. The tools are real processes
//! (`tests/fixtures/scheduler`): `probe` writes its start and end times and runs one at a time;
//! `append` is a read-modify-write that loses lines unless the writes of one file are ordered.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;
use std::time::Duration;

use common::{repo, shim};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolgate::ir::{ErrorType, Status};
use toolgate::runtime::WaitedBehind;
use toolgate::runtime::{RuntimeBuilder, Session, ToolCall, ToolResult, ToolRuntime};
use toolgate::spec::load::LoadOptions;

fn runtime(ws: &Path, state: &Path) -> ToolRuntime {
    RuntimeBuilder::from_specs(&LoadOptions {
        paths: vec![repo().join("tests/fixtures/scheduler")],
        config: Some(repo().join("tests/fixtures/scheduler/toolgate.yaml")),
        cwd: repo(),
    })
    .unwrap()
    .workspace(ws)
    .state_dir(state)
    .shim(shim())
    .build()
    .unwrap()
}

/// One call in its own `execute()` and session, as an MCP request is.
async fn one(
    rt: &ToolRuntime,
    session: &str,
    call: ToolCall,
    cancel: CancellationToken,
) -> ToolResult {
    let s = Session::new(session, "headless");
    let mut r = rt.execute(vec![call], &s, cancel).await.unwrap();
    r.pop().unwrap()
}

fn probe(id: &str, seconds: &str) -> ToolCall {
    ToolCall::new(id, "probe", json!({"out": id, "seconds": seconds}))
}

/// The (start, end) nanosecond pairs the probes wrote, by start.
pub fn intervals(ws: &Path) -> Vec<(u128, u128, String)> {
    let mut out: Vec<(u128, u128, String)> = std::fs::read_dir(ws.join("intervals"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let text = std::fs::read_to_string(e.path()).unwrap();
            let (s, t) = text.trim().split_once(' ').unwrap();
            (
                s.parse().unwrap(),
                t.parse().unwrap(),
                e.file_name().to_string_lossy().into_owned(),
            )
        })
        .collect();
    out.sort();
    out
}

/// Pairs of intervals that overlap.
pub fn overlaps(iv: &[(u128, u128, String)]) -> Vec<(String, String)> {
    iv.windows(2)
        .filter(|w| w[1].0 < w[0].1)
        .map(|w| (w[0].2.clone(), w[1].2.clone()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_concurrent_turns_of_a_max_one_tool_never_overlap() {
    let (ws, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let rt = runtime(ws.path(), state.path());
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..20 {
        let rt = rt.clone();
        tasks.spawn(async move {
            one(
                &rt,
                &format!("s{i}"),
                probe(&format!("p{i}"), "0.02"),
                CancellationToken::new(),
            )
            .await
        });
    }
    let mut results = Vec::new();
    while let Some(r) = tasks.join_next().await {
        results.push(r.unwrap());
    }
    for r in &results {
        assert_eq!(r.status(), Status::Success, "{}", r.projection().text);
        assert!(r.queued() <= r.duration());
    }
    let iv = intervals(ws.path());
    assert_eq!(iv.len(), 20);
    assert_eq!(overlaps(&iv), Vec::<(String, String)>::new());
    // Whoever waited says behind which probe calls: the group, never anything else.
    let traces = rt.traces();
    assert_eq!(traces.len(), 20);
    let waits: Vec<_> = traces.iter().filter_map(|t| t.wait.as_ref()).collect();
    assert!(
        !waits.is_empty(),
        "twenty calls of a max-1 group: some waited"
    );
    for w in &waits {
        assert!(!w.behind.is_empty());
        for b in &w.behind {
            assert_eq!(b.resource, "concurrency group probe (max 1)", "{b:?}");
            assert_eq!(b.tool.as_deref(), Some("probe"));
            assert!(!b.other_process);
        }
    }
    let queued: Vec<Duration> = results.iter().map(ToolResult::queued).collect();
    assert!(
        queued.iter().any(|q| *q >= Duration::from_millis(20)),
        "{queued:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writes_of_one_file_lose_nothing() {
    let (ws, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let rt = runtime(ws.path(), state.path());
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..40 {
        let rt = rt.clone();
        tasks.spawn(async move {
            let call = ToolCall::new(
                format!("a{i}"),
                "append",
                json!({"path": "log.txt", "line": format!("line-{i}")}),
            );
            one(&rt, &format!("s{i}"), call, CancellationToken::new()).await
        });
    }
    while let Some(r) = tasks.join_next().await {
        let r = r.unwrap();
        assert_eq!(r.status(), Status::Success, "{}", r.projection().text);
    }
    let mut lines: Vec<String> = std::fs::read_to_string(ws.path().join("log.txt"))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    lines.sort();
    let mut want: Vec<String> = (0..40).map(|i| format!("line-{i}")).collect();
    want.sort();
    assert_eq!(lines, want, "every append landed, none lost");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_call_can_be_cancelled_and_never_runs() {
    let (ws, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let rt = runtime(ws.path(), state.path());
    let first = tokio::spawn({
        let rt = rt.clone();
        async move { one(&rt, "s1", probe("first", "0.6"), CancellationToken::new()).await }
    });
    tokio::time::sleep(Duration::from_millis(150)).await;
    let cancel = CancellationToken::new();
    let waiting = tokio::spawn({
        let (rt, cancel) = (rt.clone(), cancel.clone());
        async move { one(&rt, "s2", probe("cancelled", "0.01"), cancel).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let third = tokio::spawn({
        let rt = rt.clone();
        async move { one(&rt, "s3", probe("third", "0.01"), CancellationToken::new()).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    cancel.cancel();
    let r = waiting.await.unwrap();
    assert_eq!(r.error_type(), Some(ErrorType::Cancelled));
    assert_eq!(
        r.summary(),
        "probe was cancelled while it waited behind probe call first (concurrency group probe (max 1)); it did not run"
    );
    assert!(first.await.unwrap().is_success());
    assert!(third.await.unwrap().is_success());
    let names: Vec<String> = intervals(ws.path()).into_iter().map(|i| i.2).collect();
    assert_eq!(names, ["first", "third"]);
    let trace = rt
        .traces()
        .into_iter()
        .find(|t| t.call_id == "cancelled")
        .unwrap();
    let wait = trace.wait.unwrap();
    assert_eq!(
        wait.behind,
        vec![WaitedBehind {
            session_id: Some("s1".into()),
            call_id: Some("first".into()),
            tool: Some("probe".into()),
            resource: "concurrency group probe (max 1)".into(),
            other_process: false,
        }]
    );
    assert!(wait.queued_us >= 40_000, "{wait:?}");
    // The third call waited behind both the first and the (then waiting) cancelled one.
    let third = rt
        .traces()
        .into_iter()
        .find(|t| t.call_id == "third")
        .unwrap();
    let behind: Vec<Option<String>> = third
        .wait
        .unwrap()
        .behind
        .into_iter()
        .map(|b| b.call_id)
        .collect();
    assert_eq!(
        behind,
        [Some("first".to_owned()), Some("cancelled".to_owned())]
    );
}

/// Two runtimes on one project — as two processes are — share the lock file: their probes
/// never overlap, and a call that waited for the other runtime says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_runtimes_on_one_project_share_the_lock_file() {
    let (ws, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = runtime(ws.path(), state.path());
    let b = runtime(ws.path(), state.path());
    assert_eq!(a.lock_file(), b.lock_file());
    assert_eq!(
        a.lock_file().unwrap(),
        state.path().join(toolgate::runtime::LOCK_FILE)
    );
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..16 {
        let rt = if i % 2 == 0 { a.clone() } else { b.clone() };
        tasks.spawn(async move {
            one(
                &rt,
                &format!("s{i}"),
                probe(&format!("p{i}"), "0.02"),
                CancellationToken::new(),
            )
            .await
        });
    }
    while let Some(r) = tasks.join_next().await {
        assert!(r.unwrap().is_success());
    }
    let iv = intervals(ws.path());
    assert_eq!(iv.len(), 16);
    assert_eq!(overlaps(&iv), Vec::<(String, String)>::new());
    let other: Vec<WaitedBehind> = a
        .traces()
        .into_iter()
        .chain(b.traces())
        .filter_map(|t| t.wait)
        .flat_map(|w| w.behind)
        .filter(|b| b.other_process)
        .collect();
    assert!(!other.is_empty(), "some call waited for the other runtime");
    for w in other {
        // What a call waits for across processes is the group; or, since the lock file gives
        // each path component 8 bits, another probe's file whose name shares its lock (a
        // collision only orders calls that need not be, never the other way round).
        assert!(
            w.resource == "concurrency group probe (max 1)"
                || w.resource.starts_with("file:intervals/"),
            "{w:?}"
        );
        assert_eq!(w.call_id, None);
    }
}

/// A lock folder that cannot hold the lock file stops the runtime from starting, naming the
/// file and what to do; `process_locks(false)` starts without one.
#[test]
fn a_lock_file_that_cannot_be_made_stops_build() {
    let (ws, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let not_a_folder = state.path().join("plain-file");
    std::fs::write(&not_a_folder, "").unwrap();
    let builder = || {
        RuntimeBuilder::from_specs(&LoadOptions {
            paths: vec![repo().join("tests/fixtures/scheduler")],
            config: Some(repo().join("tests/fixtures/scheduler/toolgate.yaml")),
            cwd: repo(),
        })
        .unwrap()
        .workspace(ws.path())
        .state_dir(state.path())
        .lock_dir(&not_a_folder)
    };
    let err = builder().build().unwrap_err();
    let toolgate::runtime::BuildError::Locks { path, source } = &err else {
        panic!("{err}");
    };
    assert_eq!(path, &not_a_folder.join(toolgate::runtime::LOCK_FILE));
    assert_eq!(
        err.to_string(),
        format!(
            "cannot use the lock file {} that orders calls across toolgate processes: {source}; give a writable state folder (`state_dir`, `--state-dir`) on a local file system, or a lock folder (TOOLGATE_LOCK_DIR)",
            path.display()
        )
    );
    let rt = builder().process_locks(false).build().unwrap();
    assert_eq!(rt.lock_file(), None);
}
