//! `toolgate sandbox`: what this kernel offers the sandbox, and what each sandbox profile of
//! the project exposes here — the view a process sees (readable and writable roots as seen
//! from inside, `/tmp`, `/dev`, `/proc`), the protected matches masked in this workspace, the
//! `.git` made read-only, network, limits — or why it would refuse to run.

use std::path::{Path, PathBuf};

use clap::Args;
use serde::Serialize;
use serde_json::json;

use crate::check;
use crate::ir::{ExecSpec, ResourceLimits};
use crate::runtime::exec::sandbox::toolchain::{self, TOOLCHAIN_VARIABLES};
use crate::runtime::exec::sandbox::view::{ViewBase, ViewPlan};
use crate::runtime::exec::sandbox::walk::{self, Found};
use crate::runtime::exec::sandbox::{self, PlanContext, SandboxPlan, probe};
use crate::spec::load::LoadOptions;

/// Arguments of `toolgate sandbox`.
#[derive(Debug, Args)]
pub struct SandboxArgs {
    /// The project file (default: ./toolgate.yaml if present).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The workspace the roots are resolved against (default: the project's).
    #[arg(long)]
    pub workspace: Option<PathBuf>,
    /// The state folder (default: toolgate.yaml's `state_dir`).
    #[arg(long)]
    pub state_dir: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: super::call::OutputFormat,
}

/// What a process under one profile sees here.
#[derive(Debug, Serialize)]
struct Exposure {
    /// Tools and MCP servers under the profile.
    used_by: Vec<String>,
    /// The view's base: `empty`, `host_read_only`, `host_writable` (absent: no view).
    #[serde(skip_serializing_if = "Option::is_none")]
    base: Option<ViewBase>,
    /// Folders readable (and not writable), as the process sees them (present on this host).
    readable: Vec<PathBuf>,
    /// Folders writable, as the process sees them.
    writable: Vec<PathBuf>,
    /// `/tmp`: `private, writable`, `private, read-only`, or `the host's`.
    tmp: String,
    /// `/dev`.
    dev: String,
    /// `/proc`.
    proc: String,
    /// Network.
    network: bool,
    /// Protected files and folders of this workspace masked (relative to it).
    masked: Vec<PathBuf>,
    /// Other paths masked (the state folder, host secrets, toolchain credentials) present here.
    hidden: Vec<PathBuf>,
    /// `.git` folders and files made read-only (relative to the workspace).
    git_read_only: Vec<PathBuf>,
    /// Limits.
    limits: ResourceLimits,
    /// Protections in force.
    protections: Vec<sandbox::Protection>,
    /// What the profile asked for and this kernel lacks (best effort).
    missing: Vec<String>,
}

