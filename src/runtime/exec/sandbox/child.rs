//! The tool's process between fork and exec (the shim's child, or its init's): a new session,
//! the parent-death signal, the cgroups, the view (when no init built it), the rlimits, no
//! capabilities, Landlock and seccomp, every inherited descriptor above stderr marked
//! close-on-exec — and one status line back on what it put in force, or which step failed
//! (see [`Line`]). Runs inside `pre_exec` of a single-threaded process, so it may allocate.
//!
//! Also the namespace probe's child ([`namespaces_work`]), the other forked child here.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;

use ::landlock::RulesetCreated;
use nix::errno::Errno;
use nix::sys::prctl;
use nix::sys::signal::{SigSet, Signal};
use nix::unistd::{Pid, getppid, read, setsid, write};
use seccompiler::BpfProgram;
use serde::{Deserialize, Serialize};

use super::landlock::{self, Enforcement, Restrictions};
use super::mounts::{self, Prepared};
use super::{Protection, Rlimits, caps, rlimit, seccomp};

/// What the child put in force (bits of [`Line::Ready`]).
pub(super) mod setup {
    pub(crate) const LANDLOCK_MASK: u16 = 0b11;
    pub(crate) const LANDLOCK_FULL: u16 = 2;
    pub(crate) const LANDLOCK_PARTIAL: u16 = 1;
    pub(crate) const CGROUP_JOINED: u16 = 1 << 2;
    pub(crate) const PIDS_JOINED: u16 = 1 << 3;
    pub(crate) const RLIMITS: u16 = 1 << 4;
    pub(crate) const NO_NETWORK: u16 = 1 << 5;
    pub(crate) const SIGNAL_SCOPE: u16 = 1 << 6;
    pub(crate) const ABSTRACT_SOCKET_SCOPE: u16 = 1 << 7;
    pub(crate) const NO_CAPABILITIES: u16 = 1 << 8;
    pub(crate) const NO_MOUNTS: u16 = 1 << 9;
}

/// The view a process entered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct ViewDone {
    /// Masks in force.
    pub(super) masked: u32,
    /// Every `.git` is read-only.
    pub(super) git_read_only: bool,
}

/// A step of the child's setup that failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Step {
    Session,
    ParentDeathSignal,
    ParentGone,
    Cgroup,
    View,
    Rlimit,
    Capabilities,
    Landlock,
    Seccomp,
    Init,
}

impl Step {
    /// What failed, as the result says it.
    pub(super) fn describe(self) -> &'static str {
        match self {
            Step::Session => "could not start a new session",
            Step::ParentDeathSignal => "could not arm the parent-death signal",
            Step::ParentGone => "the shim is gone",
            Step::Cgroup => "could not join the process-cap cgroup",
            Step::View => "the mount namespace (the view and the masks) could not be set up",
            Step::Rlimit => "could not set the resource limits",
            Step::Capabilities => "could not drop the capabilities",
            Step::Landlock => "Landlock could not be enforced by this kernel",
            Step::Seccomp => "the seccomp filter could not be installed",
            Step::Init => "the sandbox's init could not start the tool",
        }
    }
}

/// One line of the status pipe (JSON): from the tool's setup to its parent, and from an init
/// to the shim.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(super) enum Line {
    /// Set up; about to exec. What is in force.
    Ready {
        flags: u16,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        view: Option<ViewDone>,
    },
    /// A step failed; nothing runs.
    Failed { step: Step, message: String },
    /// (From an init) the tool ended, or could not be started.
    Ended {
        exit_code: Option<i32>,
        signal: Option<i32>,
        leftovers: u32,
        spawn_error: Option<String>,
    },
}

/// The longest status line read.
const MAX_LINE: usize = 64 * 1024;

