//! `ProtectedSet::protects` benchmarks: the judgement of one path argument against the default
//! protected set with one exception, on a typical 60-byte path and on a 4,096-byte path
//! (PATH_MAX) of 2,048 one-letter folders, the longest a path can be before it is refused
//! unjudged.
//!
//! Run with `cargo bench --bench protect --no-default-features` (the set needs no feature).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use toolgate::ir::{ProtectPolicy, ProtectedPath};
use toolgate::policy::ProtectedSet;
use toolgate::policy::protect::PATH_MAX;

fn set() -> ProtectedSet {
    let policy = ProtectPolicy {
        except: vec![ProtectedPath {
            glob: "tests/fixtures/**".into(),
            reason: "test keys".into(),
            default: false,
        }],
        ..ProtectPolicy::default()
    };
    ProtectedSet::new(&policy).unwrap()
}

fn protects(c: &mut Criterion) {
    let set = set();
    let typical = "src/runtime/exec/sandbox/fixtures/config/settings.local.json";
    assert_eq!(typical.len(), 60);
    assert!(set.protects(typical).is_none());
    // 2,048 one-letter folders: 4,096 bytes, PATH_MAX itself, so judged (not refused).
    let deep = "a/".repeat(2048);
    assert!(deep.len() == PATH_MAX && set.protects(&deep).is_none());

    let mut group = c.benchmark_group("protects");
    group.bench_function("typical_60_bytes", |b| {
        b.iter(|| set.protects(black_box(typical)))
    });
    group.bench_function("deep_4096_bytes_2048_folders", |b| {
        b.iter(|| set.protects(black_box(&deep)))
    });
    group.finish();
}

criterion_group!(benches, protects);
criterion_main!(benches);
