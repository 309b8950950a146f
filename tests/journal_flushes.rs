//! One flush per side-effecting call: the start is flushed before the body runs, the finish is
//! committed (visible to any other process, so it survives a process crash) without a flush of
//! its own; concurrent starts share their flush.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolgate::ir::Status;
use toolgate::runtime::extend::{HandlerContext, HandlerOutput, Journal};
use toolgate::runtime::{JOURNAL_FILE, RuntimeBuilder, Session, SqliteJournal, ToolCall};
use toolgate::spec::load::LoadOptions;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn runtime(ws: &Path, state: &Path, journal: Arc<SqliteJournal>) -> toolgate::runtime::ToolRuntime {
    let nothing = |_ctx: HandlerContext, _args: Value| async move { Ok(HandlerOutput::text("")) };
    let mut b = RuntimeBuilder::from_specs(&LoadOptions {
        paths: vec![
            repo().join("tool-specs"),
            repo().join("tests/fixtures/runtime"),
        ],
        config: Some(repo().join("tests/fixtures/runtime/toolgate.yaml")),
        cwd: repo(),
    })
    .unwrap()
    .workspace(ws)
    .state_dir(state)
    .journal(journal);
    for tool in [
        "echo_handler",
        "slow_edit",
        "slow_read",
        "flaky",
        "send_note",
    ] {
        b = b.bind(tool, nothing);
    }
    b.build().unwrap()
}

fn edit(id: &str, file: usize) -> ToolCall {
    ToolCall::new(
        id,
        "slow_edit",
        json!({"path": format!("f{file}.txt"), "ms": 0}),
    )
}

/// Finished operations as another connection (another process) sees them.
fn finished_elsewhere(state: &Path) -> i64 {
    let c = rusqlite::Connection::open_with_flags(
        state.join(JOURNAL_FILE),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    c.query_row(
        "SELECT count(*) FROM operations WHERE state = 'success'",
        [],
        |r| r.get(0),
    )
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sequential_side_effecting_call_pays_one_flush() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let journal = Arc::new(SqliteJournal::open(state.path().join(JOURNAL_FILE)).unwrap());
    let rt = runtime(ws.path(), state.path(), journal.clone());
    let session = Session::new("s", "interactive");
    // Recovery and the first claim's look-ups happen once; count from a warm runtime.
    let r = rt
        .execute(vec![edit("warm", 0)], &session, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(r[0].status(), Status::Success);
    let before = journal.commit_stats();
    for i in 0..20 {
        let r = rt
            .execute(
                vec![edit(&format!("c{i}"), 0)],
                &session,
                CancellationToken::new(),
            )
            .await
            .unwrap();
        assert_eq!(r[0].status(), Status::Success, "{}", r[0].summary());
        // Returned means committed: another process already sees it finished, flush or not.
        assert_eq!(finished_elsewhere(state.path()), i + 2);
    }
    let after = journal.commit_stats();
    assert_eq!(
        after.flushes - before.flushes,
        20,
        "one flush per call (the start): {before:?} -> {after:?}"
    );
    assert!(
        after.commits - before.commits >= 40,
        "{before:?} -> {after:?}"
    );
    // The exit's flush (`call`, `run`, `serve`) is a flushed commit even with nothing queued:
    // it fsyncs the write-ahead log, which carries the last finish to the disk.
    journal.flush().await.unwrap();
    assert_eq!(journal.commit_stats().flushes, after.flushes + 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_starts_share_their_flushes() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let journal = Arc::new(SqliteJournal::open(state.path().join(JOURNAL_FILE)).unwrap());
    let rt = runtime(ws.path(), state.path(), journal.clone());
    let session = Session::new("s", "interactive");
    let before = journal.commit_stats();
    let calls = (0..16).map(|i| edit(&format!("c{i}"), i)).collect();
    let r = rt
        .run(calls, &session, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(r.plan.batches.len(), 1);
    assert!(r.results.iter().all(|r| r.status() == Status::Success));
    let after = journal.commit_stats();
    assert!(
        after.flushes - before.flushes < 16,
        "sixteen concurrent starts took a flush each: {before:?} -> {after:?}"
    );
    assert_eq!(finished_elsewhere(state.path()), 16);
}

/// A start of a side-effecting call (`op-N`, key `s:cN`).
fn start(n: usize) -> toolgate::runtime::extend::OperationStart {
    use toolgate::ir::{Decision, Effect, Idempotency};
    use toolgate::policy::DecisionSource;
    use toolgate::runtime::extend::{KeySource, OperationStart, PermissionRecord, Resolution};
    let canonical = toolgate::runtime::extend::canonical_json(&json!({"n": n}));
    OperationStart {
        operation_id: format!("op-{n}"),
        session_id: "s".into(),
        call_id: format!("c{n}"),
        tool: "append_line".into(),
        tool_version: 1,
        schema_version: "blake3:0000000000000000".into(),
        effect: Effect::LocalWrite,
        idempotency: Idempotency::Idempotent,
        idempotency_key: format!("s:c{n}"),
        key_source: KeySource::Derived,
        arguments_hash: blake3::hash(canonical.as_bytes()).to_hex().to_string(),
        arguments: canonical,
        permission: PermissionRecord {
            decision: Decision::Allow,
            source: DecisionSource::Default,
            reason: None,
            chain: Vec::new(),
            restricted_by: None,
            resolution: Resolution::Policy,
            granted: true,
        },
        scheduler_batch: Some(0),
        started_at: "2026-12-01T00:00:00Z".into(),
        principal: None,
    }
}

/// Starts announced together (a batch's side-effecting calls) share one flush, whatever order
/// the writer receives them in; an announced start that never comes delays the others at most
/// a moment, and is not waited for again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn announced_starts_share_one_flush() {
    let state = tempfile::tempdir().unwrap();
    let journal = SqliteJournal::open(state.path().join(JOURNAL_FILE)).unwrap();
    let ops: Vec<_> = (0..4).map(start).collect();
    let before = journal.commit_stats();
    journal.expect_starts(4);
    let (a, b, c, d) = tokio::join!(
        journal.claim(&ops[0]),
        journal.claim(&ops[1]),
        journal.claim(&ops[2]),
        journal.claim(&ops[3])
    );
    for r in [a, b, c, d] {
        assert!(matches!(
            r.unwrap(),
            toolgate::runtime::extend::Claim::Started
        ));
    }
    let after = journal.commit_stats();
    assert_eq!(
        after.flushes - before.flushes,
        1,
        "four announced starts: {before:?} -> {after:?}"
    );

    // Two announced, one comes: it is committed after the wait, and the next start alone does
    // not wait again.
    let more: Vec<_> = (4..6).map(start).collect();
    journal.expect_starts(2);
    journal.claim(&more[0]).await.unwrap();
    let t = std::time::Instant::now();
    journal.claim(&more[1]).await.unwrap();
    assert!(
        t.elapsed() < std::time::Duration::from_millis(500),
        "{:?}",
        t.elapsed()
    );
    assert_eq!(journal.commit_stats().flushes, after.flushes + 2);
}
