#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! One name per concept: each renamed spelling still loads (or still runs) and means what the new
//! one means, the older spelling is reported with the new one named, and the docs, the editor
//! schemas and the templates show only the new spelling.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use toolgate::check::{CheckedProject, check_texts};
use toolgate::diagnostic::Diagnostic;

const TOOL: &str = "name: show_log
description: Show the build log of the last run, newest lines last.
effect: read_only
parameters: {type: object, properties: {}}
exec: {handler: rust}
";

/// An upstream server's environment written the older way (`inherit_env` and a plain `env` map,
/// in block and in flow style)…
const OLD_ENV: &str = "mcp_servers:
  git:
    command: [python3, -m, mcp_server_git]
    inherit_env: [PATH, HOME]
    env:
      GIT_PAGER: cat
      LANG: C.UTF-8
  docs: {command: [python3, docs.py], env: {LANG: C.UTF-8, DEBUG: 1}}
  bare: {command: [python3, bare.py], inherit_env: [PATH]}
";

/// …and the new way, as command tools write `exec.command.env`.
const NEW_ENV: &str = "mcp_servers:
  git:
    command: [python3, -m, mcp_server_git]
    env:
      inherit: [PATH, HOME]
      set: {GIT_PAGER: cat, LANG: C.UTF-8}
  docs: {command: [python3, docs.py], env: {set: {LANG: C.UTF-8, DEBUG: '1'}}}
  bare: {command: [python3, bare.py], env: {inherit: [PATH]}}
";

fn check(project: &str) -> CheckedProject {
    check_texts(&[(PathBuf::from("t.yaml"), TOOL.to_owned())], Some(project))
}

/// (line, column) of a diagnostic, 1-based.
fn line_col(c: &CheckedProject, d: &Diagnostic) -> (usize, usize) {
    let lc = c
        .loaded
        .sources
        .get(d.span.source)
        .unwrap()
        .line_column(d.span.start);
    (lc.line, lc.column)
}

fn findings<'a>(c: &'a CheckedProject, code: &str) -> Vec<&'a Diagnostic> {
    c.diagnostics
        .iter()
        .filter(|d| d.code == Some(code))
        .collect()
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_older_server_env_spelling_resolves_to_the_same_ir() {
    let old = check(OLD_ENV);
    let new = check(NEW_ENV);
    assert!(!old.has_errors(), "{:#?}", old.diagnostics);
    assert!(!new.has_errors(), "{:#?}", new.diagnostics);
    assert_eq!(
        old.resolution.project.mcp_servers,
        new.resolution.project.mcp_servers
    );
    let git = &new.resolution.project.mcp_servers["git"];
    assert_eq!(git.env.inherit, ["PATH", "HOME"]);
    assert_eq!(git.env.set["GIT_PAGER"], "cat");
    // The same bundle, byte for byte.
    assert_eq!(
        old.bundle().unwrap().content_hash,
        new.bundle().unwrap().content_hash
    );
}

#[test]
fn the_older_server_env_spelling_is_reported_at_its_line_and_column() {
    let old = check(OLD_ENV);
    let found: Vec<((usize, usize), &str)> = findings(&old, "TGN012")
        .into_iter()
        .map(|d| (line_col(&old, d), d.message.as_str()))
        .collect();
    assert_eq!(
        found,
        [
            (
                (4, 18),
                "`mcp_servers.git.inherit_env` is the older spelling of `env.inherit`"
            ),
            (
                (6, 7),
                "a plain `env:` map under `mcp_servers.git` is the older spelling of `env.set`"
            ),
            (
                (8, 44),
                "a plain `env:` map under `mcp_servers.docs` is the older spelling of `env.set`"
            ),
            (
                (9, 52),
                "`mcp_servers.bare.inherit_env` is the older spelling of `env.inherit`"
            ),
        ]
    );
    let help = findings(&old, "TGN012")[0].help.clone().unwrap();
    assert!(help.contains("env: {inherit: [PATH, HOME]}"), "{help}");
    assert!(findings(&check(NEW_ENV), "TGN012").is_empty());
}

#[test]
fn a_malformed_server_env_is_a_located_load_error() {
    for (env, says) in [
        ("{inhert: [PATH]}", "did you mean `inherit`?"),
        ("{inherit: PATH, set: {A: b}}", "list of variable names"),
        ("{set: [A]}", "map of variables to values"),
    ] {
        let c = check(&format!(
            "workspace: .\nmcp_servers:\n  git: {{command: [git-mcp], env: {env}}}\n"
        ));
        let d = c
            .diagnostics
            .iter()
            .find(|d| d.code.is_none())
            .unwrap_or_else(|| panic!("{env}: no load error in {:#?}", c.diagnostics));
        assert!(
            d.message.contains(says) || d.help.as_deref().is_some_and(|h| h.contains(says)),
            "{env}: {d:?}"
        );
        assert_eq!(line_col(&c, d).0, 3, "{env}: {d:?}");
    }
}