/// Prints the probe and every profile's view.
pub fn run(a: SandboxArgs) -> miette::Result<u8> {
    let cwd = std::env::current_dir().map_err(|e| miette::miette!("{e}"))?;
    let checked = check::check_specs(&LoadOptions {
        paths: Vec::new(),
        config: a.config.clone(),
        cwd,
    })
    .map_err(|e| miette::miette!("{e}"))?;
    let root = checked.loaded.root.clone();
    let project = &checked.resolution.project;
    let workspace = a
        .workspace
        .clone()
        .unwrap_or_else(|| root.join(&project.workspace));
    let workspace = workspace.canonicalize().unwrap_or(workspace);
    let state_dir = match &a.state_dir {
        Some(s) => s.clone(),
        None => crate::ir::project::resolve_state_dir(&project.state_dir, &root)
            .map_err(|e| miette::miette!("{e}"))?,
    };
    let protected =
        crate::runtime::builder::protected_set(&project.protect, &workspace, &state_dir)
            .map_err(|e| miette::miette!("{e}"))?;
    // The toolchain a tool inheriting this process's PATH, HOME and toolchain variables gets.
    let env: Vec<(String, String)> = ["PATH", "HOME"]
        .iter()
        .chain(TOOLCHAIN_VARIABLES)
        .filter_map(|k| std::env::var(k).ok().map(|v| ((*k).to_owned(), v)))
        .collect();
    let toolchains = toolchain::roots(
        "",
        &env,
        &workspace,
        &toolchain::Guard {
            workspace: &workspace,
            state_dir: Some(&state_dir),
        },
    );
    let ctx = PlanContext {
        workspace: &workspace,
        state_dir: Some(&state_dir),
        toolchains: &toolchains,
        protected: Some(&protected),
        policy: None,
    };
    let found = walk::walk(&workspace, &protected);
    let kernel = probe();
    let mut users: Vec<(String, String)> = checked
        .resolution
        .tools
        .iter()
        .filter_map(|t| {
            let def = t.definition.as_ref()?;
            matches!(def.exec, ExecSpec::Command(_)).then(|| match &def.sandbox {
                Some(p) => (p.clone(), def.name.clone()),
                // A tool without a profile runs like `none`.
                None => ("none".to_owned(), format!("{} (no profile)", def.name)),
            })
        })
        .collect();
    users.extend(project.mcp_servers.iter().map(|(name, s)| {
        (
            s.sandbox.clone().unwrap_or_else(|| "none".to_owned()),
            format!("mcp:{name}"),
        )
    }));
    let plans: Vec<(&String, Result<Exposure, String>)> = project
        .sandbox_profiles
        .iter()
        .map(|(name, p)| {
            let used_by = users
                .iter()
                .filter(|(profile, _)| profile == name)
                .map(|(_, u)| u.clone())
                .collect();
            let e = sandbox::plan(Some((name, p)), &ctx, kernel)
                .map(|plan| exposure(&plan, p, &found, &workspace, used_by))
                .map_err(|e| e.to_string());
            (name, e)
        })
        .collect();
    let text = match a.format {
        super::call::OutputFormat::Json => {
            let profiles: serde_json::Map<_, _> = plans
                .iter()
                .map(|(name, e)| {
                    let v = match e {
                        Ok(x) => serde_json::to_value(x).unwrap_or_default(),
                        Err(e) => json!({"refuses": e}),
                    };
                    ((*name).clone(), v)
                })
                .collect();
            let v = json!({
                "kernel": kernel,
                "workspace": workspace,
                "state_dir": state_dir,
                "toolchain": toolchains,
                "profiles": profiles,
            });
            format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
        }
        super::call::OutputFormat::Text => text(kernel, &workspace, &toolchains, &plans),
    };
    super::print(&text)?;
    Ok(if plans.iter().any(|(_, p)| p.is_err()) {
        super::EXIT_FINDINGS
    } else {
        super::EXIT_OK
    })
}

