//! The subprocess backend: `exec: {command: …}` tools.
//!
//! Two steps, kept apart so a sandboxing exec-shim can replace the second and keep the first:
//! [`prepare`] evaluates the argv template into a [`CommandRequest`] (each element exactly one
//! argv entry, `when` elements included or not, `each` elements one entry per list item;
//! `shell: true` runs the first element with `bash -c`, later elements becoming `$0`, `$1`, …),
//! resolves the working folder inside the workspace, and builds the environment from nothing
//! but the spec's allowlist; [`spawn`] starts the process in its own process group with that
//! environment, feeds stdin, captures stdout and stderr as a bounded head and tail, and on
//! timeout or cancellation kills the whole group. Not here yet (the shim's job): subreaper and
//! cgroup containment of daemonizing grandchildren, rlimits, Landlock and seccomp, streaming the
//! full output to the artifact store, and per-tool formatters beyond `bash` and `json`.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cel::Program;
use serde_json::{Value, json};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use crate::cel::{Bindings, Evaluator};
use crate::ir::template::{TemplatePart, parse};
use crate::ir::{ArgvElement, CommandSpec, ErrorType, FormatterKind};
use crate::runtime::exec::{ExecContext, ExecFailure, ExecFuture, Executor, RawOutcome};
use crate::runtime::output::{Redactor, bound};
use crate::runtime::permission::AuthorizedCall;
use crate::runtime::workspace::Workspace;

/// Bytes kept from the start of each stream.
const CAPTURE_HEAD_BYTES: usize = 512 * 1024;
/// Bytes kept from the end of each stream.
const CAPTURE_TAIL_BYTES: usize = 512 * 1024;
/// Read size; large enough that a chatty process is drained quickly.
const READ_CHUNK: usize = 64 * 1024;
/// How long to keep reading after the process ended: a grandchild that kept the pipe open
/// would otherwise hang the call forever.
const OUTPUT_DRAIN_TIMEOUT_MS: u64 = 1_000;
/// The shell for `shell: true`.
const SHELL: &str = "bash";

/// A template compiled: literal text and CEL placeholders.
#[derive(Debug)]
struct Template(Vec<Part>);

#[derive(Debug)]
enum Part {
    Literal(String),
    Expr(Program),
}

#[derive(Debug)]
enum Arg {
    One(Template),
    When(Program, Template),
    Each(Program),
}

