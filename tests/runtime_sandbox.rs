//! Command tools under the exec shim: the seed chapter's experiments 5 (timeout), 6
//! (cancellation of a whole tree, daemon included) and 8 (a 100K-line log becomes an
//! artifact), hostile arguments, and profiles that fail closed on a kernel without what they
//! need. Escape attempts are in `runtime_escapes.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::time::{Duration, Instant};

use common::sandbox::{
    all_gone, fully_sandboxed, marked, shell, unique, workspace_write_protections,
};
use common::{Fixture, call, run1};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolgate::ir::{ErrorType, Status};
use toolgate::runtime::Session;
use toolgate::runtime::extend::Backend;
use toolgate::runtime::sandbox::CommandExecutor;
use toolgate::runtime::sandbox::{KernelFeatures, Protection};

fn session() -> Session {
    Session::new("s", "interactive")
}

/// Experiment 5: `sleep 60` under a 5 s timeout ends as TIMEOUT well before 60 s, keeps what
/// it printed, and leaves no process behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exp5_sleep_60_times_out_in_about_5s_and_leaves_nothing() {
    let f = Fixture::new();
    let rt = f.builder().build().unwrap();
    let mark = unique("exp5");
    let started = Instant::now();
    let r = run1(
        &rt,
        &session(),
        shell(&format!("export TG_MARK={mark}; echo started; sleep 60")),
    )
    .await;
    let took = started.elapsed();
    if !fully_sandboxed(&r) {
        return;
    }
    assert_eq!(
        (r.status(), r.error_type(), r.summary()),
        (
            Status::Timeout,
            Some(ErrorType::Timeout),
            "shell ran longer than its 5s budget and was stopped"
        )
    );
    assert!(
        took < Duration::from_secs(20),
        "took {took:?}; well under 60 s expected"
    );
    assert!(took >= Duration::from_secs(5), "took {took:?}");
    assert_eq!(
        r.output(),
        Some("started\n"),
        "output before the timeout is kept"
    );
    assert_eq!(r.protections(), workspace_write_protections());
    assert_eq!(all_gone(&mark).await, Vec::<u32>::new());
}

/// Experiment 6: cancelling a command that started a child, a grandchild and a daemon
/// (`setsid` plus a double fork, re-parented away from the command) stops all of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exp6_cancel_stops_child_grandchild_and_setsid_daemon() {
    let f = Fixture::new();
    let rt = f.builder().build().unwrap();
    let mark = unique("exp6");
    let script = format!(
        "export TG_MARK={mark}
sleep 1001 &
bash -c 'sleep 1002 & wait' &
( setsid bash -c 'sleep 1003 & exit 0' & )
touch ready
wait"
    );
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    let ws = f.path().to_path_buf();
    let mark2 = mark.clone();
    let watcher = tokio::spawn(async move {
        // Cancel once all three sleeps run (the daemon's parent has exited by then).
        for _ in 0..200 {
            let sleeps = marked(&mark2)
                .iter()
                .filter(|p| {
                    std::fs::read(format!("/proc/{p}/cmdline"))
                        .is_ok_and(|c| c.starts_with(b"sleep\x00100"))
                })
                .count();
            if ws.join("ready").exists() && sleeps == 3 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        let seen: Vec<(u32, Vec<u8>)> = marked(&mark2)
            .into_iter()
            .map(|p| {
                (
                    p,
                    std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default(),
                )
            })
            .collect();
        stop.cancel();
        seen
    });
    let results = rt
        .execute(vec![shell(&script)], &session(), cancel)
        .await
        .unwrap();
    let seen = watcher.await.unwrap();
    let r = &results[0];
    if !fully_sandboxed(r) {
        return;
    }
    assert_eq!(
        (r.status(), r.error_type()),
        (Status::Cancelled, Some(ErrorType::Cancelled))
    );
    // The shell, two sleeps of its own, the inner bash and the daemon's sleep.
    assert!(seen.len() >= 4, "saw only {seen:?}");
    let daemon = seen.iter().find(|(_, c)| c.starts_with(b"sleep\x001003"));
    assert!(daemon.is_some(), "the setsid daemon was not seen: {seen:?}");
    assert_eq!(all_gone(&mark).await, Vec::<u32>::new());
}

