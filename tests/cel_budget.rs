#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! A rule whose evaluation over the model's arguments would run for minutes or build gigabytes
//! is cut off by the runtime cost budget and refused as COST_LIMIT, well inside the call's
//! timeout — through `toolgate call` and `toolgate run`, for validation and permission rules.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Every item must appear once: quadratic in the items (10^8 steps for 10,000 of them).
const UNIQUE: &str = "args.items.all(x, args.items.exists_one(y, y == x))";
/// Every pair of strings joined: 10,000 × 10,000 strings of 2 KB would be 200 GB.
const PAIRS: &str = "size(args.ss.map(a, args.ss.map(b, a + b))) > 0";

fn spec(name: &str, rules: &str) -> String {
    format!(
        r#"name: {name}
version: 1
description: Echo a note after checking the items and strings. Returns the note.
effect: pure
idempotency: pure
parameters:
  type: object
  properties:
    text: {{type: string, maxLength: 100, description: The note.}}
    items: {{type: array, items: {{type: integer}}, maxItems: 20000, description: Numbers.}}
    ss: {{type: array, items: {{type: string, maxLength: 2000}}, maxItems: 20000, description: Strings.}}
  required: [text]
  additionalProperties: false
{rules}
timeout: 5s
output: {{formatter: text, max_bytes: 2KiB, max_lines: 20}}
exec: {{builtin: echo}}
"#
    )
}

fn project() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("tool-specs")).unwrap();
    std::fs::write(
        d.path().join("toolgate.yaml"),
        "specs: [\"tool-specs/*.yaml\"]\ntoolsets:\n  notes: {tools: [checked, guarded]}\n",
    )
    .unwrap();
    let validate = format!(
        "validate:\n  - id: unique\n    expr: \"!has(args.items) || {UNIQUE}\"\n    message: items must be unique.\n  - id: pairs\n    expr: \"!has(args.ss) || {PAIRS}\"\n    message: strings must pair.\n"
    );
    let permissions = format!(
        "permissions:\n  rules:\n    - id: duplicates\n      deny: \"has(args.items) && !({UNIQUE})\"\n      reason: Duplicate items are refused.\n"
    );
    std::fs::write(
        d.path().join("tool-specs/checked.yaml"),
        spec("checked", &validate),
    )
    .unwrap();
    std::fs::write(
        d.path().join("tool-specs/guarded.yaml"),
        spec("guarded", &permissions),
    )
    .unwrap();
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

fn items(n: i64) -> serde_json::Value {
    serde_json::json!({"text": "hi", "items": (0..n).collect::<Vec<_>>()})
}

#[test]
fn a_quadratic_validation_rule_is_refused_as_cost_limit_within_the_timeout() {
    let d = project();
    let state = tempfile::tempdir().unwrap();
    // Small arguments pass the same rules.
    let o = toolgate(
        d.path(),
        state.path(),
        &["call", "checked", "--args", &items(50).to_string()],
        None,
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let start = Instant::now();
    let o = toolgate(
        d.path(),
        state.path(),
        &["call", "checked", "--args", &items(10_000).to_string()],
        None,
    );
    let took = start.elapsed();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("COST_LIMIT"), "{out}");
    assert!(out.contains("`unique`"), "{out}");
    assert!(!out.contains("items must be unique"), "{out}");
    // Unbudgeted, the rule runs for minutes (the 5 s timeout does not cover it); a debug build
    // under load may reach the deadline before the step budget, which is refused the same way.
    assert!(took < Duration::from_secs(30), "took {took:?}");
}

#[test]
fn a_permission_rule_cut_off_never_allows() {
    let d = project();
    let state = tempfile::tempdir().unwrap();
    let o = toolgate(
        d.path(),
        state.path(),
        &["call", "guarded", "--args", &items(50).to_string()],
        None,
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = toolgate(
        d.path(),
        state.path(),
        &["call", "guarded", "--args", &items(10_000).to_string()],
        None,
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("COST_LIMIT"), "{out}");
    assert!(out.contains("`duplicates`"), "{out}");
}

#[test]
fn strings_joined_pairwise_are_refused_before_they_fill_memory() {
    let d = project();
    let state = tempfile::tempdir().unwrap();
    // 10 MB of arguments: more than a command line holds, so through `run --calls -`.
    let ss: Vec<String> = (0..10_000).map(|i| format!("{i:x>1000}")).collect();
    let call = serde_json::json!({"name": "checked", "arguments": {"text": "hi", "ss": ss}});
    let start = Instant::now();
    let o = toolgate(
        d.path(),
        state.path(),
        &["run", "--calls", "-"],
        Some(call.to_string().as_bytes()),
    );
    let took = start.elapsed();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("COST_LIMIT"), "{out}");
    assert!(out.contains("`pairs`") && out.contains("bytes"), "{out}");
    // Unbudgeted, the rule runs for minutes (the 5 s timeout does not cover it); a debug build
    // under load may reach the deadline before the step budget, which is refused the same way.
    assert!(took < Duration::from_secs(30), "took {took:?}");
}
