//! Helpers of the sandbox tests: finding a test's processes by a marker in their environment,
//! and what the workspace-write profile puts in force on this kernel.

use std::time::Duration;

use serde_json::json;

use toolgate::ir::ErrorType;
use toolgate::runtime::extend::ApprovalOutcome;
use toolgate::runtime::sandbox::{Protection, probe};
use toolgate::runtime::{Session, ToolResult, ToolRuntime};

use super::escape::HostileWorkspace;
use super::{Scripted, call, run1};

/// Pids of live (non-zombie) processes whose environment carries `TG_MARK=<mark>`.
pub fn marked(mark: &str) -> Vec<u32> {
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
pub async fn all_gone(mark: &str) -> Vec<u32> {
    for _ in 0..100 {
        let left = marked(mark);
        if left.is_empty() {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    marked(mark)
}

pub fn unique(tag: &str) -> String {
    format!("{tag}-{}-{}", std::process::id(), uuid_like())
}

fn uuid_like() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

pub fn shell(command: &str) -> toolgate::runtime::ToolCall {
    call("c", "shell", json!({ "command": command }))
}

/// The full protections of workspace-write on this kernel (a kernel without one of them makes
/// the profile fail closed, which `fails_closed_without_kernel_support` covers).
pub fn workspace_write_protections() -> Vec<Protection> {
    let kill = probe().cgroup.as_ref().is_some_and(|c| c.kill);
    let scopes = has_scopes();
    [
        Protection::ProcessGroup,
        Protection::Subreaper,
        Protection::CgroupKill,
        Protection::MountNamespace,
        Protection::PidNamespace,
        Protection::PrivateTmp,
        Protection::ProtectedMasked,
        Protection::GitReadOnly,
        Protection::Landlock,
        Protection::SignalScope,
        Protection::NoNetwork,
        Protection::AbstractSocketScope,
        Protection::ResourceLimits,
        Protection::ProcessLimit,
    ]
    .into_iter()
    .filter(|p| kill || *p != Protection::CgroupKill)
    .filter(|p| scopes || !matches!(p, Protection::SignalScope | Protection::AbstractSocketScope))
    .collect()
}

/// Whether this kernel's Landlock has scopes (ABI 6: signals, abstract Unix sockets).
pub fn has_scopes() -> bool {
    probe()
        .landlock_abi
        .is_some_and(|abi| abi >= toolgate::runtime::sandbox::SCOPE_ABI)
}

/// A part of the kernel's sandbox that a test needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// Landlock (any ABI).
    Landlock,
    /// Landlock scopes (signals, abstract Unix sockets: ABI 6).
    Scopes,
    /// The seccomp filter.
    Seccomp,
    /// A pids cgroup (v2 or v1) for the process cap.
    Pids,
    /// Unprivileged mount namespaces (the private view).
    Namespaces,
    /// A PID namespace for the view.
    PidNamespace,
}

impl Part {
    /// Every part, as `TOOLGATE_REQUIRE_SANDBOX=1` requires them.
    pub const ALL: [Part; 6] = [
        Part::Landlock,
        Part::Scopes,
        Part::Seccomp,
        Part::Pids,
        Part::Namespaces,
        Part::PidNamespace,
    ];

    /// The name `TOOLGATE_REQUIRE_SANDBOX` lists it by.
    pub fn name(self) -> &'static str {
        match self {
            Part::Landlock => "landlock",
            Part::Scopes => "scopes",
            Part::Seccomp => "seccomp",
            Part::Pids => "pids",
            Part::Namespaces => "namespaces",
            Part::PidNamespace => "pid_namespace",
        }
    }

    /// Whether this kernel has it.
    pub fn present(self) -> bool {
        let k = probe();
        match self {
            Part::Landlock => k.landlock_abi.is_some(),
            Part::Scopes => has_scopes(),
            Part::Seccomp => k.seccomp,
            Part::Pids => k.pids.is_some(),
            Part::Namespaces => k.namespaces.is_some(),
            Part::PidNamespace => k.namespaces.as_ref().is_some_and(|n| n.pid),
        }
    }

    /// Whether `TOOLGATE_REQUIRE_SANDBOX` requires it: `1` (or `all`) requires every part, a
    /// comma-separated list of names those parts.
    pub fn required(self) -> bool {
        let Ok(v) = std::env::var("TOOLGATE_REQUIRE_SANDBOX") else {
            return false;
        };
        let v = v.trim();
        matches!(v, "1" | "all") || v.split(',').any(|n| n.trim() == self.name())
    }
}

/// Whether this kernel has every one of `parts`. A test that gets `false` checks that the call
/// failed closed and returns without running the rest — unless `TOOLGATE_REQUIRE_SANDBOX`
/// requires a missing part: then it fails here, so that CI on a machine that has the sandbox
/// cannot pass by skipping.
pub fn kernel_has(parts: &[Part]) -> bool {
    let missing: Vec<Part> = parts.iter().copied().filter(|p| !p.present()).collect();
    let required: Vec<&str> = missing
        .iter()
        .filter(|p| p.required())
        .map(|p| p.name())
        .collect();
    assert!(
        required.is_empty(),
        "TOOLGATE_REQUIRE_SANDBOX requires {required:?}, which this kernel lacks (probe: {:?}); unset it, or list only what this machine has",
        probe()
    );
    missing.is_empty()
}

/// What workspace-write needs of the kernel.
pub const WORKSPACE_WRITE: [Part; 4] = [
    Part::Landlock,
    Part::Seccomp,
    Part::Pids,
    Part::PidNamespace,
];

/// Whether this kernel has everything workspace-write needs; when it does not, the test
/// asserts that the call failed closed instead (or fails, see [`kernel_has`]).
pub fn fully_sandboxed(r: &ToolResult) -> bool {
    if !kernel_has(&WORKSPACE_WRITE) {
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

// The escape suite's process routes (tests/escape_sandbox.rs, tests/sandbox_view.rs).

pub fn session() -> Session {
    Session::new("s", "interactive")
}

/// The hostile workspace's runtime, with every `ask` approved (the routes are the kernel's to
/// stop, not the approver's).
pub fn runtime(ws: &HostileWorkspace) -> ToolRuntime {
    ws.fixture
        .builder()
        .approver(Scripted::new(ApprovalOutcome::AllowOnce))
        .build()
        .unwrap()
}

pub async fn shell_in(rt: &ToolRuntime, command: &str) -> ToolResult {
    run1(
        rt,
        &session(),
        call("c", "shell", json!({ "command": command })),
    )
    .await
}

pub async fn bash(rt: &ToolRuntime, command: &str) -> ToolResult {
    run1(
        rt,
        &session(),
        call("b", "bash", json!({ "command": command })),
    )
    .await
}

/// What the tool printed (stdout, then stderr after a `--- stderr ---` line), or the
/// projection when nothing.
pub fn printed(r: &ToolResult) -> String {
    r.output()
        .map(str::to_owned)
        .unwrap_or_else(|| r.projection().text.clone())
}

/// What the tool printed on stdout.
pub fn stdout(r: &ToolResult) -> String {
    let all = printed(r);
    match all.split_once("--- stderr ---") {
        Some((out, _)) => out.to_owned(),
        None => all,
    }
}

/// `.git` of both repositories as it was: every file's path and content.
pub fn git_snapshot(ws: &HostileWorkspace) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for git in [ws.path().join(".git"), ws.path().join("vendor/lib/.git")] {
        let mut stack = vec![git];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let p = e.path();
                if e.file_type().unwrap().is_dir() {
                    stack.push(p);
                } else {
                    out.push((
                        p.to_string_lossy().into_owned(),
                        std::fs::read(&p).unwrap_or_default(),
                    ));
                }
            }
        }
    }
    out.sort();
    out
}
