#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! `toolgate build` and `toolgate export` as a user runs them: exit codes, `--check` with a
//! diff, stale-file removal, and lint errors stopping the build.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "../benches/support/catalogue.rs"]
mod catalogue;

fn toolgate(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/emit-project");
    std::fs::create_dir_all(dir.path().join("specs")).unwrap();
    for f in ["toolgate.yaml", "specs/notes.yaml"] {
        std::fs::copy(src.join(f), dir.path().join(f)).unwrap();
    }
    dir
}

#[test]
fn build_check_and_stale_files() {
    let dir = fixture();
    let out = toolgate(dir.path(), &["build", "--toolgate-path", "/opt/toolgate"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let built = dir.path().join("build/toolgate");
    assert!(
        built
            .join("toolsets/reading/tools/anthropic.json")
            .is_file()
    );
    assert!(built.join("rust/src/lib.rs").is_file());

    let out = toolgate(
        dir.path(),
        &["build", "--check", "--toolgate-path", "/opt/toolgate"],
    );
    assert_eq!(out.status.code(), Some(0));

    // A changed contract makes the folder stale: --check shows a diff and writes nothing.
    let spec = dir.path().join("specs/notes.yaml");
    let text = std::fs::read_to_string(&spec).unwrap();
    std::fs::write(
        &spec,
        text.replace("Read a note by its title.", "Read one note by its title."),
    )
    .unwrap();
    let out = toolgate(
        dir.path(),
        &["build", "--check", "--toolgate-path", "/opt/toolgate"],
    );
    assert_eq!(out.status.code(), Some(1));
    let diff = String::from_utf8_lossy(&out.stdout);
    assert!(
        diff.contains("-        \"description\": \"Read a note by its title."),
        "{diff}"
    );
    assert!(
        diff.contains("+        \"description\": \"Read one note by its title."),
        "{diff}"
    );

    // Dropping a toolset removes its files, and only files toolgate wrote.
    std::fs::write(built.join("rust/notes.txt"), "mine").unwrap();
    let project = dir.path().join("toolgate.yaml");
    let text = std::fs::read_to_string(&project).unwrap();
    let cut = text.find("  reading:").unwrap();
    let end = text.find("  writing:").unwrap();
    std::fs::write(&project, format!("{}{}", &text[..cut], &text[end..])).unwrap();
    let out = toolgate(dir.path(), &["build", "--toolgate-path", "/opt/toolgate"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!built.join("toolsets/reading").exists());
    assert!(built.join("rust/notes.txt").is_file());
}

#[test]
fn lint_errors_stop_the_build() {
    let dir = fixture();
    let spec = dir.path().join("specs/notes.yaml");
    let text = std::fs::read_to_string(&spec).unwrap();
    std::fs::write(
        &spec,
        text.replacen("effect: read_only", "effect: reads_stuff", 1),
    )
    .unwrap();
    let out = toolgate(dir.path(), &["build"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("build stopped"));
    assert!(!dir.path().join("build/toolgate").exists());
}

#[test]
fn export_prints_one_list() {
    let dir = fixture();
    let out = toolgate(
        dir.path(),
        &["export", "--provider", "mcp", "--toolset", "reading"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["read_note"]);
    let out = toolgate(
        dir.path(),
        &["export", "--provider", "openai-chat", "--toolset", "nope"],
    );
    assert_eq!(out.status.code(), Some(2));
}

/// The build benchmark's generated project must lint clean, or the benchmark times a failure
/// (it did, after rules were added that its specs broke).
#[test]
fn bench_project_lints_clean() {
    let dir = tempfile::tempdir().unwrap();
    catalogue::write_project(dir.path()).unwrap();
    let out = toolgate(dir.path(), &["lint", "--format", "json"]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{report}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["summary"]["tools"], catalogue::SPECS, "{report}");
    assert_eq!(v["diagnostics"], serde_json::json!([]), "{report}");
}

/// Every file and folder under `dir`: path, modification time and content.
fn tree(dir: &Path) -> Vec<(PathBuf, Option<std::time::SystemTime>, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let modified = std::fs::metadata(&p).unwrap().modified().ok();
            if p.is_dir() {
                stack.push(p.clone());
                out.push((p, modified, Vec::new()));
            } else {
                let bytes = std::fs::read(&p).unwrap();
                out.push((p, modified, bytes));
            }
        }
    }
    out.sort();
    out
}

/// `--check` writes nothing: no output folder when there is none, and no file or folder
/// touched in a stale one (changed, missing and stale files alike).
#[test]
fn check_writes_nothing() {
    let dir = fixture();
    let args = ["build", "--toolgate-path", "/opt/toolgate"];
    let check = ["build", "--check", "--toolgate-path", "/opt/toolgate"];
    let out = toolgate(dir.path(), &check);
    assert_eq!(out.status.code(), Some(1));
    assert!(!dir.path().join("build").exists());

    assert_eq!(toolgate(dir.path(), &args).status.code(), Some(0));
    let built = dir.path().join("build/toolgate");
    std::fs::remove_file(built.join("tools/gemini.json")).unwrap();
    std::fs::write(built.join("tools/mcp.json"), "{}\n").unwrap();
    let spec = dir.path().join("specs/notes.yaml");
    let text = std::fs::read_to_string(&spec).unwrap();
    std::fs::write(
        &spec,
        text.replace("Read a note by its title.", "Read a note."),
    )
    .unwrap();
    let before = tree(dir.path());
    let out = toolgate(dir.path(), &check);
    assert_eq!(out.status.code(), Some(1));
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.contains("missing: tools/gemini.json"), "{report}");
    assert!(report.contains("changed: tools/mcp.json"), "{report}");
    assert_eq!(tree(dir.path()), before);
}

/// A second build of the same contracts emits nothing (the fingerprint matches and every file
/// is as written); an edited output file, or a changed contract, makes it emit again.
#[test]
fn an_up_to_date_build_is_skipped() {
    let dir = fixture();
    let args = ["build", "--toolgate-path", "/opt/toolgate"];
    let run = |expect: &str| {
        let out = toolgate(dir.path(), &args);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(err.contains(expect), "expected `{expect}`: {err}");
    };
    run("changed)");
    let built = dir.path().join("build/toolgate");
    let before = tree(&built);
    run("is up to date");
    assert_eq!(tree(&built), before);
    // Same size, other content: found by the hash, and put back.
    let mcp = built.join("tools/mcp.json");
    let text = std::fs::read_to_string(&mcp).unwrap();
    std::fs::write(&mcp, text.replacen("true", "TRUE", 1)).unwrap();
    run("(1 changed)");
    assert_eq!(std::fs::read_to_string(&mcp).unwrap(), text);
    run("is up to date");
    // Other options, another fingerprint: rust/Cargo.toml changes.
    let out = toolgate(dir.path(), &["build", "--toolgate-path", "/opt/other"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("(1 changed)"), "{err}");
    let manifest = std::fs::read_to_string(built.join("rust/Cargo.toml")).unwrap();
    assert!(manifest.contains("/opt/other"), "{manifest}");
}

/// Without `--toolgate-path`, the generated crate depends on this toolgate's source tree by a
/// path relative to `rust/`, so the output is the same on every clone laid out alike.
#[test]
fn the_default_toolgate_dependency_is_a_relative_path() {
    let dir = fixture();
    let out = toolgate(dir.path(), &["build"]);
    assert_eq!(out.status.code(), Some(0));
    let rust = dir.path().join("build/toolgate/rust");
    let manifest = std::fs::read_to_string(rust.join("Cargo.toml")).unwrap();
    let line = manifest
        .lines()
        .find(|l| l.starts_with("toolgate = "))
        .unwrap();
    let path = line.split('"').nth(1).unwrap();
    assert!(
        line.contains("path = ") && !Path::new(path).is_absolute(),
        "{line}"
    );
    assert_eq!(
        rust.join(path).canonicalize().unwrap(),
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .canonicalize()
            .unwrap()
    );
}
