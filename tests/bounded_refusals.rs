#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! A refusal reaches the model within the tool's output budget, whatever the arguments were: a
//! validation error quotes a short prefix of a huge value, counts unknown properties past a
//! few, and the whole message is cut to `output.max_bytes` / `max_lines` like any output — from
//! `toolgate call`, `toolgate run` and `toolgate serve` alike.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const SPEC: &str = r#"name: read_note
description: Read a note under notes/ and return its numbered lines.
effect: read_only
idempotency: pure
parameters:
  type: object
  properties:
    path: {type: string, maxLength: 200, description: "The note's path, e.g. notes/todo.md."}
  required: [path]
  additionalProperties: false
timeout: 5s
output: {formatter: read_file, max_bytes: 1KiB, max_lines: 12}
exec: {builtin: read_file}
"#;

fn project() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("tool-specs")).unwrap();
    std::fs::write(
        d.path().join("toolgate.yaml"),
        "specs: [\"tool-specs/*.yaml\"]\ntoolsets:\n  notes: {tools: [read_note]}\n",
    )
    .unwrap();
    std::fs::write(d.path().join("tool-specs/read_note.yaml"), SPEC).unwrap();
    d
}

fn toolgate(dir: &Path, state: &Path, args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .arg("--state-dir")
        .arg(state)
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(bytes) = stdin {
        input.write_all(bytes).unwrap();
    }
    drop(input);
    child.wait_with_output().unwrap()
}

/// Arguments no refusal may echo in full: a path of `chars` characters and `props` invented
/// properties.
fn hostile_arguments(chars: usize, props: usize) -> Vec<serde_json::Value> {
    let mut many = serde_json::Map::new();
    many.insert("path".into(), "notes/a.md".into());
    for i in 0..props {
        many.insert(
            format!("invented_property_{i:05}_{}", "y".repeat(60)),
            i.into(),
        );
    }
    vec![
        serde_json::json!({"path": "x".repeat(chars)}),
        serde_json::Value::Object(many),
    ]
}

fn assert_bounded(text: &str) {
    assert!(
        text.contains("INVALID_ARGUMENTS"),
        "{}",
        &text[..text.len().min(500)]
    );
    // The budget (1 KiB) plus the projection's header line and the hint.
    assert!(
        text.len() < 1024 + 200,
        "a {}-byte refusal:\n{}",
        text.len(),
        &text[..text.len().min(3000)]
    );
    assert!(
        !text.contains(&"x".repeat(200)),
        "the value is quoted past its prefix"
    );
}

#[test]
fn call_and_run_refusals_stay_within_the_output_budget() {
    let d = project();
    let state = tempfile::tempdir().unwrap();
    // A command-line argument holds at most 128 KiB (Linux's MAX_ARG_STRLEN).
    for args in hostile_arguments(100_000, 1_000) {
        let a = args.to_string();
        let o = toolgate(
            d.path(),
            state.path(),
            &["call", "read_note", "--args", &a],
            None,
        );
        assert_eq!(
            o.status.code(),
            Some(1),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_bounded(&String::from_utf8(o.stdout).unwrap());
        // The JSON form carries the same bounded summary.
        let o = toolgate(
            d.path(),
            state.path(),
            &["call", "read_note", "--args", &a, "--format", "json"],
            None,
        );
        assert!(o.stdout.len() < 8192, "{} bytes of JSON", o.stdout.len());
    }
    let calls: Vec<String> = hostile_arguments(10_000_000, 20_000)
        .into_iter()
        .map(|a| serde_json::json!({"name": "read_note", "arguments": a}).to_string())
        .collect();
    let o = toolgate(
        d.path(),
        state.path(),
        &["run", "--calls", "-"],
        Some(calls.join("\n").as_bytes()),
    );
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.stdout.len() < 6000,
        "{} bytes for two refusals",
        o.stdout.len()
    );
}

#[test]
fn an_mcp_client_gets_a_bounded_refusal() {
    let d = project();
    let state = tempfile::tempdir().unwrap();
    let mut session = String::from(
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n",
    );
    for (i, args) in hostile_arguments(10_000_000, 20_000)
        .into_iter()
        .enumerate()
    {
        let req = serde_json::json!({"jsonrpc": "2.0", "id": i + 2, "method": "tools/call",
            "params": {"name": "read_note", "arguments": args}});
        session.push_str(&req.to_string());
        session.push('\n');
    }
    let o = toolgate(
        d.path(),
        state.path(),
        &["serve", "--toolset", "notes"],
        Some(session.as_bytes()),
    );
    let out = String::from_utf8(o.stdout).unwrap();
    let answers: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &serde_json::Value| v["id"].as_u64().is_some_and(|id| id >= 2))
        .collect();
    assert_eq!(
        answers.len(),
        2,
        "{out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for a in answers {
        assert_eq!(a["result"]["isError"], true);
        assert!(
            a.to_string().len() < 8192,
            "a {}-byte answer",
            a.to_string().len()
        );
        assert_bounded(a["result"]["content"][0]["text"].as_str().unwrap());
    }
}
