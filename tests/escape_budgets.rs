//! The escape suite, budgets: a 1 GiB file read in bounded memory, what a call and a session
//! may keep in the artifact store, and where those budgets come from (toolgate.yaml's
//! `budgets`). Neither a huge file nor an allowed command printing far more than it may keep
//! may exhaust memory or fill the disk.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use common::{Counters, Fixture, Scripted, bind_handlers, call, run1, shim};
use pretty_assertions::assert_eq;
use serde_json::json;
use toolgate::ir::{Bundle, ErrorType};
use toolgate::runtime::extend::ApprovalOutcome;
use toolgate::runtime::{RuntimeBuilder, Session, ToolRuntime};

fn session(id: &str) -> Session {
    Session::new(id, "interactive")
}

async fn call1(
    rt: &ToolRuntime,
    tool: &str,
    args: serde_json::Value,
) -> toolgate::runtime::ToolResult {
    run1(rt, &session("s"), call("c", tool, args)).await
}

/// A runtime over the fixture project with the bundle changed (budgets, timeouts), writes
/// approved.
fn runtime_with(f: &Fixture, edit: impl FnOnce(&mut Bundle)) -> ToolRuntime {
    let mut bundle = (*common::bundle()).clone();
    edit(&mut bundle);
    let b = RuntimeBuilder::from_bundle(bundle, env!("CARGO_MANIFEST_DIR"))
        .workspace(f.path())
        .state_dir(f.state.path())
        .shim(shim())
        .approver(Scripted::new(ApprovalOutcome::AllowOnce));
    bind_handlers(b, Arc::new(Counters::default()))
        .build()
        .unwrap()
}

/// Budgets: an allowed command printing far more than the per-call artifact budget keeps an
/// artifact of exactly the budget, and the result says how much was dropped; once the
/// session's budget is spent, no artifact is kept and the result says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn artifact_budgets_stop_what_a_call_and_a_session_keep() {
    let f = Fixture::new();
    let rt = runtime_with(&f, |b| {
        b.project.budgets.call_artifacts = 1 << 20;
        b.project.budgets.session_artifacts = (5 << 20) / 2;
    });
    let s = session("budget");
    let big = |i: u32| {
        call(
            &format!("b{i}"),
            "shell",
            json!({"command": "head -c 6000000 /dev/urandom | base64"}),
        )
    };
    let r = run1(&rt, &s, big(1)).await;
    assert!(r.is_success(), "{}", r.summary());
    assert_eq!(r.artifacts().len(), 1, "{}", r.summary());
    assert_eq!(r.artifacts()[0].size, 1 << 20);
    let stored = rt.artifacts().get(&r.artifacts()[0].id).unwrap();
    assert_eq!(stored.len(), 1 << 20);
    assert!(
        r.summary().contains(
            "the full stdout could not be kept: the artifact keeps the first 1 MiB (1048576 bytes): the per-call artifact budget (budgets.call_artifacts, 1 MiB) was reached; "
        ),
        "{}",
        r.summary()
    );
    let r = run1(&rt, &s, big(2)).await;
    assert_eq!(r.artifacts()[0].size, 1 << 20);
    let r = run1(&rt, &s, big(3)).await;
    assert_eq!(r.artifacts()[0].size, 1 << 19, "{}", r.summary());
    assert!(
        r.summary().contains(
            "this session's artifact budget (budgets.session_artifacts, 2.5 MiB) was reached"
        ),
        "{}",
        r.summary()
    );
    let r = run1(&rt, &s, big(4)).await;
    assert_eq!(r.artifacts().len(), 0, "{}", r.summary());
    assert!(
        r.summary().contains("the full stdout could not be kept: no artifact was kept: this session's artifact budget"),
        "{}",
        r.summary()
    );
    // Output and summary still come from the whole stream.
    assert!(r.output().unwrap().contains("omitted"));
    // Another session starts with its own budget.
    let r = run1(&rt, &session("other"), big(5)).await;
    assert_eq!(r.artifacts()[0].size, 1 << 20);
}

