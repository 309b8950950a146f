//! The channel that carries the shim's [`ShimReport`] back to the runtime: a pipe whose write
//! end only the shim holds.
//!
//! It used to be a file in `$TMPDIR` named in the shim's argv. The tool could read that name
//! from `/proc/$PPID/cmdline`, put a symlink there (its sandbox may write `/tmp`), and the
//! shim — outside the sandbox — followed it and overwrote whatever file the user can write. A
//! pipe has no name to replace:
//!
//! - Parent: a close-on-exec pipe. Between fork and exec of the shim, the write end (at the
//!   number it already has in the parent, so nothing std sets up in the child can land on it)
//!   loses close-on-exec; that number goes to the shim in its plan. The parent's own copy is
//!   closed as soon as the shim started.
//! - Shim, first thing: check that the number is a pipe, mark it close-on-exec (the tool it
//!   forks never has it) and non-blocking (a full pipe loses the report instead of hanging the
//!   shim). The Linux shim is also not dumpable, so a process of the same user cannot reopen
//!   the pipe through `/proc/<shim>/fd`; under Landlock a sandboxed tool cannot, even as root.
//! - Parent, after the shim ended: read to end of file (bounded in size and time) and accept
//!   exactly one well-formed report. Anything else — nothing, two reports, garbage, too much —
//!   is treated as no report.
//!
//! The one `unsafe` outside the Linux shim is here: `pre_exec`, and taking ownership of the
//! inherited descriptor ([`ReportSender::take`], an `unsafe fn` with its contract).
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, FdFlag, OFlag, fcntl};
use nix::libc;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::unistd::{pipe2, read, write};

use super::shim::ShimReport;

/// The largest report accepted. A report is a few hundred bytes, and its messages are cut to
/// [`ShimReport::MAX_MESSAGE`], so even one full of escaped characters stays below this.
pub const MAX_REPORT: usize = 16 * 1024;
/// How long the parent waits for the end of the report after the shim ended. Normally it is
/// there at once; only a process that somehow still holds the write end delays it.
pub const REPORT_WAIT_MS: u64 = 1_000;

/// The parent's read end.
#[derive(Debug)]
pub struct ReportReader(OwnedFd);

/// The write end, until it is handed to the shim.
#[derive(Debug)]
pub struct ReportWriteEnd(OwnedFd);

/// Makes the channel for one shim.
pub fn channel() -> io::Result<(ReportReader, ReportWriteEnd)> {
    let (r, w) = pipe2(OFlag::O_CLOEXEC)?;
    // std points the child's fds 0–2 at its stdio before `pre_exec` runs: a write end that
    // landed there (a parent whose standard streams are closed) would be overwritten.
    Ok((ReportReader(r), ReportWriteEnd(above_stdio(w)?)))
}

/// `fd`, or a close-on-exec copy of it at 3 or above when it sits at 0–2, where std puts the
/// child's stdio before `pre_exec` runs (a parent whose standard streams are closed).
pub(super) fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    let moved = fcntl(&fd, FcntlArg::F_DUPFD_CLOEXEC(3))?;
    // SAFETY: F_DUPFD_CLOEXEC returned a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(moved) })
}

/// Lets the process `cmd` starts inherit `fd` at its number: between fork and exec the child's
/// copy loses close-on-exec. The parent's copy lives in `cmd` and closes when `cmd` is dropped.
pub(super) fn inherit_across_exec(fd: OwnedFd, cmd: &mut std::process::Command) {
    // SAFETY: the closure runs in the forked child before exec and makes one
    // async-signal-safe system call on a descriptor number; it allocates nothing and
    // takes no lock. Clearing FD_CLOEXEC there changes only the child's descriptor table.
    unsafe {
        cmd.pre_exec(move || {
            if libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, 0) == -1 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

impl ReportWriteEnd {
    /// The descriptor number the shim finds the write end at.
    pub fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }

    /// Lets the shim `cmd` starts inherit the write end (at [`ReportWriteEnd::fd`]). The
    /// parent's copy lives in `cmd` and closes when `cmd` is dropped: drop it right after
    /// spawning, or the reader never sees the end of the report.
    pub fn pass_to(self, cmd: &mut tokio::process::Command) {
        inherit_across_exec(self.0, cmd.as_std_mut());
    }

    /// The write end itself, to hand to the fork server (which passes it to the shim it forks).
    pub(crate) fn into_fd(self) -> OwnedFd {
        self.0
    }
}

impl ReportReader {
    /// Whether every write end is closed, so that [`ReportReader::receive`] will not block.
    pub fn is_closed(&self) -> bool {
        let mut fds = [PollFd::new(self.0.as_fd(), PollFlags::POLLIN)];
        matches!(poll(&mut fds, PollTimeout::ZERO), Ok(n) if n > 0)
            && fds[0]
                .revents()
                .is_some_and(|r| r.contains(PollFlags::POLLHUP))
    }

    /// Reads the report once the shim has ended (blocking, at most [`REPORT_WAIT_MS`]).
    pub fn receive(self) -> Option<ShimReport> {
        let bytes = read_to_end(&self.0, Duration::from_millis(REPORT_WAIT_MS))?;
        parse(&bytes)
    }
}

/// Exactly one well-formed report: serde_json refuses trailing data (a second report) and the
/// report refuses unknown fields.
fn parse(bytes: &[u8]) -> Option<ShimReport> {
    if bytes.len() > MAX_REPORT {
        return None;
    }
    serde_json::from_slice(bytes).ok()
}

/// Everything until end of file, or `None` when it is larger than [`MAX_REPORT`] or does not
/// end within `wait`.
fn read_to_end(fd: &OwnedFd, wait: Duration) -> Option<Vec<u8>> {
    let deadline = Instant::now() + wait;
    let mut out = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let timeout = PollTimeout::try_from(left).unwrap_or(PollTimeout::ZERO);
        let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, timeout) {
            Ok(0) => return None,
            Ok(_) => {}
            Err(Errno::EINTR) => continue,
            Err(_) => return None,
        }
        match read(fd.as_fd(), &mut buf) {
            Ok(0) => return Some(out),
            Ok(n) => {
                out.extend_from_slice(&buf[..n]);
                if out.len() > MAX_REPORT {
                    return None;
                }
            }
            Err(Errno::EINTR | Errno::EAGAIN) => {}
            Err(_) => return None,
        }
    }
}

