//! The command backend: `exec: {command: …}` tools.
//!
//! Three steps: [`prepare`] evaluates the argv template into a [`CommandRequest`] (each
//! element exactly one argv entry, `when` elements included or not, `each` elements one entry
//! per list item; no shell unless `shell: true`, which runs the first element with `bash -c`,
//! later elements becoming `$0`, `$1`, …), resolves the working folder inside the workspace,
//! and builds the environment from nothing but the spec's allowlist. The tool's sandbox profile
//! becomes a [`SandboxPlan`] ([`sandbox::plan`]), failing closed when the kernel lacks what the
//! profile needs. [`spawn`](crate::runtime::exec::spawn::spawn) runs it under the exec shim, and
//! the tool's [`format`](crate::runtime::format) formatter turns the output into the result.
//!
//! A failure the sandbox caused is told apart where it can be: a signal or shell exit code of
//! an exceeded rlimit (SIGXCPU, SIGXFSZ), forks refused by the process cap, and — when Landlock
//! or the network filter was in force and the process failed — the EACCES/EPERM messages
//! they cause ("Permission denied", "Operation not permitted"). Those end SANDBOX_VIOLATION.

use std::path::PathBuf;
use std::sync::Arc;

use crate::cel::Compiled;
use indexmap::IndexMap;

use crate::cel::{Bindings, Evaluator};
use crate::ir::template::{TemplatePart, parse};
use crate::ir::{ArgvElement, CommandSpec, ErrorType, SandboxProfile};
use crate::runtime::artifacts::ArtifactRedaction;
use crate::runtime::exec::capture::SpillTo;
use crate::runtime::exec::outcome;
use crate::runtime::exec::sandbox::fork_server::{self, ForkServer};
use crate::runtime::exec::sandbox::{self, KernelFeatures, PlanContext, SandboxPlan, toolchain};
use crate::runtime::exec::spawn::{OutputSink, SpawnRequest, default_shim, spawn};
use crate::runtime::exec::{ExecContext, ExecFailure, ExecFuture, Executor};
use crate::runtime::permission::AuthorizedCall;
use crate::runtime::workspace::Workspace;

/// The most bytes one argument or environment string can have (Linux's MAX_ARG_STRLEN, 32
/// pages, less the terminating NUL); a longer one would make exec fail with E2BIG.
const MAX_ARG_BYTES: usize = 128 * 1024 - 1;
/// The most bytes of arguments and environment together: well under the usual ARG_MAX (2 MiB)
/// so the shim's own arguments still fit.
const MAX_ARGV_TOTAL_BYTES: usize = 1024 * 1024;
/// The shell for `shell: true`.
const SHELL: &str = "bash";

/// A template compiled: literal text and CEL placeholders.
#[derive(Debug)]
struct Template(Vec<Part>);

#[derive(Debug)]
enum Part {
    Literal(String),
    Expr(Compiled),
}

#[derive(Debug)]
enum Arg {
    One(Template),
    When(Compiled, Template),
    Each(Compiled),
}

/// A command spec with its templates compiled (at load).
#[derive(Debug)]
pub struct CompiledCommand {
    argv: Vec<Arg>,
    cwd: Option<Template>,
    inherit: Vec<String>,
    set: Vec<(String, Template)>,
    secret: Vec<String>,
    stdin: Option<Compiled>,
    shell: bool,
}

/// A process ready to start: what the shim (or [`spawn`]) runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandRequest {
    /// The program (looked up in the allowlisted PATH when not a path).
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// The working folder (absolute, inside the workspace).
    pub cwd: PathBuf,
    /// The complete environment.
    pub env: Vec<(String, String)>,
    /// Bytes written to stdin (stdin is /dev/null otherwise).
    pub stdin: Option<Vec<u8>>,
    /// Values of secret variables, redacted from the output.
    pub secret_values: Vec<String>,
    /// The command as shown to the model.
    pub display: String,
}

fn compile_template(src: &str) -> Result<Template, String> {
    let parts = parse(src).map_err(|e| format!("template `{src}`: {}", e.message))?;
    parts
        .into_iter()
        .map(|p| match p {
            TemplatePart::Literal(s) => Ok(Part::Literal(s)),
            TemplatePart::Expr { source, .. } => crate::cel::compile(&source)
                .map(Part::Expr)
                .map_err(|e| format!("placeholder `{source}` does not compile: {}", first(&e))),
        })
        .collect::<Result<_, _>>()
        .map(Template)
}

