//! `toolgate serve` under concurrent MCP requests, driven by rmcp's client over stdio: one
//! client's twenty concurrent calls of a `max: 1` tool never overlap; neither do two clients'
//! calls through two `serve` processes on one project; a hundred concurrent read-modify-write
//! appends to one file from two clients lose no line; and a `serve` killed while it holds a
//! lock does not keep it (the kernel releases it with the process).
//!
//! The two processes share one state folder, as two clients of one project do: its journal and
//! its lock file.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

/// A `serve` of every tool of the scheduler fixture over a state folder.
struct Served {
    client: RunningService<RoleClient, ()>,
    pid: u32,
}

async fn serve(ws: &Path, state: &Path) -> Served {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolgate"));
    cmd.arg("serve")
        .arg("--config")
        .arg(common::repo().join("tests/fixtures/scheduler/toolgate.yaml"))
        .arg("--workspace")
        .arg(ws)
        .arg("--state-dir")
        .arg(state)
        .arg("--context")
        .arg("headless")
        .arg("--all");
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let pid = transport.id().unwrap();
    let client = ().serve(transport).await.unwrap();
    Served { client, pid }
}

fn args(v: Value) -> serde_json::Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => unreachable!(),
    }
}

fn text(r: &CallToolResult) -> String {
    serde_json::to_string(&r.content).unwrap()
}

/// Sends the calls through a client all at once (each on its own task), and returns the results
/// in the order given.
async fn concurrently(s: &Served, calls: Vec<(&'static str, Value)>) -> Vec<CallToolResult> {
    let mut tasks = tokio::task::JoinSet::new();
    for (i, (tool, a)) in calls.into_iter().enumerate() {
        let peer = s.client.peer().clone();
        tasks.spawn(async move {
            let params = CallToolRequestParams::new(tool).with_arguments(args(a));
            (i, peer.call_tool(params).await.unwrap())
        });
    }
    let mut out: Vec<(usize, CallToolResult)> = tasks.join_all().await;
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, r)| r).collect()
}

/// `n` concurrent probe calls through a client, named `<prefix><i>`.
async fn probes(s: &Served, prefix: &str, n: usize, seconds: &str) -> Vec<CallToolResult> {
    let calls = (0..n)
        .map(|i| {
            (
                "probe",
                json!({"out": format!("{prefix}{i}"), "seconds": seconds}),
            )
        })
        .collect();
    concurrently(s, calls).await
}

/// The (start, end, name) triples the probes wrote, by start.
fn intervals(ws: &Path) -> Vec<(u128, u128, String)> {
    let mut out: Vec<(u128, u128, String)> = std::fs::read_dir(ws.join("intervals"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let t = std::fs::read_to_string(e.path()).unwrap();
            let (s, f) = t.trim().split_once(' ').unwrap();
            (
                s.parse().unwrap(),
                f.parse().unwrap(),
                e.file_name().to_string_lossy().into_owned(),
            )
        })
        .collect();
    out.sort();
    out
}

fn overlapping(iv: &[(u128, u128, String)]) -> Vec<(String, String)> {
    iv.windows(2)
        .filter(|w| w[1].0 < w[0].1)
        .map(|w| (w[0].2.clone(), w[1].2.clone()))
        .collect()
}

fn assert_all_succeeded(results: &[CallToolResult]) {
    for r in results {
        assert_eq!(r.is_error, Some(false), "{}", text(r));
    }
}

struct Dirs {
    ws: tempfile::TempDir,
    state: tempfile::TempDir,
}

fn dirs() -> Dirs {
    Dirs {
        ws: tempfile::tempdir().unwrap(),
        state: tempfile::tempdir().unwrap(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_client_twenty_concurrent_calls_of_a_max_one_tool() {
    let d = dirs();
    let a = serve(d.ws.path(), d.state.path()).await;
    let results = probes(&a, "a", 20, "0.03").await;
    assert_all_succeeded(&results);
    let iv = intervals(d.ws.path());
    assert_eq!(iv.len(), 20);
    assert_eq!(overlapping(&iv), Vec::<(String, String)>::new());
    a.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_clients_through_two_serve_processes_share_the_locks() {
    let d = dirs();
    let a = serve(d.ws.path(), d.state.path()).await;
    let b = serve(d.ws.path(), d.state.path()).await;
    let (ra, rb) = tokio::join!(probes(&a, "a", 20, "0.03"), probes(&b, "b", 20, "0.03"));
    assert_all_succeeded(&ra);
    assert_all_succeeded(&rb);
    let iv = intervals(d.ws.path());
    assert_eq!(iv.len(), 40);
    assert_eq!(overlapping(&iv), Vec::<(String, String)>::new());
    // Both processes ran calls while the other's were in flight (the order interleaved).
    let firsts: Vec<char> = iv.iter().map(|i| i.2.chars().next().unwrap()).collect();
    assert!(firsts.windows(2).any(|w| w[0] != w[1]), "{firsts:?}");

    // A hundred appends to one file, fifty from each client, all at once: some serial order,
    // every line there.
    let appends = |prefix: &str| -> Vec<(&'static str, Value)> {
        (0..50)
            .map(|i| {
                (
                    "append",
                    json!({"path": "log.txt", "line": format!("{prefix}{i}")}),
                )
            })
            .collect()
    };
    let (xa, xb) = tokio::join!(
        concurrently(&a, appends("a")),
        concurrently(&b, appends("b"))
    );
    assert_all_succeeded(&xa);
    assert_all_succeeded(&xb);
    let mut lines: Vec<String> = std::fs::read_to_string(d.ws.path().join("log.txt"))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    lines.sort();
    let mut want: Vec<String> = (0..50)
        .flat_map(|i| [format!("a{i}"), format!("b{i}")])
        .collect();
    want.sort();
    assert_eq!(lines, want, "no append was lost");
    a.client.cancel().await.unwrap();
    b.client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_serve_leaves_no_lock_behind() {
    let d = dirs();
    let a = serve(d.ws.path(), d.state.path()).await;
    let b = serve(d.ws.path(), d.state.path()).await;
    let send = |s: &Served, out: &str, seconds: &str| {
        let peer = s.client.peer().clone();
        let p = CallToolRequestParams::new("probe")
            .with_arguments(args(json!({"out": out, "seconds": seconds})));
        tokio::spawn(async move { peer.call_tool(p).await })
    };
    // `a` holds the group's lock for eight seconds; `b`'s call waits for it …
    let long = send(&a, "long", "8.0");
    tokio::time::sleep(Duration::from_millis(700)).await;
    let after = send(&b, "after", "0.01");
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(!after.is_finished(), "b waits for the lock a holds");
    // … until `a` is killed: then at once, not after the eight seconds.
    let killed = Instant::now();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(a.pid).unwrap()),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    let r = tokio::time::timeout(Duration::from_secs(20), after)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    assert!(
        killed.elapsed() < Duration::from_secs(4),
        "{:?}",
        killed.elapsed()
    );
    assert!(
        long.await.unwrap().is_err(),
        "the killed server answered nothing"
    );
    b.client.cancel().await.unwrap();
}
