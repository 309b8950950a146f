//! `toolgate import --from FORMAT FILE`, driven as a user would: a project's tool list exported
//! for each provider, imported back into starter specs, and linted — no errors, every
//! parameter constraint the list carried still there.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::process::Command;

use common::repo;
use pretty_assertions::assert_eq;

fn toolgate(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

#[test]
fn exported_lists_import_into_lint_clean_specs() {
    let project = repo().join("tests/fixtures/providers/project/toolgate.yaml");
    let project = project.to_str().unwrap();
    for (target, from) in [
        ("openai-chat", "openai"),
        ("openai-responses", "openai"),
        ("anthropic", "anthropic"),
        ("gemini", "gemini"),
        ("mcp", "mcp"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let o = toolgate(
            tmp.path(),
            &["export", "--provider", target, "--config", project],
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        std::fs::write(tmp.path().join("list.json"), &o.stdout).unwrap();
        let o = toolgate(
            tmp.path(),
            &["import", "--from", from, "list.json", "--out", "specs"],
        );
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{target}: {stderr}");
        assert!(
            stderr.contains("5 tool(s) from list.json: 5 written, 0 kept"),
            "{stderr}"
        );
        let spec = std::fs::read_to_string(tmp.path().join("specs/big_log.yaml")).unwrap();
        for kept in ["minimum: 1", "maximum: 100000"] {
            assert!(spec.contains(kept), "{target}: {kept} lost:\n{spec}");
        }
        // Conservative: only MCP's annotations say what a tool changes; elsewhere the effect is
        // assumed the worst. Either way a person approves each call until someone reviews it.
        let effect = if from == "mcp" {
            "read_only"
        } else {
            "external_side_effect"
        };
        assert!(
            spec.contains(&format!("effect: {effect}\n")),
            "{target}: {spec}"
        );
        assert!(spec.contains("ask: \"true\""), "{spec}");
        let o = toolgate(tmp.path(), &["lint", "specs"]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{target}: {}",
            String::from_utf8_lossy(&o.stdout)
        );
        // A second import keeps what is there.
        let o = toolgate(
            tmp.path(),
            &["import", "--from", from, "list.json", "--out", "specs"],
        );
        assert!(String::from_utf8_lossy(&o.stderr).contains("0 written, 5 kept"));
    }
}

#[test]
fn a_file_of_another_shape_is_refused_with_where() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("list.json"), "{\"functions\": []}").unwrap();
    let o = toolgate(tmp.path(), &["import", "--from", "gemini", "list.json"]);
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.starts_with("toolgate: list.json:1:1: no function declarations found"),
        "{stderr}"
    );
}
