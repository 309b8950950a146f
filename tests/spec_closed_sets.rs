#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! Closed sets of the spec format are enums: a misspelt `keep`, `ask` or handler language is a
//! located load error with "did you mean", the editor schemas list the values, and a `redact`
//! pattern the one regex engine refuses is an error at its line and column.

use std::path::PathBuf;

use serde_json::Value;
use toolgate::check::{CheckedProject, check_texts};
use toolgate::diagnostic::Diagnostic;

const TOOL: &str = "name: show_log
description: Show the build log of the last run, newest lines last.
effect: read_only
parameters: {type: object, properties: {}}
";

fn check(spec: &str, project: Option<&str>) -> CheckedProject {
    check_texts(&[(PathBuf::from("t.yaml"), spec.to_owned())], project)
}

/// (line, column) of a diagnostic, 1-based.
fn line_col(c: &CheckedProject, d: &Diagnostic) -> (usize, usize) {
    let lc = c
        .loaded
        .sources
        .get(d.span.source)
        .unwrap()
        .line_column(d.span.start);
    (lc.line, lc.column)
}

fn only_error(c: &CheckedProject) -> &Diagnostic {
    let errors: Vec<&Diagnostic> = c
        .diagnostics
        .iter()
        .filter(|d| d.severity == toolgate::diagnostic::Severity::Error)
        .collect();
    assert_eq!(errors.len(), 1, "{:#?}", c.diagnostics);
    errors[0]
}

#[test]
fn a_misspelt_keep_is_located_with_a_suggestion() {
    let c = check(
        &format!("{TOOL}exec: {{handler: rust}}\noutput: {{keep: head_tial}}\n"),
        None,
    );
    let d = only_error(&c);
    assert_eq!(line_col(&c, d), (6, 16), "{d:?}");
    assert_eq!(
        d.help.as_deref(),
        Some("did you mean `head_tail`?"),
        "{d:?}"
    );
}

#[test]
fn an_unknown_handler_language_is_located() {
    let c = check(&format!("{TOOL}exec: {{handler: python}}\n"), None);
    let d = only_error(&c);
    assert_eq!(line_col(&c, d).0, 5, "{d:?}");
    assert!(d.message.contains("python"), "{d:?}");
}

#[test]
fn a_misspelt_ask_mode_is_located_with_a_suggestion() {
    let c = check(
        &format!("{TOOL}exec: {{handler: rust}}\n"),
        Some("contexts:\n  nightly: {ask: denny}\n"),
    );
    let d = only_error(&c);
    assert_eq!(line_col(&c, d), (2, 18), "{d:?}");
    assert_eq!(d.help.as_deref(), Some("did you mean `deny`?"), "{d:?}");
}

#[test]
fn a_redact_pattern_the_engine_refuses_is_an_error_at_its_line_and_column() {
    // Look-ahead: ECMA-262 (JSON Schema's `pattern`) has it, the redaction engine does not, so
    // it must fail here rather than at runtime startup.
    let c = check(
        &format!("{TOOL}exec: {{handler: rust}}\noutput:\n  redact: ['token(?=:)']\n"),
        None,
    );
    let d = only_error(&c);
    assert_eq!(line_col(&c, d), (7, 12), "{d:?}");
    assert!(d.message.contains("`redact` pattern"), "{d:?}");
}

#[test]
fn the_editor_schemas_list_the_closed_sets() {
    let spec: Value = serde_json::from_str(&toolgate::spec::schema::spec_schema()).unwrap();
    let project: Value = serde_json::from_str(&toolgate::spec::schema::project_schema()).unwrap();
    let consts = |schema: &Value, def: &str| -> Vec<String> {
        schema["$defs"][def]["oneOf"]
            .as_array()
            .unwrap_or_else(|| panic!("no enum `{def}`"))
            .iter()
            .map(|v| v["const"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(consts(&spec, "OutputKeep"), ["head", "tail", "head_tail"]);
    assert_eq!(consts(&spec, "HandlerLanguage"), ["rust"]);
    assert_eq!(consts(&project, "AskMode"), ["prompt", "deny"]);
}
