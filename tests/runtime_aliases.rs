//! Former names: a call by an alias reaches the tool, the result and the trace carry the
//! current name, and the trace records the alias the call used.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolgate::ir::Status;
use toolgate::runtime::{RuntimeBuilder, Session, ToolCall};
use toolgate::spec::load::LoadOptions;

const SPEC: &str = "name: say
description: Return the given text unchanged.
effect: pure
idempotency: pure
aliases: [echo_text]
parameters:
  type: object
  properties:
    text: {type: string, maxLength: 100}
  required: [text]
  additionalProperties: false
exec: {builtin: echo}
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_alias_reaches_its_tool_and_the_trace_records_it() {
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(project.path().join("tool-specs")).unwrap();
    std::fs::write(project.path().join("tool-specs/say.yaml"), SPEC).unwrap();
    std::fs::write(project.path().join("toolgate.yaml"), "workspace: .\n").unwrap();
    let state = tempfile::tempdir().unwrap();
    let rt = RuntimeBuilder::from_specs(&LoadOptions {
        paths: vec![],
        config: None,
        cwd: project.path().to_path_buf(),
    })
    .unwrap()
    .workspace(project.path())
    .state_dir(state.path())
    .build()
    .unwrap();
    let s = Session::new("s", "interactive");
    let call = |id: &str, name: &str| ToolCall::new(id, name, json!({"text": "hi"}));
    let results = rt
        .execute(
            vec![
                call("old", "echo_text"),
                call("new", "say"),
                call("bad", "echo_txt"),
            ],
            &s,
            CancellationToken::new(),
        )
        .await
        .unwrap();
    let statuses: Vec<_> = results.iter().map(|r| (r.tool(), r.status())).collect();
    assert_eq!(
        statuses,
        vec![
            ("say", Status::Success),
            ("say", Status::Success),
            ("echo_txt", Status::Error)
        ]
    );
    let mut traces = rt.traces();
    traces.sort_by(|a, b| a.call_id.cmp(&b.call_id));
    let got: Vec<_> = traces
        .iter()
        .map(|t| (t.call_id.as_str(), t.tool.as_str(), t.called_as.as_deref()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("bad", "echo_txt", None),
            ("new", "say", None),
            ("old", "say", Some("echo_text")),
        ]
    );
}
