//! The exec shim: `toolgate __exec-shim PLAN -- PROGRAM ARGS…`, dispatched by `main` before
//! any runtime starts (codex's arg0 pattern), one shim per tool process.
//!
//! The shim makes itself the child subreaper (so daemonizing grandchildren are re-parented to
//! it, not to init) with a parent-death signal, opens the per-execution cgroups the parent made,
//! walks the workspace for the view's masks, builds the Landlock ruleset and the seccomp
//! program, and forks the tool — under a profile that restricts files, through a small init
//! that is PID 1 of a new PID namespace and builds the view first ([`init`](super::init)). In
//! the child, between fork and exec: a new session, a parent-death SIGKILL, the cgroups, the
//! view (when no init built it), the rlimits, no capabilities, Landlock, seccomp.
//!
//! Then it waits. SIGTERM (the runtime's timeout or cancel, or the parent's death) stops the
//! tool: SIGTERM to the whole tree, [`ShimPlan::grace_ms`] to exit, then `cgroup.kill` and a
//! SIGKILL sweep of every descendant found in /proc. When the tool exits by itself, what it
//! left running is killed the same way. Last, it sends a [`ShimReport`] — the tool's end and
//! the protections it actually put in force — through the pipe the parent gave it (see
//! [`report`](super::report)) and exits with the tool's code.
//!
//! The shim is single-threaded, so the child code between fork and exec may use anything that
//! is already built (no allocation happens there).

use std::os::fd::RawFd;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::report::ReportSender;
use super::view::ViewPlan;
use super::{Protection, Rlimits};

/// The hidden first argument that turns `toolgate` into the shim.
pub const SHIM_ARG: &str = "__exec-shim";

/// What the parent tells the shim (argv\[2\], JSON). Anything in it is readable by the tool
/// (`/proc/$PPID/cmdline`), so it names nothing the tool could use.
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
    /// Whether Landlock keeps the tool's signals inside its sandbox.
    pub scope_signals: bool,
    /// Whether Landlock keeps the tool from abstract Unix sockets made outside its sandbox.
    pub scope_abstract_sockets: bool,
    /// Whether the no-network seccomp filter is applied.
    pub deny_network: bool,
    /// Whether the seccomp filter refuses the mount system calls.
    #[serde(default)]
    pub deny_mount: bool,
    /// The view to build in a private mount namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view: Option<ViewPlan>,
    /// Whether the tool runs in a PID namespace of its own, under an init.
    #[serde(default)]
    pub pid_namespace: bool,
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
    /// The inherited descriptor of the report pipe's write end.
    pub report_fd: RawFd,
    /// The inherited socket the tool's setup sends its namespaces to the runtime through
    /// ([`keep`](super::keep)), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_fd: Option<RawFd>,
}

/// What the shim tells the parent when it is done.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
    /// Landlock's enforcement of the file system rules (`fully enforced` / `partially
    /// enforced`).
    pub landlock: Option<String>,
    /// The protections the shim put in force around the tool.
    pub applied: Vec<Protection>,
    /// Descendants still running when the tool ended, killed by the shim.
    pub leftovers: u32,
    /// Masks the view put over protected files and folders.
    #[serde(default)]
    pub masked: u32,
}

impl ShimReport {
    /// The longest message a report carries (bytes), so that a report stays well inside a
    /// pipe's buffer (usually in one atomic write).
    pub const MAX_MESSAGE: usize = 512;

    /// Whether the shim put a protection in force.
    pub fn has(&self, p: Protection) -> bool {
        self.applied.contains(&p)
    }

    /// The protections of a plan that the shim reports in force, in the plan's order: what a
    /// result lists. A planned protection the shim did not apply (best effort) is left out,
    /// and so is anything the report claims beyond the plan.
    pub fn in_force(&self, planned: &[Protection]) -> Vec<Protection> {
        planned.iter().copied().filter(|p| self.has(*p)).collect()
    }

