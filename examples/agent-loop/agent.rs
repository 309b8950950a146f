//! The agent loop of `cargo run --example agent_loop`: a model's replies, in one provider's
//! own format, drive the login-timeout task through toolgate's provider adapters.
//!
//! Each turn: the model's reply is appended to the conversation as the provider sent it,
//! [`ProviderAdapter::run`] parses its tool calls, runs them as one turn of the governed
//! runtime and renders the results as the provider's messages, which are appended in turn. The
//! loop ends at a reply without tool calls.
//!
//! The replies come from a recorded transcript (`examples/agent-loop/transcripts/P.json`, one
//! reply per turn, shaped as the provider documents them), so no network is needed. With
//! [`Source::Live`] they come from the provider's API instead (through `curl`), with toolgate's
//! own tool list for that provider in the request.

use std::error::Error;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolgate::emit::{ListOptions, tool_list};
use toolgate::runtime::extend::ApprovalFuture;
use toolgate::runtime::extend::{ApprovalOutcome, ApprovalRequest, Approver};
use toolgate::runtime::{Provider, ProviderAdapter, RuntimeBuilder, Session};
use toolgate::spec::load::LoadOptions;

/// Errors of the loop: the transcript, the provider, the runtime.
pub type BoxError = Box<dyn Error + Send + Sync>;

/// What the task asks of the model.
pub const TASK: &str = "Users of example-app are logged out within a minute instead of after 30 minutes. Find the cause, fix it with the smallest change, and show test evidence.";

/// Where the model's replies come from.
#[derive(Clone, Debug)]
pub enum Source {
    /// A recorded transcript: a JSON array of replies.
    Recorded(PathBuf),
    /// The provider's API, with this key and model.
    // The example's main builds it; the test (tests/examples_agent_loop.rs), which shares this
    // file, does not.
    #[allow(dead_code)]
    Live {
        /// The API key.
        key: String,
        /// The model.
        model: String,
    },
}

/// How the loop ended.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Tool calls run, by tool, in order.
    pub calls: Vec<String>,
    /// The summary of each `run_tests` result (`3 failed, 2 passed`), in order.
    pub tests: Vec<String>,
    /// The model's last words.
    pub final_text: String,
    /// `git diff --name-only`-like list: the files the turn changed.
    pub changed: Vec<String>,
}

/// The approver of the example: allows the one patch the task needs, on auth/session.py.
struct Reviewer;

impl Approver for Reviewer {
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a> {
        let only_session = request
            .proposed_scope
            .iter()
            .flat_map(|s| s.writes.iter())
            .all(|w| w == "file:auth/session.py");
        Box::pin(async move {
            if only_session {
                ApprovalOutcome::AllowOnce
            } else {
                ApprovalOutcome::Deny {
                    reason: Some("only auth/session.py may change".into()),
                }
            }
        })
    }
}

/// The recorded transcript of a provider, in this source tree.
pub fn transcript(provider: Provider) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("examples/agent-loop/transcripts")
        .join(format!("{}.json", provider.as_str()))
}

/// Runs the task with one provider's replies; `shim` is the program command tools run
/// under (see `RuntimeBuilder::shim`).
pub async fn run(
    provider: Provider,
    source: &Source,
    shim: &Path,
    out: &mut dyn Write,
) -> Result<Summary, BoxError> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::Builder::new().prefix("agent-loop-").tempdir()?;
    let workspace = tmp.path().join("workspace");
    copy_dir(&root.join("examples/login-timeout/project"), &workspace)?;
    let load = LoadOptions {
        paths: Vec::new(),
        config: Some(root.join("toolgate.yaml")),
        cwd: root.clone(),
    };
    let runtime = RuntimeBuilder::from_specs(&load)?
        .workspace(&workspace)
        .state_dir(tmp.path().join("state"))
        .shim(shim)
        .approver(Arc::new(Reviewer))
        .build()?;
    let session = Session::new("agent-loop", "interactive").with_toolset("login-timeout");
    let adapter = ProviderAdapter::new(provider, &runtime);

    let mut replies = match source {
        Source::Recorded(path) => {
            let all: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(path)?)?;
            Some(all.into_iter())
        }
        Source::Live { .. } => None,
    };
    let mut conversation = vec![user_message(provider, TASK)];
    let mut summary = Summary::default();
    writeln!(out, "provider: {provider}")?;
    writeln!(out, "user: {TASK}")?;
    for turn in 1..=12 {
        let reply = match (&mut replies, source) {
            (Some(r), _) => match r.next() {
                Some(reply) => reply,
                None => break,
            },
            (None, Source::Live { key, model }) => {
                live_reply(provider, key, model, &conversation, &load)?
            }
            (None, Source::Recorded(_)) => break,
        };
        writeln!(out, "\n=== turn {turn} ===")?;
        if let Some(text) = model_text(provider, &reply) {
            writeln!(out, "model: {text}")?;
            summary.final_text = text;
        }
        conversation.extend(model_turn(provider, &reply));
        let rendered = adapter
            .run(&runtime, &reply, &session, CancellationToken::new())
            .await?;
        if rendered.results.is_empty() {
            break;
        }
        for r in &rendered.results {
            writeln!(
                out,
                "  -> {} {} : {}",
                r.call_id(),
                r.tool(),
                r.status().as_str()
            )?;
            summary.calls.push(r.tool().to_owned());
            if r.tool() == "run_tests" {
                summary.tests.push(r.summary().to_owned());
            }
        }
        writeln!(out, "  appended:")?;
        for m in &rendered.messages {
            for line in serde_json::to_string_pretty(&shorten(m))?.lines() {
                writeln!(out, "  | {line}")?;
            }
        }
        conversation.extend(rendered.messages);
    }
    let diff = std::fs::read_to_string(workspace.join("auth/session.py"))?;
    if diff.contains("LOGIN_TIMEOUT_MINUTES * 60") {
        summary.changed.push("auth/session.py".into());
    }
    writeln!(out, "\nchanged: {}", summary.changed.join(", "))?;
    Ok(summary)
}

