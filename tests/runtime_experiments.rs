//! The seed chapter's experiments 1–4 (§49), run through the real pipeline.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::time::Instant;

use common::{Fixture, Recorder, Scripted, call, run, run1};
use pretty_assertions::assert_eq;
use serde_json::json;
use toolgate::ir::{ErrorType, Status};
use toolgate::runtime::extend::ApprovalOutcome;
use toolgate::runtime::extend::HookPoint;
use toolgate::runtime::{MemoryJournal, Session};

/// Experiment 1: an unknown tool is an observation naming alternatives, not a crash.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exp1_unknown_tool_names_alternatives() {
    let f = Fixture::new();
    let rt = f.builder().build().unwrap();
    let s = Session::new("s", "interactive").with_toolset("coding");
    let r = run1(&rt, &s, call("c1", "find_symbol", json!({"name": "login"}))).await;
    assert_eq!(
        (r.status(), r.error_type()),
        (Status::Error, Some(ErrorType::UnknownTool))
    );
    assert_eq!(r.alternatives(), ["grep", "search_files", "glob"]);
    assert_eq!(
        r.projection().text,
        "find_symbol: error UNKNOWN_TOOL\nUnknown tool 'find_symbol'.\nAvailable alternatives: grep, search_files, glob.\nHint: Call one of the available tools instead; do not retry this name.\n"
    );
    // A tool that exists but is outside the session's toolset is just as unknown to the model.
    let r = run1(&rt, &s, call("c2", "echo", json!({"text": "x"}))).await;
    assert_eq!(r.error_type(), Some(ErrorType::UnknownTool));
    assert_eq!(
        r.summary(),
        "Tool 'echo' is not available in the toolset 'coding'."
    );
}

/// Experiment 2: start_line 100 / end_line 10 is refused by semantic validation, and provably
/// never executed: no BeforeExecute hook, no journal operation, no attempt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exp2_inverted_line_range_is_refused_before_execution() {
    let f = Fixture::new();
    f.write("src/login.py", "TIMEOUT = 5\n");
    let recorder = Arc::new(Recorder::default());
    let journal = Arc::new(MemoryJournal::default());
    let rt = f
        .builder()
        .hook(recorder.clone())
        .journal(journal.clone())
        .build()
        .unwrap();
    let s = Session::new("s", "interactive");
    let r = run1(
        &rt,
        &s,
        call(
            "c1",
            "read_file",
            json!({"path": "src/login.py", "start_line": 100, "end_line": 10}),
        ),
    )
    .await;
    assert_eq!(r.error_type(), Some(ErrorType::SemanticValidationError));
    assert_eq!(r.summary(), "start_line must not be greater than end_line.");
    assert_eq!(
        r.hint(),
        Some("Swap the two values, or omit end_line to read to the end.")
    );
    assert_eq!(r.attempts(), 0);
    assert_eq!(recorder.count(HookPoint::BeforeExecute), 0);
    assert_eq!(recorder.count(HookPoint::BeforePermission), 0);
    assert!(journal.operations().is_empty());
    let trace = rt.traces();
    assert_eq!(trace.len(), 1);
    assert_eq!(
        (trace[0].runtime, trace[0].permission.is_none()),
        (None, true)
    );
}

/// Experiment 3: three reads run concurrently. Wall time is compared only as an ordering:
/// one batch of three is faster than the same three calls one after another.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exp3_reads_run_concurrently() {
    let f = Fixture::new();
    let rt = f.builder().build().unwrap();
    let s = Session::new("s", "interactive");
    let reads = |n: usize| -> Vec<_> {
        ["a.py", "b.py", "c.py"]
            .iter()
            .enumerate()
            .map(|(i, p)| {
                call(
                    &format!("r{n}{i}"),
                    "slow_read",
                    json!({"path": p, "ms": 150}),
                )
            })
            .collect()
    };
    let t = Instant::now();
    let exec = rt.run(reads(1), &s, Default::default()).await.unwrap();
    let parallel = t.elapsed();
    assert_eq!(exec.plan.batches, vec![vec![0, 1, 2]]);
    assert!(exec.results.iter().all(|r| r.is_success()));
    let t = Instant::now();
    for c in reads(2) {
        assert!(run1(&rt, &s, c).await.is_success());
    }
    let serial = t.elapsed();
    assert!(
        parallel < serial,
        "parallel {parallel:?} should beat serial {serial:?}"
    );
    // The builtin read_file plans the same way.
    for p in ["a.py", "b.py", "c.py"] {
        f.write(p, "x\n");
    }
    let exec = rt
        .run(
            ["a.py", "b.py", "c.py"]
                .iter()
                .map(|p| call(p, "read_file", json!({"path": p})))
                .collect(),
            &s,
            Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(exec.plan.batches, vec![vec![0, 1, 2]]);
    assert_eq!(
        exec.plan.to_string(),
        "plan: 3 calls in 1 batch\n  batch 1 (parallel): #1 read_file [reads file:a.py], #2 read_file [reads file:b.py], #3 read_file [reads file:c.py]\n"
    );
}

