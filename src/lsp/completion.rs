//! Completion of keys and of fixed values (enums, booleans) from the schema, at the cursor's
//! YAML path.

use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionTextEdit, Documentation, MarkupContent,
    MarkupKind, TextEdit,
};

use crate::lsp::position;
use crate::lsp::schema::Schema;
use crate::lsp::yaml_path::{self, Place};
use crate::spec::source::SourceFile;

/// The completions at byte `offset` of `file`.
pub fn complete(file: &SourceFile, offset: usize, schema: &Schema) -> Vec<CompletionItem> {
    let cursor = yaml_path::cursor_at(&file.text, offset);
    let (entries, kind) = match cursor.place {
        Place::Key => (schema.keys(&cursor.path), CompletionItemKind::PROPERTY),
        Place::Value => (schema.values(&cursor.path), CompletionItemKind::ENUM_MEMBER),
    };
    // The typed word is replaced, so a completion never doubles what is there.
    let range = position::range(
        file,
        u32::try_from(cursor.start).unwrap_or(u32::MAX),
        u32::try_from(offset).unwrap_or(u32::MAX),
    );
    entries
        .into_iter()
        .filter(|e| e.label.starts_with(&cursor.prefix))
        .map(|e| {
            let new_text = match cursor.place {
                Place::Key => format!("{}: ", e.label),
                Place::Value => e.label.clone(),
            };
            CompletionItem {
                label: e.label,
                kind: Some(kind),
                documentation: e.doc.map(|d| {
                    Documentation::MarkupContent(MarkupContent {
                        kind: MarkupKind::Markdown,
                        value: d,
                    })
                }),
                text_edit: Some(CompletionTextEdit::Edit(TextEdit { range, new_text })),
                ..Default::default()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(text: &str) -> Vec<String> {
        let offset = text.find('|').unwrap();
        let text = text.replace('|', "");
        let file = SourceFile::new("a.yaml", text.as_str());
        complete(&file, offset, &Schema::spec())
            .into_iter()
            .map(|c| c.label)
            .collect()
    }

    #[test]
    fn keys_and_values_at_the_cursor() {
        assert_eq!(labels("name: x\nide|"), vec!["idempotency"]);
        assert_eq!(
            labels("effect: read_only\noutput: {formatter: git_s|}"),
            vec!["git_status"]
        );
        let decisions = labels("permissions:\n  examples:\n    - args: {}\n      expect: |");
        assert_eq!(decisions, vec!["allow", "ask", "deny"]);
        let retry = labels("retry:\n  |");
        assert!(retry.contains(&"max_attempts".to_owned()), "{retry:?}");
    }
}
