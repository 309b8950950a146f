//! An agent loop over provider replies: the login-timeout task driven by a model's replies in
//! OpenAI Chat, OpenAI Responses, Anthropic, Gemini or MCP format, through toolgate's provider
//! adapters (`toolgate::runtime::ProviderAdapter`).
//!
//! ```sh
//! cargo run --example agent_loop -- openai-chat anthropic
//! ```
//!
//! By default each provider's recorded transcript (`examples/agent-loop/transcripts/`) plays
//! the model: no network. With `TOOLGATE_LIVE=1` and the provider's key set
//! (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY` or `GEMINI_API_KEY`; the model in
//! `TOOLGATE_LIVE_MODEL`), the provider's API plays it instead, through `curl`. Needs
//! `python3 -m pytest` (run_tests).

use std::process::ExitCode;

use toolgate::runtime::Provider;
use toolgate::runtime::sandbox::{SHIM_ARG, run_shim};

#[path = "agent-loop/agent.rs"]
mod agent;

fn main() -> ExitCode {
    // run_tests runs pytest under the exec shim: this program re-executed with `__exec-shim`.
    if std::env::args_os().nth(1).is_some_and(|a| a == SHIM_ARG) {
        run_shim();
    }
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("agent_loop: {e}");
            ExitCode::FAILURE
        }
    }
}

fn source(provider: Provider) -> agent::Source {
    let key_var = match provider {
        Provider::OpenaiChat | Provider::OpenaiResponses => "OPENAI_API_KEY",
        Provider::Anthropic => "ANTHROPIC_API_KEY",
        Provider::Gemini => "GEMINI_API_KEY",
        Provider::Mcp => "",
    };
    let live =
        std::env::var("TOOLGATE_LIVE").is_ok_and(|v| v == "1") && std::env::var_os("CI").is_none();
    match (live && !key_var.is_empty(), std::env::var(key_var)) {
        (true, Ok(key)) if !key.is_empty() => agent::Source::Live {
            key,
            model: std::env::var("TOOLGATE_LIVE_MODEL")
                .unwrap_or_else(|_| default_model(provider).into()),
        },
        _ => agent::Source::Recorded(agent::transcript(provider)),
    }
}

fn default_model(provider: Provider) -> &'static str {
    match provider {
        Provider::Anthropic => "claude-sonnet-4-5",
        Provider::Gemini => "gemini-2.5-flash",
        _ => "gpt-4.1",
    }
}

fn run() -> Result<(), agent::BoxError> {
    let mut providers = Vec::new();
    for a in std::env::args().skip(1) {
        providers.push(Provider::parse(&a).ok_or_else(|| format!("unknown provider `{a}`"))?);
    }
    if providers.is_empty() {
        providers = vec![Provider::OpenaiChat, Provider::Anthropic];
    }
    let shim = std::env::current_exe()?;
    let runtime = tokio::runtime::Runtime::new()?;
    for p in providers {
        let summary = runtime.block_on(agent::run(
            p,
            &source(p),
            &shim,
            &mut std::io::stdout().lock(),
        ))?;
        if summary.changed != ["auth/session.py"] {
            return Err(format!("{p}: the fix did not land").into());
        }
        println!();
    }
    Ok(())
}
