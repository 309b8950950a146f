//! The command line: one file per subcommand, each turning arguments into library calls.
//!
//! Exit codes: 0 clean, 1 findings at or above `--fail-on`, 2 usage or load errors. For `call`
//! and `run`: 0 when every call succeeded, 1 when a result is not a success, 2 for usage, load
//! and engine errors.

mod build;
mod call;
mod diff;
mod explain;
mod export;
pub mod import;
mod import_list;
mod import_openapi;
mod init;
mod journal;
mod lint;
mod lsp;
mod output;
mod rules;
mod run;
mod sandbox;
mod schema;
mod serve;
mod serve_http;
mod trust;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Exit code: nothing to report.
pub const EXIT_OK: u8 = 0;
/// Exit code: findings at or above `--fail-on`.
pub const EXIT_FINDINGS: u8 = 1;
/// Exit code: usage or load error.
pub const EXIT_ERROR: u8 = 2;

/// Declarative contracts for the tools AI models call: lint, compile, run.
#[derive(Debug, Parser)]
#[command(name = "toolgate", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Start a project: toolgate.yaml, an example spec, a CI workflow, ignore entries.
    Init(init::InitArgs),
    /// Lint tool specs (or a tool list another project ships, with --from).
    Lint(lint::LintArgs),
    /// Explain a lint rule: what it finds, why it matters, an example and the fix.
    Explain(explain::ExplainArgs),
    /// List every lint rule.
    Rules(rules::RulesArgs),
    /// Print the JSON Schema of the spec format (for editor completion).
    Schema(schema::SchemaArgs),
    /// Lint, then write the bundle, JSON Schemas, provider tool lists and a typed Rust crate.
    Build(build::BuildArgs),
    /// What changed against a git revision, folder or bundle: breaking changes, widened
    /// permissions (with witness calls), the version bump needed.
    Diff(diff::DiffArgs),
    /// Print one provider tool list (OpenAI, Anthropic, MCP, Gemini).
    Export(export::ExportArgs),
    /// Run one tool call through the governed runtime.
    Call(call::CallArgs),
    /// Run a batch of tool calls (JSONL) as one turn: the schedule, then the results.
    Run(run::RunArgs),
    /// Inspect the execution journal; recover it; resolve uncertain operations.
    Journal(journal::JournalArgs),
    /// What this kernel offers the sandbox, and what each sandbox profile puts in force here.
    Sandbox(sandbox::SandboxArgs),
    /// Serve the tools as an MCP server over stdio (every call governed by the runtime).
    Serve(serve::ServeArgs),
    /// Write starter specs for the tools of an upstream MCP server.
    Import(import::ImportArgs),
    /// Serve editors as a language server over stdio: findings as you type, hover, completion.
    Lsp(lsp::LspArgs),
    /// Trust the project's policy as it stands (`status`, `revoke`): `call`, `run` and `serve`
    /// obey only a trusted policy.
    Trust(trust::TrustArgs),
}

/// Runs the command line and returns the process exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_ERROR } else { EXIT_OK };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        Command::Init(a) => init::run(a),
        Command::Lint(a) => lint::run(a),
        Command::Explain(a) => explain::run(a),
        Command::Rules(a) => rules::run(a),
        Command::Schema(a) => schema::run(a),
        Command::Build(a) => build::run(a),
        Command::Diff(a) => diff::run(a),
        Command::Export(a) => export::run(a),
        Command::Call(a) => call::run(a),
        Command::Run(a) => run::run(a),
        Command::Journal(a) => journal::run(a),
        Command::Sandbox(a) => sandbox::run(a),
        Command::Serve(a) => serve::run(a),
        Command::Import(a) => import::run(a),
        Command::Lsp(a) => lsp::run(a),
        Command::Trust(a) => trust::run(a),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("{:?}", e);
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// Writes to stdout; a closed pipe (`toolgate rules | head`) is not an error.
pub(crate) fn print(text: &str) -> miette::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(miette::miette!("cannot write output: {e}")),
    }
}