/// Experiment 4: two edits of one file are serialized (and the second, built on the old
/// hash, is refused); edits of two files are not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exp4_edits_of_one_file_serialize_edits_of_two_do_not() {
    let f = Fixture::new();
    f.write("src/a.py", "TIMEOUT = 5\nRETRIES = 1\n");
    let recorder = Arc::new(Recorder::default());
    let approver = Scripted::new(ApprovalOutcome::AllowOnce);
    let rt = f
        .builder()
        .hook(recorder.clone())
        .approver(approver.clone())
        .build()
        .unwrap();
    let s = Session::new("s", "interactive");
    let hash = run1(&rt, &s, call("h", "read_file", json!({"path": "src/a.py"})))
        .await
        .structured()
        .unwrap()["content_hash"]
        .as_str()
        .unwrap()
        .to_owned();
    let patch = |id: &str, old: &str, new: &str| {
        call(
            id,
            "apply_patch",
            json!({"path": "src/a.py", "expected_hash": hash, "edits": [{"old_text": old, "new_text": new}]}),
        )
    };
    let exec = rt
        .run(
            vec![
                patch("e1", "TIMEOUT = 5", "TIMEOUT = 30"),
                patch("e2", "RETRIES = 1", "RETRIES = 3"),
            ],
            &s,
            Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(exec.plan.batches, vec![vec![0], vec![1]]);
    assert_eq!(exec.plan.edges[0].reason, "#1 writes file:src/a.py");
    let order: Vec<(HookPoint, String)> = recorder
        .events()
        .into_iter()
        .filter(|(p, id)| {
            matches!(
                p,
                HookPoint::BeforeExecute | HookPoint::AfterExecute | HookPoint::OnError
            ) && id.starts_with('e')
        })
        .collect();
    assert_eq!(
        order,
        vec![
            (HookPoint::BeforeExecute, "e1".into()),
            (HookPoint::AfterExecute, "e1".into()),
            (HookPoint::BeforeExecute, "e2".into()),
            (HookPoint::OnError, "e2".into()),
        ]
    );
    assert_eq!(exec.results[0].status(), Status::Success);
    assert_eq!(
        exec.results[1].error_type(),
        Some(ErrorType::PreconditionFailed)
    );
    assert_eq!(f.read("src/a.py"), "TIMEOUT = 30\nRETRIES = 1\n");

    // Two files: one batch, and the slow edits overlap (both start before either ends).
    let recorder = Arc::new(Recorder::default());
    let rt = f.builder().hook(recorder.clone()).build().unwrap();
    let exec = rt
        .run(
            vec![
                call("x1", "slow_edit", json!({"path": "src/a.py", "ms": 150})),
                call("x2", "slow_edit", json!({"path": "src/b.py", "ms": 150})),
                call("x3", "slow_edit", json!({"path": "src/a.py", "ms": 10})),
            ],
            &s,
            Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(exec.plan.batches, vec![vec![0, 1], vec![2]]);
    let points: Vec<HookPoint> = recorder
        .events()
        .into_iter()
        .filter(|(p, id)| {
            matches!(p, HookPoint::BeforeExecute | HookPoint::AfterExecute) && id != "x3"
        })
        .map(|(p, _)| p)
        .collect();
    assert_eq!(
        points,
        vec![
            HookPoint::BeforeExecute,
            HookPoint::BeforeExecute,
            HookPoint::AfterExecute,
            HookPoint::AfterExecute
        ]
    );
    assert_eq!(run(&rt, &s, vec![]).await.len(), 0);
}

/// Experiment 4 with two spellings of one file: `alias` is a link to `src`, so `src/a.py` and
/// `alias/a.py` are one resource. The edits serialize, and the second, built on the old hash,
/// is refused instead of silently undoing the first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exp4_two_spellings_of_one_file_serialize() {
    let f = Fixture::new();
    f.write("src/a.py", "TIMEOUT = 5\nRETRIES = 1\n");
    std::os::unix::fs::symlink("src", f.path().join("alias")).unwrap();
    let rt = f
        .builder()
        .approver(Scripted::new(ApprovalOutcome::AllowOnce))
        .build()
        .unwrap();
    let s = Session::new("s", "interactive");
    let hash = blake3::hash(b"TIMEOUT = 5\nRETRIES = 1\n")
        .to_hex()
        .to_string();
    let patch = |id: &str, path: &str, old: &str, new: &str| {
        call(
            id,
            "apply_patch",
            json!({"path": path, "expected_hash": hash, "edits": [{"old_text": old, "new_text": new}]}),
        )
    };
    let exec = rt
        .run(
            vec![
                patch("e1", "src/a.py", "TIMEOUT = 5", "TIMEOUT = 30"),
                patch("e2", "alias/a.py", "RETRIES = 1", "RETRIES = 3"),
            ],
            &s,
            Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(exec.plan.batches, vec![vec![0], vec![1]]);
    assert_eq!(exec.plan.edges[0].reason, "#1 writes file:src/a.py");
    assert_eq!(exec.results[0].status(), Status::Success);
    assert_eq!(
        exec.results[1].error_type(),
        Some(ErrorType::PreconditionFailed)
    );
    assert_eq!(f.read("src/a.py"), "TIMEOUT = 30\nRETRIES = 1\n");
}
