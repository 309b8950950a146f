//! The sandbox of command tools: what a profile asks for, what the kernel offers, and the
//! per-execution shim that puts it in force.
//!
//! Three steps, each its own type:
//!
//! 1. [`probe`] reads what this kernel offers once per process ([`KernelFeatures`]: the Landlock
//!    ABI, seccomp, a writable cgroup v2 hierarchy and its controllers, a v1 `pids` hierarchy,
//!    mount and PID namespaces).
//! 2. [`plan()`] turns a [`SandboxProfile`] of toolgate.yaml into a [`SandboxPlan`] — a pure,
//!    unit-tested transform — with the tool's [`view`] ([`toolchain`] finds its toolchain). A
//!    protection the profile needs and the kernel lacks makes the plan fail closed
//!    ([`SandboxUnavailable`]) unless the profile says `best_effort: true`; then it is listed in
//!    [`SandboxPlan::missing`]. Every plan lists the [`Protection`]s it puts in force, and every
//!    result carries them.
//! 3. [`shim`] is toolgate re-executed per tool process (`toolgate __exec-shim PLAN -- ARGV`):
//!    subreaper, parent-death signal, the namespaces and the view ([`walk`] finds the masks),
//!    the cgroup, rlimits, capabilities, Landlock, seccomp, then the tool. It reports what it
//!    put in force through a pipe only it holds ([`report`]). [`cgroup`] creates and removes
//!    the per-execution cgroups on the parent's side.
//!
//! `#[cfg(target_os = "linux")]` appears only in this folder; elsewhere the probe finds
//! nothing, so every profile that needs a protection fails closed.

#[cfg(target_os = "linux")]
mod caps;
pub mod cgroup;
#[cfg(target_os = "linux")]
mod child;
pub mod fork_server;
#[cfg(target_os = "linux")]
mod fork_server_loop;
#[cfg(target_os = "linux")]
mod init;
pub mod keep;
#[cfg(target_os = "linux")]
mod landlock;
#[cfg(target_os = "linux")]
mod mounts;
mod plan;
#[cfg(target_os = "linux")]
mod prepare;
pub mod probe;
pub mod report;
mod rlimit;
#[cfg(target_os = "linux")]
mod seccomp;
pub mod shim;
pub mod toolchain;
pub mod view;
pub mod walk;

use serde::{Deserialize, Serialize};

#[cfg(doc)]
use crate::ir::SandboxProfile;

pub use plan::{CgroupPlan, PlanContext, Rlimits, SCOPE_ABI, SandboxPlan, plan};
pub use probe::{KernelFeatures, probe};
pub(crate) use rlimit::{exceeded, refused};
pub use shim::{SHIM_ARG, run_shim};

/// Asks for a pipe of `bytes` (Linux's `F_SETPIPE_SZ`; elsewhere nothing). Best effort: the
/// system's limit for unprivileged processes may refuse it, and the pipe stays as it was.
pub fn enlarge_pipe(fd: std::os::fd::BorrowedFd<'_>, bytes: usize) {
    #[cfg(target_os = "linux")]
    {
        let bytes = i32::try_from(bytes).unwrap_or(i32::MAX);
        let _ = nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_SETPIPE_SZ(bytes));
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (fd, bytes);
}

/// A protection in force around a tool process.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Protection {
    /// The tool runs in its own session and process group.
    ProcessGroup,
    /// A per-execution shim is the child subreaper: orphaned descendants (daemons) are
    /// re-parented to it and killed with the tool.
    Subreaper,
    /// A fresh cgroup v2; `cgroup.kill` ends the whole tree.
    CgroupKill,
    /// A private mount namespace: the tool sees the view its profile describes (system
    /// folders, its toolchain, the workspace, a minimal `/dev`), not the host's file system.
    MountNamespace,
    /// A private PID namespace with a fresh `/proc`: the tool sees no other process (toolgate,
    /// the MCP client, other tools), nor their `/proc` entries.
    PidNamespace,
    /// A private, empty `/tmp` (a tmpfs of its own per execution).
    PrivateTmp,
    /// Every protected file and folder in the workspace (and the state folder) is masked by
    /// an empty read-only mount, hard links included, and the tool cannot remove the masks
    /// (no capabilities; the mount system calls refused under a file sandbox).
    ProtectedMasked,
    /// Every `.git` folder or file in the workspace is read-only.
    GitReadOnly,
    /// The cgroup `pids` controller caps the number of processes.
    ProcessLimit,
    /// rlimits: CPU time, address space, file size, open files.
    ResourceLimits,
    /// Landlock: reads and writes only beneath the profile's roots.
    Landlock,
    /// seccomp: no IPv4/IPv6 (or other non-Unix) sockets.
    NoNetwork,
    /// Landlock scope (ABI 6): the tool can signal only processes inside its own sandbox.
    SignalScope,
    /// Landlock scope (ABI 6): the tool cannot connect to abstract Unix sockets made outside
    /// its sandbox.
    AbstractSocketScope,
}

impl Protection {
    /// The name in results and traces.
    pub fn as_str(self) -> &'static str {
        match self {
            Protection::ProcessGroup => "process_group",
            Protection::Subreaper => "subreaper",
            Protection::CgroupKill => "cgroup_kill",
            Protection::MountNamespace => "mount_namespace",
            Protection::PidNamespace => "pid_namespace",
            Protection::PrivateTmp => "private_tmp",
            Protection::ProtectedMasked => "protected_masked",
            Protection::GitReadOnly => "git_read_only",
            Protection::ProcessLimit => "process_limit",
            Protection::ResourceLimits => "resource_limits",
            Protection::Landlock => "landlock",
            Protection::NoNetwork => "no_network",
            Protection::SignalScope => "signal_scope",
            Protection::AbstractSocketScope => "abstract_socket_scope",
        }
    }
}

// The plans of the built-in profiles, which the compiler's project resolution defines.
#[cfg(all(test, feature = "compiler"))]
mod tests;
