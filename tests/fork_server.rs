//! The fork server: command tools are forked from one server per runtime, started by the first
//! of them; a server that died is replaced on the next call; with the server off every call
//! starts a shim of its own, with the same protections and the same whole-tree stop.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::time::Duration;

use common::{Fixture, call, run1, shim};
use pretty_assertions::assert_eq;
use serde_json::json;
use toolgate::ir::{ErrorType, Status};
use toolgate::runtime::extend::Backend;
use toolgate::runtime::sandbox::CommandExecutor;
use toolgate::runtime::{Session, ToolResult, ToolRuntime};

fn session() -> Session {
    Session::new("s", "interactive")
}

/// The command backend over the fixture project's sandbox profiles, with the fork server on
/// or off. A clone shares the server, so the test keeps one to look at it.
fn executor(fork_server: bool) -> CommandExecutor {
    let checked = toolgate::check::check_specs(&common::specs()).unwrap();
    CommandExecutor::new(checked.resolution.project.sandbox_profiles.clone())
        .with_shim(shim())
        .with_fork_server(fork_server)
}

fn runtime(f: &Fixture, exec: &CommandExecutor) -> ToolRuntime {
    f.builder()
        .executor(Backend::Command, exec.clone())
        .build()
        .unwrap()
}

fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}

/// Whether a process is gone (or a zombie nobody reaped yet), waiting a little for the kill.
async fn gone(pid: &str) -> bool {
    for _ in 0..100 {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat)
                if stat
                    .rsplit(')')
                    .next()
                    .is_some_and(|r| r.trim_start().starts_with('Z')) =>
            {
                return true;
            }
            Ok(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
    false
}

async fn shell(rt: &ToolRuntime, id: &str, command: &str) -> ToolResult {
    run1(
        rt,
        &session(),
        call(id, "shell", json!({ "command": command })),
    )
    .await
}

fn output(r: &ToolResult) -> String {
    r.structured()
        .and_then(|s| s["output"].as_str())
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_fork_from_one_server_that_is_replaced_when_it_dies() {
    let f = Fixture::new();
    let exec = executor(true);
    let rt = runtime(&f, &exec);
    assert_eq!(
        exec.fork_server_pid(),
        None,
        "started by the first command tool"
    );

    let r = shell(&rt, "a", "echo one").await;
    assert_eq!(r.status(), Status::Success, "{}", r.summary());
    assert_eq!(output(&r).trim(), "one");
    let first = exec.fork_server_pid().expect("a server runs");
    assert!(
        cmdline(first).contains("__exec-shim --fork-server"),
        "{}",
        cmdline(first)
    );
    let r = shell(&rt, "b", "echo again").await;
    assert_eq!(output(&r).trim(), "again", "{}", r.summary());
    assert_eq!(exec.fork_server_pid(), Some(first), "one server for both");

    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(first).unwrap()),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    assert!(gone(&first.to_string()).await);

    let r = shell(&rt, "c", "echo two").await;
    assert_eq!(r.status(), Status::Success, "{}", r.summary());
    assert_eq!(output(&r).trim(), "two");
    let second = exec.fork_server_pid().expect("a new server runs");
    assert_ne!(second, first);
    assert!(cmdline(second).contains("__exec-shim --fork-server"));
}

/// A server killed while a tool runs takes the tool with it: the forked shim gets its
/// parent-death signal and stops the whole tree, as a shim started for the call does when the
/// runtime dies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dying_server_stops_the_tools_it_forked() {
    let f = Fixture::new();
    let exec = executor(true);
    let rt = runtime(&f, &exec);
    let r = shell(&rt, "warm", "true").await;
    assert_eq!(r.status(), Status::Success, "{}", r.summary());
    let server = exec.fork_server_pid().unwrap();
    let ready = f.path().join("ready");
    let killer = tokio::spawn(async move {
        while !ready.exists() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(server).unwrap()),
            nix::sys::signal::Signal::SIGKILL,
        )
        .unwrap();
    });
    // A background process that would leave a mark a second later (the tool runs in a PID
    // namespace of its own: its pids mean nothing here).
    let r = shell(
        &rt,
        "long",
        "(sleep 1; touch survived) & touch ready; sleep 30",
    )
    .await;
    killer.await.unwrap();
    assert_ne!(r.status(), Status::Success, "{}", r.summary());
    assert!(r.duration() < Duration::from_secs(5), "{:?}", r.duration());
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        !f.path().join("survived").exists(),
        "a process of the tool survived"
    );
    // The next call gets a new server.
    let r = shell(&rt, "after", "echo fine").await;
    assert_eq!(output(&r).trim(), "fine", "{}", r.summary());
}

/// The fallback: with the server off, each call starts a shim of its own. The same call puts
/// the same protections in force both ways, and a timeout still kills the whole tree.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_server_each_call_starts_a_shim_with_the_same_protections() {
    let f = Fixture::new();
    let (on, off) = (executor(true), executor(false));
    let (rt_on, rt_off) = (runtime(&f, &on), runtime(&f, &off));
    let forked = shell(&rt_on, "a", "echo x").await;
    let started = shell(&rt_off, "b", "echo x").await;
    assert_eq!(started.status(), Status::Success, "{}", started.summary());
    assert_eq!(forked.status(), Status::Success, "{}", forked.summary());
    assert_eq!(output(&started), output(&forked));
    assert!(!started.protections().is_empty());
    assert_eq!(started.protections(), forked.protections());
    assert_eq!(off.fork_server_pid(), None);
    assert!(on.fork_server_pid().is_some());

    let r = run1(
        &rt_off,
        &session(),
        call("t", "sleeper", json!({"pidfile": "pid"})),
    )
    .await;
    assert_eq!(r.error_type(), Some(ErrorType::Timeout), "{}", r.summary());
    let pid = f.read("pid").trim().to_owned();
    assert!(gone(&pid).await, "background process {pid} survived");
    assert_eq!(off.fork_server_pid(), None);
}
