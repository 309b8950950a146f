//! The Linux shim (see the parent module): the one place where toolgate needs `unsafe` —
//! `Command::pre_exec`, whose closure runs in the child between fork and exec.
#![allow(unsafe_code)]

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use ::landlock::RulesetCreated;
use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::prctl;
use nix::sys::signal::{SigSet, Signal, kill, killpg};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{Pid, getpid, getppid, pipe2, read, setsid, write};
use seccompiler::BpfProgram;

use super::super::landlock::{self, Enforcement};
use super::super::{Rlimits, rlimit, seccomp};
use super::{ShimPlan, ShimReport};

/// Signals that stop the tool: the runtime's timeout or cancel (TERM), the parent's death
/// (TERM, as the parent-death signal), a terminal's interrupt or hang-up.
const STOP_SIGNALS: [Signal; 4] = [
    Signal::SIGTERM,
    Signal::SIGINT,
    Signal::SIGHUP,
    Signal::SIGQUIT,
];
/// After the tool ended, how long the shim keeps killing and reaping what it left running
/// before it reports anyway (a process stuck in the kernel cannot be waited for forever).
const REAP_DEADLINE_MS: u64 = 2_000;
/// How often the shim re-sweeps while it waits for killed descendants to go.
const SWEEP_INTERVAL_MS: u16 = 10;

/// One byte from the child, before exec, on how its setup went: flags on success, a code at
/// 0xF0 and above on failure.
mod setup {
    pub(super) const LANDLOCK_MASK: u8 = 0b11;
    pub(super) const LANDLOCK_FULL: u8 = 2;
    pub(super) const LANDLOCK_PARTIAL: u8 = 1;
    pub(super) const LANDLOCK_NONE: u8 = 0;
    pub(super) const CGROUP_JOINED: u8 = 0b100;
    pub(super) const PIDS_JOINED: u8 = 0b1000;
    pub(super) const FAIL_CGROUP: u8 = 0xEF;
    pub(super) const FAIL_SESSION: u8 = 0xF0;
    pub(super) const FAIL_RLIMIT: u8 = 0xF1;
    pub(super) const FAIL_LANDLOCK: u8 = 0xF2;
    pub(super) const FAIL_SECCOMP: u8 = 0xF3;
    pub(super) const PARENT_GONE: u8 = 0xF4;
}

/// Runs the shim; returns its exit code after writing the report.
pub(super) fn run(plan: &ShimPlan, program: &str, args: &[String]) -> i32 {
    let mut report = ShimReport::default();
    let code = supervise(plan, program, args, &mut report);
    // Nobody to tell if this fails: the parent then sees no report and says so.
    let _ = std::fs::write(
        &plan.report,
        serde_json::to_vec(&report).unwrap_or_default(),
    );
    code
}

fn refuse(report: &mut ShimReport, what: String) -> i32 {
    report.sandbox_error = Some(what);
    126
}

