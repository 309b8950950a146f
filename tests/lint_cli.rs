#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! `toolgate lint`, `rules`, `explain` and `schema` as a user runs them: the real binary on real
//! files, checking exit codes, the JSON and GitHub reports, and the `lint` section of
//! toolgate.yaml (severity, ignore, per_file_ignores).

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use toolgate::lint::Rule;

/// Runs the binary in `dir`; returns exit code, stdout and stderr.
fn toolgate(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn write(dir: &Path, name: &str, text: &str) {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// An MCP list whose only finding is an info (TGS003: no `outputSchema`).
const INFO_ONLY: &str = r#"{"tools": [{"name": "get_build_status", "description": "Report the build status of the current branch. Returns the state of the latest build.", "inputSchema": {"type": "object", "properties": {}, "additionalProperties": false}}]}"#;

/// An MCP list with a warning (TGS006: an array without `maxItems`) beside that info.
const WARNING: &str = r#"{"tools": [{"name": "get_build_status", "description": "Report the build status of branches. Returns the state of the latest build of each.", "inputSchema": {"type": "object", "properties": {"branches": {"type": "array", "description": "The branches to report on.", "items": {"type": "string", "enum": ["main", "dev"]}}}, "additionalProperties": false}}]}"#;

/// An MCP list with an error (TGN003: no description).
const ERROR: &str = r#"{"tools": [{"name": "get_build_status", "inputSchema": {"type": "object", "properties": {}, "additionalProperties": false}}]}"#;

fn lint_exit(list: &str, fail_on: &str) -> i32 {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "tools.json", list);
    let (code, _, stderr) = toolgate(
        dir.path(),
        &["lint", "--from", "mcp", "tools.json", "--fail-on", fail_on],
    );
    assert!(stderr.is_empty(), "{stderr}");
    code
}

#[test]
fn fail_on_sets_the_exit_code() {
    let table: Vec<(&str, &str, i32)> = vec![
        ("info only", "error", 0),
        ("info only", "warning", 0),
        ("info only", "info", 1),
        ("warning", "error", 0),
        ("warning", "warning", 1),
        ("warning", "info", 1),
        ("error", "error", 1),
        ("error", "warning", 1),
        ("error", "info", 1),
    ];
    let got: Vec<(&str, &str, i32)> = table
        .iter()
        .map(|(list, fail_on, _)| {
            let text = match *list {
                "info only" => INFO_ONLY,
                "warning" => WARNING,
                _ => ERROR,
            };
            (*list, *fail_on, lint_exit(text, fail_on))
        })
        .collect();
    assert_eq!(got, table);
}

#[test]
fn json_report_shape() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "tools.json", WARNING);
    let (code, stdout, _) = toolgate(
        dir.path(),
        &["lint", "--from", "mcp", "tools.json", "--format", "json"],
    );
    assert_eq!(code, 0);
    let doc: Value = serde_json::from_str(&stdout).unwrap();
    insta::assert_json_snapshot!("json_report", doc);
}

#[test]
fn github_report() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "tools.json", WARNING);
    let (code, stdout, _) = toolgate(
        dir.path(),
        &["lint", "--from", "mcp", "tools.json", "--format", "github"],
    );
    assert_eq!(code, 0);
    insta::assert_snapshot!("github_report", stdout);
}

#[test]
fn usage_and_load_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "broken.json", r#"{"tools": [{"name": "x""#);
    write(dir.path(), "not_a_list.json", r#"{"servers": 1}"#);
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("--from without a file", vec!["lint", "--from", "mcp"]),
        ("unknown format", vec!["lint", "--format", "xml"]),
        ("unknown --from", vec!["lint", "--from", "gemini", "x.json"]),
        ("unknown --fail-on", vec!["lint", "--fail-on", "never"]),
        (
            "missing file",
            vec!["lint", "--from", "mcp", "missing.json"],
        ),
        (
            "malformed JSON",
            vec!["lint", "--from", "mcp", "broken.json"],
        ),
        (
            "not a tool list",
            vec!["lint", "--from", "mcp", "not_a_list.json"],
        ),
        ("unknown rule", vec!["explain", "TGX999"]),
    ];
    let got: Vec<(&str, i32)> = cases
        .iter()
        .map(|(what, args)| (*what, toolgate(dir.path(), args).0))
        .collect();
    let want: Vec<(&str, i32)> = cases.iter().map(|(what, _)| (*what, 2)).collect();
    assert_eq!(got, want);
}

