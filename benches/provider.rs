//! Provider glue benchmarks: the cost of parsing a model's reply and rendering the provider's
//! result messages, per call, for each provider, next to the pipeline's own cost for the same
//! pure call (`pipeline/echo`) and the whole round trip (`P/run`: parse, pipeline, render).
//!
//! Run with `cargo bench --bench provider`. `P/parse_render/N` is one reply of N calls of the
//! pure `notes/lookup` (called `notes_lookup`, so the stand-in map is exercised): divide by N
//! for the cost per call.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolgate::runtime::{Provider, ProviderAdapter, RuntimeBuilder, Session, ToolCall};
use toolgate::spec::load::LoadOptions;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A reply of `n` calls of `notes_lookup` in the provider's format.
fn reply(p: Provider, n: usize) -> Value {
    let args = json!({"text": "the session timeout is 5 seconds"});
    let text = args.to_string();
    match p {
        Provider::OpenaiChat => json!({"choices": [{"index": 0, "message": {"role": "assistant",
            "tool_calls": (0..n).map(|i| json!({"id": format!("call_{i}"), "type": "function",
                "function": {"name": "notes_lookup", "arguments": text}})).collect::<Vec<_>>()}}]}),
        Provider::OpenaiResponses => {
            json!({"output": (0..n).map(|i| json!({"type": "function_call",
            "id": format!("fc_{i}"), "call_id": format!("call_{i}"), "name": "notes_lookup",
            "arguments": text})).collect::<Vec<_>>()})
        }
        Provider::Anthropic => json!({"role": "assistant", "content": (0..n).map(|i| json!({
            "type": "tool_use", "id": format!("toolu_{i}"), "name": "notes_lookup",
            "input": args})).collect::<Vec<_>>()}),
        Provider::Gemini => json!({"responseId": "r", "candidates": [{"content": {"role": "model",
            "parts": (0..n).map(|_| json!({"functionCall": {"name": "notes_lookup", "args": args}}))
                .collect::<Vec<_>>()}}]}),
        Provider::Mcp => Value::Array(
            (0..n)
                .map(|i| {
                    json!({"jsonrpc": "2.0", "id": i,
            "method": "tools/call", "params": {"name": "notes_lookup", "arguments": args}})
                })
                .collect(),
        ),
    }
}

fn bench(c: &mut Criterion) {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let rt = RuntimeBuilder::from_specs(&LoadOptions {
        paths: Vec::new(),
        config: Some(repo().join("tests/fixtures/providers/project/toolgate.yaml")),
        cwd: repo(),
    })
    .unwrap()
    .workspace(ws.path())
    .state_dir(state.path())
    .build()
    .unwrap();
    let tokio_rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let session = Session::new("bench", "interactive");
    let mut g = c.benchmark_group("provider");
    g.measurement_time(Duration::from_secs(3));
    g.warm_up_time(Duration::from_secs(1));

    // The pipeline alone, for the same pure call.
    g.bench_function("pipeline/echo", |b| {
        b.iter_custom(|iters| {
            tokio_rt.block_on(async {
                let start = Instant::now();
                for i in 0..iters {
                    let call = ToolCall::new(
                        format!("c{i}"),
                        "notes/lookup",
                        json!({"text": "the session timeout is 5 seconds"}),
                    );
                    black_box(
                        rt.run(vec![call], &session, CancellationToken::new())
                            .await
                            .unwrap(),
                    );
                }
                start.elapsed()
            })
        })
    });

    for p in Provider::ALL {
        let adapter = ProviderAdapter::new(*p, &rt);
        for n in [1usize, 8] {
            let r = reply(*p, n);
            let turn = adapter.parse(&r).unwrap();
            let results = tokio_rt
                .block_on(rt.run(turn.calls().to_vec(), &session, CancellationToken::new()))
                .unwrap()
                .results;
            assert_eq!(
                adapter.render(&turn, &results).len(),
                match p {
                    Provider::Anthropic | Provider::Gemini => 1,
                    _ => n,
                }
            );
            g.bench_function(format!("{p}/parse_render/{n}"), |b| {
                b.iter(|| {
                    let turn = adapter.parse(black_box(&r)).unwrap();
                    black_box(adapter.render(&turn, &results))
                })
            });
        }
        let r = reply(*p, 1);
        g.bench_function(format!("{p}/run"), |b| {
            b.iter_custom(|iters| {
                tokio_rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        black_box(
                            adapter
                                .run(&rt, &r, &session, CancellationToken::new())
                                .await
                                .unwrap(),
                        );
                    }
                    start.elapsed()
                })
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
