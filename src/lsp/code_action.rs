//! Code actions on findings: the finding's safe fix (the edit `lint --fix` applies), and
//! suppressing it with a reason.
//!
//! Every action is checked before it is offered: its edit is applied to the editor's text and the
//! project linted again, and the action is offered only when that finding is gone and the file
//! still loads.

use std::collections::HashMap;
use std::path::Path;

use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, Range, TextEdit, Uri, WorkspaceEdit,
};

use crate::diagnostic::{Applicability, Diagnostic};
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
        if let Some(action) = safe_fix(analysis, overlays, doc, uri, file, d) {
            actions.push(CodeActionOrCommand::CodeAction(action));
        }
        if let Some(action) = suppress(analysis, overlays, doc, uri, file, d) {
            actions.push(CodeActionOrCommand::CodeAction(action));
        }
    }
    actions
}

/// The finding's safe fix as a preferred quick fix, offered when the fixed text lints without
/// the finding and with no new load error. Unsafe fixes are left to `lint --unsafe-fixes`, where a
/// person reads the diff.
fn safe_fix(
    analysis: &Analysis,
    overlays: &Overlays,
    doc: &Path,
    uri: &Uri,
    file: &SourceFile,
    d: &Diagnostic,
) -> Option<CodeAction> {
    let fix = d.fix.as_deref()?;
    if fix.applicability != Applicability::Safe {
        return None;
    }
    let fixed = fix.apply(&file.text)?;
    if !removes_finding(analysis, overlays, doc, d, fixed) {
        return None;
    }
    let edits = fix
        .edits
        .iter()
        .map(|e| TextEdit {
            range: position::range(file, e.span.start, e.span.end),
            new_text: e.content.clone(),
        })
        .collect();
    Some(CodeAction {
        title: format!("Fix: {}", fix.title),
        kind: Some(CodeActionKind::QUICKFIX),
        is_preferred: Some(true),
        edit: Some(WorkspaceEdit {
            changes: Some(HashMap::from([(uri.clone(), edits)])),
            ..Default::default()
        }),
        ..Default::default()
    })
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
    let comment = format!(
        "# toolgate: ignore[{}] -- {REASON_PLACEHOLDER}",
        meta.code()
    );
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
    let insertion = candidates.into_iter().find(|c| {
        let mut text = file.text.to_string();
        text.insert_str(c.at, &c.text);
        removes_finding(analysis, overlays, doc, d, text)
    })?;
    let at = u32::try_from(insertion.at).unwrap_or(u32::MAX);
    let edit = TextEdit {
        range: position::range(file, at, at),
        new_text: insertion.text,
    };
    Some(CodeAction {
        title: format!(
            "Suppress {} ({}) here, with a reason",
            meta.code(),
            meta.name()
        ),
        kind: Some(CodeActionKind::QUICKFIX),
        edit: Some(WorkspaceEdit {
            changes: Some(HashMap::from([(uri.clone(), vec![edit])])),
            ..Default::default()
        }),
        ..Default::default()
    })
}

/// Whether the file, its text replaced by `text`, lints without finding `d` (fewer findings with
/// its code and message) and without a new load error.
fn removes_finding(
    analysis: &Analysis,
    overlays: &Overlays,
    doc: &Path,
    d: &Diagnostic,
    text: String,
) -> bool {
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
        // TGS009's safe fix comes first, as the preferred quick fix, and its edit closes the object.
        let fix = actions
            .iter()
            .find_map(|a| match a {
                CodeActionOrCommand::CodeAction(a) if a.title.starts_with("Fix: ") => Some(a),
                _ => None,
            })
            .expect("a safe fix is offered");
        assert_eq!(fix.title, "Fix: add `additionalProperties: false`");
        assert_eq!(fix.is_preferred, Some(true));
        let edits = &fix.edit.as_ref().unwrap().changes.as_ref().unwrap()[&uri];
        assert_eq!(edits.len(), 1);
        assert!(
            edits[0].new_text.contains("additionalProperties: false"),
            "{edits:?}"
        );

        // Nothing is offered outside the findings' lines.
        let last_line = Range {
            start: Position::new(9, 0),
            end: Position::new(9, 1),
        };
        assert!(code_actions(&analysis, &Overlays::new(), &doc, &uri, last_line).is_empty());
    }
}
