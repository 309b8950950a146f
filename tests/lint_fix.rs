#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! `toolgate lint --fix` and `--diff`: the real binary on real files. Fixes are minimal edits
//! that keep comments, key order and formatting; `--diff` changes nothing; a fix is kept only
//! when the file still loads and no longer has the finding. Then the shared corpus of real tool
//! definitions, imported as specs (what `toolgate import --from-mcp` writes for each tool), is
//! fixed, and every fixed file is checked again from disk.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use toolgate::check;
use toolgate::spec::load::LoadOptions;

fn toolgate(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// A spec with a comment on every line it fixes and one finding of each fixable rule:
/// TGS009 (open object), TGS015 (a bound and a length in prose), TGS008 (values in prose),
/// and TGS006 without a stated count (an unsafe fix only).
const SPEC: &str = "\
# A tool under review.
name: list_items   # the name models see
description: List the items of a folder, sorted as asked. Returns their names.
effect: read_only
idempotency: pure
parameters:
  type: object
  properties:
    folder: {type: string, description: \"The folder, at most 200 characters.\"}   # flow style
    order:
      type: string
      description: Sort order, either asc or desc.
    tags:
      type: array
      items: {type: string, maxLength: 20}
      description: Tags to filter by.
    limit:
      # How many per page.
      type: integer
      description: How many to return, at most 100.
  # the parameters end here
exec: {builtin: list_dir}
";

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("tool-specs")).unwrap();
    std::fs::write(dir.path().join("tool-specs/list_items.yaml"), SPEC).unwrap();
    dir
}

#[test]
fn diff_shows_the_minimal_edits_and_changes_nothing() {
    let dir = project();
    let (code, out, err) = toolgate(dir.path(), &["lint", "--diff"]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("tool-specs/list_items.yaml")).unwrap(),
        SPEC
    );
    assert!(err.contains("4 fixable finding(s) in 1 file(s)"), "{err}");
    insta::assert_snapshot!("fix_diff", out);
}