fn first(e: &[crate::cel::SyntaxError]) -> String {
    e.first().map(|e| e.message.clone()).unwrap_or_default()
}

impl CompiledCommand {
    /// Compiles a command spec.
    pub fn compile(spec: &CommandSpec) -> Result<Self, String> {
        let cel = |s: &str| {
            crate::cel::compile(s).map_err(|e| format!("`{s}` does not compile: {}", first(&e)))
        };
        let argv = spec
            .argv
            .iter()
            .map(|a| match a {
                ArgvElement::Template(t) => compile_template(t).map(Arg::One),
                ArgvElement::When { when, value } => {
                    Ok(Arg::When(cel(when)?, compile_template(value)?))
                }
                ArgvElement::Each(e) => cel(e).map(Arg::Each),
            })
            .collect::<Result<_, _>>()?;
        Ok(CompiledCommand {
            argv,
            cwd: spec.cwd.as_deref().map(compile_template).transpose()?,
            inherit: spec.env.inherit.clone(),
            set: spec
                .env
                .set
                .iter()
                .map(|(k, v)| compile_template(v).map(|t| (k.clone(), t)))
                .collect::<Result<_, _>>()?,
            secret: spec.env.secret.clone(),
            stdin: spec.stdin.as_deref().map(cel).transpose()?,
            shell: spec.shell,
        })
    }
}

fn render(t: &Template, ev: &Evaluator<'_>) -> Result<String, String> {
    let mut out = String::new();
    for p in &t.0 {
        match p {
            Part::Literal(s) => out.push_str(s),
            Part::Expr(e) => out.push_str(&ev.text(e).map_err(|e| e.to_string())?),
        }
    }
    Ok(out)
}

fn item_text(v: &cel::Value) -> String {
    match v {
        cel::Value::String(s) => s.to_string(),
        cel::Value::Int(i) => i.to_string(),
        cel::Value::UInt(u) => u.to_string(),
        cel::Value::Bool(b) => b.to_string(),
        other => crate::cel::value::cel_to_json(other).to_string(),
    }
}

/// Builds the process request of a call: argv, working folder, environment, stdin.
pub fn prepare(
    call: &AuthorizedCall,
    context: &str,
    workspace: &Workspace,
) -> Result<CommandRequest, ExecFailure> {
    let def = call.definition();
    let Some(cmd) = call.compiled().command.as_ref() else {
        return Err(ExecFailure::new(
            ErrorType::RuntimeException,
            format!("`{}` is not a command tool", def.name),
        ));
    };
    let fail =
        |m: String| ExecFailure::new(ErrorType::RuntimeException, format!("{}: {m}", def.name));
    let root = workspace.root().to_string_lossy().into_owned();
    let functions = crate::cel::Functions::shared().map_err(|e| fail(e.to_string()))?;
    let ev = Evaluator::in_scope(
        functions,
        &Bindings {
            args: call.arguments(),
            tool_name: &def.name,
            tool_effect: def.effect.as_str(),
            tool_version: def.version,
            context,
            workspace: &root,
        },
    );
    let mut argv = Vec::new();
    for a in &cmd.argv {
        match a {
            Arg::One(t) => argv.push(render(t, &ev).map_err(&fail)?),
            Arg::When(c, t) => {
                if ev.condition(c).map_err(|e| fail(e.to_string()))? {
                    argv.push(render(t, &ev).map_err(&fail)?);
                }
            }
            Arg::Each(e) => match ev.value(e).map_err(|e| fail(e.to_string()))? {
                cel::Value::List(items) => argv.extend(items.iter().map(item_text)),
                other => argv.push(item_text(&other)),
            },
        }
    }
    if argv.first().is_none_or(|p| p.is_empty()) {
        return Err(fail("the command line is empty".into()));
    }
    let display = if cmd.shell {
        argv[0].clone()
    } else {
        argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ")
    };
    let (program, args): (String, Vec<String>) = if cmd.shell {
        (
            SHELL.to_owned(),
            std::iter::once("-c".to_owned()).chain(argv).collect(),
        )
    } else {
        let mut it = argv.into_iter();
        (it.next().unwrap_or_default(), it.collect())
    };
    let cwd_rel = match &cmd.cwd {
        Some(t) => render(t, &ev).map_err(&fail)?,
        None => ".".to_owned(),
    };
    let cwd = workspace.check(&cwd_rel).map_err(|v| {
        ExecFailure::new(
            ErrorType::SemanticValidationError,
            format!("working folder: {v}"),
        )
    })?;
    if !workspace.dir().is_dir(cwd.as_path()) {
        return Err(ExecFailure::new(
            ErrorType::ResourceNotFound,
            format!("the working folder `{cwd_rel}` does not exist"),
        ));
    }
    // No TOOLGATE_TRUST_* reaches a tool, inherited or set: a tool that starts toolgate
    // again (or leaves a script behind) must not carry the trust of whoever started this run.
    let mut env: Vec<(String, String)> = cmd
        .inherit
        .iter()
        .filter(|k| !crate::policy::trust::is_trust_env(k))
        .filter_map(|k| std::env::var(k).ok().map(|v| (k.clone(), v)))
        .collect();
    for (k, t) in cmd
        .set
        .iter()
        .filter(|(k, _)| !crate::policy::trust::is_trust_env(k))
    {
        env.push((k.clone(), render(t, &ev).map_err(&fail)?));
    }
    env.push((
        crate::runtime::journal::IDEMPOTENCY_KEY_ENV.into(),
        call.idempotency_key().into(),
    ));
    let secret_values = cmd
        .secret
        .iter()
        .filter_map(|k| std::env::var(k).ok())
        .collect();
    check_exec_strings(&argv_of(&program, args.as_slice()), &env)?;
    let stdin = match &cmd.stdin {
        Some(p) => Some(ev.text(p).map_err(|e| fail(e.to_string()))?.into_bytes()),
        None => None,
    };
    Ok(CommandRequest {
        program,
        args,
        cwd: workspace.absolute(&cwd),
        env,
        stdin,
        secret_values,
        display,
    })
}

