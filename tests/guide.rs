//! The guide (docs/guide/) is true of the code: its chapters are played in order in one empty
//! folder, as a reader would — every file it shows is written, every command of a `console` block
//! is run with this build's `toolgate` first on PATH, and what the block shows is what the
//! command prints.
//!
//! The conventions (docs/guide/README.md): a fenced block right after `<!-- file: PATH -->` is
//! that file's whole content; in a `console` block, a line starting with `$ ` is a command (run by
//! `sh`), the lines after it are its standard output, and a line `...` stands for any number of
//! lines, and a line ending in `...` any line that starts with what comes before. Blocks of
//! other languages (`sh`, `rust`, `json`, …) are shown, not run: what they
//! describe is tested elsewhere (the chapter names the test).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The chapters that are played, in the order of SUMMARY.md.
const CHAPTERS: &[&str] = &[
    "tutorial.md",
    "permissions.md",
    "sandbox.md",
    "embedding.md",
    "ci.md",
];

enum Step {
    File { path: String, text: String },
    Command { line: String, expected: Vec<String> },
}

/// The files and commands of one chapter, in order.
fn steps(markdown: &str) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut pending_file: Option<String> = None;
    let mut lines = markdown.lines();
    while let Some(line) = lines.next() {
        if let Some(rest) = line.trim().strip_prefix("<!-- file:") {
            pending_file = Some(rest.trim_end_matches("-->").trim().to_owned());
            continue;
        }
        let Some(info) = line.strip_prefix("```") else {
            if !line.trim().is_empty() {
                pending_file = None;
            }
            continue;
        };
        let body: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.starts_with("```"))
            .collect();
        if let Some(path) = pending_file.take() {
            steps.push(Step::File {
                path,
                text: body.iter().map(|l| format!("{l}\n")).collect(),
            });
        } else if info.trim() == "console" {
            for l in body {
                match l.strip_prefix("$ ") {
                    Some(cmd) => steps.push(Step::Command {
                        line: cmd.to_owned(),
                        expected: Vec::new(),
                    }),
                    None => {
                        if let Some(Step::Command { expected, .. }) = steps.last_mut() {
                            expected.push(l.to_owned());
                        }
                    }
                }
            }
        }
    }
    steps
}

/// Whether `actual` matches `expected`, where a `...` line matches any number of lines and a
/// line ending in `...` any line that starts with what comes before.
fn matches(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first == "..." => {
            (0..=actual.len()).any(|skip| matches(rest, &actual[skip..]))
        }
        Some((first, rest)) => {
            let line_matches = |a: &str| match first.strip_suffix("...") {
                Some(prefix) => a.starts_with(prefix),
                None => a.trim_end() == first.trim_end(),
            };
            actual.first().is_some_and(|a| line_matches(a)) && matches(rest, &actual[1..])
        }
    }
}

#[test]
fn the_guide_runs_as_written() {
    let guide = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/guide/src");
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_toolgate")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("notes");
    // The journal and artifacts go to `$XDG_STATE_HOME/toolgate/…`: a folder of the test's own.
    let state_home = dir.path().join("state");
    std::fs::create_dir(&project).unwrap();
    let mut commands = 0;
    for chapter in CHAPTERS {
        let text = std::fs::read_to_string(guide.join(chapter)).unwrap();
        for step in steps(&text) {
            match step {
                Step::File { path, text } => {
                    let file = project.join(&path);
                    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
                    std::fs::write(file, text).unwrap();
                }
                Step::Command { line, expected } => {
                    commands += 1;
                    let out = Command::new("sh")
                        .args(["-c", &line])
                        .current_dir(&project)
                        .env("PATH", &path)
                        .env("NO_COLOR", "1")
                        .env("XDG_STATE_HOME", &state_home)
                        .env_remove("CI")
                        .output()
                        .unwrap();
                    let stdout = String::from_utf8_lossy(&out.stdout);
                    let actual: Vec<&str> = stdout.lines().collect();
                    assert!(
                        matches(&expected, &actual),
                        "{chapter}: `{line}` printed\n{stdout}\nstderr:\n{}\nbut the guide shows\n{}",
                        String::from_utf8_lossy(&out.stderr),
                        expected.join("\n")
                    );
                }
            }
        }
    }
    assert!(
        commands >= 10,
        "only {commands} commands found in the guide"
    );
}

#[test]
fn wildcards_match_any_number_of_lines() {
    let e = |s: &[&str]| s.iter().map(|l| (*l).to_owned()).collect::<Vec<_>>();
    assert!(matches(&e(&["a", "...", "d"]), &["a", "b", "c", "d"]));
    assert!(matches(&e(&["a", "...", "d"]), &["a", "d"]));
    assert!(!matches(&e(&["a", "...", "d"]), &["a", "b"]));
    assert!(!matches(&e(&["a"]), &["a", "b"]));
    assert!(matches(&e(&["ab...", "c"]), &["abcdef", "c"]));
    assert!(!matches(&e(&["ab..."]), &["xabc"]));
}
