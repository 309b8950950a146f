//! SARIF 2.1.0 for code scanning: every rule in `tool.driver.rules` with its documentation,
//! every diagnostic a result with a region (1-based lines and columns).

use serde_sarif::sarif::{
    ArtifactLocation, Location, Message, MultiformatMessageString, PhysicalLocation, Region,
    ReportingConfiguration, ReportingDescriptor, Result as SarifResult, ResultLevel, Run, Sarif,
    Tool, ToolComponent,
};

use crate::diagnostic::{Diagnostic, Severity};
use crate::lint::codes::Rule;
use crate::lint::report::positions;
use crate::spec::source::{SourceMap, Span};

/// The id load errors are reported under (they belong to no rule).
pub const LOAD_ERROR_ID: &str = "load-error";
const SCHEMA_URI: &str = "https://json.schemastore.org/sarif-2.1.0.json";

fn level(s: Severity) -> ResultLevel {
    match s {
        Severity::Error => ResultLevel::Error,
        Severity::Warning => ResultLevel::Warning,
        Severity::Info => ResultLevel::Note,
    }
}

fn level_name(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

fn location(sources: &SourceMap, span: Span, message: Option<&str>) -> Option<Location> {
    let (file, s, e) = positions(sources, span)?;
    let region = Region::builder()
        .start_line(s.line as i64)
        .start_column(s.column as i64)
        .end_line(e.line as i64)
        .end_column(
            e.column
                .max(if e.line == s.line { s.column + 1 } else { 1 }) as i64,
        )
        .build();
    let physical = PhysicalLocation::builder()
        .artifact_location(ArtifactLocation::builder().uri(file).build())
        .region(region)
        .build();
    Some(match message {
        Some(m) => Location::builder()
            .physical_location(physical)
            .message(Message::builder().text(m.to_owned()).build())
            .build(),
        None => Location::builder().physical_location(physical).build(),
    })
}

fn descriptor(rule: Rule) -> ReportingDescriptor {
    let m = rule.meta();
    ReportingDescriptor::builder()
        .id(m.code())
        .name(m.name())
        .short_description(MultiformatMessageString::builder().text(m.purpose).build())
        .full_description(
            MultiformatMessageString::builder()
                .text(m.explanation)
                .build(),
        )
        .help(
            MultiformatMessageString::builder()
                .text(format!("{}\n\n{}", m.purpose, m.explanation))
                .markdown(m.explanation)
                .build(),
        )
        .help_uri(m.help_uri())
        .default_configuration(
            ReportingConfiguration::builder()
                .level(serde_json::Value::from(level_name(m.severity)))
                .build(),
        )
        .build()
}

/// Renders a SARIF log.
pub fn render(diags: &[Diagnostic], sources: &SourceMap) -> String {
    let rules: Vec<ReportingDescriptor> = Rule::ALL.iter().map(|r| descriptor(*r)).collect();
    let results: Vec<SarifResult> = diags
        .iter()
        .map(|d| {
            let mut text = d.message.clone();
            if let Some(h) = &d.help {
                text.push_str("\nhelp: ");
                text.push_str(h);
            }
            let locations: Vec<Location> = location(sources, d.span, None).into_iter().collect();
            let related: Vec<Location> = d
                .labels
                .iter()
                .filter_map(|l| location(sources, l.span, Some(&l.message)))
                .collect();
            let (rule_id, rule_index) = match d.code.and_then(Rule::find) {
                Some(r) => (
                    r.code().to_owned(),
                    Rule::ALL.iter().position(|x| *x == r).map(|i| i as i64),
                ),
                None => (LOAD_ERROR_ID.to_owned(), None),
            };
            let base = SarifResult::builder()
                .rule_id(rule_id)
                .level(level(d.severity))
                .message(Message::builder().text(text).build())
                .locations(locations);
            match (rule_index, related.is_empty()) {
                (Some(i), true) => base.rule_index(i).build(),
                (Some(i), false) => base.rule_index(i).related_locations(related).build(),
                (None, true) => base.build(),
                (None, false) => base.related_locations(related).build(),
            }
        })
        .collect();
    let driver = ToolComponent::builder()
        .name("toolgate")
        .version(env!("CARGO_PKG_VERSION"))
        .information_uri("https://github.com/toolgate/toolgate")
        .rules(rules)
        .build();
    let run = Run::builder()
        .tool(Tool::builder().driver(driver).build())
        .results(results)
        .build();
    let log = Sarif::builder()
        .schema(SCHEMA_URI)
        .version(serde_json::Value::from("2.1.0"))
        .runs(vec![run])
        .build();
    let mut s =
        serde_json::to_string_pretty(&log).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}
