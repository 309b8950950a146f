//! Code actions on findings: suppress one with a reason.
//!
//! Every action is checked before it is offered: its edit is applied to the editor's text and the
//! project linted again, and the action is offered only when that finding is gone and the file
//! still loads. Safe fixes plug in beside the suppression in [`code_actions`]: a fix the library
//! states as text edits on a diagnostic becomes a preferred quick fix, checked the same way.

use std::collections::HashMap;
use std::path::Path;

use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, Range, TextEdit, Uri, WorkspaceEdit,
};

use crate::diagnostic::Diagnostic;
use crate::lint::Rule;
use crate::lsp::analysis::{Analysis, Overlays};
use crate::lsp::position;
use crate::spec::source::SourceFile;

/// The reason a new suppression carries until the author writes theirs.
pub const REASON_PLACEHOLDER: &str = "TODO: say why this finding does not apply here";

/// One text insertion at a byte offset.
struct Insertion {
    at: usize,
    text: String,
}

/// The actions for the findings of `doc` that overlap `range`.
pub fn code_actions(
    analysis: &Analysis,
    overlays: &Overlays,
    doc: &Path,
    uri: &Uri,
    range: Range,
) -> Vec<CodeActionOrCommand> {
    let Some((id, file)) = analysis.source_of(doc) else {
        return Vec::new();
    };
    let mut actions = Vec::new();
    for d in analysis.diagnostics_in(id) {
        let r = position::range(file, d.span.start, d.span.end);
        if r.end < range.start || range.end < r.start {
            continue;
        }
        if let Some(action) = suppress(analysis, overlays, doc, uri, file, d) {
            actions.push(CodeActionOrCommand::CodeAction(action));
        }
    }
    actions
}

/// "Suppress CODE here": a `# toolgate: ignore[CODE] -- reason` comment on the line before the
/// finding's node, or after it on the same line when the line before does not work (inside a
/// block scalar, say). Contract errors cannot be suppressed, and neither can a suppression's own
/// finding.
fn suppress(
    analysis: &Analysis,
    overlays: &Overlays,
    doc: &Path,
    uri: &Uri,
    file: &SourceFile,
    d: &Diagnostic,
) -> Option<CodeAction> {
    let rule = Rule::find(d.code?)?;
    let meta = rule.meta();
    if meta.is_contract() || rule == Rule::UnusedSuppression {
        return None;
    }
    let line = file.line_column(d.span.start).line;
    let text = file.line_text(line)?;
    let line_start = file.offset_of(line, 1)?;
    let comment = format!("# toolgate: ignore[{}] -- {REASON_PLACEHOLDER}", meta.code);
    let indent = &text[..text.len() - text.trim_start().len()];
    let mut candidates = vec![Insertion {
        at: line_start,
        text: format!("{indent}{comment}\n"),
    }];
    if !text.contains(" #") {
        candidates.push(Insertion {
            at: line_start + text.len(),
            text: format!("  {comment}"),
        });
    }
    let insertion = candidates
        .into_iter()
        .find(|c| removes_finding(analysis, overlays, doc, file, d, c))?;
    let at = u32::try_from(insertion.at).unwrap_or(u32::MAX);
    let edit = TextEdit {
        range: position::range(file, at, at),
        new_text: insertion.text,
    };
    Some(CodeAction {
        title: format!("Suppress {} ({}) here, with a reason", meta.code, meta.name),
        kind: Some(CodeActionKind::QUICKFIX),
        edit: Some(WorkspaceEdit {
            changes: Some(HashMap::from([(uri.clone(), vec![edit])])),
            ..Default::default()
        }),
        ..Default::default()
    })
}

/// Whether the file with `insertion` applied lints without finding `d` (fewer findings with its
/// code and message) and without a new load error.
fn removes_finding(
    analysis: &Analysis,
    overlays: &Overlays,
    doc: &Path,
    file: &SourceFile,
    d: &Diagnostic,
    insertion: &Insertion,
) -> bool {
    let mut text = file.text.to_string();
    text.insert_str(insertion.at, &insertion.text);
    let mut edited = overlays.clone();
    edited.insert(doc.to_path_buf(), text);
    let Ok(after) = Analysis::run(&analysis.root, &edited) else {
        return false;
    };
    let Some((id, _)) = after.source_of(doc) else {
        return false;
    };
    let count = |a: &Analysis, id| {
        a.diagnostics_in(id)
            .filter(|x| x.code == d.code && x.message == d.message)
            .count()
    };
    let load_errors = |a: &Analysis, id| a.diagnostics_in(id).filter(|x| x.code.is_none()).count();
    let (before_id, _) = match analysis.source_of(doc) {
        Some(s) => s,
        None => return false,
    };
    count(&after, id) < count(analysis, before_id)
        && load_errors(&after, id) <= load_errors(analysis, before_id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::Position;

    const SPEC: &str = "name: echo\ndescription: Echo the text back to the caller unchanged, as it was sent.\neffect: pure\nparameters:\n  type: object\n  properties:\n    text: {type: string, maxLength: 100, description: The text.}\n  required: [text]\ntimeout: 1s\nexec: {builtin: echo}\n";

    #[test]
    fn suppressions_are_offered_checked_and_never_for_contract_errors() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("tool-specs")).unwrap();
        std::fs::write(root.join("tool-specs/a.yaml"), SPEC).unwrap();
        // The same name twice: b gets a contract error (TGK006) besides the open object (TGS009).
        let doc = root.join("tool-specs/b.yaml");
        std::fs::write(&doc, SPEC).unwrap();
        let analysis = Analysis::run(root, &Overlays::new()).unwrap();
        let (id, _) = analysis.source_of(&doc).unwrap();
        assert!(
            analysis
                .diagnostics_in(id)
                .any(|d| d.code == Some("TGK006"))
        );
        let uri: Uri = "file:///b.yaml".parse().unwrap();
        let everything = Range {
            start: Position::new(0, 0),
            end: Position::new(99, 0),
        };
        let actions = code_actions(&analysis, &Overlays::new(), &doc, &uri, everything);
        let titles: Vec<String> = actions
            .iter()
            .map(|a| match a {
                CodeActionOrCommand::CodeAction(a) => a.title.clone(),
                CodeActionOrCommand::Command(c) => c.title.clone(),
            })
            .collect();
        assert!(
            titles.contains(&"Suppress TGS009 (open-object) here, with a reason".to_owned()),
            "{titles:?}"
        );
        assert!(!titles.iter().any(|t| t.contains("TGK")), "{titles:?}");

        // Nothing is offered outside the findings' lines.
        let last_line = Range {
            start: Position::new(9, 0),
            end: Position::new(9, 1),
        };
        assert!(code_actions(&analysis, &Overlays::new(), &doc, &uri, last_line).is_empty());
    }
}
