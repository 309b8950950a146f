//! `toolgate run --calls FILE.jsonl`: run a batch of calls (one JSON object per line:
//! `{"name": …, "arguments": {…}, "call_id": …, "idempotency_key": …}`) as one model turn —
//! print the schedule, then the results. A file longer than one turn runs as several, in order
//! (see `calls`).
//!
//! With `--session ID` a run resumes that session: every call is recognised by its idempotency
//! key (by default session + call id; a line without `call_id` is `call-N` by position), so a
//! call that already finished in the journal returns its recorded result instead of running
//! again, and one a crash cut off is settled by recovery first (re-run, or UNKNOWN_OUTCOME).
//!
//! `toolgate run --provider openai-chat --reply reply.json`: the calls are a model's reply as
//! the provider sends it (src/runtime/provider), run as one turn; what is printed is the JSON
//! array of the messages (or items) the harness appends after the model's turn.

use std::path::PathBuf;

use clap::Args;
mod calls;

use std::io::BufRead;

use super::call::{Failed, OutputFormat, RuntimeArgs, execute, exit_code, fail, load, result_json};
use crate::runtime::{Provider, ProviderAdapter};
use calls::CallsReader;

/// Arguments of `toolgate run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The calls, one JSON object per line (`-` for stdin).
    #[arg(long, required_unless_present = "reply", conflicts_with = "reply")]
    pub calls: Option<PathBuf>,
    /// A model's reply as the provider sent it (`-` for stdin): its tool calls run as one turn
    /// and the provider's result messages are printed.
    #[arg(long, requires = "provider")]
    pub reply: Option<PathBuf>,
    /// The provider whose reply `--reply` is.
    #[arg(long, value_parser = parse_provider, requires = "reply")]
    pub provider: Option<Provider>,
    /// The session id: resumes it (calls already finished in the journal are replayed, not
    /// run again); grants given during the run belong to it.
    #[arg(long)]
    pub session: Option<String>,
    #[command(flatten)]
    pub runtime: RuntimeArgs,
}

fn parse_provider(s: &str) -> Result<Provider, String> {
    Provider::parse(s).ok_or_else(|| {
        let all: Vec<&str> = Provider::ALL.iter().map(|p| p.as_str()).collect();
        format!("unknown provider `{s}`; use one of: {}", all.join(", "))
    })
}

fn read(path: &std::path::Path) -> Result<String, Failed> {
    let text = if path.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin())
    } else {
        std::fs::read_to_string(path)
    };
    text.map_err(|e| Failed(format!("cannot read {}: {e}", path.display())))
}

/// Runs `toolgate run`.
pub fn run(a: RunArgs) -> miette::Result<u8> {
    if let (Some(reply), Some(provider)) = (&a.reply, a.provider) {
        return match run_reply(&a, reply, provider) {
            Ok(code) => Ok(code),
            Err(Failed(m)) => fail(&m),
        };
    }
    let Some(path) = &a.calls else {
        return fail(
            "give the calls with --calls FILE, or a model's reply with --provider P --reply FILE",
        );
    };
    let stdin = path.as_os_str() == "-";
    let open = || -> Result<Box<dyn BufRead>, Failed> {
        if stdin {
            return Ok(Box::new(std::io::stdin().lock()));
        }
        std::fs::File::open(path)
            .map(|f| Box::new(std::io::BufReader::with_capacity(1 << 16, f)) as Box<dyn BufRead>)
            .map_err(|e| Failed(format!("cannot read {}: {e}", path.display())))
    };
    // A file is checked whole before anything runs, so a bad line anywhere runs nothing; stdin
    // cannot be read twice and runs as it arrives, stopping at its first bad line.
    if !stdin && let Err(Failed(m)) = open().and_then(|r| CallsReader::new(r).check_all()) {
        return fail(&m);
    }
    let mut reader = match open() {
        Ok(r) => CallsReader::new(r),
        Err(Failed(m)) => return fail(&m),
    };
    let (runtime, session) = match load(&a.runtime, a.session.as_deref()) {
        Ok(x) => x,
        Err(Failed(m)) => return fail(&m),
    };
    let mut code = super::EXIT_OK;
    let (mut ran, mut replayed, mut turns) = (0usize, 0usize, 0usize);
    loop {
        let calls = match reader.next_turn() {
            Ok(c) if c.is_empty() && turns > 0 => break,
            Ok(c) => c,
            Err(Failed(m)) => {
                return fail(&format!(
                    "{m}\n(the {ran} call(s) before it ran; their results are above)"
                ));
            }
        };
        let first = ran;
        let n = calls.len();
        let mut execution = match execute(&runtime, &session, calls) {
            Ok(x) => x,
            Err(Failed(m)) => return fail(&m),
        };
        execution.plan.shift(first);
        turns += 1;
        ran += n;
        let mut out = String::new();
        if turns > 1 {
            out.push_str(&format!(
                "\n── turn {turns}: calls #{} to #{ran} ──\n",
                first + 1
            ));
        }
        match a.runtime.format {
            OutputFormat::Text => {
                out.push_str(&execution.plan.to_string());
                for (i, r) in execution.results.iter().enumerate() {
                    out.push_str(&format!("\n── #{} {} ──\n", first + i + 1, r.call_id()));
                    out.push_str(&r.projection().text);
                }
            }
            OutputFormat::Json => {
                if turns > 1 {
                    out.clear();
                }
                let v = serde_json::json!({
                    "plan": execution.plan,
                    "results": execution.results.iter().map(result_json).collect::<Vec<_>>(),
                });
                out.push_str(&serde_json::to_string_pretty(&v).unwrap_or_default());
                out.push('\n');
            }
        }
        super::print(&out)?;
        replayed += execution.results.iter().filter(|r| r.replayed()).count();
        if exit_code(&execution.results) != super::EXIT_OK {
            code = super::EXIT_FINDINGS;
        }
        if n == 0 {
            break;
        }
    }
    if let Some(report) = runtime.recovery().filter(|r| !r.is_empty()) {
        eprint!("toolgate: {report}");
    }
    if replayed > 0 {
        eprintln!(
            "toolgate: session {}: {replayed} of {ran} call(s) had finished before; their recorded results are shown and they did not run again",
            session.id(),
        );
    }
    Ok(code)
}

/// `toolgate run --provider P --reply FILE`: prints the provider's result messages.
fn run_reply(a: &RunArgs, path: &std::path::Path, provider: Provider) -> Result<u8, Failed> {
    let text = read(path)?;
    let (runtime, session) = load(&a.runtime, a.session.as_deref())?;
    let adapter = ProviderAdapter::new(provider, &runtime);
    let turn = adapter
        .parse_str(&text)
        .map_err(|e| Failed(format!("{}: {e}", path.display())))?;
    let execution = execute(&runtime, &session, turn.calls().to_vec())?;
    let messages = adapter.render(&turn, &execution.results);
    let v = match a.runtime.format {
        OutputFormat::Text => serde_json::Value::Array(messages),
        OutputFormat::Json => serde_json::json!({
            "plan": execution.plan,
            "results": execution.results.iter().map(result_json).collect::<Vec<_>>(),
            "messages": messages,
        }),
    };
    let out = format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default());
    super::print(&out).map_err(|e| Failed(e.to_string()))?;
    if let Some(report) = runtime.recovery().filter(|r| !r.is_empty()) {
        eprint!("toolgate: {report}");
    }
    Ok(exit_code(&execution.results))
}