/// The exposure of a plan in this workspace.
fn exposure(
    plan: &SandboxPlan,
    profile: &crate::ir::SandboxProfile,
    found: &Found,
    workspace: &Path,
    used_by: Vec<String>,
) -> Exposure {
    let present =
        |v: &[PathBuf]| -> Vec<PathBuf> { v.iter().filter(|p| p.exists()).cloned().collect() };
    let (base, readable, writable, tmp, dev, proc) = match &plan.view {
        Some(v) => {
            let mut readable = present(&v.read);
            let mut writable = present(&v.write);
            match v.base {
                ViewBase::HostReadOnly => readable.insert(0, PathBuf::from("/")),
                ViewBase::HostWritable => writable.insert(0, PathBuf::from("/")),
                ViewBase::Empty => {}
            }
            let size = v
                .tmp_size
                .map(|s| format!(" (tmpfs, at most {})", size(s)))
                .unwrap_or_default();
            let tmp = match v.private_tmp {
                Some(true) => format!("private, writable{size}"),
                Some(false) => "private, read-only".to_owned(),
                None => "the host's".to_owned(),
            };
            let dev =
                "minimal: null, zero, full, random, urandom, tty, fd, shm, pts (no block device)"
                    .to_owned();
            let proc = if v.fresh_proc {
                "fresh, for a PID namespace of its own (no other process is visible)".to_owned()
            } else {
                "the host's (every process is listed; other users' and privileged processes' entries stay closed)".to_owned()
            };
            (Some(v.base), readable, writable, tmp, dev, proc)
        }
        None => {
            let all = if plan.landlock {
                "the host's, behind Landlock"
            } else {
                "the host's"
            };
            (
                None,
                if plan.landlock {
                    plan.read_roots.clone()
                } else {
                    vec![PathBuf::from("/")]
                },
                if plan.landlock {
                    plan.write_roots.clone()
                } else {
                    vec![PathBuf::from("/")]
                },
                all.to_owned(),
                all.to_owned(),
                all.to_owned(),
            )
        }
    };
    let (masked, hidden, git) = match &plan.view {
        Some(v) if v.shows(workspace) => (
            found
                .files
                .iter()
                .chain(found.folders.iter())
                .cloned()
                .collect(),
            hidden(v),
            if v.git_read_only {
                found.git.clone()
            } else {
                Vec::new()
            },
        ),
        Some(v) => (Vec::new(), hidden(v), Vec::new()),
        None => (Vec::new(), Vec::new(), Vec::new()),
    };
    Exposure {
        used_by,
        base,
        readable,
        writable,
        tmp,
        dev,
        proc,
        network: !plan.deny_network && profile.network,
        masked,
        hidden,
        git_read_only: git,
        limits: profile.limits.clone(),
        protections: plan.protections.clone(),
        missing: plan.missing.clone(),
    }
}

/// The paths besides the workspace's a view masks that exist here.
fn hidden(v: &ViewPlan) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for h in v.hide.iter().chain(v.state_dir.iter()) {
        let name = h.file_name().and_then(|n| n.to_str()).unwrap_or("");
        match (name.split_once('*'), h.parent()) {
            (Some((head, tail)), Some(dir)) => {
                if let Ok(entries) = std::fs::read_dir(dir) {
                    let mut hits: Vec<PathBuf> = entries
                        .flatten()
                        .filter(|e| {
                            e.file_name().to_str().is_some_and(|n| {
                                n.len() >= head.len() + tail.len()
                                    && n.starts_with(head)
                                    && n.ends_with(tail)
                            })
                        })
                        .map(|e| e.path())
                        .collect();
                    hits.sort();
                    out.extend(hits);
                }
            }
            _ if h.exists() && v.shows(h) && !h.starts_with(&v.workspace) => out.push(h.clone()),
            _ => {}
        }
    }
    out
}

fn size(b: u64) -> String {
    const MIB: u64 = 1 << 20;
    const GIB: u64 = 1 << 30;
    match b {
        _ if b >= GIB && b.is_multiple_of(GIB) => format!("{} GiB", b / GIB),
        _ if b >= MIB && b.is_multiple_of(MIB) => format!("{} MiB", b / MIB),
        _ => format!("{b} bytes"),
    }
}

fn limits(l: &ResourceLimits) -> String {
    let mut parts = Vec::new();
    if let Some(c) = l.cpu_seconds {
        parts.push(format!("CPU {c} s"));
    }
    if let Some(m) = l.memory_bytes {
        parts.push(format!("memory {}", size(m)));
    }
    if let Some(f) = l.file_size_bytes {
        parts.push(format!("files up to {}", size(f)));
    }
    if let Some(n) = l.open_files {
        parts.push(format!("{n} open files"));
    }
    if let Some(n) = l.processes {
        parts.push(format!("{n} processes"));
    }
    if parts.is_empty() {
        "none".to_owned()
    } else {
        parts.join(", ")
    }
}

