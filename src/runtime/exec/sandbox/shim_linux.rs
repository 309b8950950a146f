//! The Linux shim (see the parent module): builds what the child needs, forks it with
//! `Command::pre_exec` (the `unsafe` here; what the child does is in
//! [`child`](super::super::child)), then waits, stops and reaps.
#![allow(unsafe_code)]

use std::collections::HashMap;
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::prctl;
use nix::sys::signal::{SigSet, Signal, kill, killpg};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{Pid, getpid, getppid, pipe2};

use super::super::child::{ChildSetup, Layers, applied, read_status, setup};
use super::super::landlock::{self, Restrictions};
use super::super::{Protection, SCOPE_ABI, seccomp};
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

/// Runs the shim; returns its exit code and the report.
pub(super) fn run(plan: &ShimPlan, program: &str, args: &[String]) -> (i32, ShimReport) {
    // Not dumpable: a process of the same user can then neither ptrace the shim nor open its
    // descriptors (the report pipe) through /proc/<shim>/fd. The tool's exec resets it.
    let _ = prctl::set_dumpable(false);
    let mut report = ShimReport::default();
    let code = supervise(plan, program, args, &mut report);
    (code, report)
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

    let mut wanted = Restrictions {
        roots: plan
            .landlock
            .then_some((&plan.read_roots[..], &plan.write_roots[..])),
        signals: plan.scope_signals,
        abstract_sockets: plan.scope_abstract_sockets,
    };
    // The plan asks for scopes only when the probe saw them; check this kernel again, since
    // the Landlock crate would drop a scope it cannot handle without a word.
    if wanted.signals || wanted.abstract_sockets {
        let abi = landlock::abi().unwrap_or(0);
        if abi < SCOPE_ABI {
            if !plan.best_effort {
                return refuse(
                    report,
                    format!("Landlock scopes need ABI {SCOPE_ABI}; this kernel has ABI {abi}"),
                );
            }
            wanted.signals = false;
            wanted.abstract_sockets = false;
        }
    }
    let ruleset = if wanted.any() {
        match landlock::ruleset(&wanted) {
            Ok(r) => Some((r, Layers::of(&wanted))),
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
            let what = match status.map(|(kind, _)| kind) {
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
    // The child execs only after it reported OK (a failure fails the spawn above).
    let flags = match status {
        Some((setup::OK, flags)) => flags,
        _ => 0,
    };
    (report.applied, report.landlock) = applied(flags);
    let tool = Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
    // std's Child neither waits nor kills on drop; the loop below reaps it with waitpid.
    drop(child);
    wait_for(plan, tool, &signals, report)
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
        && report.has(Protection::CgroupKill)
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
