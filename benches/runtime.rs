//! Runtime benchmarks: the pipeline's own cost per call for a pure in-process tool, compared
//! with calling the handler directly — with the in-memory journal (`per_call`) and with the
//! SQLite journal, whose audit records every call (`per_call_sqlite`) — and for a read-only and
//! a writing handler (which the scheduler admits and locks); eight read-only 50 ms calls in one
//! batch; and sixteen concurrent `execute()`s of a 2 ms write, on one file and on sixteen files.
//!
//! And the planner alone (`plan`): `Plan::build` over 1,000 and 20,000 calls.
//!
//! Run with `cargo bench --bench runtime`. The per-call numbers use `iter_custom` so that
//! entering the tokio runtime is not counted: each sample runs many calls inside one
//! `block_on` and divides.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolgate::runtime::extend::{HandlerContext, HandlerOutput, ToolHandler};
use toolgate::runtime::{RuntimeBuilder, Session, ToolCall, ToolRuntime};
use toolgate::spec::load::LoadOptions;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn echo_handler() -> Arc<dyn ToolHandler> {
    Arc::new(|_ctx: HandlerContext, args: Value| async move {
        Ok(HandlerOutput::text(
            args["text"].as_str().unwrap_or("").to_owned(),
        ))
    })
}

fn runtime(ws: &std::path::Path, state: &std::path::Path) -> ToolRuntime {
    builder(ws, state).build().unwrap()
}

fn builder(ws: &std::path::Path, state: &std::path::Path) -> toolgate::runtime::RuntimeBuilder {
    let sleep = |_ctx: HandlerContext, args: Value| async move {
        // No timer for 0 ms: tokio's timer has a 1 ms tick, which would swamp a per-call cost.
        let ms = args["ms"].as_u64().unwrap_or(0);
        if ms > 0 {
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
        Ok(HandlerOutput::text("done"))
    };
    let nothing = |_ctx: HandlerContext, _args: Value| async move { Ok(HandlerOutput::text("")) };
    RuntimeBuilder::from_specs(&LoadOptions {
        paths: vec![
            repo().join("tool-specs"),
            repo().join("tests/fixtures/runtime"),
        ],
        config: Some(repo().join("tests/fixtures/runtime/toolgate.yaml")),
        cwd: repo(),
    })
    .unwrap()
    .workspace(ws)
    .state_dir(state)
    .bind("echo_handler", echo_handler())
    .bind("slow_read", Arc::new(sleep))
    .bind("slow_edit", Arc::new(sleep))
    .bind("flaky", Arc::new(nothing))
    .bind("send_note", Arc::new(nothing))
}

/// The pure tools through the pipeline, one call at a time.
fn pipeline_calls(c: &mut Criterion, group: &str, rt: &ToolRuntime) {
    let tokio_rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let session = Session::new("bench", "interactive");
    let mut g = c.benchmark_group(group);
    for tool in ["echo", "echo_handler"] {
        g.bench_function(format!("pipeline/{tool}"), |b| {
            b.iter_custom(|iters| {
                tokio_rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        let call = ToolCall::new("c", tool, json!({"text": "hello"}));
                        let r = rt
                            .execute(vec![call], &session, CancellationToken::new())
                            .await
                            .unwrap();
                        black_box(r);
                    }
                    start.elapsed()
                })
            });
        });
    }
    g.finish();
}

fn per_call_sqlite(c: &mut Criterion) {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let rt = builder(ws.path(), state.path())
        .sqlite_journal()
        .build()
        .unwrap();
    pipeline_calls(c, "per_call_sqlite", &rt);
}

fn per_call(c: &mut Criterion) {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let rt = runtime(ws.path(), state.path());
    let tokio_rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let session = Session::new("bench", "interactive");
    let mut g = c.benchmark_group("per_call");
    // A pure builtin, a pure handler, a read-only handler and a local_write handler (the last
    // two declare a file resource: the scheduler admits them against every call in flight).
    let cases = [
        ("echo", json!({"text": "hello"})),
        ("echo_handler", json!({"text": "hello"})),
        ("slow_read", json!({"path": "a.txt", "ms": 0})),
        ("slow_edit", json!({"path": "a.txt", "ms": 0})),
    ];
    for (tool, args) in cases {
        g.bench_function(format!("pipeline/{tool}"), |b| {
            b.iter_custom(|iters| {
                tokio_rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        let id = format!("c{}", NEXT_ID.fetch_add(1, Ordering::Relaxed));
                        let call = ToolCall::new(id, tool, args.clone());
                        let r = rt
                            .execute(vec![call], &session, CancellationToken::new())
                            .await
                            .unwrap();
                        black_box(r);
                    }
                    start.elapsed()
                })
            });
        });
    }
    let handler = echo_handler();
    g.bench_function("direct/echo_handler", |b| {
        b.iter_custom(|iters| {
            tokio_rt.block_on(async {
                let start = Instant::now();
                for _ in 0..iters {
                    let ctx = HandlerContext {
                        call_id: "c".into(),
                        session_id: "bench".into(),
                        tool: "echo_handler".into(),
                        idempotency_key: "bench:c".into(),
                        attempt: 1,
                        workspace: PathBuf::from("/"),
                        cancel: CancellationToken::new(),
                    };
                    black_box(handler.call(ctx, json!({"text": "hello"})).await.unwrap());
                }
                start.elapsed()
            })
        });
    });
    g.finish();
}

