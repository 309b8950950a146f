//! The fork server's own process (see [`fork_server`](super::fork_server)): set up once, then
//! wait for a request, fork a shim for it, answer with the shim's pidfd, reap; until the
//! runtime closes the socket or dies.
//!
//! Single-threaded, checked at the start and kept so: it starts no thread, and waits for its
//! children through a signalfd, so that every fork is of one thread whose locks are all free.
//! The forked shim undoes what is the server's — the blocked SIGCHLD, the socket, the
//! signalfd — takes the call's stdio, environment and working folder, and then runs the same
//! code as a shim started for the call.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, IntoRawFd, OwnedFd, RawFd};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::prctl;
use nix::sys::signal::{SigSet, Signal, kill};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::socket::{ControlMessage, ControlMessageOwned, MsgFlags, recvmsg, sendmsg};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::{ForkResult, Pid, fork, getpid, getppid, setpgid};
use rustix::process::{PidfdFlags, pidfd_open};

use super::fork_server::{ForkRequest, MAX_REQUEST, READY};
use super::keep;
use super::shim::{imp::single_threaded, report_spawn_error, run_plan};

/// The descriptors a request carries: stdin, stdout, stderr, the report pipe, and the
/// namespace socket when the plan has one.
const MAX_FDS: usize = 5;

/// Runs the fork server with its arguments (`FD PARENT`) and exits when the runtime is gone.
pub(super) fn serve(args: &[String]) -> ! {
    let code = match set_up(args) {
        Ok(server) => server.run(),
        Err(e) => {
            eprintln!("toolgate fork server: {e}");
            126
        }
    };
    std::process::exit(code)
}

struct Server {
    socket: OwnedFd,
    signals: SignalFd,
    buf: Vec<u8>,
}

/// What one read of the socket brought.
enum Received {
    /// Nothing yet (interrupted, or a spurious wake-up).
    Nothing,
    /// The runtime closed its end.
    End,
    /// A request that is not one: answered with `EINVAL`, its descriptors closed.
    Bad,
    /// A request and its descriptors.
    Request(Box<ForkRequest>, Vec<OwnedFd>),
}

fn set_up(args: &[String]) -> Result<Server, String> {
    let [fd, parent] = args else {
        return Err("usage: __exec-shim --fork-server FD PARENT".into());
    };
    let fd: RawFd = fd.parse().map_err(|_| format!("bad descriptor `{fd}`"))?;
    let parent: i32 = parent.parse().map_err(|_| format!("bad pid `{parent}`"))?;
    // First, before anything else opens a descriptor: the socket becomes the server's.
    let socket = keep::take(fd).ok_or_else(|| format!("no socket at fd {fd}"))?;
    single_threaded()?;
    prctl::set_dumpable(false).map_err(|e| format!("could not make itself non-dumpable: {e}"))?;
    // KILL: the server holds nothing to clean up; the shims it forked get their own
    // parent-death SIGTERM from its death and stop their tools.
    prctl::set_pdeathsig(Signal::SIGKILL)
        .map_err(|e| format!("could not arm the parent-death signal: {e}"))?;
    if getppid().as_raw() != parent {
        return Err("the runtime ended before the fork server was set up".into());
    }
    // The runtime waits on pidfds: without them (Linux before 5.3) there is no server.
    pidfd_open(rustix::process::getpid(), PidfdFlags::empty())
        .map_err(|e| format!("no pidfds on this kernel: {e}"))?;
    let mut mask = SigSet::empty();
    mask.add(Signal::SIGCHLD);
    mask.thread_block()
        .map_err(|e| format!("could not block SIGCHLD: {e}"))?;
    let signals = SignalFd::with_flags(&mask, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK)
        .map_err(|e| format!("could not watch SIGCHLD: {e}"))?;
    send(&socket, &[READY], None).map_err(|e| format!("could not say it is ready: {e}"))?;
    Ok(Server {
        socket,
        signals,
        buf: vec![0; MAX_REQUEST],
    })
}

