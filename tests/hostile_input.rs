#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Hostile input gets a located error and exit 2 (or a located contract error and exit 1 for
//! hostile CEL) — never a panic, a hang or unbounded memory. Every case runs the real binary
//! under a watchdog so a hang fails the test instead of stalling it.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Generous: a hang guard, not a performance assertion.
const WATCHDOG: Duration = Duration::from_secs(60);

struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
}

fn lint(dir: &Path, file: &str) -> Outcome {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["lint", file, "--format", "json"])
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            return Outcome {
                code: status.code().unwrap_or(-1),
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            };
        }
        if start.elapsed() > WATCHDOG {
            let _ = child.kill();
            panic!("toolgate lint {file} hung for {WATCHDOG:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::File::create(dir.join(name))
        .unwrap()
        .write_all(bytes)
        .unwrap();
}

/// The first diagnostic of the JSON report: (message, line, column).
fn first(o: &Outcome) -> (String, usize, usize) {
    let v: serde_json::Value = serde_json::from_str(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\nstderr: {}", o.stdout, o.stderr));
    let d = &v["diagnostics"][0];
    (
        d["message"].as_str().unwrap_or("").to_owned(),
        d["location"]["line"].as_u64().unwrap_or(0) as usize,
        d["location"]["column"].as_u64().unwrap_or(0) as usize,
    )
}

fn assert_load_error(o: &Outcome, needle: &str, line: usize) {
    assert_eq!(
        o.code, 2,
        "exit code; stdout: {}\nstderr: {}",
        o.stdout, o.stderr
    );
    assert!(!o.stderr.contains("panicked"), "panic: {}", o.stderr);
    let (msg, l, c) = first(o);
    assert!(msg.contains(needle), "message `{msg}` lacks `{needle}`");
    assert_eq!(l, line, "line of `{msg}`");
    assert!(c >= 1, "column of `{msg}`");
}

#[test]
fn malformed_yaml() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "a.yaml",
        b"name: read_file\neffect: [read_only\ndescription: x\n",
    );
    let o = lint(d.path(), "a.yaml");
    assert_eq!(o.code, 2);
    let (_, line, _) = first(&o);
    assert!(line >= 2, "located at line {line}");
}

#[test]
fn alias_bomb() {
    let mut s = String::from(
        "name: bomb\nparameters:\n  a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for (i, prev) in ["b", "c", "d", "e", "f", "g", "h", "i"]
        .iter()
        .zip(["a", "b", "c", "d", "e", "f", "g", "h"])
    {
        let refs = vec![format!("*{prev}"); 9].join(",");
        s.push_str(&format!("  {i}: &{i} [{refs}]\n"));
    }
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "bomb.yaml", s.as_bytes());
    assert_load_error(&lint(d.path(), "bomb.yaml"), "anchors and aliases", 3);
}

#[test]
fn hundred_thousand_deep_nesting() {
    let d = tempfile::tempdir().unwrap();
    let s = format!(
        "name: x\nparameters: {}{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    write(d.path(), "deep.yaml", s.as_bytes());
    assert_load_error(&lint(d.path(), "deep.yaml"), "nesting deeper than", 2);
    let s = format!(
        "name: x\nparameters:\n{}",
        (0..100_000)
            .map(|i| format!("{}k:\n", " ".repeat(i % 200 + 2)))
            .collect::<String>()
    );
    write(d.path(), "deep_block.yaml", s.as_bytes());
    let o = lint(d.path(), "deep_block.yaml");
    assert_eq!(o.code, 2, "{}", o.stdout);
}

#[test]
fn fifty_megabyte_file_is_refused_before_reading() {
    let d = tempfile::tempdir().unwrap();
    let f = std::fs::File::create(d.path().join("big.yaml")).unwrap();
    f.set_len(50 * 1024 * 1024).unwrap();
    let o = lint(d.path(), "big.yaml");
    assert_eq!(o.code, 2);
    let (msg, _, _) = first(&o);
    assert!(msg.contains("52428800 bytes"), "{msg}");
}

#[test]
fn invalid_utf8_is_located() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "bad.yaml",
        b"name: read_file\ndescription: caf\xe9 au lait\n",
    );
    assert_load_error(&lint(d.path(), "bad.yaml"), "not valid UTF-8", 2);
}

#[test]
fn duplicate_keys_are_refused() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "dup.yaml",
        b"name: read_file\neffect: read_only\nname: write_file\n",
    );
    assert_load_error(&lint(d.path(), "dup.yaml"), "duplicate key `name`", 3);
}

#[test]
fn empty_and_comment_only_files() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "empty.yaml", b"");
    assert_load_error(&lint(d.path(), "empty.yaml"), "holds no tool", 1);
    write(d.path(), "comments.yaml", b"# nothing here\n---\n");
    assert_load_error(&lint(d.path(), "comments.yaml"), "holds no tool", 1);
}

#[test]
fn binary_garbage() {
    let d = tempfile::tempdir().unwrap();
    let bytes: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    write(d.path(), "garbage.yaml", &bytes);
    let o = lint(d.path(), "garbage.yaml");
    assert_eq!(o.code, 2);
    assert!(!o.stderr.contains("panicked"));
}

#[test]
fn unknown_key_suggests_the_right_one() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "typo.yaml",
        b"name: read_file\nefect: read_only\n",
    );
    let o = lint(d.path(), "typo.yaml");
    assert_load_error(&o, "unknown key `efect`", 2);
    assert!(o.stdout.contains("did you mean `effect`?"), "{}", o.stdout);
}

/// CEL that made older parsers allocate gigabytes (cel-rust#306) or overflow the stack
/// (cel-rust#305) is a located contract error (exit 1), found quickly.
#[test]
fn hostile_cel_is_a_located_contract_error() {
    let motif = "!!(!!!!!!(!!!!(((((!!(!!(!!!!((";
    for (name, expr) in [
        ("motif.yaml", motif.repeat(8) + "1"),
        ("nest.yaml", "(".repeat(5000) + "1 +"),
        ("list.yaml", "[".repeat(5000) + "1" + &"]".repeat(5000)),
    ] {
        let d = tempfile::tempdir().unwrap();
        let spec = format!(
            "name: t\ndescription: A tool whose rule is hostile.\neffect: pure\nvalidate:\n  - id: hostile\n    expr: '{expr}'\n    message: never\nexec: {{builtin: echo}}\n"
        );
        write(d.path(), name, spec.as_bytes());
        let o = lint(d.path(), name);
        assert_eq!(o.code, 1, "{name}: {}\n{}", o.stdout, o.stderr);
        let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
        let d = v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["code"] == "TGK004")
            .unwrap_or_else(|| panic!("{name}: no TGK004 in {}", o.stdout));
        assert!(
            d["message"]
                .as_str()
                .unwrap()
                .starts_with("CEL syntax error"),
            "{name}: {d}"
        );
        assert_eq!(d["location"]["line"], 6, "{name}");
    }
}
