//! Execution: command tool timeouts and cancellation kill the process group, retries stay inside
//! idempotency and budget, idempotency keys replay instead of re-running, the journal records
//! side effects, handler panics and MCP tools become results, traces and metrics are kept.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use common::toolchain::{Toolchain, require};
use common::{Counters, Fixture, bind_handlers, call, run1};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolgate::ir::{Decision, Effect, ErrorType, Idempotency, Status};
use toolgate::policy::DecisionSource;
use toolgate::runtime::extend::{Journal, KeySource, OperationStart};
use toolgate::runtime::extend::{PermissionRecord, Resolution};
use toolgate::runtime::{MemoryJournal, RuntimeBuilder, Session};

fn session() -> Session {
    Session::new("s", "interactive")
}

/// Whether a process is gone (or a zombie nobody reaped yet), waiting a little for the kill.
async fn gone(pid: &str) -> bool {
    for _ in 0..40 {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat)
                if stat
                    .rsplit(')')
                    .next()
                    .is_some_and(|r| r.trim_start().starts_with('Z')) =>
            {
                return true;
            }
            Ok(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeout_kills_the_process_group() {
    let f = Fixture::new();
    let rt = f.builder().build().unwrap();
    let r = run1(
        &rt,
        &session(),
        call("c", "sleeper", json!({"pidfile": "pid"})),
    )
    .await;
    assert_eq!(
        (r.status(), r.error_type()),
        (Status::Timeout, Some(ErrorType::Timeout))
    );
    assert_eq!(
        r.summary(),
        "sleeper ran longer than its 300ms budget and was stopped"
    );
    assert!(r.duration() < Duration::from_secs(30));
    let pid = f.read("pid").trim().to_owned();
    assert!(
        gone(&pid).await,
        "background process {pid} survived the timeout"
    );
}

/// `toolgate` itself serves as the shim too (`toolgate __exec-shim`), for harnesses that ship
/// only the one binary: the same timeout kills the same background process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_toolgate_binary_serves_as_the_shim_too() {
    let f = Fixture::new();
    let rt = f
        .builder()
        .shim(env!("CARGO_BIN_EXE_toolgate"))
        .build()
        .unwrap();
    let r = run1(
        &rt,
        &session(),
        call("c", "sleeper", json!({"pidfile": "pid"})),
    )
    .await;
    assert_eq!(r.error_type(), Some(ErrorType::Timeout), "{}", r.summary());
    let pid = f.read("pid").trim().to_owned();
    assert!(
        gone(&pid).await,
        "background process {pid} survived the timeout"
    );
}

/// Run by hand, `toolgate-shim` says what it is for and exits 2.
#[test]
fn the_shim_binary_refuses_to_run_by_hand() {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_toolgate-shim"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not run by hand"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_reaches_the_process() {
    let f = Fixture::new();
    let rt = f.builder().build().unwrap();
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    let pidfile = f.path().join("pid");
    tokio::spawn(async move {
        while !pidfile.exists() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        stop.cancel();
    });
    // The sleeper's own timeout is 300 ms; cancel as soon as the pid file appears.
    let r = rt
        .execute(
            vec![call("c", "sleeper", json!({"pidfile": "pid"}))],
            &session(),
            cancel,
        )
        .await
        .unwrap();
    assert!(
        matches!(r[0].status(), Status::Cancelled | Status::Timeout),
        "{:?} {:?}: {}",
        r[0].status(),
        r[0].error_type(),
        r[0].summary()
    );
    let pid = f.read("pid").trim().to_owned();
    assert!(gone(&pid).await);
}

/// A stop sends TERM first, and the tool receives it: the shim's blocked signal mask must not
/// leak into the tool (it did: TERM stayed blocked and every stop ended in SIGKILL).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_tool_gets_term_before_kill() {
    let f = Fixture::new();
    let rt = f.builder().build().unwrap();
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    let ready = f.path().join("ready");
    tokio::spawn(async move {
        while !ready.exists() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        stop.cancel();
    });
    let command = "trap 'echo got TERM > term; exit 0' TERM; \
                   grep SigBlk /proc/self/status > mask; touch ready; \
                   while :; do sleep 0.05; done";
    let r = rt
        .execute(
            vec![call("c", "shell", json!({"command": command}))],
            &session(),
            cancel,
        )
        .await
        .unwrap();
    assert_eq!(r[0].status(), Status::Cancelled);
    assert_eq!(f.read("mask"), "SigBlk:\t0000000000000000\n");
    assert_eq!(f.read("term"), "got TERM\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retries_stay_inside_idempotency_and_budget() {
    let f = Fixture::new();
    let counters = Arc::new(Counters::default());
    let journal = Arc::new(MemoryJournal::default());
    let rt = bind_handlers(
        RuntimeBuilder::from_bundle(common::bundle(), env!("CARGO_MANIFEST_DIR"))
            .workspace(f.path())
            .state_dir(f.state.path()),
        counters.clone(),
    )
    .journal(journal.clone())
    .build()
    .unwrap();
    let r = run1(
        &rt,
        &session(),
        call("c", "flaky", json!({"fail_times": 2})),
    )
    .await;
    assert_eq!(
        (r.status(), r.attempts(), r.output()),
        (Status::Success, 3, Some("ok on attempt 3"))
    );
    let r = run1(
        &rt,
        &session(),
        call("c", "flaky", json!({"fail_times": 5})),
    )
    .await;
    assert_eq!(
        (r.error_type(), r.attempts()),
        (Some(ErrorType::NetworkError), 3)
    );
    assert_eq!(counters.flaky_calls.load(Ordering::SeqCst), 6);
    // Non-idempotent work is retried only because it carries an idempotency key; every
    // attempt is journaled under one operation.
    let r = run1(
        &rt,
        &session(),
        call(
            "n",
            "send_note",
            json!({"request_id": "r0", "text": "x", "fail": true}),
        ),
    )
    .await;
    assert_eq!(
        (r.error_type(), r.attempts()),
        (Some(ErrorType::NetworkError), 3)
    );
    let ops = journal.operations();
    assert_eq!(
        ops.len(),
        1,
        "network reads are not journaled, external side effects are"
    );
    assert_eq!(ops[0].attempts.len(), 3);
    assert_eq!(ops[0].attempts[0].retry_after_ms, Some(10));
    assert_eq!(ops[0].finish.as_ref().unwrap().status, Status::Error);
    let m = rt.metrics();
    assert_eq!(
        (
            m.count("flaky", Status::Success),
            m.count("flaky", Status::Error)
        ),
        (1, 1)
    );
    assert!(m.retries.contains(&("flaky".to_owned(), 4)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idempotency_key_replays_and_never_runs_twice() {
    let f = Fixture::new();
    let counters = Arc::new(Counters::default());
    let journal = Arc::new(MemoryJournal::default());
    let rt = bind_handlers(
        RuntimeBuilder::from_bundle(common::bundle(), env!("CARGO_MANIFEST_DIR"))
            .workspace(f.path())
            .state_dir(f.state.path()),
        counters.clone(),
    )
    .journal(journal.clone())
    .build()
    .unwrap();
    let note = |id: &str, key: &str| {
        call(
            id,
            "send_note",
            json!({"request_id": key, "text": "deploy done"}),
        )
    };
    let first = run1(&rt, &session(), note("c1", "r1")).await;
    assert_eq!(first.output(), Some("delivered #1 with key r1"));
    let again = run1(&rt, &session(), note("c2", "r1")).await;
    assert!(again.replayed());
    assert_eq!(
        (again.call_id(), again.output()),
        ("c2", Some("delivered #1 with key r1"))
    );
    assert!(
        again
            .projection()
            .text
            .contains("the tool did not run again")
    );
    assert_eq!(counters.notes_delivered.load(Ordering::SeqCst), 1);

    // A crash left an operation with key r2 started and unfinished: the outcome is unknown,
    // and the call is not run again.
    let start = OperationStart {
        operation_id: "op-crashed".into(),
        session_id: "old".into(),
        call_id: "c0".into(),
        tool: "send_note".into(),
        tool_version: 1,
        schema_version: String::new(),
        effect: Effect::ExternalSideEffect,
        idempotency: Idempotency::NonIdempotent,
        idempotency_key: "r2".into(),
        key_source: KeySource::Spec,
        arguments_hash: String::new(),
        arguments: "{}".into(),
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
        started_at: "2026-11-30T00:00:00Z".into(),
        principal: None,
    };
    journal.start(&start).await.unwrap();
    let r = run1(&rt, &session(), note("c3", "r2")).await;
    assert_eq!(
        (r.status(), r.error_type()),
        (Status::UnknownOutcome, Some(ErrorType::UnknownOutcome))
    );
    assert_eq!(counters.notes_delivered.load(Ordering::SeqCst), 1);
    assert_eq!(journal.unfinished().await.unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panics_and_mcp_tools_are_results() {
    let f = Fixture::new();
    let rt = f.builder().build().unwrap();
    let r = run1(
        &rt,
        &session(),
        call("c", "slow_read", json!({"path": "panic", "ms": 0})),
    )
    .await;
    assert_eq!(
        (r.error_type(), r.summary()),
        (
            Some(ErrorType::RuntimeException),
            "the handler of `slow_read` panicked"
        )
    );
    let r = run1(
        &rt,
        &session(),
        call("c", "remote_search", json!({"query": "x"})),
    )
    .await;
    assert_eq!(
        (r.error_type(), r.summary()),
        (
            Some(ErrorType::ProcessError),
            "the MCP server `index` could not be started (index-server --stdio): No such file or directory (os error 2)"
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_call_leaves_a_trace_record() {
    let f = Fixture::new();
    f.write("a.txt", "hello\n");
    let rt = f
        .builder()
        .approver(common::Scripted::new(
            toolgate::runtime::extend::ApprovalOutcome::AllowOnce,
        ))
        .build()
        .unwrap();
    let s = session();
    let _ = rt
        .execute(
            vec![
                call("r", "read_file", json!({"path": "a.txt"})),
                call("w", "write_file", json!({"path": "b.txt", "content": "x"})),
                call("u", "nope", json!({})),
            ],
            &s,
            CancellationToken::new(),
        )
        .await
        .unwrap();
    let mut t = rt.traces();
    // The two authorized calls ran in one batch, so they finish in either order.
    t.sort_by(|a, b| a.call_id.cmp(&b.call_id));
    let summary: Vec<_> = t
        .iter()
        .map(|r| {
            (
                r.call_id.as_str(),
                r.tool.as_str(),
                r.status,
                r.scheduler_batch,
                r.runtime,
                r.operation_id.is_some(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (
                "r",
                "read_file",
                Status::Success,
                Some(0),
                Some("builtin"),
                false
            ),
            ("u", "nope", Status::Error, None, None, false),
            (
                "w",
                "write_file",
                Status::Success,
                Some(0),
                Some("builtin"),
                true
            ),
        ]
    );
    let w = &t[2];
    assert_eq!(w.effect, Some(Effect::LocalWrite));
    assert_eq!(w.arguments_hash.len(), 64);
    assert_eq!(
        w.permission.as_ref().unwrap().resolution,
        Resolution::Approver {
            outcome: toolgate::runtime::extend::ApprovalOutcome::AllowOnce
        }
    );
    assert!(w.output_size > 0);
    assert!(w.start_time <= w.end_time);
    assert_eq!(w.retry_count, 0);
}

/// The argv template of git_diff: `when` adds `--staged` only when asked, `each` adds one
/// argument per path, and a hostile path stays one argument.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn argv_templates_when_and_each() {
    if !require(&[Toolchain::Git]) {
        return;
    }
    let f = Fixture::new();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(f.path())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    f.write("a.py", "A = 1\n");
    f.write("b.py", "B = 1\n");
    git(&["add", "."]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-qm",
        "init",
    ]);
    f.write("a.py", "A = 2\n");
    f.write("b.py", "B = 2\n");
    let rt = f.builder().build().unwrap();
    let r = run1(
        &rt,
        &session(),
        call("d", "git_diff", json!({"paths": ["a.py"]})),
    )
    .await;
    assert!(r.is_success(), "{}", r.projection().text);
    let out = r.output().unwrap();
    assert!(out.contains("+A = 2") && !out.contains("B = 2"), "{out}");
    let r = run1(
        &rt,
        &session(),
        call("d", "git_diff", json!({"staged": true})),
    )
    .await;
    assert_eq!(r.output(), None, "nothing is staged");
    let r = run1(
        &rt,
        &session(),
        call("d", "git_diff", json!({"paths": ["a.py; touch pwned"]})),
    )
    .await;
    assert!(r.is_success());
    assert!(!f.path().join("pwned").exists());
}