impl Server {
    fn run(mut self) -> i32 {
        loop {
            let mut fds = [
                PollFd::new(self.socket.as_fd(), PollFlags::POLLIN),
                PollFd::new(self.signals.as_fd(), PollFlags::POLLIN),
            ];
            match poll(&mut fds, PollTimeout::NONE) {
                Ok(_) | Err(Errno::EINTR) => {}
                Err(_) => return 1,
            }
            let request = fds[0].revents().is_some_and(|r| !r.is_empty());
            while let Ok(Some(_)) = self.signals.read_signal() {}
            reap();
            if !request {
                continue;
            }
            match self.receive() {
                Received::Nothing => {}
                Received::End => return 0,
                Received::Bad => {
                    let _ = send(&self.socket, &(-(Errno::EINVAL as i32)).to_le_bytes(), None);
                }
                Received::Request(req, fds) => {
                    // Compiled here, once, the protected globs are in every shim forked
                    // after (see `ProtectSpec::compiled`); a shim reports an error itself.
                    // One match sets up what every match needs first (the regex caches, the
                    // CPU feature checks of `memchr`), so the shims find that done too.
                    if let Some(view) = &req.plan.view
                        && let Ok(set) = view.protect.compiled()
                    {
                        let _ = set.protects("warm/up.txt");
                    }
                    let server = getpid();
                    // SAFETY: the server is single-threaded (checked in `set_up`; it starts no
                    // thread), so the child is a complete copy that may allocate and run
                    // anything; `child` never returns.
                    match unsafe { fork() } {
                        Ok(ForkResult::Child) => {
                            // The server's socket and signalfd are not the shim's.
                            drop(self);
                            child(*req, fds, server)
                        }
                        Ok(ForkResult::Parent { child }) => {
                            // Only the shim holds the call's descriptors now.
                            drop(fds);
                            self.answer(child);
                        }
                        Err(e) => {
                            drop(fds);
                            let _ = send(&self.socket, &(-(e as i32)).to_le_bytes(), None);
                        }
                    }
                }
            }
        }
    }

    fn receive(&mut self) -> Received {
        let mut space = nix::cmsg_space!([RawFd; MAX_FDS]);
        let mut iov = [io::IoSliceMut::new(&mut self.buf)];
        let msg = match recvmsg::<()>(
            self.socket.as_raw_fd(),
            &mut iov,
            Some(&mut space),
            MsgFlags::MSG_CMSG_CLOEXEC | MsgFlags::MSG_DONTWAIT,
        ) {
            Ok(m) => m,
            Err(Errno::EAGAIN | Errno::EINTR) => return Received::Nothing,
            Err(_) => return Received::End,
        };
        let mut fds: Vec<OwnedFd> = Vec::new();
        if let Ok(cmsgs) = msg.cmsgs() {
            for c in cmsgs {
                if let ControlMessageOwned::ScmRights(raw) = c {
                    // SAFETY: descriptors just received in this message are new in this
                    // process and owned by nothing else.
                    fds.extend(
                        raw.into_iter()
                            .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }),
                    );
                }
            }
        }
        let (bytes, flags) = (msg.bytes, msg.flags);
        if bytes == 0 && fds.is_empty() {
            return Received::End;
        }
        if flags.intersects(MsgFlags::MSG_TRUNC | MsgFlags::MSG_CTRUNC) {
            return Received::Bad;
        }
        let Ok(req) = serde_json::from_slice::<ForkRequest>(&self.buf[..bytes]) else {
            return Received::Bad;
        };
        if fds.len() != 4 + usize::from(req.plan.keep_fd.is_some()) {
            return Received::Bad;
        }
        Received::Request(Box::new(req), fds)
    }

    /// Answers with the shim's pid and a pidfd of it. Without a pidfd the runtime could not
    /// wait for the shim: it is killed before it starts the tool, and the answer says so.
    fn answer(&self, shim: Pid) {
        let pidfd = rustix::process::Pid::from_raw(shim.as_raw())
            .ok_or(rustix::io::Errno::SRCH)
            .and_then(|p| pidfd_open(p, PidfdFlags::empty()));
        let sent = match &pidfd {
            Ok(fd) => send(&self.socket, &shim.as_raw().to_le_bytes(), Some(fd)),
            Err(e) => {
                let _ = kill(shim, Signal::SIGKILL);
                send(&self.socket, &(-e.raw_os_error()).to_le_bytes(), None)
            }
        };
        if sent.is_err() {
            // The runtime is gone or broken: nobody waits for this shim.
            let _ = kill(shim, Signal::SIGKILL);
        }
    }
}