fn argv_of<'a>(program: &'a str, args: &'a [String]) -> Vec<&'a str> {
    std::iter::once(program)
        .chain(args.iter().map(String::as_str))
        .collect()
}

/// Refuses what exec(2) cannot carry: a NUL byte (the C strings would end early, changing the
/// argument) or an argument past the kernel's size limits — as INVALID_ARGUMENTS, naming it.
fn check_exec_strings(argv: &[&str], env: &[(String, String)]) -> Result<(), ExecFailure> {
    let invalid = |m: String| ExecFailure::new(ErrorType::InvalidArguments, m);
    let mut total = 0;
    for (i, a) in argv.iter().enumerate() {
        if a.contains('\0') {
            return Err(invalid(format!(
                "argument {i} of the command contains a NUL byte, which a process argument cannot carry"
            )));
        }
        if a.len() > MAX_ARG_BYTES {
            return Err(invalid(format!(
                "argument {i} of the command is {} bytes; one process argument holds at most {MAX_ARG_BYTES}",
                a.len()
            )));
        }
        total += a.len() + 1;
    }
    for (k, v) in env {
        if k.contains('\0') || v.contains('\0') {
            return Err(invalid(format!(
                "the environment variable {k} contains a NUL byte"
            )));
        }
        if k.len() + v.len() + 1 > MAX_ARG_BYTES {
            return Err(invalid(format!(
                "the environment variable {k} is longer than {MAX_ARG_BYTES} bytes"
            )));
        }
        total += k.len() + v.len() + 2;
    }
    if total > MAX_ARGV_TOTAL_BYTES {
        return Err(invalid(format!(
            "the command line and environment are {total} bytes; at most {MAX_ARGV_TOTAL_BYTES} fit"
        )));
    }
    Ok(())
}

/// Single-quotes an argument for display when it needs it.
fn quote(a: &str) -> String {
    if !a.is_empty()
        && a.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b))
    {
        a.to_owned()
    } else {
        format!("'{}'", a.replace('\'', r"'\''"))
    }
}

/// The command backend: `prepare`, the sandbox plan, the shim, the formatter.
#[derive(Clone, Debug)]
pub struct CommandExecutor {
    shim: PathBuf,
    profiles: Arc<IndexMap<String, SandboxProfile>>,
    kernel: Option<Arc<KernelFeatures>>,
    /// Forks each tool's shim; `None`: every call starts a shim of its own.
    fork_server: Option<Arc<ForkServer>>,
}

impl Default for CommandExecutor {
    fn default() -> Self {
        CommandExecutor::new(IndexMap::new())
    }
}

impl CommandExecutor {
    /// A backend with the project's sandbox profiles, running tools under this executable
    /// as the shim (or `TOOLGATE_SHIM`).
    pub fn new(profiles: IndexMap<String, SandboxProfile>) -> Self {
        let shim = default_shim();
        CommandExecutor {
            fork_server: fork_server::enabled_by_env()
                .then(|| Arc::new(ForkServer::new(shim.clone()))),
            shim,
            profiles: Arc::new(profiles),
            kernel: None,
        }
    }