#[test]
fn rules_lists_every_rule() {
    let dir = tempfile::tempdir().unwrap();
    let (code, text, _) = toolgate(dir.path(), &["rules"]);
    assert_eq!(code, 0);
    let codes: Vec<&str> = text
        .lines()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    let all: Vec<&str> = Rule::ALL.iter().map(|r| r.code()).collect();
    assert_eq!(codes, all);

    let (code, json, _) = toolgate(dir.path(), &["rules", "--format", "json"]);
    assert_eq!(code, 0);
    let rows: Vec<Value> = serde_json::from_str(&json).unwrap();
    let rows: Vec<(String, String, bool)> = rows
        .iter()
        .map(|r| {
            (
                r["code"].as_str().unwrap().to_owned(),
                r["name"].as_str().unwrap().to_owned(),
                r["explanation"]
                    .as_str()
                    .unwrap()
                    .contains("## What it does"),
            )
        })
        .collect();
    let want: Vec<(String, String, bool)> = Rule::ALL
        .iter()
        .map(|r| (r.code().to_owned(), r.name().to_owned(), true))
        .collect();
    assert_eq!(rows, want);
}

#[test]
fn rules_and_explain_show_the_tier() {
    let dir = tempfile::tempdir().unwrap();
    let (_, json, _) = toolgate(dir.path(), &["rules", "--format", "json"]);
    let rows: Vec<Value> = serde_json::from_str(&json).unwrap();
    for r in &rows {
        let rule = Rule::find(r["code"].as_str().unwrap()).unwrap();
        assert_eq!(r["tier"].as_str(), Some(rule.meta().tier().as_str()));
    }
    let (_, text, _) = toolgate(dir.path(), &["explain", "TGN004"]);
    assert!(
        text.contains("tier: preview (off unless opted in: `--preview`, `--select TGN004`"),
        "{text}"
    );
}

/// docs/rules.md is generated from the rule metadata; this fails when it is out of date.
#[test]
fn rules_md_is_generated_from_the_rule_metadata() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let (code, generated, _) = toolgate(root, &["rules", "--format", "markdown"]);
    assert_eq!(code, 0);
    let committed = std::fs::read_to_string(root.join("docs/rules.md")).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/rules.md is out of date: regenerate it with `cargo run -- rules --format markdown > docs/rules.md`"
    );
    for r in Rule::ALL {
        let m = r.meta();
        let anchor = format!("## {}\n", m.code());
        assert!(generated.contains(&anchor), "no section for {}", m.code());
        // The documentation URL of each finding points at that section.
        assert!(
            m.help_uri()
                .ends_with(&format!("#{}", m.code().to_ascii_lowercase()))
        );
    }
}