fn batch(c: &mut Criterion) {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let rt = runtime(ws.path(), state.path());
    let tokio_rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let session = Session::new("bench", "interactive");
    let mut g = c.benchmark_group("batch");
    g.sample_size(20).measurement_time(Duration::from_secs(4));
    g.bench_function("eight_reads_50ms", |b| {
        b.iter(|| {
            tokio_rt.block_on(async {
                let calls = (0..8)
                    .map(|i| {
                        ToolCall::new(
                            format!("r{i}"),
                            "slow_read",
                            json!({"path": format!("f{i}.txt"), "ms": 50}),
                        )
                    })
                    .collect();
                let r = rt
                    .run(calls, &session, CancellationToken::new())
                    .await
                    .unwrap();
                assert_eq!(r.plan.batches.len(), 1);
                black_box(r)
            })
        });
    });
    g.finish();
}

/// Call ids unique across iterations (a journaled call with a used id is replayed, not run).
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// Sixteen concurrent `execute()`s (one call each, as `serve` makes them) of a 2 ms write: on
/// one file they must run one after another, on sixteen files at once.
fn contended(c: &mut Criterion) {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let rt = runtime(ws.path(), state.path());
    let tokio_rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut g = c.benchmark_group("sixteen_concurrent");
    g.sample_size(20).measurement_time(Duration::from_secs(4));
    for (name, one_file) in [("one_file", true), ("sixteen_files", false)] {
        g.bench_function(name, |b| {
            b.iter(|| {
                tokio_rt.block_on(async {
                    let mut tasks = tokio::task::JoinSet::new();
                    for i in 0..16 {
                        let rt = rt.clone();
                        let path = if one_file {
                            "same.txt".to_owned()
                        } else {
                            format!("f{i}.txt")
                        };
                        tasks.spawn(async move {
                            let session = Session::new(format!("s{i}"), "interactive");
                            let id = format!("w{}", NEXT_ID.fetch_add(1, Ordering::Relaxed));
                            let call =
                                ToolCall::new(id, "slow_edit", json!({"path": path, "ms": 2}));
                            let r = rt
                                .execute(vec![call], &session, CancellationToken::new())
                                .await
                                .unwrap();
                            assert!(r[0].is_success(), "{:?}", r[0]);
                        });
                    }
                    while let Some(t) = tasks.join_next().await {
                        t.unwrap();
                    }
                })
            });
        });
    }
    g.finish();
}

/// `n` calls as a turn of an agent working on a repository might hold them: each reads one of
/// 500 files, every fourth writes it, every 50th reads the whole tree (`tree:src`), every 100th
/// runs a command that declares no resources (it runs alone), and a tenth share a concurrency
/// group of `max: 4`.
fn plan_inputs(
    n: usize,
) -> (
    Vec<toolgate::runtime::Footprint>,
    toolgate::ir::ConcurrencyGroup,
) {
    let footprints = (0..n)
        .map(|i| {
            let file = format!("file:src/f{}.rs", (i * 7919) % 500);
            let mut f = toolgate::runtime::Footprint::default();
            if i % 50 == 0 {
                f.reads.insert("tree:src".to_owned());
            } else if i % 4 == 0 {
                f.writes.insert(file);
            } else if i % 100 != 1 {
                f.reads.insert(file);
            }
            f
        })
        .collect();
    let group = toolgate::ir::ConcurrencyGroup {
        name: "index".to_owned(),
        max: 4,
    };
    (footprints, group)
}

fn plan(c: &mut Criterion) {
    use toolgate::ir::Effect;
    use toolgate::runtime::{Plan, ScheduleInput};
    let mut g = c.benchmark_group("plan");
    g.sample_size(10);
    for n in [1_000, 20_000] {
        let (footprints, group) = plan_inputs(n);
        let inputs: Vec<ScheduleInput<'_>> = footprints
            .iter()
            .enumerate()
            .map(|(i, f)| ScheduleInput {
                index: i,
                call_id: "call",
                tool: "tool",
                effect: if !f.writes.is_empty() {
                    Effect::LocalWrite
                } else if i % 100 == 1 {
                    Effect::ProcessExecution
                } else {
                    Effect::ReadOnly
                },
                declares_resources: i % 100 != 1,
                footprint: f,
                group: (i % 10 == 3).then_some(&group),
            })
            .collect();
        g.bench_function(format!("{n}-calls"), |b| {
            b.iter(|| black_box(Plan::build(black_box(&inputs))))
        });
    }
    g.finish();
}

criterion_group!(benches, per_call, per_call_sqlite, batch, contended, plan);
criterion_main!(benches);
