//! `toolgate build` vs `toolgate lint` over 1,000 generated specs, in the same run.
//!
//! `lint` is load + resolve + lint (`check::check_specs`); `build` is the same plus every
//! emitted file (bundle, schemas, five provider lists, the Rust crate) written to a folder,
//! measured into an up-to-date folder (the usual rebuild) and into an empty one (a first build:
//! about 2,000 files are created). After criterion's groups, a plain timing of a few runs prints
//! the medians and their ratios to `lint`.
//!
//! Run: `cargo bench --bench build`.

// `criterion_group!` defines an undocumented public function.
#![allow(missing_docs)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use toolgate::check;
use toolgate::emit::rust::{RustOptions, ToolgateDependency};
use toolgate::emit::{self, BuildOptions, ListOptions};
use toolgate::spec::load::LoadOptions;

/// Number of specs.
const SPECS: usize = 1000;

fn spec(i: usize) -> String {
    format!(
        r#"name: tool_{i:04}
version: 1
description: >-
  Look up record {i} by key in the catalogue. Use when the user names a record. Returns the
  record's fields and whether it was archived.
effect: read_only
idempotency: pure
parameters:
  type: object
  properties:
    key: {{type: string, minLength: 1, maxLength: 128, description: The record key.}}
    limit: {{type: integer, minimum: 1, maximum: 100, default: 10, description: Most rows.}}
    mode: {{type: string, enum: [fast, full], description: How much to read.}}
    filter:
      type: object
      properties:
        field: {{type: string, maxLength: 64}}
        values: {{type: array, maxItems: 20, items: {{type: string, maxLength: 64}}}}
      required: [field]
      additionalProperties: false
  required: [key]
  additionalProperties: false
result:
  type: object
  properties:
    fields: {{type: array, items: {{type: string}}}}
    archived: {{type: boolean}}
  required: [fields, archived]
  additionalProperties: false
validate:
  - id: key-shape
    expr: "!args.key.startsWith('-')"
    message: The key must not start with a dash.
permissions:
  rules:
    - id: no-internal
      deny: "args.key.startsWith('internal/')"
      reason: Internal records are not readable.
  examples:
    - {{args: {{key: a}}, expect: allow}}
    - {{args: {{key: internal/x}}, expect: deny}}
timeout: 5s
exec: {{handler: rust}}
"#
    )
}

fn write_specs(dir: &Path) {
    let specs = dir.join("tool-specs");
    std::fs::create_dir_all(&specs).unwrap_or_default();
    for i in 0..SPECS {
        std::fs::write(specs.join(format!("tool_{i:04}.yaml")), spec(i)).unwrap_or_default();
    }
}

fn lint(dir: &Path) -> usize {
    let checked = check::check_specs(&LoadOptions {
        paths: vec![],
        config: None,
        cwd: dir.to_path_buf(),
    });
    checked.map(|c| c.diagnostics.len()).unwrap_or(usize::MAX)
}

fn build(dir: &Path, out: &Path) -> usize {
    let Ok(checked) = check::check_specs(&LoadOptions {
        paths: vec![],
        config: None,
        cwd: dir.to_path_buf(),
    }) else {
        return 0;
    };
    let Some(bundle) = checked.bundle() else {
        return 0;
    };
    let options = BuildOptions {
        lists: ListOptions::for_project(&bundle.project),
        rust: Some(RustOptions {
            toolgate: ToolgateDependency::Path(env!("CARGO_MANIFEST_DIR").into()),
            ..RustOptions::default()
        }),
    };
    let Ok(files) = emit::build_files(&bundle, &options) else {
        return 0;
    };
    files.write_to(out).unwrap_or_default()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn bench(c: &mut Criterion) {
    let tmp = std::env::temp_dir().join(format!("toolgate-bench-{}", std::process::id()));
    write_specs(&tmp);
    let out: PathBuf = tmp.join("out");
    assert_eq!(lint(&tmp), 0, "the generated specs must lint clean");

    let mut group = c.benchmark_group("1000 specs");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.bench_function("lint", |b| b.iter(|| black_box(lint(&tmp))));
    // The usual case: the output folder exists and is up to date (files are compared, not
    // rewritten).
    build(&tmp, &out);
    group.bench_function("build (up to date)", |b| {
        b.iter(|| black_box(build(&tmp, &out)))
    });
    // A first build: every file is created (the folder is emptied outside the timing).
    group.bench_function("build (empty folder)", |b| {
        b.iter_batched(
            || {
                let _ = std::fs::remove_dir_all(&out);
            },
            |()| black_box(build(&tmp, &out)),
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
    let lint_times: Vec<Duration> = (0..runs)
        .map(|_| {
            time(&|| {
                black_box(lint(&tmp));
            })
        })
        .collect();
    let warm_times: Vec<Duration> = (0..runs)
        .map(|_| {
            time(&|| {
                black_box(build(&tmp, &out));
            })
        })
        .collect();
    let cold_times: Vec<Duration> = (0..runs)
        .map(|_| {
            let _ = std::fs::remove_dir_all(&out);
            time(&|| {
                black_box(build(&tmp, &out));
            })
        })
        .collect();
    let (l, w, c) = (median(lint_times), median(warm_times), median(cold_times));
    println!(
        "median of {runs} runs over {SPECS} specs: lint {:.3} s; build {:.3} s up to date \
         ({:.2}x lint), {:.3} s into an empty folder ({:.2}x lint)",
        l.as_secs_f64(),
        w.as_secs_f64(),
        w.as_secs_f64() / l.as_secs_f64(),
        c.as_secs_f64(),
        c.as_secs_f64() / l.as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&tmp);
}

criterion_group!(benches, bench);
criterion_main!(benches);