    /// Uses another toolgate binary as the exec shim (e.g. from a test or an embedding program
    /// that does not dispatch the shim itself).
    pub fn with_shim(mut self, shim: impl Into<PathBuf>) -> Self {
        self.shim = shim.into();
        if self.fork_server.is_some() {
            self.fork_server = Some(Arc::new(ForkServer::new(self.shim.clone())));
        }
        self
    }

    /// Whether each tool's shim is forked from a fork server started once (the default,
    /// unless `TOOLGATE_FORK_SERVER=0`), or started for each call.
    pub fn with_fork_server(mut self, on: bool) -> Self {
        self.fork_server = on.then(|| Arc::new(ForkServer::new(self.shim.clone())));
        self
    }

    /// The pid of this backend's fork server while one runs (started on the first process
    /// tool).
    pub fn fork_server_pid(&self) -> Option<u32> {
        self.fork_server.as_ref().and_then(|s| s.pid())
    }

    /// Plans against these kernel features instead of the probed ones (to check how profiles
    /// fail closed on a kernel without them).
    pub fn with_kernel(mut self, kernel: KernelFeatures) -> Self {
        self.kernel = Some(Arc::new(kernel));
        self
    }

    /// The sandbox plan of a tool's profile for one process (its workspace, state folder,
    /// toolchain and protected set).
    pub fn plan(
        &self,
        profile: Option<&str>,
        context: &PlanContext<'_>,
    ) -> Result<SandboxPlan, ExecFailure> {
        let kernel = match &self.kernel {
            Some(k) => k.as_ref(),
            None => sandbox::probe(),
        };
        let profile = match profile {
            Some(name) => match self.profiles.get(name) {
                Some(p) => Some((name, p)),
                None => {
                    return Err(ExecFailure::new(
                        ErrorType::RuntimeException,
                        format!(
                            "the sandbox profile `{name}` is not defined; refusing to run unsandboxed"
                        ),
                    ));
                }
            },
            None => None,
        };
        sandbox::plan(profile, context, kernel)
            .map_err(|e| ExecFailure::new(ErrorType::RuntimeException, e.to_string()))
    }
}

impl Executor for CommandExecutor {
    fn run<'a>(&'a self, call: AuthorizedCall, ctx: ExecContext) -> ExecFuture<'a> {
        let def = call.definition();
        let prepared = prepare(&call, &ctx.context, &ctx.workspace);
        let root = ctx.workspace.root();
        let state_dir = ctx.artifacts.root().parent();
        let plan = prepared.as_ref().map_err(Clone::clone).and_then(|req| {
            let guard = toolchain::Guard {
                workspace: root,
                state_dir,
            };
            let toolchains = toolchain::roots(&req.program, &req.env, &req.cwd, &guard);
            self.plan(
                def.sandbox.as_deref(),
                &PlanContext {
                    workspace: root,
                    state_dir,
                    toolchains: &toolchains,
                    protected: Some(ctx.workspace.protected()),
                    policy: ctx.workspace.policy_files().map(|p| p.as_ref()),
                },
            )
        });
        let output = def.output.clone();
        let sink = OutputSink {
            spill: Some(SpillTo {
                store: ctx.artifacts.clone(),
                threshold: output.artifact_threshold,
                allowance: ctx.artifacts.allowance_of(ctx.artifact_owner()),
            }),
            tool: def.name.clone(),
            call_id: call.call_id().to_owned(),
            redact: ArtifactRedaction {
                secrets: output.redact_secrets,
                patterns: output.redact.clone(),
                literals: Vec::new(),
            },
        };
        Box::pin(async move {
            let (req, plan) = match (prepared, plan) {
                (Ok(r), Ok(p)) => (r, p),
                (Err(f), _) | (_, Err(f)) => return f.into(),
            };
            let mut sink = sink;
            sink.redact.literals = req.secret_values.clone();
            let spawned = spawn(SpawnRequest {
                command: &req,
                plan: &plan,
                shim: &self.shim,
                output: &sink,
                cancel: ctx.cancel,
                fork_server: self.fork_server.as_deref(),
            })
            .await;
            outcome::outcome(&req, &plan, &output, spawned)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_for_display() {
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("src/x.rs"), "src/x.rs");
        assert_eq!(quote("it's"), "'it'\\''s'");
    }
}
