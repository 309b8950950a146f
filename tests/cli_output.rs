#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! Findings as a person sees them in a pipe, a CI log or a file: the real binary with its
//! output captured (never a terminal). The full view (source lines, labels, help) without
//! colour, never the narrated form unless asked; `--format concise`; `--statistics`; `--quiet`;
//! `NO_COLOR` and `CLICOLOR_FORCE`; and `build`, `export` and `call` showing the same view.

use std::path::Path;
use std::process::Command;

/// One spec with findings of several rules (two of them on the same parameter).
const SPEC: &str = "\
name: list_items
description: List the items of a folder. Returns their names.
effect: read_only
idempotency: pure
parameters:
  type: object
  properties:
    tags:
      type: array
      items: {type: string, maxLength: 20}
      description: Tags to filter by.
    limit:
      type: integer
      description: How many to return, at most 100.
exec: {builtin: list_dir}
";

/// The same spec with an error: a validate rule reading an argument that does not exist.
const BROKEN: &str = "\
validate:
  - id: positive
    expr: args.count > 0
    message: count must be positive.
";

/// Runs the binary in `dir` with the colour variables set as given (all others removed).
fn toolgate(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgate"));
    cmd.args(args).current_dir(dir);
    for k in ["NO_COLOR", "CLICOLOR_FORCE", "CLICOLOR", "TERM", "CI"] {
        cmd.env_remove(k);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn project(spec: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("tool-specs")).unwrap();
    std::fs::write(dir.path().join("tool-specs/list_items.yaml"), spec).unwrap();
    dir
}

const ESC: char = '\u{1b}';

#[test]
fn piped_lint_prints_the_full_view_without_colour() {
    let dir = project(SPEC);
    let (code, out, err) = toolgate(dir.path(), &["lint"], &[]);
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains(ESC), "colour in a pipe:\n{out}");
    assert!(!out.contains("Begin snippet"), "narrated form:\n{out}");
    insta::assert_snapshot!("lint_full_piped", out);
}

#[test]
fn concise_is_one_line_per_finding() {
    let dir = project(SPEC);
    let (code, out, _) = toolgate(dir.path(), &["lint", "--format", "concise"], &[]);
    assert_eq!(code, 0);
    for line in out.lines().take_while(|l| l.starts_with("tool-specs/")) {
        let mut parts = line.splitn(4, ':');
        let (_, l, c) = (parts.next(), parts.next(), parts.next());
        assert!(l.unwrap().parse::<usize>().is_ok(), "{line}");
        assert!(c.unwrap().parse::<usize>().is_ok(), "{line}");
    }
    insta::assert_snapshot!("lint_concise", out);
}

#[test]
fn statistics_count_per_rule_and_quiet_drops_the_summary() {
    let dir = project(SPEC);
    std::fs::write(
        dir.path().join("tool-specs/read_note.yaml"),
        "name: read_note\ndescription: Read one note by its title. Returns its text.\neffect: read_only\n\
         idempotency: pure\nparameters:\n  type: object\n  properties:\n    title: {type: string, \
         description: The note's title.}\nexec: {builtin: read_file}\n",
    )
    .unwrap();
    let (_, stats, _) = toolgate(dir.path(), &["lint", "--statistics"], &[]);
    insta::assert_snapshot!("lint_statistics", stats);
    let (_, quiet, _) = toolgate(
        dir.path(),
        &["lint", "--statistics", "--quiet", "--format", "concise"],
        &[],
    );
    assert_eq!(
        quiet,
        stats
            .lines()
            .filter(|l| !l.contains(" in 2 files"))
            .fold(String::new(), |s, l| s + l + "\n")
    );
    let (_, concise, _) = toolgate(dir.path(), &["lint", "--format", "concise"], &[]);
    let (_, quiet_findings, _) = toolgate(dir.path(), &["lint", "-q", "--format", "concise"], &[]);
    assert_eq!(
        quiet_findings,
        concise
            .lines()
            .filter(|l| !l.contains(" in 2 files"))
            .fold(String::new(), |s, l| s + l + "\n")
    );
    // The JSON report has its own counts; --statistics there is a usage error.
    let (code, _, err) = toolgate(
        dir.path(),
        &["lint", "--statistics", "--format", "json"],
        &[],
    );
    assert_eq!(code, 2);
    assert!(err.contains("--statistics works with"), "{err}");
}

#[test]
fn clean_specs_and_quiet_print_nothing() {
    // The repository's own standard library lints clean.
    let (code, out, _) = toolgate(
        Path::new(env!("CARGO_MANIFEST_DIR")),
        &["lint", "--quiet"],
        &[],
    );
    assert_eq!(code, 0);
    assert_eq!(out, "");
}

#[test]
fn colour_variables_are_respected() {
    let dir = project(SPEC);
    let run = |env: &[(&str, &str)]| toolgate(dir.path(), &["lint"], env).1;
    let plain = run(&[]);
    let forced = run(&[("CLICOLOR_FORCE", "1")]);
    assert!(forced.contains(ESC), "CLICOLOR_FORCE=1 gave no colour");
    assert!(!run(&[("CLICOLOR_FORCE", "0")]).contains(ESC));
    assert_eq!(run(&[("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")]), plain);
    // Colour changes nothing but the escapes.
    assert_eq!(strip_ansi(&forced), plain);
}

#[test]
fn narrated_only_when_asked() {
    let dir = project(SPEC);
    let (_, out, _) = toolgate(dir.path(), &["lint", "--format", "narrated"], &[]);
    assert!(out.contains("Begin snippet"), "{out}");
    assert!(!out.contains('╭'), "{out}");
}

#[test]
fn build_export_and_call_show_the_lint_view() {
    let dir = project(&format!("{SPEC}{BROKEN}"));
    let (code, lint, _) = toolgate(dir.path(), &["lint"], &[]);
    assert_eq!(code, 1);
    assert!(lint.contains("TGC001"), "{lint}");
    for args in [
        &["build"][..],
        &["export", "--provider", "mcp"],
        &["call", "list_items", "--args", "{}"],
    ] {
        let (code, out, err) = toolgate(dir.path(), args, &[]);
        assert_ne!(code, 0, "{args:?}");
        assert_eq!(out, "", "{args:?}");
        assert!(
            err.starts_with(&lint),
            "{args:?} does not show lint's view:\n{err}\n--- lint:\n{lint}"
        );
        assert!(!err.contains(ESC), "{args:?}: colour in a pipe");
        let forced = toolgate(dir.path(), args, &[("CLICOLOR_FORCE", "1")]).2;
        assert!(forced.contains(ESC), "{args:?}: CLICOLOR_FORCE ignored");
    }
}

/// Removes ANSI SGR sequences (`ESC [ ... m`) and hyperlinks (`ESC ] 8 ; ; ... ESC \`).
fn strip_ansi(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != ESC {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == ESC && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}
