//! Nothing cut is lost (seed chapter §30, §32): whenever the output limits cut what a tool
//! printed or returned, the whole output is kept as an artifact within the budgets, the
//! projection names it and the ways to read it that work in the session, and read_artifact
//! gives back exactly what was cut. A budget that refuses the artifact is reported as such,
//! never papered over with a promise. (Over MCP: tests/mcp_artifacts.rs.)
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use common::sandbox::fully_sandboxed;
use common::{Counters, Fixture, bind_handlers, call, run1, shim};
use pretty_assertions::assert_eq;
use serde_json::json;
use toolgate::ir::Bundle;
use toolgate::runtime::{RuntimeBuilder, Session, ToolResult, ToolRuntime};

/// 100 lines of 200 bytes: 20,000 bytes, over the 16 KiB the `shell` and `list_dir`
/// contracts show and under their 200 and 1000 lines.
const LINES: usize = 100;
const WIDTH: usize = 200;

fn session() -> Session {
    Session::new("cut", "interactive")
}

/// What the shell command below prints.
fn printed() -> String {
    (1..=LINES)
        .map(|i| format!("line {i:03} {}\n", "x".repeat(WIDTH - 10)))
        .collect()
}

fn print_lines() -> toolgate::runtime::ToolCall {
    call(
        "p",
        "shell",
        json!({"command": format!(
            "x=$(printf '%{}s' '' | tr ' ' x); for i in $(seq 1 {LINES}); do printf 'line %03d %s\\n' \"$i\" \"$x\"; done",
            WIDTH - 10
        )}),
    )
}

/// 250 files whose list_dir lines (`name (0 bytes)`) are 80 bytes each: 20,000 bytes.
fn many_files(f: &Fixture) -> String {
    let mut listing = String::new();
    std::fs::create_dir_all(f.path().join("src")).unwrap();
    for i in 0..250 {
        let name = format!("module_{i:03}_{}.txt", "n".repeat(54));
        std::fs::write(f.path().join("src").join(&name), "").unwrap();
        listing.push_str(&format!("{name} (0 bytes)\n"));
    }
    listing
}

/// Pages through an artifact with read_artifact, as a model would.
async fn read_back(rt: &ToolRuntime, s: &Session, id: &str) -> String {
    let mut text = String::new();
    let mut start = 1;
    loop {
        let page = run1(
            rt,
            s,
            call(
                "r",
                "read_artifact",
                json!({"artifact_id": id, "start_line": start}),
            ),
        )
        .await;
        let st = page.structured().unwrap();
        text.push_str(st["text"].as_str().unwrap());
        if st["truncated"] == false {
            return text;
        }
        start = st["end"].as_u64().unwrap() + 1;
    }
}

/// The artifact lines of a projection (from `Full` on).
fn artifact_lines(r: &ToolResult) -> Vec<String> {
    r.projection()
        .text
        .lines()
        .skip_while(|l| !l.starts_with("Full ") && !l.starts_with("Start of"))
        .filter(|l| !l.starts_with("Hint:"))
        .map(str::to_owned)
        .collect()
}

