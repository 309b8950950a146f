#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! The provider-compatibility lint rules and the emitters agree, over every lint and emit
//! fixture, the standard library and the shared corpus of real tool lists (`$TOOLGATE_CORPUS`,
//! else `../shared/corpus` beside the repository, skipped when absent):
//!
//! - `openai-strict-incompatible` (TGV001) fires for a tool ⇔ the emitted OpenAI strict list
//!   has `strict: false` for it, or the strict conversion loosens it (`oneOf` → `anyOf`, a
//!   structural keyword moved into a description);
//! - every keyword `constraint-dropped-by-target` (TGV006) names is one the emitter of that
//!   target moves into a description (`emit::dropped`), at that parameter.

use std::path::{Path, PathBuf};

use serde_json::Value;
use toolgate::check::{self, CheckedProject};
use toolgate::diagnostic::Diagnostic;
use toolgate::emit::dropped::dropped;
use toolgate::emit::openai::{self, StrictChangeKind};
use toolgate::ir::Target;
use toolgate::spec::import::ImportFormat;
use toolgate::spec::load::LoadOptions;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn corpus_dir() -> PathBuf {
    match std::env::var_os("TOOLGATE_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => root().join("../shared/corpus"),
    }
}

fn specs(paths: Vec<PathBuf>, cwd: &Path) -> CheckedProject {
    check::check_specs(&LoadOptions {
        paths,
        config: None,
        cwd: cwd.to_path_buf(),
    })
    .unwrap()
}

fn sorted(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

/// Every project to compare on, with a name for messages.
fn projects() -> Vec<(String, CheckedProject)> {
    let mut out = Vec::new();
    for dir in ["tests/fixtures/lint", "tests/fixtures/emit"] {
        for p in sorted(&root().join(dir)) {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let import = [
                (".openai.json", ImportFormat::Openai),
                (".anthropic.json", ImportFormat::Anthropic),
                (".gemini.json", ImportFormat::Gemini),
                (".mcp.json", ImportFormat::Mcp),
            ]
            .into_iter()
            .find(|(s, _)| name.ends_with(s));
            let checked = match import {
                Some((_, format)) => {
                    check::check_imported(&[PathBuf::from(&name)], p.parent().unwrap(), format)
                }
                None if p.is_dir() => specs(vec![], &p),
                None if name.ends_with(".yaml") => {
                    specs(vec![PathBuf::from(&name)], p.parent().unwrap())
                }
                None => continue,
            };
            out.push((format!("{dir}/{name}"), checked));
        }
    }
    out.push(("tool-specs".into(), specs(vec![], &root())));
    let corpus = corpus_dir();
    if corpus.is_dir() {
        for p in sorted(&corpus) {
            if p.extension().is_none_or(|e| e != "json") {
                continue;
            }
            let stem = p.file_stem().unwrap().to_string_lossy().into_owned();
            let format = match stem.as_str() {
                s if s.starts_with("anthropic-") || s == "cline-sdk" => ImportFormat::Anthropic,
                "openai-codex" | "continue" | "langchain-community" | "openhands" | "swe-agent" => {
                    ImportFormat::Openai
                }
                _ => ImportFormat::Mcp,
            };
            let name = PathBuf::from(p.file_name().unwrap());
            out.push((
                format!("corpus/{stem}"),
                check::check_imported(&[name], &corpus, format),
            ));
        }
    } else {
        println!(
            "corpus not at {}: compared on fixtures only",
            corpus.display()
        );
    }
    out
}

/// The findings of `code` inside one tool: from where it starts to where the next one does
/// (a block mapping's range is where it starts).
fn findings<'a>(
    checked: &'a CheckedProject,
    file: usize,
    index: usize,
    code: &str,
) -> Vec<&'a Diagnostic> {
    let f = &checked.loaded.files[file];
    let start = f.tools[index].range.start;
    let end = f.tools.get(index + 1).map_or(u32::MAX, |t| t.range.start);
    checked
        .diagnostics
        .iter()
        .filter(|d| {
            d.code == Some(code)
                && d.span.source == f.source
                && d.span.start >= start
                && d.span.start < end
        })
        .collect()
}

#[test]
fn tgv001_fires_exactly_when_the_openai_strict_emitter_loosens() {
    let mut compared = 0;
    let mut fired = 0;
    for (name, checked) in projects() {
        if !checked
            .resolution
            .project
            .targets
            .contains(&Target::OpenaiStrict)
        {
            continue;
        }
        for t in &checked.resolution.tools {
            let Some(def) = &t.definition else { continue };
            let Ok(list) = openai::chat(&[def], true) else {
                continue; // a name OpenAI refuses: nothing is emitted
            };
            let emitted_strict = list[0]["function"]["strict"] == Value::Bool(true);
            let loosened = openai::strict_conversion(&def.parameters)
                .changes
                .iter()
                .any(|c| match &c.kind {
                    StrictChangeKind::OneOfToAnyOf => true,
                    StrictChangeKind::Moved { keyword, .. } => openai::is_structural(keyword),
                    _ => false,
                });
            let fires = !findings(&checked, t.file, t.index, "TGV001").is_empty();
            assert_eq!(
                fires,
                !emitted_strict || loosened,
                "{name}, tool `{}`: TGV001 fires = {fires}, emitted strict = {emitted_strict}, loosened = {loosened}",
                def.name
            );
            compared += 1;
            fired += usize::from(fires);
        }
    }
    assert!(compared > 100, "only {compared} tools compared");
    assert!(fired > 3, "TGV001 fired for only {fired} tools");
}

#[test]
fn every_keyword_tgv006_names_is_one_the_emitter_drops_there() {
    let mut checked_findings = 0;
    for (name, checked) in projects() {
        for t in &checked.resolution.tools {
            let Some(def) = &t.definition else { continue };
            for d in findings(&checked, t.file, t.index, "TGV006") {
                // "parameter `NAME`: openai-strict drops `a`, `items.b`; gemini drops `c`; ..."
                let (param, rest) = d
                    .message
                    .strip_prefix("parameter `")
                    .and_then(|m| m.split_once("`: "))
                    .unwrap();
                for part in rest.split("; ").filter(|p| p.contains(" drops ")) {
                    let (target, kws) = part.split_once(" drops ").unwrap();
                    let target = *Target::ALL.iter().find(|x| x.as_str() == target).unwrap();
                    let emitted = dropped(target, &def.parameters);
                    for kw in kws.split(", ") {
                        let kw = kw.trim_matches('`');
                        let (suffix, kw) = match kw.strip_prefix("items.") {
                            Some(k) => (format!("/properties/{param}/items"), k),
                            None => (format!("/properties/{param}"), kw),
                        };
                        assert!(
                            emitted
                                .iter()
                                .any(|e| e.keyword == kw && e.pointer.ends_with(&suffix)),
                            "{name}, tool `{}`: TGV006 says {target:?} drops `{kw}` at `{param}`, the emitter does not: {emitted:?}",
                            def.name
                        );
                        checked_findings += 1;
                    }
                }
            }
        }
    }
    assert!(
        checked_findings > 3,
        "only {checked_findings} keywords compared"
    );
}
