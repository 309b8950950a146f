//! The escape suite's process routes: what a command tool can reach of the hostile workspace
//! (secrets in the tree, a fake home outside it, two repositories) through the kernel's view —
//! `cat`, `grep -r`, `find /`, `python3`, a test's `conftest.py`, links made by one call and
//! read by another, `/proc/*/environ`, a Unix socket outside, the state folder, block devices,
//! the masks themselves, and git with a crafted configuration. Every result is checked with
//! `assert_result_clean` (no marker reaches the model), and nothing may land in `.git`.
//!
//! On a kernel without mount and PID namespaces the confined profiles fail closed; each test
//! then asserts that instead (`fully_sandboxed`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;

use common::escape::{HostileWorkspace, git_in};
use common::sandbox::{
    bash, fully_sandboxed, git_snapshot, printed, runtime, session, shell_in, stdout, unique,
};
use common::{call, run1};
use serde_json::json;
use toolgate::ir::Status;
use toolgate::runtime::sandbox::Protection;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_cat_and_grep_see_empty_masks() {
    let ws = HostileWorkspace::new();
    let rt = runtime(&ws);
    // A hard link to .env under an innocent name, made by the person before the call.
    std::fs::hard_link(ws.path().join(".env"), ws.path().join("src/notes.txt")).unwrap();
    let r = shell_in(
        &rt,
        "cat .env; cat keys/server.pem keys/id_rsa config/.env.production; cat src/notes.txt; ls deploy/.aws; echo done",
    )
    .await;
    if !fully_sandboxed(&r) {
        return;
    }
    ws.assert_result_clean("shell cat", &rt, &r);
    assert_eq!(r.status(), Status::Success, "{}", r.projection().text);
    assert_eq!(printed(&r), "done\n", "every masked file reads empty");
    assert!(r.protections().contains(&Protection::ProtectedMasked));

    let r = shell_in(&rt, "grep -rn API_KEY . ; echo exit=$?").await;
    ws.assert_result_clean("shell grep -rn", &rt, &r);
    let out = printed(&r);
    assert!(out.contains("./README.md:3:The API_KEY"), "{out}");
    assert!(out.contains("./src/app.py:2:API_KEY"), "{out}");

    let r = run1(
        &rt,
        &session(),
        call("g", "grep", json!({"pattern": "API_KEY"})),
    )
    .await;
    ws.assert_result_clean("grep tool", &rt, &r);
    assert_eq!(r.status(), Status::Success, "{}", r.projection().text);
    assert!(r.protections().contains(&Protection::ProtectedMasked));

    // bash's rules refuse a line that names a protected path …
    let r = bash(&rt, "cat .env keys/server.pem vendor/lib/.env | wc -c").await;
    ws.assert_result_clean("bash cat", &rt, &r);
    assert_eq!(
        r.error_type(),
        Some(toolgate::ir::ErrorType::PolicyDenied),
        "{}",
        r.projection().text
    );
    // … and one whose names the rules cannot read (asked, and approved here) meets the masks.
    let r = bash(
        &rt,
        "d=$(printf '%s%s' .e nv); k=$(printf 'keys/server.p%s' em); cat \"$d\" \"$k\" vendor/lib/\"$d\" | wc -c",
    )
    .await;
    ws.assert_result_clean("bash cat, names built at run time", &rt, &r);
    assert_eq!(r.status(), Status::Success, "{}", r.projection().text);
    assert_eq!(printed(&r).trim(), "0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_find_and_python_see_no_home() {
    let ws = HostileWorkspace::new();
    let rt = runtime(&ws);
    let home = ws.home();
    // Everything but the big read-only trees that hold no home (the system, the toolchains).
    let r = shell_in(
        &rt,
        "find / \\( -path /proc -o -path /sys -o -path /usr -o -path /root/.rustup -o -path /root/.cargo -o -path /root/.pyenv \\) -prune -o -name 'id_rsa*' -print 2>/dev/null; ls -a /root /home 2>&1; echo done",
    )
    .await;
    if !fully_sandboxed(&r) {
        return;
    }
    ws.assert_result_clean("find /", &rt, &r);
    assert_eq!(r.status(), Status::Success, "{}", r.projection().text);
    let out = printed(&r);
    let root = ws.path().to_string_lossy().into_owned();
    for line in out.lines().filter(|l| l.contains("id_rsa")) {
        assert!(
            line.starts_with(&root),
            "only the workspace's (masked) key may be found: {out}"
        );
    }
    assert!(!out.contains(&*home.to_string_lossy()) && !out.contains("/root/.ssh"));

    let script = format!(
        "import os\nfor p in ['.env', 'keys/server.pem', '{h}/.ssh/id_rsa', '{h}/.aws/credentials', os.path.expanduser('~/.ssh/id_rsa')]:\n    try:\n        print(p, repr(open(p).read()))\n    except OSError as e:\n        print(p, type(e).__name__)\n",
        h = home.display()
    );
    let r = shell_in(&rt, &format!("python3 -c \"{script}\"")).await;
    ws.assert_result_clean("python3", &rt, &r);
    let out = printed(&r);
    assert!(out.contains(".env ''"), "{out}");
    assert!(
        out.contains(&format!("{}/.ssh/id_rsa FileNotFoundError", home.display())),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_workspace_code_reads_nothing_and_plants_nothing_in_git() {
    let ws = HostileWorkspace::new();
    let rt = runtime(&ws);
    let before = git_snapshot(&ws);
    let home = ws.home();
    // What a hostile conftest.py does when pytest imports it: read secrets, plant a hook and
    // an fsmonitor command that the person's own git would run later, outside any sandbox.
    let conftest = format!(
        r#"import os, subprocess
for p in ['.env', 'keys/server.pem', 'vendor/lib/.env', '{h}/.ssh/id_rsa']:
    try:
        print('READ', p, open(p).read())
    except OSError as e:
        print('READ', p, type(e).__name__)
for p, text in [('.git/hooks/pre-commit', '#!/bin/sh\ntouch /tmp/pwned\n'),
                ('.git/config', '[core]\n\tfsmonitor = touch /tmp/pwned\n'),
                ('vendor/lib/.git/hooks/post-checkout', '#!/bin/sh\n')]:
    try:
        with open(p, 'a') as f:
            f.write(text)
        print('WROTE', p)
    except OSError as e:
        print('REFUSED', p, type(e).__name__)
r = subprocess.run(['git', 'config', 'core.fsmonitor', 'touch /tmp/pwned'], capture_output=True, text=True)
print('GIT CONFIG', r.returncode)
def test_nothing():
    pass
"#,
        h = home.display()
    );
    ws.fixture.write("tests/conftest.py", &conftest);
    ws.fixture
        .write("tests/test_app.py", "def test_app():\n    assert True\n");
    // The same code, as the test runner would run it.
    let r = shell_in(&rt, "cd tests && python3 conftest.py").await;
    if !fully_sandboxed(&r) {
        return;
    }
    ws.assert_result_clean("conftest.py through shell", &rt, &r);
    let out = printed(&r);
    assert!(!out.contains("WROTE"), "{out}");
    let r = shell_in(&rt, "python3 tests/conftest.py").await;
    ws.assert_result_clean("conftest.py from the root", &rt, &r);
    let out = printed(&r);
    assert!(!out.contains("WROTE"), "{out}");
    assert_eq!(out.matches("REFUSED").count(), 3, "{out}");
    assert!(!out.contains("GIT CONFIG 0"), "{out}");
    assert_eq!(git_snapshot(&ws), before, "nothing lands in .git");

    // Through run_tests itself, when pytest is there to import it.
    let pytest = std::process::Command::new("python3")
        .args(["-c", "import pytest"])
        .output()
        .is_ok_and(|o| o.status.success());
    if pytest {
        let r = run1(
            &rt,
            &session(),
            call("t", "run_tests", json!({"runner": "pytest"})),
        )
        .await;
        ws.assert_result_clean("run_tests with conftest.py", &rt, &r);
        assert!(r.protections().contains(&Protection::GitReadOnly));
        assert_eq!(git_snapshot(&ws), before, "nothing lands in .git");
    } else {
        eprintln!(
            "pytest is not installed: run_tests itself is not tried (the shell runs the conftest)"
        );
    }
    // The person's own git runs no planted command.
    git_in(ws.path(), &["status", "--porcelain"]);
    assert!(!Path::new("/tmp/pwned").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_links_made_by_one_call_are_read_by_another_in_vain() {
    let ws = HostileWorkspace::new();
    let rt = runtime(&ws);
    let home = ws.home();
    let r = shell_in(
        &rt,
        &format!(
            "ln -s .env link_env; ln -s {h}/.ssh/id_rsa link_home; ln -s /root/.ssh link_root; ln .env hard_env; ln keys/id_rsa hard_key; ln -s deploy/.aws link_aws; echo made",
            h = home.display()
        ),
    )
    .await;
    if !fully_sandboxed(&r) {
        return;
    }
    ws.assert_result_clean("making links", &rt, &r);
    // A hard link to a masked file crosses a mount: refused.
    assert!(!ws.path().join("hard_env").exists() && !ws.path().join("hard_key").exists());
    let r = shell_in(
        &rt,
        "cat link_env link_home hard_env hard_key link_aws/credentials link_root/id_rsa; echo read",
    )
    .await;
    ws.assert_result_clean("reading the links in a second call", &rt, &r);
    // The command tools of the library read through the same view (the builtins have their
    // own race-free opens).
    for (tool, args) in [
        ("grep", json!({"pattern": "TGSECRET"})),
        ("grep", json!({"pattern": "API_KEY", "path": "link_aws"})),
        (
            "bash",
            json!({"command": "cat link_env link_aws/credentials"}),
        ),
    ] {
        let r = run1(&rt, &session(), call("l", tool, args.clone())).await;
        ws.assert_result_clean(&format!("{tool} {args}"), &rt, &r);
    }
    // A hard link made outside the sandbox (by the person) between two calls is masked too.
    std::fs::hard_link(
        ws.path().join("keys/server.pem"),
        ws.path().join("server.txt"),
    )
    .unwrap();
    let r = shell_in(&rt, "cat server.txt; wc -c < server.txt").await;
    ws.assert_result_clean("a hard link made between calls", &rt, &r);
    assert_eq!(printed(&r).trim(), "0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_proc_shows_no_other_process() {
    let ws = HostileWorkspace::new();
    let rt = runtime(&ws);
    // A process outside with a secret in its environment (as toolgate's MCP client might
    // have), and toolgate itself (this test process).
    let marker = unique("TGSECRET-environ");
    let mut bystander = std::process::Command::new("sleep")
        .arg("30")
        .env("API_TOKEN", &marker)
        .spawn()
        .unwrap();
    let me = std::process::id();
    let r = shell_in(
        &rt,
        &format!(
            "cat /proc/{me}/environ /proc/{b}/environ 2>&1 | tr '\\0' '\\n'; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done; echo processes=$(ls /proc | grep -c '^[0-9]')",
            b = bystander.id()
        ),
    )
    .await;
    let _ = bystander.kill();
    let _ = bystander.wait();
    if !fully_sandboxed(&r) {
        return;
    }
    ws.assert_result_clean("/proc/*/environ", &rt, &r);
    let out = printed(&r);
    assert!(!out.contains(&marker), "{out}");
    assert!(
        out.contains(&format!("/proc/{me}/environ: No such file or directory")),
        "{out}"
    );
    // The shell, its pipeline, and the init: a handful, not the host's hundreds.
    let count: usize = out
        .lines()
        .find_map(|l| l.strip_prefix("processes="))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(count < 10, "{out}");
    assert!(r.protections().contains(&Protection::PidNamespace));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_unix_sockets_outside_are_unreachable() {
    use std::os::unix::net::UnixListener;
    let ws = HostileWorkspace::new();
    let rt = runtime(&ws);
    let outside = tempfile::tempdir().unwrap(); // under the host's /tmp
    let beside_home = ws.home().join("agent.sock");
    let in_tmp = outside.path().join("agent.sock");
    let listeners: Vec<UnixListener> = [&in_tmp, &beside_home]
        .iter()
        .map(|p| {
            let l = UnixListener::bind(p).unwrap();
            l.set_nonblocking(true).unwrap();
            l
        })
        .collect();
    let script = format!(
        "import socket\nfor p in ['{a}', '{b}', '/run/dbus/system_bus_socket', '/var/run/docker.sock']:\n    s = socket.socket(socket.AF_UNIX)\n    try:\n        s.connect(p); print('CONNECTED', p)\n    except OSError as e:\n        print('REFUSED', p, type(e).__name__)\n",
        a = in_tmp.display(),
        b = beside_home.display()
    );
    let r = shell_in(&rt, &format!("python3 -c \"{script}\"")).await;
    if !fully_sandboxed(&r) {
        return;
    }
    let out = printed(&r);
    assert!(!out.contains("CONNECTED"), "{out}");
    assert_eq!(out.matches("REFUSED").count(), 4, "{out}");
    for l in &listeners {
        assert!(l.accept().is_err(), "a connection reached a socket outside");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_state_folder_is_neither_visible_nor_writable() {
    let ws = HostileWorkspace::new();
    let rt = runtime(&ws);
    let state = ws.fixture.state.path().to_path_buf();
    std::fs::write(state.join("journal.db"), "JOURNAL-CONTENT").unwrap();
    let r = shell_in(
        &rt,
        &format!(
            "ls -a {s}; cat {s}/journal.db; rm -rf {s}; touch {s}/x; echo done",
            s = state.display()
        ),
    )
    .await;
    if !fully_sandboxed(&r) {
        return;
    }
    let out = printed(&r);
    assert!(!out.contains("JOURNAL-CONTENT"), "{out}");
    assert!(out.contains("No such file or directory"), "{out}");
    assert_eq!(
        std::fs::read_to_string(state.join("journal.db")).unwrap(),
        "JOURNAL-CONTENT"
    );
    assert!(!state.join("x").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_no_block_device_and_masks_stay() {
    let ws = HostileWorkspace::new();
    let rt = runtime(&ws);
    let r = shell_in(
        &rt,
        "ls /dev; find /dev -type b | wc -l; umount .env; umount -l keys; umount -l /; unshare -Urm sh -c 'umount .env; cat .env'; mount -t tmpfs none src; python3 -c \"import ctypes, os; c = ctypes.CDLL(None, use_errno=True); print('umount2', c.umount2(b'.env', 2), os.strerror(ctypes.get_errno()))\"; cat .env keys/server.pem; echo done",
    )
    .await;
    if !fully_sandboxed(&r) {
        return;
    }
    ws.assert_result_clean("umount the masks", &rt, &r);
    let out = stdout(&r);
    let listing: Vec<&str> = out
        .lines()
        .take_while(|l| !l.chars().all(|c| c.is_ascii_digit()))
        .collect();
    for dev in [
        "null", "zero", "full", "random", "urandom", "tty", "shm", "pts", "fd",
    ] {
        assert!(listing.contains(&dev), "/dev lacks {dev}: {out}");
    }
    assert!(
        !out.contains("vda") && !out.contains("sda") && !out.contains("nvme"),
        "{out}"
    );
    assert!(
        out.lines().any(|l| l.trim() == "0"),
        "no block device: {out}"
    );
    assert!(
        out.contains("umount2 -1 Operation not permitted"),
        "the mount system calls are refused: {out}"
    );
    assert!(out.ends_with("done\n"), "{out}");
    // A mask can be neither deleted nor moved away; the masked file is untouched.
    let r = shell_in(
        &rt,
        "rm -f .env; mv keys/server.pem server.txt; rm -rf deploy/.aws; echo tried",
    )
    .await;
    ws.assert_result_clean("rm and mv of masks", &rt, &r);
    assert!(
        printed(&r).contains("Device or resource busy"),
        "{}",
        printed(&r)
    );
    for s in ["/.env", "/keys/server.pem", "/deploy/.aws/credentials"] {
        let on_host = std::fs::read_to_string(format!("{}{s}", ws.path().display())).unwrap();
        assert!(on_host.starts_with("API_KEY=TGSECRET"), "{s}: {on_host}");
    }
    assert!(!ws.path().join("server.txt").exists());
    // The masks are still there for the next call.
    let r = shell_in(&rt, "wc -c < .env").await;
    assert_eq!(printed(&r).trim(), "0");
}

/// git tools run nothing a repository configures: a crafted `.git/config` with an fsmonitor
/// command, a textconv driver (through `.gitattributes`), an external diff and a pager.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_git_with_a_crafted_config_runs_nothing() {
    let ws = HostileWorkspace::new();
    let rt = runtime(&ws);
    let mark = |what: &str| format!("sh -c 'echo {what}_RAN >&2; echo {what}_RAN'");
    let config = ws.path().join(".git/config");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(&format!(
        "[core]\n\tfsmonitor = \"{}\"\n\tpager = \"{}\"\n[diff]\n\texternal = \"{}\"\n[diff \"evil\"]\n\ttextconv = \"{}\"\n",
        mark("FSMONITOR"),
        mark("PAGER"),
        mark("EXTDIFF"),
        mark("TEXTCONV")
    ));
    std::fs::write(&config, text).unwrap();
    ws.fixture.write(".gitattributes", "*.py diff=evil\n");
    git_in(ws.path(), &["add", ".gitattributes"]);
    ws.fixture.write("src/app.py", "print('changed')\n");
    // The crafted config works on a git that honours it (so this test can fail).
    let plain = std::process::Command::new("git")
        .args(["-c", "core.pager=cat", "diff", "--", "src/app.py"])
        .current_dir(ws.path())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    let plain = String::from_utf8_lossy(&plain.stdout).into_owned()
        + &String::from_utf8_lossy(&plain.stderr);
    assert!(
        plain.contains("_RAN"),
        "the crafted config does nothing: {plain}"
    );

    for (tool, args) in [
        ("git_status", json!({})),
        ("git_diff", json!({})),
        ("git_diff", json!({"staged": true})),
        ("git_diff", json!({"paths": ["src/app.py"]})),
    ] {
        let r = run1(&rt, &session(), call("g", tool, args.clone())).await;
        if !fully_sandboxed(&r) {
            return;
        }
        let text = serde_json::to_string(&r).unwrap();
        assert!(!text.contains("_RAN"), "{tool} {args}: {text}");
        assert_eq!(
            r.status(),
            Status::Success,
            "{tool}: {}",
            r.projection().text
        );
        ws.assert_result_clean(tool, &rt, &r);
    }
    let r = run1(&rt, &session(), call("g", "git_diff", json!({}))).await;
    assert!(printed(&r).contains("print('changed')") || r.projection().text.contains("src/app.py"));
}
