//! `toolgate serve` driven by the official Python MCP SDK (`tests/mcp/client.py`): the
//! listing validates against the MCP 2025-11-25 schema; reads, denials, bad arguments,
//! elicitation and cancellation (the process tree disappears) behave as docs/mcp.md says.
//!
//! Needs `python3` with the `mcp` and `jsonschema` packages (`.ci/run` installs them). Without
//! them the test fails and says so: it never skips silently.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::process::Command;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Fails with what to install when the Python side is missing.
fn require_python_sdk() {
    let probe = Command::new("python3")
        .args(["-c", "import mcp, jsonschema, anyio"])
        .output();
    match probe {
        Ok(o) if o.status.success() => {}
        Ok(o) => panic!(
            "the Python MCP SDK is not importable: {}\ninstall it with `python3 -m pip install mcp jsonschema` (.ci/run does)",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => panic!("python3 cannot be run ({e}); the MCP interoperability test needs it"),
    }
}

#[test]
fn python_sdk_client_against_toolgate_serve() {
    require_python_sdk();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("notes.txt"), "hello from the workspace\n").unwrap();
    std::fs::write(ws.path().join(".env"), "TOKEN=secret\n").unwrap();
    let out = Command::new("python3")
        .arg(repo().join("tests/mcp/client.py"))
        .arg("--toolgate")
        .arg(env!("CARGO_BIN_EXE_toolgate"))
        .arg("--config")
        .arg(repo().join("tests/fixtures/mcp/toolgate.yaml"))
        .arg("--workspace")
        .arg(ws.path())
        .arg("--schema")
        .arg(repo().join("tests/fixtures/mcp/mcp-schema-2025-11-25.json"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the Python MCP client failed ({}):\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    let summary: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(
        summary["tools"],
        serde_json::json!(["long_sleep", "read_file", "write_file"])
    );
    assert_eq!(summary["cancelled_pids"].as_array().map(Vec::len), Some(3));
}