#[test]
fn fix_writes_the_safe_fixes_and_the_rest_is_reported() {
    let dir = project();
    let (before, _, _) = toolgate(dir.path(), &["lint", "--format", "concise"]);
    assert_eq!(before, 0);
    let (code, out, err) = toolgate(dir.path(), &["lint", "--fix", "--format", "concise"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("fixed 4 finding(s) in 1 file(s)"), "{err}");
    let fixed = std::fs::read_to_string(dir.path().join("tool-specs/list_items.yaml")).unwrap();
    // Every original line is still there, in order: only lines were added or flow maps grew.
    let mut rest = fixed.lines();
    for line in SPEC.lines() {
        let line = line.replace(
            "\"The folder, at most 200 characters.\"}",
            "\"The folder, at most 200 characters.\", maxLength: 200}",
        );
        assert!(rest.any(|l| l == line), "`{line}` lost:\n{fixed}");
    }
    for code in ["TGS009", "TGS015", "TGS008"] {
        assert!(!out.contains(code), "{code} left:\n{out}");
    }
    // The unsafe one stays, unmarked.
    assert!(
        out.contains("TGS006 array `tags` has no `maxItems`"),
        "{out}"
    );
    // A second run has nothing left to fix.
    let (code, out, _) = toolgate(dir.path(), &["lint", "--diff"]);
    assert_eq!((code, out.as_str()), (0, ""));
    // Unsafe fixes on request.
    let (_, _, err) = toolgate(dir.path(), &["lint", "--fix", "--unsafe-fixes"]);
    assert!(err.contains("fixed 1 finding(s)"), "{err}");
    assert!(
        std::fs::read_to_string(dir.path().join("tool-specs/list_items.yaml"))
            .unwrap()
            .contains("      description: Tags to filter by.\n      maxItems: 100\n")
    );
}

#[test]
fn a_fix_that_would_break_the_file_is_dropped() {
    // The description's values do not include the default: the enum fix would make the
    // default invalid (TGS005, a warning), so it is dropped and the finding stays.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("tool-specs")).unwrap();
    let spec = SPEC.replace(
        "      description: Sort order, either asc or desc.\n",
        "      description: Sort order, either asc or desc.\n      default: random\n",
    );
    std::fs::write(dir.path().join("tool-specs/list_items.yaml"), &spec).unwrap();
    let (_, _, err) = toolgate(dir.path(), &["lint", "--fix"]);
    assert!(err.contains("fixed 3 finding(s)"), "{err}");
    assert!(
        err.contains("1 fix(es) dropped") && err.contains("TGS008"),
        "{err}"
    );
    let text = std::fs::read_to_string(dir.path().join("tool-specs/list_items.yaml")).unwrap();
    assert!(!text.contains("enum:"), "{text}");
}

/// A spec of `n` limits and folders, each with a bound in prose (a TGS015 fix each), and one
/// sort order in the middle whose enum fix would leave out its default (a new TGS005).
fn many_fixes_one_bad(n: usize) -> String {
    let mut s = String::from(
        "name: list_items\ndescription: List the items of a folder, sorted as asked. Returns their names.\n\
         effect: read_only\nidempotency: pure\nparameters:\n  type: object\n  properties:\n",
    );
    for i in 0..n {
        if i == n / 2 {
            s.push_str(
                "    order:\n      type: string\n      description: Sort order, either asc or desc.\n      default: random\n",
            );
        }
        s.push_str(&format!(
            "    limit_{i}:\n      type: integer\n      description: How many of kind {i} to return, at most 100.\n"
        ));
        s.push_str(&format!(
            "    folder_{i}: {{type: string, description: \"Folder {i}, at most 200 characters.\"}}\n"
        ));
    }
    s.push_str("  additionalProperties: false\nexec: {builtin: list_dir}\n");
    s
}

#[test]
fn one_bad_fix_among_many_is_isolated_and_the_others_are_kept() {
    // The fixes are tried together; the batch fails, and bisection narrows it to the one bad
    // fix, keeping every other.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("tool-specs")).unwrap();
    let path = dir.path().join("tool-specs/list_items.yaml");
    std::fs::write(&path, many_fixes_one_bad(20)).unwrap();
    let (_, _, err) = toolgate(dir.path(), &["lint", "--fix"]);
    assert!(err.contains("fixed 40 finding(s) in 1 file(s)"), "{err}");
    assert!(
        err.contains("1 fix(es) dropped") && err.contains("(TGS008)"),
        "{err}"
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("enum:"), "{text}");
    assert_eq!(text.matches("      maximum: 100\n").count(), 20, "{text}");
    assert_eq!(text.matches(", maxLength: 200}").count(), 20, "{text}");
    // Nothing is left to fix but the one that would break the default.
    let (_, out, err) = toolgate(dir.path(), &["lint", "--diff"]);
    assert_eq!(out, "", "{err}");
    assert!(err.contains("1 fix(es) dropped"), "{err}");
}

#[test]
fn fix_refuses_imported_lists() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("tools.json"), r#"{"tools": []}"#).unwrap();
    let (code, _, err) = toolgate(
        dir.path(),
        &["lint", "--from", "mcp", "tools.json", "--fix"],
    );
    assert_eq!(code, 2);
    assert!(err.contains("cannot be used with"), "{err}");
}

/// The corpus: `$TOOLGATE_CORPUS` when set, else `../shared/corpus` beside the repository.
fn corpus_dir() -> PathBuf {
    match std::env::var_os("TOOLGATE_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"),
    }
}

/// Writes one project per corpus file: each record as the starter spec `toolgate import
/// --from-mcp` writes for an MCP tool of that shape.
fn import_corpus(file: &Path, into: &Path) -> usize {
    let server = file.file_stem().unwrap().to_string_lossy().into_owned();
    let records: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    std::fs::create_dir_all(into.join("tool-specs")).unwrap();
    std::fs::write(
        into.join("toolgate.yaml"),
        format!("specs: [\"tool-specs/*.yaml\"]\nworkspace: .\nmcp_servers:\n  {server}: {{command: [\"true\"]}}\ntargets: [anthropic, mcp]\n"),
    )
    .unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for r in &records {
        let mut tool = json!({
            "name": r["name"],
            "description": r["description"],
            "inputSchema": r["input_schema"],
        });
        if r["annotations"].is_object() {
            tool["annotations"] = r["annotations"].clone();
        }
        if r.get("output_schema").is_some_and(Value::is_object) {
            tool["outputSchema"] = r["output_schema"].clone();
        }
        if let Some(t) = r.get("title").filter(|t| t.is_string()) {
            tool["title"] = t.clone();
        }
        let tool: rmcp::model::Tool = serde_json::from_value(tool).unwrap();
        let (name, text) = toolgate::cli::import::starter_spec(&server, &tool);
        if seen.insert(name.clone()) {
            std::fs::write(into.join(format!("tool-specs/{name}.yaml")), text).unwrap();
        }
    }
    seen.len()
}