fn reader_line(id: &str) -> String {
    format!(
        "Read it in parts with read_artifact, e.g. {{\"artifact_id\": \"{id}\", \"start_line\": 1}} (start_line/end_line, or offset/length for bytes)."
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_output_cut_at_16_kib_is_read_back_whole() {
    let f = Fixture::new();
    let rt = f.builder().build().unwrap();
    let s = session();
    let r = run1(&rt, &s, print_lines()).await;
    if !fully_sandboxed(&r) {
        return;
    }
    let expected = printed();
    assert_eq!(expected.len(), 20_000);
    assert!(r.is_success(), "{}", r.projection().text);
    assert!(r.truncated());
    let shown = r.output().unwrap();
    assert!(shown.len() < 16 * 1024 + 100, "{} bytes shown", shown.len());
    assert!(shown.contains(" omitted …]"), "{shown}");
    let a = r.artifacts()[0].clone();
    assert_eq!(
        r.artifacts().len(),
        1,
        "stderr was empty: {:?}",
        r.artifacts()
    );
    assert_eq!(
        (a.id.as_str(), a.size, a.lines, a.part(), a.dropped),
        (
            format!("blake3:{}", blake3::hash(expected.as_bytes()).to_hex()).as_str(),
            20_000,
            100,
            "stdout",
            0
        )
    );
    assert_eq!(
        artifact_lines(&r),
        [
            format!("Full stdout: artifact {} (20000 bytes, 100 lines).", a.id),
            reader_line(&a.id)
        ]
    );
    assert_eq!(read_back(&rt, &s, &a.id).await, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_builtin_output_cut_at_16_kib_is_read_back_whole() {
    let f = Fixture::new();
    let expected = many_files(&f);
    assert_eq!(expected.len(), 20_000);
    let rt = f.builder().build().unwrap();
    let s = session();
    let r = run1(
        &rt,
        &s,
        call("l", "list_dir", json!({"path": "src", "max_entries": 1000})),
    )
    .await;
    assert!(r.is_success(), "{}", r.projection().text);
    assert!(r.truncated());
    assert!(r.output().unwrap().len() < 16 * 1024 + 100);
    let a = r.artifacts()[0].clone();
    assert_eq!((a.size, a.lines, a.part()), (20_000, 250, "output"));
    assert_eq!(
        artifact_lines(&r),
        [
            format!("Full output: artifact {} (20000 bytes, 250 lines).", a.id),
            reader_line(&a.id)
        ]
    );
    assert_eq!(read_back(&rt, &s, &a.id).await, expected);
    // Shown whole, nothing is kept: 20 entries are far below the limits and the threshold.
    let r = run1(
        &rt,
        &s,
        call("l", "list_dir", json!({"path": "src", "max_entries": 20})),
    )
    .await;
    assert_eq!((r.truncated(), r.artifacts().len()), (true, 0));
    assert!(
        r.projection()
            .text
            .contains("[230 more entries not shown; raise max_entries]")
    );
}

/// The projection names only the ways that work: no reader in the session, no promise; a
/// client that reads MCP resources is pointed there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_projection_names_only_ways_that_work_in_the_session() {
    let f = Fixture::new();
    many_files(&f);
    let rt = f.builder().build().unwrap();
    let list = || call("l", "list_dir", json!({"path": "src", "max_entries": 1000}));
    let no_reader = Session::new("a", "interactive").with_tools(vec!["list_dir".into()], "ls");
    let r = run1(&rt, &no_reader, list()).await;
    let id = r.artifacts()[0].id.clone();
    assert_eq!(
        artifact_lines(&r),
        [
            format!("Full output: artifact {id} (20000 bytes, 250 lines)."),
            "No tool of this session reads artifacts; the full output stays in the project's artifact store.".to_owned()
        ]
    );
    let mcp = Session::new("b", "interactive")
        .with_tools(vec!["list_dir".into()], "ls")
        .with_artifact_resources();
    let r = run1(&rt, &mcp, list()).await;
    assert_eq!(
        artifact_lines(&r)[1],
        format!(
            "The MCP client can read it as the resource toolgate-artifact:{id} (linked in this result; resources/read, with ?start_line=N&end_line=M or ?offset=N&length=M for a part)."
        )
    );
    let both = Session::new("c", "interactive")
        .with_toolset("coding")
        .with_artifact_resources();
    let r = run1(&rt, &both, list()).await;
    let lines = artifact_lines(&r);
    assert_eq!(lines[1], reader_line(&id));
    assert!(lines[2].starts_with("The MCP client can also read it as the resource"));
}

/// A runtime over the fixture project with other budgets.
fn with_budgets(f: &Fixture, edit: impl FnOnce(&mut Bundle)) -> ToolRuntime {
    let mut bundle = (*common::bundle()).clone();
    edit(&mut bundle);
    let b = RuntimeBuilder::from_bundle(bundle, env!("CARGO_MANIFEST_DIR"))
        .workspace(f.path())
        .state_dir(f.state.path())
        .shim(shim());
    bind_handlers(b, Arc::new(Counters::default()))
        .build()
        .unwrap()
}

/// A budget that stops or refuses the artifact is said plainly; nothing promises what was not
/// kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_budget_refused_artifact_is_reported_honestly() {
    let f = Fixture::new();
    let expected = many_files(&f);
    let rt = with_budgets(&f, |b| b.project.budgets.session_artifacts = 12_000);
    let s = session();
    let list = || call("l", "list_dir", json!({"path": "src", "max_entries": 1000}));
    let r = run1(&rt, &s, list()).await;
    let a = r.artifacts()[0].clone();
    assert_eq!((a.size, a.dropped), (12_000, 8_000));
    assert_eq!(
        rt.artifacts().get(&a.id).unwrap(),
        expected.as_bytes()[..12_000]
    );
    assert!(
        r.summary().ends_with(
            "(the full output could not be kept: the artifact keeps the first 11.7 KiB (12000 bytes): this session's artifact budget (budgets.session_artifacts, 11.7 KiB) was reached; 7.8 KiB (8000 bytes) dropped)"
        ),
        "{}",
        r.summary()
    );
    assert_eq!(
        artifact_lines(&r),
        [
            format!(
                "Start of the output: artifact {} (the first 12000 bytes, 150 lines); the other 7.8 KiB (8000 bytes) were not kept (an artifact budget was reached).",
                a.id
            ),
            reader_line(&a.id)
        ]
    );
    // The session's budget is spent: nothing is kept, and nothing is promised.
    let r = run1(&rt, &s, list()).await;
    assert_eq!(r.artifacts().len(), 0, "{}", r.summary());
    let text = &r.projection().text;
    assert!(
        text.contains("(the full output could not be kept: no artifact was kept: this session's artifact budget (budgets.session_artifacts, 11.7 KiB) was reached; 19.5 KiB (20000 bytes) dropped)"),
        "{text}"
    );
    assert!(text.contains("[output truncated]\n"), "{text}");
    assert!(
        !text.contains("artifact blake3:") && !text.contains("read_artifact"),
        "{text}"
    );

    // A process's stream held in memory, likewise.
    let f = Fixture::new();
    let rt = with_budgets(&f, |b| b.project.budgets.call_artifacts = 0);
    let r = run1(&rt, &s, print_lines()).await;
    if !fully_sandboxed(&r) {
        return;
    }
    assert_eq!(r.artifacts().len(), 0, "{}", r.summary());
    let text = &r.projection().text;
    assert!(
        text.contains("(the full stdout could not be kept: no artifact was kept: the per-call artifact budget (budgets.call_artifacts, 0 bytes) was reached; 19.5 KiB (20000 bytes) dropped)"),
        "{text}"
    );
    assert!(!text.contains("read_artifact"), "{text}");
}

/// One principal, as `serve --http` would authenticate it.
fn principal(subject: &str) -> toolgate::runtime::Principal {
    toolgate::runtime::Principal {
        issuer: "https://issuer.test".into(),
        subject: subject.into(),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_artifact_is_read_only_by_its_session_or_its_principal() {
    let f = Fixture::new();
    many_files(&f);
    let rt = f.builder().build().unwrap();
    let list = || call("l", "list_dir", json!({"path": "src", "max_entries": 1000}));
    let alice = Session::new("alice-1", "interactive").with_principal(principal("alice"));
    let r = run1(&rt, &alice, list()).await;
    let id = r.artifacts()[0].id.clone();
    let read = |id: &str| call("r", "read_artifact", json!({"artifact_id": id}));
    let missing = format!("blake3:{}", "0".repeat(64));
    let none = run1(&rt, &Session::new("bob", "interactive"), read(&missing)).await;
    assert_eq!(
        none.error_type(),
        Some(toolgate::ir::ErrorType::ResourceNotFound)
    );
    // Another session, with another principal or none, knowing the id: answered as if the
    // artifact did not exist (the same words as for an id nothing has).
    let bob = Session::new("bob", "interactive").with_principal(principal("bob"));
    for other in [bob, Session::new("bob-2", "interactive")] {
        let refused = run1(&rt, &other, read(&id)).await;
        assert_eq!(
            refused.error_type(),
            Some(toolgate::ir::ErrorType::ResourceNotFound)
        );
        let said = refused.projection().text.clone();
        assert_eq!(
            said.replace(&id, "ID"),
            none.projection().text.replace(&missing, "ID")
        );
        assert!(
            !said.contains("line") && !said.contains("module_"),
            "{said}"
        );
    }
    // Its session, and the same principal in a new session, read it.
    for own in [
        alice,
        Session::new("alice-2", "interactive").with_principal(principal("alice")),
    ] {
        let got = run1(&rt, &own, read(&id)).await;
        assert!(got.is_success(), "{}", got.projection().text);
    }
    // Bob producing the same bytes owns them too (the store holds them once).
    let bob = Session::new("bob", "interactive");
    let mine = run1(&rt, &bob, list()).await;
    assert_eq!(mine.artifacts()[0].id, id);
    assert!(run1(&rt, &bob, read(&id)).await.is_success());
}
