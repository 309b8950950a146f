//! Escape attempts from the sandbox of command tools: writing outside the workspace, reading a
//! path outside the read roots, opening a network socket, signalling or connecting outside the
//! tree, hijacking the shim's report, fork bombs, a 10 GB write, a busy loop, a huge
//! allocation, a descriptor leak, and a secret in the output. Each is contained and reported
//! (SANDBOX_VIOLATION, or TIMEOUT with the containment in the message) with the protections in
//! force. On a kernel without what the profile needs, each asserts that the call failed closed
//! instead.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::sandbox::{Part, all_gone, fully_sandboxed, kernel_has, shell, unique};
use common::{Fixture, call, run1};
use pretty_assertions::assert_eq;
use serde_json::json;
use toolgate::ir::{ErrorType, Status};
use toolgate::runtime::Session;
use toolgate::runtime::sandbox::Protection;

fn session() -> Session {
    Session::new("s", "interactive")
}

/// A directory outside the workspace and outside /tmp (the tool's private /tmp shadows it).
///
/// Cargo's target tmp folder is used unless the checkout itself lies under the temp folder (a
/// clone in /tmp); then /var/tmp, which the sandbox does not give the tool.
fn outside() -> tempfile::TempDir {
    let target_tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    if target_tmp.starts_with(std::env::temp_dir()) {
        tempfile::tempdir_in("/var/tmp").unwrap()
    } else {
        tempfile::tempdir_in(target_tmp).unwrap()
    }
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
    // The folder is not in the tool's view at all (mount namespace); Landlock refuses it where
    // the view is the host's.
    assert!(
        r.summary().contains("No such file or directory")
            || r.summary().contains("Permission denied"),
        "{}",
        r.summary()
    );
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
    if !kernel_has(&[Part::Landlock]) {
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
    assert!(
        r.summary().contains("No such file or directory")
            || r.summary().contains("Permission denied"),
        "{}",
        r.summary()
    );
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

/// The shim's report once went to a file in /tmp named in the shim's argv, which the tool can
/// read: a symlink there made the shim (outside the sandbox) overwrite any file the user can
/// write. Now it goes through a pipe the tool never holds. The tool tries the old attack, a
/// report forged through the shim's descriptors, and looks for an inherited report pipe.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_through_the_shims_report_clobbers_nothing_and_forges_nothing() {
    let f = Fixture::new();
    let rt = f.builder().build().unwrap();
    let out = outside();
    let victim = out.path().join("victim.txt");
    std::fs::write(&victim, "precious\n").unwrap();
    let v = victim.display();
    let script = format!(
        r#"plan=$(tr '\0' '\n' < /proc/$PPID/cmdline | sed -n 3p)
r=$(printf '%s' "$plan" | grep -o '"report":"[^"]*"' | cut -d'"' -f4)
if [ -n "$r" ]; then ln -sf {v} "$r" && echo "linked $r"; fi
for fd in /proc/$PPID/fd/*; do ( printf '{{"exit_code":0}}' > "$fd" ) 2>/dev/null && echo "wrote $fd"; done
fds=; for p in /proc/$$/fd/*; do fds="$fds ${{p##*/}}"; done; echo "fds:$fds"
exit 3"#
    );
    let r = run1(&rt, &session(), shell(&script)).await;
    if !fully_sandboxed(&r) {
        return;
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    // The real report, not a forged one: the tool's own exit code.
    assert_eq!(
        (r.status(), r.exit_code()),
        (Status::Error, Some(3)),
        "{}",
        r.projection().text
    );
    let output = r.output().unwrap();
    assert!(
        !output.contains("linked") && !output.contains("wrote"),
        "{output}"
    );
    // Its stdio, and the folder the glob read: no report pipe, nothing else inherited.
    assert!(output.contains("fds: 0 1 2 3\n"), "{output}");
}

/// Landlock's signal scope (ABI 6): a process outside the tool's tree cannot be signalled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_signal_to_a_process_outside_the_tree_is_refused() {
    let f = Fixture::new();
    let rt = f.builder().build().unwrap();
    let mut bystander = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let r = run1(
        &rt,
        &session(),
        shell(&format!("kill -TERM {}", bystander.id())),
    )
    .await;
    let alive = bystander.try_wait().unwrap().is_none();
    let _ = bystander.kill();
    let _ = bystander.wait();
    if !fully_sandboxed(&r) {
        return;
    }
    if !kernel_has(&[Part::Scopes]) {
        assert!(!r.protections().contains(&Protection::SignalScope));
        return;
    }
    assert!(alive, "the tool killed a process outside its tree");
    assert_eq!(
        r.status(),
        Status::SandboxViolation,
        "{}",
        r.projection().text
    );
    assert!(
        r.summary()
            .starts_with("the sandbox blocked a signal to a process outside the tool's sandbox: ")
            // Not even visible in the tool's PID namespace; refused by the scope otherwise.
            && (r.summary().contains("No such process")
                || r.summary().contains("Operation not permitted")),
        "{}",
        r.summary()
    );
    assert!(r.protections().contains(&Protection::SignalScope));
    // Its own children it still signals.
    let r = run1(
        &rt,
        &session(),
        shell("sleep 30 & kill -TERM $! && wait $!; echo \"child ended: $?\""),
    )
    .await;
    assert_eq!(
        (r.status(), r.output()),
        (Status::Success, Some("child ended: 143\n"))
    );
}

