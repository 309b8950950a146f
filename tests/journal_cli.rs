//! `toolgate journal list|show|stats|recover|resolve` and `toolgate run --session`, as a person
//! uses them: the real binary on a project in a temporary folder.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use toolgate::ir::{Decision, Effect, Idempotency};
use toolgate::policy::DecisionSource;
use toolgate::runtime::extend::canonical_json;
use toolgate::runtime::extend::{Journal, KeySource, OperationStart};
use toolgate::runtime::extend::{PermissionRecord, Resolution};
use toolgate::runtime::{JOURNAL_FILE, SqliteJournal};

struct Project(tempfile::TempDir);

impl Project {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/durability");
        for f in ["toolgate.yaml", "append_line.yaml", "touch_marker.yaml"] {
            std::fs::copy(fixture.join(f), dir.path().join(f)).unwrap();
        }
        std::fs::create_dir(dir.path().join("markers")).unwrap();
        let calls = [
            json!({"name": "append_line", "arguments": {"n": "1"}, "call_id": "a1"}),
            json!({"name": "touch_marker", "arguments": {"n": "2"}, "call_id": "t2"}),
            json!({"name": "append_line", "arguments": {"n": "3"}, "call_id": "a3"}),
        ];
        let text: String = calls.iter().map(|c| format!("{c}\n")).collect();
        std::fs::write(dir.path().join("calls.jsonl"), text).unwrap();
        Project(dir)
    }

    fn path(&self) -> &Path {
        self.0.path()
    }

    fn toolgate(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(args)
            .current_dir(self.path())
            .output()
            .unwrap()
    }

    /// stdout of a command that must succeed.
    fn ok(&self, args: &[&str]) -> String {
        let o = self.toolgate(args);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap()
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut args = args.to_vec();
        args.extend(["--format", "json"]);
        serde_json::from_str(&self.ok(&args)).unwrap()
    }

    /// `toolgate run --format json`, which exits 1 when a result is not a success.
    fn run(&self) -> Value {
        let o = self.toolgate(&[
            "run",
            "--calls",
            "calls.jsonl",
            "--session",
            "s",
            "--format",
            "json",
        ]);
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice(&o.stdout).unwrap()
    }

    /// The lines of `log`, sorted: a1 and a3 write different resources and may run in
    /// parallel, so their order in the file is not fixed.
    fn log(&self) -> String {
        let text = std::fs::read_to_string(self.path().join("log")).unwrap_or_default();
        let mut lines: Vec<&str> = text.lines().collect();
        lines.sort_unstable();
        lines.iter().map(|l| format!("{l}\n")).collect()
    }
}

