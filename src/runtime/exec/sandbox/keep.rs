//! The tool's namespaces, handed to the runtime so that ending them is not on the call's path.
//!
//! A mount namespace ends when its last process exits, and ending it waits for an RCU grace
//! period (`namespace_unlock` in the kernel): milliseconds on a busy machine — 5 to 20 ms on
//! the shared development VM, more than everything else a command tool costs. Paid by the
//! exiting tool, it delays the shim's reaping, the report and the call. So the tool's setup
//! sends a descriptor of each namespace it made to the runtime over a socket, right after
//! making them: the namespaces then outlive the tool, and the runtime closes the socket — and
//! with it the descriptors in flight, which ends the namespaces — on a background thread once
//! the shim has ended. Nothing of the view changes: the tool still gets a namespace of its own,
//! and it never holds the socket (close-on-exec, like every descriptor above stderr).
//!
//! If anything here fails the tool runs as before and its exit pays for the namespaces.
//!
//! - Parent: a close-on-exec datagram socket pair; between fork and exec of the shim the
//!   shim's end loses close-on-exec (as the report pipe's does), and its number goes to the
//!   shim in its plan.
//! - Shim, first thing: check that the number is a socket and mark it close-on-exec.
//! - Tool setup (the shim's child, or the init of a PID namespace), after `unshare`: open
//!   `/proc/self/ns/mnt` (and `ipc`) and send them.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{OnceLock, mpsc};

use nix::fcntl::{FcntlArg, FdFlag, OFlag, fcntl, open};
use nix::libc;
use nix::sys::socket::{
    AddressFamily, ControlMessage, MsgFlags, SockFlag, SockType, UnixAddr, sendmsg, socketpair,
};
use nix::sys::stat::Mode;

use super::report::{above_stdio, inherit_across_exec};

/// The runtime's end: holds the descriptors the tool's setup sent until it is dropped.
#[derive(Debug)]
pub struct KeptNamespaces {
    /// Held, never read: dropping it drops the descriptors in flight.
    #[allow(dead_code, reason = "held for its drop")]
    _held: OwnedFd,
}

/// The shim's end, until it is handed to the shim.
#[derive(Debug)]
pub struct KeepEnd(OwnedFd);

/// Makes the socket pair for one shim.
pub fn channel() -> io::Result<(KeptNamespaces, KeepEnd)> {
    let (a, b) = socketpair(
        AddressFamily::Unix,
        SockType::Datagram,
        None,
        SockFlag::SOCK_CLOEXEC,
    )?;
    // As for the report pipe: never at 0–2, where std puts the child's stdio before pre_exec.
    Ok((KeptNamespaces { _held: a }, KeepEnd(above_stdio(b)?)))
}

impl KeepEnd {
    /// The descriptor number the shim finds its end at.
    pub fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }

    /// Lets the shim `cmd` starts inherit this end (at [`KeepEnd::fd`]). The parent's copy
    /// lives in `cmd` and closes when `cmd` is dropped.
    pub fn pass_to(self, cmd: &mut tokio::process::Command) {
        inherit_across_exec(self.0, cmd.as_std_mut());
    }

    /// This end itself, to hand to the fork server (which passes it to the shim it forks).
    pub(crate) fn into_fd(self) -> OwnedFd {
        self.0
    }
}

impl KeptNamespaces {
    /// Ends the namespaces the tool's setup sent (closing the socket drops the descriptors in
    /// flight) on a thread of their own: whoever closes the last descriptor waits for the
    /// kernel, and that must not be the call.
    pub fn release_in_background(self) {
        static RELEASER: OnceLock<Option<mpsc::Sender<KeptNamespaces>>> = OnceLock::new();
        let releaser = RELEASER.get_or_init(|| {
            let (tx, rx) = mpsc::channel::<KeptNamespaces>();
            std::thread::Builder::new()
                .name("toolgate-ns-release".into())
                .spawn(move || rx.into_iter().for_each(drop))
                .ok()
                .map(|_| tx)
        });
        // Without the thread (it could not start) the caller pays, as without this module.
        if let Some(Err(mpsc::SendError(back))) = releaser.as_ref().map(|tx| tx.send(self)) {
            drop(back);
        }
    }
}

/// Takes the inherited end at `fd` in the shim: `None` unless it is an open socket. Marks it
/// close-on-exec, so the tool never has it.
pub fn take(fd: RawFd) -> Option<OwnedFd> {
    // SAFETY: F_GETFD on any number is harmless; it fails with EBADF when not open.
    if fd <= 2 || unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
        return None;
    }
    // SAFETY: the descriptor is open (checked above) and stays open while borrowed.
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    let stat = nix::sys::stat::fstat(borrowed).ok()?;
    if stat.st_mode & libc::S_IFMT != libc::S_IFSOCK {
        return None;
    }
    fcntl(borrowed, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC)).ok()?;
    // SAFETY: the parent passed this descriptor to the shim alone; nothing else in this
    // process refers to it.
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Sends descriptors of the calling process's namespaces (`mnt`, `ipc`: the names under
/// `/proc/self/ns`) to the runtime. Best effort: an error leaves the namespaces to end with
/// the tool.
pub fn send(socket: &OwnedFd, namespaces: &[&str]) {
    let fds: Vec<OwnedFd> = namespaces
        .iter()
        .filter_map(|ns| {
            open(
                format!("/proc/self/ns/{ns}").as_str(),
                OFlag::O_RDONLY | OFlag::O_CLOEXEC,
                Mode::empty(),
            )
            .ok()
        })
        .collect();
    if fds.is_empty() {
        return;
    }
    let raw: Vec<RawFd> = fds.iter().map(AsRawFd::as_raw_fd).collect();
    let iov = [io::IoSlice::new(b"n")];
    let _ = sendmsg::<UnixAddr>(
        socket.as_fd().as_raw_fd(),
        &iov,
        &[ControlMessage::ScmRights(&raw)],
        MsgFlags::MSG_DONTWAIT,
        None,
    );
    // Our descriptors close here; the ones in flight keep the namespaces.
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the setup sends stays open in the runtime's end until that end is dropped.
    #[test]
    fn sent_namespaces_are_held_by_the_runtime_end() {
        let (kept, end) = channel().unwrap();
        let shim_end = take(end.0.as_raw_fd()).unwrap();
        std::mem::forget(end);
        send(&shim_end, &["mnt", "ipc"]);
        let mut buf = [0u8; 8];
        let mut space = nix::cmsg_space!([RawFd; 2]);
        let mut iov = [io::IoSliceMut::new(&mut buf)];
        let msg = nix::sys::socket::recvmsg::<UnixAddr>(
            kept._held.as_raw_fd(),
            &mut iov,
            Some(&mut space),
            MsgFlags::MSG_DONTWAIT,
        )
        .unwrap();
        let mut got = 0;
        for c in msg.cmsgs().unwrap() {
            if let nix::sys::socket::ControlMessageOwned::ScmRights(fds) = c {
                for fd in fds {
                    // SAFETY: the descriptor was just received and is ours alone.
                    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
                    let link = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))
                        .unwrap()
                        .to_string_lossy()
                        .into_owned();
                    assert!(
                        link.starts_with("mnt:[") || link.starts_with("ipc:["),
                        "{link}"
                    );
                    got += 1;
                }
            }
        }
        assert_eq!(got, 2);
    }

    /// The shim takes only a socket.
    #[test]
    fn the_shim_takes_only_a_socket() {
        let (r, _w) = nix::unistd::pipe2(OFlag::O_CLOEXEC).unwrap();
        assert!(take(r.as_raw_fd()).is_none());
        assert!(take(1).is_none());
    }
}
