//! Snapshots of what the model reads (the projection) for representative results.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{Fixture, Scripted, call, run1};
use serde_json::json;
use toolgate::runtime::Session;
use toolgate::runtime::extend::ApprovalOutcome;
use toolgate::runtime::extend::{CallView, Hook, Redactions};

struct MaskPassword;

/// A hook that only redacts: the other methods keep their defaults.
impl Hook for MaskPassword {
    fn redact(&self, _view: &CallView<'_>, r: &mut Redactions) {
        r.literal("correct-horse");
        r.pattern(regex::Regex::new(r"ghp_\w+").unwrap());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn projections() {
    let f = Fixture::new();
    f.write("src/login.py", "TIMEOUT = 5\ndef login(user, password):\n    return check(user, password, timeout=TIMEOUT)\n");
    f.write(
        "config.txt",
        "db_password = correct-horse\ntoken = ghp_abc\n",
    );
    let hash = blake3::hash(f.read("src/login.py").as_bytes())
        .to_hex()
        .to_string();
    let interactive = Session::new("s", "interactive");
    let ci = Session::new("s", "ci");
    let allowing = f
        .builder()
        .approver(Scripted::new(ApprovalOutcome::AllowOnce))
        .build()
        .unwrap();
    let plain = f.builder().build().unwrap();
    let masking = f.builder().hook(MaskPassword).build().unwrap();
    let long: String = (1..=60).map(|i| format!("build step {i}: ok\n")).collect();
    let cases = vec![
        (
            "unknown_tool",
            &plain,
            &interactive,
            call("c", "read_directory_recursive", json!({"path": "src"})),
        ),
        (
            "invalid_arguments",
            &plain,
            &interactive,
            call(
                "c",
                "read_file",
                json!({"path": 7, "end_line": 0, "mode": "fast"}),
            ),
        ),
        (
            "semantic_error",
            &plain,
            &interactive,
            call(
                "c",
                "read_file",
                json!({"path": "src/login.py", "start_line": 100, "end_line": 10}),
            ),
        ),
        (
            "policy_denied",
            &plain,
            &interactive,
            call("c", "read_file", json!({"path": "config/.env"})),
        ),
        (
            "rule_denied",
            &plain,
            &interactive,
            call("c", "read_file", json!({"path": "vendor/lib/.git/config"})),
        ),
        (
            "approval_unavailable",
            &allowing,
            &ci,
            call(
                "c",
                "write_file",
                json!({"path": "notes.md", "content": "x"}),
            ),
        ),
        (
            "read_file",
            &plain,
            &interactive,
            call(
                "c",
                "read_file",
                json!({"path": "src/login.py", "start_line": 2}),
            ),
        ),
        (
            "apply_patch",
            &allowing,
            &interactive,
            call(
                "c",
                "apply_patch",
                json!({"path": "src/login.py", "expected_hash": hash, "edits": [{"old_text": "TIMEOUT = 5", "new_text": "TIMEOUT = 30"}]}),
            ),
        ),
        (
            "process_error",
            &allowing,
            &interactive,
            call(
                "c",
                "bash",
                json!({"command": "echo building; echo 'error: missing semicolon' >&2; exit 2"}),
            ),
        ),
        (
            "timeout",
            &plain,
            &interactive,
            call("c", "sleeper", json!({"pidfile": "pid"})),
        ),
        (
            "artifact",
            &plain,
            &interactive,
            call("c", "echo", json!({"text": long.repeat(5)})),
        ),
        (
            "hook_redaction",
            &masking,
            &interactive,
            call("c", "read_file", json!({"path": "config.txt"})),
        ),
    ];
    for (name, rt, session, c) in cases {
        let r = run1(rt, session, c).await;
        insta::assert_snapshot!(name, r.projection().text);
    }
}