#[test]
fn corpus_imported_as_specs_is_fixed_and_every_fixed_file_relints_clean_of_its_findings() {
    let dir = corpus_dir();
    if !dir.is_dir() {
        println!(
            "skipped: the corpus is not at {} (set TOOLGATE_CORPUS to point elsewhere)",
            dir.display()
        );
        return;
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let work = tempfile::tempdir().unwrap();
    // code -> (fixable before, fixed)
    let mut per_rule: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let (mut tools, mut fixed_files, mut specs, mut dropped) = (0, 0, 0, 0);
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for f in &files {
        let root = work.path().join(f.file_stem().unwrap());
        tools += import_corpus(f, &root);
        let options = LoadOptions {
            paths: Vec::new(),
            config: None,
            cwd: root.clone(),
        };
        let checked = check::check_specs(&options).unwrap();
        assert!(
            !checked.has_load_errors(),
            "{}: the import does not load",
            f.display()
        );
        specs += checked.loaded.files.len();
        for d in &checked.diagnostics {
            if d.fix
                .as_ref()
                .is_some_and(|x| x.applicability == toolgate::diagnostic::Applicability::Safe)
            {
                per_rule.entry(d.code.unwrap()).or_default().0 += 1;
            }
        }
        // The real binary fixes the files on disk.
        let (code, _, err) = toolgate(&root, &["lint", "--fix", "--format", "json"]);
        assert!(matches!(code, 0 | 1), "{}: exit {code}: {err}", f.display());
        let report = toolgate::fix::fix_project(&checked, false);
        assert!(
            err.starts_with(&format!(
                "fixed {} finding(s) in {} file(s)",
                report.fixed(),
                report.files.len()
            )),
            "{}: the binary and the library disagree: {err}",
            f.display()
        );
        dropped += report.rejected.len();
        for (r, why) in &report.rejected {
            if std::env::var_os("TOOLGATE_FIX_DEBUG").is_some() {
                println!("{}: {} {}: {why}", f.display(), r.code, r.message);
            }
            *reasons
                .entry(format!(
                    "{} {}",
                    r.code,
                    why.split(':').next().unwrap_or("")
                ))
                .or_insert(0usize) += 1;
        }
        // Checked again from disk: every fixed file loads, and has none of its fixed findings.
        let again = check::check_specs(&options).unwrap();
        for file in &report.files {
            fixed_files += 1;
            let on_disk = std::fs::read_to_string(root.join(&file.path)).unwrap();
            assert_eq!(on_disk, file.after, "{}", file.path.display());
            let id = again.loaded.sources.find(&file.path).unwrap();
            let left: Vec<&toolgate::diagnostic::Diagnostic> = again
                .diagnostics
                .iter()
                .filter(|d| d.span.source == id)
                .collect();
            assert!(
                !left.iter().any(|d| d.code.is_none()),
                "{} no longer loads",
                file.path.display()
            );
            for fixed in &file.fixed {
                assert!(
                    !left
                        .iter()
                        .any(|d| d.code == Some(fixed.code) && d.message == fixed.message),
                    "{}: {} still reported after its fix",
                    file.path.display(),
                    fixed.code
                );
                per_rule.entry(fixed.code).or_default().1 += 1;
            }
        }
    }
    let total: (usize, usize) = per_rule
        .values()
        .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    println!(
        "corpus: {} sources, {tools} tools imported as {specs} specs",
        files.len()
    );
    println!("rule      fixable  fixed");
    for (code, (fixable, fixed)) in &per_rule {
        println!("{code:<9} {fixable:>7} {fixed:>6}");
    }
    println!(
        "total     {:>7} {:>6}  ({fixed_files} files changed, {dropped} fixes dropped; every changed file loads and re-lints clean of its fixed findings)",
        total.0, total.1
    );
    for (why, n) in &reasons {
        println!("dropped: {n:>4}  {why}");
    }
    assert!(total.1 > 0, "no fix applied over the corpus");
    insta::assert_snapshot!(
        "corpus_fixes",
        per_rule
            .iter()
            .map(|(c, (a, b))| format!("{c}: {a} fixable, {b} fixed\n"))
            .collect::<String>()
    );
}
