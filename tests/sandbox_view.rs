//! The view of command tools seen from outside: what `toolgate sandbox` lists, the start
//! refused for a state folder a sandboxed tool could write, the user-namespace path a non-root
//! toolgate takes (the escape routes stay closed there too), and a socket inside the workspace
//! that stays reachable.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::Read;

use common::escape::HostileWorkspace;
use common::sandbox::{fully_sandboxed, git_snapshot, printed, runtime, session, shell_in, stdout};
use common::{call, run1};
use serde_json::json;
use toolgate::ir::Status;
use toolgate::runtime::sandbox::Protection;

/// A Unix socket made inside the workspace by the person stays reachable (the view shows the
/// workspace), which is what makes the outside ones' refusal meaningful.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socket_inside_the_workspace_is_reachable() {
    use std::os::unix::net::UnixListener;
    let ws = HostileWorkspace::new();
    let rt = runtime(&ws);
    let path = ws.path().join("dev.sock");
    let l = UnixListener::bind(&path).unwrap();
    let accept = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut got = String::new();
        s.read_to_string(&mut got).unwrap();
        got
    });
    let r = shell_in(
        &rt,
        "python3 -c \"import socket; s = socket.socket(socket.AF_UNIX); s.connect('dev.sock'); s.sendall(b'hello'); s.close()\"",
    )
    .await;
    if !fully_sandboxed(&r) {
        return;
    }
    assert_eq!(r.status(), Status::Success, "{}", r.projection().text);
    assert_eq!(accept.join().unwrap(), "hello");
}

/// A state folder inside a tree a sandboxed tool may write is refused at start, naming the
/// folder, the profile and a tool; one under the host's /tmp (private in every view) is not.
#[test]
fn a_state_folder_a_sandboxed_tool_could_write_refuses_to_start() {
    let ws = HostileWorkspace::new();
    if !common::sandbox::kernel_has(&[common::sandbox::Part::PidNamespace]) {
        return;
    }
    let state = ws.path().join("state/.toolgate");
    let e = ws.fixture.builder().state_dir(&state).build().unwrap_err();
    let text = e.to_string();
    assert!(
        text.starts_with(&format!(
            "the state folder `{}` lies inside `",
            state.display()
        )),
        "{text}"
    );
    assert!(
        text.contains("under the sandbox profile `workspace-write`") && text.contains("the tool `"),
        "{text}"
    );
    assert!(
        text.contains("Move `state_dir` out of every writable root"),
        "{text}"
    );
    // The fixture's own state folder is under the host's /tmp, which no view shows.
    assert!(ws.fixture.state.path().starts_with(std::env::temp_dir()));
    ws.fixture.builder().build().unwrap();
}

/// `toolgate sandbox` lists, per profile, what a process sees here: the masks of this
/// workspace (hard links included), `.git` read-only, `/tmp`, `/dev`, `/proc`, the network.
#[test]
fn toolgate_sandbox_lists_what_each_profile_exposes() {
    let ws = HostileWorkspace::new();
    std::fs::hard_link(ws.path().join(".env"), ws.path().join("src/notes.txt")).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["sandbox", "--format", "json", "--config"])
        .arg(common::repo().join("tests/fixtures/runtime/toolgate.yaml"))
        .arg("--workspace")
        .arg(ws.path())
        .arg("--state-dir")
        .arg(ws.fixture.state.path())
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    if !common::sandbox::kernel_has(&[common::sandbox::Part::Namespaces]) {
        assert!(v["kernel"]["namespaces"].is_null(), "{v:#}");
        assert!(
            v["profiles"]["workspace-write"]["refuses"].is_string(),
            "{v:#}"
        );
        return;
    }
    let p = &v["profiles"]["workspace-write"];
    let masked: Vec<&str> = p["masked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    for m in [
        ".env",
        "config/.env.production",
        "keys/server.pem",
        "keys/id_rsa",
        "deploy/.aws",
        "vendor/lib/.env",
        "src/notes.txt",
    ] {
        assert!(masked.contains(&m), "{m} is not listed as masked: {p:#}");
    }
    assert_eq!(masked.len(), 7, "{p:#}");
    assert_eq!(p["git_read_only"], json!([".git", "vendor/lib/.git"]));
    assert_eq!(p["writable"], json!([ws.path()]));
    assert!(p["tmp"].as_str().unwrap().starts_with("private, writable"));
    assert!(p["proc"].as_str().unwrap().contains("PID namespace"));
    assert_eq!(p["network"], false);
    assert!(
        p["used_by"].as_array().unwrap().contains(&json!("shell")),
        "{p:#}"
    );
    let readable = p["readable"].as_array().unwrap();
    assert!(readable.contains(&json!("/usr")), "{p:#}");
    assert!(
        !readable
            .iter()
            .any(|r| r == "/" || r == "/root" || r == "/home"),
        "no home folder as a whole: {p:#}"
    );
    // The text form says the same for a person.
    let text = std::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["sandbox", "--config"])
        .arg(common::repo().join("tests/fixtures/runtime/toolgate.yaml"))
        .arg("--workspace")
        .arg(ws.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("masked in this workspace: 7 ("), "{text}");
    assert!(
        text.contains(".git read-only: .git, vendor/lib/.git"),
        "{text}"
    );
}