/// Experiment 8: a 100K-line build log becomes a summary plus an artifact whose content
/// hashes to the full output; the model reads a bounded head and tail and can page the rest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exp8_build_log_becomes_summary_plus_artifact() {
    let f = Fixture::new();
    let rt = f.builder().build().unwrap();
    let r = run1(
        &rt,
        &session(),
        shell("for i in $(seq 1 100000); do echo \"[$i/100000] Compiling unit_$i v0.1.0\"; done"),
    )
    .await;
    if !fully_sandboxed(&r) {
        return;
    }
    let expected: String = (1..=100_000)
        .map(|i| format!("[{i}/100000] Compiling unit_{i} v0.1.0\n"))
        .collect();
    assert_eq!(r.status(), Status::Success, "{}", r.projection().text);
    let a = &r.artifacts()[0];
    assert_eq!(
        (a.id.clone(), a.size, a.lines),
        (
            format!("blake3:{}", blake3::hash(expected.as_bytes()).to_hex()),
            expected.len() as u64,
            100_000
        )
    );
    let stored = std::fs::read(
        f.state
            .path()
            .join("artifacts/objects")
            .join(&a.id[7..9])
            .join(&a.id[9..]),
    )
    .unwrap();
    assert_eq!(blake3::hash(&stored), blake3::hash(expected.as_bytes()));
    // Owner-only: it keeps the raw output.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(
        f.state
            .path()
            .join("artifacts/objects")
            .join(&a.id[7..9])
            .join(&a.id[9..]),
    )
    .unwrap()
    .permissions()
    .mode();
    assert_eq!(mode & 0o777, 0o600);
    let text = &r.projection().text;
    assert!(text.len() < 24 * 1024, "projection is {} bytes", text.len());
    assert!(text.starts_with("shell: success\n`for i in"), "{text}");
    assert!(text.contains("[1/100000] Compiling unit_1 v0.1.0\n"));
    assert!(text.contains("[100000/100000] Compiling unit_100000 v0.1.0\n"));
    assert!(text.contains(" lines ("), "an omitted-lines marker: {text}");
    assert!(text.contains(&format!(
        "Full stdout: artifact {} ({} bytes, 100000 lines).\nRead it in parts with read_artifact, e.g. {{\"artifact_id\": \"{}\", \"start_line\": 1}}",
        a.id,
        expected.len(),
        a.id
    )));
    let page = run1(
        &rt,
        &session(),
        call(
            "p",
            "read_artifact",
            json!({"artifact_id": a.id, "start_line": 50000, "end_line": 50001}),
        ),
    )
    .await;
    assert_eq!(
        page.structured().unwrap()["text"],
        "[50000/100000] Compiling unit_50000 v0.1.0\n[50001/100000] Compiling unit_50001 v0.1.0\n"
    );
}

/// Each placeholder is exactly one argument, whatever it contains; no shell interprets it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_arguments_stay_single_arguments() {
    let f = Fixture::new();
    let rt = f.builder().build().unwrap();
    let hostile = [
        "; rm -rf /",
        "$(touch pwned)",
        "`touch pwned`",
        "a\nb\n--rm",
        "--flag=value",
        "-rf",
        "'\"\\ *?[a] ~ $HOME && || | > out.txt",
        "",
    ];
    for h in hostile {
        let r = run1(
            &rt,
            &session(),
            call(
                "c",
                "argv_echo",
                json!({"a": h, "b": h, "list": [h, "--", h]}),
            ),
        )
        .await;
        assert_eq!(
            r.status(),
            Status::Success,
            "{h:?}: {}",
            r.projection().text
        );
        assert_eq!(
            r.structured().unwrap()["argv"],
            json!([h, format!("x{h}y"), h, "--", h]),
            "{h:?}"
        );
    }
    assert!(!f.path().join("pwned").exists() && !f.path().join("out.txt").exists());
    // A huge value is still one argument; one the kernel cannot carry is refused by name.
    let big = "z".repeat(100_000);
    let r = run1(
        &rt,
        &session(),
        call("c", "argv_echo", json!({"a": big, "b": ""})),
    )
    .await;
    assert_eq!(
        r.structured().unwrap()["argv"][0].as_str().map(str::len),
        Some(100_000)
    );
    let r = run1(
        &rt,
        &session(),
        call("c", "argv_echo", json!({"a": "z".repeat(200_000), "b": ""})),
    )
    .await;
    assert_eq!(
        (r.error_type(), r.summary()),
        (
            Some(ErrorType::InvalidArguments),
            "argument 3 of the command is 200000 bytes; one process argument holds at most 131071"
        )
    );
    let r = run1(
        &rt,
        &session(),
        call("c", "argv_echo", json!({"a": "a\u{0}b", "b": ""})),
    )
    .await;
    assert_eq!(
        (r.error_type(), r.summary()),
        (
            Some(ErrorType::InvalidArguments),
            "argument 3 of the command contains a NUL byte, which a process argument cannot carry"
        )
    );
}

