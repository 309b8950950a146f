//! Runs the login-timeout example (`cargo run --example login_timeout`) through its driver and
//! checks the story's facts: the tests go from failing to passing, the diff touches only the
//! approved file, and the patch outside the approval card was refused. Needs git and pytest
//! (skipped outside CI without them: `common::toolchain`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
#[path = "../examples/login-timeout/driver.rs"]
mod driver;

use std::path::PathBuf;

use common::toolchain::{Toolchain, require};
use pretty_assertions::assert_eq;
use toolgate::ir::{ErrorType, Status};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_timeout_example_fixes_the_bug_inside_the_card() {
    if !require(&[Toolchain::Git, Toolchain::Pytest]) {
        return;
    }
    let options = driver::Options::bundled(PathBuf::from(env!("CARGO_BIN_EXE_toolgate")));
    let mut printed = Vec::new();
    let result = driver::run(&options, &mut printed).await;
    let printed = String::from_utf8(printed).unwrap();
    let report = result.unwrap_or_else(|e| panic!("{e}\n{printed}"));

    // Red, then green; the same command both times.
    let [red, green] = &report.tests[..] else {
        panic!("two test runs expected:\n{printed}");
    };
    assert_eq!(red.command, "python3 -m pytest -rA");
    assert_eq!(
        (red.exit_code, red.summary.as_str()),
        (1, "3 failed, 2 passed")
    );
    assert_eq!(
        red.failed,
        [
            "tests/test_session.py::test_session_is_active_after_one_minute",
            "tests/test_session.py::test_session_is_active_just_before_the_timeout",
            "tests/test_session.py::test_activity_keeps_the_user_logged_in",
        ]
    );
    assert_eq!(green.command, red.command);
    assert_eq!((green.exit_code, green.summary.as_str()), (0, "5 passed"));

    // The person was asked twice: the card was approved, the test edit outside it refused.
    let asked: Vec<(&str, Vec<String>, bool)> = report
        .approvals
        .iter()
        .map(|a| (a.call_id.as_str(), a.card.clone(), a.approved))
        .collect();
    assert_eq!(
        asked,
        [
            ("c5", vec!["auth/session.py".to_owned()], true),
            ("c6", vec!["tests/test_session.py".to_owned()], false),
        ]
    );
    let c6 = report.outcome("c6").unwrap();
    assert_eq!(
        (c6.status, c6.error_type),
        (Status::Denied, Some(ErrorType::UserDenied))
    );
    assert_eq!(report.outcome("c5").unwrap().status, Status::Success);

    // Only the approved file changed, by exactly the fix.
    assert_eq!(report.changed_files, ["auth/session.py"]);
    let changed: Vec<&str> = report
        .diff
        .lines()
        .filter(|l| {
            (l.starts_with('+') || l.starts_with('-'))
                && !l.starts_with("+++")
                && !l.starts_with("---")
        })
        .collect();
    assert_eq!(
        changed,
        [
            "-        return self.idle_seconds(now) > LOGIN_TIMEOUT_MINUTES",
            "+        return self.idle_seconds(now) > LOGIN_TIMEOUT_MINUTES * 60",
        ]
    );
    report.check().unwrap();

    // What the model saw is printed turn by turn.
    for expected in [
        "=== turn 5 ===",
        "  | search_files: success",
        "  | apply_patch: denied USER_DENIED",
        // Failing tests are the result the model asked for, not a tool failure.
        "  | run_tests: success\n  | 3 failed, 2 passed",
        "[approval] files this change may touch: auth/session.py",
        "=== for review ===",
    ] {
        assert!(
            printed.contains(expected),
            "missing {expected:?} in:\n{printed}"
        );
    }
}
