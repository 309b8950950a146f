#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! Hostile inputs that once aborted a command are refused within a documented limit: each case
//! runs the real binary on real files and expects a located error, never a crash.

use std::process::Command;

/// A 5,000-step member chain (`args.obj.a.a….a == 1`, under the 16 KiB size cap) overflowed
/// the stack of `toolgate lint`; now it is a located CEL syntax error at the step past 250.
#[test]
fn cel_member_chain_past_the_limit_is_a_located_error() {
    let d = tempfile::tempdir().unwrap();
    let expr = format!("args.obj{} == 1", ".a".repeat(5000));
    let spec = format!(
        "name: t\ndescription: A tool whose rule is hostile.\neffect: pure\nparameters:\n  type: object\n  properties:\n    obj: {{type: object}}\nvalidate:\n  - id: hostile\n    expr: '{expr}'\n    message: never\nexec: {{builtin: echo}}\n"
    );
    std::fs::write(d.path().join("t.yaml"), spec).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["lint", "t.yaml", "--format", "json"])
        .current_dir(d.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let d = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "TGK004")
        .unwrap_or_else(|| panic!("no TGK004 in {stdout}"));
    assert_eq!(
        d["message"],
        "CEL syntax error: expression chains more than 250 member steps, indexes, calls and \
         operators in one operand; split it into several rules or use `all()`/`exists()`"
    );
    // Line 10 holds the expression; the refused dot is the 250th `.a` after `expr: '`.
    assert_eq!(
        (
            d["location"]["line"].as_u64(),
            d["location"]["column"].as_u64()
        ),
        (Some(10), Some(518))
    );
}
