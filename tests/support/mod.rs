//! Shared helpers for the emitter tests: loading fixtures into bundles and building them.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use toolgate::check;
use toolgate::emit::rust::{RustOptions, ToolgateDependency};
use toolgate::emit::{self, BuildOptions, ListOptions, OutputFiles};
use toolgate::ir::Bundle;
use toolgate::spec::load::LoadOptions;

/// The crate root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Loads and resolves specs (paths relative to `cwd`) into a bundle. Emitter tests exercise
/// schemas the linter warns about or rejects for some provider, so only load errors and
/// invalid contracts (`TGK`) fail here.
pub fn bundle(cwd: &Path, paths: &[&str]) -> Bundle {
    let checked = check::check_specs(&LoadOptions {
        paths: paths.iter().map(PathBuf::from).collect(),
        config: None,
        cwd: cwd.to_path_buf(),
    })
    .unwrap();
    let invalid: Vec<String> = checked
        .diagnostics
        .iter()
        .filter(|d| d.code.is_none_or(|c| c.starts_with("TGK")))
        .map(|d| format!("{}: {}", d.code.unwrap_or("load"), d.message))
        .collect();
    assert!(invalid.is_empty(), "fixture is invalid: {invalid:#?}");
    Bundle::new(
        checked.resolution.project.clone(),
        checked.resolution.definitions().cloned().collect(),
    )
}

/// Every bundle the emitter tests cover: the standard library, each emit fixture, and the
/// project fixture (toolsets, non-strict OpenAI), by a short name.
pub fn all_bundles() -> Vec<(String, Bundle)> {
    let root = root();
    let mut out = vec![("tool-specs".to_owned(), bundle(&root, &["tool-specs"]))];
    let dir = root.join("tests/fixtures/emit");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    for f in files {
        let name = f.file_stem().unwrap().to_string_lossy().into_owned();
        let file = f.file_name().unwrap().to_string_lossy().into_owned();
        out.push((name, bundle(&dir, &[&file])));
    }
    out.push((
        "emit-project".to_owned(),
        bundle(&root.join("tests/fixtures/emit-project"), &[]),
    ));
    out
}

/// The options snapshots use: a fixed toolgate path so output does not depend on the machine.
pub fn snapshot_options(bundle: &Bundle) -> BuildOptions {
    BuildOptions {
        lists: ListOptions::for_project(&bundle.project),
        rust: Some(RustOptions {
            crate_name: "toolgate-tools".into(),
            toolgate: ToolgateDependency::Path("../../toolgate".into()),
            conformance_tests: false,
        }),
    }
}

/// Every file `toolgate build` writes for a bundle.
pub fn build(bundle: &Bundle) -> OutputFiles {
    emit::build_files(bundle, &snapshot_options(bundle)).unwrap()
}

/// Runs cargo in `dir` with a shared target folder (so builds of generated and example crates
/// reuse compiled dependencies); its stdout, or a failed assertion with both outputs.
pub fn cargo(dir: &Path, target: &Path, args: &[&str]) -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo {} failed:\n{}\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}
