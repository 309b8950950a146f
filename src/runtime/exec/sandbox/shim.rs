//! The exec shim: `toolgate __exec-shim PLAN -- PROGRAM ARGS…`, dispatched by `main` before
//! any runtime starts (codex's arg0 pattern), one shim per tool process.
//!
//! The shim makes itself the child subreaper (so daemonizing grandchildren are re-parented to
//! it, not to init) with a parent-death signal, joins the per-execution cgroups the parent made,
//! builds the Landlock ruleset and the seccomp program, and forks the tool. In the child,
//! between fork and exec: a new session, a parent-death SIGKILL, the rlimits, Landlock, seccomp.
//!
//! Then it waits. SIGTERM (the runtime's timeout or cancel, or the parent's death) stops the
//! tool: SIGTERM to the whole tree, [`ShimPlan::grace_ms`] to exit, then `cgroup.kill` and a
//! SIGKILL sweep of every descendant found in /proc. When the tool exits by itself, what it
//! left running is killed the same way. Last, it writes a [`ShimReport`] to the file the
//! parent named and exits with the tool's code.
//!
//! The shim is single-threaded, so the child code between fork and exec may use anything that
//! is already built (no allocation happens there).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::Rlimits;

/// The hidden first argument that turns `toolgate` into the shim.
pub const SHIM_ARG: &str = "__exec-shim";

/// What the parent tells the shim (argv\[2\], JSON).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShimPlan {
    /// The parent's pid: if it is gone before the shim is set up, the shim does not start the
    /// tool.
    pub parent: u32,
    /// Landlock roots (applied when `landlock`).
    pub read_roots: Vec<PathBuf>,
    /// Writable Landlock roots.
    pub write_roots: Vec<PathBuf>,
    /// Whether Landlock is applied.
    pub landlock: bool,
    /// Whether the no-network seccomp filter is applied.
    pub deny_network: bool,
    /// rlimits.
    pub rlimits: Rlimits,
    /// The cgroup v2 leaf to join (and kill).
    pub cgroup_v2: Option<PathBuf>,
    /// The cgroup v1 pids leaf to join.
    pub cgroup_v1_pids: Option<PathBuf>,
    /// Whether a process cap is set on the leaf that holds `pids.max` (v1 if given, else v2),
    /// so that joining it is required.
    pub process_cap: bool,
    /// Whether a protection that cannot be applied is tolerated.
    pub best_effort: bool,
    /// Time between SIGTERM and SIGKILL, in milliseconds.
    pub grace_ms: u64,
    /// Where the report goes.
    pub report: PathBuf,
}

/// What the shim tells the parent when it is done.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShimReport {
    /// The tool's exit code.
    pub exit_code: Option<i32>,
    /// The signal that ended the tool.
    pub signal: Option<i32>,
    /// The tool could not be started (e.g. no such program).
    pub spawn_error: Option<String>,
    /// A protection the plan requires could not be applied; the tool did not start.
    pub sandbox_error: Option<String>,
    /// The tool was stopped on request (timeout, cancel, the parent's death).
    pub stopped: bool,
    /// The tree needed SIGKILL after the grace period.
    pub killed: bool,
    /// Landlock's enforcement (`fully enforced` / `partially enforced`).
    pub landlock: Option<String>,
    /// Whether the tool joined the v2 cgroup.
    pub cgroup_joined: bool,
    /// Whether the tool joined the cgroup that holds the process cap.
    pub process_cap_joined: bool,
    /// Descendants still running when the tool ended, killed by the shim.
    pub leftovers: u32,
}

impl ShimReport {
    /// Reads a report file (absent or unreadable: `None`).
    pub fn read(path: &std::path::Path) -> Option<ShimReport> {
        let bytes = std::fs::read(path).ok()?;
        serde_json::from_slice(&bytes).ok()
    }
}

/// The argv of the shim for a plan and a tool command line (after the shim program itself).
pub fn shim_args(plan: &ShimPlan, program: &str, args: &[String]) -> Vec<String> {
    let mut v = Vec::with_capacity(args.len() + 4);
    v.push(SHIM_ARG.to_owned());
    v.push(serde_json::to_string(plan).unwrap_or_default());
    v.push("--".to_owned());
    v.push(program.to_owned());
    v.extend(args.iter().cloned());
    v
}

/// Runs the shim with this process's arguments and exits with the tool's code. Call it first
/// thing in `main` when `argv[1]` is [`SHIM_ARG`].
pub fn run_shim() -> ! {
    // Lossy, never panicking: the parent only ever passes UTF-8.
    let args: Vec<String> = std::env::args_os()
        .skip(2)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let code = match parse(&args) {
        Ok((plan, program, tool_args)) => imp::run(&plan, program, tool_args),
        Err(e) => {
            eprintln!("toolgate exec shim: {e}");
            // 126 is the shell's "found but cannot run" code.
            126
        }
    };
    std::process::exit(code)
}

fn parse(args: &[String]) -> Result<(ShimPlan, &str, &[String]), String> {
    let [plan, sep, program, rest @ ..] = args else {
        return Err("usage: toolgate __exec-shim PLAN -- PROGRAM [ARGS…]".into());
    };
    if sep != "--" {
        return Err("expected `--` after the plan".into());
    }
    let plan = serde_json::from_str(plan).map_err(|e| format!("bad plan: {e}"))?;
    Ok((plan, program, rest))
}

#[cfg(target_os = "linux")]
#[path = "shim_linux.rs"]
mod imp;

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::{ShimPlan, ShimReport};

    /// Without Linux's subreaper, cgroups, Landlock and seccomp the plan never asks for them
    /// (the probe finds none); the shim only runs the tool and reports.
    pub(super) fn run(plan: &ShimPlan, program: &str, args: &[String]) -> i32 {
        let mut report = ShimReport::default();
        let code = match std::process::Command::new(program).args(args).status() {
            Ok(s) => {
                report.exit_code = s.code();
                s.code().unwrap_or(1)
            }
            Err(e) => {
                report.spawn_error = Some(format!("could not start `{program}`: {e}"));
                127
            }
        };
        let _ = std::fs::write(
            &plan.report,
            serde_json::to_vec(&report).unwrap_or_default(),
        );
        code
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_round_trip() {
        let plan = ShimPlan {
            parent: 1,
            read_roots: vec!["/".into()],
            write_roots: vec!["/tmp".into()],
            landlock: true,
            deny_network: true,
            rlimits: Rlimits::default(),
            cgroup_v2: None,
            cgroup_v1_pids: None,
            process_cap: false,
            best_effort: false,
            grace_ms: 500,
            report: "/tmp/r.json".into(),
        };
        let argv = shim_args(&plan, "echo", &["a; rm -rf /".into(), "--x".into()]);
        assert_eq!(argv[0], SHIM_ARG);
        let (p, prog, rest) = parse(&argv[1..]).unwrap();
        assert_eq!((p, prog, rest), (plan, "echo", &argv[4..]));
        assert!(parse(&["{}".into()]).is_err());
    }
}
