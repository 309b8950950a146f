//! Renders a diff: human (one block per change, with its levels and witness), concise (one line
//! each), json, SARIF 2.1.0 (one rule per change kind) and GitHub Actions annotations.

use std::collections::HashMap;

use serde_json::json;
use serde_sarif::sarif::{
    ArtifactLocation, Location, Message, MultiformatMessageString, PhysicalLocation, Region,
    ReportingDescriptor, Result as SarifResult, ResultLevel, Run, Sarif, Tool, ToolComponent,
};

use crate::diff::{Change, ChangeKind, Class, Diff};

/// What a report needs besides the diff: the sides' labels and where each tool is written.
pub struct ReportContext<'a> {
    /// The old side (`HEAD`, `origin/main`, a folder).
    pub old: &'a str,
    /// The new side.
    pub new: &'a str,
    /// Per tool of the new side (else the old side): file and line.
    pub locations: &'a HashMap<String, (String, usize)>,
}

fn counts(d: &Diff) -> String {
    let n = |c: Class| {
        d.changes
            .iter()
            .filter(|x| x.kind.meta().class == c)
            .count()
    };
    format!(
        "{} change(s): {} breaking, {} widening, {} compatible",
        d.changes.len(),
        n(Class::Breaking),
        n(Class::Widening),
        n(Class::Compatible)
    )
}

fn subject(c: &Change) -> String {
    match (&c.tool, c.at.is_empty()) {
        (Some(t), true) => t.clone(),
        (Some(t), false) => format!("{t} {}", c.at),
        (None, _) => c.at.clone(),
    }
}

fn footer(d: &Diff) -> String {
    let e = d.calls_evaluated;
    let bump = match (&d.versions.0, d.required_bump) {
        (_, crate::diff::Bump::None) => "no version bump needed".to_owned(),
        (Some(v), b) => match semver::Version::parse(v) {
            Ok(v) => format!(
                "needs a {b} bump (version {v} → {})",
                crate::diff::version::next_version(&v, b)
            ),
            Err(_) => format!("needs a {b} bump"),
        },
        (None, b) => format!("needs a {b} bump"),
    };
    format!(
        "{}; {bump}.\nPermissions compared on {} call(s) ({} from examples, {} generated, {} from the journal); where no witness was found, that is not a proof.\n",
        counts(d),
        e.examples + e.generated + e.journal,
        e.examples,
        e.generated,
        e.journal
    )
}

/// Blocks per change, with levels and witnesses.
pub fn human(d: &Diff, cx: &ReportContext<'_>) -> String {
    let mut out = format!("toolgate diff {} → {}\n\n", cx.old, cx.new);
    for c in &d.changes {
        let m = c.kind.meta();
        out.push_str(&format!(
            "{:<10} {} {}  {}\n  {}\n  models: {} · harness: {} · sessions: {}\n",
            m.class.as_str(),
            m.id,
            m.name,
            subject(c),
            c.message,
            m.models.as_str(),
            m.harness.as_str(),
            m.sessions.as_str()
        ));
        if let Some(w) = &c.witness {
            out.push_str(&format!(
                "  witness ({}, context `{}`): {} — old: {}, new: {}\n",
                w.origin, w.context, w.arguments, w.old, w.new
            ));
        }
        out.push('\n');
    }
    out.push_str(&footer(d));
    out
}

/// One line per change.
pub fn concise(d: &Diff) -> String {
    let mut out = String::new();
    for c in &d.changes {
        let m = c.kind.meta();
        out.push_str(&format!(
            "{} {} {}: {}",
            m.id,
            m.class.as_str(),
            subject(c),
            c.message
        ));
        if let Some(w) = &c.witness {
            out.push_str(&format!(" [witness {}: {}]", w.origin, w.arguments));
        }
        out.push('\n');
    }
    out.push_str(&footer(d));
    out
}

