//! The init of a tool's PID namespace: the shim forks it as PID 1 of a new namespace. It
//! builds the view (a private mount namespace, see [`mounts`]), the Landlock ruleset for the
//! view's paths, and starts the tool as PID 2 under the same setup as any tool
//! ([`ChildSetup`]); then it only reaps, like tini: orphans are re-parented to it.
//!
//! Stopping needs nothing from it: the shim sends TERM to every process of the tree (the init
//! itself, as PID 1 without a handler, ignores it), and after the grace SIGKILL, which kills
//! the init and with it, by the kernel's rule, every process left in the namespace. When the
//! tool ends by itself, the init counts what is still running, reports the tool's end to the
//! shim ([`Line::Ended`]) and exits — and the kernel kills the rest.

use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;

use nix::errno::Errno;
use nix::sched::{CloneFlags, unshare};
use nix::sys::prctl;
use nix::sys::signal::Signal;
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{Pid, getpid, pipe2};
use seccompiler::BpfProgram;

use super::Rlimits;
use super::child::{ChildSetup, Layers, Line, Step, ViewDone, receive, send};
use super::landlock::{self, Restrictions};
use super::mounts::{self, Prepared};

/// Landlock's restrictions with their roots owned (they cross the init's fork).
#[derive(Clone, Debug, Default)]
pub(super) struct Restricted {
    /// The read-only and the writable roots (`None`: file access is not restricted).
    pub(super) roots: Option<(Vec<PathBuf>, Vec<PathBuf>)>,
    /// Signals only to processes inside the sandbox.
    pub(super) signals: bool,
    /// Connections only to abstract Unix sockets made inside the sandbox.
    pub(super) abstract_sockets: bool,
}

impl Restricted {
    /// Whether there is anything to restrict.
    pub(super) fn any(&self) -> bool {
        self.borrowed().any()
    }

    /// As the ruleset builder takes it.
    pub(super) fn borrowed(&self) -> Restrictions<'_> {
        Restrictions {
            roots: self.roots.as_ref().map(|(r, w)| (&r[..], &w[..])),
            signals: self.signals,
            abstract_sockets: self.abstract_sockets,
        }
    }
}

/// Everything the init needs, built by the shim before the fork.
pub(super) struct InitSetup {
    /// The view.
    pub(super) prepared: Prepared,
    /// The tool's working folder (the same path in the view).
    pub(super) cwd: PathBuf,
    /// The status pipe to the shim.
    pub(super) status: OwnedFd,
    /// The tool's program and arguments.
    pub(super) program: String,
    /// The arguments.
    pub(super) args: Vec<String>,
    /// Landlock (its roots are paths of the view).
    pub(super) restricted: Restricted,
    /// The seccomp program, and whether it refuses the network and the mounts.
    pub(super) filter: Option<(BpfProgram, bool, bool)>,
    /// The rlimits.
    pub(super) rlimits: Rlimits,
    /// Whether a protection that cannot be applied is tolerated.
    pub(super) best_effort: bool,
    /// `cgroup.procs` of the v2 leaf.
    pub(super) cgroup_v2: Option<OwnedFd>,
    /// `cgroup.procs` of the v1 pids leaf.
    pub(super) cgroup_v1_pids: Option<OwnedFd>,
    /// Whether joining the process-cap cgroup is required.
    pub(super) process_cap: bool,
    /// The highest capability number.
    pub(super) last_cap: u32,
    /// The socket the namespaces go to the runtime through ([`super::keep`]).
    pub(super) keep: Option<OwnedFd>,
}

/// Runs the init and exits (never returns).
pub(super) fn run(setup: InitSetup) -> ! {
    // The init dies with the shim, and the namespace with it. (If the shim died before this,
    // the first write to the status pipe fails and the init gives up.)
    let status = match setup.status.try_clone() {
        Ok(s) => s,
        Err(_) => std::process::exit(1),
    };
    // Without it an init (and its namespace) could outlive a killed shim: refuse to go on.
    let line = match prctl::set_pdeathsig(Signal::SIGKILL) {
        Ok(()) => supervise(setup),
        Err(e) => failed(Step::ParentDeathSignal, e),
    };
    if send(&status, &line).is_err() {
        // Nobody is listening: everything in the namespace goes with us.
        let _ = nix::sys::signal::kill(Pid::from_raw(-1), Signal::SIGKILL);
    }
    std::process::exit(0)
}

fn failed(step: Step, e: impl std::fmt::Display) -> Line {
    Line::Failed {
        step,
        message: e.to_string(),
    }
}

