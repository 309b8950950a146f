//! `toolgate serve`'s approvals over MCP, driven by an rmcp client that declares elicitation and
//! answers every question with allow-once: the question shows a 5,000-character argument in
//! full — a second line hidden behind padding included — and a 100 KiB argument is not asked
//! about at all (APPROVAL_UNAVAILABLE, saying why), never cut with an ellipsis.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, ElicitRequestParams,
    ElicitResult, ElicitationAction, ErrorData, Implementation,
};
use rmcp::service::RequestContext;
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A client that records every elicitation message and allows once.
#[derive(Clone, Default)]
struct Approving {
    asked: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Approving {
    fn get_info(&self) -> ClientConfig {
        let capabilities: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {"form": {}}})).unwrap();
        ClientConfig::new(capabilities, Implementation::new("approval-test", "1"))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let message = match request {
            ElicitRequestParams::FormElicitationParams { message, .. } => message,
            other => format!("{other:?}"),
        };
        self.asked.lock().unwrap().push(message);
        let mut r = ElicitResult::new(ElicitationAction::Accept);
        r.content = Some(json!({"decision": "allow_once"}));
        Ok(r)
    }
}

fn write_call(path: &str, content: &str) -> CallToolRequestParams {
    let args = json!({"path": path, "content": content});
    CallToolRequestParams::new("write_file").with_arguments(args.as_object().unwrap().clone())
}

fn error_type(r: &CallToolResult) -> Option<String> {
    r.meta
        .as_ref()
        .and_then(|m| m.get("io.toolgate/error_type"))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

fn text(r: &CallToolResult) -> String {
    serde_json::to_value(&r.content)
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["text"].as_str())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_show_every_argument_in_full_or_refuse_to_ask() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolgate"));
    cmd.arg("serve")
        .arg("--config")
        .arg(repo().join("tests/fixtures/mcp/toolgate.yaml"))
        .arg("--workspace")
        .arg(ws.path())
        .arg("--state-dir")
        .arg(state.path());
    let handler = Approving::default();
    let asked = handler.asked.clone();
    let client = handler
        .serve(TokioChildProcess::new(cmd).unwrap())
        .await
        .unwrap();

    // 5,000 characters: a visible first line, padding, and a second line the padding used to
    // push past the 2,000 characters the question showed.
    let visible = "a".repeat(3000);
    let hidden = format!("echo {}", "b".repeat(1094));
    let content = format!("{visible}{}\n{hidden}", " ".repeat(900));
    assert_eq!(content.chars().count(), 5000);
    let r = client
        .call_tool(write_call("notes.txt", &content))
        .await
        .unwrap();
    assert_eq!(error_type(&r), None, "{}", text(&r));
    assert_eq!(
        std::fs::read_to_string(ws.path().join("notes.txt")).unwrap(),
        content
    );
    let questions = asked.lock().unwrap().clone();
    assert_eq!(questions.len(), 1);
    let q = &questions[0];
    let expected = format!(
        concat!(
            "  content = string of 5000 characters in 2 lines:\n",
            "    1 │ \"{}⟪900 spaces⟫\"\n",
            "    2 │ \"{}\"\n",
            "  path = \"notes.txt\" (9 characters)",
        ),
        visible, hidden
    );
    assert!(q.contains(&expected), "the question:\n{q}");
    assert!(!q.contains('…'), "nothing is cut: {q}");

    // 100 KiB: the question would pass 64 KiB, so nobody is asked.
    let big = "c".repeat(100 * 1024);
    let r = client.call_tool(write_call("big.txt", &big)).await.unwrap();
    assert_eq!(error_type(&r).as_deref(), Some("APPROVAL_UNAVAILABLE"));
    let said = text(&r);
    assert!(
        said.contains("with every argument in full, more than the 65536 bytes (64 KiB) an approver is asked to read"),
        "{said}"
    );
    assert_eq!(asked.lock().unwrap().len(), 1, "the big call was not asked");
    assert!(!ws.path().join("big.txt").exists());
    client.cancel().await.unwrap();
}

/// `serve --session ID` names every connection's calls with one session id; the question still
/// reaches the client of the connection that called (issue 34: it used to end as
/// APPROVAL_UNAVAILABLE, the approver looking the session id up among connection ids).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_fixed_session_id_the_caller_is_still_asked() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolgate"));
    cmd.arg("serve")
        .arg("--session")
        .arg("shared-session")
        .arg("--config")
        .arg(repo().join("tests/fixtures/mcp/toolgate.yaml"))
        .arg("--workspace")
        .arg(ws.path())
        .arg("--state-dir")
        .arg(state.path());
    let handler = Approving::default();
    let asked = handler.asked.clone();
    let client = handler
        .serve(TokioChildProcess::new(cmd).unwrap())
        .await
        .unwrap();
    let r = client
        .call_tool(write_call("approved.txt", "yes\n"))
        .await
        .unwrap();
    assert_eq!(error_type(&r), None, "{}", text(&r));
    assert_eq!(
        std::fs::read_to_string(ws.path().join("approved.txt")).unwrap(),
        "yes\n"
    );
    let questions = asked.lock().unwrap().clone();
    assert_eq!(questions.len(), 1, "{questions:?}");
    assert!(
        questions[0].starts_with("toolgate: write_file (local_write) needs approval"),
        "{}",
        questions[0]
    );
    client.cancel().await.unwrap();
}

/// ESC sequences, a carriage return, a bidi override and a zero-width space in an argument
/// reach the client's elicitation escaped (`\u{…}`, `\r`), never as themselves: the person sees
/// what will be written, the call runs once allowed, and the file gets the bytes as sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_elicitation_shows_hidden_characters_escaped() {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolgate"));
    cmd.arg("serve")
        .arg("--config")
        .arg(repo().join("tests/fixtures/mcp/toolgate.yaml"))
        .arg("--workspace")
        .arg(ws.path())
        .arg("--state-dir")
        .arg(state.path());
    let handler = Approving::default();
    let asked = handler.asked.clone();
    let client = handler
        .serve(TokioChildProcess::new(cmd).unwrap())
        .await
        .unwrap();
    let content = "safe\u{1b}[2K\rrm -rf ~\u{202e}txt.exe\u{200b}";
    let r = client
        .call_tool(write_call("hostile.txt", content))
        .await
        .unwrap();
    assert_eq!(error_type(&r), None, "{}", text(&r));
    assert_eq!(
        std::fs::read_to_string(ws.path().join("hostile.txt")).unwrap(),
        content
    );
    let questions = asked.lock().unwrap().clone();
    assert_eq!(questions.len(), 1, "{questions:?}");
    let q = &questions[0];
    assert!(
        q.contains(
            "  content = \"safe\\u{1b}[2K\\rrm -rf ~\\u{202e}txt.exe\\u{200b}\" (26 characters)\n"
        ),
        "the question:\n{q}"
    );
    assert!(q.contains("\\u{hex} a hidden character"), "{q}");
    for c in ['\u{1b}', '\r', '\u{202e}', '\u{200b}'] {
        assert!(!q.contains(c), "{c:?} reached the client as itself: {q}");
    }
    client.cancel().await.unwrap();
}