/// A JSON document: every change with its kind's levels, the bump, and how many calls the
/// permission comparison evaluated.
pub fn json(d: &Diff, cx: &ReportContext<'_>) -> String {
    let changes: Vec<_> = d
        .changes
        .iter()
        .map(|c| {
            let m = c.kind.meta();
            json!({
                "id": m.id, "kind": m.name, "class": m.class, "tool": c.tool, "at": c.at,
                "message": c.message,
                "levels": {"models": m.models, "harness": m.harness, "sessions": m.sessions},
                "witness": c.witness,
            })
        })
        .collect();
    let doc = json!({
        "old": cx.old, "new": cx.new, "changes": changes,
        "required_bump": d.required_bump,
        "versions": {"old": d.versions.0, "new": d.versions.1},
        "calls_evaluated": d.calls_evaluated,
        "not_a_proof": "calls the comparison did not try may still be decided differently",
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

fn github_level(c: Class) -> &'static str {
    match c {
        Class::Breaking => "error",
        Class::Widening => "warning",
        Class::Compatible => "notice",
    }
}

/// GitHub Actions workflow commands, one line per change.
pub fn github(d: &Diff, cx: &ReportContext<'_>) -> String {
    let data = |s: &str| {
        s.replace('%', "%25")
            .replace('\r', "%0D")
            .replace('\n', "%0A")
    };
    let prop = |s: &str| data(s).replace(':', "%3A").replace(',', "%2C");
    let mut out = String::new();
    for c in &d.changes {
        let m = c.kind.meta();
        let mut message = format!("{}: {}", subject(c), c.message);
        if let Some(w) = &c.witness {
            message.push_str(&format!("\nwitness ({}): {}", w.origin, w.arguments));
        }
        let title = prop(&format!("{} {}", m.id, m.name));
        let place = c
            .tool
            .as_ref()
            .and_then(|t| cx.locations.get(t))
            .map(|(f, l)| format!(" file={},line={l},", prop(f)))
            .unwrap_or_else(|| " ".into());
        out.push_str(&format!(
            "::{}{place}title={title}::{}\n",
            github_level(m.class),
            data(&message)
        ));
    }
    out
}

/// SARIF 2.1.0: one rule per change kind, one result per change.
pub fn sarif(d: &Diff, cx: &ReportContext<'_>) -> String {
    let rules: Vec<ReportingDescriptor> = ChangeKind::ALL
        .iter()
        .map(|k| {
            let m = k.meta();
            ReportingDescriptor::builder()
                .id(m.id)
                .name(m.name)
                .short_description(MultiformatMessageString::builder().text(m.purpose).build())
                .full_description(
                    MultiformatMessageString::builder()
                        .text(m.explanation)
                        .build(),
                )
                .build()
        })
        .collect();
    let results: Vec<SarifResult> = d
        .changes
        .iter()
        .map(|c| {
            let m = c.kind.meta();
            let level = match m.class {
                Class::Breaking => ResultLevel::Error,
                Class::Widening => ResultLevel::Warning,
                Class::Compatible => ResultLevel::Note,
            };
            let mut text = format!("{}: {}", subject(c), c.message);
            if let Some(w) = &c.witness {
                text.push_str(&format!("\nwitness ({}): {}", w.origin, w.arguments));
            }
            let index = ChangeKind::ALL
                .iter()
                .position(|k| *k == c.kind)
                .unwrap_or(0) as i64;
            let locations: Vec<Location> = c
                .tool
                .as_ref()
                .and_then(|t| cx.locations.get(t))
                .map(|(f, l)| {
                    Location::builder()
                        .physical_location(
                            PhysicalLocation::builder()
                                .artifact_location(
                                    ArtifactLocation::builder().uri(f.clone()).build(),
                                )
                                .region(Region::builder().start_line(*l as i64).build())
                                .build(),
                        )
                        .build()
                })
                .into_iter()
                .collect();
            SarifResult::builder()
                .rule_id(m.id)
                .rule_index(index)
                .level(level)
                .message(Message::builder().text(text).build())
                .locations(locations)
                .build()
        })
        .collect();
    let driver = ToolComponent::builder()
        .name("toolgate-diff")
        .version(env!("CARGO_PKG_VERSION"))
        .rules(rules)
        .build();
    let run = Run::builder()
        .tool(Tool::builder().driver(driver).build())
        .results(results)
        .build();
    let log = Sarif::builder()
        .schema("https://json.schemastore.org/sarif-2.1.0.json")
        .version(serde_json::Value::from("2.1.0"))
        .runs(vec![run])
        .build();
    let mut s = serde_json::to_string_pretty(&log).unwrap_or_default();
    s.push('\n');
    s
}
