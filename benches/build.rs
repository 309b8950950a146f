//! `toolgate build` vs `toolgate lint` over 1,000 specs, in the same run.
//!
//! The project is `benches/support/catalogue.rs`: 1,000 distinct contracts in 50 toolsets of
//! 20, lint-clean (`tests/cli_build.rs` keeps it so; the benchmark stops if it is not). `lint`
//! is load + resolve + lint (`check::check_specs`); `build` is the same plus what
//! `toolgate build` does with the output folder (`emit::write_build`), measured three ways:
//! - up to date: the folder holds this build (the fingerprint matches), nothing is emitted;
//! - regenerate: every file is emitted and compared with the folder, nothing changes on disk
//!   (what a build does after a contract changed, minus writing the few changed files);
//! - empty folder: a first build, about 2,300 files created.
//!
//! After criterion's groups, a plain timing of a few runs prints the medians and their ratios
//! to `lint`.
//!
//! Run: `cargo bench --bench build`. `TOOLGATE_BENCH_PROJECT=DIR cargo bench --bench build`
//! writes the project to DIR and stops, for profiling the CLI on the same input.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

#[path = "support/catalogue.rs"]
mod catalogue;

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use toolgate::check::{self, CheckedProject};
use toolgate::emit::rust::{RustOptions, ToolgateDependency};
use toolgate::emit::{self, BuildOptions, ListOptions};
use toolgate::ir::Bundle;
use toolgate::spec::load::LoadOptions;

fn check(dir: &Path) -> CheckedProject {
    check::check_specs(&LoadOptions {
        paths: vec![],
        config: None,
        cwd: dir.to_path_buf(),
    })
    .expect("the project loads")
}

fn lint(dir: &Path) -> usize {
    check(dir).diagnostics.len()
}

fn bundle(dir: &Path) -> Bundle {
    check(dir).bundle().expect("the project has no errors")
}

fn options(bundle: &Bundle) -> BuildOptions {
    BuildOptions {
        lists: ListOptions::for_project(&bundle.project),
        rust: Some(RustOptions {
            toolgate: ToolgateDependency::Path(env!("CARGO_MANIFEST_DIR").into()),
            ..RustOptions::default()
        }),
    }
}

/// `toolgate build`: lint, then skip or emit and write.
fn build(dir: &Path, out: &Path) -> emit::Written {
    let bundle = bundle(dir);
    emit::write_build(&bundle, &options(&bundle), out).expect("build")
}

/// `toolgate build` with every file emitted (as when the fingerprint changed).
fn regenerate(dir: &Path, out: &Path) -> usize {
    let bundle = bundle(dir);
    let files = emit::build_files(&bundle, &options(&bundle)).expect("emit");
    files.write_to(out).expect("write")
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn bench(c: &mut Criterion) {
    if let Some(dir) = std::env::var_os("TOOLGATE_BENCH_PROJECT") {
        catalogue::write_project(Path::new(&dir)).expect("write the project");
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    catalogue::write_project(dir).expect("write the project");
    let out = dir.join("out");
    let checked = check(dir);
    assert_eq!(checked.loaded.tool_count(), catalogue::SPECS);
    assert!(
        checked.diagnostics.is_empty(),
        "the generated specs must lint clean: {:?}",
        checked.diagnostics.first()
    );
    let first = build(dir, &out);
    assert!(!first.skipped && first.changed == first.files, "{first:?}");
    assert!(build(dir, &out).skipped);
    assert_eq!(regenerate(dir, &out), 0);

    let mut group = c.benchmark_group("1000 specs");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.bench_function("lint", |b| b.iter(|| black_box(lint(dir))));
    group.bench_function("build (up to date)", |b| {
        b.iter(|| black_box(build(dir, &out)))
    });
    group.bench_function("build (regenerate)", |b| {
        b.iter(|| black_box(regenerate(dir, &out)))
    });
    group.bench_function("build (empty folder)", |b| {
        b.iter_batched(
            || {
                let _ = std::fs::remove_dir_all(&out);
            },
            |()| black_box(build(dir, &out)),
            criterion::BatchSize::PerIteration,
        )
    });
    group.finish();

    let runs = 5;
    let time = |f: &dyn Fn()| -> Duration {
        let t = Instant::now();
        f();
        t.elapsed()
    };
    let times = |f: &dyn Fn(), before: &dyn Fn()| -> Duration {
        median(
            (0..runs)
                .map(|_| {
                    before();
                    time(f)
                })
                .collect(),
        )
    };
    let nothing = || {};
    let l = times(
        &|| {
            black_box(lint(dir));
        },
        &nothing,
    );
    build(dir, &out);
    let current = times(
        &|| {
            black_box(build(dir, &out));
        },
        &nothing,
    );
    let regenerated = times(
        &|| {
            black_box(regenerate(dir, &out));
        },
        &nothing,
    );
    let empty = times(
        &|| {
            black_box(build(dir, &out));
        },
        &|| {
            let _ = std::fs::remove_dir_all(&out);
        },
    );
    let ratio = |d: Duration| d.as_secs_f64() / l.as_secs_f64();
    println!(
        "median of {runs} runs over {} specs ({} files): lint {:.3} s; build {:.3} s up to date \
         ({:.2}x lint), {:.3} s regenerating ({:.2}x lint), {:.3} s into an empty folder \
         ({:.2}x lint)",
        catalogue::SPECS,
        first.files,
        l.as_secs_f64(),
        current.as_secs_f64(),
        ratio(current),
        regenerated.as_secs_f64(),
        ratio(regenerated),
        empty.as_secs_f64(),
        ratio(empty),
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
