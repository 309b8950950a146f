//! Starting one upstream MCP server: under the exec shim, in the sandbox its profile describes,
//! with its standard input and output handed to rmcp's stdio transport through
//! [`CappedChild`](super::upstream_cap::CappedChild) (an answer past the message cap fails the
//! call at once), up to the end of the MCP handshake. [`McpUpstreams`](super::mcp::McpUpstreams) keeps the connections.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use indexmap::IndexMap;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};

use crate::ir::{McpServer, SandboxProfile};
use crate::policy::ProtectedSet;
use crate::runtime::exec::mcp::{UPSTREAM_START_TIMEOUT_MS, UpstreamError};
use crate::runtime::exec::sandbox::cgroup::ExecCgroups;
use crate::runtime::exec::sandbox::shim::shim_args;
use crate::runtime::exec::sandbox::{self, PlanContext, Protection, report, toolchain};
use crate::runtime::exec::spawn::shim_plan;
use crate::runtime::exec::upstream_cap::{CappedChild, OversizeRecord};

/// Where and how upstream servers are sandboxed.
#[derive(Clone, Debug)]
pub struct UpstreamSandbox {
    /// The project's sandbox profiles (a server's `sandbox:` names one).
    pub profiles: IndexMap<String, SandboxProfile>,
    /// The workspace whose protected files are masked.
    pub workspace: PathBuf,
    /// The state folder (masked too).
    pub state_dir: Option<PathBuf>,
    /// The protected set (`None`: the default set).
    pub protected: Option<Arc<ProtectedSet>>,
    /// The policy files, bound read-only (and the trust store masked) as for command tools.
    pub policy: Option<Arc<crate::policy::PolicyFiles>>,
    /// The exec shim.
    pub shim: PathBuf,
}

/// A server started and past the handshake.
pub struct Started {
    /// The connection.
    pub service: RunningService<RoleClient, ClientConfig>,
    /// The process id of its shim.
    pub pid: Option<u32>,
    /// The protections planned around it (what its profile puts in force here).
    pub protections: Vec<Protection>,
    /// Where the connection's reader notes the oversized message that ended it.
    pub oversize: OversizeRecord,
    pub(crate) cgroups: Option<ExecCgroups>,
}

impl std::fmt::Debug for Started {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Started")
            .field("pid", &self.pid)
            .field("protections", &self.protections)
            .finish_non_exhaustive()
    }
}

