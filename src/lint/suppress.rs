//! Inline suppressions: `# toolgate: ignore[TGS001, TGN005] -- reason`.
//!
//! On its own line, a comment covers the node on the next line and everything indented under
//! it; after a value, it covers that line's node. `# toolgate: ignore-file[ID] -- reason`
//! covers the whole file. A suppression that suppresses nothing, names an unknown rule or gives
//! no reason is itself a finding (`unused-suppression`), like ruff's RUF100.

use crate::diagnostic::{Diagnostic, Severity};
use crate::lint::codes::Rule;
use crate::spec::source::{SourceFile, SourceId, Span};

const MARKER: &str = "toolgate:";

/// One suppression comment.
#[derive(Debug, Clone)]
pub struct Suppression {
    /// Where the comment is.
    pub span: Span,
    /// Rule codes or names as written.
    pub rules: Vec<String>,
    /// First and last covered line (1-based, inclusive).
    pub lines: (usize, usize),
    /// The reason after `--`.
    pub reason: Option<String>,
    /// Which of `rules` suppressed something.
    pub used: Vec<bool>,
}

/// Finds the suppression comments of a file.
pub fn parse(source: SourceId, file: &SourceFile) -> Vec<Suppression> {
    let mut out = Vec::new();
    let line_count = file.line_count();
    for line_no in 1..=line_count {
        let Some(text) = file.line_text(line_no) else {
            continue;
        };
        let Some(hash) = comment_start(text) else {
            continue;
        };
        let comment = text[hash + 1..].trim_start();
        let Some(rest) = comment.strip_prefix(MARKER) else {
            continue;
        };
        let rest = rest.trim_start();
        let (whole_file, rest) = if let Some(r) = rest.strip_prefix("ignore-file") {
            (true, r)
        } else if let Some(r) = rest.strip_prefix("ignore") {
            (false, r)
        } else {
            continue;
        };
        let Some(open) = rest.find('[') else { continue };
        let Some(close) = rest.find(']') else {
            continue;
        };
        if close < open {
            continue;
        }
        let rules: Vec<String> = rest[open + 1..close]
            .split(',')
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty())
            .collect();
        let reason = rest[close + 1..]
            .trim()
            .strip_prefix("--")
            .map(|r| r.trim().to_owned())
            .filter(|r| !r.is_empty());
        let own_line = text[..hash].trim().is_empty();
        let lines = if whole_file {
            (1, line_count)
        } else if own_line {
            match next_content_line(file, line_no + 1) {
                Some(start) => (start, block_end(file, start)),
                None => (line_no, line_no),
            }
        } else {
            (line_no, block_end(file, line_no))
        };
        let line_start = file.offset_of(line_no, 1).unwrap_or(0);
        let start = line_start + hash;
        out.push(Suppression {
            span: Span::new(source, start, text.len() - hash),
            used: vec![false; rules.len()],
            rules,
            lines,
            reason,
        });
    }
    out
}

/// Byte index of a `#` that starts a YAML comment (at line start or after whitespace, outside
/// quotes).
fn comment_start(line: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut prev_space = true;
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                '\'' | '"' if prev_space => quote = Some(c),
                '#' if prev_space => return Some(i),
                _ => {}
            },
        }
        prev_space = c.is_whitespace() || c == '[' || c == '{' || c == ',';
    }
    None
}

