//! The only place toolgate starts a process: the exec shim with the tool's command line behind
//! it.
//!
//! Cleared environment (only the allowlist of [`CommandRequest::env`]), null stdin unless the
//! spec gives one, the shim in its own process group, `kill_on_drop`. The per-execution
//! cgroups are made here before the shim starts and removed here after it ends. Output is
//! captured by [`capture`] (head, tail, hash, spill to the artifact store). The shim's report
//! comes back through a pipe only the shim holds ([`report`]), read once it ended.
//!
//! Stopping (timeout or cancel, through the token): SIGTERM to the shim, which TERMs the tree,
//! waits [`TERM_GRACE_MS`] and KILLs it. If the shim itself does not end within
//! [`SHIM_EXIT_MARGIN_MS`] after that, it is killed and the cgroup with it.

use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use nix::fcntl::OFlag;
use tokio::io::AsyncWriteExt;
use tokio_util::sync::CancellationToken;

use crate::ir::ErrorType;
use crate::runtime::artifacts::{ArtifactOrigin, ArtifactRedaction, ArtifactRef};
use crate::runtime::exec::capture::{Captured, SpillTo, capture};
use crate::runtime::exec::command::CommandRequest;
use crate::runtime::exec::sandbox::cgroup::ExecCgroups;
use crate::runtime::exec::sandbox::fork_server::{
    ForkRequest, ForkServer, ForkedShim, NotForked, ShimFds,
};
use crate::runtime::exec::sandbox::shim::{ShimPlan, shim_args};
use crate::runtime::exec::sandbox::{Protection, SandboxPlan};
use crate::runtime::exec::sandbox::{keep, report};

/// Time between SIGTERM and SIGKILL when a tool is stopped: long enough for a test runner to
/// flush its report, short enough that the whole stop fits the pipeline's 2 s grace.
pub const TERM_GRACE_MS: u64 = 500;
/// How long after the grace period the shim itself may take before it is killed.
pub const SHIM_EXIT_MARGIN_MS: u64 = 1_000;
/// How long to keep reading after the shim ended. The shim kills every descendant, so the
/// pipes normally close at once; this bounds the wait if something escaped.
pub const OUTPUT_DRAIN_TIMEOUT_MS: u64 = 1_000;

/// The media type of a process's stdout artifact.
pub const STDOUT_MEDIA_TYPE: &str = "text/plain; stream=stdout";
/// The media type of a process's stderr artifact.
pub const STDERR_MEDIA_TYPE: &str = "text/plain; stream=stderr";

/// Where the output goes besides head and tail.
#[derive(Clone, Debug)]
pub struct OutputSink {
    /// The artifact store and threshold (`None`: keep only head and tail).
    pub spill: Option<SpillTo>,
    /// The tool, for the artifact's metadata.
    pub tool: String,
    /// The call, for the artifact's metadata.
    pub call_id: String,
    /// What is redacted whenever the artifact is shown.
    pub redact: ArtifactRedaction,
}

/// One captured stream, finished.
#[derive(Debug)]
pub struct StreamOutput {
    /// Head and tail.
    pub captured: Captured,
    /// The artifact holding the whole stream (above the threshold, or larger than head and
    /// tail).
    pub artifact: Option<ArtifactRef>,
}

/// Everything known about a finished process.
#[derive(Debug)]
pub struct Spawned {
    /// The tool could not run: the error type and message.
    pub setup_failure: Option<(ErrorType, String)>,
    /// Exit code.
    pub exit_code: Option<i32>,
    /// Terminating signal.
    pub signal: Option<i32>,
    /// Stopped on request (timeout or cancel).
    pub stopped: bool,
    /// Standard output.
    pub stdout: StreamOutput,
    /// Standard error.
    pub stderr: StreamOutput,
    /// The protections that were in force.
    pub protections: Vec<Protection>,
    /// Forks the process cap refused.
    pub forks_refused: u64,
    /// Processes the tool left running, killed when it ended.
    pub leftovers: u32,
}

/// What to run and how.
#[derive(Debug)]
pub struct SpawnRequest<'a> {
    /// The tool's command line, working folder, environment, stdin.
    pub command: &'a CommandRequest,
    /// The sandbox.
    pub plan: &'a SandboxPlan,
    /// The shim program (the toolgate binary).
    pub shim: &'a Path,
    /// Where the output goes.
    pub output: &'a OutputSink,
    /// Fires on timeout or cancel.
    pub cancel: CancellationToken,
    /// The runtime's fork server, if it has one: the shim is forked from it rather than
    /// started for the call.
    pub fork_server: Option<&'a ForkServer>,
}

