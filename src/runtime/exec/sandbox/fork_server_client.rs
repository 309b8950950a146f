//! The runtime's side of the fork server (see the parent module): starting it, one request
//! per tool process, restarting it when it died.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::time::Duration;

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::socket::{
    AddressFamily, ControlMessage, ControlMessageOwned, MsgFlags, SockFlag, SockType, recvmsg,
    sendmsg, socketpair,
};
use rustix::process::{Signal, pidfd_send_signal};
use tokio::io::unix::AsyncFd;

use super::super::SHIM_ARG;
use super::super::report::{above_stdio, inherit_across_exec};
use super::{FORK_SERVER_ARG, ForkRequest, MAX_REQUEST, READY};

/// How long the server may take to say it is ready, and to answer a request (a fork). Beyond
/// it the server is taken for hung: it is killed, and the call starts a shim of its own.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);

/// The descriptors a forked shim gets.
#[derive(Debug)]
pub struct ShimFds<'a> {
    /// The tool's stdin.
    pub stdin: BorrowedFd<'a>,
    /// The tool's stdout.
    pub stdout: BorrowedFd<'a>,
    /// The tool's stderr.
    pub stderr: BorrowedFd<'a>,
    /// The report pipe's write end.
    pub report: BorrowedFd<'a>,
    /// The namespace socket's shim end.
    pub keep: Option<BorrowedFd<'a>>,
}

/// A runtime's fork server: started on the first [`ForkServer::fork`], restarted when it died.
#[derive(Debug)]
pub struct ForkServer {
    shim: PathBuf,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    running: Option<Arc<Connection>>,
    /// The server could not be started: calls start their own shims from now on.
    unavailable: bool,
}

/// A running server: its socket and its process.
#[derive(Debug)]
struct Connection {
    socket: OwnedFd,
    server: Option<Child>,
}

impl Drop for Connection {
    fn drop(&mut self) {
        // No call holds this connection any more, so no shim it forked is waited for: the
        // server goes (its shims, if any are left, get their parent-death SIGTERM and stop
        // their tools), and it is reaped off the caller's thread.
        if let Some(mut server) = self.server.take() {
            let _ = server.kill();
            match launcher() {
                Some(l) => {
                    if let Err(mpsc::SendError(Launch::Reap(mut s))) = l.send(Launch::Reap(server))
                    {
                        let _ = s.wait();
                    }
                }
                None => {
                    let _ = server.wait();
                }
            }
        }
    }
}

/// A shim the server forked: the runtime waits for it and signals it through its pidfd.
#[derive(Debug)]
pub struct ForkedShim {
    pidfd: AsyncFd<OwnedFd>,
    ended: bool,
    /// The server stays up while its shim runs (its death would stop the shim).
    _server: Arc<Connection>,
}

impl ForkServer {
    /// A server for this shim program, started on the first fork.
    pub fn new(shim: PathBuf) -> Self {
        ForkServer {
            shim,
            state: Mutex::new(State::default()),
        }
    }

    /// The pid of the running server, if one runs.
    pub fn pid(&self) -> Option<u32> {
        let state = self.state.lock().ok()?;
        state.running.as_ref()?.server.as_ref().map(Child::id)
    }

