//! The `tests` formatter on real runners: small fixture projects with failing tests
//! (`tests/fixtures/tests/`) run through `run_tests` (pytest, cargo test) and through test tools
//! with the same result contract (go test, jest), inside the workspace-write sandbox.
//!
//! pytest comes from the venv of `scripts/test`, jest from `npm ci` into the fixture, Go from the
//! system; a test whose toolchain is absent is skipped outside CI and fails in CI
//! (`common::toolchain`), where `.ci/run` installs them all.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;

use common::toolchain::{Toolchain, require};
use common::{Fixture, call, repo, run1};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use toolgate::ir::Status;
use toolgate::runtime::{Session, ToolResult};

fn session() -> Session {
    Session::new("s", "ci")
}

/// Copies a fixture project into the workspace. `node_modules`, which is large, is hard-linked
/// file by file where the file system allows: a symbolic link to the repository's copy would
/// lead outside the workspace, which the tool's sandbox does not show.
fn copy_project(name: &str, to: &Path) {
    let from = repo().join("tests/fixtures/tests").join(name);
    copy_dir(&from, to, false);
}

fn copy_dir(from: &Path, to: &Path, link: bool) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let kind = e.file_type().unwrap();
        if kind.is_dir() {
            copy_dir(&src, &dst, link || e.file_name() == "node_modules");
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src).unwrap(), &dst).unwrap();
        } else if !(link && std::fs::hard_link(&src, &dst).is_ok()) {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// The counts and failing names of a result, and its failures' details.
fn report(r: &ToolResult) -> (Value, Vec<String>) {
    let s = r
        .structured()
        .unwrap_or_else(|| panic!("{}", r.projection().text));
    let counts = json!({
        "passed": s["passed"], "failed": s["failed"], "skipped": s["skipped"],
        "summary": s["summary"],
        "names": s["failures"].as_array().unwrap().iter().map(|f| f["name"].clone()).collect::<Vec<_>>(),
    });
    let details = s["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["details"].as_str().unwrap().to_owned())
        .collect();
    (counts, details)
}

/// A suite that ran with failing tests is a success whose summary is the counts: the failures
/// are the result (and nothing is retried).
fn assert_failing_suite(r: &ToolResult, summary: &str) {
    assert_eq!(
        (r.status(), r.error_type(), r.summary()),
        (Status::Success, None, summary),
        "{}",
        r.projection().text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pytest_suite() {
    if !require(&[Toolchain::Pytest]) {
        return;
    }
    let f = Fixture::new();
    copy_project("pytest_project", f.path());
    let rt = f.builder().build().unwrap();
    let r = run1(
        &rt,
        &session(),
        call("t", "run_tests", json!({"runner": "pytest"})),
    )
    .await;
    assert_failing_suite(&r, "2 failed, 2 passed, 1 skipped");
    let (counts, details) = report(&r);
    assert_eq!(
        counts,
        json!({
            "passed": 2, "failed": 2, "skipped": 1,
            "summary": "2 failed, 2 passed, 1 skipped",
            "names": ["tests/test_calc.py::test_divide", "tests/test_calc.py::test_divide_by_zero"],
        })
    );
    assert!(details[0].contains("assert 2.0 == 3.5"), "{}", details[0]);
    assert!(details[1].contains("ZeroDivisionError"), "{}", details[1]);
    assert_eq!(r.structured().unwrap()["command"], "python3 -m pytest -rA");
    assert_eq!(r.structured().unwrap()["exit_code"], 1);
    // The model reads the failures first.
    assert!(
        r.output()
            .unwrap()
            .starts_with("FAILED tests/test_calc.py::test_divide\n"),
        "{}",
        r.output().unwrap()
    );
    // Selecting the passing tests gives a success whose result matches the contract.
    let r = run1(
        &rt,
        &session(),
        call(
            "t",
            "run_tests",
            json!({"runner": "pytest", "tests": ["tests/test_calc.py::test_add"]}),
        ),
    )
    .await;
    assert_eq!((r.status(), r.summary()), (Status::Success, "1 passed"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cargo_test_suite() {
    // cargo is there: it is running this test.
    let f = Fixture::new();
    copy_project("cargo_project", f.path());
    let rt = f.builder().build().unwrap();
    let r = run1(
        &rt,
        &session(),
        call("t", "run_tests", json!({"runner": "cargo"})),
    )
    .await;
    assert_failing_suite(&r, "2 failed, 1 passed, 1 skipped");
    let (counts, details) = report(&r);
    assert_eq!(
        counts,
        json!({
            "passed": 1, "failed": 2, "skipped": 1,
            "summary": "2 failed, 1 passed, 1 skipped",
            "names": ["tests::panics_on_purpose", "tests::subtracts_negative"],
        })
    );
    assert!(
        details[0].contains("boom: the fixture fails here"),
        "{}",
        details[0]
    );
    assert!(
        details[1].contains("sub(1, 3) should be 2") && details[1].contains("left: -2"),
        "{}",
        details[1]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_test_suite() {
    if !require(&[Toolchain::Go]) {
        return;
    }
    let f = Fixture::new();
    copy_project("go_project", f.path());
    let rt = f.builder().build().unwrap();
    let r = run1(&rt, &session(), call("t", "run_go_tests", json!({}))).await;
    assert_failing_suite(&r, "1 failed, 1 passed, 1 skipped");
    let (counts, details) = report(&r);
    assert_eq!(
        counts,
        json!({
            "passed": 1, "failed": 1, "skipped": 1,
            "summary": "1 failed, 1 passed, 1 skipped",
            "names": ["TestSubNegative"],
        })
    );
    assert_eq!(details[0], "calc_test.go:13: Sub(1, 3) = -2, want 2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jest_suite() {
    if !require(&[Toolchain::Node, Toolchain::Jest]) {
        return;
    }
    let f = Fixture::new();
    copy_project("jest_project", f.path());
    let rt = f.builder().build().unwrap();
    let r = run1(&rt, &session(), call("t", "run_js_tests", json!({}))).await;
    assert_failing_suite(&r, "1 failed, 1 passed, 1 skipped");
    let (counts, details) = report(&r);
    assert_eq!(
        counts,
        json!({
            "passed": 1, "failed": 1, "skipped": 1,
            "summary": "1 failed, 1 passed, 1 skipped",
            "names": ["calc › subtracts negative"],
        })
    );
    assert!(
        details[0].contains("Expected: 2\nReceived: -2"),
        "{}",
        details[0]
    );
}
