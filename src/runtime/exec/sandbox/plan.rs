//! [`plan`]: a profile, the tool's context and this kernel's features → what the shim puts in
//! force (a pure function, unit-tested in `tests.rs` against kernels with and without each
//! feature).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Protection;
use super::probe::{KernelFeatures, PidsController};
use super::view::{
    HOST_SECRETS, ProtectSpec, Root, SYSTEM_FOLDERS, TOOLCHAIN_SECRETS, ViewBase, ViewPlan,
    outermost, root_of,
};
use crate::ir::SandboxProfile;
use crate::ir::project::{SYSTEM_ROOT, TOOLCHAIN_ROOT};
use crate::policy::ProtectedSet;

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
    pub(super) fn is_empty(&self) -> bool {
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
/// workspace, the tool and the kernel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxPlan {
    /// The profile's name (`None` for a tool without `sandbox:`).
    pub profile: Option<String>,
    /// Landlock read-only roots, as the tool sees them (empty when Landlock is not applied).
    pub read_roots: Vec<PathBuf>,
    /// Landlock writable roots, as the tool sees them.
    pub write_roots: Vec<PathBuf>,
    /// Whether Landlock is applied.
    pub landlock: bool,
    /// Whether the no-network seccomp filter is applied.
    pub deny_network: bool,
    /// Whether the seccomp filter refuses the mount system calls (so the masks stay).
    pub deny_mount: bool,
    /// Whether Landlock keeps the tool's signals inside its sandbox.
    pub scope_signals: bool,
    /// Whether Landlock keeps the tool from abstract Unix sockets made outside its sandbox.
    pub scope_abstract_sockets: bool,
    /// The rlimits.
    pub rlimits: Rlimits,
    /// The cgroups.
    pub cgroup: CgroupPlan,
    /// What the tool sees of the file system (`None`: the host's, when the kernel has no
    /// mount namespaces and the profile is best effort).
    pub view: Option<ViewPlan>,
    /// Whether the tool runs in a PID namespace of its own.
    pub pid_namespace: bool,
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

    /// Whether the tool sees a host path (at the same path).
    pub fn shows(&self, path: &Path) -> bool {
        self.view.as_ref().is_none_or(|v| v.shows(path))
    }

    /// The trees of the host the tool may write, as it sees them: its writable binds (or `/`
    /// for a view of the host's writable root), the host's `/tmp` when the view has no
    /// private one; without a view, the Landlock writable roots (`/` without Landlock).
    /// `/dev` is the view's own and is not listed.
    pub fn writable_trees(&self) -> Vec<PathBuf> {
        match &self.view {
            Some(v) => {
                let mut t = v.write.clone();
                if v.base == ViewBase::HostWritable {
                    t.push(PathBuf::from("/"));
                }
                t
            }
            None if self.landlock => self
                .write_roots
                .iter()
                .filter(|r| !r.starts_with("/dev"))
                .cloned()
                .collect(),
            None => vec![PathBuf::from("/")],
        }
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

/// What a plan needs to know about the tool besides its profile.
#[derive(Clone, Copy, Debug)]
pub struct PlanContext<'a> {
    /// The workspace root (canonical).
    pub workspace: &'a Path,
    /// The state folder (masked wherever the view shows it).
    pub state_dir: Option<&'a Path>,
    /// The tool's toolchain roots (`{toolchain}`; see [`toolchain`](super::toolchain)).
    pub toolchains: &'a [PathBuf],
    /// The protected set (`None`: the default set).
    pub protected: Option<&'a ProtectedSet>,
    /// The loaded policy's files, seen read-only (and the trust store masked).
    pub policy: Option<&'a crate::policy::PolicyFiles>,
}

impl<'a> PlanContext<'a> {
    /// A context with only a workspace: no state folder, no toolchain, the default set.
    pub fn new(workspace: &'a Path) -> Self {
        PlanContext {
            workspace,
            state_dir: None,
            toolchains: &[],
            protected: None,
            policy: None,
        }
    }
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

/// A profile path with the `{system}` and `{toolchain}` roots expanded.
fn expand(raw: &str, ctx: &PlanContext<'_>) -> Vec<PathBuf> {
    match raw {
        SYSTEM_ROOT => SYSTEM_FOLDERS.iter().map(PathBuf::from).collect(),
        TOOLCHAIN_ROOT => ctx.toolchains.to_vec(),
        _ => vec![resolve_root(raw, ctx.workspace)],
    }
}

/// The view of a profile that restricts files (the workspace, the system, what it names).
fn confined_view(read: &[PathBuf], write: &[PathBuf], ctx: &PlanContext<'_>) -> ViewPlan {
    let mut base = ViewBase::Empty;
    let (mut read_binds, mut write_binds, mut tmp_writable) = (Vec::new(), Vec::new(), false);
    for r in read {
        match root_of(r) {
            Root::Host => base = ViewBase::HostReadOnly,
            Root::Bind(p) => read_binds.push(p),
            Root::Tmp | Root::Fixed => {}
        }
    }
    for w in write {
        match root_of(w) {
            Root::Tmp => tmp_writable = true,
            Root::Bind(p) => write_binds.push(p),
            Root::Host | Root::Fixed => {}
        }
    }
    let write_binds = outermost(write_binds);
    let mut read_binds = outermost(read_binds);
    read_binds.retain(|r| !write_binds.contains(r));
    let mut view = ViewPlan {
        base,
        read: read_binds,
        write: write_binds,
        private_tmp: Some(tmp_writable),
        tmp_size: None,
        fresh_proc: true,
        workspace: ctx.workspace.to_path_buf(),
        protect: ProtectSpec::default(),
        state_dir: None,
        hide: HOST_SECRETS.iter().map(PathBuf::from).collect(),
        git_read_only: false,
        policy_read_only: Vec::new(),
        user_namespace: false,
    };
    view.git_read_only = view.shows(ctx.workspace);
    for t in ctx.toolchains {
        view.hide
            .extend(TOOLCHAIN_SECRETS.iter().map(|n| t.join(n)));
    }
    view
}

/// The view of a profile that writes `/` (or of a tool without a profile): the host's root as
/// it is, with the protected files masked.
fn host_view(ctx: &PlanContext<'_>) -> ViewPlan {
    ViewPlan {
        base: ViewBase::HostWritable,
        read: Vec::new(),
        write: Vec::new(),
        private_tmp: None,
        tmp_size: None,
        fresh_proc: false,
        workspace: ctx.workspace.to_path_buf(),
        protect: ProtectSpec::default(),
        state_dir: None,
        hide: Vec::new(),
        git_read_only: false,
        policy_read_only: Vec::new(),
        user_namespace: false,
    }
}

/// Turns a profile into the plan for this tool and kernel (pure: no system calls).
///
/// Every command tool gets a mount namespace whose view masks the protected files. A profile
/// that restricts files (one that does not write `/`) also gets the view its roots describe,
/// a private `/tmp`, a PID namespace with a fresh `/proc`, `.git` read-only, Landlock on top
/// and the seccomp filter that refuses the mount system calls. A tool without a profile runs
/// like `none` (best effort).
pub fn plan(
    profile: Option<(&str, &SandboxProfile)>,
    ctx: &PlanContext<'_>,
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
    let best_effort = profile.is_none_or(|(_, p)| p.best_effort);
    let confined = profile.is_some_and(|(_, p)| !p.writes_everything());
    let read: Vec<PathBuf> = profile
        .map(|(_, p)| p.read.iter().flat_map(|r| expand(r, ctx)).collect())
        .unwrap_or_default();
    let write: Vec<PathBuf> = profile
        .map(|(_, p)| p.write.iter().flat_map(|r| expand(r, ctx)).collect())
        .unwrap_or_default();

    // The view: a mount namespace (with the PID namespace for a confined profile).
    let ns = kernel.namespaces.as_ref().filter(|n| !confined || n.pid);
    let view = match ns {
        Some(n) => {
            let mut v = if confined {
                confined_view(&read, &write, ctx)
            } else {
                host_view(ctx)
            };
            v.protect = ProtectSpec::of(ctx.protected.unwrap_or(&DEFAULT_SET));
            v.state_dir = ctx.state_dir.map(Path::to_path_buf);
            if let Some(policy) = ctx.policy {
                v.policy_read_only = policy.read_only_paths(ctx.workspace);
                v.hide.extend(policy.trust_dir().map(Path::to_path_buf));
            }
            v.user_namespace = n.user_namespace;
            v.tmp_size = profile.and_then(|(_, p)| p.limits.memory_bytes);
            protections.push(Protection::MountNamespace);
            if confined {
                protections.push(Protection::PidNamespace);
            }
            if v.private_tmp.is_some() {
                protections.push(Protection::PrivateTmp);
            }
            protections.push(Protection::ProtectedMasked);
            if v.git_read_only {
                protections.push(Protection::GitReadOnly);
            }
            Some(v)
        }
        None if confined => {
            missing.push(
                "mount and PID namespaces (the view, and the masks of protected files)".to_owned(),
            );
            None
        }
        None => {
            missing.push("a mount namespace (the masks of protected files)".to_owned());
            None
        }
    };
    let pid_namespace = view.is_some() && confined;

    // Landlock on top: in the view it allows reading everything the view shows and writing
    // its writable binds, the private /tmp and /dev; without a view, the profile's roots.
    let landlock = confined && kernel.landlock_abi.is_some();
    let (read_roots, write_roots) = match (&view, landlock) {
        (_, false) => (Vec::new(), Vec::new()),
        (Some(v), true) => {
            let mut w = v.write.clone();
            if v.private_tmp == Some(true) {
                w.push(PathBuf::from("/tmp"));
            }
            w.push(PathBuf::from("/dev"));
            (vec![PathBuf::from("/")], w)
        }
        (None, true) => (read.clone(), write.clone()),
    };
    if landlock {
        protections.push(Protection::Landlock);
    } else if confined {
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

    let wants_seccomp = profile.is_some_and(|(_, p)| !p.network);
    let deny_network = wants_seccomp && kernel.seccomp;
    if deny_network {
        protections.push(Protection::NoNetwork);
    } else if wants_seccomp {
        missing.push("seccomp (the no-network filter)".to_owned());
    }
    // The masks hold without it (the tool has no capabilities); the filter keeps a confined
    // tool away from the mount system calls altogether.
    let deny_mount = pid_namespace && kernel.seccomp;
    if pid_namespace && !kernel.seccomp && !wants_seccomp {
        missing.push("seccomp (the filter that refuses mount system calls)".to_owned());
    }
    // An abstract Unix socket is a way out to services on the host (a D-Bus, an X server)
    // that seccomp's family filter lets through, so a profile without network closes it too.
    let scope_abstract_sockets = wants_seccomp && scopes;
    if scope_abstract_sockets {
        protections.push(Protection::AbstractSocketScope);
    }

    let limits = profile.map(|(_, p)| p.limits.clone()).unwrap_or_default();
    let rlimits = Rlimits {
        cpu_seconds: limits.cpu_seconds,
        address_space: limits.memory_bytes,
        file_size: limits.file_size_bytes,
        open_files: limits.open_files,
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
    if let Some(max) = limits.processes {
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

    if let Some((name, _)) = profile
        && !missing.is_empty()
        && !best_effort
    {
        return Err(SandboxUnavailable {
            profile: name.to_owned(),
            missing,
        });
    }
    Ok(SandboxPlan {
        profile: profile.map(|(name, _)| name.to_owned()),
        read_roots,
        write_roots,
        landlock,
        deny_network,
        deny_mount,
        scope_signals,
        scope_abstract_sockets,
        rlimits,
        cgroup,
        view,
        pid_namespace,
        best_effort,
        protections,
        missing,
    })
}

/// The default protected set, compiled once (its globs are fixed, so it always compiles).
static DEFAULT_SET: std::sync::LazyLock<ProtectedSet> = std::sync::LazyLock::new(|| {
    ProtectedSet::new(&crate::ir::ProtectPolicy::default())
        .unwrap_or_else(|e| unreachable!("the default protected globs compile: {e}"))
});