    /// Forks a shim for `req` with these descriptors, starting the server first if none
    /// runs. [`NotForked::Unavailable`]: no shim was forked, the caller starts one of its own.
    /// [`NotForked::Lost`]: the server took the request and did not answer; it is killed (and
    /// a shim it may have forked stops with it), and the call must not run again.
    pub fn fork(&self, req: &ForkRequest, fds: &ShimFds<'_>) -> Result<ForkedShim, NotForked> {
        use NotForked::{Lost, Unavailable};
        let body = serde_json::to_vec(req).map_err(|_| Unavailable)?;
        if body.len() > MAX_REQUEST {
            return Err(Unavailable);
        }
        let mut state = self.state.lock().map_err(|_| Unavailable)?;
        // Twice at most: a server found dead on sending (nothing reached it) is replaced once.
        for _ in 0..2 {
            let server = match &state.running {
                Some(s) => Arc::clone(s),
                None if state.unavailable => return Err(Unavailable),
                None => match self.start() {
                    Some(s) => {
                        state.running = Some(Arc::clone(&s));
                        s
                    }
                    None => {
                        state.unavailable = true;
                        return Err(Unavailable);
                    }
                },
            };
            match server.request(&body, fds) {
                Ok(Some(pidfd)) => {
                    // SAFETY: the AsyncFd owns the OwnedFd, which stays open and returns the
                    // same descriptor until the AsyncFd is dropped.
                    let registered = unsafe {
                        AsyncFd::register_with_interest(pidfd, tokio::io::Interest::READABLE)
                    };
                    return match registered {
                        Ok(pidfd) => Ok(ForkedShim {
                            pidfd,
                            ended: false,
                            _server: server,
                        }),
                        Err(e) => {
                            // Nobody could wait for this shim: it must not run the tool.
                            let (pidfd, _) = e.into_parts();
                            let _ = pidfd_send_signal(&pidfd, Signal::KILL);
                            Err(Lost)
                        }
                    };
                }
                // The fork failed in the server (it stays): this call starts its own shim.
                Ok(None) => return Err(Unavailable),
                Err(Failed::Unsent) => state.running = None,
                Err(Failed::Unanswered) => {
                    state.running = None;
                    return Err(Lost);
                }
            }
        }
        Err(Unavailable)
    }

    /// Starts the server and waits until it is set up.
    fn start(&self) -> Option<Arc<Connection>> {
        let (ours, theirs) = socketpair(
            AddressFamily::Unix,
            SockType::SeqPacket,
            None,
            SockFlag::SOCK_CLOEXEC,
        )
        .ok()?;
        let theirs = above_stdio(theirs).ok()?;
        let mut cmd = std::process::Command::new(&self.shim);
        cmd.arg(SHIM_ARG)
            .arg(FORK_SERVER_ARG)
            .arg(theirs.as_raw_fd().to_string())
            .arg(std::process::id().to_string())
            .env_clear()
            .current_dir("/")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        inherit_across_exec(theirs, &mut cmd);
        let mut server = launch(cmd)?;
        let ready = wait_readable(ours.as_fd()) && {
            let mut byte = [0u8; 1];
            matches!(nix::unistd::read(&ours, &mut byte), Ok(1)) && byte[0] == READY
        };
        if !ready {
            let _ = server.kill();
            let _ = server.wait();
            return None;
        }
        Some(Arc::new(Connection {
            socket: ours,
            server: Some(server),
        }))
    }
}

/// Why no shim was forked for a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotForked {
    /// No shim was forked: start one for the call.
    Unavailable,
    /// The server may have forked a shim and did not say: the call fails rather than run twice.
    Lost,
}

/// Why a request failed.
enum Failed {
    /// It did not reach the server (dead): no descriptor was passed.
    Unsent,
    /// It reached the server, which did not answer properly.
    Unanswered,
}

impl Connection {
    /// Sends one request; the forked shim's pidfd, or `None` when the server could not fork.
    fn request(&self, body: &[u8], fds: &ShimFds<'_>) -> Result<Option<OwnedFd>, Failed> {
        let mut raw: Vec<RawFd> = [fds.stdin, fds.stdout, fds.stderr, fds.report]
            .iter()
            .map(AsRawFd::as_raw_fd)
            .collect();
        raw.extend(fds.keep.map(|k| k.as_raw_fd()));
        let iov = [io::IoSlice::new(body)];
        loop {
            match sendmsg::<()>(
                self.socket.as_raw_fd(),
                &iov,
                &[ControlMessage::ScmRights(&raw)],
                MsgFlags::MSG_NOSIGNAL,
                None,
            ) {
                Ok(_) => break,
                Err(Errno::EINTR) => {}
                Err(_) => return Err(Failed::Unsent),
            }
        }
        if !wait_readable(self.socket.as_fd()) {
            return Err(Failed::Unanswered);
        }
        let mut buf = [0u8; 8];
        let mut space = nix::cmsg_space!([RawFd; 1]);
        let mut iov = [io::IoSliceMut::new(&mut buf)];
        let msg = recvmsg::<()>(
            self.socket.as_raw_fd(),
            &mut iov,
            Some(&mut space),
            MsgFlags::MSG_CMSG_CLOEXEC | MsgFlags::MSG_DONTWAIT,
        )
        .map_err(|_| Failed::Unanswered)?;
        let mut received: Vec<OwnedFd> = Vec::new();
        for c in msg.cmsgs().map_err(|_| Failed::Unanswered)? {
            if let ControlMessageOwned::ScmRights(fds) = c {
                // SAFETY: descriptors just received in this message are new in this process
                // and owned by nothing else.
                received.extend(
                    fds.into_iter()
                        .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }),
                );
            }
        }
        let truncated = msg
            .flags
            .intersects(MsgFlags::MSG_TRUNC | MsgFlags::MSG_CTRUNC);
        let bytes = msg.bytes;
        if truncated || bytes != 4 {
            return Err(Failed::Unanswered);
        }
        let pid = i32::from_le_bytes([buf[0], buf[1], buf[2], buf[3]]);
        match (pid > 0, received.len()) {
            (true, 1) => Ok(received.pop()),
            (false, 0) => Ok(None),
            _ => Err(Failed::Unanswered),
        }
    }
}

