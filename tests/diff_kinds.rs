//! Every change kind of `toolgate diff` against fixture pairs: `tests/fixtures/diff/*.pair`
//! holds an old and a new project (files after `=== old/PATH` and `=== new/PATH` lines) and the
//! kind expected (`# expect: TGD010`). Each pair is written to two real folders, read as the
//! command reads a folder, compared, and its concise report snapshotted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};

use toolgate::diff::{self, ChangeKind, DiffOptions, source};
use toolgate::spec::load::LoadOptions;

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/diff");
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pair"))
        .collect();
    out.sort();
    out
}

/// Writes the pair's two sides under `root/old` and `root/new`; returns the expected id.
fn write_pair(text: &str, root: &Path) -> Option<String> {
    let mut expect = None;
    let mut current: Option<(PathBuf, String)> = None;
    let flush = |c: &mut Option<(PathBuf, String)>| {
        if let Some((path, body)) = c.take() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, body).unwrap();
        }
    };
    for line in text.lines() {
        if let Some(path) = line.strip_prefix("=== ") {
            flush(&mut current);
            current = Some((root.join(path), String::new()));
        } else if let Some((_, body)) = current.as_mut() {
            body.push_str(line);
            body.push('\n');
        } else if let Some(e) = line.strip_prefix("# expect: ") {
            expect = e.starts_with("TGD").then(|| e.to_owned());
        }
    }
    flush(&mut current);
    expect
}

fn side(dir: &Path) -> source::Side {
    source::from_specs(
        &LoadOptions {
            paths: vec![],
            config: None,
            cwd: dir.to_path_buf(),
        },
        "side",
    )
    .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

#[test]
fn every_pair_is_classified_as_expected() {
    let pairs = fixtures();
    assert!(pairs.len() >= 40, "only {} fixture pairs", pairs.len());
    let mut covered = Vec::new();
    for path in &pairs {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(path).unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let expect = write_pair(&text, tmp.path());
        let (old, new) = (side(&tmp.path().join("old")), side(&tmp.path().join("new")));
        let d = diff::diff(&old.bundle, &new.bundle, &DiffOptions::default());
        let ids: Vec<&str> = d.changes.iter().map(|c| c.kind.id()).collect();
        match &expect {
            Some(id) => {
                assert!(
                    ids.contains(&id.as_str()),
                    "{name}: expected {id}, got {ids:?}"
                );
                covered.push(ChangeKind::find(id).unwrap());
            }
            None => assert!(ids.is_empty(), "{name}: expected no change, got {ids:?}"),
        }
        if text.contains("# expect no TGD045") {
            assert!(!ids.contains(&"TGD045"), "{name}: {ids:?}");
        }
        insta::assert_snapshot!(name.clone(), diff::report::concise(&d));
    }
    let missing: Vec<&str> = ChangeKind::ALL
        .iter()
        .filter(|k| !covered.contains(k))
        .map(|k| k.id())
        .collect();
    assert!(missing.is_empty(), "kinds without a fixture: {missing:?}");
}