fn supervise(plan: &ShimPlan, program: &str, args: &[String], report: &mut ShimReport) -> i32 {
    if let Err(e) = prctl::set_child_subreaper(true) {
        return refuse(report, format!("could not become the child subreaper: {e}"));
    }
    // TERM, not KILL: the shim must live long enough to kill the tree it contains.
    let _ = prctl::set_pdeathsig(Signal::SIGTERM);
    if u32::try_from(getppid().as_raw()).ok() != Some(plan.parent) {
        // The parent died before the death signal was armed.
        report.stopped = true;
        return 143;
    }
    let mut mask = SigSet::empty();
    for s in STOP_SIGNALS {
        mask.add(s);
    }
    mask.add(Signal::SIGCHLD);
    if let Err(e) = mask.thread_block() {
        return refuse(report, format!("could not block signals: {e}"));
    }
    let signals = match SignalFd::with_flags(&mask, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK)
    {
        Ok(s) => s,
        Err(e) => return refuse(report, format!("could not watch signals: {e}")),
    };

    let ruleset = if plan.landlock {
        match landlock::ruleset(&plan.read_roots, &plan.write_roots) {
            Ok(r) => Some(r),
            Err(_) if plan.best_effort => None,
            Err(e) => return refuse(report, format!("Landlock ruleset: {e}")),
        }
    } else {
        None
    };
    let filter = if plan.deny_network {
        match seccomp::no_network() {
            Ok(f) => Some(f),
            Err(_) if plan.best_effort => None,
            Err(e) => return refuse(report, format!("seccomp filter: {e}")),
        }
    } else {
        None
    };
    let (status_read, status_write) = match pipe2(OFlag::O_CLOEXEC) {
        Ok(p) => p,
        Err(e) => return refuse(report, format!("could not make a pipe: {e}")),
    };

    let child = {
        let mut setup = ChildSetup {
            shim: getpid(),
            status: status_write,
            ruleset,
            filter,
            rlimits: plan.rlimits.clone(),
            best_effort: plan.best_effort,
            cgroup_v2: plan.cgroup_v2.clone(),
            cgroup_v1_pids: plan.cgroup_v1_pids.clone(),
            process_cap: plan.process_cap,
        };
        let mut cmd = Command::new(program);
        cmd.args(args);
        // SAFETY: the closure runs in the forked child before exec. The shim is
        // single-threaded, so no lock or allocator state can be held by another thread at the
        // fork, and the child may allocate; the closure only makes system calls (setsid,
        // prctl, writes to cgroup files, setrlimit, landlock_restrict_self, seccomp) on
        // values built before the fork.
        unsafe {
            cmd.pre_exec(move || setup.run());
        }
        let spawned = cmd.spawn();
        // Dropping the command closes our copy of the status pipe's write end, so the read
        // below ends at the child's exec (its copy is close-on-exec).
        drop(cmd);
        spawned
    };
    let status = read_status(&status_read);
    let child = match child {
        Ok(c) => c,
        Err(e) => {
            let what = match status {
                Some(setup::FAIL_SESSION) => "could not start a new session".to_owned(),
                Some(setup::FAIL_RLIMIT) => "could not set the resource limits".to_owned(),
                Some(setup::FAIL_LANDLOCK) => {
                    "Landlock could not be enforced by this kernel".to_owned()
                }
                Some(setup::FAIL_SECCOMP) => "the seccomp filter could not be installed".to_owned(),
                Some(setup::FAIL_CGROUP) => "could not join the process-cap cgroup".to_owned(),
                Some(setup::PARENT_GONE) => {
                    report.stopped = true;
                    return 143;
                }
                _ => {
                    report.spawn_error = Some(format!("could not start `{program}`: {e}"));
                    return 127;
                }
            };
            return refuse(report, format!("{what}: {e}"));
        }
    };
    let status = status.unwrap_or(0);
    report.landlock = match status & setup::LANDLOCK_MASK {
        setup::LANDLOCK_FULL => Some(Enforcement::Full.as_str().to_owned()),
        setup::LANDLOCK_PARTIAL => Some(Enforcement::Partial.as_str().to_owned()),
        _ => None,
    };
    report.cgroup_joined = status & setup::CGROUP_JOINED != 0;
    report.process_cap_joined = status & setup::PIDS_JOINED != 0;
    let tool = Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
    // std's Child neither waits nor kills on drop; the loop below reaps it with waitpid.
    drop(child);
    wait_for(plan, tool, &signals, report)
}

/// What the child does between fork and exec.
struct ChildSetup {
    shim: Pid,
    status: OwnedFd,
    ruleset: Option<RulesetCreated>,
    filter: Option<BpfProgram>,
    rlimits: Rlimits,
    best_effort: bool,
    cgroup_v2: Option<std::path::PathBuf>,
    cgroup_v1_pids: Option<std::path::PathBuf>,
    process_cap: bool,
}

/// Moves the calling process into a cgroup.
fn join(dir: &Path) -> bool {
    std::fs::write(dir.join("cgroup.procs"), std::process::id().to_string()).is_ok()
}

impl ChildSetup {
    fn fail(&self, code: u8, e: impl Into<io::Error>) -> io::Result<()> {
        let _ = write(self.status.as_fd(), &[code]);
        Err(e.into())
    }

