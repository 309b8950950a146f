//! `toolgate serve` driven by the official Python MCP SDK (`tests/mcp/client.py`): the
//! listing validates against the MCP 2025-11-25 schema; reads, denials, bad arguments,
//! elicitation and cancellation (the process tree disappears) behave as docs/mcp.md says; output
//! a result cut is read as an MCP resource (`tests/mcp/artifacts_client.py`).
//!
//! Needs `python3` with the `mcp` and `jsonschema` packages (`tests/requirements.txt`, which
//! `scripts/test` installs into its venv). Without them the test fails in CI and is skipped,
//! with a line saying so, elsewhere (`common::toolchain`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::toolchain::{Toolchain, require};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn python_sdk_client_against_toolgate_serve() {
    if !require(&[Toolchain::PythonMcp]) {
        return;
    }
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

/// The Python SDK reads output a result cut as an MCP resource (`tests/mcp/artifacts_client.py`
/// on `tests/fixtures/mcp_artifacts`): the whole 20,000 bytes, and a part.
#[test]
fn python_sdk_client_reads_cut_output_as_resources() {
    if !require(&[Toolchain::PythonMcp]) {
        return;
    }
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let out = Command::new("python3")
        .arg(repo().join("tests/mcp/artifacts_client.py"))
        .arg("--toolgate")
        .arg(env!("CARGO_BIN_EXE_toolgate"))
        .arg("--config")
        .arg(repo().join("tests/fixtures/mcp_artifacts/toolgate.yaml"))
        .arg("--workspace")
        .arg(ws.path())
        .arg("--state-dir")
        .arg(state.path())
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
    assert_eq!(summary["bytes"], 20_000);
    assert!(
        summary["uri"]
            .as_str()
            .unwrap()
            .starts_with("toolgate-artifact:blake3:")
    );
}