/// Landlock's abstract Unix socket scope (ABI 6): a socket made outside the sandbox is out of
/// reach under a profile without network (seccomp lets `AF_UNIX` through).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_abstract_unix_socket_outside_the_sandbox_is_refused() {
    use std::os::linux::net::SocketAddrExt;
    let f = Fixture::new();
    let rt = f.builder().build().unwrap();
    let name = unique("tg-abstract");
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let listener = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
    let r = run1(
        &rt,
        &session(),
        shell(&format!(
            "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('\\0{name}'); print('connected')\""
        )),
    )
    .await;
    drop(listener);
    if !fully_sandboxed(&r) {
        return;
    }
    if !kernel_has(&[Part::Scopes]) {
        assert!(!r.protections().contains(&Protection::AbstractSocketScope));
        return;
    }
    assert_eq!(
        r.status(),
        Status::SandboxViolation,
        "{}",
        r.projection().text
    );
    assert!(!r.output().unwrap_or("").contains("connected"));
    assert!(
        r.summary().contains("Operation not permitted"),
        "{}",
        r.summary()
    );
    assert!(r.protections().contains(&Protection::AbstractSocketScope));
}

/// A busy loop meets the CPU limit: SIGXCPU at the soft limit names it (the hard limit, a
/// second later, would be a bare SIGKILL).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_busy_loop_stops_at_the_cpu_limit() {
    let f = Fixture::new();
    let rt = f.builder().build().unwrap();
    let r = run1(
        &rt,
        &session(),
        call(
            "c",
            "shell_tight",
            json!({"command": "python3 -c 'while True: pass'"}),
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
            "`python3 -c 'while True: pass'` exceeded the CPU time limit (1 s) and was stopped"
        ),
        "{}",
        r.projection().text
    );
    assert!(r.protections().contains(&Protection::ResourceLimits));
}

/// A 2 GiB allocation under the 1 GiB address-space limit fails inside the tool; the result
/// names the limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_huge_allocation_fails_at_the_memory_limit() {
    let f = Fixture::new();
    let rt = f.builder().build().unwrap();
    let r = run1(
        &rt,
        &session(),
        call(
            "c",
            "shell_tight",
            json!({"command": "python3 -c 'x = bytearray(2 * 1024**3)'"}),
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
            "`python3 -c 'x = bytearray(2 * 1024**3)'` failed at the memory (address space) limit (1 GiB) of its sandbox: MemoryError"
        ),
        "{}",
        r.projection().text
    );
    assert!(r.output().unwrap().contains("MemoryError"));
}

/// Opening more files than the limit fails with EMFILE inside the tool; the result names the
/// limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_descriptor_hoarding_fails_at_the_open_files_limit() {
    let f = Fixture::new();
    let rt = f.builder().build().unwrap();
    let r = run1(
        &rt,
        &session(),
        call(
            "c",
            "shell_tight",
            json!({"command": "python3 -c 'fs = [open(\"/dev/null\") for _ in range(1000)]'"}),
        ),
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
    assert_eq!(
        r.summary(),
        "`python3 -c 'fs = [open(\"/dev/null\") for _ in range(1000)]'` failed at the open files limit (256) of its sandbox: OSError: [Errno 24] Too many open files: '/dev/null'"
    );
}

/// A token in a tool's output reaches the model nowhere: not in the summary (which quotes the
/// command line), the output, the structured result, the projection or the result's JSON. The
/// artifact keeps the raw bytes (owner-only); read_artifact shows them redacted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_secret_in_the_output_is_redacted_wherever_the_model_reads() {
    let f = Fixture::new();
    let rt = f.builder().build().unwrap();
    let token = format!("ghp_{}", "aB3dE5gH7j".repeat(4)[..36].to_owned());
    let r = run1(&rt, &session(), shell(&format!("echo {token}"))).await;
    if !fully_sandboxed(&r) {
        return;
    }
    assert_eq!(r.status(), Status::Success, "{}", r.projection().text);
    assert_eq!(r.summary(), "`echo [REDACTED]` exited with code 0");
    assert_eq!(r.output(), Some("[REDACTED]\n"));
    assert_eq!(r.structured().unwrap()["command"], "echo [REDACTED]");
    assert!(r.projection().text.contains("[REDACTED]"));
    let everything = format!(
        "{}\n{}\n{}",
        serde_json::to_string(&r).unwrap(),
        r.projection().text,
        serde_json::to_string(&r.projection().structured).unwrap()
    );
    assert!(!everything.contains(&token), "{everything}");

    // Above the artifact threshold (64 KiB): the file keeps it, the model does not see it.
    let r = run1(
        &rt,
        &session(),
        shell(&format!("echo {token}; seq 1 20000")),
    )
    .await;
    assert_eq!(r.status(), Status::Success, "{}", r.projection().text);
    let a = &r.artifacts()[0];
    let stored = std::fs::read_to_string(
        f.state
            .path()
            .join("artifacts/objects")
            .join(&a.id[7..9])
            .join(&a.id[9..]),
    )
    .unwrap();
    assert!(stored.starts_with(&format!("{token}\n1\n")));
    assert!(!serde_json::to_string(&r).unwrap().contains(&token));
    assert!(!r.projection().text.contains(&token));
    let page = run1(
        &rt,
        &session(),
        call(
            "p",
            "read_artifact",
            json!({"artifact_id": a.id, "start_line": 1, "end_line": 2}),
        ),
    )
    .await;
    assert_eq!(page.structured().unwrap()["text"], "[REDACTED]\n1\n");
    assert!(!page.projection().text.contains(&token));
    assert!(!serde_json::to_string(&page).unwrap().contains(&token));
}