fn empty_stream() -> StreamOutput {
    StreamOutput {
        captured: Captured {
            head: Vec::new(),
            tail: Vec::new(),
            total: 0,
            lines: 0,
            hash: blake3::hash(b""),
            spilled: None,
            spill_error: None,
        },
        artifact: None,
    }
}

fn failed(t: ErrorType, m: String) -> Spawned {
    Spawned {
        setup_failure: Some((t, m)),
        exit_code: None,
        signal: None,
        stopped: false,
        stdout: empty_stream(),
        stderr: empty_stream(),
        protections: Vec::new(),
        forks_refused: 0,
        leftovers: 0,
    }
}

/// What the shim is told for a plan, with the cgroups made for this execution and the number
/// of the report pipe's write end.
pub(crate) fn shim_plan(plan: &SandboxPlan, cgroups: &ExecCgroups, report_fd: i32) -> ShimPlan {
    ShimPlan {
        parent: std::process::id(),
        read_roots: plan.read_roots.clone(),
        write_roots: plan.write_roots.clone(),
        landlock: plan.landlock,
        scope_signals: plan.scope_signals,
        scope_abstract_sockets: plan.scope_abstract_sockets,
        deny_network: plan.deny_network,
        deny_mount: plan.deny_mount,
        view: plan.view.clone(),
        pid_namespace: plan.pid_namespace,
        rlimits: plan.rlimits.clone(),
        cgroup_v2: cgroups.v2().map(Path::to_path_buf),
        cgroup_v1_pids: cgroups.v1_pids().map(Path::to_path_buf),
        process_cap: plan.cgroup.pids_max.is_some()
            && (cgroups.v1_pids().is_some() || cgroups.v2().is_some()),
        best_effort: plan.best_effort,
        grace_ms: TERM_GRACE_MS,
        report_fd,
        keep_fd: None,
    }
}

/// Runs the command under the shim and waits for it (or stops it when `cancel` fires).
pub async fn spawn(req: SpawnRequest<'_>) -> Spawned {
    let plan = req.plan;
    let mut cgroups = match ExecCgroups::create(&plan.cgroup) {
        Ok(c) => c,
        // A best-effort profile runs without; the result then lacks the protection.
        Err(_) if plan.best_effort => ExecCgroups::default(),
        Err(e) => {
            return failed(
                ErrorType::RuntimeException,
                format!("the sandbox could not set the process cap ({e}); refusing to run"),
            );
        }
    };
    let stop_reading = CancellationToken::new();
    // Through the fork server when there is one; a shim started for the call otherwise.
    let forked = match req.fork_server {
        Some(server) => match start_forked(server, &req, &cgroups, &stop_reading) {
            Ok(s) => Some(s),
            Err(NotForked::Unavailable) => None,
            Err(NotForked::Lost) => {
                cgroups.kill();
                return failed(
                    ErrorType::RuntimeException,
                    "the fork server took the call and did not answer; it was stopped, and the call is not run again".to_owned(),
                );
            }
        },
        None => None,
    };
    let started = match forked {
        Some(s) => s,
        None => match start_shim(&req, &cgroups, &stop_reading) {
            Ok(s) => s,
            Err(f) => return *f,
        },
    };
    let Started {
        mut shim,
        report: report_reader,
        kept,
        out,
        err,
    } = started;
    let stopped = tokio::select! {
        () = shim.wait() => false,
        () = req.cancel.cancelled() => true,
    };
    if stopped {
        shim.terminate();
        let limit = Duration::from_millis(TERM_GRACE_MS + SHIM_EXIT_MARGIN_MS);
        if tokio::time::timeout(limit, shim.wait()).await.is_err() {
            shim.kill();
            cgroups.kill();
            shim.wait().await;
        }
    }
    // Whatever is left in the cgroup (a shim that was killed before it could sweep) goes now.
    cgroups.kill();
    let deadline = tokio::time::Instant::now() + Duration::from_millis(OUTPUT_DRAIN_TIMEOUT_MS);
    let stopper = stop_reading.clone();
    let drain_guard = tokio::spawn(async move {
        tokio::time::sleep_until(deadline).await;
        stopper.cancel();
    });
    let stdout = join_capture(out).await;
    let stderr = join_capture(err).await;
    drain_guard.abort();
    // The tool is gone; whatever ends its namespaces waits for the kernel, not this call.
    if let Some(kept) = kept {
        kept.release_in_background();
    }
    // The shim has ended: its report is in the pipe, or there is none. Read at once when the
    // pipe is closed (the usual case: nothing blocks, and no hand-over to another thread,
    // which costs a wake-up on a busy machine); otherwise on a blocking thread.
    let report = if report_reader.is_closed() {
        report_reader.receive()
    } else {
        tokio::task::spawn_blocking(move || report_reader.receive())
            .await
            .ok()
            .flatten()
    };
    let forks_refused = cgroups.forks_refused();
    // Removal may wait (briefly) for the kernel to empty the cgroups: not on an async worker,
    // unless they are empty already.
    if !cgroups.remove_if_empty() {
        let _ = tokio::task::spawn_blocking(move || cgroups.remove()).await;
    }
    let stdout = finish_artifact(stdout, req.output, STDOUT_MEDIA_TYPE).await;
    let stderr = finish_artifact(stderr, req.output, STDERR_MEDIA_TYPE).await;

    let Some(report) = report else {
        let mut s = failed(
            ErrorType::RuntimeException,
            format!(
                "the exec shim `{}` ended without a report (it was killed; or it is not a toolgate shim, or one from another toolgate build: build or install `toolgate` and `toolgate-shim` together; embedding programs must call `toolgate::runtime::exec::sandbox::run_shim()` when argv[1] is `__exec-shim`)",
                req.shim.display()
            ),
        );
        s.stopped = stopped;
        s.stdout = stdout;
        s.stderr = stderr;
        return s;
    };
    let setup_failure = match (&report.sandbox_error, &report.spawn_error) {
        (Some(e), _) => Some((
            ErrorType::RuntimeException,
            format!("the sandbox could not be set up ({e}); refusing to run"),
        )),
        (None, Some(e)) => Some((ErrorType::ProcessError, e.clone())),
        (None, None) => None,
    };
    // Exactly what the shim put in force (best effort may have gone without some of it).
    let protections: Vec<Protection> = report.in_force(&plan.protections);
    Spawned {
        setup_failure,
        exit_code: report.exit_code,
        signal: report.signal,
        stopped: stopped || report.stopped,
        stdout,
        stderr,
        protections,
        forks_refused,
        leftovers: report.leftovers,
    }
}