/// On a kernel without Landlock, seccomp or cgroups, a profile that is not best-effort refuses
/// to run (nothing starts) and says why; a tool without a profile still runs, contained.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fails_closed_without_kernel_support() {
    let f = Fixture::new();
    let bare = KernelFeatures {
        subreaper: true,
        ..KernelFeatures::default()
    };
    let exec = CommandExecutor::new(common::bundle().project.sandbox_profiles.clone())
        .with_shim(common::shim())
        .with_kernel(bare);
    let rt = f
        .builder()
        .executor(Backend::Command, std::sync::Arc::new(exec))
        .build()
        .unwrap();
    let r = run1(&rt, &session(), shell("touch ran")).await;
    assert_eq!(
        (r.status(), r.error_type(), r.summary()),
        (
            Status::Error,
            Some(ErrorType::RuntimeException),
            "the sandbox profile `workspace-write` needs mount and PID namespaces (the view, and the masks of protected files), Landlock (read-only and writable roots), seccomp (the no-network filter), the cgroup pids controller (the process cap) which this system does not offer; refusing to run unsandboxed (set `best_effort: true` on the profile to run with what is available)"
        )
    );
    assert!(!f.path().join("ran").exists());
    assert!(r.protections().is_empty());
    let r = run1(
        &rt,
        &session(),
        call("c", "env_probe", json!({"word": "x"})),
    )
    .await;
    assert_eq!(r.status(), Status::Success, "{}", r.projection().text);
    assert_eq!(
        r.protections(),
        [Protection::ProcessGroup, Protection::Subreaper]
    );
}

/// A command tool's result in JSON lists the protections in force.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_and_traces_list_protections() {
    let f = Fixture::new();
    let rt = f.builder().build().unwrap();
    let r = run1(&rt, &session(), shell("true")).await;
    if !fully_sandboxed(&r) {
        return;
    }
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(
        v["protections"],
        serde_json::to_value(workspace_write_protections()).unwrap()
    );
    assert_eq!(rt.traces()[0].protections, workspace_write_protections());
}

/// A fake shim (bash) that writes `report` to the pipe the runtime gave it, at the number its
/// plan names, and runs nothing.
fn fake_shim(dir: &std::path::Path, name: &str, report: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    let script = format!(
        "#!/bin/bash\nfd=$(printf '%s' \"$2\" | sed -n 's/.*\"report_fd\":\\([0-9]*\\).*/\\1/p')\n[ -n \"$fd\" ] && printf '%s' '{report}' >&\"$fd\"\nexit 0\n"
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// The runtime takes exactly one well-formed report from the shim's pipe, and lists exactly the
/// protections it names (of those planned); anything else is a call that failed for want of a
/// report, never a success.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shims_report_is_one_well_formed_report_or_none() {
    let f = Fixture::new();
    let dir = tempfile::tempdir().unwrap();
    let one = r#"{"exit_code":0,"signal":null,"spawn_error":null,"sandbox_error":null,"stopped":false,"killed":false,"landlock":null,"applied":["process_group","no_network","landlock"],"leftovers":0}"#;
    let honest = fake_shim(dir.path(), "honest", one);
    let rt = f.builder().shim(&honest).build().unwrap();
    let r = run1(&rt, &session(), shell("true")).await;
    if !fully_sandboxed(&r) {
        return;
    }
    assert_eq!(r.status(), Status::Success, "{}", r.projection().text);
    // Only what the shim put in force, in the plan's order.
    assert_eq!(
        r.protections(),
        [
            Protection::ProcessGroup,
            Protection::Landlock,
            Protection::NoNetwork
        ]
    );
    for (name, report) in [
        ("twice", format!("{one}{one}")),
        (
            "extra",
            one.replace("\"leftovers\":0", "\"leftovers\":0,\"forged\":1"),
        ),
        ("garbage", "not a report".to_owned()),
        ("silent", String::new()),
    ] {
        let shim = fake_shim(dir.path(), name, &report);
        let rt = f.builder().shim(&shim).build().unwrap();
        let r = run1(&rt, &session(), shell("true")).await;
        assert_eq!(
            r.error_type(),
            Some(ErrorType::RuntimeException),
            "{name}: {}",
            r.projection().text
        );
        assert!(
            r.summary().contains("ended without a report"),
            "{name}: {}",
            r.summary()
        );
        assert!(r.protections().is_empty(), "{name}");
    }
}
