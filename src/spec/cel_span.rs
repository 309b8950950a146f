//! Mapping positions inside an expression back to bytes of the YAML file.
//!
//! A CEL expression is the *decoded* value of a YAML scalar; quoting, escapes and block
//! indentation make decoded offsets differ from file offsets. We walk the raw token and the
//! decoded text side by side to recover the byte offset of every decoded character.

use crate::spec::source::TextRange;

/// The byte range in the file of characters `start..end` of a scalar's decoded `value`, whose
/// token starts at `token.start`. Falls back to the whole token when the walk cannot follow.
pub fn map_range(text: &str, token: TextRange, value: &str, start: usize, end: usize) -> TextRange {
    let offsets = match char_offsets(text, token.start as usize, value) {
        Some(o) => o,
        None => return token,
    };
    let Some(&s) = offsets.get(start) else {
        return token;
    };
    let last = end.saturating_sub(1).max(start);
    let e = offsets
        .get(last)
        .map(|&o| {
            o + text
                .get(o..)
                .and_then(|t| t.chars().next())
                .map_or(1, char::len_utf8)
        })
        .unwrap_or(s + 1);
    TextRange {
        start: s as u32,
        end: e.max(s) as u32,
    }
}

/// The character index in `value` of a 1-based line and column of it.
pub fn char_index(value: &str, line: usize, column: usize) -> usize {
    let mut idx = 0;
    for (i, l) in value.split('\n').enumerate() {
        if i + 1 == line {
            return idx + column.saturating_sub(1).min(l.chars().count());
        }
        idx += l.chars().count() + 1;
    }
    value.chars().count()
}

/// Byte offset in `text` of each character of the decoded `value`.
fn char_offsets(text: &str, start: usize, value: &str) -> Option<Vec<usize>> {
    let raw = text.get(start..)?;
    let mut pos = 0usize;
    let style = raw.chars().next()?;
    let (quote, block) = match style {
        '\'' | '"' => (Some(style), false),
        '|' | '>' => (None, true),
        _ => (None, false),
    };
    if quote.is_some() {
        pos += 1;
    }
    if block {
        // Skip the header line (`|`, `|-`, `>2` ...): the content starts on the next line.
        pos += raw.get(pos..)?.find('\n')? + 1;
    }
    let mut out = Vec::with_capacity(value.len());
    let bytes = raw.as_bytes();
    for d in value.chars() {
        loop {
            let r = raw.get(pos..)?.chars().next()?;
            if quote == Some('"') && r == '\\' {
                out.push(start + pos);
                pos += escape_len(raw.get(pos..)?);
                break;
            }
            if quote == Some('\'') && r == '\'' && bytes.get(pos + 1) == Some(&b'\'') {
                out.push(start + pos);
                pos += 2;
                break;
            }
            if r == d {
                out.push(start + pos);
                pos += r.len_utf8();
                break;
            }
            if d == ' ' && r == '\n' {
                // A folded line break.
                out.push(start + pos);
                pos += 1;
                while matches!(bytes.get(pos), Some(b' ' | b'\t')) {
                    pos += 1;
                }
                break;
            }
            if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
                pos += 1;
                continue;
            }
            return None;
        }
    }
    Some(out)
}

fn escape_len(s: &str) -> usize {
    let mut chars = s.chars();
    chars.next();
    match chars.next() {
        Some('x') => 4,
        Some('u') => 6,
        Some('U') => 10,
        Some(c) => 1 + c.len_utf8(),
        None => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, token_start: usize, value: &str, sub: &str) -> String {
        let start = value.find(sub).unwrap();
        let s = value[..start].chars().count();
        let e = s + sub.chars().count();
        let r = map_range(text, TextRange::new(token_start, 1), value, s, e);
        text[r.start as usize..r.end as usize].to_owned()
    }

    #[test]
    fn plain_and_quoted_scalars() {
        let text = "expr: args.pth == 1\n";
        assert_eq!(check(text, 6, "args.pth == 1", "args.pth"), "args.pth");
        let text = "expr: \"args.a == \\\"x\\\" && args.pth\"\n";
        assert_eq!(
            check(text, 6, "args.a == \"x\" && args.pth", "args.pth"),
            "args.pth"
        );
        let text = "expr: 'args.a == ''x'' && args.pth'\n";
        assert_eq!(
            check(text, 6, "args.a == 'x' && args.pth", "args.pth"),
            "args.pth"
        );
    }

    #[test]
    fn block_scalars() {
        let text = "expr: |\n  args.a &&\n    args.pth\n";
        let value = "args.a &&\n  args.pth\n";
        assert_eq!(check(text, 6, value, "args.pth"), "args.pth");
        let text = "expr: >-\n  args.a &&\n  args.pth\n";
        assert_eq!(check(text, 6, "args.a && args.pth", "args.pth"), "args.pth");
    }

    #[test]
    fn char_index_of_line_column() {
        assert_eq!(char_index("ab\ncd", 2, 2), 4);
        assert_eq!(char_index("ab", 1, 1), 0);
    }
}