/// Writes one line (a failure to write means the reader is gone; nobody is left to tell).
pub(super) fn send(fd: &OwnedFd, line: &Line) -> io::Result<()> {
    let mut bytes = serde_json::to_vec(line).map_err(io::Error::other)?;
    bytes.push(b'\n');
    let mut rest = &bytes[..];
    while !rest.is_empty() {
        match write(fd.as_fd(), rest) {
            Ok(n) => rest = &rest[n..],
            Err(Errno::EINTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Reads one line (blocking; `None` at end of file or on garbage).
pub(super) fn receive(fd: &OwnedFd) -> Option<Line> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        match read(fd.as_fd(), &mut byte) {
            Ok(0) => break,
            Ok(_) if byte[0] == b'\n' => break,
            Ok(_) => {
                buf.push(byte[0]);
                if buf.len() > MAX_LINE {
                    return None;
                }
            }
            Err(Errno::EINTR) => {}
            Err(_) => return None,
        }
    }
    serde_json::from_slice(&buf).ok()
}

/// What was put in force, from a child's flags and view: the process group and the subreaper
/// always (the tool does not start without them), and each flag's protection.
/// `needs_no_mounts`: the masks count as in force only with the mount filter.
pub(super) fn applied(
    flags: u16,
    view: Option<ViewDone>,
    private_tmp: bool,
    needs_no_mounts: bool,
) -> (Vec<Protection>, Option<String>) {
    let mut p = vec![Protection::ProcessGroup, Protection::Subreaper];
    let landlock = match flags & setup::LANDLOCK_MASK {
        setup::LANDLOCK_FULL => Some(Enforcement::Full),
        setup::LANDLOCK_PARTIAL => Some(Enforcement::Partial),
        _ => None,
    };
    if let Some(v) = view {
        p.push(Protection::MountNamespace);
        if private_tmp {
            p.push(Protection::PrivateTmp);
        }
        let locked = flags & setup::NO_CAPABILITIES != 0
            && (!needs_no_mounts || flags & setup::NO_MOUNTS != 0);
        if locked {
            p.push(Protection::ProtectedMasked);
        }
        if v.git_read_only {
            p.push(Protection::GitReadOnly);
        }
    }
    if landlock.is_some() {
        p.push(Protection::Landlock);
    }
    let table = [
        (setup::CGROUP_JOINED, Protection::CgroupKill),
        (setup::PIDS_JOINED, Protection::ProcessLimit),
        (setup::RLIMITS, Protection::ResourceLimits),
        (setup::NO_NETWORK, Protection::NoNetwork),
        (setup::SIGNAL_SCOPE, Protection::SignalScope),
        (
            setup::ABSTRACT_SOCKET_SCOPE,
            Protection::AbstractSocketScope,
        ),
    ];
    p.extend(
        table
            .iter()
            .filter(|(bit, _)| flags & bit != 0)
            .map(|(_, prot)| *prot),
    );
    (p, landlock.map(|e| e.as_str().to_owned()))
}

/// What the child does between fork and exec.
pub(super) struct ChildSetup {
    /// The process that forked it (the shim, or the init of its PID namespace), which it must
    /// still have as its parent.
    pub(super) parent: Pid,
    /// The status pipe's write end (close-on-exec).
    pub(super) status: OwnedFd,
    /// The view to enter here (when no init entered it), with the working folder.
    pub(super) view: Option<(Prepared, PathBuf)>,
    /// The Landlock ruleset, and what it holds.
    pub(super) ruleset: Option<(RulesetCreated, Layers)>,
    /// The seccomp program, and whether it refuses the network and the mounts.
    pub(super) filter: Option<(BpfProgram, bool, bool)>,
    /// The rlimits.
    pub(super) rlimits: Rlimits,
    /// Whether a protection that cannot be applied is tolerated.
    pub(super) best_effort: bool,
    /// `cgroup.procs` of the cgroup v2 leaf, opened by the shim.
    pub(super) cgroup_v2: Option<OwnedFd>,
    /// `cgroup.procs` of the cgroup v1 pids leaf.
    pub(super) cgroup_v1_pids: Option<OwnedFd>,
    /// Whether joining the process-cap cgroup is required.
    pub(super) process_cap: bool,
    /// Drop every capability (up to this number).
    pub(super) drop_caps: Option<u32>,
    /// The socket the namespaces go to the runtime through ([`super::keep`]).
    pub(super) keep: Option<OwnedFd>,
}

/// Marks every descriptor above stderr close-on-exec, so the tool starts with its stdio only:
/// nothing the runtime's process held open without close-on-exec (an embedding program's
/// files, a terminal's extra descriptors) reaches it, and the shim's own are closed anyway.
fn close_inherited_on_exec() {
    // SAFETY: close_range(2) with CLOSE_RANGE_CLOEXEC only sets a flag on descriptors; it
    // reads and writes no memory of ours.
    let r = unsafe {
        nix::libc::syscall(
            nix::libc::SYS_close_range,
            3u32,
            u32::MAX,
            nix::libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if r == 0 {
        return;
    }
    // Before Linux 5.11: one by one, up to the descriptor limit (EBADF for the gaps).
    let max = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
        .map_or(1024, |(soft, _)| soft.min(65_536));
    for fd in 3..i32::try_from(max).unwrap_or(65_536) {
        // SAFETY: as above, on a descriptor number that may or may not be open.
        unsafe {
            nix::libc::fcntl(fd, nix::libc::F_SETFD, nix::libc::FD_CLOEXEC);
        }
    }
}

/// Moves the calling process into a cgroup: `0` written to its `cgroup.procs` is the writer.
fn join(procs: &OwnedFd) -> bool {
    write(procs.as_fd(), b"0").is_ok()
}

impl ChildSetup {
    fn fail(&self, step: Step, e: impl std::fmt::Display) -> io::Result<()> {
        let message = e.to_string();
        let _ = send(
            &self.status,
            &Line::Failed {
                step,
                message: message.clone(),
            },
        );
        Err(io::Error::other(format!("{}: {message}", step.describe())))
    }

    /// Sets up the calling process (the child) and reports how it went.
    pub(super) fn run(&mut self) -> io::Result<()> {
        // The shim blocks the stop signals (and CHLD) to read them from its signalfd. A
        // blocked mask survives fork and exec, so without this the tool could never receive
        // TERM: every stop would wait out the grace and end in SIGKILL, and the tool's own
        // `timeout`/`kill -TERM` of its children would do nothing. Setting the mask of this
        // thread with a valid `how` cannot fail.
        let _ = SigSet::empty().thread_set_mask();
        close_inherited_on_exec();
        if let Err(e) = setsid() {
            return self.fail(Step::Session, e);
        }
        // The tool dies with its parent; the re-check closes the race with a parent that died
        // before the signal was armed.
        if let Err(e) = prctl::set_pdeathsig(Signal::SIGKILL) {
            return self.fail(Step::ParentDeathSignal, e);
        }
        if getppid() != self.parent {
            return self.fail(Step::ParentGone, Errno::ESRCH);
        }
        // The tool joins the cgroups, not the shim: `cgroup.kill` then spares the shim, which
        // still has to reap and report.
        let mut flags = 0;
        let v2 = self.cgroup_v2.as_ref().is_some_and(join);
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
            return self.fail(Step::Cgroup, Errno::EACCES);
        }
        let mut view = None;
        if let Some((prepared, cwd)) = self.view.take() {
            let keep = self.keep.take();
            let entered = nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNS)
                .map_err(|e| e.to_string())
                .and_then(|()| {
                    if let Some(k) = &keep {
                        super::keep::send(k, &["mnt"]);
                    }
                    mounts::enter(&prepared, &cwd).map_err(|e| e.to_string())
                });
            match entered {
                Ok(built) => {
                    view = Some(ViewDone {
                        masked: built.masked,
                        git_read_only: built.git_read_only,
                    });
                }
                Err(_) if self.best_effort => {}
                Err(e) => return self.fail(Step::View, e),
            }
        }
        if !self.rlimits.is_empty() {
            match rlimit::apply(&self.rlimits) {
                Ok(()) => flags |= setup::RLIMITS,
                Err(_) if self.best_effort => {}
                Err(e) => return self.fail(Step::Rlimit, e),
            }
        }
        if let Some(last) = self.drop_caps {
            match caps::drop_all(last) {
                Ok(()) => flags |= setup::NO_CAPABILITIES,
                Err(_) if self.best_effort => {}
                Err(e) => return self.fail(Step::Capabilities, e),
            }
        }
        if let Some((ruleset, layers)) = self.ruleset.take() {
            let enforced = match landlock::restrict(ruleset) {
                Ok(Enforcement::Full) => setup::LANDLOCK_FULL,
                Ok(Enforcement::Partial) => setup::LANDLOCK_PARTIAL,
                Ok(Enforcement::None) | Err(_) if self.best_effort => 0,
                Ok(Enforcement::None) => return self.fail(Step::Landlock, Errno::ENOSYS),
                Err(e) => return self.fail(Step::Landlock, e),
            };
            if enforced != 0 {
                flags |= layers.flags(enforced);
            }
        }
        if let Some((filter, network, mounts)) = &self.filter {
            match seccomp::apply(filter) {
                Ok(()) => {
                    if *network {
                        flags |= setup::NO_NETWORK;
                    }
                    if *mounts {
                        flags |= setup::NO_MOUNTS;
                    }
                }
                Err(_) if self.best_effort => {}
                Err(e) => return self.fail(Step::Seccomp, e),
            }
        }
        let _ = send(&self.status, &Line::Ready { flags, view });
        Ok(())
    }
}

/// What a built ruleset holds, to report once it is enforced.
#[derive(Clone, Copy, Debug)]
pub(super) struct Layers {
    files: bool,
    signals: bool,
    abstract_sockets: bool,
}

impl Layers {
    /// What a ruleset built from `r` holds.
    pub(super) fn of(r: &Restrictions<'_>) -> Layers {
        Layers {
            files: r.roots.is_some(),
            signals: r.signals,
            abstract_sockets: r.abstract_sockets,
        }
    }

    /// The status flags of an enforced ruleset (`enforced`: the file system rules' level).
    fn flags(self, enforced: u16) -> u16 {
        let mut f = 0;
        if self.files {
            f |= enforced;
        }
        if self.signals {
            f |= setup::SIGNAL_SCOPE;
        }
        if self.abstract_sockets {
            f |= setup::ABSTRACT_SOCKET_SCOPE;
        }
        f
    }
}

/// Whether this process may make a private mount namespace (in a user namespace of its own
/// when `user`), with a PID namespace when `pid`, and mount a tmpfs in it: a forked child
/// tries, then exits.
pub(super) fn namespaces_work(user: bool, pid: bool) -> bool {
    use nix::libc;
    let mut flags = libc::CLONE_NEWNS;
    if pid {
        flags |= libc::CLONE_NEWPID;
    }
    // SAFETY: the caller may be multi-threaded, so the child makes only async-signal-safe
    // system calls (unshare, mount, _exit) on constants, and allocates nothing.
    match unsafe { nix::unistd::fork() } {
        // SAFETY: raw libc calls on constant, NUL-terminated strings and null pointers; the
        // child leaves with `_exit`, running no destructor or atexit handler of the parent's.
        Ok(nix::unistd::ForkResult::Child) => unsafe {
            let code = if user && libc::unshare(libc::CLONE_NEWUSER) != 0 {
                1
            } else if libc::unshare(flags) != 0 {
                2
            } else if libc::mount(
                c"none".as_ptr(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) != 0
            {
                3
            } else if libc::mount(
                c"tmpfs".as_ptr(),
                c"/tmp".as_ptr(),
                c"tmpfs".as_ptr(),
                0,
                std::ptr::null(),
            ) != 0
            {
                4
            } else {
                0
            };
            libc::_exit(code)
        },
        Ok(nix::unistd::ForkResult::Parent { child }) => loop {
            match nix::sys::wait::waitpid(child, None) {
                Ok(nix::sys::wait::WaitStatus::Exited(_, 0)) => return true,
                Err(Errno::EINTR) => {}
                _ => return false,
            }
        },
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_what_the_child_put_in_force() {
        use Protection::*;
        let (p, l) = applied(0, None, false, false);
        assert_eq!((p, l), (vec![ProcessGroup, Subreaper], None));
        let all = setup::LANDLOCK_FULL
            | setup::CGROUP_JOINED
            | setup::PIDS_JOINED
            | setup::RLIMITS
            | setup::NO_NETWORK
            | setup::SIGNAL_SCOPE
            | setup::ABSTRACT_SOCKET_SCOPE
            | setup::NO_CAPABILITIES
            | setup::NO_MOUNTS;
        let view = Some(ViewDone {
            masked: 3,
            git_read_only: true,
        });
        assert_eq!(
            applied(all, view, true, true),
            (
                vec![
                    ProcessGroup,
                    Subreaper,
                    MountNamespace,
                    PrivateTmp,
                    ProtectedMasked,
                    GitReadOnly,
                    Landlock,
                    CgroupKill,
                    ProcessLimit,
                    ResourceLimits,
                    NoNetwork,
                    SignalScope,
                    AbstractSocketScope
                ],
                Some("fully enforced".to_owned())
            )
        );
        // The masks count only when the tool cannot remove them.
        let unlocked = applied(setup::NO_CAPABILITIES, view, false, true).0;
        assert!(!unlocked.contains(&ProtectedMasked) && unlocked.contains(&MountNamespace));
        let none_profile = applied(setup::NO_CAPABILITIES, view, false, false).0;
        assert!(none_profile.contains(&ProtectedMasked));
        // Best effort: seccomp and the rlimits failed; Landlock held, partially.
        assert_eq!(
            applied(
                setup::LANDLOCK_PARTIAL | setup::CGROUP_JOINED,
                None,
                false,
                false
            )
            .0,
            vec![ProcessGroup, Subreaper, Landlock, CgroupKill]
        );
        // A scope-only ruleset reports its scopes, not Landlock's file rules.
        let scopes_only = Layers {
            files: false,
            signals: true,
            abstract_sockets: false,
        };
        assert_eq!(
            applied(scopes_only.flags(setup::LANDLOCK_FULL), None, false, false).0,
            vec![ProcessGroup, Subreaper, SignalScope]
        );
    }

    #[test]
    fn the_namespace_probe_tries_what_it_reports() {
        // Both ways in: as this process may (root mounts without a user namespace), and in a
        // user namespace of its own, as a non-root toolgate does — on a kernel that allows
        // user namespaces.
        let userns = std::fs::read_to_string("/proc/sys/user/max_user_namespaces")
            .is_ok_and(|n| n.trim() != "0");
        if userns {
            assert!(namespaces_work(true, false));
            assert!(namespaces_work(true, true));
        }
    }

    #[test]
    fn status_lines_round_trip() {
        let (r, w) = nix::unistd::pipe().unwrap();
        let lines = [
            Line::Ready {
                flags: 5,
                view: Some(ViewDone::default()),
            },
            Line::Failed {
                step: Step::View,
                message: "mount /x: EPERM".into(),
            },
            Line::Ended {
                exit_code: None,
                signal: Some(9),
                leftovers: 2,
                spawn_error: None,
            },
        ];
        for l in &lines {
            send(&w, l).unwrap();
        }
        drop(w);
        for l in lines {
            assert_eq!(receive(&r), Some(l));
        }
        assert_eq!(receive(&r), None);
    }
}
