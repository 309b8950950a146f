//! `toolgate run --provider P --reply FILE` on each provider's documented reply shape
//! (tests/fixtures/providers/P.json): six parallel calls — a read, a tool whose name the
//! provider rejects (`notes/lookup`, called `notes_lookup`), a tool error, a large output kept
//! as an artifact, arguments that are not a JSON object, and an unknown tool — run as one turn
//! through the real binary; the printed messages are snapshots.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::process::{Command, Output};

use common::{Fixture, repo};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const LOGIN: &str =
    "TIMEOUT = 5\ndef login(user, password):\n    return check(user, password, timeout=TIMEOUT)\n";

fn run(f: &Fixture, provider: &str, extra: &[&str]) -> Output {
    let project = repo().join("tests/fixtures/providers/project/toolgate.yaml");
    let reply = repo().join(format!("tests/fixtures/providers/{provider}.json"));
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["run", "--provider", provider, "--reply"])
        .arg(&reply)
        .arg("--config")
        .arg(&project)
        .arg("--workspace")
        .arg(f.path())
        .arg("--state-dir")
        .arg(f.state.path())
        .args(extra)
        .current_dir(f.path())
        .output()
        .unwrap()
}

fn fixture() -> Fixture {
    let f = Fixture::new();
    f.write("src/login.py", LOGIN);
    f
}

/// Runs a provider's reply, checks what every provider shares, and returns the messages.
fn messages(provider: &str) -> Value {
    let f = fixture();
    let o = run(&f, provider, &["--format", "json"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    // Some results are errors: exit code 1, like `toolgate run`.
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    let out: Value = serde_json::from_slice(&o.stdout).unwrap();
    // All six calls reached the runtime in one turn, in reply order, under the contracts'
    // names; the four known ones were scheduled together.
    let results = out["results"].as_array().unwrap();
    let tools: Vec<&str> = results
        .iter()
        .map(|r| r["tool"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "read_file",
            "notes/lookup",
            "build_step",
            "big_log",
            "read_file",
            "read_directory_recursive"
        ]
    );
    let kinds: Vec<Value> = results
        .iter()
        .map(|r| json!([r["status"], r["error_type"]]))
        .collect();
    assert_eq!(
        kinds,
        [
            json!(["success", null]),
            json!(["success", null]),
            json!(["error", "PROCESS_ERROR"]),
            json!(["success", null]),
            json!(["error", "INVALID_ARGUMENTS"]),
            json!(["error", "UNKNOWN_TOOL"]),
        ]
    );
    assert_eq!(
        out["plan"]["batches"],
        json!([[0, 1, 2, 3]]),
        "{:#}",
        out["plan"]
    );
    assert_eq!(results[3]["artifacts"].as_array().unwrap().len(), 1);
    // The text form prints the messages alone, the same ones.
    let g = fixture();
    let text = run(&g, provider, &[]);
    let alone: Value = serde_json::from_slice(&text.stdout).unwrap();
    assert_eq!(alone, out["messages"]);
    out["messages"].clone()
}

fn ids_in_reply(provider: &str) -> Vec<String> {
    let reply: Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join(format!("tests/fixtures/providers/{provider}.json")))
            .unwrap(),
    )
    .unwrap();
    match provider {
        "openai-chat" => reply["choices"][0]["message"]["tool_calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap().to_owned())
            .collect(),
        "openai-responses" => reply["output"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["type"] == "function_call")
            .map(|c| c["call_id"].as_str().unwrap().to_owned())
            .collect(),
        "anthropic" => reply["content"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["type"] == "tool_use")
            .map(|c| c["id"].as_str().unwrap().to_owned())
            .collect(),
        other => panic!("{other} has no ids to compare"),
    }
}

#[test]
fn openai_chat_answers_each_call_with_a_tool_message() {
    let m = messages("openai-chat");
    let ids: Vec<&str> = m
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            assert_eq!(x["role"], "tool");
            x["tool_call_id"].as_str().unwrap()
        })
        .collect();
    assert_eq!(ids, ids_in_reply("openai-chat"));
    let invalid = m[4]["content"].as_str().unwrap();
    assert!(
        invalid.contains("is not valid JSON (EOF while parsing"),
        "{invalid}"
    );
    insta::assert_json_snapshot!("openai_chat", m);
}

#[test]
fn openai_responses_answers_call_ids_with_function_call_outputs() {
    let m = messages("openai-responses");
    let ids: Vec<&str> = m
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            assert_eq!(x["type"], "function_call_output");
            x["call_id"].as_str().unwrap()
        })
        .collect();
    assert_eq!(ids, ids_in_reply("openai-responses"));
    insta::assert_json_snapshot!("openai_responses", m);
}

