#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! `toolgate init` as a newcomer runs it, the real binary in an empty folder: for every template
//! the new project lints with no findings, its build output is up to date (`build --check
//! --no-rust`, what the written CI workflow runs), and `toolgate call` works at once. Nothing
//! that exists is overwritten; an existing .gitignore gets the entries appended.

mod common;

use std::path::Path;
use std::process::Command;

use common::toolchain::{Toolchain, require};

fn toolgate(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .current_dir(dir)
        // The default state folder is under the home folder: keep it in the test's folder.
        .env("XDG_STATE_HOME", dir.join(".state-home"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Inits `template` in a new folder; checks lint, build --check and the files written.
fn init(template: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = toolgate(dir.path(), &["init", "--template", template]);
    assert_eq!(code, 0, "{err}");
    for f in [
        "toolgate.yaml",
        "toolgate.schema.json",
        "toolgate.project.schema.json",
        ".github/workflows/toolgate.yml",
        ".gitignore",
        "build/toolgate/bundle.json",
    ] {
        assert!(dir.path().join(f).is_file(), "{template}: {f} missing");
    }
    let (code, out, err) = toolgate(dir.path(), &["lint"]);
    assert_eq!(code, 0, "{template}: {out}{err}");
    assert!(out.starts_with("No findings in "), "{template}: {out}");
    let (code, _, err) = toolgate(dir.path(), &["build", "--check", "--no-rust"]);
    assert_eq!(code, 0, "{template}: {err}");
    // The workflow runs exactly these.
    let workflow =
        std::fs::read_to_string(dir.path().join(".github/workflows/toolgate.yml")).unwrap();
    assert!(workflow.contains("run: toolgate lint"), "{workflow}");
    assert!(
        workflow.contains("run: toolgate build --check --no-rust"),
        "{workflow}"
    );
    dir
}

#[test]
fn coding_template_lints_clean_and_calls_at_once() {
    let dir = init("coding");
    let (code, out, err) = toolgate(
        dir.path(),
        &[
            "call",
            "read_file",
            "--args",
            r#"{"path": "toolgate.yaml", "end_line": 3}"#,
        ],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("read_file: success\n"), "{out}");
    assert!(out.contains("     3\t"), "{out}");
    // The policy the example spec states holds: a secret is refused before any rule.
    std::fs::write(dir.path().join(".env"), "TOKEN=x\n").unwrap();
    let (code, out, _) = toolgate(
        dir.path(),
        &["call", "read_file", "--args", r#"{"path": ".env"}"#],
    );
    assert_eq!(code, 1);
    assert!(out.contains("POLICY_DENIED"), "{out}");
    assert!(!out.contains("TOKEN"), "{out}");
}

#[test]
fn mcp_gateway_template_lints_clean_and_calls_at_once() {
    let dir = init("mcp-gateway");
    if !require(&[Toolchain::McpServerGit, Toolchain::Git]) {
        return;
    }
    let st = Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(st.success());
    let (code, out, err) = toolgate(
        dir.path(),
        &["call", "git_status", "--args", r#"{"repo_path": "."}"#],
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("Repository status:"), "{out}");
    assert!(out.contains("toolgate.yaml"), "the untracked files: {out}");
}

#[test]
fn nothing_is_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("toolgate.yaml"), "mine\n").unwrap();
    std::fs::create_dir_all(dir.path().join("tool-specs")).unwrap();
    std::fs::write(dir.path().join("tool-specs/read_file.yaml"), "mine too\n").unwrap();
    let (code, _, err) = toolgate(dir.path(), &["init"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("toolgate.yaml, tool-specs/read_file.yaml exist already"),
        "{err}"
    );
    assert!(err.contains("nothing was written"), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("toolgate.yaml")).unwrap(),
        "mine\n"
    );
    let mut left: Vec<String> = walk(dir.path());
    left.sort();
    assert_eq!(left, ["tool-specs/read_file.yaml", "toolgate.yaml"]);
}

#[test]
fn an_existing_gitignore_gets_the_entries_appended_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".gitignore"), "/target").unwrap();
    let (code, _, err) = toolgate(dir.path(), &["init", "--dir", "."]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(dir.path().join(".gitignore")).unwrap();
    assert!(text.starts_with("/target\n# toolgate"), "{text}");
    assert!(text.contains("\n/.toolgate/\n"), "{text}");
    assert!(text.contains("\n/build/toolgate/rust/target/\n"), "{text}");
}

/// The http-api template lints clean, and its tool is an HTTP tool reaching only its own host
/// (no network in tests: the call itself is not made).
#[test]
fn http_api_lints_clean() {
    let dir = init("http-api");
    let bundle = std::fs::read_to_string(dir.path().join("build/toolgate/bundle.json")).unwrap();
    assert!(bundle.contains("\"http\""), "{bundle}");
    assert!(bundle.contains("https://api.github.com/repos/{owner}/{repo}/issues/{issue_number}"));
}

fn walk(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(
                    p.strip_prefix(root)
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/"),
                );
            }
        }
    }
    out
}
