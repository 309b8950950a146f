//! Helpers of the sandbox tests: finding a test's processes by a marker in their environment,
//! and what the workspace-write profile puts in force on this kernel.

use std::time::Duration;

use serde_json::json;

use toolgate::ir::ErrorType;
use toolgate::runtime::ToolResult;
use toolgate::runtime::exec::sandbox::{Protection, probe};

use super::call;

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
        .is_some_and(|abi| abi >= toolgate::runtime::exec::sandbox::SCOPE_ABI)
}

/// Whether this kernel has everything workspace-write needs; when it does not, the test
/// asserts that the call failed closed instead.
pub fn fully_sandboxed(r: &ToolResult) -> bool {
    let k = probe();
    let complete = k.landlock_abi.is_some()
        && k.seccomp
        && k.pids.is_some()
        && k.namespaces.as_ref().is_some_and(|n| n.pid);
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