/// A command spec with its templates compiled (at load).
#[derive(Debug)]
pub struct CompiledCommand {
    argv: Vec<Arg>,
    cwd: Option<Template>,
    inherit: Vec<String>,
    set: Vec<(String, Template)>,
    secret: Vec<String>,
    stdin: Option<Program>,
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
    let ev = Evaluator::new(&Bindings {
        args: call.arguments(),
        tool_name: &def.name,
        tool_effect: def.effect.as_str(),
        tool_version: def.version,
        context,
        workspace: &root,
    })
    .map_err(|e| fail(e.to_string()))?;
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
    let (program, args) = if cmd.shell {
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
    let mut env: Vec<(String, String)> = cmd
        .inherit
        .iter()
        .filter_map(|k| std::env::var(k).ok().map(|v| (k.clone(), v)))
        .collect();
    for (k, t) in &cmd.set {
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

/// One stream's bounded capture: a head, a tail, and how much passed between.
#[derive(Debug, Default)]
struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

impl Capture {
    fn push(&mut self, mut chunk: &[u8]) {
        self.total += chunk.len() as u64;
        let room = CAPTURE_HEAD_BYTES - self.head.len();
        let take = room.min(chunk.len());
        self.head.extend_from_slice(&chunk[..take]);
        chunk = &chunk[take..];
        self.tail.extend(chunk);
        let excess = self.tail.len().saturating_sub(CAPTURE_TAIL_BYTES);
        self.tail.drain(..excess);
    }

    fn omitted(&self) -> u64 {
        self.total - self.head.len() as u64 - self.tail.len() as u64
    }

    fn text(&self) -> String {
        let mut s = String::from_utf8_lossy(&self.head).into_owned();
        if self.omitted() > 0 {
            s.push_str(&format!("\n[… {} bytes omitted …]\n", self.omitted()));
        }
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        s.push_str(&String::from_utf8_lossy(&tail));
        s
    }
}

fn lock(c: &Mutex<Capture>) -> std::sync::MutexGuard<'_, Capture> {
    match c.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

async fn pump(mut r: impl AsyncRead + Unpin, cap: Arc<Mutex<Capture>>) {
    let mut buf = vec![0u8; READ_CHUNK];
    while let Ok(n) = r.read(&mut buf).await {
        if n == 0 {
            break;
        }
        lock(&cap).push(&buf[..n]);
    }
}

fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid
        .and_then(|p| i32::try_from(p).ok())
        .and_then(rustix::process::Pid::from_raw)
    {
        // ESRCH (the group is gone already) is the expected case after a clean exit.
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// Starts the process and waits for it, or kills its process group when `cancel` fires.
pub async fn spawn(
    req: CommandRequest,
    formatter: FormatterKind,
    max_bytes: u64,
    cancel: CancellationToken,
) -> RawOutcome {
    let mut cmd = tokio::process::Command::new(&req.program);
    cmd.args(&req.args)
        .current_dir(&req.cwd)
        .env_clear()
        .envs(req.env.iter().map(|(k, v)| (k, v)))
        .stdin(if req.stdin.is_some() {
            std::process::Stdio::piped()
        } else {
            std::process::Stdio::null()
        })
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return RawOutcome::failure(
                ErrorType::ProcessError,
                format!("could not start `{}`: {e}", req.program),
            );
        }
    };
    let pid = child.id();
    if let (Some(input), Some(mut w)) = (req.stdin, child.stdin.take()) {
        tokio::spawn(async move {
            // A process that exits without reading its input closes the pipe; that is its choice.
            let _ = w.write_all(&input).await;
        });
    }
    let out = Arc::new(Mutex::new(Capture::default()));
    let err = Arc::new(Mutex::new(Capture::default()));
    let mut readers = Vec::new();
    if let Some(s) = child.stdout.take() {
        readers.push(tokio::spawn(pump(s, out.clone())));
    }
    if let Some(s) = child.stderr.take() {
        readers.push(tokio::spawn(pump(s, err.clone())));
    }
    let (status, stopped) = tokio::select! {
        s = child.wait() => (s.ok(), false),
        _ = cancel.cancelled() => {
            kill_group(pid);
            (child.wait().await.ok(), true)
        }
    };
    // Background processes the command left in its group end with it.
    kill_group(pid);
    let deadline = tokio::time::Instant::now() + Duration::from_millis(OUTPUT_DRAIN_TIMEOUT_MS);
    for r in readers {
        let abort = r.abort_handle();
        if tokio::time::timeout_at(deadline, r).await.is_err() {
            abort.abort();
        }
    }
    let (out, err) = (lock(&out), lock(&err));
    let redactor = Redactor {
        secrets: false,
        patterns: &[],
        literals: &req.secret_values,
    };
    let mut text = out.text();
    if err.total > 0 {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str("--- stderr ---\n");
        text.push_str(&err.text());
    }
    let text = redactor.text(&text);
    let truncated = out.omitted() + err.omitted() > 0;
    let code = status.and_then(|s| s.code());
    let signal = status.and_then(|s| std::os::unix::process::ExitStatusExt::signal(&s));
    let structured = match formatter {
        FormatterKind::Bash => {
            let b = bound(&text, max_bytes, u64::MAX, crate::ir::OutputKeep::HeadTail);
            Some(json!({
                "command": req.display,
                "exit_code": code.unwrap_or_else(|| 128 + signal.unwrap_or(0)),
                "output": b.text,
                "truncated": truncated || b.truncated,
            }))
        }
        FormatterKind::Json if code == Some(0) => serde_json::from_slice::<Value>(&out.head)
            .ok()
            .filter(|_| out.omitted() == 0 && out.tail.is_empty()),
        _ => None,
    };
    let failure = if stopped {
        Some((
            ErrorType::ProcessError,
            format!("`{}` was stopped", req.display),
        ))
    } else {
        match (code, signal) {
            (Some(0), _) => None,
            (Some(c), _) => Some((
                ErrorType::ProcessError,
                format!("`{}` exited with code {c}", req.display),
            )),
            (None, Some(s)) => Some((
                ErrorType::ProcessError,
                format!("`{}` was killed by signal {s}", req.display),
            )),
            (None, None) => Some((
                ErrorType::ProcessError,
                format!("`{}` ended without an exit status", req.display),
            )),
        }
    };
    RawOutcome {
        failure,
        summary: None,
        structured,
        text: Some(text),
        exit_code: code,
        truncated,
        artifacts: Vec::new(),
    }
}

/// The subprocess backend ([`prepare`] + [`spawn`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct CommandExecutor;

impl Executor for CommandExecutor {
    fn run<'a>(&'a self, call: AuthorizedCall, ctx: ExecContext) -> ExecFuture<'a> {
        let prepared = prepare(&call, &ctx.context, &ctx.workspace);
        let output = call.definition().output.clone();
        Box::pin(async move {
            match prepared {
                Ok(req) => spawn(req, output.formatter, output.max_bytes, ctx.cancel).await,
                Err(failure) => failure.into(),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_keeps_head_and_tail() {
        let mut c = Capture::default();
        c.push(&vec![b'a'; CAPTURE_HEAD_BYTES]);
        c.push(&[b'b'; 10]);
        c.push(&vec![b'c'; CAPTURE_TAIL_BYTES]);
        assert_eq!(c.omitted(), 10);
        assert!(c.text().contains("[… 10 bytes omitted …]"));
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("src/x.rs"), "src/x.rs");
    }
}