impl ForkedShim {
    /// Asks the shim to stop the tool (SIGTERM: the whole tree, a grace period, then KILL).
    pub fn terminate(&self) {
        if !self.ended {
            // ESRCH: it ended meanwhile.
            let _ = pidfd_send_signal(self.pidfd.get_ref(), Signal::TERM);
        }
    }

    /// Kills the shim itself (when it did not end after a stop).
    pub fn kill(&mut self) {
        if !self.ended {
            let _ = pidfd_send_signal(self.pidfd.get_ref(), Signal::KILL);
        }
    }

    /// Waits until the shim has ended (its pidfd becomes readable; the server reaps it).
    pub async fn wait(&mut self) {
        if self.ended {
            return;
        }
        // A pidfd is readable once its process has exited, and stays so.
        if let Ok(mut ready) = self.pidfd.readable().await {
            ready.retain_ready();
        }
        self.ended = true;
    }
}

impl Drop for ForkedShim {
    /// Like `kill_on_drop` for a shim started per call: a call dropped before its shim ended
    /// kills the shim, whose tool dies with it (its parent-death SIGKILL) and whose cgroup the
    /// runtime kills.
    fn drop(&mut self) {
        self.kill();
    }
}

/// Whether `fd` becomes readable (or hung up) within [`ANSWER_TIMEOUT`].
fn wait_readable(fd: BorrowedFd<'_>) -> bool {
    let timeout = PollTimeout::try_from(ANSWER_TIMEOUT).unwrap_or(PollTimeout::MAX);
    loop {
        let mut fds = [PollFd::new(fd, PollFlags::POLLIN)];
        match poll(&mut fds, timeout) {
            Ok(n) => return n > 0,
            Err(Errno::EINTR) => {}
            Err(_) => return false,
        }
    }
}

/// What the launcher thread does.
enum Launch {
    /// Start a server and send its process back.
    Start(Box<std::process::Command>, mpsc::Sender<io::Result<Child>>),
    /// Wait for a server that was killed.
    Reap(Child),
}

/// The thread that starts every fork server and reaps the old ones. A parent-death signal
/// fires when the *thread* that forked the process ends, not the process; a server started
/// from an async worker or a blocking-pool thread would die with that thread (tokio ends idle
/// blocking threads after seconds). This thread lives as long as the process.
fn launcher() -> Option<&'static mpsc::Sender<Launch>> {
    static LAUNCHER: OnceLock<Option<mpsc::Sender<Launch>>> = OnceLock::new();
    LAUNCHER
        .get_or_init(|| {
            let (tx, rx) = mpsc::channel::<Launch>();
            std::thread::Builder::new()
                .name("toolgate-fork-server".into())
                .spawn(move || {
                    for job in rx {
                        match job {
                            Launch::Start(mut cmd, back) => {
                                let started = cmd.spawn();
                                // Closes our copy of the server's end of the socket.
                                drop(cmd);
                                let _ = back.send(started);
                            }
                            Launch::Reap(mut server) => {
                                let _ = server.wait();
                            }
                        }
                    }
                })
                .ok()
                .map(|_| tx)
        })
        .as_ref()
}

/// Starts `cmd` on the launcher thread.
fn launch(cmd: std::process::Command) -> Option<Child> {
    let (back, started) = mpsc::channel();
    launcher()?.send(Launch::Start(Box::new(cmd), back)).ok()?;
    started.recv().ok()?.ok()
}
