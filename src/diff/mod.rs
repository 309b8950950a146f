//! `toolgate diff`: what changed between two versions of the contracts, and whom it reaches.
//!
//! Read top to bottom: [`source`] reads each side (a git revision, a folder, a bundle.json, or
//! the working tree) into a [`Side`]; [`tools`] and [`schema`] compare tool by tool,
//! [`project`] compares toolgate.yaml (toolsets, contexts, protected paths, sandbox profiles),
//! [`widening`] evaluates both versions' permissions on the same calls to find what the new
//! contracts let through, with a witness call; [`version`] checks the bumps; [`report`] renders
//! the result. Every change has a [`ChangeKind`] ([`kinds`]) with an id that
//! `toolgate explain` explains.

pub mod kinds;
pub mod project;
pub mod report;
pub mod schema;
pub mod source;
pub mod tools;
pub mod version;
pub mod widening;

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;

use crate::ir::Bundle;

pub use kinds::{Bump, ChangeKind, Class, Impact};
pub use source::{Side, SourceError};

/// One change between the old and the new contracts.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Change {
    /// What kind of change.
    pub kind: ChangeKind,
    /// The tool it is about (none for project-wide changes).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Where in the contract: `parameters.path`, `result.items[]`, `toolsets.coding`.
    pub at: String,
    /// What changed, in one sentence.
    pub message: String,
    /// A call that shows a widening (or narrowing): the new contracts decide it differently.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witness: Option<Witness>,
}

/// A call both versions decide, and what each decided.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Witness {
    /// The arguments.
    pub arguments: Value,
    /// The context the call was decided in.
    pub context: String,
    /// The old contracts' outcome (`deny`, `ask`, `allow`, `invalid`).
    pub old: String,
    /// The new contracts' outcome.
    pub new: String,
    /// Where the call came from: `example`, `generated`, `journal`.
    pub origin: String,
}

/// What `diff` looked at beyond the specs.
#[derive(Default)]
pub struct DiffOptions<'a> {
    /// Calls recorded in a journal, evaluated under both versions: (tool, arguments, context).
    pub replay: &'a [RecordedCall],
}

/// A call read from a journal.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RecordedCall {
    /// The tool as the journal names it.
    pub tool: String,
    /// The arguments as recorded.
    pub arguments: Value,
    /// The context the session ran in.
    pub context: String,
}

/// The changes between two versions, and the version bump they need.
#[derive(Clone, Debug, Serialize)]
pub struct Diff {
    /// Every change, ordered by tool and kind.
    pub changes: Vec<Change>,
    /// The bump the changes need in the generated crate and the contracts' `version`.
    pub required_bump: Bump,
    /// The contracts' version before and after (toolgate.yaml `version`).
    pub versions: (Option<String>, Option<String>),
    /// How many calls the permission comparison evaluated, per origin (no witness is not a
    /// proof: this says how hard it looked). Tools whose decision inputs are unchanged (rules,
    /// schemas, effect, protected paths) decide every call alike and are not sampled.
    pub calls_evaluated: CallsEvaluated,
}

/// How many calls the permission comparison evaluated under both versions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CallsEvaluated {
    /// From permission examples.
    pub examples: usize,
    /// Generated from schemas and rule literals.
    pub generated: usize,
    /// Read from a journal.
    pub journal: usize,
}

impl Diff {
    /// The most severe class among the changes.
    pub fn worst(&self) -> Option<Class> {
        self.changes.iter().map(|c| c.kind.meta().class).max()
    }
}

/// Compares two versions of the contracts.
pub fn diff(old: &Bundle, new: &Bundle, opts: &DiffOptions<'_>) -> Diff {
    let mut changes = Vec::new();
    let renames = tools::compare_tool_sets(old, new, &mut changes);
    let old_by_name: HashMap<&str, _> = old.tools.iter().map(|t| (t.name.as_str(), t)).collect();
    let mut pairs = Vec::new();
    for n in &new.tools {
        let before = old_by_name.get(n.name.as_str()).copied().or_else(|| {
            renames
                .get(n.name.as_str())
                .and_then(|o| old_by_name.get(o).copied())
        });
        if let Some(o) = before {
            tools::compare_tool(o, n, &mut changes);
            pairs.push((o, n));
        }
    }
    project::compare(&old.project, &new.project, &renames, &mut changes);
    let calls_evaluated = widening::compare(old, new, &pairs, opts.replay, &mut changes);
    let required_bump = version::required_bump(&changes);
    version::check(old, new, &pairs, required_bump, &mut changes);
    changes.sort_by(|a, b| {
        (a.tool.as_deref().unwrap_or(""), a.kind, &a.at).cmp(&(
            b.tool.as_deref().unwrap_or(""),
            b.kind,
            &b.at,
        ))
    });
    Diff {
        changes,
        required_bump,
        versions: (old.project.version.clone(), new.project.version.clone()),
        calls_evaluated,
    }
}

/// A change about a tool.
pub(crate) fn tool_change(
    kind: ChangeKind,
    tool: &str,
    at: impl Into<String>,
    message: impl Into<String>,
) -> Change {
    Change {
        kind,
        tool: Some(tool.to_owned()),
        at: at.into(),
        message: message.into(),
        witness: None,
    }
}