/// Builds the view, starts the tool, reports it is ready, and waits for it; returns the last
/// line for the shim.
fn supervise(mut s: InitSetup) -> Line {
    if let Err(e) = unshare(CloneFlags::CLONE_NEWNS | CloneFlags::CLONE_NEWIPC) {
        return failed(Step::View, format!("unshare: {e}"));
    }
    if let Some(k) = s.keep.take() {
        super::keep::send(&k, &["mnt", "ipc"]);
    }
    let built = match mounts::enter(&s.prepared, &s.cwd) {
        Ok(b) => b,
        Err(e) => return failed(Step::View, e),
    };
    let ruleset = if s.restricted.any() {
        let r = s.restricted.borrowed();
        match landlock::ruleset(&r) {
            Ok(rs) => Some((rs, Layers::of(&r))),
            Err(_) if s.best_effort => None,
            Err(e) => return failed(Step::Landlock, format!("Landlock ruleset: {e}")),
        }
    } else {
        None
    };
    let (tool_read, tool_write) = match pipe2(nix::fcntl::OFlag::O_CLOEXEC) {
        Ok(p) => p,
        Err(e) => return failed(Step::Init, format!("could not make a pipe: {e}")),
    };
    let spawned = {
        let mut child = ChildSetup {
            parent: getpid(),
            status: tool_write,
            view: None,
            ruleset,
            filter: s.filter.take(),
            rlimits: s.rlimits.clone(),
            best_effort: s.best_effort,
            cgroup_v2: s.cgroup_v2.take(),
            cgroup_v1_pids: s.cgroup_v1_pids.take(),
            process_cap: s.process_cap,
            drop_caps: Some(s.last_cap),
            keep: None,
        };
        let mut cmd = Command::new(&s.program);
        cmd.args(&s.args);
        // SAFETY: the init is single-threaded (a fork of the single-threaded shim), so the
        // child may allocate; the closure makes the setup's system calls on values built
        // before the fork.
        #[allow(unsafe_code)]
        unsafe {
            cmd.pre_exec(move || child.run());
        }
        let spawned = cmd.spawn();
        drop(cmd);
        spawned
    };
    let tool_line = receive(&tool_read);
    let tool = match spawned {
        Ok(c) => Pid::from_raw(i32::try_from(c.id()).unwrap_or(i32::MAX)),
        Err(e) => {
            return match tool_line {
                Some(Line::Failed { step, message }) => Line::Failed { step, message },
                _ => Line::Ended {
                    exit_code: None,
                    signal: None,
                    leftovers: 0,
                    spawn_error: Some(format!("could not start `{}`: {e}", s.program)),
                },
            };
        }
    };
    let flags = match tool_line {
        Some(Line::Ready { flags, .. }) => flags,
        _ => 0,
    };
    let ready = Line::Ready {
        flags,
        view: Some(ViewDone {
            masked: built.masked,
            git_read_only: built.git_read_only,
        }),
    };
    if send(&s.status, &ready).is_err() {
        let _ = nix::sys::signal::kill(Pid::from_raw(-1), Signal::SIGKILL);
        std::process::exit(1);
    }
    // The tool has the standard streams; the init lets go of its copies, so that the reader
    // sees their end when the tool and its descendants are done with them.
    if let Ok(null) = std::fs::File::open("/dev/null") {
        let _ = rustix::stdio::dup2_stdin(&null);
        let _ = rustix::stdio::dup2_stdout(&null);
        let _ = rustix::stdio::dup2_stderr(&null);
    }
    drop(s);
    let (exit_code, signal) = reap_until(tool);
    Line::Ended {
        exit_code,
        signal,
        leftovers: still_running(),
        spawn_error: None,
    }
}

/// Reaps every child until the tool has ended; returns its exit code or signal.
fn reap_until(tool: Pid) -> (Option<i32>, Option<i32>) {
    loop {
        match waitpid(None::<Pid>, None) {
            Ok(WaitStatus::Exited(pid, code)) if pid == tool => return (Some(code), None),
            Ok(WaitStatus::Signaled(pid, sig, _)) if pid == tool => {
                return (None, Some(sig as i32));
            }
            Ok(_) | Err(Errno::EINTR) => {}
            Err(_) => return (None, None),
        }
    }
}

/// The processes of the namespace still running (the init aside), after reaping those that
/// have ended.
fn still_running() -> u32 {
    while let Ok(WaitStatus::Exited(..) | WaitStatus::Signaled(..)) =
        waitpid(None::<Pid>, Some(WaitPidFlag::WNOHANG))
    {}
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    let live = dir
        .flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter(|pid| *pid != 1)
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
                !s.rsplit(')')
                    .next()
                    .is_some_and(|r| r.trim_start().starts_with('Z'))
            })
        })
        .count();
    u32::try_from(live).unwrap_or(u32::MAX)
}
