//! Exec benchmarks: starting `true` through the runtime — the pipeline, the exec shim
//! (`toolgate-shim`, a second exec; and `toolgate` itself as the shim, for comparison), the
//! sandbox and output capture — against starting it directly. Goal: the runtime within 1.3× of
//! a direct spawn.
//!
//! Before and after the view, in one run: each sandboxed case runs twice, once on this kernel
//! (mount and PID namespaces: the view, the workspace walk for the masks, the init) and once
//! planned as if the kernel had no namespaces (`*_before_ns`: the same profile made best effort,
//! so it runs with Landlock, seccomp, rlimits and cgroups only, as before the view existed).
//! The walk itself is measured on this repository's files (without `target/`, ~900 files) and
//! on a generated tree of 20,000 files, alone and on the spawn path.
//!
//! Before and after the fork server, in one run: `*_shim_per_call` starts a shim per call (the
//! fallback), the other runtime rows fork it from the runtime's fork server.
//!
//! Run with `cargo bench --bench exec`. Output volume (1 GiB through a tool: peak RSS and
//! throughput) is measured by `benches/exec_output.sh`, since it needs a release binary and
//! `/usr/bin/time`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolgate::ir::ProtectPolicy;
use toolgate::policy::ProtectedSet;
use toolgate::runtime::extend::Backend;
use toolgate::runtime::sandbox::CommandExecutor;
use toolgate::runtime::sandbox::{KernelFeatures, Protection, probe, walk};
use toolgate::runtime::{RuntimeBuilder, Session, ToolCall, ToolRuntime};
use toolgate::spec::load::LoadOptions;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn runtime(ws: &std::path::Path, state: &std::path::Path, shim: &str) -> ToolRuntime {
    builder(ws, state, shim).build().unwrap()
}

/// The same runtime without the fork server: every call starts a shim of its own (the
/// fallback, and how every call ran before the fork server).
fn runtime_shim_per_call(ws: &std::path::Path, state: &std::path::Path, shim: &str) -> ToolRuntime {
    let checked = toolgate::check::check_specs(&LoadOptions {
        paths: vec![repo().join("benches/fixtures")],
        config: Some(repo().join("benches/fixtures/toolgate.yaml")),
        cwd: repo(),
    })
    .unwrap();
    let exec = CommandExecutor::new(checked.resolution.project.sandbox_profiles.clone())
        .with_shim(shim)
        .with_fork_server(false);
    builder(ws, state, shim)
        .executor(Backend::Command, exec)
        .build()
        .unwrap()
}

fn builder(ws: &std::path::Path, state: &std::path::Path, shim: &str) -> RuntimeBuilder {
    RuntimeBuilder::from_specs(&LoadOptions {
        paths: vec![repo().join("benches/fixtures")],
        config: Some(repo().join("benches/fixtures/toolgate.yaml")),
        cwd: repo(),
    })
    .unwrap()
    .workspace(ws)
    .state_dir(state)
    .shim(shim)
}

/// The same runtime planned as if this kernel had no mount or PID namespaces, with every
/// profile made best effort: the sandbox as it was before the view (Landlock, seccomp,
/// rlimits, cgroups).
fn runtime_before_ns(ws: &std::path::Path, state: &std::path::Path, shim: &str) -> ToolRuntime {
    let checked = toolgate::check::check_specs(&LoadOptions {
        paths: vec![repo().join("benches/fixtures")],
        config: Some(repo().join("benches/fixtures/toolgate.yaml")),
        cwd: repo(),
    })
    .unwrap();
    let mut profiles = checked.resolution.project.sandbox_profiles.clone();
    for p in profiles.values_mut() {
        p.best_effort = true;
    }
    let kernel = KernelFeatures {
        namespaces: None,
        ..probe().clone()
    };
    let exec = CommandExecutor::new(profiles)
        .with_shim(shim)
        .with_kernel(kernel);
    builder(ws, state, shim)
        .executor(Backend::Command, Arc::new(exec))
        .build()
        .unwrap()
}

