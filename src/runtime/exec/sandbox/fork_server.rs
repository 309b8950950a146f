//! The fork server: one long-lived shim per runtime that forks a shim for each tool process,
//! instead of the runtime exec'ing a new shim binary per call (the zygote pattern).
//!
//! The server is the shim binary started once, lazily on the first command tool, as
//! `toolgate-shim __exec-shim --fork-server FD PARENT`. It is single-threaded (it checks, like
//! the shim), not dumpable, dies with the runtime (a parent-death SIGKILL, armed from a thread
//! that lives as long as the process), and does nothing but wait on its socket, fork, and reap.
//! What it forks runs exactly the per-call shim's code ([`run_plan`](super::shim)) on the same
//! [`ShimPlan`]: subreaper, parent-death signal, namespaces and view, cgroup, rlimits,
//! capabilities, Landlock, seccomp, the whole-tree kill, the report pipe. Nothing of a call is
//! prepared in the server, so nothing one call sets up is seen by the next; the server only
//! compiles the protected globs once (a pure function of the runtime's project,
//! [`ProtectSpec::compiled`](super::view::ProtectSpec::compiled)) for the shims it forks.
//!
//! The protocol, over a `SOCK_SEQPACKET` socket pair (one message per request or reply):
//!
//! - Request: a [`ForkRequest`] in JSON — the plan, the command line, the working folder and
//!   the environment — with the descriptors in `SCM_RIGHTS`: stdin, stdout, stderr, the report
//!   pipe's write end, and the namespace socket when the plan has one.
//! - Reply: the forked shim's pid (4 bytes, little-endian) with a pidfd of it in `SCM_RIGHTS`;
//!   or a negative errno and no descriptor when the fork failed.
//!
//! The runtime waits for the shim on the pidfd and signals it through it (TERM to stop, KILL
//! when the shim itself does not end): no pid can be reused under it. If the server dies, the
//! next call starts a new one; if it cannot be started (or `TOOLGATE_FORK_SERVER=0`), every
//! call runs through a shim started for it, as before.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::shim::ShimPlan;

/// The argument after [`SHIM_ARG`](super::SHIM_ARG) that turns the shim into the fork server.
pub const FORK_SERVER_ARG: &str = "--fork-server";

/// The environment variable that turns the fork server off (`0`): every call then starts a
/// shim of its own.
pub const FORK_SERVER_ENV: &str = "TOOLGATE_FORK_SERVER";

/// The largest request (bytes of JSON): a request larger than this goes through a shim started
/// for it.
pub const MAX_REQUEST: usize = 256 * 1024;

/// The byte the server sends once it is set up.
pub(super) const READY: u8 = b'r';

/// One tool process to fork: what the per-call shim gets in its argv, working folder and
/// environment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForkRequest {
    /// The shim's plan (its descriptor numbers are set by the server).
    pub plan: ShimPlan,
    /// The tool's program.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// The working folder.
    pub cwd: PathBuf,
    /// The complete environment.
    pub env: Vec<(String, String)>,
}

/// Whether the environment leaves the fork server on.
pub fn enabled_by_env() -> bool {
    std::env::var_os(FORK_SERVER_ENV).is_none_or(|v| v != "0")
}

#[cfg(target_os = "linux")]
pub use linux::{ForkServer, ForkedShim, NotForked, ShimFds};

#[cfg(target_os = "linux")]
#[path = "fork_server_client.rs"]
mod linux;

#[cfg(not(target_os = "linux"))]
pub use other::{ForkServer, ForkedShim, NotForked, ShimFds};

#[cfg(not(target_os = "linux"))]
mod other {
    use std::os::fd::BorrowedFd;
    use std::path::PathBuf;

    use super::ForkRequest;

    /// Without pidfds and Linux's shim there is no fork server: every call starts a shim.
    #[derive(Debug)]
    pub struct ForkServer;

    /// Never made here.
    #[derive(Debug)]
    pub enum ForkedShim {}

    /// Why no shim was forked: here, always `Unavailable`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum NotForked {
        /// No shim was forked: start one for the call.
        Unavailable,
        /// The server may have forked a shim and did not say.
        Lost,
    }

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

    impl ForkServer {
        /// A server for this shim program (never started here).
        pub fn new(_shim: PathBuf) -> Self {
            ForkServer
        }

        /// Always `Unavailable`: the caller starts a shim.
        pub fn fork(
            &self,
            _req: &ForkRequest,
            _fds: &ShimFds<'_>,
        ) -> Result<ForkedShim, NotForked> {
            Err(NotForked::Unavailable)
        }

        /// Never runs here.
        pub fn pid(&self) -> Option<u32> {
            None
        }
    }

    impl ForkedShim {
        /// Sends SIGTERM.
        pub fn terminate(&self) {
            match *self {}
        }

        /// Sends SIGKILL.
        pub fn kill(&mut self) {
            match *self {}
        }

        /// Waits for the shim to end.
        pub async fn wait(&mut self) {
            match *self {}
        }
    }
}