fn list(paths: &[PathBuf]) -> String {
    if paths.is_empty() {
        return "none".to_owned();
    }
    paths
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn text(
    kernel: &sandbox::KernelFeatures,
    workspace: &Path,
    toolchains: &[PathBuf],
    plans: &[(&String, Result<Exposure, String>)],
) -> String {
    let mut t = String::from("kernel:\n");
    let abi = kernel
        .landlock_abi
        .map_or("not available".to_owned(), |v| format!("ABI {v}"));
    t.push_str(&format!("  landlock: {abi}\n"));
    t.push_str(&format!("  seccomp filters: {}\n", yes(kernel.seccomp)));
    match &kernel.cgroup {
        Some(c) => t.push_str(&format!(
            "  cgroup v2: {} (cgroup.kill: {}; controllers for leaves: {})\n",
            c.v2_parent.display(),
            yes(c.kill),
            if c.controllers.is_empty() {
                "none".to_owned()
            } else {
                c.controllers.join(" ")
            }
        )),
        None => t.push_str("  cgroup v2: not writable\n"),
    }
    let pids = match &kernel.pids {
        Some(sandbox::probe::PidsController::V2) => "cgroup v2".to_owned(),
        Some(sandbox::probe::PidsController::V1(p)) => format!("cgroup v1 at {}", p.display()),
        None => "not available".to_owned(),
    };
    t.push_str(&format!("  process cap (pids controller): {pids}\n"));
    let ns = match &kernel.namespaces {
        Some(n) => format!(
            "mount: yes; PID: {}; {}",
            yes(n.pid),
            if n.user_namespace {
                "in a user namespace (toolgate may not mount)"
            } else {
                "without a user namespace (toolgate may mount)"
            }
        ),
        None => "not available (no view, no masks)".to_owned(),
    };
    t.push_str(&format!("  namespaces: {ns}\n"));
    t.push_str(&format!(
        "workspace: {}\ntoolchain (for a tool that inherits PATH and HOME): {}\nprofiles:\n",
        workspace.display(),
        list(toolchains)
    ));
    for (name, plan) in plans {
        let e = match plan {
            Ok(e) => e,
            Err(e) => {
                t.push_str(&format!("  {name}: REFUSES TO RUN: {e}\n"));
                continue;
            }
        };
        let users = if e.used_by.is_empty() {
            String::new()
        } else {
            format!(" (used by {})", e.used_by.join(", "))
        };
        t.push_str(&format!("  {name}{users}:\n"));
        let base = match e.base {
            Some(ViewBase::Empty) => "an empty root holding only what is listed",
            Some(ViewBase::HostReadOnly) => "the host's file system, read-only",
            Some(ViewBase::HostWritable) => "the host's file system, writable as the host allows",
            None => "none (no mount namespace)",
        };
        t.push_str(&format!("    view: {base}\n"));
        t.push_str(&format!("    readable: {}\n", list(&e.readable)));
        t.push_str(&format!("    writable: {}\n", list(&e.writable)));
        t.push_str(&format!(
            "    /tmp: {}\n    /dev: {}\n    /proc: {}\n",
            e.tmp, e.dev, e.proc
        ));
        t.push_str(&format!("    network: {}\n", yes(e.network)));
        t.push_str(&format!(
            "    masked in this workspace: {} ({})\n",
            e.masked.len(),
            list(&e.masked)
        ));
        if !e.hidden.is_empty() {
            t.push_str(&format!("    masked besides: {}\n", list(&e.hidden)));
        }
        t.push_str(&format!("    .git read-only: {}\n", list(&e.git_read_only)));
        t.push_str(&format!("    limits: {}\n", limits(&e.limits)));
        let p: Vec<&str> = e.protections.iter().map(|x| x.as_str()).collect();
        t.push_str(&format!("    protections: {}\n", p.join(", ")));
        if !e.missing.is_empty() {
            t.push_str(&format!(
                "    best effort, this kernel lacks: {}\n",
                e.missing.join(", ")
            ));
        }
    }
    t
}

fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}
