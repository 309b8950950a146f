//! HTTP tools against a real HTTP server on 127.0.0.1 (tests/common/http_server.rs): success
//! with a picked part validated against `result`, encoded path and query, 4xx and the
//! server's message, 429 with `Retry-After` retried inside idempotency (attempts journaled),
//! redirects to another host and names resolving to loopback refused, a 50 MB body bounded
//! into an artifact, and secret headers absent from every output.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;
#[path = "common/http_server.rs"]
mod http_server;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{call, run1};
use http_server::{BIG_BYTES, TestServer};
use serde_json::json;
use toolgate::ir::{ErrorType, Status};
use toolgate::runtime::{MemoryJournal, RuntimeBuilder, Session, ToolRuntime};
use toolgate::spec::load::LoadOptions;

const TOKEN: &str = "tg-secret-token-5f1c9a7e";
const FILE_SECRET: &str = "file-secret-c0ffee-42";

/// A project folder with toolgate.yaml and the HTTP tools of these tests.
struct Project {
    dir: tempfile::TempDir,
    state: tempfile::TempDir,
}

fn tool(name: &str, effect: &str, extra: &str, exec: &str) -> String {
    format!(
        r#"name: {name}
version: 1
description: >-
  A test HTTP tool against the local server of the tests ({name}). Returns what the server
  answers.
effect: {effect}
{extra}
timeout: 20s
exec:
  http:
{exec}
"#
    )
}

const ID_PARAMS: &str = r#"parameters:
  type: object
  properties:
    id: {type: string, description: The item id., minLength: 1, maxLength: 100}
    verbose: {type: boolean, description: More detail.}
    tags: {type: array, description: Tags to filter by., items: {type: string, maxLength: 50}, maxItems: 5}
  required: [id]
  additionalProperties: false"#;

const NO_PARAMS: &str = r#"parameters:
  type: object
  properties: {}
  additionalProperties: false"#;

impl Project {
    fn new(server: &TestServer, network: &str) -> Project {
        let dir = tempfile::tempdir().unwrap();
        let base = server.base();
        let port = server.addr.port();
        std::fs::write(
            dir.path().join("toolgate.yaml"),
            format!(
                "specs: [\"tools/*.yaml\"]\nworkspace: .\nstate_dir: .toolgate\n\
                 defaults:\n  permissions: {{network_read: allow, network_write: allow}}\n\
                 {network}\ntargets: [anthropic]\n"
            ),
        )
        .unwrap();
        std::fs::write(dir.path().join("token.txt"), format!("{FILE_SECRET}\n")).unwrap();
        let tools = [
            tool(
                "get_item",
                "network_read",
                &format!(
                    "{ID_PARAMS}\nresult:\n  type: object\n  properties:\n    id: {{type: string}}\n    name: {{type: string}}\n    query: {{type: string}}\n  required: [id, name]"
                ),
                &format!(
                    "    method: GET\n    url: \"{base}/items/{{id}}\"\n    query: [verbose, tags]\n    pick: /data"
                ),
            ),
            tool(
                "create_item",
                "network_write",
                "idempotency: {class: non_idempotent, key: args.request_id}\nparameters:\n  type: object\n  properties:\n    request_id: {type: string, description: Unique id of this request., minLength: 1, maxLength: 100}\n    title: {type: string, description: The title., maxLength: 200}\n    labels: {type: array, description: Labels., items: {type: string, maxLength: 50}, maxItems: 5}\n  required: [request_id, title]\n  additionalProperties: false\nresources:\n  writes: \"'svc:items'\"",
                &format!(
                    "    method: POST\n    url: \"{base}/items\"\n    body: {{fields: [title, labels]}}"
                ),
            ),
            tool(
                "limited_write",
                "network_write",
                "idempotency: {class: non_idempotent, key: args.request_id}\nparameters:\n  type: object\n  properties:\n    request_id: {type: string, description: Unique id of this request., minLength: 1, maxLength: 100}\n  required: [request_id]\n  additionalProperties: false\nresources:\n  writes: \"'svc:limited'\"\nretry:\n  max_attempts: 3\n  on: [RATE_LIMITED]\n  backoff: {initial: 10ms, factor: 2, max: 50ms, jitter: false}\n  budget: 10s",
                &format!(
                    "    method: POST\n    url: \"{base}/limited\"\n    body: {{fields: [request_id]}}"
                ),
            ),
            tool(
                "follow_redirect",
                "network_read",
                NO_PARAMS,
                &format!("    method: GET\n    url: \"{base}/redirect\""),
            ),
            tool(
                "follow_local_redirect",
                "network_read",
                NO_PARAMS,
                &format!(
                    "    method: GET\n    url: \"{base}/redirect-same\"\n    pick: /data/name"
                ),
            ),
            tool(
                "by_name",
                "network_read",
                NO_PARAMS,
                &format!("    method: GET\n    url: \"http://localhost:{port}/items/1\""),
            ),
            tool(
                "big_body",
                "network_read",
                NO_PARAMS,
                &format!("    method: GET\n    url: \"{base}/big\""),
            ),
            tool(
                "echo_secret",
                "network_read",
                NO_PARAMS,
                &format!(
                    "    method: GET\n    url: \"{base}/echo\"\n    headers:\n      Authorization: {{secret: {{env: TG_TEST_TOKEN}}, prefix: \"Bearer \"}}\n      X-Api-Key: {{secret: {{file: token.txt}}}}"
                ),
            ),
            tool(
                "echo_file_secret",
                "network_read",
                NO_PARAMS,
                &format!(
                    "    method: GET\n    url: \"{base}/echo\"\n    headers:\n      X-Api-Key: {{secret: {{file: token.txt}}}}"
                ),
            ),
            tool(
                "forbidden",
                "network_read",
                NO_PARAMS,
                &format!(
                    "    method: GET\n    url: \"{base}/forbidden\"\n    headers:\n      Authorization: {{secret: {{file: token.txt}}, prefix: \"Bearer \"}}"
                ),
            ),
        ];
        std::fs::create_dir_all(dir.path().join("tools")).unwrap();
        for t in &tools {
            let name = t.lines().next().unwrap().trim_start_matches("name: ");
            std::fs::write(dir.path().join(format!("tools/{name}.yaml")), t).unwrap();
        }
        Project {
            dir,
            state: tempfile::tempdir().unwrap(),
        }
    }

