//! Exec benchmarks: starting `true` through the runtime — the pipeline, the exec shim
//! (`toolgate-shim`, a second exec; and `toolgate` itself as the shim, for comparison), the
//! sandbox and output capture — against starting it directly. Goal: the runtime within 1.3× of
//! a direct spawn.
//!
//! Run with `cargo bench --bench exec`. Output volume (1 GiB through a tool: peak RSS and
//! throughput) is measured by `benches/exec_output.sh`, since it needs a release binary and
//! `/usr/bin/time`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolgate::runtime::{RuntimeBuilder, Session, ToolCall, ToolRuntime};
use toolgate::spec::load::LoadOptions;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn runtime(ws: &std::path::Path, state: &std::path::Path, shim: &str) -> ToolRuntime {
    RuntimeBuilder::from_specs(&LoadOptions {
        paths: vec![repo().join("benches/fixtures")],
        config: Some(repo().join("benches/fixtures/toolgate.yaml")),
        cwd: repo(),
    })
    .unwrap()
    .workspace(ws)
    .state_dir(state)
    .shim(shim)
    .build()
    .unwrap()
}

fn spawn_true(c: &mut Criterion) {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let lean = runtime(ws.path(), state.path(), env!("CARGO_BIN_EXE_toolgate-shim"));
    let whole = runtime(ws.path(), state.path(), env!("CARGO_BIN_EXE_toolgate"));
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let session = Session::new("bench", "ci");
    let mut g = c.benchmark_group("spawn_true");
    g.sample_size(40).measurement_time(Duration::from_secs(8));
    g.bench_function("direct/std", |b| {
        b.iter(|| {
            let s = std::process::Command::new("true")
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .output()
                .unwrap();
            assert!(s.status.success());
        });
    });
    g.bench_function("direct/tokio", |b| {
        b.iter_custom(|n| {
            tokio.block_on(async {
                let t = Instant::now();
                for _ in 0..n {
                    let o = tokio::process::Command::new("true")
                        .stdout(Stdio::piped())
                        .stderr(Stdio::piped())
                        .output()
                        .await
                        .unwrap();
                    assert!(o.status.success());
                }
                t.elapsed()
            })
        });
    });
    for (name, rt, tool) in [
        ("runtime/no_profile", &lean, "true_plain"),
        ("runtime/workspace_write", &lean, "true_sandboxed"),
        // The same call with `toolgate` itself re-executed as the shim.
        ("runtime/no_profile_toolgate_as_shim", &whole, "true_plain"),
    ] {
        g.bench_function(name, |b| {
            b.iter_custom(|n| {
                tokio.block_on(async {
                    let t = Instant::now();
                    for i in 0..n {
                        let call = ToolCall::new(format!("c{i}"), tool, json!({}));
                        let r = rt
                            .execute(vec![call], &session, CancellationToken::new())
                            .await
                            .unwrap();
                        assert!(r[0].is_success(), "{}", r[0].projection().text);
                    }
                    t.elapsed()
                })
            });
        });
    }
    g.finish();
}

criterion_group!(benches, spawn_true);
criterion_main!(benches);