/// Replaces what changes from run to run (ids, times, durations, hashes) by placeholders.
fn normalize(text: &str) -> String {
    let rules = [
        (
            r"op-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
            "op-ID",
        ),
        (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "TIME"),
        (r"\b\d+ (µs|ms|s)\b", "DURATION"),
        (r"\b[0-9a-f]{64}\b", "HASH"),
    ];
    let mut out = text.to_owned();
    for (re, with) in rules {
        out = regex::Regex::new(re)
            .unwrap()
            .replace_all(&out, with)
            .into_owned();
    }
    // Columns padded to the width of what was replaced.
    out.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn list_show_and_stats() {
    let p = Project::new();
    p.ok(&["run", "--calls", "calls.jsonl", "--session", "s"]);
    let ops = p.json(&["journal", "list"]);
    let rows: Vec<(&str, &str, &str, u64)> = ops
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["call_id"].as_str().unwrap(),
                o["tool"].as_str().unwrap(),
                o["status"].as_str().unwrap(),
                o["attempts"].as_u64().unwrap(),
            )
        })
        .collect();
    let mut sorted = rows.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        vec![
            ("a1", "append_line", "success", 1),
            ("a3", "append_line", "success", 1),
            ("t2", "touch_marker", "success", 1),
        ]
    );
    assert_eq!(
        normalize(&p.ok(&["journal", "list", "--tool", "touch_marker"])),
        "OPERATION STARTED TOOL STATUS ATTEMPTS TIME SESSION / CALL PERMISSION [RULE CHAIN]\nop-ID TIME touch_marker v1 success 1 DURATION s / t2 allow by rule test-markers-run [test-markers-run (allow matched)]"
    );
    assert_eq!(
        normalize(&p.ok(&["journal", "show", "a1"])),
        normalize(
            "operation op-ID: success
              session      s
              call         a1
              tool         append_line version 1 (parameters blake3:5fa40b97d8945157)
              effect       local_write, non_idempotent
              key          s:a1 (derived)
              arguments    {\"n\":\"1\"} (blake3 HASH)
              permission   allow by rule test-appends-run: It appends to a scratch file of the test.
              rule chain   test-appends-run (allow matched)
              batch        0
              started      TIME
              attempt      #1 ended TIME
              finished     TIME success, exit code 0, 0 bytes of output
              trace        DURATION on command, 0 retries, result blake3 HASH
              result
                `sh -c 'sleep 0.02; echo \"$TOOLGATE_IDEMPOTENCY_KEY\" >> log' append_line` exited with code 0"
        )
    );
    let stats = p.json(&["journal", "stats"]);
    assert_eq!(
        stats["refusals"],
        json!({"calls": 3, "refused": 0, "by_error_type": {}})
    );
    let stats: Vec<(String, String, u64, bool)> = stats["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["tool"].as_str().unwrap().to_owned(),
                s["status"].as_str().unwrap().to_owned(),
                s["count"].as_u64().unwrap(),
                s["p50_us"].as_u64().unwrap() <= s["p99_us"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        stats,
        vec![
            ("append_line".into(), "success".into(), 2, true),
            ("touch_marker".into(), "success".into(), 1, true),
        ]
    );
    // Only uncertain operations can be settled; unknown ids are named.
    let a1 = ops[0]["operation_id"].as_str().unwrap();
    let o = p.toolgate(&["journal", "resolve", a1, "--as", "failed"]);
    assert_eq!(
        (o.status.code(), String::from_utf8(o.stderr).unwrap()),
        (
            Some(2),
            format!(
                "toolgate: journal: operation {a1} is success already; only started or unknown-outcome operations can be settled\n"
            )
        )
    );
    let o = p.toolgate(&["journal", "show", "nope"]);
    assert_eq!(
        String::from_utf8(o.stderr).unwrap(),
        "toolgate: no operation or call `nope` in the journal\n"
    );
    // A resumed session replays every call and says so.
    let o = p.toolgate(&["run", "--calls", "calls.jsonl", "--session", "s"]);
    assert_eq!(
        String::from_utf8(o.stderr).unwrap(),
        "toolgate: session s: 3 of 3 call(s) had finished before; their recorded results are shown and they did not run again\n"
    );
    assert_eq!(p.log(), "s:a1\ns:a3\n");
}

/// What a crash leaves: `append_line` call a1 of session s started, never finished.
fn crash(p: &Project) -> String {
    let args = json!({"n": "1"});
    let canonical = canonical_json(&args);
    let op = OperationStart {
        operation_id: "op-crashed".into(),
        session_id: "s".into(),
        call_id: "a1".into(),
        tool: "append_line".into(),
        tool_version: 1,
        schema_version: "blake3:5fa40b97d8945157".into(),
        effect: Effect::LocalWrite,
        idempotency: Idempotency::NonIdempotent,
        idempotency_key: "s:a1".into(),
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
        started_at: "2026-11-30T00:00:00Z".into(),
        principal: None,
    };
    let j = SqliteJournal::open(p.path().join(".toolgate").join(JOURNAL_FILE)).unwrap();
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(j.start(&op))
        .unwrap();
    op.operation_id
}

#[test]
fn recover_and_resolve() {
    let p = Project::new();
    let op = crash(&p);
    assert_eq!(
        p.ok(&["journal", "recover"]),
        "recovery: 1 unfinished operation(s) settled: 1 unknown_outcome\n  op-crashed append_line v1 (session s, call a1): unknown_outcome by recovery: append_line is not idempotent and started before the crash: it may have taken effect; verify before repeating\n"
    );
    assert_eq!(
        p.ok(&["journal", "recover"]),
        "recovery: no unfinished operations\n"
    );
    // Resubmitted before anyone looked: not run.
    let r = p.run();
    assert_eq!(r["results"][0]["status"], "unknown_outcome");
    assert_eq!(p.log(), "s:a3\n");
    // A person checks (no line for a1) and settles it; the next resubmission runs it.
    assert_eq!(
        p.ok(&[
            "journal",
            "resolve",
            &op,
            "--as",
            "failed",
            "--note",
            "no line in the log",
            "--external-reference",
            "runs.log"
        ]),
        "op-crashed (append_line call a1 of session s) is now failed: a resubmission of the call runs it again\n"
    );
    let shown = normalize(&p.ok(&["journal", "show", &op]));
    assert!(
        shown.ends_with("settled TIME unknown_outcome by recovery: append_line is not idempotent and started before the crash: it may have taken effect; verify before repeating\nsettled TIME failed by person: no line in the log (reference runs.log)"),
        "{shown}"
    );
    let r = p.run();
    let statuses: Vec<(&str, bool)> = r["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["status"].as_str().unwrap(),
                r["replayed"].as_bool().unwrap_or(false),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        vec![("success", false), ("success", true), ("success", true)]
    );
    assert_eq!(p.log(), "s:a1\ns:a3\n");
    let a1: Vec<String> = p
        .json(&["journal", "list", "--session", "s"])
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["call_id"] == "a1")
        .map(|o| o["status"].as_str().unwrap().to_owned())
        .collect();
    // The operation the crash cut off (settled failed by the person), the resubmission that
    // was answered UNKNOWN_OUTCOME without running, and the one that ran.
    assert_eq!(a1, vec!["failed", "unknown_outcome", "success"]);
}