/// Sends one message, with a descriptor if given.
fn send(socket: &OwnedFd, bytes: &[u8], fd: Option<&OwnedFd>) -> nix::Result<usize> {
    let iov = [io::IoSlice::new(bytes)];
    let raw = fd.map(AsRawFd::as_raw_fd);
    let rights = raw.as_ref().map(std::slice::from_ref);
    let cmsgs: Vec<ControlMessage<'_>> =
        rights.into_iter().map(ControlMessage::ScmRights).collect();
    loop {
        match sendmsg::<()>(
            socket.as_raw_fd(),
            &iov,
            &cmsgs,
            MsgFlags::MSG_NOSIGNAL,
            None,
        ) {
            Err(Errno::EINTR) => {}
            r => return r,
        }
    }
}

/// Reaps every shim that has ended.
fn reap() {
    loop {
        match waitpid(None::<Pid>, Some(WaitPidFlag::WNOHANG)) {
            Ok(WaitStatus::StillAlive) | Err(Errno::ECHILD) => return,
            Ok(_) | Err(Errno::EINTR) => {}
            Err(_) => return,
        }
    }
}

/// The forked shim: the call's process group, stdio, environment and working folder, then
/// the shim's own code on the request's plan. Never returns.
fn child(req: ForkRequest, fds: Vec<OwnedFd>, server: Pid) -> ! {
    // As a shim started for the call begins: no signal blocked, a process group of its own.
    let _ = SigSet::empty().thread_set_mask();
    let _ = setpgid(Pid::from_raw(0), Pid::from_raw(0));
    let mut fds = fds.into_iter();
    let (Some(stdin), Some(stdout), Some(stderr), Some(report)) =
        (fds.next(), fds.next(), fds.next(), fds.next())
    else {
        std::process::exit(126)
    };
    let keep = fds.next();
    // Without its stdio the shim cannot run the tool; the runtime sees no report and says so.
    if rustix::stdio::dup2_stdin(&stdin).is_err()
        || rustix::stdio::dup2_stdout(&stdout).is_err()
        || rustix::stdio::dup2_stderr(&stderr).is_err()
    {
        std::process::exit(126)
    }
    drop((stdin, stdout, stderr));
    // SAFETY: this process is single-threaded (a fork of the single-threaded server), so
    // nothing reads or writes the environment concurrently. The runtime sent only names and
    // values `std::env::set_var` accepts (checked before sending).
    unsafe {
        for (name, _) in std::env::vars_os() {
            std::env::remove_var(name);
        }
        for (name, value) in &req.env {
            std::env::set_var(name, value);
        }
    }
    let report = report.into_raw_fd();
    if let Err(e) = std::env::set_current_dir(&req.cwd) {
        std::process::exit(report_spawn_error(
            report,
            format!(
                "could not enter the working folder {}: {e}",
                req.cwd.display()
            ),
        ));
    }
    let mut plan = req.plan;
    // The shim's parent is the server: the shim checks it is still there once its own
    // parent-death signal is armed, and does not start the tool otherwise.
    plan.parent = server.as_raw().unsigned_abs();
    plan.report_fd = report;
    plan.keep_fd = keep.map(IntoRawFd::into_raw_fd);
    std::process::exit(run_plan(&plan, &req.program, &req.args))
}