    fn builder(&self) -> RuntimeBuilder {
        RuntimeBuilder::from_specs(&LoadOptions {
            paths: vec![],
            config: Some(self.dir.path().join("toolgate.yaml")),
            cwd: self.dir.path().to_path_buf(),
        })
        .unwrap()
        .workspace(self.dir.path())
        .state_dir(self.state.path())
    }
}

const LOOPBACK_OK: &str = "network:\n  allow_private: [\"127.0.0.1\"]";

fn session() -> Session {
    Session::new("s", "interactive")
}

async fn setup(limit_times: u32) -> (TestServer, Project, ToolRuntime, Arc<MemoryJournal>) {
    let server = TestServer::start(limit_times).await;
    let project = Project::new(&server, LOOPBACK_OK);
    let journal = Arc::new(MemoryJournal::default());
    let rt = project.builder().journal(journal.clone()).build().unwrap();
    (server, project, rt, journal)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn success_picks_and_validates_with_path_and_query_encoded() {
    let (server, _p, rt, _) = setup(0).await;
    let r = run1(
        &rt,
        &session(),
        call(
            "c1",
            "get_item",
            json!({"id": "a/../b c", "verbose": true, "tags": ["x", "y z"]}),
        ),
    )
    .await;
    assert_eq!(r.status(), Status::Success, "{}", r.summary());
    let s = r.structured().unwrap();
    // The server sees the value as one encoded segment (it does not decode paths).
    assert_eq!(s["id"], "a%2F..%2Fb%20c");
    assert_eq!(
        s["query"],
        "/items/a%2F..%2Fb%20c?verbose=true&tags=x&tags=y+z"
    );
    assert!(r.summary().contains("200 OK"), "{}", r.summary());
    let seen = server.seen.requests.lock().unwrap().clone();
    assert_eq!(
        seen[0].1,
        "/items/a%2F..%2Fb%20c?verbose=true&tags=x&tags=y+z"
    );
    // A read carries no idempotency key; nothing from the environment's proxies was used.
    assert!(!seen[0].2.iter().any(|(k, _)| k == "idempotency-key"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_errors_carry_the_servers_message() {
    let (_server, _p, rt, _) = setup(0).await;
    let r = run1(
        &rt,
        &session(),
        call("c1", "get_item", json!({"id": "404"})),
    )
    .await;
    assert_eq!(r.error_type(), Some(ErrorType::ResourceNotFound));
    assert!(r.summary().contains("no item 404"), "{}", r.summary());
    let r = run1(
        &rt,
        &session(),
        call(
            "c2",
            "create_item",
            json!({"request_id": "r1", "title": ""}),
        ),
    )
    .await;
    assert_eq!(r.error_type(), Some(ErrorType::InvalidArguments));
    assert!(r.summary().contains("422"), "{}", r.summary());
    assert!(
        r.summary().contains("title must not be empty"),
        "{}",
        r.summary()
    );
    assert_eq!(r.attempts(), 1);
    let r = run1(
        &rt,
        &session(),
        call(
            "c3",
            "create_item",
            json!({"request_id": "r2", "title": "t", "labels": ["a"]}),
        ),
    )
    .await;
    assert_eq!(r.status(), Status::Success, "{}", r.summary());
    let key = r.structured().unwrap()["idempotency_key"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(!key.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limit_is_retried_after_retry_after() {
    let (server, _p, rt, journal) = setup(2).await;
    let started = Instant::now();
    let r = run1(
        &rt,
        &session(),
        call("c1", "limited_write", json!({"request_id": "once"})),
    )
    .await;
    assert_eq!(r.status(), Status::Success, "{}", r.summary());
    assert_eq!(r.attempts(), 3);
    // Retry-After: 1 (seconds) outweighs the policy's 10 ms backoff, twice.
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(
        server
            .seen
            .limited
            .load(std::sync::atomic::Ordering::SeqCst),
        3
    );
    let ops = journal.operations();
    assert_eq!(ops.len(), 1);
    assert_eq!(ops[0].attempts.len(), 3);
    assert_eq!(ops[0].attempts[0].error_type, Some(ErrorType::RateLimited));
    assert_eq!(ops[0].attempts[0].retry_after_ms, Some(1000));
    assert_eq!(ops[0].attempts[2].error_type, None);
    // Every attempt carried the same Idempotency-Key.
    let keys: Vec<String> = server
        .seen
        .requests
        .lock()
        .unwrap()
        .iter()
        .filter_map(|(_, _, h)| {
            h.iter()
                .find(|(k, _)| k == "idempotency-key")
                .map(|(_, v)| v.clone())
        })
        .collect();
    assert_eq!(keys.len(), 3);
    assert!(keys.iter().all(|k| *k == keys[0]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_leave_only_to_allowed_hosts() {
    let (server, _p, rt, _) = setup(0).await;
    let r = run1(&rt, &session(), call("c1", "follow_redirect", json!({}))).await;
    assert_eq!(
        r.error_type(),
        Some(ErrorType::PolicyDenied),
        "{}",
        r.summary()
    );
    assert!(r.summary().contains("evil.example.net"), "{}", r.summary());
    assert_eq!(server.seen.requests.lock().unwrap().len(), 1);
    let r = run1(
        &rt,
        &session(),
        call("c2", "follow_local_redirect", json!({})),
    )
    .await;
    assert_eq!(r.status(), Status::Success, "{}", r.summary());
    assert_eq!(r.structured(), Some(&json!("item 9")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_resolving_to_loopback_is_refused() {
    let (server, _p, rt, _) = setup(0).await;
    let r = run1(&rt, &session(), call("c1", "by_name", json!({}))).await;
    assert_eq!(
        r.error_type(),
        Some(ErrorType::PolicyDenied),
        "{}",
        r.summary()
    );
    assert!(r.summary().contains("loopback"), "{}", r.summary());
    assert!(server.seen.requests.lock().unwrap().is_empty());
    // Allowed by name, it connects.
    let p = Project::new(&server, "network:\n  allow_private: [localhost]");
    let rt = p.builder().build().unwrap();
    let r = run1(&rt, &session(), call("c2", "by_name", json!({}))).await;
    assert_eq!(r.status(), Status::Success, "{}", r.summary());
    // And with nothing allowed, the IP literal itself is refused before connecting.
    let p = Project::new(&server, "");
    let rt = p.builder().build().unwrap();
    let r = run1(&rt, &session(), call("c3", "get_item", json!({"id": "1"}))).await;
    assert_eq!(
        r.error_type(),
        Some(ErrorType::PolicyDenied),
        "{}",
        r.summary()
    );
    assert_eq!(server.seen.requests.lock().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_body_is_bounded_into_an_artifact() {
    let (_server, _p, rt, _) = setup(0).await;
    let r = run1(&rt, &session(), call("c1", "big_body", json!({}))).await;
    assert_eq!(r.status(), Status::Success, "{}", r.summary());
    assert!(r.truncated());
    let a = &r.artifacts()[0];
    assert_eq!(a.size, BIG_BYTES as u64);
    assert!(r.summary().contains(&a.id), "{}", r.summary());
    let shown = r.output().unwrap_or_default().len();
    assert!(
        shown < 200_000,
        "the model's view is bounded: {shown} bytes"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_never_reach_any_output() {
    let (server, _p, rt, journal) = setup(0).await;
    let r = run1(&rt, &session(), call("c1", "echo_file_secret", json!({}))).await;
    assert_eq!(r.status(), Status::Success, "{}", r.summary());
    // The server did receive it, and echoed it back.
    let seen = server.seen.requests.lock().unwrap().clone();
    let key = seen[0].2.iter().find(|(k, _)| k == "x-api-key").unwrap();
    assert_eq!(key.1, FILE_SECRET);
    let r2 = run1(&rt, &session(), call("c2", "forbidden", json!({}))).await;
    assert_eq!(r2.error_type(), Some(ErrorType::PolicyDenied));
    assert!(r2.summary().contains("403"), "{}", r2.summary());
    let mut everything = String::new();
    for r in [&r, &r2] {
        everything.push_str(&format!("{r:?}"));
        everything.push_str(&serde_json::to_string(r.projection()).unwrap());
    }
    everything.push_str(&format!("{:?}", rt.traces()));
    everything.push_str(&format!("{:?}", journal.operations()));
    assert!(
        everything.contains("[REDACTED]"),
        "the echo was redacted, not dropped"
    );
    assert!(
        !everything.contains(FILE_SECRET),
        "the secret leaked: {everything}"
    );
}

/// Through the binary, with the secret in the environment: stdout, stderr, the durable journal
/// (`toolgate journal`, and the SQLite file itself) and the trace never hold it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cli_never_prints_or_keeps_the_secret() {
    let server = TestServer::start(0).await;
    let p = Project::new(&server, LOOPBACK_OK);
    let config = p.dir.path().join("toolgate.yaml");
    let run = |args: &[&str]| {
        let args: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
        let config = config.clone();
        let ws = p.dir.path().to_path_buf();
        let state = p.state.path().to_path_buf();
        async move {
            tokio::task::spawn_blocking(move || {
                std::process::Command::new(env!("CARGO_BIN_EXE_toolgate"))
                    .args(&args)
                    .arg("--config")
                    .arg(&config)
                    .arg("--state-dir")
                    .arg(&state)
                    .current_dir(&ws)
                    .env("TG_TEST_TOKEN", TOKEN)
                    .output()
                    .unwrap()
            })
            .await
            .unwrap()
        }
    };
    let ws = p.dir.path().to_string_lossy().into_owned();
    let o = run(&[
        "call",
        "echo_secret",
        "--args",
        "{}",
        "--format",
        "json",
        "--workspace",
        &ws,
    ])
    .await;
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("[REDACTED]"), "{out}");
    let seen = server.seen.requests.lock().unwrap().clone();
    let auth = seen[0]
        .2
        .iter()
        .find(|(k, _)| k == "authorization")
        .unwrap();
    assert_eq!(auth.1, format!("Bearer {TOKEN}"));
    let mut everything = out;
    for args in [
        &["journal", "list", "--format", "json"][..],
        &["journal", "stats"][..],
    ] {
        let o = run(args).await;
        everything.push_str(&String::from_utf8_lossy(&o.stdout));
        everything.push_str(&String::from_utf8_lossy(&o.stderr));
    }
    for entry in walk(p.state.path()) {
        everything.push_str(&String::from_utf8_lossy(&std::fs::read(entry).unwrap()));
    }
    for secret in [TOKEN, FILE_SECRET] {
        assert!(!everything.contains(secret), "{secret} leaked");
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// What resolution refuses in `exec.http`, each at its place with a fix: a placeholder in the
/// host, an undeclared argument, an optional path parameter, a body on GET, a bad pointer.
#[test]
fn spec_mistakes_are_contract_errors() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("toolgate.yaml"),
        "specs: [\"*.yaml\"]\nworkspace: .\nstate_dir: .toolgate\ntargets: [anthropic]\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("bad.yaml"),
        r#"name: bad_http
version: 1
description: >-
  A tool whose HTTP request is wrong in every way resolution checks. Returns nothing useful.
effect: network_read
parameters:
  type: object
  properties:
    host: {type: string, description: A host name., maxLength: 100}
    id: {type: string, description: The item id., maxLength: 100}
  additionalProperties: false
exec:
  http:
    method: get
    url: "https://{host}/items/{id}"
    query: [idd]
    body: {fields: [id]}
    pick: data
"#,
    )
    .unwrap();
    std::fs::write(
        dir.path().join("bad2.yaml"),
        r#"name: bad_method
version: 1
description: >-
  A tool whose HTTP method does not exist. Returns nothing useful.
effect: network_read
parameters: {type: object, properties: {}, additionalProperties: false}
exec: {http: {method: FETCH, url: "https://api.example.com/x"}}
"#,
    )
    .unwrap();
    let checked = toolgate::check::check_specs(&LoadOptions {
        paths: vec![],
        config: Some(dir.path().join("toolgate.yaml")),
        cwd: dir.path().to_path_buf(),
    })
    .unwrap();
    assert!(checked.has_errors());
    let messages: Vec<String> = checked
        .diagnostics
        .iter()
        .map(|d| d.message.clone())
        .collect();
    let all = messages.join("\n");
    for expected in [
        "unknown HTTP method `FETCH`",
        "the host of `https://{host}/items/{id}` must be written literally",
        "the path parameter `id` is not required",
        "`idd` is not a parameter of this tool",
        "a GET request has no body",
        "`data` is not a JSON Pointer",
    ] {
        assert!(all.contains(expected), "missing `{expected}` in:\n{all}");
    }
}