/// Without `state_dir`, the journal lives outside the project (under `$XDG_STATE_HOME`), in a
/// folder of its own per project, and `journal` finds it from the project folder.
#[test]
fn the_default_state_folder_is_outside_the_project() {
    let p = Project::new();
    let config = std::fs::read_to_string(p.path().join("toolgate.yaml")).unwrap();
    let config = config.replace("state_dir: .toolgate\n", "");
    std::fs::write(p.path().join("toolgate.yaml"), config).unwrap();
    let state_home = tempfile::tempdir().unwrap();
    let toolgate = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(args)
            .current_dir(p.path())
            .env("XDG_STATE_HOME", state_home.path())
            .output()
            .unwrap()
    };
    let o = toolgate(&["run", "--calls", "calls.jsonl", "--session", "s"]);
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!p.path().join(".toolgate").exists());
    // The trust store lives beside the projects' state folders (`toolgate/trust`).
    let projects: Vec<_> = std::fs::read_dir(state_home.path().join("toolgate"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.ends_with("trust"))
        .collect();
    assert_eq!(projects.len(), 1, "{projects:?}");
    let name = projects[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let folder = p.path().canonicalize().unwrap();
    let folder = folder.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with(&format!("{folder}-")), "{name}");
    assert!(projects[0].join(JOURNAL_FILE).is_file());

    let o = toolgate(&["journal", "list", "--format", "json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let ops: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(ops.as_array().map(Vec::len), Some(3), "{ops}");
}

/// Refusals are in the journal too: `list` filters them by error type and time, `stats` counts
/// them, and `prune` deletes what is older than a moment except operations nobody has settled.
#[test]
fn refusals_time_filters_and_retention() {
    let p = Project::new();
    p.ok(&["run", "--calls", "calls.jsonl", "--session", "s"]);
    for (tool, args) in [
        ("append_lin", r#"{"n": "1"}"#),
        ("append_line", r#"{"n": "x"}"#),
    ] {
        let o = p.toolgate(&["call", tool, "--args", args, "--session", "r"]);
        assert_eq!(
            o.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let refused: Vec<(String, String)> = p
        .json(&["journal", "list", "--session", "r"])
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["tool"].as_str().unwrap().to_owned(),
                c["error_type"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        refused,
        vec![
            ("append_lin".to_owned(), "UNKNOWN_TOOL".to_owned()),
            ("append_line".to_owned(), "INVALID_ARGUMENTS".to_owned())
        ]
    );
    assert_eq!(
        p.json(&["journal", "stats"])["refusals"],
        json!({"calls": 5, "refused": 2, "by_error_type": {"INVALID_ARGUMENTS": 1, "UNKNOWN_TOOL": 1}})
    );
    assert!(
        p.ok(&["journal", "stats"]).ends_with(
            "\n5 call(s), 2 refused before running: INVALID_ARGUMENTS 1, UNKNOWN_TOOL 1\n"
        )
    );
    let count = |args: &[&str]| {
        let mut a = vec!["journal", "list"];
        a.extend_from_slice(args);
        p.json(&a).as_array().unwrap().len()
    };
    assert_eq!(count(&["--error-type", "UNKNOWN_TOOL"]), 1);
    assert_eq!(count(&["--since", "1h"]), 5);
    assert_eq!(count(&["--since", "2999-01-01"]), 0);
    assert_eq!(count(&["--until", "2000-01-01T00:00:00Z"]), 0);
    let o = p.toolgate(&["journal", "list", "--since", "yesterday-ish"]);
    assert_eq!(
        String::from_utf8(o.stderr).unwrap(),
        "toolgate: --since `yesterday-ish` is not a time: give an RFC 3339 time (2026-11-30T12:00:00Z), a date (2026-11-30), or how long ago (90m, 2h, 7d)\n"
    );

    // An operation a crash cut off, settled unknown_outcome: retention keeps it.
    let op = crash(&p);
    p.ok(&["journal", "recover"]);
    assert_eq!(
        p.json(&["journal", "prune", "--before", "1h", "--dry-run"]),
        json!({"audit_records": 0, "operations": 0, "kept_uncertain": 1, "dry_run": true})
    );
    assert_eq!(
        p.json(&["journal", "prune", "--before", "2999-01-01"]),
        json!({"audit_records": 5, "operations": 3, "kept_uncertain": 1, "dry_run": false})
    );
    let left: Vec<String> = p
        .json(&["journal", "list"])
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["operation_id"].as_str().unwrap_or("-").to_owned())
        .collect();
    assert_eq!(left, vec![op]);
}

/// Session ids, call ids, keys and arguments come from clients; `journal list` and `journal
/// show` — what a person reads before settling an unknown outcome — print ESC sequences,
/// carriage returns, bidi overrides and zero-width spaces in them as `\u{…}`, like approval
/// prompts.
#[test]
fn hidden_characters_from_clients_are_shown_escaped() {
    let p = Project::new();
    let call = json!({
        "name": "append_line",
        "arguments": {"n": "9\u{202e}\u{200b}"},
        "call_id": "c\u{1b}[2J\r\u{202e}1",
    });
    std::fs::write(p.path().join("hostile.jsonl"), format!("{call}\n")).unwrap();
    let o = p.toolgate(&["run", "--calls", "hostile.jsonl", "--session", "s\u{200b}x"]);
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let listed = p.ok(&["journal", "list"]);
    assert!(
        listed.contains("s\\u{200b}x / c\\u{1b}[2J\\u{d}\\u{202e}1"),
        "{listed}"
    );
    let shown = p.ok(&["journal", "show", "c\u{1b}[2J\r\u{202e}1"]);
    assert!(shown.contains("c\\u{1b}[2J\\u{d}\\u{202e}1"), "{shown}");
    assert!(shown.contains("\\u{202e}\\u{200b}"), "{shown}");
    for text in [&listed, &shown] {
        for c in ['\u{1b}', '\r', '\u{202e}', '\u{200b}'] {
            assert!(!text.contains(c), "{c:?} reached the terminal: {text}");
        }
    }
}