    /// The report with its messages cut to [`ShimReport::MAX_MESSAGE`].
    pub(crate) fn bounded(&self) -> ShimReport {
        let cut = |m: &Option<String>| {
            m.as_ref().map(|m| {
                if m.len() <= Self::MAX_MESSAGE {
                    return m.clone();
                }
                let mut end = Self::MAX_MESSAGE;
                while !m.is_char_boundary(end) {
                    end -= 1;
                }
                format!("{}…", &m[..end])
            })
        };
        ShimReport {
            spawn_error: cut(&self.spawn_error),
            sandbox_error: cut(&self.sandbox_error),
            ..self.clone()
        }
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
/// thing in `main` when `argv[1]` is [`SHIM_ARG`], before anything starts a thread or opens a
/// file: the shim forks, which is sound only single-threaded (on Linux it checks, and refuses
/// to run the tool otherwise), and it takes ownership of the report pipe's descriptor.
pub fn run_shim() -> ! {
    // Lossy, never panicking: the parent only ever passes UTF-8.
    let args: Vec<String> = std::env::args_os()
        .skip(2)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    #[cfg(target_os = "linux")]
    if args.first().map(String::as_str) == Some(super::fork_server::FORK_SERVER_ARG) {
        super::fork_server_loop::serve(&args[1..]);
    }
    let code = match parse(&args) {
        Ok((plan, program, tool_args)) => run_plan(&plan, program, tool_args),
        Err(e) => {
            eprintln!("toolgate exec shim: {e}");
            // 126 is the shell's "found but cannot run" code.
            126
        }
    };
    std::process::exit(code)
}

/// Runs one tool under `plan` and sends the report: the shim's work, in a shim started for
/// the call or forked by the fork server. Returns the shim's exit code.
pub(super) fn run_plan(plan: &ShimPlan, program: &str, args: &[String]) -> i32 {
    // First, before anything forks: the report pipe becomes the shim's alone. Without it
    // the parent could not learn what ran, so nothing does.
    match take_report_pipe(plan.report_fd) {
        Some(sender) => {
            let (code, report) = imp::run(plan, program, args);
            sender.send(&report);
            code
        }
        None => {
            eprintln!(
                "toolgate exec shim: no report pipe at fd {}",
                plan.report_fd
            );
            126
        }
    }
}

/// Reports that the tool could not be started (a shim the fork server forked that could not
/// enter the working folder, as the start of a shim for the call would fail); returns the
/// shim's exit code.
#[cfg(target_os = "linux")]
pub(super) fn report_spawn_error(report_fd: std::os::fd::RawFd, message: String) -> i32 {
    if let Some(sender) = take_report_pipe(report_fd) {
        sender.send(&ShimReport {
            spawn_error: Some(message),
            ..ShimReport::default()
        });
    }
    127
}

/// The report pipe the parent passed at `fd`.
#[allow(unsafe_code)]
fn take_report_pipe(fd: std::os::fd::RawFd) -> Option<ReportSender> {
    // SAFETY: `run_shim` runs first thing in `main` (its contract), before this process opened
    // anything of its own; the parent passed this number for the shim alone, and nothing else
    // here refers to it. In a shim the fork server forked, the number is a descriptor it
    // received for this call and released to the shim (`into_raw_fd`): nothing else owns it.
    unsafe { ReportSender::take(fd) }
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
pub(super) mod imp;

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::{Protection, ShimPlan, ShimReport};

    /// Without Linux's subreaper, cgroups, Landlock and seccomp the plan never asks for them
    /// (the probe finds none); the shim only runs the tool, in the process group the parent
    /// made for the shim, and reports.
    pub(super) fn run(_plan: &ShimPlan, program: &str, args: &[String]) -> (i32, ShimReport) {
        let mut report = ShimReport::default();
        let code = match std::process::Command::new(program).args(args).status() {
            Ok(s) => {
                report.exit_code = s.code();
                report.applied = vec![Protection::ProcessGroup];
                s.code().unwrap_or(1)
            }
            Err(e) => {
                report.spawn_error = Some(format!("could not start `{program}`: {e}"));
                127
            }
        };
        (code, report)
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
            scope_signals: true,
            scope_abstract_sockets: true,
            deny_network: true,
            deny_mount: true,
            view: None,
            pid_namespace: true,
            rlimits: Rlimits::default(),
            cgroup_v2: None,
            cgroup_v1_pids: None,
            process_cap: false,
            best_effort: false,
            grace_ms: 500,
            report_fd: 7,
            keep_fd: Some(8),
        };
        let argv = shim_args(&plan, "echo", &["a; rm -rf /".into(), "--x".into()]);
        assert_eq!(argv[0], SHIM_ARG);
        let (p, prog, rest) = parse(&argv[1..]).unwrap();
        assert_eq!((p, prog, rest), (plan, "echo", &argv[4..]));
        assert!(parse(&["{}".into()]).is_err());
    }

    #[test]
    fn a_result_lists_what_the_shim_applied_of_the_plan() {
        use Protection::*;
        let planned = [
            ProcessGroup,
            Subreaper,
            CgroupKill,
            Landlock,
            SignalScope,
            NoNetwork,
            AbstractSocketScope,
            ResourceLimits,
            ProcessLimit,
        ];
        // Best effort: seccomp and the rlimits failed, the rest held.
        let report = ShimReport {
            applied: vec![
                ProcessGroup,
                Subreaper,
                Landlock,
                SignalScope,
                AbstractSocketScope,
                CgroupKill,
                ProcessLimit,
            ],
            ..ShimReport::default()
        };
        assert_eq!(
            report.in_force(&planned),
            vec![
                ProcessGroup,
                Subreaper,
                CgroupKill,
                Landlock,
                SignalScope,
                AbstractSocketScope,
                ProcessLimit
            ]
        );
        // Nothing beyond the plan, whatever the report says.
        assert_eq!(
            report.in_force(&[ProcessGroup, NoNetwork]),
            vec![ProcessGroup]
        );
        assert_eq!(ShimReport::default().in_force(&planned), vec![]);
    }

    #[test]
    fn long_messages_are_cut_to_fit_one_pipe_write() {
        let report = ShimReport {
            spawn_error: Some("é".repeat(5000)),
            sandbox_error: Some("short".into()),
            ..ShimReport::default()
        };
        let b = report.bounded();
        let cut = b.spawn_error.unwrap();
        assert!(cut.ends_with('…') && cut.len() <= ShimReport::MAX_MESSAGE + '…'.len_utf8());
        assert_eq!(b.sandbox_error.as_deref(), Some("short"));
        // Worst case: every byte a control character that JSON escapes in six.
        let sized = ShimReport {
            spawn_error: Some("\u{1}".repeat(5000)),
            sandbox_error: Some("\u{1}".repeat(5000)),
            applied: vec![Protection::ProcessGroup; 9],
            landlock: Some("partially enforced".into()),
            ..report.clone()
        };
        assert!(
            serde_json::to_vec(&sized.bounded()).unwrap().len() <= super::super::report::MAX_REPORT
        );
    }
}