/// `budgets` in toolgate.yaml: sizes in the size syntax, absent keys at their defaults; a size
/// that does not parse is an error located in the file.
#[test]
fn budgets_are_read_from_toolgate_yaml() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("toolgate.yaml");
    let load = || {
        toolgate::check::check_specs(&toolgate::spec::load::LoadOptions {
            paths: vec![common::repo().join("tool-specs/read_file.yaml")],
            config: Some(project.clone()),
            cwd: dir.path().to_path_buf(),
        })
    };
    std::fs::write(
        &project,
        "budgets: {call_artifacts: 64MiB, artifact_store: 10GB, read_file_size: 4096}\n",
    )
    .unwrap();
    let budgets = load().unwrap().bundle().unwrap().project.budgets;
    let defaults = toolgate::ir::Budgets::default();
    assert_eq!(
        budgets,
        toolgate::ir::Budgets {
            call_artifacts: 64 << 20,
            artifact_store: 10_000_000_000,
            read_file_size: 4096,
            ..defaults
        }
    );
    std::fs::write(&project, "budgets: {session_artifacts: 1TiB}\n").unwrap();
    let message = match load() {
        Ok(checked) => format!("{:?}", checked.diagnostics),
        Err(e) => e.to_string(),
    };
    assert!(message.contains("unknown size unit `TiB`"), "{message}");
}

/// The child half of the 1 GiB test, run in a process of its own so its peak RSS is its own.
const RSS_CHILD: &str = "TOOLGATE_RSS_CHILD";

fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Route: a 1 GiB file. With the default budgets read_file refuses it at once (OUTPUT_LIMIT);
/// with `budgets.read_file_size` raised it streams it — the whole file hashed — and its peak
/// RSS grows by a few MiB at most, measured in a child process (VmHWM, reset before the read).
#[test]
fn a_1gib_file_is_read_in_bounded_memory() {
    const GIB: u64 = 1 << 30;
    if let Ok(dir) = std::env::var(RSS_CHILD) {
        let f = Fixture {
            ws: tempfile::TempDir::new_in(&dir).unwrap(),
            state: tempfile::TempDir::new_in(&dir).unwrap(),
        };
        std::fs::File::create(f.path().join("huge.log"))
            .unwrap()
            .set_len(GIB)
            .unwrap();
        f.write("small.txt", "warm up\n");
        let rt = runtime_with(&f, |b| {
            b.project.budgets.read_file_size = 2 * GIB;
            for t in &mut b.tools {
                if t.name == "read_file" {
                    t.timeout_ms = 600_000;
                }
            }
        });
        let tokio = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        tokio.block_on(async {
            let warm = call1(&rt, "read_file", json!({"path": "small.txt"})).await;
            assert!(warm.is_success(), "{}", warm.summary());
            // Reset the peak to the current RSS (Linux ≥ 4.0); else the peak so far stands.
            let _ = std::fs::write("/proc/self/clear_refs", "5");
            let before = status_kib("VmHWM:");
            let r = call1(&rt, "read_file", json!({"path": "huge.log"})).await;
            let after = status_kib("VmHWM:");
            assert!(r.is_success(), "{}", r.summary());
            let s = r.structured().unwrap();
            assert_eq!(
                (s["total_lines"].as_u64(), s["truncated"].as_bool()),
                (Some(1), Some(true))
            );
            println!("\nPEAK-RSS-KIB {before} {after}");
        });
        return;
    }
    // The default cap refuses the file without reading it.
    let f = Fixture::new();
    std::fs::File::create(f.path().join("huge.log"))
        .unwrap()
        .set_len(GIB)
        .unwrap();
    let rt = runtime_with(&f, |_| {});
    let r = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(call1(&rt, "read_file", json!({"path": "huge.log"})));
    assert_eq!(
        (r.error_type(), r.summary()),
        (
            Some(ErrorType::OutputLimit),
            "`huge.log` is 1 GiB (1073741824 bytes); read_file works on files up to 256 MiB (budgets.read_file_size in toolgate.yaml). Search it with search_files, or read a part with a command tool."
        )
    );
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_1gib_file_is_read_in_bounded_memory",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(RSS_CHILD, env!("CARGO_TARGET_TMPDIR"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("PEAK-RSS-KIB "))
        .unwrap_or_else(|| panic!("no measurement in:\n{stdout}"));
    let kib: Vec<u64> = line.split(' ').map(|n| n.parse().unwrap()).collect();
    let grew = kib[1].saturating_sub(kib[0]);
    eprintln!(
        "read_file of 1 GiB: peak RSS {} KiB before, {} KiB after (+{grew} KiB)",
        kib[0], kib[1]
    );
    assert!(grew < 16 * 1024, "peak RSS grew by {grew} KiB");
}
