//! The MCP request path: the input is one or more newline-separated JSON-RPC messages, sent to
//! a `ToolgateServer` over an in-process pipe (rmcp's stdio transport on a tokio duplex, so the
//! same framing, parsing and dispatch as `toolgate serve`), after the client's `initialize`
//! handshake unless the input brings its own. The server serves the toolset `fuzz` of
//! fuzz/project (the fixed contract and the read-only builtins) in the context `ci`. Every
//! input must be answered or ignored, never panic or abort the server, and the server must go
//! on answering: a `ping` sent after the input gets its answer; and a `tools/call` result's
//! text, refusals included, stays within the project's output budget.
#![no_main]

mod common;
mod stack;

use std::sync::LazyLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use rmcp::ServiceExt;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use toolgate::mcp::{Exposure, ServeOptions, ToolgateServer};
use toolgate::runtime::ToolRuntime;

static RUNTIME: LazyLock<ToolRuntime> = LazyLock::new(common::runtime);
static TOKIO: LazyLock<tokio::runtime::Runtime> = LazyLock::new(common::tokio_runtime);

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":"fuzz-init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const SENTINEL: &str = r#"{"jsonrpc":"2.0","id":"fuzz-end","method":"ping"}"#;

/// How long the server may take to answer the closing ping. Far more than any fuzz-sized
/// request needs; past it the server has stopped answering, which is a finding.
const ANSWER_WITHIN: Duration = Duration::from_secs(10);

/// How long requests still running after the ping may take.
const LATE_ANSWERS: Duration = Duration::from_secs(3);

fuzz_target!(|data: &[u8]| {
    // rmcp's framing is one JSON message per line: a message with a raw line break inside is
    // two broken ones, which the fuzzer finds without help.
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    TOKIO.block_on(exchange(input));
});

async fn exchange(input: &str) {
    let options = ServeOptions {
        exposure: Exposure::Toolset("fuzz".to_owned()),
        context: Some("ci".to_owned()),
        session: None,
    };
    let Ok(server) = ToolgateServer::new(RUNTIME.clone(), None, options) else {
        return;
    };
    let (client, server_io) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_io);
    let serving = tokio::spawn(async move {
        if let Ok(running) = server.serve((server_read, server_write)).await {
            let _ = running.waiting().await;
        }
    });
    let (client_read, mut client_write) = tokio::io::split(client);
    let own_handshake = input.lines().next().is_some_and(|l| l.contains("\"initialize\""));
    let mut sent = String::new();
    if !own_handshake {
        sent.push_str(INITIALIZE);
        sent.push('\n');
        sent.push_str(INITIALIZED);
        sent.push('\n');
    }
    sent.push_str(input);
    if !input.ends_with('\n') {
        sent.push('\n');
    }
    sent.push_str(SENTINEL);
    sent.push('\n');
    // The server answers while it reads: write from a task of its own, so that neither side
    // waits on a full pipe.
    let writer = tokio::spawn(async move {
        let _ = client_write.write_all(sent.as_bytes()).await;
        let _ = client_write.flush().await;
        client_write
    });
    let mut lines = BufReader::new(client_read).lines();
    let mut waiting = requests(input);
    // FUZZ_MCP_ECHO=1: print what the server answers (to see what an input reaches).
    let echo = std::env::var_os("FUZZ_MCP_ECHO").is_some();
    let answered = tokio::time::timeout(ANSWER_WITHIN, async {
        while let Ok(Some(line)) = lines.next_line().await {
            if echo {
                eprintln!("< {line}");
            }
            if line.contains("\"fuzz-end\"") {
                return true;
            }
            answer(&line, &mut waiting);
        }
        // The server closed the connection (a handshake it refused): not a hang.
        true
    })
    .await
    .unwrap_or(false);
    assert!(answered, "the server stopped answering after this input");
    // Requests run concurrently, so the ping can overtake a `tools/call`: give those a moment
    // to finish, so that the runtime behind them is exercised too (an answer that never comes
    // is not asserted: rmcp drops some malformed requests without one).
    let _ = tokio::time::timeout(LATE_ANSWERS, async {
        while !waiting.is_empty() {
            match lines.next_line().await {
                Ok(Some(line)) => {
                    if echo {
                        eprintln!("< {line}");
                    }
                    answer(&line, &mut waiting);
                }
                _ => break,
            }
        }
    })
    .await;
    serving.abort();
    writer.abort();
    let _ = serving.await;
}

/// The ids of the input's requests (messages with a method and an id), as JSON text.
fn requests(input: &str) -> Vec<String> {
    let mut ids = Vec::new();
    for line in input.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let messages = match v {
            serde_json::Value::Array(items) => items,
            other => vec![other],
        };
        for m in messages {
            if let (Some(_), Some(id)) = (m.get("method"), m.get("id")) {
                ids.push(id.to_string());
            }
        }
    }
    ids
}

/// The project's `output.max_bytes` (32 KiB) with room for the refusal's own framing: what a
/// `tools/call` result's text may take, refusals included.
const RESULT_BUDGET: usize = 40 * 1024;

/// Strikes the id a response line answers off `waiting`, and checks that a `tools/call`
/// result's text stays within the output budget.
fn answer(line: &str, waiting: &mut Vec<String>) {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
        return;
    };
    if v.get("method").is_some() {
        return;
    }
    if let Some(content) = v.pointer("/result/content").and_then(|c| c.as_array()) {
        let text: usize = content
            .iter()
            .filter_map(|c| c.get("text").and_then(|t| t.as_str()))
            .map(str::len)
            .sum();
        assert!(
            text <= RESULT_BUDGET,
            "a tools/call result of {text} bytes passes the {RESULT_BUDGET}-byte budget: {}…",
            line.chars().take(200).collect::<String>()
        );
    }
    if let Some(id) = v.get("id").map(ToString::to_string) {
        if let Some(i) = waiting.iter().position(|w| *w == id) {
            waiting.swap_remove(i);
        }
    }
}
