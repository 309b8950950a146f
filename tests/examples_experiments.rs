//! Runs the experiments example (`cargo run --example experiments`) through its modules and
//! checks the facts each experiment shows: error types, plans, processes gone, no repeated
//! side effect, the artifact equal to the full log.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../examples/experiments/exp1_unknown_tool.rs"]
mod exp1_unknown_tool;
#[path = "../examples/experiments/exp2_validation.rs"]
mod exp2_validation;
#[path = "../examples/experiments/exp3_concurrent_reads.rs"]
mod exp3_concurrent_reads;
#[path = "../examples/experiments/exp4_write_conflict.rs"]
mod exp4_write_conflict;
#[path = "../examples/experiments/exp5_timeout.rs"]
mod exp5_timeout;
#[path = "../examples/experiments/exp6_cancellation.rs"]
mod exp6_cancellation;
#[path = "../examples/experiments/exp7_crash.rs"]
mod exp7_crash;
#[path = "../examples/experiments/exp8_artifact.rs"]
mod exp8_artifact;
#[path = "../examples/experiments/lab.rs"]
mod lab;

use std::path::PathBuf;

use pretty_assertions::assert_eq;
use toolgate::ir::{ErrorType, Status};
use toolgate::runtime::extend::Settled;

/// The toolgate binary is the exec shim; experiment 7's crashing process is this test binary
/// running only [`exp7_crash_child`].
fn lab() -> lab::Lab {
    let me = std::env::current_exe().unwrap();
    lab::Lab {
        shim: PathBuf::from(env!("CARGO_BIN_EXE_toolgate")),
        crash_child: vec![
            me.into_os_string(),
            "exp7_crash_child".into(),
            "--exact".into(),
            "--nocapture".into(),
            "--test-threads=1".into(),
        ],
    }
}

/// Runs one experiment, returning its report and what it printed; fails on an engine error.
macro_rules! experiment {
    ($module:ident) => {{
        let mut printed = Vec::new();
        let report = $module::run(&lab(), &mut printed).await;
        let printed = String::from_utf8(printed).unwrap();
        let report = report.unwrap_or_else(|e| panic!("{e}\n{printed}"));
        if let Err(e) = report.check() {
            panic!("{e}\n{printed}");
        }
        for must in ["what it does: ", "what the model sees", "shows: "] {
            assert!(printed.contains(must), "missing {must:?} in:\n{printed}");
        }
        (report, printed)
    }};
}

