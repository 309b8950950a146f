//! Parsing of each provider's reply shape; rendering is tested on real results in
//! tests/provider_glue.rs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::json;

use super::*;

fn adapter(p: Provider) -> ProviderAdapter {
    ProviderAdapter::for_names(p, ["read_file", "docs.search"])
}

#[test]
fn chat_keeps_ids_order_and_unparsed_arguments() {
    let reply = json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": null,
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a\"}"}},
            {"id": "call_2", "type": "function", "function": {"name": "docs_search", "arguments": "{\"q\": "}},
            {"id": "call_3", "type": "function", "function": {"name": "read_file", "arguments": ""}}
        ]}, "finish_reason": "tool_calls"}]});
    let turn = adapter(Provider::OpenaiChat).parse(&reply).unwrap();
    let calls = turn.calls();
    assert_eq!(calls.len(), 3);
    assert_eq!(
        (calls[0].call_id.as_str(), calls[0].name.as_str()),
        ("call_1", "read_file")
    );
    assert_eq!(calls[0].arguments, json!({"path": "a"}));
    // The stand-in maps back to the contract; the text that does not parse goes on as text.
    assert_eq!(calls[1].name, "docs.search");
    assert_eq!(calls[1].arguments, json!("{\"q\": "));
    assert_eq!(calls[2].arguments, json!({}));
    assert_eq!(
        turn.called_names().collect::<Vec<_>>(),
        ["read_file", "docs_search", "read_file"]
    );
}

#[test]
fn a_reply_without_calls_is_an_empty_turn() {
    let chat = json!({"choices": [{"message": {"role": "assistant", "content": "done"}}]});
    assert!(
        adapter(Provider::OpenaiChat)
            .parse(&chat)
            .unwrap()
            .is_empty()
    );
    let anthropic =
        json!({"content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn"});
    assert!(
        adapter(Provider::Anthropic)
            .parse(&anthropic)
            .unwrap()
            .is_empty()
    );
    let gemini = json!({"candidates": [{"finishReason": "SAFETY"}]});
    assert!(adapter(Provider::Gemini).parse(&gemini).unwrap().is_empty());
}

#[test]
fn responses_answer_call_id_not_item_id() {
    let reply = json!({"output": [
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {"type": "function_call", "id": "fc_1", "call_id": "call_A", "name": "read_file", "arguments": "{\"path\":\"x\"}"},
        {"type": "function_call", "id": "fc_2", "call_id": "call_B", "name": "read_file", "arguments": "[1]"}
    ]});
    let turn = adapter(Provider::OpenaiResponses).parse(&reply).unwrap();
    let ids: Vec<_> = turn.calls().iter().map(|c| c.call_id.as_str()).collect();
    assert_eq!(ids, ["call_A", "call_B"]);
    assert_eq!(turn.calls()[1].arguments, json!([1]));
}

#[test]
fn anthropic_reads_tool_use_blocks() {
    let reply = json!({"role": "assistant", "content": [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a"}}
    ], "stop_reason": "tool_use"});
    let turn = adapter(Provider::Anthropic).parse(&reply).unwrap();
    assert_eq!(turn.calls()[0].call_id, "toolu_1");
    assert_eq!(turn.calls()[0].arguments, json!({"path": "a"}));
}

#[test]
fn gemini_ids_are_made_stable_and_given_ones_kept() {
    let reply = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "read_file", "args": {"path": "a"}}},
        {"functionCall": {"name": "read_file", "args": {"path": "b"}, "id": "given"}}
    ]}}], "responseId": "r-9"});
    let a = adapter(Provider::Gemini).parse(&reply).unwrap();
    let ids: Vec<_> = a.calls().iter().map(|c| c.call_id.clone()).collect();
    assert_eq!(ids, ["gemini-r-9-1", "given"]);
    let mut no_id = reply.clone();
    no_id.as_object_mut().unwrap().remove("responseId");
    let once = adapter(Provider::Gemini).parse(&no_id).unwrap();
    let again = adapter(Provider::Gemini).parse(&no_id).unwrap();
    assert_eq!(once.calls()[0].call_id, again.calls()[0].call_id);
    assert!(once.calls()[0].call_id.starts_with("gemini-"));
    let mut other = no_id.clone();
    other["candidates"][0]["content"]["parts"][0]["functionCall"]["args"]["path"] = json!("c");
    let third = adapter(Provider::Gemini).parse(&other).unwrap();
    assert_ne!(once.calls()[0].call_id, third.calls()[0].call_id);
}

#[test]
fn mcp_takes_one_request_or_a_batch() {
    let one = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "read_file", "arguments": {"path": "a"}}});
    let turn = adapter(Provider::Mcp).parse(&one).unwrap();
    assert_eq!(turn.calls()[0].call_id, "7");
    let batch = json!([one, {"jsonrpc": "2.0", "id": "x", "method": "tools/call", "params": {"name": "nope"}}]);
    assert_eq!(
        adapter(Provider::Mcp).parse(&batch).unwrap().calls().len(),
        2
    );
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let e = adapter(Provider::Mcp).parse(&list).unwrap_err();
    assert!(e.to_string().contains("request.method"), "{e}");
}

#[test]
fn a_reply_of_another_shape_is_an_error_naming_where() {
    let e = adapter(Provider::OpenaiChat)
        .parse(&json!({"choices": [{"message": {"tool_calls": [{"type": "function", "function": {"name": "read_file"}}]}}]}))
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "the openai-chat reply has no string at `choices[0].message.tool_calls[0].id`; a Chat Completions reply is `{\"choices\": [{\"message\": {\"tool_calls\": [...]}}]}`"
    );
    assert!(adapter(Provider::Anthropic).parse_str("{").is_err());
    assert!(
        adapter(Provider::Gemini)
            .parse(&json!({"contents": []}))
            .is_err()
    );
}