/// A shim that runs: started for the call, or forked by the fork server.
enum ShimProcess {
    /// Started for the call (its pid, taken before it is waited for).
    Spawned(tokio::process::Child, Option<nix::unistd::Pid>),
    /// Forked by the fork server.
    Forked(ForkedShim),
}

impl ShimProcess {
    async fn wait(&mut self) {
        match self {
            ShimProcess::Spawned(c, _) => {
                let _ = c.wait().await;
            }
            ShimProcess::Forked(f) => f.wait().await,
        }
    }

    /// SIGTERM: the shim stops the tree.
    fn terminate(&self) {
        match self {
            ShimProcess::Spawned(_, Some(pid)) => {
                // ESRCH: it ended meanwhile.
                let _ = nix::sys::signal::kill(*pid, nix::sys::signal::Signal::SIGTERM);
            }
            ShimProcess::Spawned(_, None) => {}
            ShimProcess::Forked(f) => f.terminate(),
        }
    }

    /// SIGKILL to the shim itself.
    fn kill(&mut self) {
        match self {
            ShimProcess::Spawned(c, _) => {
                let _ = c.start_kill();
            }
            ShimProcess::Forked(f) => f.kill(),
        }
    }
}

/// A started shim with the ends the runtime keeps: the report pipe, the namespaces, the
/// capture of its output.
struct Started {
    shim: ShimProcess,
    report: report::ReportReader,
    kept: Option<keep::KeptNamespaces>,
    out: Option<tokio::task::JoinHandle<Captured>>,
    err: Option<tokio::task::JoinHandle<Captured>>,
}

/// Captures a stream of the tool's output on a task of its own, through a larger pipe.
fn start_capture<R>(
    pipe: R,
    req: &SpawnRequest<'_>,
    stop_reading: &CancellationToken,
) -> tokio::task::JoinHandle<Captured>
where
    R: tokio::io::AsyncRead + AsFd + Unpin + Send + 'static,
{
    // Larger pipes for the output: fewer, larger reads for a tool that prints a lot (best
    // effort: an unprivileged process may not exceed the system's pipe limit).
    crate::runtime::exec::sandbox::enlarge_pipe(
        pipe.as_fd(),
        crate::runtime::exec::capture::PIPE_BYTES,
    );
    tokio::spawn(capture(
        pipe,
        req.output.spill.clone(),
        stop_reading.clone(),
    ))
}

