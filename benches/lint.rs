#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(missing_docs)]
//! `toolgate lint` over 1,000 generated specs, against just parsing the same YAML files, in
//! one run. Run with `cargo bench --bench lint`.
//!
//! The specs are the standard library's twelve contracts, renamed and repeated, written to a
//! temporary folder so both measurements read real files.

use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_group, criterion_main};
use toolgate::check;
use toolgate::spec::load::{self, LoadOptions};

const SPECS: usize = 1000;

fn generate(dir: &Path) {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("tool-specs");
    let mut templates: Vec<(String, String)> = std::fs::read_dir(&lib)
        .expect("tool-specs")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("read spec");
            let name = text
                .lines()
                .find_map(|l| l.strip_prefix("name: "))
                .expect("spec has a name")
                .trim()
                .to_owned();
            (name, text)
        })
        .collect();
    templates.sort();
    let out = dir.join("tool-specs");
    std::fs::create_dir_all(&out).expect("mkdir");
    for i in 0..SPECS {
        let (name, text) = &templates[i % templates.len()];
        let renamed = text.replacen(
            &format!("name: {name}\n"),
            &format!("name: {name}_{i}\n"),
            1,
        );
        std::fs::write(out.join(format!("tool_{i:04}.yaml")), renamed).expect("write spec");
    }
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("tempdir");
    generate(dir.path());
    let opts = LoadOptions {
        paths: vec![PathBuf::from("tool-specs")],
        config: None,
        cwd: dir.path().to_path_buf(),
    };
    let mut g = c.benchmark_group("1000-specs");
    g.sample_size(10);
    g.bench_function("parse", |b| {
        b.iter(|| {
            let loaded = load::load(&opts).expect("load");
            assert_eq!(loaded.tool_count(), SPECS);
            loaded
        })
    });
    g.bench_function("lint", |b| {
        b.iter(|| {
            let checked = check::check_specs(&opts).expect("check");
            assert!(
                checked.diagnostics.is_empty(),
                "{:?}",
                checked.diagnostics.first()
            );
            checked
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