/// The path a toolgate that may not mount takes (a non-root user): the shim makes a user
/// namespace of its own first, so every mount the view inherits from the host is locked. Forced
/// here by planning as if toolgate lacked `CAP_SYS_ADMIN`; the same routes stay closed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escape_routes_stay_closed_in_a_user_namespace() {
    use std::sync::Arc;
    use toolgate::runtime::extend::Backend;
    use toolgate::runtime::sandbox::CommandExecutor;
    use toolgate::runtime::sandbox::{NamespaceSupport, probe};
    if !common::sandbox::kernel_has(&[common::sandbox::Part::Namespaces]) {
        return;
    }
    let Some(ns) = probe().namespaces.clone() else {
        return;
    };
    let ws = HostileWorkspace::new();
    let mut kernel = probe().clone();
    kernel.namespaces = Some(NamespaceSupport {
        user_namespace: true,
        ..ns
    });
    let exec = CommandExecutor::new(common::bundle().project.sandbox_profiles.clone())
        .with_shim(common::shim())
        .with_kernel(kernel);
    let rt = ws
        .fixture
        .builder()
        .executor(Backend::Command, Arc::new(exec))
        .build()
        .unwrap();
    let before = git_snapshot(&ws);
    let r = shell_in(
        &rt,
        "id -u; cat .env keys/server.pem; grep -rn TGSECRET . ; ls /root /home 2>&1; umount .env; echo x >> .git/config; python3 -c \"import ctypes, os; c = ctypes.CDLL(None, use_errno=True); print('umount2', c.umount2(b'.env', 2), os.strerror(ctypes.get_errno()))\"; ls /proc | grep -c '^[0-9]'; echo done",
    )
    .await;
    if !fully_sandboxed(&r) {
        return;
    }
    ws.assert_result_clean("in a user namespace", &rt, &r);
    let out = stdout(&r);
    assert!(out.contains("umount2 -1 Operation not permitted"), "{out}");
    assert!(out.ends_with("done\n"), "{}", printed(&r));
    assert_eq!(git_snapshot(&ws), before);
    assert!(r.protections().contains(&Protection::ProtectedMasked));
    assert!(r.protections().contains(&Protection::PidNamespace));
    // `none` in a user namespace: the host's root, the masks locked.
    let r = shell_in(&rt, "true").await;
    assert_eq!(r.status(), Status::Success);
    let r = run1(
        &rt,
        &session(),
        call("e", "env_probe", json!({"word": "x"})),
    )
    .await;
    assert_eq!(r.status(), Status::Success, "{}", r.projection().text);
    assert!(
        r.protections().contains(&Protection::ProtectedMasked),
        "{:?}",
        r.protections()
    );
}