/// Experiment 7's crashing process, when started by the experiment (a no-op otherwise).
#[test]
fn exp7_crash_child() {
    let (Some(root), Some(shim)) = (
        std::env::var_os(exp7_crash::CHILD_ENV),
        std::env::var_os(exp7_crash::SHIM_ENV),
    ) else {
        return;
    };
    exp7_crash::child_main(&PathBuf::from(root), &PathBuf::from(shim)).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exp1_unknown_tool_names_alternatives_and_the_next_call_heals() {
    let (r, _) = experiment!(exp1_unknown_tool);
    assert_eq!(r.unknown, Some(ErrorType::UnknownTool));
    assert_eq!(r.alternatives, ["grep", "search_files", "glob"]);
    assert!(
        r.unknown_text
            .starts_with("find_symbol: error UNKNOWN_TOOL\n")
    );
    assert!(
        r.unknown_text
            .contains("Available alternatives: grep, search_files, glob.")
    );
    assert_eq!(r.corrected, Status::Success);
    assert_eq!(r.found.as_deref(), Some("src/auth/login.py"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exp2_validation_refuses_before_execution() {
    let (r, printed) = experiment!(exp2_validation);
    assert_eq!(
        r.semantic.error_type,
        Some(ErrorType::SemanticValidationError)
    );
    assert_eq!(
        r.semantic.summary,
        "start_line must not be greater than end_line."
    );
    assert_eq!(r.schema.error_type, Some(ErrorType::InvalidArguments));
    // Every schema error names its argument.
    for arg in ["start_line", "end_line"] {
        assert!(r.schema.summary.contains(arg), "{}", r.schema.summary);
    }
    for refused in [&r.semantic, &r.schema] {
        assert_eq!(
            (
                refused.attempts,
                refused.backend,
                refused.permission_decided
            ),
            (0, None, false)
        );
    }
    assert_eq!(r.corrected, Some((10, 12)));
    assert!(printed.contains("Hint: Swap the two values, or omit end_line to read to the end."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exp3_reads_share_one_batch_and_overlap() {
    let (r, printed) = experiment!(exp3_concurrent_reads);
    assert_eq!(r.batches, [vec![0, 1, 2]]);
    assert!(r.all_read);
    // Orderings only: three sleeps in a row bound the serial time from below, and the
    // parallel turn must stay under that bound (check() holds the same).
    assert!(r.serial >= exp3_concurrent_reads::SLEEP * 3);
    assert!(r.parallel < exp3_concurrent_reads::SLEEP * 3);
    assert!(printed.contains("batch 1 (parallel): #1 slow_cat [reads file:a.txt], #2 slow_cat [reads file:b.txt], #3 slow_cat [reads file:c.txt]"), "{printed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exp4_edits_of_one_file_serialize_and_the_stale_one_is_refused() {
    let (r, printed) = experiment!(exp4_write_conflict);
    assert_eq!(r.batches, [vec![0], vec![1]]);
    assert_eq!(r.edge.as_deref(), Some("#1 writes file:config.py"));
    assert_eq!(
        r.outcomes,
        [
            (Status::Success, None),
            (Status::Error, Some(ErrorType::PreconditionFailed))
        ]
    );
    assert_eq!(r.after, "TIMEOUT = 30\nRETRIES = 1\n");
    assert!(
        printed.contains("apply_patch: error PRECONDITION_FAILED"),
        "{printed}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exp5_sleep_60_times_out_with_the_contracts_hint() {
    let (r, _) = experiment!(exp5_timeout);
    assert_eq!(
        (r.status, r.error_type),
        (Status::Timeout, Some(ErrorType::Timeout))
    );
    assert!(r.text.starts_with("job: timeout TIMEOUT\n"), "{}", r.text);
    assert!(
        r.text
            .contains("Hint: The command ran longer than its 1 second budget"),
        "{}",
        r.text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exp6_stop_ends_the_parent_and_the_child() {
    let (r, printed) = experiment!(exp6_cancellation);
    assert_eq!(
        (r.status, r.error_type),
        (Status::Cancelled, Some(ErrorType::Cancelled))
    );
    // TERM reached the shell (the tool does not run with the shim's blocked signal mask).
    assert_eq!(r.exit_code, Some(143), "{printed}");
    assert_eq!(r.pids.len(), 2, "{printed}");
    assert!(r.pids.iter().all(|p| !exp6_cancellation::alive(*p)));
    assert_eq!((r.alive.len(), r.leftovers.len()), (0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exp7_crash_after_the_side_effect_is_not_repeated() {
    let (r, printed) = experiment!(exp7_crash);
    assert_eq!(r.journal_after_crash, (true, false));
    assert_eq!(r.settled, [Settled::UnknownOutcome]);
    assert_eq!(
        r.resubmitted,
        (Status::UnknownOutcome, Some(ErrorType::UnknownOutcome))
    );
    assert!(
        r.resubmitted_text.contains("Verify before repeating"),
        "{printed}"
    );
    assert_eq!(r.notes, ["deploy v2 exp7:c1"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exp8_the_full_log_is_an_artifact_the_context_a_summary() {
    let (r, printed) = experiment!(exp8_artifact);
    assert!(
        r.log.len() > 90_000 && r.log.len() < 120_000,
        "{}",
        r.log.len()
    );
    assert_eq!(r.artifact_size, r.log.len() as u64);
    assert!(
        r.artifact_id
            .as_deref()
            .is_some_and(|id| id.starts_with("blake3:"))
    );
    assert!(
        r.text.contains(r.artifact_id.as_deref().unwrap()),
        "{}",
        r.text
    );
    assert!(r.text.len() < 8 * 1024, "{}", r.text.len());
    assert_eq!(r.stored, r.log.as_bytes());
    assert_eq!(r.paged, r.log);
    assert_eq!(r.pages, r.log.len().div_ceil(32 * 1024));
    assert!(
        printed.contains("Finished: 1600 modules, 0 errors"),
        "{printed}"
    );
}