#[test]
fn bundle_json_keeps_the_server_env_field_names_of_format_1() {
    let c = check(NEW_ENV);
    let json = serde_json::to_value(&c.resolution.project.mcp_servers["git"]).unwrap();
    assert_eq!(json["inherit_env"], serde_json::json!(["PATH", "HOME"]));
    assert_eq!(json["env"]["LANG"], "C.UTF-8");
    let back: toolgate::ir::McpServer = serde_json::from_value(json).unwrap();
    assert_eq!(back, c.resolution.project.mcp_servers["git"]);
}

#[test]
fn the_project_schema_offers_the_new_spelling_and_is_committed() {
    let generated = toolgate::spec::schema::project_schema();
    let committed = std::fs::read_to_string(root().join("toolgate.project.schema.json")).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&generated).unwrap(),
        serde_json::from_str::<Value>(&committed).unwrap(),
        "toolgate.project.schema.json is stale: regenerate it with `toolgate schema --project`"
    );
    let schema: Value = serde_json::from_str(&generated).unwrap();
    let server = &schema["$defs"]["McpServerAst"]["properties"];
    assert_eq!(server["inherit_env"]["deprecated"], true, "{server:#}");
    let env = &schema["$defs"]["ServerEnvAst"]["anyOf"];
    assert!(env[0]["properties"]["inherit"].is_object(), "{env:#}");
    assert!(env[0]["properties"]["set"].is_object(), "{env:#}");
    assert_eq!(env[1]["deprecated"], true, "{env:#}");
}

/// The ```yaml blocks of a Markdown file.
fn yaml_blocks(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let fence = line.trim_start();
        match &mut current {
            None if fence.starts_with("```yaml") => current = Some(String::new()),
            Some(block) if fence.starts_with("```") => {
                out.push(std::mem::take(block));
                current = None;
            }
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    out
}

fn markdown_files() -> Vec<PathBuf> {
    let mut out = vec![root().join("README.md")];
    let mut dirs = vec![root().join("docs")];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn docs_and_templates_show_the_new_spellings() {
    let mut problems = Vec::new();
    for md in markdown_files() {
        let text = std::fs::read_to_string(&md).unwrap();
        // docs/rules.md is generated from the rules' explanations, and the renamed-key rule's
        // bad example shows the old spelling on purpose.
        let generated_rules = md.ends_with("docs/rules.md");
        for block in yaml_blocks(&text) {
            if block.contains("inherit_env:") && !generated_rules {
                problems.push(format!(
                    "{}: a YAML example uses `inherit_env:`",
                    md.display()
                ));
            }
        }
        for old in ["export --target", "emit::ListTarget", "toolgate::build::"] {
            if text.contains(old) {
                problems.push(format!("{}: says `{old}`", md.display()));
            }
        }
        let lower = text.to_lowercase();
        // "in-process tool" (a handler running inside the harness) is another thing.
        let process_tool = lower
            .match_indices("process tool")
            .any(|(i, _)| !lower[..i].ends_with('-'));
        if process_tool || lower.contains("subprocess backend") {
            problems.push(format!(
                "{}: says \"process tool\" (the name is \"command tool\")",
                md.display()
            ));
        }
    }
    for template in ["coding", "http-api", "mcp-gateway"] {
        let p = root().join(format!("src/cli/init/{template}/toolgate.yaml"));
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(!text.contains("inherit_env"), "{}", p.display());
        let c = check(&text);
        assert!(findings(&c, "TGN012").is_empty(), "{}", p.display());
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

fn toolgate(cwd: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

#[test]
fn export_target_is_the_older_spelling_of_export_provider() {
    let project = root().join("tests/fixtures/emit-project");
    let new = toolgate(&project, &["export", "--provider", "anthropic"]);
    let old = toolgate(&project, &["export", "--target", "anthropic"]);
    assert!(
        new.status.success(),
        "{}",
        String::from_utf8_lossy(&new.stderr)
    );
    assert_eq!(new.stdout, old.stdout);
    assert_eq!(old.status.code(), new.status.code());
}

#[test]
fn the_build_script_api_keeps_its_former_path() {
    // `toolgate::build` is what existing build.rs files name; it is `toolgate::build_script`.
    let dir = tempfile::tempdir().unwrap();
    let project = root().join("tests/fixtures/emit-project");
    let old: toolgate::build::Builder = toolgate::build_script::Builder::new()
        .config(project.join("toolgate.yaml"))
        .specs(project.join("specs"))
        .out_dir(dir.path())
        .rerun_directives(false);
    let compiled = old.compile().unwrap();
    assert!(dir.path().join("tools.rs").is_file(), "{compiled:?}");
}
