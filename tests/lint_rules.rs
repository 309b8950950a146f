#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! Every lint rule against its fixtures: `tests/fixtures/lint/<CODE>_bad*` must make the rule
//! fire and `<CODE>_good*` must not. A fixture is a spec file (`.yaml`), a folder with a
//! toolgate.yaml and specs, or an imported tool list (`.openai.json`, `.anthropic.json`,
//! `.gemini.json`, `.mcp.json`). The findings of each bad fixture are snapshotted as the human
//! report (plain miette) and as SARIF results.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toolgate::check::{self, CheckedProject};
use toolgate::diagnostic::Diagnostic;
use toolgate::lint::report::{Summary, human, sarif};
use toolgate::lint::{Rule, RuleSelection};
use toolgate::spec::import::ImportFormat;
use toolgate::spec::load::LoadOptions;

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lint")
}

/// Lints one fixture (file or folder) the way `toolgate lint --preview` would: every rule's
/// fixtures are checked, preview rules included.
fn lint_fixture(path: &Path) -> CheckedProject {
    let all = RuleSelection {
        preview: true,
        select: Vec::new(),
    };
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    for (suffix, format) in [
        (".openai.json", ImportFormat::Openai),
        (".anthropic.json", ImportFormat::Anthropic),
        (".gemini.json", ImportFormat::Gemini),
        (".mcp.json", ImportFormat::Mcp),
    ] {
        if name.ends_with(suffix) {
            return check::check_imported_selecting(
                &[PathBuf::from(&name)],
                path.parent().unwrap(),
                format,
                &all,
            );
        }
    }
    if path.is_dir() {
        return check::check_specs_selecting(
            &LoadOptions {
                paths: vec![],
                config: None,
                cwd: path.to_path_buf(),
            },
            &all,
        )
        .unwrap();
    }
    check::check_specs_selecting(
        &LoadOptions {
            paths: vec![PathBuf::from(&name)],
            config: None,
            cwd: path.parent().unwrap().to_path_buf(),
        },
        &all,
    )
    .unwrap()
}

/// Fixtures by rule code: (bad, good).
fn fixtures() -> BTreeMap<String, (Vec<PathBuf>, Vec<PathBuf>)> {
    let mut out: BTreeMap<String, (Vec<PathBuf>, Vec<PathBuf>)> = BTreeMap::new();
    let mut entries: Vec<_> = std::fs::read_dir(fixtures_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let Some((code, rest)) = name.split_once('_') else {
            continue;
        };
        let slot = out.entry(code.to_owned()).or_default();
        if rest.starts_with("bad") {
            slot.0.push(p);
        } else if rest.starts_with("good") {
            slot.1.push(p);
        }
    }
    out
}

fn fired(c: &CheckedProject, rule: Rule) -> Vec<&Diagnostic> {
    c.diagnostics
        .iter()
        .filter(|d| d.code == Some(rule.code()))
        .collect()
}

#[test]
fn every_rule_fires_on_its_bad_fixture_and_not_on_its_good_one() {
    let fx = fixtures();
    let mut problems = Vec::new();
    for rule in Rule::ALL {
        let code = rule.code();
        let Some((bad, good)) = fx.get(code) else {
            problems.push(format!("{code}: no fixtures"));
            continue;
        };
        if bad.is_empty() {
            problems.push(format!("{code}: no bad fixture"));
        }
        if good.is_empty() {
            problems.push(format!("{code}: no good fixture"));
        }
        for b in bad {
            if fired(&lint_fixture(b), *rule).is_empty() {
                problems.push(format!("{code}: does not fire on {}", b.display()));
            }
        }
        for g in good {
            let c = lint_fixture(g);
            let f = fired(&c, *rule);
            if !f.is_empty() {
                problems.push(format!(
                    "{code}: fires on good fixture {}: {}",
                    g.display(),
                    f[0].message
                ));
            }
            if c.has_load_errors() {
                problems.push(format!(
                    "{code}: good fixture {} does not load",
                    g.display()
                ));
            }
        }
    }
    for code in fx.keys() {
        if Rule::find(code).is_none() {
            problems.push(format!("fixtures for unknown rule {code}"));
        }
    }
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn bad_fixture_reports_match_snapshots() {
    for (code, (bad, _)) in fixtures() {
        let Some(rule) = Rule::find(&code) else {
            continue;
        };
        for b in bad {
            let c = lint_fixture(&b);
            let mine: Vec<Diagnostic> = c
                .diagnostics
                .iter()
                .filter(|d| d.code == Some(rule.code()))
                .cloned()
                .collect();
            let summary = Summary::of(&mine, c.loaded.files.len(), c.loaded.tool_count());
            let text = human::render(&mine, &c.loaded.sources, human::Style::Plain, summary);
            let stem = b.file_name().unwrap().to_string_lossy().replace('.', "_");
            insta::assert_snapshot!(format!("{stem}_human"), text);
            let log: serde_json::Value =
                serde_json::from_str(&sarif::render(&mine, &c.loaded.sources)).unwrap();
            insta::assert_json_snapshot!(format!("{stem}_sarif"), log["runs"][0]["results"]);
        }
    }
}

#[test]
fn clean_fixtures_and_the_standard_library_have_no_findings() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut dirs = vec![root.join("tests/fixtures/clean")];
    dirs.push(root.to_path_buf());
    for cwd in dirs {
        let c = check::check_specs(&LoadOptions {
            paths: vec![],
            config: None,
            cwd: cwd.clone(),
        })
        .unwrap();
        let summary = Summary::of(&c.diagnostics, c.loaded.files.len(), c.loaded.tool_count());
        let text = human::render(
            &c.diagnostics,
            &c.loaded.sources,
            human::Style::Plain,
            summary,
        );
        assert!(c.diagnostics.is_empty(), "{}:\n{text}", cwd.display());
        assert!(c.loaded.tool_count() > 0, "{} has no tools", cwd.display());
    }
}