#[test]
fn anthropic_answers_in_one_user_message_with_is_error() {
    let m = messages("anthropic");
    let [message] = m.as_array().unwrap().as_slice() else {
        panic!("one user message expected: {m:#}");
    };
    assert_eq!(message["role"], "user");
    let blocks = message["content"].as_array().unwrap();
    let ids: Vec<&str> = blocks
        .iter()
        .map(|b| b["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ids_in_reply("anthropic"));
    let errors: Vec<bool> = blocks
        .iter()
        .map(|b| b["is_error"].as_bool().unwrap())
        .collect();
    assert_eq!(errors, [false, false, true, false, true, true]);
    insta::assert_json_snapshot!("anthropic", m);
}

#[test]
fn gemini_answers_with_function_responses_under_the_called_names() {
    let m = messages("gemini");
    let parts = m[0]["parts"].as_array().unwrap();
    assert_eq!(m[0]["role"], "user");
    let names: Vec<&str> = parts
        .iter()
        .map(|p| p["functionResponse"]["name"].as_str().unwrap())
        .collect();
    // The stand-in the model called stays the name it reads.
    assert_eq!(
        names,
        [
            "read_file",
            "notes_lookup",
            "build_step",
            "big_log",
            "read_file",
            "read_directory_recursive"
        ]
    );
    // The reply gave no ids: none are echoed; errors go under `error`, the structured result
    // under `result`.
    assert!(
        parts
            .iter()
            .all(|p| p["functionResponse"].get("id").is_none())
    );
    assert_eq!(
        parts[1]["functionResponse"]["response"]["result"],
        json!({"text": "the session timeout is 5 seconds"})
    );
    assert!(parts[2]["functionResponse"]["response"]["error"].is_string());
    insta::assert_json_snapshot!("gemini", m);
}

#[test]
fn mcp_answers_each_request_with_a_call_tool_result() {
    let m = messages("mcp");
    let arr = m.as_array().unwrap();
    let ids: Vec<&Value> = arr.iter().map(|r| &r["id"]).collect();
    assert_eq!(
        ids,
        [
            &json!(1),
            &json!(2),
            &json!(3),
            &json!(4),
            &json!(5),
            &json!(6)
        ]
    );
    assert_eq!(
        arr[1]["result"]["structuredContent"],
        json!({"text": "the session timeout is 5 seconds"})
    );
    let errors: Vec<&Value> = arr.iter().map(|r| &r["result"]["isError"]).collect();
    assert_eq!(
        errors,
        [
            &json!(false),
            &json!(false),
            &json!(true),
            &json!(false),
            &json!(true),
            &json!(true)
        ]
    );
    assert_eq!(
        arr[3]["result"]["_meta"]["io.toolgate/artifacts"][0]["lines"],
        json!(300)
    );
    insta::assert_json_snapshot!("mcp", m);
}

/// Gemini gives no call ids: the ones made for it are the same each time the reply is read,
/// so the same reply run again in a session replays its results instead of running again.
#[test]
fn a_gemini_reply_run_again_in_a_session_is_replayed() {
    let f = fixture();
    let first = run(&f, "gemini", &["--session", "s1"]);
    assert_eq!(first.status.code(), Some(1));
    let o = run(&f, "gemini", &["--session", "s1", "--format", "json"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    let out: Value = serde_json::from_slice(&o.stdout).unwrap();
    let replayed: Vec<bool> = out["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["replayed"].as_bool().unwrap_or(false))
        .collect();
    // The journaled calls replay; a pure tool (notes/lookup) is not journaled and runs again,
    // and the refused calls were never journaled.
    assert_eq!(
        replayed,
        [true, false, true, true, false, false],
        "{stderr}\n{out:#}"
    );
}

#[test]
fn a_reply_of_another_shape_is_refused_with_where() {
    let f = fixture();
    f.write(
        "reply.json",
        r#"{"choices": [{"message": {"tool_calls": [{"type": "function"}]}}]}"#,
    );
    let project = repo().join("tests/fixtures/providers/project/toolgate.yaml");
    let o = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args([
            "run",
            "--provider",
            "openai-chat",
            "--reply",
            "reply.json",
            "--config",
        ])
        .arg(&project)
        .arg("--workspace")
        .arg(f.path())
        .arg("--state-dir")
        .arg(f.state.path())
        .current_dir(f.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.starts_with(
            "toolgate: reply.json: the openai-chat reply has no string at `choices[0].message.tool_calls[0].id`"
        ),
        "{stderr}"
    );
    let o = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["run", "--provider", "cohere", "--reply", "reply.json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(
            "unknown provider `cohere`; use one of: anthropic, gemini, mcp, openai-chat, openai-responses"
        )
    );
}

/// The name the fixtures call the tool by is the one `toolgate export` writes for every
/// provider: one rule, both directions.
#[test]
fn the_exported_lists_call_the_renamed_tool_as_the_replies_do() {
    let project = repo().join("tests/fixtures/providers/project/toolgate.yaml");
    for target in [
        "openai-chat",
        "openai-responses",
        "anthropic",
        "mcp",
        "gemini",
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(["export", "--provider", target, "--config"])
            .arg(&project)
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let list = String::from_utf8(o.stdout).unwrap();
        assert!(list.contains("\"notes_lookup\""), "{target}: {list}");
        assert!(!list.contains("notes/lookup"), "{target}: {list}");
    }
}