    fn run(&mut self) -> io::Result<()> {
        // The shim blocks the stop signals (and CHLD) to read them from its signalfd. A
        // blocked mask survives fork and exec, so without this the tool could never receive
        // TERM: every stop would wait out the grace and end in SIGKILL, and the tool's own
        // `timeout`/`kill -TERM` of its children would do nothing. Setting the mask of this
        // thread with a valid `how` cannot fail.
        let _ = SigSet::empty().thread_set_mask();
        if let Err(e) = setsid() {
            return self.fail(setup::FAIL_SESSION, e);
        }
        // The tool dies with the shim; the re-check closes the race with a shim that died
        // before the signal was armed.
        let _ = prctl::set_pdeathsig(Signal::SIGKILL);
        if getppid() != self.shim {
            return self.fail(setup::PARENT_GONE, Errno::ESRCH);
        }
        // The tool joins the cgroups, not the shim: `cgroup.kill` then spares the shim, which
        // still has to reap and report.
        let mut flags = 0;
        let v2 = self.cgroup_v2.as_deref().is_some_and(join);
        if v2 {
            flags |= setup::CGROUP_JOINED;
        }
        let capped = match (&self.cgroup_v1_pids, &self.cgroup_v2) {
            (Some(v1), _) => join(v1),
            (None, Some(_)) => v2,
            (None, None) => false,
        };
        if self.process_cap && capped {
            flags |= setup::PIDS_JOINED;
        } else if self.process_cap && !self.best_effort {
            return self.fail(setup::FAIL_CGROUP, Errno::EACCES);
        }
        if let Err(e) = rlimit::apply(&self.rlimits) {
            return self.fail(setup::FAIL_RLIMIT, e);
        }
        if let Some(ruleset) = self.ruleset.take() {
            flags |= match landlock::restrict(ruleset) {
                Ok(Enforcement::Full) => setup::LANDLOCK_FULL,
                Ok(Enforcement::Partial) => setup::LANDLOCK_PARTIAL,
                Ok(Enforcement::None) | Err(_) if self.best_effort => setup::LANDLOCK_NONE,
                Ok(Enforcement::None) => return self.fail(setup::FAIL_LANDLOCK, Errno::ENOSYS),
                Err(e) => return self.fail(setup::FAIL_LANDLOCK, io::Error::other(e)),
            };
        }
        if let Some(filter) = &self.filter
            && let Err(e) = seccomp::apply(filter)
            && !self.best_effort
        {
            return self.fail(setup::FAIL_SECCOMP, io::Error::other(e));
        }
        let _ = write(self.status.as_fd(), &[flags]);
        Ok(())
    }
}

fn read_status(fd: &OwnedFd) -> Option<u8> {
    let mut b = [0u8; 1];
    loop {
        match read(fd.as_fd(), &mut b) {
            Ok(1) => return Some(b[0]),
            Ok(_) => return None,
            Err(Errno::EINTR) => continue,
            Err(_) => return None,
        }
    }
}

