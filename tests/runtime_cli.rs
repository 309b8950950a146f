//! `toolgate call` and `toolgate run`, driven as a user would: the real binary, real files.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::process::{Command, Output};

use common::{Fixture, repo};
use pretty_assertions::assert_eq;

fn toolgate(f: &Fixture, args: &[&str]) -> Output {
    let config = repo().join("tests/fixtures/runtime/toolgate.yaml");
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .arg("--config")
        .arg(&config)
        .arg("--workspace")
        .arg(f.path())
        .arg("--state-dir")
        .arg(f.state.path())
        .current_dir(f.path())
        .env_remove("TOOLGATE_TEST_VISIBLE")
        .env_remove("TOOLGATE_TEST_SECRET")
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

#[test]
fn call_prints_the_projection_and_exit_codes_follow_the_result() {
    let f = Fixture::new();
    f.write("src/login.py", "TIMEOUT = 5\n");
    let o = toolgate(
        &f,
        &["call", "read_file", "--args", r#"{"path": "src/login.py"}"#],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let hash = blake3::hash(b"TIMEOUT = 5\n").to_hex().to_string();
    assert_eq!(
        stdout(&o),
        format!(
            "read_file: success\nsrc/login.py: lines 1-1 of 1\n     1\tTIMEOUT = 5\n[src/login.py: lines 1-1 of 1; content_hash {hash}]\n"
        )
    );
    let o = toolgate(
        &f,
        &[
            "call",
            "read_file",
            "--args",
            r#"{"path": "src/login.py", "start_line": 100, "end_line": 10}"#,
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).starts_with("read_file: error SEMANTIC_VALIDATION_ERROR\n"));
    let o = toolgate(&f, &["call", "read_file", "--args", "{not json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("toolgate: --args is not valid JSON"),
        "{}",
        stderr(&o)
    );
    let o = toolgate(&f, &["call", "read_file", "--context", "nightly"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "toolgate: unknown context `nightly`; toolgate.yaml defines: interactive, ci, headless\n"
    );
}

#[test]
fn approvals_from_the_command_line() {
    let f = Fixture::new();
    f.write("src/a.py", "TIMEOUT = 5\n");
    let hash = blake3::hash(b"TIMEOUT = 5\n").to_hex().to_string();
    let args = format!(
        r#"{{"path": "src/a.py", "expected_hash": "{hash}", "edits": [{{"old_text": "5", "new_text": "30"}}]}}"#
    );
    // No terminal and no --approve: the context is headless, and nobody can approve.
    let o = toolgate(&f, &["call", "apply_patch", "--args", &args]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).starts_with("apply_patch: denied APPROVAL_UNAVAILABLE\n"),
        "{}",
        stdout(&o)
    );
    let o = toolgate(
        &f,
        &["call", "apply_patch", "--args", &args, "--approve", "deny"],
    );
    assert!(stdout(&o).starts_with("apply_patch: denied USER_DENIED\n"));
    // The model reads a plain denial, not how the harness was started.
    assert!(
        stdout(&o).contains("The user denied this apply_patch call\n"),
        "{}",
        stdout(&o)
    );
    assert!(!stdout(&o).contains("--approve"), "{}", stdout(&o));
    // --approve allow in ci still cannot override "nobody can approve here".
    let o = toolgate(
        &f,
        &[
            "call",
            "apply_patch",
            "--args",
            &args,
            "--approve",
            "allow",
            "--context",
            "ci",
        ],
    );
    assert!(stdout(&o).starts_with("apply_patch: denied APPROVAL_UNAVAILABLE\n"));
    assert_eq!(f.read("src/a.py"), "TIMEOUT = 5\n");
    let o = toolgate(
        &f,
        &[
            "call",
            "apply_patch",
            "--args",
            &args,
            "--approve",
            "allow",
            "--format",
            "json",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        (v["status"].as_str(), v["structured"]["applied"].as_u64()),
        (Some("success"), Some(1))
    );
    assert!(v["projection"].as_str().unwrap().contains("+TIMEOUT = 30"));
    assert_eq!(f.read("src/a.py"), "TIMEOUT = 30\n");
}

#[test]
fn run_prints_the_schedule_then_the_results() {
    let f = Fixture::new();
    f.write("a.txt", "A\n");
    f.write("b.txt", "B\n");
    std::fs::write(
        f.path().join("calls.jsonl"),
        [
            r#"{"name": "read_file", "arguments": {"path": "a.txt"}}"#,
            r#"{"name": "read_file", "arguments": {"path": "b.txt"}}"#,
            "",
            r#"{"call_id": "x", "name": "find_symbol", "arguments": {"name": "main"}}"#,
            r#"{"name": "slow_edit", "arguments": {"path": "a.txt", "ms": 1}}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let o = toolgate(&f, &["run", "--calls", "calls.jsonl"]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    let plan = out.split("\n── ").next().unwrap();
    assert_eq!(
        plan,
        "plan: 3 calls in 2 batches\n  batch 1 (parallel): #1 read_file [reads file:a.txt], #2 read_file [reads file:b.txt]\n  batch 2 (alone): #4 slow_edit [writes file:a.txt]\n  order: #1 before #4 (#4 writes file:a.txt)\n  not scheduled: #3 find_symbol (UNKNOWN_TOOL)\n"
    );
    assert!(out.contains("── #3 x ──\nfind_symbol: error UNKNOWN_TOOL\n"));
    // slow_edit is a handler tool and the command line binds no handlers.
    assert!(out.contains("── #4 call-4 ──\nslow_edit: error RUNTIME_EXCEPTION\nno handler is bound to `slow_edit`\n"), "{out}");
    let o = toolgate(&f, &["run", "--calls", "missing.jsonl"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_long_calls_file_runs_as_turns_numbered_across_the_file() {
    let f = Fixture::new();
    f.write("a.txt", "one\n");
    let line = r#"{"name": "read_file", "arguments": {"path": "a.txt"}}"#;
    let calls = vec![line; 600].join("\n");
    std::fs::write(f.path().join("calls.jsonl"), &calls).unwrap();
    let o = toolgate(&f, &["run", "--calls", "calls.jsonl"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.starts_with("plan: 256 calls in 1 batch\n"),
        "{}",
        &out[..200]
    );
    assert!(out.contains("\n── turn 2: calls #257 to #512 ──\nplan: 256 calls in 1 batch\n  batch 1 (parallel): #257 read_file"));
    assert!(out.contains("\n── turn 3: calls #513 to #600 ──\nplan: 88 calls in 1 batch\n"));
    assert!(out.contains("\n── #600 call-600 ──\nread_file: success\n"));
    assert!(!out.contains("── turn 4"));

    // JSON: one document per turn, the calls numbered across the file.
    let o = toolgate(&f, &["run", "--calls", "calls.jsonl", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let docs: Vec<serde_json::Value> = serde_json::Deserializer::from_slice(&o.stdout)
        .into_iter()
        .collect::<Result<_, _>>()
        .unwrap();
    let sizes: Vec<usize> = docs
        .iter()
        .map(|d| d["results"].as_array().unwrap().len())
        .collect();
    assert_eq!(sizes, vec![256, 256, 88]);
    assert_eq!(docs[2]["plan"]["calls"][0]["index"], 512);
    assert_eq!(docs[2]["results"][87]["call_id"], "call-600");
}

#[test]
fn a_bad_line_in_a_file_runs_nothing_and_on_stdin_stops_where_it_is() {
    let f = Fixture::new();
    f.write("a.txt", "one\n");
    let line = r#"{"name": "read_file", "arguments": {"path": "a.txt"}}"#;
    let mut calls = vec![line; 300];
    calls.push("{not a call");
    std::fs::write(f.path().join("calls.jsonl"), calls.join("\n")).unwrap();
    let o = toolgate(&f, &["run", "--calls", "calls.jsonl"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("line 301 of the calls file is not a call"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stdout(&o), "", "a turn ran before the file was checked");

    // stdin cannot be read twice: the first turn runs, the run stops at the bad line.
    let config = repo().join("tests/fixtures/runtime/toolgate.yaml");
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["run", "--calls", "-", "--config"])
        .arg(&config)
        .arg("--workspace")
        .arg(f.path())
        .arg("--state-dir")
        .arg(f.state.path())
        .current_dir(f.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(calls.join("\n").as_bytes()).unwrap();
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("line 301 of the calls file is not a call"),
        "{err}"
    );
    assert!(err.contains("the 256 call(s) before it ran"), "{err}");
    let out = stdout(&o);
    assert!(
        out.starts_with("plan: 256 calls in 1 batch\n"),
        "{}",
        &out[..out.len().min(300)]
    );
    assert!(out.contains("\n── #256 call-256 ──\nread_file: success\n"));
    assert!(!out.contains("#257"));
}

#[test]
fn command_tools_get_only_the_allowlisted_environment() {
    let f = Fixture::new();
    let config = repo().join("tests/fixtures/runtime/toolgate.yaml");
    let o = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args([
            "call",
            "env_probe",
            "--args",
            r#"{"word": "two words; rm -rf /"}"#,
            "--format",
            "json",
            "--session",
            "s",
        ])
        .arg("--config")
        .arg(&config)
        .arg("--workspace")
        .arg(f.path())
        .arg("--state-dir")
        .arg(f.state.path())
        .env("TOOLGATE_TEST_VISIBLE", "yes")
        .env("TOOLGATE_TEST_SECRET", "hunter2-very-secret")
        .env("TOOLGATE_TEST_HIDDEN", "leaked")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let out = v["structured"]["output"].as_str().unwrap();
    let expected_env = format!(
        "arg=two words; rm -rf /\nGREETING=hello two words; rm -rf /\nPATH={}\nTOOLGATE_IDEMPOTENCY_KEY=s:call-1\nTOOLGATE_TEST_SECRET=[REDACTED]\nTOOLGATE_TEST_VISIBLE=yes\nstdin:two words; rm -rf /",
        std::env::var("PATH").unwrap()
    );
    // `env` may add PWD (sh sets it); everything else must be exactly the allowlist.
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with("PWD=") && !l.starts_with("SHLVL=") && !l.starts_with("_="))
        .collect();
    assert_eq!(lines.join("\n"), expected_env);
    assert_eq!(
        v["structured"]["command"],
        "sh -c 'printf \"arg=%s\\n\" \"$1\"; env | sort; cat' probe 'two words; rm -rf /'"
    );
}

#[test]
fn the_runtime_refuses_specs_with_lint_errors() {
    let f = Fixture::new();
    f.write("toolgate.yaml", "specs: [\"*.yaml\"]\n");
    f.write(
        "broken.yaml",
        "name: broken\nversion: 1\ndescription: A tool without an effect.\nexec: {builtin: echo}\n",
    );
    let o = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["call", "broken", "--args", "{}"])
        .current_dir(f.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("the runtime does not start until `toolgate lint` is clean"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn runs_from_a_bundle() {
    let f = Fixture::new();
    let bundle = serde_json::to_string(&*common::bundle()).unwrap();
    std::fs::write(f.path().join("bundle.json"), bundle).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args([
            "call",
            "echo",
            "--args",
            r#"{"text": "hi"}"#,
            "--bundle",
            "bundle.json",
            "--workspace",
            ".",
            // The bundle's `state_dir` (.toolgate) would lie inside this workspace, which
            // the bundle's workspace-write tools may write: toolgate refuses that.
            "--state-dir",
        ])
        .arg(f.state.path())
        .current_dir(f.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "echo: success\nechoed\nhi\n");
}

/// The audit's reproduction: `envlink -> .env` is `.env` to the rules, so the secret stays
/// unread however the path is spelled.
#[test]
fn a_link_to_a_secret_is_denied_like_the_secret() {
    let f = Fixture::new();
    f.write(".env", "API_KEY=SECRET\n");
    std::os::unix::fs::symlink(".env", f.path().join("envlink")).unwrap();
    for path in [".env", "envlink"] {
        let args = format!(r#"{{"path": "{path}"}}"#);
        let o = toolgate(&f, &["call", "read_file", "--args", &args]);
        assert_eq!(o.status.code(), Some(1), "{path}: {}", stdout(&o));
        assert!(
            stdout(&o).starts_with("read_file: denied POLICY_DENIED\n"),
            "{path}: {}",
            stdout(&o)
        );
        assert!(!stdout(&o).contains("SECRET"), "{path}: {}", stdout(&o));
    }
}
