//! `toolgate run --calls FILE.jsonl`: run a batch of calls (one JSON object per line:
//! `{"name": …, "arguments": {…}, "call_id": …, "idempotency_key": …}`) as one model turn —
//! print the schedule, then the results.
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
use serde::Deserialize;

use super::call::{Failed, OutputFormat, RuntimeArgs, execute, exit_code, fail, load, result_json};
use crate::runtime::{Provider, ProviderAdapter, ToolCall};

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

#[derive(Deserialize)]
struct Line {
    #[serde(default)]
    call_id: Option<String>,
    #[serde(alias = "tool")]
    name: String,
    #[serde(default, alias = "args")]
    arguments: Option<serde_json::Value>,
    #[serde(default)]
    idempotency_key: Option<String>,
}

fn parse(text: &str) -> Result<Vec<ToolCall>, Failed> {
    let mut calls = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let l: Line = serde_json::from_str(line).map_err(|e| {
            Failed(format!(
                "line {} of the calls file is not a call: {e}",
                i + 1
            ))
        })?;
        let id = l
            .call_id
            .unwrap_or_else(|| format!("call-{}", calls.len() + 1));
        let mut call = ToolCall::new(
            id,
            l.name,
            l.arguments.unwrap_or_else(|| serde_json::json!({})),
        );
        if let Some(k) = l.idempotency_key {
            call = call.with_idempotency_key(k);
        }
        calls.push(call);
    }
    Ok(calls)
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
    let text = match read(path) {
        Ok(t) => t,
        Err(Failed(m)) => return fail(&m),
    };
    let calls = match parse(&text) {
        Ok(c) => c,
        Err(Failed(m)) => return fail(&m),
    };
    let (runtime, session) = match load(&a.runtime, a.session.as_deref()) {
        Ok(x) => x,
        Err(Failed(m)) => return fail(&m),
    };
    let execution = match execute(&runtime, &session, calls) {
        Ok(x) => x,
        Err(Failed(m)) => return fail(&m),
    };
    let out = match a.runtime.format {
        OutputFormat::Text => {
            let mut s = execution.plan.to_string();
            for (i, r) in execution.results.iter().enumerate() {
                s.push_str(&format!("\n── #{} {} ──\n", i + 1, r.call_id()));
                s.push_str(&r.projection().text);
            }
            s
        }
        OutputFormat::Json => {
            let v = serde_json::json!({
                "plan": execution.plan,
                "results": execution.results.iter().map(result_json).collect::<Vec<_>>(),
            });
            format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())
        }
    };
    super::print(&out)?;
    if let Some(report) = runtime.recovery().filter(|r| !r.is_empty()) {
        eprint!("toolgate: {report}");
    }
    let replayed = execution.results.iter().filter(|r| r.replayed()).count();
    if replayed > 0 {
        eprintln!(
            "toolgate: session {}: {replayed} of {} call(s) had finished before; their recorded results are shown and they did not run again",
            session.id(),
            execution.results.len()
        );
    }
    Ok(exit_code(&execution.results))
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
