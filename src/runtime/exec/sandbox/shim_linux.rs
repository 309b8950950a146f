//! The Linux shim (see the parent module): builds what the child needs, forks it — directly
//! with `Command::pre_exec`, or as an init in a new PID namespace ([`init`](super::super::init))
//! — then waits, stops and reaps. The `unsafe` here is `pre_exec` and the init's `fork`; what
//! the child does is in [`child`](super::super::child).
#![allow(unsafe_code)]

use std::collections::HashMap;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sched::{CloneFlags, unshare};
use nix::sys::prctl;
use nix::sys::signal::{SigSet, Signal, kill, killpg};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{ForkResult, Pid, fork, getpid, getppid, pipe2};

use super::super::child::{ChildSetup, Layers, Line, Step, applied, receive};
use super::super::init::{self, InitSetup, Restricted};
use super::super::landlock;
use super::super::mounts;
use super::super::{Protection, SCOPE_ABI, caps, seccomp};
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
    let mut report = ShimReport::default();
    // The child's `pre_exec` allocates, and the init's `fork` runs arbitrary code: both are
    // sound only when no other thread can hold the allocator's (or any) lock at the fork.
    if let Err(e) = single_threaded() {
        return (refuse(&mut report, e), report);
    }
    // Not dumpable: a process of the same user can then neither ptrace the shim nor open its
    // descriptors (the report pipe) through /proc/<shim>/fd. The tool's exec resets it.
    if let Err(e) = prctl::set_dumpable(false) {
        let code = refuse(
            &mut report,
            format!("could not make the shim non-dumpable: {e}"),
        );
        return (code, report);
    }
    let code = supervise(plan, program, args, &mut report);
    (code, report)
}

/// `Ok` when this process has exactly one thread (counted in `/proc/self/task`); otherwise
/// why the shim refuses to fork.
pub(in crate::runtime::exec::sandbox) fn single_threaded() -> Result<(), String> {
    let threads = std::fs::read_dir("/proc/self/task")
        .map_err(|e| {
            format!("cannot count the shim's threads in /proc/self/task ({e}); the shim forks only when it can tell it is single-threaded")
        })?
        .count();
    if threads == 1 {
        Ok(())
    } else {
        Err(format!(
            "the exec shim has {threads} threads; it forks only single-threaded. Call `run_shim` first thing in `main`, before anything starts a thread (an async runtime, a logger)"
        ))
    }
}

fn refuse(report: &mut ShimReport, what: String) -> i32 {
    report.sandbox_error = Some(what);
    126
}

/// Opens a cgroup's `cgroup.procs` for the tool to join (by writing `0`), before any
/// namespace or view could hide it.
fn procs(dir: Option<&PathBuf>) -> Option<OwnedFd> {
    let dir = dir?;
    std::fs::OpenOptions::new()
        .write(true)
        .open(dir.join("cgroup.procs"))
        .ok()
        .map(OwnedFd::from)
}

