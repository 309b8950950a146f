//! Hover: a rule code's `explain` text; a spec key's documentation from the schema (and the
//! values it allows); a value's own documentation; the rules of findings under the cursor.

use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind};

use crate::diagnostic::Diagnostic;
use crate::lint::Rule;
use crate::lsp::position;
use crate::lsp::schema::Schema;
use crate::lsp::yaml_path::{self, Place, Segment};
use crate::spec::source::SourceFile;

/// The hover at byte `offset` of `file`; `findings` are the file's diagnostics.
pub fn hover(
    file: &SourceFile,
    offset: usize,
    schema: &Schema,
    findings: &[&Diagnostic],
) -> Option<Hover> {
    let text: &str = &file.text;
    let (start, end) = word_at(text, offset)?;
    let word = &text[start..end];
    let mut sections = Vec::new();

    if let Some(rule) = rule_named(text, start, word) {
        sections.push(rule.meta().explain());
    } else {
        let cursor = yaml_path::cursor_at(text, end);
        match cursor.place {
            Place::Key if cursor.prefix.ends_with(word) => {
                let mut path = cursor.path;
                path.push(Segment::Key(word.to_owned()));
                sections.extend(key_doc(schema, &path, word));
            }
            Place::Value => {
                if let Some(v) = schema
                    .values(&cursor.path)
                    .into_iter()
                    .find(|v| v.label == word)
                {
                    sections.push(format!("`{word}`: {}", v.doc.unwrap_or_default()));
                }
            }
            Place::Key => {}
        }
    }
    // The rules of the findings under the cursor, in one line each.
    let at = u32::try_from(offset).unwrap_or(u32::MAX);
    for d in findings
        .iter()
        .filter(|d| d.span.start <= at && at <= d.span.end)
    {
        if let Some(rule) = d.code.and_then(Rule::find) {
            let m = rule.meta();
            let line = format!(
                "**{}** `{}`: {} (`toolgate explain {}`)",
                m.code(),
                m.name(),
                m.purpose,
                m.code()
            );
            if !sections.contains(&line) {
                sections.push(line);
            }
        }
    }
    if sections.is_empty() {
        return None;
    }
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: sections.join("\n\n---\n\n"),
        }),
        range: Some(position::range(
            file,
            u32::try_from(start).unwrap_or(u32::MAX),
            u32::try_from(end).unwrap_or(u32::MAX),
        )),
    })
}

/// A rule named by `word`: any rule code, or a rule name inside a suppression comment.
fn rule_named(text: &str, start: usize, word: &str) -> Option<Rule> {
    let rule = Rule::find(word)?;
    if rule.meta().code().eq_ignore_ascii_case(word) {
        return Some(rule);
    }
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    text[line_start..line_end]
        .contains("toolgate:")
        .then_some(rule)
}

/// A key's documentation, with the values it allows.
fn key_doc(schema: &Schema, path: &[Segment], word: &str) -> Option<String> {
    let doc = schema.doc(path)?;
    let values = schema.values(path);
    let mut out = format!("**{word}**: {doc}");
    if !values.is_empty() {
        out.push_str("\n\nValues:");
        for v in values {
            match v.doc {
                Some(d) => out.push_str(&format!("\n- `{}`: {d}", v.label)),
                None => out.push_str(&format!("\n- `{}`", v.label)),
            }
        }
    }
    Some(out)
}

/// The word (key, value or rule code) around `offset`.
fn word_at(text: &str, offset: usize) -> Option<(usize, usize)> {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '$';
    let offset = offset.min(text.len());
    let start = text[..offset]
        .char_indices()
        .rev()
        .take_while(|&(_, c)| is_word(c))
        .last()
        .map_or(offset, |(i, _)| i);
    let end = text[offset..]
        .char_indices()
        .find(|&(_, c)| !is_word(c))
        .map_or(text.len(), |(i, _)| offset + i);
    (start < end).then_some((start, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hover_text(text: &str, at: &str) -> Option<String> {
        let file = SourceFile::new("a.yaml", text);
        let offset = text.find(at).unwrap() + 1;
        hover(&file, offset, &Schema::spec(), &[]).map(|h| match h.contents {
            HoverContents::Markup(m) => m.value,
            _ => String::new(),
        })
    }

    #[test]
    fn keys_values_and_rule_codes() {
        let spec = "# toolgate: ignore[TGS001] -- kept until v2\neffect: read_only\noutput:\n  formatter: text\n";
        let effect = hover_text(spec, "effect").unwrap();
        assert!(
            effect.starts_with("**effect**: What running it can change."),
            "{effect}"
        );
        assert!(
            effect.contains("- `read_only`: Reads local state"),
            "{effect}"
        );
        let value = hover_text(spec, "read_only").unwrap();
        assert!(
            value.starts_with("`read_only`: Reads local state"),
            "{value}"
        );
        let nested = hover_text(spec, "formatter").unwrap();
        assert!(nested.starts_with("**formatter**: Formatter."), "{nested}");
        let code = hover_text(spec, "TGS001").unwrap();
        assert!(code.starts_with("# TGS001 multi-action-tool"), "{code}");
        assert_eq!(hover_text(spec, "kept"), None);
    }
}
