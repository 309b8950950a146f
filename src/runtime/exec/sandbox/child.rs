//! The tool's process between fork and exec (the shim's child): a new session, the
//! parent-death signal, the cgroups, the rlimits, Landlock and seccomp, every inherited
//! descriptor above stderr marked close-on-exec — and two status bytes back to the shim on
//! what it put in force, or which step failed. Runs inside `pre_exec`, so it makes system
//! calls on values built before the fork and nothing else.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use ::landlock::RulesetCreated;
use nix::errno::Errno;
use nix::sys::prctl;
use nix::sys::signal::{SigSet, Signal};
use nix::unistd::{Pid, getppid, read, setsid, write};
use seccompiler::BpfProgram;

use super::landlock::{self, Enforcement, Restrictions};
use super::{Protection, Rlimits, rlimit, seccomp};

/// Two bytes from the child, before exec, on how its setup went: [`OK`](setup::OK) and what it
/// put in force, or a failure code and 0.
pub(super) mod setup {
    pub(crate) const OK: u8 = 0;
    pub(crate) const LANDLOCK_MASK: u8 = 0b11;
    pub(crate) const LANDLOCK_FULL: u8 = 2;
    pub(crate) const LANDLOCK_PARTIAL: u8 = 1;
    pub(crate) const LANDLOCK_NONE: u8 = 0;
    pub(crate) const CGROUP_JOINED: u8 = 1 << 2;
    pub(crate) const PIDS_JOINED: u8 = 1 << 3;
    pub(crate) const RLIMITS: u8 = 1 << 4;
    pub(crate) const SECCOMP: u8 = 1 << 5;
    pub(crate) const SIGNAL_SCOPE: u8 = 1 << 6;
    pub(crate) const ABSTRACT_SOCKET_SCOPE: u8 = 1 << 7;
    pub(crate) const FAIL_CGROUP: u8 = 0xEF;
    pub(crate) const FAIL_SESSION: u8 = 0xF0;
    pub(crate) const FAIL_RLIMIT: u8 = 0xF1;
    pub(crate) const FAIL_LANDLOCK: u8 = 0xF2;
    pub(crate) const FAIL_SECCOMP: u8 = 0xF3;
    pub(crate) const PARENT_GONE: u8 = 0xF4;
}