/// Times `n` calls of a tool that must succeed, listing the protections of the first.
fn time_calls(
    tokio: &tokio::runtime::Runtime,
    rt: &ToolRuntime,
    session: &Session,
    tool: &str,
    n: u64,
    expect: Option<(Protection, bool)>,
) -> Duration {
    tokio.block_on(async {
        let t = Instant::now();
        for i in 0..n {
            let call = ToolCall::new(format!("c{i}"), tool, json!({}));
            let r = rt
                .execute(vec![call], session, CancellationToken::new())
                .await
                .unwrap();
            assert!(r[0].is_success(), "{}", r[0].projection().text);
            if let Some((p, present)) = expect {
                assert_eq!(r[0].protections().contains(&p), present, "{tool}: {p:?}");
            }
        }
        t.elapsed()
    })
}

fn spawn_true(c: &mut Criterion) {
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let lean_shim = env!("CARGO_BIN_EXE_toolgate-shim");
    let lean = runtime(ws.path(), state.path(), lean_shim);
    let per_call = runtime_shim_per_call(ws.path(), state.path(), lean_shim);
    let before = runtime_before_ns(ws.path(), state.path(), lean_shim);
    let whole = runtime(ws.path(), state.path(), env!("CARGO_BIN_EXE_toolgate"));
    let big = tree(20_000);
    let lean_big = runtime(big.path(), state.path(), lean_shim);
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
    let ns = probe().namespaces.is_some();
    let view = Some((Protection::MountNamespace, ns));
    let no_view = Some((Protection::MountNamespace, false));
    for (name, rt, tool, expect) in [
        (
            "runtime/no_profile_before_ns",
            &before,
            "true_plain",
            no_view,
        ),
        ("runtime/no_profile", &lean, "true_plain", view),
        // Without the fork server: a shim exec'd per call.
        (
            "runtime/no_profile_shim_per_call",
            &per_call,
            "true_plain",
            view,
        ),
        (
            "runtime/workspace_write_before_ns",
            &before,
            "true_sandboxed",
            no_view,
        ),
        ("runtime/workspace_write", &lean, "true_sandboxed", view),
        (
            "runtime/workspace_write_shim_per_call",
            &per_call,
            "true_sandboxed",
            view,
        ),
        // The walk on the spawn path: a workspace of 20,000 files.
        (
            "runtime/workspace_write_20k_files",
            &lean_big,
            "true_sandboxed",
            view,
        ),
        // The same call with `toolgate` itself re-executed as the shim.
        (
            "runtime/no_profile_toolgate_as_shim",
            &whole,
            "true_plain",
            None,
        ),
    ] {
        g.bench_function(name, |b| {
            b.iter_custom(|n| time_calls(&tokio, rt, &session, tool, n, expect));
        });
    }
    g.finish();
}

/// A tree of `files` small files, 50 per folder in folders 3 deep, with a secret every 1,000.
fn tree(files: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..files {
        let sub = dir
            .path()
            .join(format!("d{}", i / 2500))
            .join(format!("e{}", (i / 250) % 10))
            .join(format!("f{}", (i / 50) % 5));
        std::fs::create_dir_all(&sub).unwrap();
        let name = if i % 1000 == 0 {
            ".env".to_owned()
        } else {
            format!("file{i}.txt")
        };
        std::fs::write(sub.join(name), "x").unwrap();
    }
    dir
}

/// This repository's files, without `target/`, copied (so the walk sees a real project).
fn repository_copy() -> tempfile::TempDir {
    fn copy(from: &std::path::Path, to: &std::path::Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap().flatten() {
            let (src, dst) = (e.path(), to.join(e.file_name()));
            let t = e.file_type().unwrap();
            if e.file_name() == "target" {
                continue;
            } else if t.is_dir() {
                copy(&src, &dst);
            } else if t.is_file() {
                std::fs::copy(&src, &dst).unwrap();
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    copy(&repo(), dir.path());
    dir
}

fn workspace_walk(c: &mut Criterion) {
    let set = ProtectedSet::new(&ProtectPolicy::default()).unwrap();
    let checkout = repository_copy();
    let big = tree(20_000);
    let mut g = c.benchmark_group("workspace_walk");
    g.sample_size(30).measurement_time(Duration::from_secs(6));
    for (name, dir) in [("repository", checkout.path()), ("20k_files", big.path())] {
        let found = walk(dir, &set);
        eprintln!(
            "workspace_walk/{name}: {} entries, {} masks, {} .git",
            found.entries,
            found.masks(),
            found.git.len()
        );
        g.bench_function(name, |b| b.iter(|| walk(dir, &set)));
    }
    g.finish();
}

criterion_group!(benches, spawn_true, workspace_walk);
criterion_main!(benches);
