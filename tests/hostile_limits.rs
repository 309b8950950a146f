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

/// A spec of one tool whose parameters name `d0`, each definition `levels` levels of `wrap`
/// around a reference to the next: within the loader's 64 YAML levels, but the chain followed
/// (or inlined) nests `count * levels` subschemas deep.
fn chained_spec(name: &str, count: usize, levels: usize, wrap: &str, root_refs: &str) -> String {
    let defs: String = (0..=count)
        .map(|i| {
            let mut body = if i < count {
                format!("{{$ref: '#/$defs/d{}'}}", i + 1)
            } else {
                "{type: string}".to_owned()
            };
            for _ in 0..levels {
                body = wrap.replace("{}", &body);
            }
            format!("    d{i}: {body}\n")
        })
        .collect();
    format!(
        "name: {name}\ndescription: A tool whose parameter schema chains definitions, each naming the next.\neffect: pure\nparameters:\n  type: object\n  properties: {{{root_refs}}}\n  $defs:\n{defs}exec: {{builtin: echo}}\n"
    )
}

fn toolgate(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

/// Eight definitions of 28 `properties` levels, named by the root last first: inlined, they
/// nested some 450 JSON levels (past serde_json's 128, so the exported list could not be read
/// back, and the emitters' walks took seconds per chain). Now `inline_refs` keeps the references
/// once the inlined form would pass 100 levels.
#[test]
fn a_chain_of_definitions_is_not_inlined_past_the_depth_limit() {
    let d = tempfile::tempdir().unwrap();
    let roots = (0..=8)
        .map(|j| format!("p{j}: {{$ref: '#/$defs/d{}'}}", 8 - j))
        .collect::<Vec<_>>()
        .join(", ");
    let spec = chained_spec("deep_refs", 8, 28, "{properties: {x: {}}}", &roots);
    std::fs::write(d.path().join("t.yaml"), spec).unwrap();
    for provider in ["openai-chat", "anthropic", "mcp", "gemini"] {
        let out = toolgate(d.path(), &["export", "--provider", provider, "t.yaml"]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{provider}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let list: serde_json::Value = serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("{provider}: the list does not read back: {e}"));
        assert!(list.to_string().contains("#/$defs/d1"), "{provider}");
    }
}

/// A hundred array definitions of 30 levels: `toolgate build` mapped them to Rust types one
/// `map` frame per level and overflowed its stack (rc 134); now it stops at 64 with an error.
#[test]
fn a_chain_of_definitions_past_the_rust_emitter_limit_is_an_error() {
    let d = tempfile::tempdir().unwrap();
    let spec = chained_spec(
        "deep_arrays",
        100,
        30,
        "{type: array, items: {}}",
        "p: {$ref: '#/$defs/d0'}",
    );
    std::fs::write(d.path().join("t.yaml"), spec).unwrap();
    let out = toolgate(d.path(), &["build", "--out", "out", "t.yaml"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    // The human report wraps the message and draws `│` before each continued line.
    let flat = stderr
        .replace('│', " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        flat.contains(
            "rust: the schema `deep_arrays/args` nests deeper than 64 subschemas once its `$ref`s \
             are followed; flatten the chain of definitions"
        ),
        "{stderr}"
    );
}
