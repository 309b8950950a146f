#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! Snapshots of every file `toolgate build` emits, for the standard library (`tool-specs/`), each
//! fixture in `tests/fixtures/emit/` and the project fixture with toolsets.

mod support;

use std::path::Path;

fn snapshot_all(files: &toolgate::emit::OutputFiles, suffix: &str) {
    for (path, content) in files.iter() {
        let name = format!("{}@{suffix}", path.replace('/', "__"));
        insta::with_settings!({ snapshot_suffix => "", prepend_module_to_snapshot => true, omit_expression => true }, {
            insta::assert_snapshot!(name, content);
        });
    }
}

#[test]
fn emit_fixtures() {
    insta::glob!("fixtures/emit/*.yaml", |path| {
        let dir = path.parent().unwrap();
        let file = path.file_name().unwrap().to_string_lossy().into_owned();
        let bundle = support::bundle(dir, &[&file]);
        let files = support::build(&bundle);
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        snapshot_all(&files, &stem);
    });
}

#[test]
fn standard_library() {
    let bundle = support::bundle(&support::root(), &["tool-specs"]);
    snapshot_all(&support::build(&bundle), "tool-specs");
}

#[test]
fn project_with_toolsets() {
    let dir = support::root().join("tests/fixtures/emit-project");
    let bundle = support::bundle(&dir, &[]);
    let files = support::build(&bundle);
    assert!(files.get("toolsets/writing/tools/mcp.json").is_some());
    snapshot_all(&files, "emit-project");
}

#[test]
fn build_is_deterministic() {
    for (_, bundle) in support::all_bundles() {
        assert_eq!(support::build(&bundle), support::build(&bundle));
    }
}

#[test]
fn every_file_ends_with_one_newline() {
    for (name, bundle) in support::all_bundles() {
        for (path, content) in support::build(&bundle).iter() {
            assert!(
                content.ends_with('\n') && !content.ends_with("\n\n"),
                "{name}: {path}"
            );
        }
    }
}

#[test]
fn check_reports_drift_and_write_fixes_it() {
    let dir = tempfile::tempdir().unwrap();
    let bundle = support::bundle(Path::new(&support::root()), &["tool-specs"]);
    let files = support::build(&bundle);
    assert!(!files.check(dir.path()).is_empty());
    files.write_to(dir.path()).unwrap();
    assert!(files.check(dir.path()).is_empty());
    std::fs::write(dir.path().join("tools/mcp.json"), "{}\n").unwrap();
    let drift = files.check(dir.path());
    assert_eq!(drift.len(), 1);
    let text = drift[0].to_string();
    assert!(
        text.contains("--- a/tools/mcp.json") && text.contains("+++ b/tools/mcp.json"),
        "{text}"
    );
}

/// `toolgate export` (one list through `tool_list`) prints exactly what `build` writes (lists
/// put together from each tool's entry, converted once).
#[test]
fn exported_lists_equal_built_ones() {
    use toolgate::emit;
    use toolgate::ir::Provider;
    for (name, bundle) in support::all_bundles() {
        let lists = support::snapshot_options(&bundle).lists;
        let files = support::build(&bundle);
        let mut sets = vec![("tools".to_owned(), bundle.tools.iter().collect::<Vec<_>>())];
        for set in bundle.project.toolsets.keys() {
            sets.push((
                format!("toolsets/{set}/tools"),
                emit::toolset_tools(&bundle, set).unwrap(),
            ));
        }
        for (dir, tools) in sets {
            for target in Provider::ALL {
                let list = emit::tool_list(*target, &tools, &lists).unwrap();
                let text = emit::to_json_text(&list).unwrap();
                let path = format!("{dir}/{}.json", target.as_str());
                assert_eq!(files.get(&path), Some(text.as_str()), "{name}: {path}");
            }
        }
    }
}