/// The shim's end.
#[derive(Debug)]
pub struct ReportSender(OwnedFd);

impl ReportSender {
    /// Takes the inherited write end at `fd`: `None` unless it is an open pipe. Call it before
    /// anything forks.
    ///
    /// # Safety
    ///
    /// `fd` must be a descriptor nothing else in this process owns or will use: the sender
    /// takes ownership and closes it when dropped, so any other owner (a `File`, an `OwnedFd`,
    /// a number kept elsewhere) would act on a closed or reused descriptor. The shim meets this
    /// by calling it first thing, on the number its parent passed for it alone.
    pub unsafe fn take(fd: RawFd) -> Option<ReportSender> {
        // SAFETY: F_GETFD on any number is harmless; it fails with EBADF when not open.
        if fd <= 2 || unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
            return None;
        }
        // SAFETY: the descriptor is open (checked above) and stays open while borrowed.
        let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
        let stat = nix::sys::stat::fstat(borrowed).ok()?;
        if stat.st_mode & libc::S_IFMT != libc::S_IFIFO {
            return None;
        }
        fcntl(borrowed, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC)).ok()?;
        let flags = OFlag::from_bits_truncate(fcntl(borrowed, FcntlArg::F_GETFL).ok()?);
        fcntl(borrowed, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK)).ok()?;
        // SAFETY: the caller guarantees nothing else in this process owns the open
        // descriptor (this function's contract).
        Some(ReportSender(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Writes the report in one piece and closes the pipe. Nobody is left to tell if it fails:
    /// the parent then sees no report and says so.
    pub fn send(self, report: &ShimReport) {
        let Ok(bytes) = serde_json::to_vec(&report.bounded()) else {
            return;
        };
        let mut rest = &bytes[..];
        while !rest.is_empty() {
            match write(self.0.as_fd(), rest) {
                Ok(n) => rest = &rest[n..],
                Err(Errno::EINTR) => {}
                Err(_) => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pipe_with(bytes: &[u8]) -> ReportReader {
        let (r, w) = channel().unwrap();
        if !bytes.is_empty() {
            write(w.0.as_fd(), bytes).unwrap();
        }
        drop(w);
        r
    }

    fn report() -> ShimReport {
        ShimReport {
            exit_code: Some(0),
            ..ShimReport::default()
        }
    }

    #[test]
    fn accepts_exactly_one_well_formed_report() {
        let one = serde_json::to_vec(&report()).unwrap();
        assert_eq!(pipe_with(&one).receive(), Some(report()));
        let two = [one.clone(), one.clone()].concat();
        assert_eq!(pipe_with(&two).receive(), None);
        assert_eq!(pipe_with(b"").receive(), None);
        assert_eq!(
            pipe_with(b"{\"exit_code\":0,\"forged\":true}").receive(),
            None
        );
        assert_eq!(pipe_with(b"not json").receive(), None);
        let mut big = one.clone();
        big.extend(std::iter::repeat_n(b' ', MAX_REPORT));
        assert_eq!(pipe_with(&big).receive(), None);
    }

    #[test]
    fn a_write_end_still_open_means_no_report() {
        let (r, w) = channel().unwrap();
        write(w.0.as_fd(), &serde_json::to_vec(&report()).unwrap()).unwrap();
        assert_eq!(read_to_end(&r.0, Duration::from_millis(20)), None);
        drop(w);
    }

    #[test]
    fn the_sender_takes_only_a_pipe_and_sends_one_report() {
        let (r, w) = channel().unwrap();
        let fd = w.fd();
        // The shim's side, in this process: it takes over the descriptor.
        std::mem::forget(w);
        // SAFETY: the write end was forgotten above: nothing else owns `fd`.
        let sender = unsafe { ReportSender::take(fd) }.unwrap();
        let flags = fcntl(sender.0.as_fd(), FcntlArg::F_GETFD).unwrap();
        assert_ne!(flags & libc::FD_CLOEXEC, 0, "the tool must not inherit it");
        sender.send(&report());
        assert_eq!(r.receive(), Some(report()));
        // SAFETY: not open: nothing is taken.
        assert!(unsafe { ReportSender::take(1_000_000) }.is_none());
        let file = std::fs::File::open("/dev/null").unwrap();
        // SAFETY: not a pipe, so refused before ownership is taken; `file` keeps it.
        assert!(unsafe { ReportSender::take(file.as_raw_fd()) }.is_none());
    }
}
