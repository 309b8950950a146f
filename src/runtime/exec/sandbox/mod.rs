//! The sandbox of process tools: what a profile asks for, what the kernel offers, and the
//! per-execution shim that puts it in force.
//!
//! Three steps, each its own type:
//!
//! 1. [`probe`] reads what this kernel offers once per process ([`KernelFeatures`]: the Landlock
//!    ABI, seccomp, a writable cgroup v2 hierarchy and its controllers, a v1 `pids` hierarchy).
//! 2. [`plan`] turns a [`SandboxProfile`] of toolgate.yaml into a [`SandboxPlan`] — a pure,
//!    unit-tested transform. A protection the profile needs and the kernel lacks makes the plan
//!    fail closed ([`SandboxUnavailable`]) unless the profile says `best_effort: true`; then it
//!    is listed in [`SandboxPlan::missing`]. Every plan lists the [`Protection`]s it puts in
//!    force, and every result carries them.
//! 3. [`shim`] is toolgate re-executed per tool process (`toolgate __exec-shim PLAN -- ARGV`):
//!    subreaper, parent-death signal, the cgroup, rlimits, Landlock, seccomp, then the tool.
//!    It reports what it put in force through a pipe only it holds ([`report`]).
//!    [`cgroup`] creates and removes the per-execution cgroups on the parent's side.
//!
//! `#[cfg(target_os = "linux")]` appears only in this folder; elsewhere the probe finds
//! nothing, so every profile that needs a protection fails closed.

pub mod cgroup;
#[cfg(target_os = "linux")]
mod child;
#[cfg(target_os = "linux")]
mod landlock;
pub mod probe;
pub mod report;
mod rlimit;
#[cfg(target_os = "linux")]
mod seccomp;
pub mod shim;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::ir::SandboxProfile;

pub use probe::{CgroupSupport, KernelFeatures, PidsController, probe};
pub(crate) use rlimit::{exceeded, refused};
pub use shim::{SHIM_ARG, ShimReport, run_shim};

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
            Protection::ProcessLimit => "process_limit",
            Protection::ResourceLimits => "resource_limits",
            Protection::Landlock => "landlock",
            Protection::NoNetwork => "no_network",
            Protection::SignalScope => "signal_scope",
            Protection::AbstractSocketScope => "abstract_socket_scope",
        }
    }
}

/// The rlimits a plan sets (`None`: left as inherited).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rlimits {
    /// RLIMIT_CPU, seconds (SIGXCPU when exceeded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_seconds: Option<u64>,
    /// RLIMIT_AS, bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_space: Option<u64>,
    /// RLIMIT_FSIZE, bytes (SIGXFSZ when exceeded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_size: Option<u64>,
    /// RLIMIT_NOFILE.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_files: Option<u64>,
}

impl Rlimits {
    fn is_empty(&self) -> bool {
        *self == Rlimits::default()
    }
}

/// Where the per-execution cgroups go (decided by the probe, created per execution).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CgroupPlan {
    /// The cgroup v2 folder under which a fresh leaf is made (kill, and pids when delegated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v2_parent: Option<PathBuf>,
    /// The cgroup v1 `pids` folder under which a leaf is made, when v2 has no pids controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub v1_pids_parent: Option<PathBuf>,
    /// The process cap (`pids.max`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pids_max: Option<u64>,
}

/// What the shim puts in force around one tool process: the profile resolved against the
/// workspace and the kernel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxPlan {
    /// The profile's name (`None` for a tool without `sandbox:`).
    pub profile: Option<String>,
    /// Landlock read-only roots (empty when Landlock is not applied).
    pub read_roots: Vec<PathBuf>,
    /// Landlock writable roots.
    pub write_roots: Vec<PathBuf>,
    /// Whether Landlock is applied.
    pub landlock: bool,
    /// Whether the no-network seccomp filter is applied.
    pub deny_network: bool,
    /// Whether Landlock keeps the tool's signals inside its sandbox.
    pub scope_signals: bool,
    /// Whether Landlock keeps the tool from abstract Unix sockets made outside its sandbox.
    pub scope_abstract_sockets: bool,
    /// The rlimits.
    pub rlimits: Rlimits,
    /// The cgroups.
    pub cgroup: CgroupPlan,
    /// Whether a protection that cannot be applied at exec time is tolerated.
    pub best_effort: bool,
    /// The protections in force.
    pub protections: Vec<Protection>,
    /// What the profile asked for and the kernel does not offer (only with `best_effort`).
    pub missing: Vec<String>,
}

impl SandboxPlan {
    /// Whether a protection is in force.
    pub fn has(&self, p: Protection) -> bool {
        self.protections.contains(&p)
    }
}

/// A profile that cannot be put in force here, and does not accept less.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the sandbox profile `{profile}` needs {} which this system does not offer; refusing to run unsandboxed (set `best_effort: true` on the profile to run with what is available)",
    .missing.join(", ")
)]
pub struct SandboxUnavailable {
    /// The profile.
    pub profile: String,
    /// The missing features.
    pub missing: Vec<String>,
}

/// The first Landlock ABI with scopes (signals, abstract Unix sockets).
pub const SCOPE_ABI: u32 = 6;

/// Whether a list of roots covers the whole file system (Landlock would restrict nothing).
fn is_everything(roots: &[PathBuf]) -> bool {
    roots.iter().any(|r| r == Path::new("/"))
}