/// Waits for the tool, stops it on a stop signal (TERM, grace, KILL), kills what it leaves
/// behind, reaps everything, and returns the tool's exit code.
fn wait_for(plan: &ShimPlan, tool: Pid, signals: &SignalFd, report: &mut ShimReport) -> i32 {
    let shim = getpid();
    let grace = Duration::from_millis(plan.grace_ms);
    let mut ended: Option<WaitStatus> = None;
    let mut kill_at: Option<Instant> = None;
    let mut give_up_at: Option<Instant> = None;
    loop {
        let children_left = reap(tool, &mut ended);
        if ended.is_some() {
            let now = Instant::now();
            match give_up_at {
                // No child left means no descendant left: an orphan would have been
                // re-parented to the shim. Skip the /proc sweep (the common case).
                None if !children_left => break,
                None => {
                    // The tool is done: whatever it left running goes now.
                    let left = descendants(shim).len();
                    if !report.stopped {
                        report.leftovers = u32::try_from(left).unwrap_or(u32::MAX);
                    }
                    if left > 0 {
                        kill_tree(plan, report, tool, shim, Signal::SIGKILL);
                    }
                    give_up_at = Some(now + Duration::from_millis(REAP_DEADLINE_MS));
                    continue;
                }
                Some(t) if !children_left || now >= t => break,
                Some(_) => kill_tree(plan, report, tool, shim, Signal::SIGKILL),
            }
        }
        if let Some(t) = kill_at
            && Instant::now() >= t
            && !report.killed
        {
            report.killed = true;
            kill_tree(plan, report, tool, shim, Signal::SIGKILL);
        }
        let timeout = if ended.is_some() {
            PollTimeout::from(SWEEP_INTERVAL_MS)
        } else {
            match kill_at.filter(|_| !report.killed) {
                Some(t) => PollTimeout::try_from(t.saturating_duration_since(Instant::now()))
                    .unwrap_or(PollTimeout::from(SWEEP_INTERVAL_MS)),
                None => PollTimeout::NONE,
            }
        };
        let mut fds = [PollFd::new(signals.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, timeout) {
            Ok(_) | Err(Errno::EINTR) => {}
            // poll on one valid fd does not fail otherwise; if it did, do not spin.
            Err(_) => std::thread::sleep(Duration::from_millis(u64::from(SWEEP_INTERVAL_MS))),
        }
        while let Ok(Some(info)) = signals.read_signal() {
            let stop = STOP_SIGNALS
                .iter()
                .any(|s| *s as i32 == i32::try_from(info.ssi_signo).unwrap_or(-1));
            if stop && kill_at.is_none() && ended.is_none() {
                report.stopped = true;
                kill_tree(plan, report, tool, shim, Signal::SIGTERM);
                kill_at = Some(Instant::now() + grace);
            }
        }
    }
    match ended {
        Some(WaitStatus::Exited(_, code)) => {
            report.exit_code = Some(code);
            code
        }
        Some(WaitStatus::Signaled(_, sig, _)) => {
            report.signal = Some(sig as i32);
            128 + sig as i32
        }
        _ => 1,
    }
}

/// Reaps every child that has ended (the tool, and orphans re-parented to the shim); returns
/// whether children are left.
fn reap(tool: Pid, ended: &mut Option<WaitStatus>) -> bool {
    loop {
        match waitpid(None::<Pid>, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) => return true,
            Ok(s @ (WaitStatus::Exited(pid, _) | WaitStatus::Signaled(pid, _, _))) => {
                if pid == tool {
                    *ended = Some(s);
                }
            }
            Ok(_) | Err(Errno::EINTR) => {}
            Err(_) => return false,
        }
    }
}

/// Sends `sig` to the whole tree: the cgroup (`cgroup.kill` for SIGKILL), the tool's process
/// group, and every descendant of the shim found in /proc.
fn kill_tree(plan: &ShimPlan, report: &ShimReport, tool: Pid, shim: Pid, sig: Signal) {
    if sig == Signal::SIGKILL
        && report.cgroup_joined
        && let Some(dir) = &plan.cgroup_v2
    {
        let _ = std::fs::write(dir.join("cgroup.kill"), "1");
    }
    // ESRCH everywhere below: already gone.
    let _ = killpg(tool, sig);
    for pid in descendants(shim) {
        let _ = kill(pid, sig);
    }
}

/// Every process whose chain of parents leads to `root` (orphans were re-parented to the
/// subreaper, so daemons are found too).
fn descendants(root: Pid) -> Vec<Pid> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        if let Some(ppid) = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| parent_of(&s))
        {
            children.entry(ppid).or_default().push(pid);
        }
    }
    let mut out = Vec::new();
    let mut stack = vec![root.as_raw()];
    while let Some(p) = stack.pop() {
        for c in children.get(&p).into_iter().flatten() {
            out.push(Pid::from_raw(*c));
            stack.push(*c);
        }
    }
    out
}

/// The parent pid from a /proc/PID/stat line: the 2nd field after the command name, which is
/// in parentheses and may itself contain spaces and parentheses.
fn parent_of(stat: &str) -> Option<i32> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_parent_from_stat() {
        assert_eq!(parent_of("12 (sh) S 7 12 12 0"), Some(7));
        assert_eq!(parent_of("12 (a) b) (c) R 99 1"), Some(99));
        assert_eq!(parent_of("garbage"), None);
    }
}