/// What the shim put in force, from the child's flags: the process group and the subreaper
/// always (the tool does not start without them), and each flag's protection.
pub(super) fn applied(flags: u8) -> (Vec<Protection>, Option<String>) {
    let mut p = vec![Protection::ProcessGroup, Protection::Subreaper];
    let landlock = match flags & setup::LANDLOCK_MASK {
        setup::LANDLOCK_FULL => Some(Enforcement::Full),
        setup::LANDLOCK_PARTIAL => Some(Enforcement::Partial),
        _ => None,
    };
    let table = [
        (setup::CGROUP_JOINED, Protection::CgroupKill),
        (setup::PIDS_JOINED, Protection::ProcessLimit),
        (setup::RLIMITS, Protection::ResourceLimits),
        (setup::SECCOMP, Protection::NoNetwork),
        (setup::SIGNAL_SCOPE, Protection::SignalScope),
        (
            setup::ABSTRACT_SOCKET_SCOPE,
            Protection::AbstractSocketScope,
        ),
    ];
    if landlock.is_some() {
        p.push(Protection::Landlock);
    }
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
    /// The shim (the parent this process must still have).
    pub(super) shim: Pid,
    /// The status pipe's write end (close-on-exec).
    pub(super) status: OwnedFd,
    /// The Landlock ruleset, and what it holds.
    pub(super) ruleset: Option<(RulesetCreated, Layers)>,
    /// The seccomp program.
    pub(super) filter: Option<BpfProgram>,
    /// The rlimits.
    pub(super) rlimits: Rlimits,
    /// Whether a protection that cannot be applied is tolerated.
    pub(super) best_effort: bool,
    /// The cgroup v2 leaf to join.
    pub(super) cgroup_v2: Option<std::path::PathBuf>,
    /// The cgroup v1 pids leaf to join.
    pub(super) cgroup_v1_pids: Option<std::path::PathBuf>,
    /// Whether joining the process-cap cgroup is required.
    pub(super) process_cap: bool,
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

/// Moves the calling process into a cgroup.
fn join(dir: &Path) -> bool {
    std::fs::write(dir.join("cgroup.procs"), std::process::id().to_string()).is_ok()
}

impl ChildSetup {
    fn fail(&self, code: u8, e: impl Into<io::Error>) -> io::Result<()> {
        let _ = write(self.status.as_fd(), &[code, 0]);
        Err(e.into())
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
        if !self.rlimits.is_empty() {
            match rlimit::apply(&self.rlimits) {
                Ok(()) => flags |= setup::RLIMITS,
                Err(_) if self.best_effort => {}
                Err(e) => return self.fail(setup::FAIL_RLIMIT, e),
            }
        }
        if let Some((ruleset, layers)) = self.ruleset.take() {
            let enforced = match landlock::restrict(ruleset) {
                Ok(Enforcement::Full) => setup::LANDLOCK_FULL,
                Ok(Enforcement::Partial) => setup::LANDLOCK_PARTIAL,
                Ok(Enforcement::None) | Err(_) if self.best_effort => setup::LANDLOCK_NONE,
                Ok(Enforcement::None) => return self.fail(setup::FAIL_LANDLOCK, Errno::ENOSYS),
                Err(e) => return self.fail(setup::FAIL_LANDLOCK, io::Error::other(e)),
            };
            if enforced != setup::LANDLOCK_NONE {
                flags |= layers.flags(enforced);
            }
        }
        if let Some(filter) = &self.filter {
            match seccomp::apply(filter) {
                Ok(()) => flags |= setup::SECCOMP,
                Err(_) if self.best_effort => {}
                Err(e) => return self.fail(setup::FAIL_SECCOMP, io::Error::other(e)),
            }
        }
        let _ = write(self.status.as_fd(), &[setup::OK, flags]);
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
    fn flags(self, enforced: u8) -> u8 {
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

/// The child's two status bytes (`None`: it wrote nothing, or exec closed the pipe first).
pub(super) fn read_status(fd: &OwnedFd) -> Option<(u8, u8)> {
    let mut b = [0u8; 2];
    let mut got = 0;
    while got < b.len() {
        match read(fd.as_fd(), &mut b[got..]) {
            Ok(0) => return None,
            Ok(n) => got += n,
            Err(Errno::EINTR) => continue,
            Err(_) => return None,
        }
    }
    Some((b[0], b[1]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_what_the_child_put_in_force() {
        use Protection::*;
        let (p, l) = applied(0);
        assert_eq!((p, l), (vec![ProcessGroup, Subreaper], None));
        let all = setup::LANDLOCK_FULL
            | setup::CGROUP_JOINED
            | setup::PIDS_JOINED
            | setup::RLIMITS
            | setup::SECCOMP
            | setup::SIGNAL_SCOPE
            | setup::ABSTRACT_SOCKET_SCOPE;
        assert_eq!(
            applied(all),
            (
                vec![
                    ProcessGroup,
                    Subreaper,
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
        // Best effort: seccomp and the rlimits failed; Landlock held, partially.
        assert_eq!(
            applied(setup::LANDLOCK_PARTIAL | setup::CGROUP_JOINED).0,
            vec![ProcessGroup, Subreaper, Landlock, CgroupKill]
        );
        // A scope-only ruleset reports its scopes, not Landlock's file rules.
        let scopes_only = Layers {
            files: false,
            signals: true,
            abstract_sockets: false,
        };
        assert_eq!(
            applied(scopes_only.flags(setup::LANDLOCK_FULL)).0,
            vec![ProcessGroup, Subreaper, SignalScope]
        );
        // No flag collides with a failure code's status byte: they travel in separate bytes.
        assert_eq!(setup::OK, 0);
    }
}
