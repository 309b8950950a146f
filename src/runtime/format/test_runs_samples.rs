//! The `tests` parsers on output shaped like each runner's (the integration tests run the real
//! runners).

use pretty_assertions::assert_eq;

use super::*;

const PYTEST: &str = "\
============================= test session starts ==============================
collected 4 items

tests/test_calc.py .F.s                                                  [100%]

=================================== FAILURES ===================================
_________________________________ test_divide __________________________________

    def test_divide():
>       assert divide(6, 3) == 3
E       assert 2.0 == 3
E        +  where 2.0 = divide(6, 3)

tests/test_calc.py:9: AssertionError
=========================== short test summary info ============================
PASSED tests/test_calc.py::test_add
FAILED tests/test_calc.py::test_divide - assert 2.0 == 3
SKIPPED [1] tests/test_calc.py:12: not ready
==================== 1 failed, 2 passed, 1 skipped in 0.05s ====================
";

#[test]
fn pytest_counts_names_and_key_lines() {
    assert_eq!(
        parse(PYTEST),
        Some(TestReport {
            runner: "pytest",
            passed: 2,
            failed: 1,
            skipped: 1,
            failures: vec![Failure {
                name: "tests/test_calc.py::test_divide".into(),
                details: "E       assert 2.0 == 3\nE        +  where 2.0 = divide(6, 3)\ntests/test_calc.py:9: AssertionError".into(),
            }],
        })
    );
}

const CARGO: &str = "\
running 3 tests
test tests::adds ... ok
test tests::ignored ... ignored
test tests::subtracts ... FAILED

failures:

---- tests::subtracts stdout ----

thread 'tests::subtracts' panicked at src/lib.rs:12:9:
assertion `left == right` failed
  left: 1
 right: 2
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    tests::subtracts

test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s
";

#[test]
fn cargo_counts_names_and_panics() {
    assert_eq!(
        parse(CARGO),
        Some(TestReport {
            runner: "cargo",
            passed: 1,
            failed: 1,
            skipped: 1,
            failures: vec![Failure {
                name: "tests::subtracts".into(),
                details: "thread 'tests::subtracts' panicked at src/lib.rs:12:9:\nassertion `left == right` failed\n  left: 1\n right: 2".into(),
            }],
        })
    );
}

#[test]
fn nextest_summary() {
    let out = "\
        PASS [   0.003s] fixture tests::adds
        FAIL [   0.004s] fixture tests::subtracts
--- STDERR:              fixture tests::subtracts ---
thread 'tests::subtracts' panicked at src/lib.rs:12:9:
assertion failed

     Summary [   0.010s] 2 tests run: 1 passed, 1 failed, 1 skipped
";
    let r = parse(out).unwrap();
    assert_eq!(
        (r.runner, r.passed, r.failed, r.skipped),
        ("nextest", 1, 1, 1)
    );
    assert_eq!(r.failures[0].name, "fixture tests::subtracts");
    assert!(
        r.failures[0]
            .details
            .contains("panicked at src/lib.rs:12:9")
    );
}

#[test]
fn go_verbose() {
    let out = "\
=== RUN   TestAdd
--- PASS: TestAdd (0.00s)
=== RUN   TestSub
    calc_test.go:14: Sub(3, 1) = 1, want 2
--- FAIL: TestSub (0.00s)
=== RUN   TestLater
    calc_test.go:18: not ready
--- SKIP: TestLater (0.00s)
FAIL
FAIL\tcalc\t0.002s
";
    assert_eq!(
        parse(out),
        Some(TestReport {
            runner: "go",
            passed: 1,
            failed: 1,
            skipped: 1,
            failures: vec![Failure {
                name: "TestSub".into(),
                details: "calc_test.go:14: Sub(3, 1) = 1, want 2".into(),
            }],
        })
    );
}

#[test]
fn jest_and_vitest() {
    let jest = "\
FAIL ./calc.test.js
  calc
    ✓ adds (2 ms)
    ✕ subtracts (3 ms)
    ○ skipped later

  ● calc › subtracts

    expect(received).toBe(expected) // Object.is equality

    Expected: 2
    Received: 1

      at Object.toBe (calc.test.js:6:25)

Test Suites: 1 failed, 1 total
Tests:       1 failed, 1 skipped, 1 passed, 3 total
";
    let r = parse(jest).unwrap();
    assert_eq!((r.runner, r.passed, r.failed, r.skipped), ("jest", 1, 1, 1));
    assert_eq!(r.failures[0].name, "calc › subtracts");
    assert!(r.failures[0].details.contains("Expected: 2\nReceived: 1"));
    let vitest = "\
 FAIL  calc.test.js > calc > subtracts
AssertionError: expected 1 to be 2
 ⎯⎯⎯⎯
 Test Files  1 failed (1)
      Tests  1 failed | 2 passed (3)
";
    let r = parse(vitest).unwrap();
    assert_eq!((r.runner, r.passed, r.failed), ("vitest", 2, 1));
    assert_eq!(r.failures[0].name, "calc.test.js > calc > subtracts");
}

#[test]
fn formats_a_failed_run_and_a_crash() {
    // Tests ran, one failed: the counts are the answer, not a failure of the tool.
    let f = format(&crate::runtime::format::fixture::input("pytest", 1, PYTEST));
    assert_eq!(
        (f.summary.as_deref(), f.failure.as_deref()),
        (Some("1 failed, 2 passed, 1 skipped"), None)
    );
    let s = f.structured.unwrap();
    assert_eq!(s["failures"][0]["name"], "tests/test_calc.py::test_divide");
    assert!(
        f.text
            .starts_with("FAILED tests/test_calc.py::test_divide\n    E       assert")
    );
    let f = format(&crate::runtime::format::fixture::input(
        "cargo test",
        101,
        "error: could not compile",
    ));
    assert_eq!(
        f.failure.as_deref(),
        Some("`cargo test` exited with code 101; no test results in the output")
    );
    assert!(parse("garbage\n\u{1b}[31m").is_none());
}

#[test]
fn a_runner_that_failed_without_a_failing_test_is_a_failure() {
    use crate::runtime::format::fixture::input;
    // pytest's internal error (exit code 3) after a clean report.
    let f = format(&input(
        "python3 -m pytest",
        3,
        "==================== 3 passed in 0.05s ====================\n",
    ));
    assert_eq!(f.failure.as_deref(), Some("3 passed"));
    // A runner killed by a signal, whatever it reported before.
    let mut i = input("python3 -m pytest", 1, PYTEST);
    i.exit_code = None;
    i.signal = Some(9);
    assert!(format(&i).failure.is_some());
}