/// Moves the shim into a user namespace of its own, mapping its user and group to
/// themselves, so that its children can mount without privilege on the host.
fn enter_user_namespace() -> std::io::Result<()> {
    let (uid, gid) = (
        rustix::process::getuid().as_raw(),
        rustix::process::getgid().as_raw(),
    );
    // /proc/self/*_map belong to root while the process is not dumpable.
    prctl::set_dumpable(true)?;
    let entered = (|| -> std::io::Result<()> {
        unshare(CloneFlags::CLONE_NEWUSER)?;
        match std::fs::write("/proc/self/setgroups", "deny") {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
        std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1"))?;
        Ok(())
    })();
    prctl::set_dumpable(false)?;
    entered
}

fn supervise(plan: &ShimPlan, program: &str, args: &[String], report: &mut ShimReport) -> i32 {
    // Before anything forks, like the report pipe: the tool's setup sends its namespaces here.
    let keep = plan
        .keep_fd
        .and_then(crate::runtime::exec::sandbox::keep::take);
    if let Err(e) = prctl::set_child_subreaper(true) {
        return refuse(report, format!("could not become the child subreaper: {e}"));
    }
    // TERM, not KILL: the shim must live long enough to kill the tree it contains. Without it
    // the tool would outlive a killed runtime: refuse.
    if let Err(e) = prctl::set_pdeathsig(Signal::SIGTERM) {
        return refuse(
            report,
            format!("could not arm the parent-death signal: {e}"),
        );
    }
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

    let mut wanted = Restricted {
        roots: plan
            .landlock
            .then(|| (plan.read_roots.clone(), plan.write_roots.clone())),
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
    let filter = match seccomp::program(plan.deny_network, plan.deny_mount) {
        Ok(f) => f.map(|f| (f, plan.deny_network, plan.deny_mount)),
        Err(_) if plan.best_effort => None,
        Err(e) => return refuse(report, format!("seccomp filter: {e}")),
    };
    let cgroup_v2 = procs(plan.cgroup_v2.as_ref());
    let cgroup_v1_pids = procs(plan.cgroup_v1_pids.as_ref());

    // The view: its mounts resolved, the workspace walked for the masks, in the host's view.
    let mut prepared = match &plan.view {
        Some(v) => match mounts::prepare(v) {
            Ok(p) => Some(p),
            Err(_) if plan.best_effort => None,
            Err(e) => return refuse(report, format!("the view could not be planned: {e}")),
        },
        None => None,
    };
    if let (Some(_), Some(v)) = (&prepared, &plan.view)
        && v.user_namespace
        && let Err(e) = enter_user_namespace()
    {
        if !plan.best_effort {
            return refuse(report, format!("could not make a user namespace: {e}"));
        }
        prepared = None;
    }
    report.masked = prepared
        .as_ref()
        .map_or(0, |p| u32::try_from(p.mask_count()).unwrap_or(u32::MAX));
    let last_cap = prepared.as_ref().map(|_| caps::last_cap());
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let (status_read, status_write) = match pipe2(OFlag::O_CLOEXEC) {
        Ok(p) => p,
        Err(e) => return refuse(report, format!("could not make a pipe: {e}")),
    };
    let private_tmp = plan.view.as_ref().is_some_and(|v| v.private_tmp.is_some());

    if plan.pid_namespace
        && let Some(prepared) = prepared
    {
        let setup = InitSetup {
            prepared,
            cwd,
            status: status_write,
            program: program.to_owned(),
            args: args.to_vec(),
            restricted: wanted,
            filter,
            rlimits: plan.rlimits.clone(),
            best_effort: plan.best_effort,
            cgroup_v2,
            cgroup_v1_pids,
            process_cap: plan.process_cap,
            last_cap: last_cap.unwrap_or(63),
            keep,
        };
        return run_in_pid_namespace(plan, setup, status_read, &signals, private_tmp, report);
    }

    let ruleset = if wanted.any() {
        let r = wanted.borrowed();
        match landlock::ruleset(&r) {
            Ok(rs) => Some((rs, Layers::of(&r))),
            Err(_) if plan.best_effort => None,
            Err(e) => return refuse(report, format!("Landlock ruleset: {e}")),
        }
    } else {
        None
    };
    let child = {
        let mut setup = ChildSetup {
            parent: getpid(),
            status: status_write,
            view: prepared.map(|p| (p, cwd)),
            ruleset,
            filter,
            rlimits: plan.rlimits.clone(),
            best_effort: plan.best_effort,
            cgroup_v2,
            cgroup_v1_pids,
            process_cap: plan.process_cap,
            drop_caps: last_cap,
            keep,
        };
        let mut cmd = Command::new(program);
        cmd.args(args);
        // SAFETY: the closure runs in the forked child before exec. The shim is
        // single-threaded (`run` checked it first), so no lock or allocator state can be held by another thread at the
        // fork, and the child may allocate; the closure makes system calls (setsid, prctl,
        // writes to cgroup files, unshare and mount for the view, setrlimit, capset,
        // landlock_restrict_self, seccomp) on values built before the fork.
        unsafe {
            cmd.pre_exec(move || setup.run());
        }
        let spawned = cmd.spawn();
        // Dropping the command closes our copy of the status pipe's write end, so the read
        // below ends at the child's exec (its copy is close-on-exec).
        drop(cmd);
        spawned
    };
    let status = receive(&status_read);
    let child = match child {
        Ok(c) => c,
        Err(e) => {
            return match status {
                Some(Line::Failed {
                    step: Step::ParentGone,
                    ..
                }) => {
                    report.stopped = true;
                    143
                }
                Some(Line::Failed { step, message }) => {
                    refuse(report, format!("{}: {message}", step.describe()))
                }
                _ => {
                    report.spawn_error = Some(format!("could not start `{program}`: {e}"));
                    127
                }
            };
        }
    };
    // The child execs only after it reported it is ready (a failure fails the spawn above).
    let (flags, view) = match status {
        Some(Line::Ready { flags, view }) => (flags, view),
        _ => (0, None),
    };
    (report.applied, report.landlock) = applied(flags, view, private_tmp, plan.deny_mount);
    let tool = Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
    // std's Child neither waits nor kills on drop; the loop below reaps it with waitpid.
    drop(child);
    let ended = wait_for(plan, tool, &signals, report);
    exit_code(ended, report)
}

/// The tool's end as the report and the shim's exit code carry it.
fn exit_code(ended: Option<WaitStatus>, report: &mut ShimReport) -> i32 {
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

/// Forks the init into a new PID namespace (it builds the view and starts the tool), reads
/// what it put in force, waits, and takes the tool's end from the init's last line.
fn run_in_pid_namespace(
    plan: &ShimPlan,
    setup: InitSetup,
    status_read: OwnedFd,
    signals: &SignalFd,
    private_tmp: bool,
    report: &mut ShimReport,
) -> i32 {
    if let Err(e) = unshare(CloneFlags::CLONE_NEWPID) {
        return refuse(report, format!("could not make a PID namespace: {e}"));
    }
    // SAFETY: the shim is single-threaded (`run` checked it first), so the child is a complete copy that may allocate
    // and run anything; it never returns (init::run exits).
    let child = match unsafe { fork() } {
        Ok(ForkResult::Child) => init::run(setup),
        Ok(ForkResult::Parent { child }) => child,
        Err(e) => return refuse(report, format!("could not start the sandbox's init: {e}")),
    };
    // Our copies of the write end and of the cgroup files go: the init holds them now.
    drop(setup);
    let first = receive(&status_read);
    let reap_init = || {
        while let Err(Errno::EINTR) = waitpid(child, None) {}
    };
    match first {
        Some(Line::Ready { flags, view }) => {
            (report.applied, report.landlock) = applied(flags, view, private_tmp, plan.deny_mount);
            report.applied.push(Protection::PidNamespace);
        }
        Some(Line::Failed { step, message }) => {
            reap_init();
            return refuse(report, format!("{}: {message}", step.describe()));
        }
        Some(Line::Ended {
            spawn_error: Some(e),
            ..
        }) => {
            reap_init();
            report.spawn_error = Some(e);
            return 127;
        }
        _ => {
            reap_init();
            return refuse(
                report,
                "the sandbox's init ended before the tool started".to_owned(),
            );
        }
    }
    let ended = wait_for(plan, child, signals, report);
    match receive(&status_read) {
        Some(Line::Ended {
            exit_code,
            signal,
            leftovers,
            spawn_error,
        }) => {
            report.spawn_error = spawn_error;
            if !report.stopped {
                report.leftovers = report.leftovers.max(leftovers);
            }
            match (exit_code, signal) {
                (Some(code), _) => {
                    report.exit_code = Some(code);
                    code
                }
                (None, Some(sig)) => {
                    report.signal = Some(sig);
                    128 + sig
                }
                (None, None) => 1,
            }
        }
        // Killed before it could say (after the grace period): its own end stands for the
        // tool's, which died with it.
        _ => exit_code(ended, report),
    }
}

/// Waits for the tool (or its init), stops it on a stop signal (TERM, grace, KILL), kills what
/// it leaves behind, reaps everything, and returns how it ended.
fn wait_for(
    plan: &ShimPlan,
    tool: Pid,
    signals: &SignalFd,
    report: &mut ShimReport,
) -> Option<WaitStatus> {
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
    ended
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
    fn refuses_to_fork_with_other_threads_running() {
        // The test harness runs this test on a thread of its own: two at least.
        let other = std::thread::spawn(|| std::thread::sleep(Duration::from_millis(200)));
        let e = single_threaded().unwrap_err();
        assert!(e.contains("threads; it forks only single-threaded"), "{e}");
        other.join().unwrap();
    }

    #[test]
    fn parses_the_parent_from_stat() {
        assert_eq!(parent_of("12 (sh) S 7 12 12 0"), Some(7));
        assert_eq!(parent_of("12 (a) b) (c) R 99 1"), Some(99));
        assert_eq!(parent_of("garbage"), None);
    }
}