fn is_blank_or_comment(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

fn next_content_line(file: &SourceFile, from: usize) -> Option<usize> {
    (from..=file.line_count()).find(|&l| file.line_text(l).is_some_and(|t| !is_blank_or_comment(t)))
}

/// The last line of the node starting at `start`: following lines indented deeper.
fn block_end(file: &SourceFile, start: usize) -> usize {
    let Some(first) = file.line_text(start) else {
        return start;
    };
    let base = first.len() - first.trim_start().len();
    let mut end = start;
    for l in start + 1..=file.line_count() {
        let Some(t) = file.line_text(l) else { break };
        if is_blank_or_comment(t) {
            continue;
        }
        let ind = t.len() - t.trim_start().len();
        // A list item under the same key may start at the key's indentation (`- x`).
        let deeper = ind > base
            || (ind == base
                && t.trim_start().starts_with('-')
                && !first.trim_start().starts_with('-'));
        if !deeper {
            break;
        }
        end = l;
    }
    end
}

/// Removes suppressed findings and reports unused, unknown and unexplained suppressions.
pub fn apply(
    findings: Vec<Diagnostic>,
    files: &[(SourceId, &SourceFile, Vec<Suppression>)],
    unused_enabled: Option<Severity>,
) -> Vec<Diagnostic> {
    let mut files: Vec<(SourceId, &SourceFile, Vec<Suppression>)> = files.to_vec();
    let mut kept = Vec::with_capacity(findings.len());
    'finding: for f in findings {
        let Some(code) = f.code else {
            kept.push(f);
            continue;
        };
        if Rule::find(code).is_some_and(|r| r.meta().is_contract()) {
            kept.push(f);
            continue;
        }
        if let Some((_, file, sups)) = files.iter_mut().find(|(id, _, _)| *id == f.span.source) {
            let line = file.line_column(f.span.start).line;
            for s in sups.iter_mut() {
                if line < s.lines.0 || line > s.lines.1 {
                    continue;
                }
                if let Some(i) = s
                    .rules
                    .iter()
                    .position(|r| Rule::find(r).is_some_and(|rule| rule.code() == code))
                {
                    s.used[i] = true;
                    continue 'finding;
                }
            }
        }
        kept.push(f);
    }
    let Some(severity) = unused_enabled else {
        return kept;
    };
    for (_, _, sups) in &files {
        for s in sups {
            if s.reason.is_none() {
                kept.push(
                    Diagnostic::new(
                        Some(Rule::UnusedSuppression.code()),
                        severity,
                        s.span,
                        "suppression gives no reason",
                    )
                    .with_help("add `-- why this is acceptable` after the rule list"),
                );
            }
            for (rule, used) in s.rules.iter().zip(&s.used) {
                match Rule::find(rule) {
                    None => kept.push(
                        Diagnostic::new(
                            Some(Rule::UnusedSuppression.code()),
                            severity,
                            s.span,
                            format!("suppression names unknown rule `{rule}`"),
                        )
                        .with_help(crate::lint::config::unknown_rule_help(rule)),
                    ),
                    Some(r) if r.meta().is_contract() => kept.push(
                        Diagnostic::new(
                            Some(Rule::UnusedSuppression.code()),
                            severity,
                            s.span,
                            format!(
                                "`{}` reports an invalid contract and cannot be suppressed",
                                r.code()
                            ),
                        )
                        .with_help("fix the contract instead"),
                    ),
                    Some(r) if !used => kept.push(
                        Diagnostic::new(
                            Some(Rule::UnusedSuppression.code()),
                            severity,
                            s.span,
                            format!(
                                "suppression of `{}` ({}) suppresses nothing",
                                r.code(),
                                r.meta().name()
                            ),
                        )
                        .with_help("remove it, or move it above the node it is meant for"),
                    ),
                    Some(_) => {}
                }
            }
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_line_comment_covers_the_next_block() {
        let text = "name: x\n# toolgate: ignore[TGS001] -- legacy\nparameters:\n  type: object\n  properties: {}\nexec: {builtin: echo}\n";
        let f = SourceFile::new("a.yaml", text);
        let s = parse(SourceId(0), &f);
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].lines, (3, 5));
        assert_eq!(s[0].rules, vec!["TGS001"]);
        assert_eq!(s[0].reason.as_deref(), Some("legacy"));
    }

    #[test]
    fn trailing_comment_covers_its_line_and_children() {
        let text = "parameters: # toolgate: ignore[open-object]\n  type: object\nx: 1\n";
        let f = SourceFile::new("a.yaml", text);
        let s = parse(SourceId(0), &f);
        assert_eq!(s[0].lines, (1, 2));
        assert_eq!(s[0].reason, None);
    }

    #[test]
    fn hashes_in_strings_are_not_comments() {
        let text = "description: \"see # toolgate: ignore[TGS001]\"\n";
        let f = SourceFile::new("a.yaml", text);
        assert!(parse(SourceId(0), &f).is_empty());
    }
}
