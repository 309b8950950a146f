#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! The linter over the shared corpus of real tool definitions (`../shared/corpus`, beside the
//! repository): the real binary with `--from` over every file must not crash, must exit 0 or 1,
//! must print a JSON report, and the findings per rule are pinned as a snapshot, so a change in
//! what toolgate reports about real tool lists is reviewed like any other output change.
//! `benches/corpus/lint_corpus.sh` prints the same table for docs/lint-corpus.md.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// The corpus: `$TOOLGATE_CORPUS` when set, else `../shared/corpus` beside the repository.
fn corpus_dir() -> PathBuf {
    match std::env::var_os("TOOLGATE_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"),
    }
}

/// The format each source ships its list in (as in benches/corpus/lint_corpus.sh).
fn format_of(stem: &str) -> &'static str {
    match stem {
        s if s.starts_with("anthropic-") || s == "cline-sdk" => "anthropic",
        "openai-codex" | "continue" | "langchain-community" | "openhands" | "swe-agent" => "openai",
        _ => "mcp",
    }
}

/// The rules whose findings are judged as design smells: each finding must carry its evidence.
const SMELL_RULES: &[&str] = &[
    "TGS001", "TGS002", "TGS003", "TGS004", "TGS006", "TGS007", "TGS008", "TGS011", "TGS012",
    "TGS015", "TGN003", "TGN004", "TGN005", "TGN010", "TGN011", "TGP002", "TGP008", "TGE001",
    "TGE011",
];

/// Whether a message names something in backticks or quotes an excerpt in double quotes.
fn shows_evidence(message: &str) -> bool {
    let between = |mark: char| {
        let mut parts = message.split(mark);
        parts.next();
        parts.next().is_some_and(|inner| !inner.trim().is_empty())
            && message.matches(mark).count() >= 2
    };
    between('`') || between('"')
}

#[test]
fn evidence_is_a_name_or_a_quote() {
    assert!(shows_evidence("array `paths` has no `maxItems`"));
    assert!(shows_evidence(
        "the description says \"at most 10\" but nothing bounds it"
    ));
    assert!(!shows_evidence("this tool does too much"));
    assert!(!shows_evidence("an `` empty name"));
}

#[test]
fn every_corpus_file_lints_without_a_crash_and_the_counts_are_pinned() {
    let dir = corpus_dir();
    if !dir.is_dir() {
        println!(
            "skipped: the corpus is not at {} (it lives in shared/, beside the repository; set TOOLGATE_CORPUS to point elsewhere)",
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
    assert!(!files.is_empty(), "no corpus files in {}", dir.display());

    // (code, name, severity) -> (findings, files)
    let mut counts: BTreeMap<(String, String, String), (usize, usize)> = BTreeMap::new();
    let mut tools = 0;
    let mut unexplained = Vec::new();
    for f in &files {
        let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
        let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args([
                "lint",
                "--from",
                format_of(&stem),
                "--format",
                "json",
                "--preview",
            ])
            .arg(f)
            .output()
            .unwrap();
        let code = out.status.code();
        assert!(
            matches!(code, Some(0 | 1)),
            "{stem}: exit {code:?}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{stem}: the report is not JSON: {e}"));
        tools += doc["summary"]["tools"].as_u64().unwrap() as usize;
        let mut seen = std::collections::BTreeSet::new();
        for d in doc["diagnostics"].as_array().unwrap() {
            let code = d["code"].as_str().unwrap_or("-");
            let message = d["message"].as_str().unwrap_or("");
            if SMELL_RULES.contains(&code) && !shows_evidence(message) {
                unexplained.push(format!("{stem}: {code}: {message}"));
            }
            let key = (
                d["code"].as_str().unwrap_or("-").to_owned(),
                d["rule"].as_str().unwrap_or("load-error").to_owned(),
                d["severity"].as_str().unwrap().to_owned(),
            );
            let slot = counts.entry(key.clone()).or_default();
            slot.0 += 1;
            if seen.insert(key) {
                slot.1 += 1;
            }
        }
    }
    assert!(
        unexplained.is_empty(),
        "findings that name no parameter and quote nothing:\n{}",
        unexplained.join("\n")
    );
    let mut table = format!("{tools} tools in {} files\n", files.len());
    for ((code, name, severity), (n, in_files)) in &counts {
        table.push_str(&format!(
            "{code} {name:<32} {severity:<8} {n:>4} findings in {in_files:>2} files\n"
        ));
    }
    insta::assert_snapshot!("corpus_findings_per_rule", table);
}