/// Writes the tool's stdin on a task of its own.
fn feed_stdin<W>(input: Vec<u8>, mut w: W)
where
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    tokio::spawn(async move {
        // A process that exits without reading its input closes the pipe; its choice.
        let _ = w.write_all(&input).await;
    });
}

/// Starts a shim for this call: the shim program exec'd with the plan in its argv.
fn start_shim(
    req: &SpawnRequest<'_>,
    cgroups: &ExecCgroups,
    stop_reading: &CancellationToken,
) -> Result<Started, Box<Spawned>> {
    let plan = req.plan;
    let (report_reader, report_end) = match report::channel() {
        Ok(c) => c,
        Err(e) => {
            return Err(Box::new(failed(
                ErrorType::RuntimeException,
                format!("could not make the exec shim's report pipe: {e}"),
            )));
        }
    };
    let mut shim_plan = shim_plan(plan, cgroups, report_end.fd());
    // Only a view makes namespaces worth handing over; without the socket the tool's exit
    // ends them, as it always did.
    let keep = match plan.view {
        Some(_) => keep::channel().ok(),
        None => None,
    };
    shim_plan.keep_fd = keep.as_ref().map(|(_, end)| end.fd());
    let cmd = req.command;
    let mut shim = tokio::process::Command::new(req.shim);
    shim.args(shim_args(&shim_plan, &cmd.program, &cmd.args))
        .current_dir(&cmd.cwd)
        .env_clear()
        .envs(cmd.env.iter().map(|(k, v)| (k, v)))
        .stdin(if cmd.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    report_end.pass_to(&mut shim);
    let kept = keep.map(|(kept, end)| {
        end.pass_to(&mut shim);
        kept
    });
    let spawned = shim.spawn();
    // Closes our copy of the report pipe's write end: the shim's is then the only one, and
    // the reader sees the end of the report when the shim ends.
    drop(shim);
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            return Err(Box::new(failed(
                ErrorType::RuntimeException,
                format!(
                    "could not start the exec shim `{}`: {e}",
                    req.shim.display()
                ),
            )));
        }
    };
    if let (Some(input), Some(w)) = (cmd.stdin.clone(), child.stdin.take()) {
        feed_stdin(input, w);
    }
    let out = child
        .stdout
        .take()
        .map(|s| start_capture(s, req, stop_reading));
    let err = child
        .stderr
        .take()
        .map(|s| start_capture(s, req, stop_reading));
    let pid = child
        .id()
        .and_then(|p| i32::try_from(p).ok())
        .map(nix::unistd::Pid::from_raw);
    Ok(Started {
        shim: ShimProcess::Spawned(child, pid),
        report: report_reader,
        kept,
        out,
        err,
    })
}

