//! `toolgate import` against hostile input, driving the real binary under a 1 GiB address-space
//! cap (`prlimit --as`, util-linux): an OpenAPI DAG (tests/fixtures/openapi/dag-bomb.yaml,
//! S0..S30 each naming the next from eight properties) stays a DAG; every bound of `--limit`
//! stops the import with a located error and writes nothing; a hostile MCP server
//! (tests/fixtures/mcp_hostile/server.py: 100,000 tools, a 60-level schema, endless pages,
//! silence, names with `/`, `..`, NUL, ESC and a bidi override) gets the same, and its names
//! become safe, distinct file names in a project that loads, its escapes visible in the YAML.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use pretty_assertions::assert_eq;

/// The cap every import runs under: the DAG inlined would need far more.
const MEMORY_CAP: &str = "--as=1073741824";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn capped(dir: &Path, args: &[&str]) -> Output {
    Command::new("prlimit")
        .arg(MEMORY_CAP)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .current_dir(dir)
        .env("XDG_STATE_HOME", dir.join(".state-home"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A project whose MCP server `h` is the hostile server in `mode`.
fn project(mode: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let server = repo().join("tests/fixtures/mcp_hostile/server.py");
    let args: Vec<String> = std::iter::once(server.to_string_lossy().into_owned())
        .chain(mode.split_whitespace().map(str::to_owned))
        .map(|a| format!("\"{a}\""))
        .collect();
    std::fs::write(
        dir.path().join("toolgate.yaml"),
        format!(
            "specs: [\"tool-specs/**/*.yaml\"]\nworkspace: .\nmcp_servers:\n  h: {{command: [python3, {}], env: {{inherit: [PATH, HOME]}}}}\ntargets: [anthropic, mcp]\n",
            args.join(", ")
        ),
    )
    .unwrap();
    dir
}

/// Every file below `dir`, relative, sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

fn dag() -> String {
    repo()
        .join("tests/fixtures/openapi/dag-bomb.yaml")
        .to_string_lossy()
        .into_owned()
}

#[test]
fn an_openapi_dag_stays_shared_under_a_memory_cap() {
    let dir = tempfile::tempdir().unwrap();
    let o = capped(
        dir.path(),
        &["import", "--from", "openapi", &dag(), "--out", "out"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(dir.path().join("out/post_dag.yaml")).unwrap();
    let spec: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    // The body's properties join the parameters, each naming the shared S1.
    let props = spec["parameters"]["properties"].as_object().unwrap();
    assert_eq!(props.len(), 8);
    assert_eq!(
        props["a"],
        serde_json::json!({"$ref": "#/$defs/S1", "description": "The `a` field of the request body."})
    );
    // One definition per shared schema, for the parameters and for the result alike.
    for schema in [&spec["parameters"], &spec["result"]] {
        let defs: Vec<&str> = schema["$defs"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let want: Vec<String> = (1..=30).map(|i| format!("S{i}")).collect();
        assert_eq!(defs, want);
        assert_eq!(
            schema["$defs"]["S29"]["properties"]["h"],
            serde_json::json!({"$ref": "#/$defs/S30"})
        );
        assert_eq!(
            schema["$defs"]["S30"],
            serde_json::json!({"type": "string"})
        );
    }
    // The output grows with the document (11 KB), not with the 8^30 paths through it.
    assert!(text.len() < 64 * 1024, "{} bytes", text.len());
}

#[test]
fn every_openapi_bound_is_a_located_error_and_writes_nothing() {
    let petstore = repo()
        .join("tests/fixtures/openapi/v3.0-petstore.yaml")
        .to_string_lossy()
        .into_owned();
    let cases = [
        (
            dag(),
            "depth=3",
            format!(
                "toolgate: {}:13:40 (`/components/schemas/S1/properties/a`): a schema nested deeper than 3 levels: over the depth limit of 3 (raise it with `--limit depth=N`)\n",
                dag()
            ),
        ),
        (
            dag(),
            "nodes=300",
            format!(
                "toolgate: {}:41:10 (`/components/schemas/S29`): the import visited more than 300 schema nodes: over the nodes limit of 300 (raise it with `--limit nodes=N`)\n",
                dag()
            ),
        ),
        (
            dag(),
            "output=2KiB",
            format!(
                "toolgate: {}:6:5 (`/paths/~1dag`): the specs up to `post_dag` are 23157 bytes: over the output limit of 2048 (raise it with `--limit output=N`)\n",
                dag()
            ),
        ),
        (
            dag(),
            "document=1KiB",
            format!(
                "toolgate: {} is larger than 1024 bytes: over the document limit of 1024 (raise it with `--limit document=N`)\n",
                dag()
            ),
        ),
        (
            petstore.clone(),
            "tools=2",
            format!(
                "toolgate: {petstore}:10:3 (`/paths`): the document has 3 operations: over the tools limit of 2 (raise it with `--limit tools=N`)\n"
            ),
        ),
    ];
    for (file, limit, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        let o = capped(
            dir.path(),
            &[
                "import", "--from", "openapi", &file, "--out", "out", "--limit", limit,
            ],
        );
        assert_eq!((o.status.code(), stderr(&o)), (Some(2), want), "{limit}");
        assert_eq!(files(dir.path()), Vec::<String>::new(), "{limit}");
    }
}

#[test]
fn a_list_past_a_bound_is_refused_with_the_tool_and_pointer() {
    let dir = tempfile::tempdir().unwrap();
    let tools: Vec<serde_json::Value> = (0..3)
        .map(|i| {
            serde_json::json!({"type": "function", "function": {"name": format!("t{i}"),
                "description": "A tool.", "parameters": {"type": "object",
                "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}}}}}})
        })
        .collect();
    std::fs::write(
        dir.path().join("list.json"),
        serde_json::to_string(&tools).unwrap(),
    )
    .unwrap();
    let run = |limit: &str| {
        capped(
            dir.path(),
            &[
                "import",
                "--from",
                "openai",
                "list.json",
                "--out",
                "out",
                "--limit",
                limit,
            ],
        )
    };
    let o = run("tools=2");
    assert_eq!(
        (o.status.code(), stderr(&o)),
        (
            Some(2),
            "toolgate: list.json has 3 tools: over the tools limit of 2 (raise it with `--limit tools=N`)\n".to_owned()
        )
    );
    let o = run("depth=3");
    assert_eq!(
        (o.status.code(), stderr(&o)),
        (
            Some(2),
            "toolgate: list.json, tool `t0` parameters at `/properties/a/properties/b`: a schema nested deeper than 3 levels: over the depth limit of 3 (raise it with `--limit depth=N`)\n".to_owned()
        )
    );
    let o = run("output=1KiB");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o)
            .ends_with("bytes: over the output limit of 1024 (raise it with `--limit output=N`)\n"),
        "{}",
        stderr(&o)
    );
    assert_eq!(files(&dir.path().join("out")), Vec::<String>::new());
}

#[test]
fn hostile_names_become_safe_distinct_files_in_a_loadable_project() {
    let dir = project("names");
    let o = capped(dir.path(), &["import", "--from-mcp", "h"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        files(&dir.path().join("tool-specs")),
        [
            "h/______escape.yaml",
            "h/a_b.yaml",
            "h/a_b_2.yaml",
            "h/con_.yaml",
            "h/nul_name.yaml",
            "h/red__31m_txt_exe.yaml",
        ]
    );
    let text =
        std::fs::read_to_string(dir.path().join("tool-specs/h/red__31m_txt_exe.yaml")).unwrap();
    // Nothing raw: every byte is printable ASCII or a line break, the escapes in view.
    assert!(
        text.bytes()
            .all(|b| b == b'\n' || (b' '..=b'~').contains(&b)),
        "{text}"
    );
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("\\u") || l.contains("\\e"))
        .collect();
    assert_eq!(
        lines,
        [
            "# Imported from the MCP server `h` (tool `red\\u{001b}[31m\\u{202e}txt.exe`) by `toolgate import --from-mcp`.",
            "title: \"Title\\e[2J\"",
            "description: \"Looks\\u200B harmless\\r\\nthen \\u202Ereversed\"",
            "      description: \"Where\\e[8m hidden\\rover \\u202Eit\\u200B\"",
            "    tool: \"red\\e[31m\\u202Etxt.exe\"",
        ]
    );
    // Nor does the import's own report show a hidden character raw.
    let said = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    for c in ['\u{1b}', '\r', '\u{202e}', '\u{200b}'] {
        assert!(!said.contains(c), "{c:?} reached the terminal: {said}");
    }
    // The upstream's exact names come back when the YAML is read.
    let spec: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
    assert_eq!(spec["exec"]["mcp"]["tool"], "red\u{1b}[31m\u{202e}txt.exe");
    assert_eq!(
        spec["parameters"]["properties"]["target"]["description"],
        "Where\u{1b}[8m hidden\rover \u{202e}it\u{200b}"
    );
    let nul = std::fs::read_to_string(dir.path().join("tool-specs/h/nul_name.yaml")).unwrap();
    let nul: serde_json::Value = serde_saphyr::from_str(&nul).unwrap();
    assert_eq!(nul["exec"]["mcp"]["tool"], "nul\u{0}name");
    // The project loads: lint's only errors are the hidden characters it exists to show.
    let o = capped(dir.path(), &["lint", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
    let mut errors: Vec<String> = report["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["severity"] == "error")
        .map(|f| {
            format!(
                "{} {}",
                f["code"].as_str().unwrap_or("?"),
                f["location"]["file"].as_str().unwrap_or("?")
            )
        })
        .collect();
    errors.sort();
    assert_eq!(
        errors,
        // The parameter description added the third.
        [
            "TGN008 tool-specs/h/red__31m_txt_exe.yaml",
            "TGN008 tool-specs/h/red__31m_txt_exe.yaml",
            "TGN008 tool-specs/h/red__31m_txt_exe.yaml",
        ],
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn a_hostile_server_past_a_bound_is_refused_and_nothing_is_written() {
    let cases = [
        (
            "many 100000",
            "",
            "toolgate: the MCP server `h` has 100000 tools: over the tools limit of 2000 (raise it with `--limit tools=N`)\n".to_owned(),
        ),
        (
            "deep 60",
            "",
            format!(
                "toolgate: the MCP server `h`, tool `deep` inputSchema at `{}/type`: a schema nested deeper than 48 levels: over the depth limit of 48 (raise it with `--limit depth=N`)\n",
                "/properties/x".repeat(24)
            ),
        ),
        (
            "pages",
            "tools=50",
            "toolgate: the MCP server `h` sent more than 50 pages of `tools/list`: over the tools limit of 50 (raise it with `--limit tools=N`)\n".to_owned(),
        ),
        (
            "silent",
            "timeout=2",
            "toolgate: the MCP server `h` did not answer `tools/list` within 2 s: over the timeout limit of 2 (raise it with `--limit timeout=N`)\n".to_owned(),
        ),
    ];
    for (mode, limit, want) in cases {
        let dir = project(mode);
        let mut args = vec!["import", "--from-mcp", "h"];
        if !limit.is_empty() {
            args.extend(["--limit", limit]);
        }
        let o = capped(dir.path(), &args);
        assert_eq!((o.status.code(), stderr(&o)), (Some(2), want), "{mode}");
        assert!(!dir.path().join("tool-specs").exists(), "{mode}");
    }
}

/// The imported DAG is a project the rest of toolgate reads within the cap too: lint runs every
/// provider emitter over it, and they keep `$ref`s they cannot inline within bounds.
#[test]
fn an_imported_dag_lints_and_builds_under_a_memory_cap() {
    let dir = tempfile::tempdir().unwrap();
    let o = capped(
        dir.path(),
        &["import", "--from", "openapi", &dag(), "--out", "tool-specs"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    std::fs::write(
        dir.path().join("toolgate.yaml"),
        "specs: [\"tool-specs/**/*.yaml\"]\nworkspace: .\n",
    )
    .unwrap();
    let lint = capped(dir.path(), &["lint", "--format", "json"]);
    assert!(
        matches!(lint.status.code(), Some(0 | 1)),
        "lint exited {:?}: {}",
        lint.status.code(),
        stderr(&lint)
    );
    let report: serde_json::Value = serde_json::from_slice(&lint.stdout).unwrap();
    assert!(report.is_object() || report.is_array(), "{report}");
    let build = capped(dir.path(), &["build", "--out", "gen"]);
    assert!(
        matches!(build.status.code(), Some(0)) && !stderr(&build).contains("memory allocation"),
        "build exited {:?}: {}",
        build.status.code(),
        stderr(&build)
    );
}