#[test]
fn preview_and_select_turn_preview_rules_on() {
    let dir = tempfile::tempdir().unwrap();
    // A parameter with no description: TGN004, a preview rule.
    let list = r#"{"tools": [{"name": "read_note", "description": "Read one note of the notebook and return its text.", "inputSchema": {"type": "object", "properties": {"path": {"type": "string", "maxLength": 200}}, "required": ["path"], "additionalProperties": false}}]}"#;
    write(dir.path(), "tools.json", list);
    let codes = |extra: &[&str]| -> Vec<String> {
        let mut args = vec!["lint", "--from", "mcp", "--format", "json"];
        args.extend_from_slice(extra);
        args.push("tools.json");
        let (_, out, err) = toolgate(dir.path(), &args);
        let doc: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {err}"));
        doc["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["code"].as_str().unwrap_or("-").to_owned())
            .collect()
    };
    assert!(!codes(&[]).contains(&"TGN004".to_owned()));
    assert!(codes(&["--preview"]).contains(&"TGN004".to_owned()));
    assert!(
        codes(&["--select", "TGS009,parameter-description-missing"]).contains(&"TGN004".to_owned())
    );
    let (code, _, err) = toolgate(dir.path(), &["lint", "--select", "TGN999", "tools.json"]);
    assert_ne!(code, 0);
    assert!(err.contains("unknown rule `TGN999` in --select"), "{err}");
}

#[test]
fn explain_prints_a_rule_by_code_or_name() {
    let dir = tempfile::tempdir().unwrap();
    let (code, by_code, _) = toolgate(dir.path(), &["explain", "TGS004"]);
    assert_eq!(code, 0);
    let (_, by_name, _) = toolgate(dir.path(), &["explain", "mutually-exclusive-parameters"]);
    assert_eq!(by_code, by_name);
    let head: Vec<&str> = by_code.lines().take(3).collect();
    assert_eq!(
        head,
        [
            "# TGS004 mutually-exclusive-parameters",
            "",
            "Group: schema-design · default severity: warning · tier: stable"
        ]
    );
    for heading in [
        "## What it does",
        "## Why is this bad?",
        "## Example",
        "Use instead:",
    ] {
        assert!(by_code.contains(heading), "no `{heading}`");
    }
}

#[test]
fn schema_is_the_spec_json_schema() {
    let dir = tempfile::tempdir().unwrap();
    let (code, text, _) = toolgate(dir.path(), &["schema"]);
    assert_eq!(code, 0);
    let schema: Value = serde_json::from_str(&text).unwrap();
    // The committed copy that editors load is the same document.
    let committed: Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("toolgate.schema.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(schema, committed);
}

/// The clean `read_file` spec of tests/fixtures/clean under another name, with a description
/// that only says what it demonstrates: its only finding is TGN005 thin-description (a warning by
/// default).
fn thin_spec(name: &str) -> String {
    let clean = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/clean/read_file.yaml"),
    )
    .unwrap();
    let (head, rest) = clean.split_once("description: >-").unwrap();
    let (_, tail) = rest.split_once("\neffect:").unwrap();
    format!("{head}description: Demonstrates how a file is read.\neffect:{tail}")
        .replace("name: read_file", &format!("name: {name}"))
}

/// Lints a project of two thin specs (one under legacy/) with this `lint` section; returns the
/// exit code and (file, code, severity) of each finding.
fn lint_project(lint: &str) -> (i32, Vec<(String, String, String)>) {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "toolgate.yaml",
        &format!("specs: [\"tool-specs/**/*.yaml\"]\n{lint}"),
    );
    write(dir.path(), "tool-specs/read_a.yaml", &thin_spec("read_a"));
    write(
        dir.path(),
        "tool-specs/legacy/read_b.yaml",
        &thin_spec("read_b"),
    );
    let (code, stdout, stderr) = toolgate(dir.path(), &["lint", "--format", "json"]);
    let doc: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    // The two specs are one tool under two names, which TGN010 rightly reports; this is about
    // how the project file configures the other findings.
    let found = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] != "TGN010")
        .map(|d| {
            (
                d["location"]["file"].as_str().unwrap().to_owned(),
                d["code"].as_str().unwrap().to_owned(),
                d["severity"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    (code, found)
}

fn finding(file: &str, code: &str, severity: &str) -> (String, String, String) {
    (file.to_owned(), code.to_owned(), severity.to_owned())
}

#[test]
fn project_file_configures_the_rules() {
    let a = "tool-specs/read_a.yaml";
    let b = "tool-specs/legacy/read_b.yaml";
    assert_eq!(
        lint_project(""),
        (
            0,
            vec![
                finding(b, "TGN005", "warning"),
                finding(a, "TGN005", "warning")
            ]
        )
    );
    assert_eq!(
        lint_project("lint:\n  severity: {TGN005: error}\n"),
        (
            1,
            vec![finding(b, "TGN005", "error"), finding(a, "TGN005", "error")]
        )
    );
    assert_eq!(
        lint_project("lint:\n  severity: {thin-description: off}\n"),
        (0, vec![])
    );
    assert_eq!(lint_project("lint:\n  ignore: [TGN005]\n"), (0, vec![]));
    assert_eq!(
        lint_project("lint:\n  per_file_ignores: {\"tool-specs/legacy/**\": [TGN005]}\n"),
        (0, vec![finding(a, "TGN005", "warning")])
    );
    // A contract rule cannot be turned off: the project file itself is then invalid.
    let (code, found) = lint_project("lint:\n  ignore: [TGK006]\n");
    assert_eq!(code, 1);
    assert_eq!(
        found.iter().map(|f| f.1.as_str()).collect::<Vec<_>>(),
        ["TGK001", "TGN005", "TGN005"]
    );
}

/// `serve: {toolset: NAME}` in toolgate.yaml must name a toolset the file defines.
#[test]
fn serve_toolset_names_a_defined_toolset() {
    let sets = "toolsets:\n  reading: {tools: [read_a]}\n";
    let (_, found) = lint_project(&format!("{sets}serve: {{toolset: reading}}\n"));
    assert!(found.iter().all(|f| f.0 != "toolgate.yaml"), "{found:?}");
    let (code, found) = lint_project(&format!("{sets}serve: {{toolset: readin}}\n"));
    assert_eq!(code, 1);
    assert!(
        found.contains(&finding("toolgate.yaml", "TGK001", "error")),
        "{found:?}"
    );
}

/// A one-line list of more than 64 KB whose error is on its last tool: every format reports it
/// (exit 1, not a panic's 101) at the right line and column, past the 65,535th.
#[test]
fn a_finding_on_a_very_long_line_renders_in_every_format() {
    let last = r#"{"name": "get_the_last_status", "inputSchema": {"type": "object", "properties": {}, "additionalProperties": false}}"#;
    // Blanks are JSON whitespace: the line grows without adding findings.
    let text = format!(r#"{{"tools": [{}{last}]}}"#, " ".repeat(70_000));
    assert!(text.len() > 64 * 1024 && !text.contains('\n'));
    let last_at = text.find(last).unwrap() + 1;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "tools.json", &text);
    let run = |format: &str| {
        let (code, stdout, stderr) = toolgate(
            dir.path(),
            &["lint", "--from", "mcp", "tools.json", "--format", format],
        );
        assert_eq!(code, 1, "{format}: {stderr}");
        stdout
    };
    let doc: Value = serde_json::from_str(&run("json")).unwrap();
    let error = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "TGN003")
        .unwrap_or_else(|| panic!("{doc}"));
    let (line, column) = (
        error["location"]["line"].as_u64().unwrap(),
        error["location"]["column"].as_u64().unwrap() as usize,
    );
    assert_eq!(line, 1);
    assert!(
        column > 65_535 && (last_at..last_at + last.len()).contains(&column),
        "{column} not in the last tool at {last_at}"
    );
    let human = run("human");
    assert!(
        human.contains(&format!("tools.json:1:{column}")) && human.contains("TGN003"),
        "{}",
        &human[..human.len().min(2000)]
    );
    assert!(human.contains("…"), "the excerpt is cut: {human}");
    assert!(human.len() < 10_000, "the long line is not printed whole");
    let github = run("github");
    assert!(github.contains(&format!("line=1,col={column}")), "{github}");
    let sarif: Value = serde_json::from_str(&run("sarif")).unwrap();
    assert!(
        sarif
            .to_string()
            .contains(&format!("\"startColumn\":{column}")),
        "{sarif}"
    );
}

/// A spec that is a symbolic link to a file outside the repository is not read: `lint` reports
/// it at its `specs:` entry and exits non-zero.
#[test]
fn a_spec_linked_outside_the_repository_is_refused() {
    let outer = tempfile::tempdir().unwrap();
    let repo = outer.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    write(
        outer.path(),
        "outside/secret.yaml",
        &thin_spec("outside_tool"),
    );
    write(&repo, "tool-specs/inside.yaml", &thin_spec("inside_tool"));
    std::os::unix::fs::symlink(
        outer.path().join("outside/secret.yaml"),
        repo.join("linked.yaml"),
    )
    .unwrap();
    write(
        &repo,
        "toolgate.yaml",
        "specs:\n  - \"tool-specs/*.yaml\"\n  - linked.yaml\n",
    );
    let (code, stdout, stderr) = toolgate(&repo, &["lint"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    let report = format!("{stdout}{stderr}");
    assert!(
        report.contains("toolgate.yaml:3:5")
            && report.contains("`linked.yaml`")
            && report.contains("resolves outside the project"),
        "{report}"
    );
    assert!(!report.contains("outside_tool"), "{report}");
}