/// A message's long texts cut to their first lines, for printing.
fn shorten(v: &Value) -> Value {
    match v {
        Value::String(s) if s.lines().count() > 6 => {
            let head: Vec<&str> = s.lines().take(5).collect();
            Value::String(format!(
                "{}\n[… {} more lines]",
                head.join("\n"),
                s.lines().count() - 5
            ))
        }
        Value::Array(a) => Value::Array(a.iter().map(shorten).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), shorten(v))).collect()),
        other => other.clone(),
    }
}

/// The first user message in the provider's format.
fn user_message(provider: Provider, text: &str) -> Value {
    match provider {
        Provider::OpenaiChat | Provider::Anthropic => json!({"role": "user", "content": text}),
        Provider::OpenaiResponses => json!({"role": "user", "content": text}),
        Provider::Gemini => json!({"role": "user", "parts": [{"text": text}]}),
        Provider::Mcp => json!({"task": text}),
    }
}

/// What the reply adds to the conversation, as the provider's format has it.
fn model_turn(provider: Provider, reply: &Value) -> Vec<Value> {
    match provider {
        Provider::OpenaiChat => vec![reply["choices"][0]["message"].clone()],
        Provider::OpenaiResponses => reply["output"].as_array().cloned().unwrap_or_default(),
        Provider::Anthropic => vec![json!({"role": "assistant", "content": reply["content"]})],
        Provider::Gemini => vec![reply["candidates"][0]["content"].clone()],
        Provider::Mcp => Vec::new(),
    }
}

/// The text the model wrote in a reply.
fn model_text(provider: Provider, reply: &Value) -> Option<String> {
    let texts: Vec<&str> = match provider {
        Provider::OpenaiChat => reply["choices"][0]["message"]["content"]
            .as_str()
            .into_iter()
            .collect(),
        Provider::OpenaiResponses => reply["output"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|i| i["type"] == "message")
            .flat_map(|i| i["content"].as_array().into_iter().flatten())
            .filter_map(|c| c["text"].as_str())
            .collect(),
        Provider::Anthropic => reply["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect(),
        Provider::Gemini => reply["candidates"][0]["content"]["parts"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["text"].as_str())
            .collect(),
        Provider::Mcp => Vec::new(),
    };
    (!texts.is_empty()).then(|| texts.join("\n"))
}

/// One reply from the provider's API (through curl, so the example needs no HTTP client).
fn live_reply(
    provider: Provider,
    key: &str,
    model: &str,
    conversation: &[Value],
    load: &LoadOptions,
) -> Result<Value, BoxError> {
    let checked = toolgate::check::check_specs(load)?;
    let bundle = checked.bundle().ok_or("the specs do not resolve")?;
    let toolset = bundle
        .project
        .toolsets
        .get("login-timeout")
        .ok_or("toolgate.yaml has no login-timeout toolset")?;
    let tools: Vec<_> = bundle
        .tools
        .iter()
        .filter(|t| toolset.tools.contains(&t.name))
        .collect();
    let list = tool_list(provider, &tools, &ListOptions::default())?;
    let (url, headers, body) = match provider {
        Provider::OpenaiChat => (
            "https://api.openai.com/v1/chat/completions".to_owned(),
            vec![format!("Authorization: Bearer {key}")],
            json!({"model": model, "messages": conversation, "tools": list}),
        ),
        Provider::OpenaiResponses => (
            "https://api.openai.com/v1/responses".to_owned(),
            vec![format!("Authorization: Bearer {key}")],
            json!({"model": model, "input": conversation, "tools": list}),
        ),
        Provider::Anthropic => (
            "https://api.anthropic.com/v1/messages".to_owned(),
            vec![
                format!("x-api-key: {key}"),
                "anthropic-version: 2023-06-01".to_owned(),
            ],
            json!({"model": model, "max_tokens": 2048, "messages": conversation, "tools": list}),
        ),
        Provider::Gemini => (
            format!(
                "https://generativelanguage.googleapis.com/v1beta/models/{model}:generateContent"
            ),
            vec![format!("x-goog-api-key: {key}")],
            json!({"contents": conversation, "tools": list}),
        ),
        Provider::Mcp => return Err("MCP has no model to ask; use the recorded transcript".into()),
    };
    let mut cmd = std::process::Command::new("curl");
    cmd.args([
        "-sS",
        "--fail-with-body",
        &url,
        "-H",
        "content-type: application/json",
        "--data-binary",
        "@-",
    ]);
    for h in &headers {
        cmd.args(["-H", h]);
    }
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(serde_json::to_string(&body)?.as_bytes())?;
    }
    let output = child.wait_with_output()?;
    if !output.status.success() {
        return Err(format!("{provider}: {}", String::from_utf8_lossy(&output.stdout)).into());
    }
    Ok(serde_json::from_slice(&output.stdout)?)
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), BoxError> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}
