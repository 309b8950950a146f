//! Process tools under the exec shim: the seed chapter's experiments 5 (timeout), 6
//! (cancellation of a whole tree, daemon included) and 8 (a 100K-line log becomes an
//! artifact), escape attempts under the sandbox, hostile arguments, and profiles that fail
//! closed on a kernel without what they need.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::time::{Duration, Instant};

use common::{Fixture, call, run1};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolgate::ir::{ErrorType, Status};
use toolgate::runtime::exec::Backend;
use toolgate::runtime::exec::command::CommandExecutor;
use toolgate::runtime::exec::sandbox::{KernelFeatures, Protection, probe};
use toolgate::runtime::{Session, ToolResult};

fn session() -> Session {
    Session::new("s", "interactive")
}

/// Pids of live (non-zombie) processes whose environment carries `TG_MARK=<mark>`.
fn marked(mark: &str) -> Vec<u32> {
    let needle = format!("TG_MARK={mark}");
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                s.rsplit(')')
                    .next()
                    .is_some_and(|r| r.trim_start().starts_with('Z'))
            })
            .unwrap_or(true);
        let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        if !zombie && env.split(|b| *b == 0).any(|v| v == needle.as_bytes()) {
            out.push(pid);
        }
    }
    out
}

/// Waits (up to 5 s) for every marked process to be gone.
async fn all_gone(mark: &str) -> Vec<u32> {
    for _ in 0..100 {
        let left = marked(mark);
        if left.is_empty() {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    marked(mark)
}

fn unique(tag: &str) -> String {
    format!("{tag}-{}-{}", std::process::id(), uuid_like())
}

fn uuid_like() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

fn shell(command: &str) -> toolgate::runtime::ToolCall {
    call("c", "shell", json!({ "command": command }))
}

/// The full protections of workspace-write on this kernel (a kernel without one of them makes
/// the profile fail closed, which `fails_closed_without_kernel_support` covers).
fn workspace_write_protections() -> Vec<Protection> {
    let kill = probe().cgroup.as_ref().is_some_and(|c| c.kill);
    [
        Protection::ProcessGroup,
        Protection::Subreaper,
        Protection::CgroupKill,
        Protection::Landlock,
        Protection::NoNetwork,
        Protection::ResourceLimits,
        Protection::ProcessLimit,
    ]
    .into_iter()
    .filter(|p| kill || *p != Protection::CgroupKill)
    .collect()
}

/// Whether this kernel has everything workspace-write needs; when it does not, the test
/// asserts that the call failed closed instead.
fn fully_sandboxed(r: &ToolResult) -> bool {
    let k = probe();
    let complete = k.landlock_abi.is_some() && k.seccomp && k.pids.is_some();
    if !complete {
        assert_eq!(r.error_type(), Some(ErrorType::RuntimeException));
        assert!(
            r.summary().contains("refusing to run unsandboxed"),
            "{}",
            r.summary()
        );
        return false;
    }
    true
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
        "Full output: artifact {} ({} bytes, 100000 lines); read parts of it with read_artifact.",
        a.id,
        expected.len()
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

/// A directory outside the workspace and outside /tmp (which workspace-write may write).
fn outside() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_write_outside_the_workspace_is_a_sandbox_violation() {
    let f = Fixture::new();
    let rt = f.builder().build().unwrap();
    let out = outside();
    let target = out.path().join("escape.txt");
    let r = run1(
        &rt,
        &session(),
        shell(&format!(
            "echo inside > ok.txt && echo pwned > {}",
            target.display()
        )),
    )
    .await;
    if !fully_sandboxed(&r) {
        return;
    }
    assert_eq!(
        (r.status(), r.error_type()),
        (Status::SandboxViolation, Some(ErrorType::SandboxViolation))
    );
    assert!(
        r.summary()
            .starts_with("the sandbox blocked a file access outside the sandbox's roots: "),
        "{}",
        r.summary()
    );
    assert!(r.summary().contains("Permission denied"));
    assert!(!target.exists());
    assert_eq!(f.read("ok.txt"), "inside\n");
    assert!(r.protections().contains(&Protection::Landlock));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_read_of_a_denied_path_is_a_sandbox_violation() {
    let f = Fixture::new();
    let rt = f.builder().build().unwrap();
    let out = outside();
    let secret = out.path().join("secret.txt");
    std::fs::write(&secret, "the-crown-jewels\n").unwrap();
    let r = run1(
        &rt,
        &session(),
        call(
            "c",
            "shell_jail",
            json!({"command": format!("cat {}", secret.display())}),
        ),
    )
    .await;
    if probe().landlock_abi.is_none() {
        assert_eq!(r.error_type(), Some(ErrorType::RuntimeException));
        return;
    }
    assert_eq!(
        r.status(),
        Status::SandboxViolation,
        "{}",
        r.projection().text
    );
    assert!(!r.projection().text.contains("crown-jewels"));
    assert!(r.summary().contains("Permission denied"), "{}", r.summary());
    // The workspace itself stays readable and writable.
    f.write("mine.txt", "mine\n");
    let r = run1(
        &rt,
        &session(),
        call(
            "c",
            "shell_jail",
            json!({"command": "cat mine.txt > copy.txt && cat copy.txt"}),
        ),
    )
    .await;
    assert_eq!((r.status(), r.output()), (Status::Success, Some("mine\n")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_network_socket_is_refused_unix_sockets_work() {
    let f = Fixture::new();
    let rt = f.builder().build().unwrap();
    let r = run1(
        &rt,
        &session(),
        shell("python3 -c \"import socket; s = socket.socket(); s.connect(('127.0.0.1', 9))\""),
    )
    .await;
    if !fully_sandboxed(&r) {
        return;
    }
    assert_eq!(
        r.status(),
        Status::SandboxViolation,
        "{}",
        r.projection().text
    );
    assert!(
        r.summary().starts_with(
            "the sandbox blocked a network access (no network in this sandbox): PermissionError: [Errno 1] Operation not permitted"
        ),
        "{}",
        r.summary()
    );
    assert!(r.protections().contains(&Protection::NoNetwork));
    let r = run1(
        &rt,
        &session(),
        shell("python3 -c \"import socket; a, b = socket.socketpair(); a.send(b'unix ok'); print(b.recv(7).decode())\""),
    )
    .await;
    assert_eq!(
        (r.status(), r.output()),
        (Status::Success, Some("unix ok\n"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_fork_bombs_hit_the_process_cap() {
    let f = Fixture::new();
    let rt = f.builder().build().unwrap();
    let mark = unique("bomb");
    // Forks until refused, keeping every child alive.
    let bomb = format!(
        "export TG_MARK={mark}; python3 -c \"
import os, sys, time
n = 0
while True:
    try:
        pid = os.fork()
    except OSError as e:
        print('refused after', n, 'children:', e.strerror)
        sys.exit(1)
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    n += 1
\""
    );
    let r = run1(
        &rt,
        &session(),
        call("c", "shell_tight", json!({ "command": bomb })),
    )
    .await;
    if !fully_sandboxed(&r) {
        return;
    }
    assert_eq!(
        r.status(),
        Status::SandboxViolation,
        "{}",
        r.projection().text
    );
    assert!(
        r.summary().contains("reached the process cap of 48"),
        "{}",
        r.summary()
    );
    assert!(
        r.output()
            .unwrap()
            .contains("Resource temporarily unavailable")
    );
    assert!(r.protections().contains(&Protection::ProcessLimit));
    assert_eq!(all_gone(&mark).await, Vec::<u32>::new());

    // The classic shell bomb: its first process returns at once and the bomb runs on;
    // contained by the cap, and killed with the tree when the command ends or times out.
    let mark = unique("classic");
    let r = run1(
        &rt,
        &session(),
        call(
            "c",
            "shell_tight",
            json!({ "command": format!("export TG_MARK={mark}; bomb() {{ bomb | bomb & }}; bomb; sleep 4") }),
        ),
    )
    .await;
    assert!(
        matches!(r.status(), Status::Timeout | Status::SandboxViolation),
        "{}",
        r.projection().text
    );
    assert!(r.summary().contains("process cap of 48"), "{}", r.summary());
    assert_eq!(all_gone(&mark).await, Vec::<u32>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_10gb_write_stops_at_the_file_size_limit() {
    let f = Fixture::new();
    let rt = f.builder().build().unwrap();
    let r = run1(
        &rt,
        &session(),
        call(
            "c",
            "shell_tight",
            json!({"command": "head -c 10G /dev/zero > big.bin"}),
        ),
    )
    .await;
    if !fully_sandboxed(&r) {
        return;
    }
    assert_eq!(
        (r.status(), r.summary()),
        (
            Status::SandboxViolation,
            "`head -c 10G /dev/zero > big.bin` exceeded the file size limit (16777216 bytes) and was stopped"
        )
    );
    let size = std::fs::metadata(f.path().join("big.bin")).unwrap().len();
    assert_eq!(size, 16 * 1024 * 1024);
    assert!(r.protections().contains(&Protection::ResourceLimits));
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
            "the sandbox profile `workspace-write` needs Landlock (read-only and writable roots), seccomp (the no-network filter), the cgroup pids controller (the process cap) which this system does not offer; refusing to run unsandboxed (set `best_effort: true` on the profile to run with what is available)"
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

/// A process tool's result in JSON lists the protections in force.
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
