#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! `toolgate build` and `toolgate export` as a user runs them: exit codes, `--check` with a
//! diff, stale-file removal, and lint errors stopping the build.

use std::path::Path;
use std::process::{Command, Output};

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
        &["export", "--target", "mcp", "--toolset", "reading"],
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
        &["export", "--target", "openai-chat", "--toolset", "nope"],
    );
    assert_eq!(out.status.code(), Some(2));
}
