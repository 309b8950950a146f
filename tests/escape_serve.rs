//! The escape suite over MCP: `toolgate serve` of the standard library's `coding` toolset on the
//! hostile workspace, driven by rmcp's client. Calls that used to hang or swell the server — a
//! FIFO read by `read_file`, a 1 GiB file, many at once — come back, the server keeps
//! answering `tools/list` while they run, its memory stays bounded, and nothing any call
//! returns holds a protected byte.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::process::Stdio;
use std::time::Duration;

use common::escape::HostileWorkspace;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

/// A bound on every wait, so a hung server fails the test instead of hanging it. Not a timing
/// assertion.
const WAIT_LIMIT: Duration = Duration::from_secs(60);

/// Peak resident memory `serve` may reach while it answers every call below.
const RSS_LIMIT_KIB: u64 = 256 * 1024;

async fn serve(
    ws: &HostileWorkspace,
    state: &std::path::Path,
) -> (RunningService<RoleClient, ()>, u32) {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolgate"));
    cmd.arg("serve")
        .arg("--config")
        .arg(common::repo().join("toolgate.yaml"))
        .arg("--workspace")
        .arg(ws.path())
        .arg("--state-dir")
        .arg(state)
        .arg("--toolset")
        .arg("coding")
        .arg("--context")
        .arg("headless");
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = transport.id().unwrap();
    let client = tokio::time::timeout(WAIT_LIMIT, ().serve(transport))
        .await
        .unwrap()
        .unwrap();
    (client, pid)
}

fn call(
    client: &RunningService<RoleClient, ()>,
    tool: &'static str,
    args: Value,
) -> tokio::task::JoinHandle<CallToolResult> {
    let peer = client.peer().clone();
    tokio::spawn(async move {
        let Value::Object(args) = args else {
            unreachable!()
        };
        let p = CallToolRequestParams::new(tool).with_arguments(args);
        tokio::time::timeout(WAIT_LIMIT, peer.call_tool(p))
            .await
            .unwrap_or_else(|_| panic!("{tool} did not answer"))
            .unwrap()
    })
}

/// The peak resident set of a process, in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_stays_responsive_and_leaks_nothing_under_hostile_calls() {
    let ws = HostileWorkspace::new();
    let state = tempfile::tempdir().unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(ws.path().join("pipe"))
        .status()
        .unwrap();
    assert!(fifo.success());
    let big = std::fs::File::create(ws.path().join("big.bin")).unwrap();
    big.set_len(1 << 30).unwrap();
    drop(big);
    let (client, pid) = serve(&ws, state.path()).await;

    let mut calls = Vec::new();
    for _ in 0..8 {
        calls.push((
            "read_file pipe",
            call(&client, "read_file", json!({"path": "pipe"})),
        ));
    }
    for _ in 0..3 {
        calls.push((
            "read_file big.bin",
            call(&client, "read_file", json!({"path": "big.bin"})),
        ));
    }
    calls.push((
        "read_file .env",
        call(&client, "read_file", json!({"path": ".env"})),
    ));
    calls.push((
        "read_file ./config/../.env",
        call(&client, "read_file", json!({"path": "./config/../.env"})),
    ));
    calls.push((
        "search_files API_KEY",
        call(
            &client,
            "search_files",
            json!({"pattern": "API_KEY=TGSECRET"}),
        ),
    ));
    calls.push((
        "grep API_KEY",
        call(&client, "grep", json!({"pattern": "TGSECRET"})),
    ));
    calls.push((
        "glob **/*",
        call(&client, "glob", json!({"pattern": "**/*"})),
    ));
    calls.push((
        "list_dir keys",
        call(&client, "list_dir", json!({"path": "keys"})),
    ));

    // While those run, the server still answers.
    let tools = tokio::time::timeout(WAIT_LIMIT, client.peer().list_all_tools())
        .await
        .expect("tools/list answered while hostile calls ran")
        .unwrap();
    assert!(tools.iter().any(|t| t.name == "read_file"));

    for (route, handle) in calls {
        let r = handle.await.unwrap();
        let seen = serde_json::to_string(&r).unwrap();
        ws.assert_no_secret(route, &seen);
        if route.starts_with("read_file pipe") || route.starts_with("read_file big") {
            assert_eq!(r.is_error, Some(true), "{route}: {seen}");
        }
        if route.starts_with("read_file .") || route.starts_with("read_file ./") {
            assert!(seen.contains("POLICY_DENIED"), "{route}: {seen}");
        }
    }
    let peak = peak_rss_kib(pid);
    assert!(
        peak < RSS_LIMIT_KIB,
        "serve peaked at {peak} KiB of resident memory"
    );
    // And once they are over, it answers as before.
    let r = call(&client, "read_file", json!({"path": "src/app.py"}))
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(false), "{r:?}");
    client.cancel().await.unwrap();
}