/// Starts one server under the exec shim and completes the MCP handshake.
pub async fn connect(
    name: &str,
    config: &McpServer,
    root: &Path,
    sandbox: &UpstreamSandbox,
) -> Result<Started, UpstreamError> {
    let Some((program, args)) = config.command.split_first() else {
        return Err(UpstreamError::EmptyCommand(name.to_owned()));
    };
    // The shim would start and the program's exec fail inside it, ending in a closed
    // connection; say what is wrong instead, as a direct start would have.
    if !program_found(
        program,
        &config.env.inherit,
        &config.env.set,
        root,
        config.cwd.as_deref(),
    ) {
        return Err(UpstreamError::Spawn {
            server: name.to_owned(),
            command: config.command.join(" "),
            source: std::io::Error::from_raw_os_error(nix::libc::ENOENT),
        });
    }
    let refused = |message: String| UpstreamError::Sandbox {
        server: name.to_owned(),
        message,
    };
    let env: Vec<(String, String)> = config
        .env
        .inherit
        .iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| (k.clone(), v)))
        .chain(config.env.set.iter().map(|(k, v)| (k.clone(), v.clone())))
        // No upstream server carries the trust of whoever started toolgate.
        .filter(|(k, _)| !crate::policy::trust::is_trust_env(k))
        .collect();
    let cwd = match &config.cwd {
        Some(c) => root.join(c),
        None => root.to_path_buf(),
    };
    let workspace = sandbox
        .workspace
        .canonicalize()
        .unwrap_or_else(|_| sandbox.workspace.clone());
    let profile = match &config.sandbox {
        Some(p) => match sandbox.profiles.get(p) {
            Some(profile) => Some((p.as_str(), profile)),
            None => {
                return Err(refused(format!(
                    "its sandbox profile `{p}` is not defined; refusing to run unsandboxed"
                )));
            }
        },
        None => None,
    };
    let toolchains = toolchain::roots(
        program,
        &env,
        &cwd,
        &toolchain::Guard {
            workspace: &workspace,
            state_dir: sandbox.state_dir.as_deref(),
        },
    );
    let plan = sandbox::plan(
        profile,
        &PlanContext {
            workspace: &workspace,
            state_dir: sandbox.state_dir.as_deref(),
            toolchains: &toolchains,
            protected: sandbox.protected.as_deref(),
            policy: sandbox.policy.as_deref(),
        },
        sandbox::probe(),
    )
    .map_err(|e| refused(e.to_string()))?;
    let cgroups = match ExecCgroups::create(&plan.cgroup) {
        Ok(c) => c,
        Err(_) if plan.best_effort => ExecCgroups::default(),
        Err(e) => {
            return Err(refused(format!(
                "the sandbox could not set the process cap ({e})"
            )));
        }
    };
    let (report_reader, report_end) = report::channel().map_err(|e| UpstreamError::Spawn {
        server: name.to_owned(),
        command: config.command.join(" "),
        source: e,
    })?;
    let mut cmd = tokio::process::Command::new(&sandbox.shim);
    cmd.args(shim_args(
        &shim_plan(&plan, &cgroups, report_end.fd()),
        program,
        args,
    ))
    .env_clear()
    .envs(env)
    .current_dir(cwd)
    .kill_on_drop(true);
    report_end.pass_to(&mut cmd);
    let spawn_error = |source| UpstreamError::Spawn {
        server: name.to_owned(),
        command: config.command.join(" "),
        source,
    };
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let child = cmd.spawn().map_err(spawn_error)?;
    let oversize = OversizeRecord::default();
    let transport = CappedChild::new(child, oversize.clone()).ok_or_else(|| {
        spawn_error(std::io::Error::other(
            "the server's stdin or stdout was not piped",
        ))
    })?;
    // The shim's report tells what it put in force once it ends; nobody waits for it (the
    // shim's write then fails quietly), the plan's list stands for the server.
    drop(report_reader);
    let pid = transport.id();
    let info = ClientConfig::new(
        ClientCapabilities::default(),
        Implementation::new("toolgate", env!("CARGO_PKG_VERSION")),
    );
    let service = match tokio::time::timeout(
        Duration::from_millis(UPSTREAM_START_TIMEOUT_MS),
        info.serve(transport),
    )
    .await
    {
        Ok(Ok(running)) => running,
        Ok(Err(e)) => {
            return Err(UpstreamError::Handshake {
                server: name.to_owned(),
                message: e.to_string(),
            });
        }
        Err(_) => return Err(UpstreamError::StartTimeout(name.to_owned())),
    };
    Ok(Started {
        service,
        pid,
        protections: plan.protections,
        oversize,
        cgroups: Some(cgroups),
    })
}

/// Whether a server's program exists where its start would look for it: on the `PATH` it
/// gets (or the default search path without one), or at its path from its working folder.
fn program_found(
    program: &str,
    inherit: &[String],
    set: &IndexMap<String, String>,
    root: &Path,
    cwd: Option<&str>,
) -> bool {
    if program.contains('/') {
        let cwd = cwd.map_or_else(|| root.to_path_buf(), |c| root.join(c));
        return cwd.join(program).exists();
    }
    let path = set.get("PATH").cloned().or_else(|| {
        inherit
            .iter()
            .any(|k| k == "PATH")
            .then(|| std::env::var("PATH").ok())
            .flatten()
    });
    path.as_deref()
        .unwrap_or("/usr/local/bin:/usr/bin:/bin")
        .split(':')
        .any(|d| Path::new(d).join(program).is_file())
}