/// Resolves a profile path: `{workspace}` is the workspace root; relative paths are beneath it.
pub fn resolve_root(raw: &str, workspace: &Path) -> PathBuf {
    let ws = workspace.to_string_lossy();
    let text = raw.replace("{workspace}", &ws);
    let p = PathBuf::from(text);
    if p.is_absolute() {
        p
    } else {
        workspace.join(p)
    }
}

/// Turns a profile into the plan for this workspace and kernel (pure: no system calls).
pub fn plan(
    profile: Option<(&str, &SandboxProfile)>,
    workspace: &Path,
    kernel: &KernelFeatures,
) -> Result<SandboxPlan, SandboxUnavailable> {
    let mut protections = Vec::new();
    let mut missing = Vec::new();
    // Containment is not optional: the shim is the subreaper on Linux, and a writable cgroup v2
    // adds cgroup.kill. Neither is a profile setting, so neither fails a profile.
    protections.push(Protection::ProcessGroup);
    if kernel.subreaper {
        protections.push(Protection::Subreaper);
    }
    let v2_parent = kernel
        .cgroup
        .as_ref()
        .filter(|c| c.kill)
        .map(|c| c.v2_parent.clone());
    if v2_parent.is_some() {
        protections.push(Protection::CgroupKill);
    }
    let Some((name, profile)) = profile else {
        return Ok(SandboxPlan {
            profile: None,
            read_roots: Vec::new(),
            write_roots: Vec::new(),
            landlock: false,
            deny_network: false,
            scope_signals: false,
            scope_abstract_sockets: false,
            rlimits: Rlimits::default(),
            cgroup: CgroupPlan {
                v2_parent,
                v1_pids_parent: None,
                pids_max: None,
            },
            best_effort: true,
            protections,
            missing,
        });
    };

    let read_roots: Vec<PathBuf> = profile
        .read
        .iter()
        .map(|r| resolve_root(r, workspace))
        .collect();
    let write_roots: Vec<PathBuf> = profile
        .write
        .iter()
        .map(|r| resolve_root(r, workspace))
        .collect();
    // Writable roots are readable too, so `/` among them leaves Landlock nothing to restrict.
    let wants_landlock = !is_everything(&write_roots);
    let landlock = wants_landlock && kernel.landlock_abi.is_some();
    if landlock {
        protections.push(Protection::Landlock);
    } else if wants_landlock {
        missing.push("Landlock (read-only and writable roots)".to_owned());
    }

    // Landlock's scopes (ABI 6, Linux 6.12) come with the rest of the sandbox where the kernel
    // has them. Like the file access rights of a newer ABI, they are not a profile setting: an
    // older kernel runs the profile without them (they are then absent from the result's list)
    // rather than refusing it.
    let scopes = kernel.landlock_abi.is_some_and(|abi| abi >= SCOPE_ABI);
    let scope_signals = landlock && scopes;
    if scope_signals {
        protections.push(Protection::SignalScope);
    }

    let wants_seccomp = !profile.network;
    let deny_network = wants_seccomp && kernel.seccomp;
    if deny_network {
        protections.push(Protection::NoNetwork);
    } else if wants_seccomp {
        missing.push("seccomp (the no-network filter)".to_owned());
    }
    // An abstract Unix socket is a way out to services on the host (a D-Bus, an X server)
    // that seccomp's family filter lets through, so a profile without network closes it too.
    let scope_abstract_sockets = wants_seccomp && scopes;
    if scope_abstract_sockets {
        protections.push(Protection::AbstractSocketScope);
    }

    let l = &profile.limits;
    let rlimits = Rlimits {
        cpu_seconds: l.cpu_seconds,
        address_space: l.memory_bytes,
        file_size: l.file_size_bytes,
        open_files: l.open_files,
    };
    if !rlimits.is_empty() {
        protections.push(Protection::ResourceLimits);
    }

    // RLIMIT_NPROC counts per user and does not bind root, so the process cap needs the cgroup
    // pids controller: delegated on v2, else a v1 pids hierarchy.
    let mut cgroup = CgroupPlan {
        v2_parent,
        v1_pids_parent: None,
        pids_max: None,
    };
    if let Some(max) = l.processes {
        match (&kernel.pids, &cgroup.v2_parent) {
            (Some(PidsController::V2), Some(_)) => {
                cgroup.pids_max = Some(max);
                protections.push(Protection::ProcessLimit);
            }
            (Some(PidsController::V1(parent)), _) => {
                cgroup.v1_pids_parent = Some(parent.clone());
                cgroup.pids_max = Some(max);
                protections.push(Protection::ProcessLimit);
            }
            (Some(PidsController::V2), None) | (None, _) => {
                missing.push("the cgroup pids controller (the process cap)".to_owned());
            }
        }
    }

    if !missing.is_empty() && !profile.best_effort {
        return Err(SandboxUnavailable {
            profile: name.to_owned(),
            missing,
        });
    }
    Ok(SandboxPlan {
        profile: Some(name.to_owned()),
        read_roots: if landlock { read_roots } else { Vec::new() },
        write_roots: if landlock { write_roots } else { Vec::new() },
        landlock,
        deny_network,
        scope_signals,
        scope_abstract_sockets,
        rlimits,
        cgroup,
        best_effort: profile.best_effort,
        protections,
        missing,
    })
}

#[cfg(test)]
mod tests;