/// Forks a shim for this call from the fork server, with pipes of its own for the output
/// and stdin, a report pipe and a namespace socket, as [`start_shim`] gives the shim it
/// starts.
fn start_forked(
    server: &ForkServer,
    req: &SpawnRequest<'_>,
    cgroups: &ExecCgroups,
    stop_reading: &CancellationToken,
) -> Result<Started, NotForked> {
    use tokio::net::unix::pipe;
    let unavailable = |_| NotForked::Unavailable;
    let (plan, cmd) = (req.plan, req.command);
    // What `std::env::set_var` would refuse goes through a shim started for the call (whose
    // start then says what is wrong).
    let bad_env = cmd
        .env
        .iter()
        .any(|(k, v)| k.is_empty() || k.contains(['=', '\0']) || v.contains('\0'));
    if bad_env {
        return Err(NotForked::Unavailable);
    }
    let (report_reader, report_end) = report::channel().map_err(unavailable)?;
    let keep = match plan.view {
        Some(_) => keep::channel().ok(),
        None => None,
    };
    let (out_read, out_write) =
        nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(|_| NotForked::Unavailable)?;
    let (err_read, err_write) =
        nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(|_| NotForked::Unavailable)?;
    let (stdin, stdin_write) = match &cmd.stdin {
        Some(_) => {
            let (r, w) =
                nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(|_| NotForked::Unavailable)?;
            (r, Some(w))
        }
        None => (
            OwnedFd::from(std::fs::File::open("/dev/null").map_err(unavailable)?),
            None,
        ),
    };
    let mut shim_plan = shim_plan(plan, cgroups, report_end.fd());
    shim_plan.keep_fd = keep.as_ref().map(|(_, end)| end.fd());
    let request = ForkRequest {
        plan: shim_plan,
        program: cmd.program.clone(),
        args: cmd.args.clone(),
        cwd: cmd.cwd.clone(),
        env: cmd.env.clone(),
    };
    let (kept, keep_end) = match keep {
        Some((kept, end)) => (Some(kept), Some(end.into_fd())),
        None => (None, None),
    };
    let report_end = report_end.into_fd();
    let fds = ShimFds {
        stdin: stdin.as_fd(),
        stdout: out_write.as_fd(),
        stderr: err_write.as_fd(),
        report: report_end.as_fd(),
        keep: keep_end.as_ref().map(AsFd::as_fd),
    };
    let forked = server.fork(&request, &fds)?;
    // The shim holds its copies now; ours go, so that the reader sees the end of the report
    // and of the output when the shim and the tool end.
    drop((stdin, out_write, err_write, report_end, keep_end));
    if let (Some(input), Some(w)) = (cmd.stdin.clone(), stdin_write)
        && let Ok(w) = pipe::Sender::from_owned_fd(w)
    {
        feed_stdin(input, w);
    }
    let out = pipe::Receiver::from_owned_fd(out_read)
        .ok()
        .map(|s| start_capture(s, req, stop_reading));
    let err = pipe::Receiver::from_owned_fd(err_read)
        .ok()
        .map(|s| start_capture(s, req, stop_reading));
    Ok(Started {
        shim: ShimProcess::Forked(forked),
        report: report_reader,
        kept,
        out,
        err,
    })
}

async fn join_capture(task: Option<tokio::task::JoinHandle<Captured>>) -> Captured {
    match task {
        Some(t) => match t.await {
            Ok(c) => c,
            Err(_) => empty_stream().captured,
        },
        None => empty_stream().captured,
    }
}

/// Finishes a spilled stream as an artifact when it is above the threshold or larger than head
/// and tail hold. A smaller one is whole in head and tail, and normalization keeps it from
/// there if the model's view of the output is cut.
pub(crate) async fn finish_artifact(
    mut c: Captured,
    sink: &OutputSink,
    media: &'static str,
) -> StreamOutput {
    let above = sink.spill.as_ref().is_some_and(|s| c.total > s.threshold) || c.omitted() > 0;
    let Some(writer) = c.spilled.take() else {
        return StreamOutput {
            captured: c,
            artifact: None,
        };
    };
    if !above {
        drop(writer);
        return StreamOutput {
            captured: c,
            artifact: None,
        };
    }
    let content = c.content();
    let (tool, call_id, redact) = (sink.tool.clone(), sink.call_id.clone(), sink.redact.clone());
    let done = tokio::task::spawn_blocking(move || {
        let origin = ArtifactOrigin {
            tool: &tool,
            call_id: &call_id,
            media_type: media,
        };
        writer.finish(content, origin, redact)
    })
    .await;
    match done {
        Ok(Ok(a)) => StreamOutput {
            captured: c,
            artifact: Some(a),
        },
        Ok(Err(e)) => {
            c.spill_error = Some(e.to_string());
            StreamOutput {
                captured: c,
                artifact: None,
            }
        }
        Err(e) => {
            c.spill_error = Some(e.to_string());
            StreamOutput {
                captured: c,
                artifact: None,
            }
        }
    }
}

/// The name of the lean shim binary installed beside `toolgate`.
pub const SHIM_BINARY: &str = "toolgate-shim";

/// The shim program: `TOOLGATE_SHIM` if set, else `toolgate-shim` beside this executable, else
/// this executable (which must dispatch [`run_shim`](super::sandbox::run_shim) in `main`).
pub fn default_shim() -> PathBuf {
    if let Some(p) = std::env::var_os("TOOLGATE_SHIM") {
        return PathBuf::from(p);
    }
    let Ok(exe) = std::env::current_exe() else {
        return PathBuf::from("toolgate");
    };
    // A separate binary starts faster than the whole command line re-executed: ~80 page faults
    // against ~600 for `toolgate` (benches/exec.rs measures both).
    match exe.parent().map(|dir| dir.join(SHIM_BINARY)) {
        Some(lean) if lean.is_file() => lean,
        _ => exe,
    }
}
