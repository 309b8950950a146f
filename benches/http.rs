//! HTTP tool benchmark: a GET through the runtime (validation, permission, scheduling, the
//! request built from arguments, egress checks, the bounded body capture, JSON parsing, the
//! `pick`, validation against `result`, normalization) against the same request made directly
//! with the same HTTP client (reqwest, a kept-alive connection, the body parsed as JSON), both
//! on a local hyper server. Goal: the runtime within 1.2× of the direct request.
//!
//! Run with `cargo bench --bench http`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

#[path = "../tests/common/http_server.rs"]
mod http_server;

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolgate::runtime::{RuntimeBuilder, Session, ToolCall, ToolRuntime};
use toolgate::spec::load::LoadOptions;

fn project(dir: &std::path::Path, base: &str) {
    std::fs::write(
        dir.join("toolgate.yaml"),
        "specs: [\"*.yaml\"]\nworkspace: .\nstate_dir: .toolgate\n\
         defaults:\n  permissions: {network_read: allow}\n\
         network:\n  allow_private: [\"127.0.0.1\"]\ntargets: [anthropic]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("get_item.yaml"),
        format!(
            r#"name: get_item
version: 1
description: >-
  Fetch one item of the local benchmark server by its id. Returns the item's id and name.
effect: network_read
parameters:
  type: object
  properties:
    id: {{type: string, description: The item id., minLength: 1, maxLength: 100}}
  required: [id]
  additionalProperties: false
result:
  type: object
  properties:
    id: {{type: string}}
    name: {{type: string}}
  required: [id, name]
timeout: 10s
exec:
  http:
    method: GET
    url: "{base}/items/{{id}}"
    pick: /data
"#
        ),
    )
    .unwrap();
}

fn runtime(dir: &std::path::Path, state: &std::path::Path) -> ToolRuntime {
    RuntimeBuilder::from_specs(&LoadOptions {
        paths: vec![],
        config: Some(dir.join("toolgate.yaml")),
        cwd: dir.to_path_buf(),
    })
    .unwrap()
    .workspace(dir)
    .state_dir(state)
    .build()
    .unwrap()
}

fn http_get(c: &mut Criterion) {
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let server = tokio.block_on(http_server::TestServer::start(0));
    let base = server.base();
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    project(dir.path(), &base);
    let rt = runtime(dir.path(), state.path());
    let session = Session::new("bench", "ci");
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let url = format!("{base}/items/42");

    let mut g = c.benchmark_group("http_get");
    g.sample_size(50).measurement_time(Duration::from_secs(8));
    g.bench_function("direct/reqwest", |b| {
        b.iter_custom(|n| {
            tokio.block_on(async {
                let t = Instant::now();
                for _ in 0..n {
                    let r = client.get(&url).send().await.unwrap();
                    assert!(r.status().is_success());
                    let body = r.bytes().await.unwrap();
                    let v: Value = serde_json::from_slice(&body).unwrap();
                    assert_eq!(v["data"]["id"], "42");
                }
                t.elapsed()
            })
        });
    });
    g.bench_function("runtime", |b| {
        b.iter_custom(|n| {
            tokio.block_on(async {
                let t = Instant::now();
                for i in 0..n {
                    let call = ToolCall::new(format!("c{i}"), "get_item", json!({"id": "42"}));
                    let r = rt
                        .execute(vec![call], &session, CancellationToken::new())
                        .await
                        .unwrap();
                    assert!(r[0].is_success(), "{}", r[0].summary());
                }
                t.elapsed()
            })
        });
    });
    g.finish();
}

criterion_group!(benches, http_get);
criterion_main!(benches);
