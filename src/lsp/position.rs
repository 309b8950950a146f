//! Byte offsets ↔ LSP positions.
//!
//! Spans in toolgate are byte ranges; LSP positions are a line and a column counted in UTF-16
//! code units (the protocol's default encoding, which every client supports).

use lsp_types::{Position, Range};

use crate::spec::source::SourceFile;

/// The LSP position of a byte offset (clamped to the text).
pub fn position(file: &SourceFile, offset: u32) -> Position {
    let lc = file.line_column(offset);
    let line_text = file.line_text(lc.line).unwrap_or("");
    let character: usize = line_text
        .chars()
        .take(lc.column - 1)
        .map(char::len_utf16)
        .sum();
    Position {
        line: to_u32(lc.line - 1),
        character: to_u32(character),
    }
}

/// The LSP range of a byte range.
pub fn range(file: &SourceFile, start: u32, end: u32) -> Range {
    Range {
        start: position(file, start),
        end: position(file, end),
    }
}

/// The byte offset of an LSP position; a column past the end of its line is the line's end, a
/// line past the end of the text is the text's end.
pub fn offset(text: &str, pos: Position) -> usize {
    let mut line_start = 0;
    for _ in 0..pos.line {
        match text[line_start..].find('\n') {
            Some(i) => line_start += i + 1,
            None => return text.len(),
        }
    }
    let line_end = text[line_start..]
        .find('\n')
        .map_or(text.len(), |i| line_start + i);
    let mut units = 0;
    for (i, c) in text[line_start..line_end].char_indices() {
        if units >= pos.character as usize {
            return line_start + i;
        }
        units += c.len_utf16();
    }
    line_end
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns_round_trip_through_byte_offsets() {
        // `é` is 2 bytes and 1 UTF-16 unit; `😀` is 4 bytes and 2 units.
        let text = "a: é😀x\nb: 1\n";
        let file = SourceFile::new("a.yaml", text);
        let x = text.find('x').unwrap();
        let p = position(&file, u32::try_from(x).unwrap());
        assert_eq!(
            p,
            Position {
                line: 0,
                character: 6
            }
        );
        assert_eq!(offset(text, p), x);
        let b = text.find('b').unwrap();
        assert_eq!(
            position(&file, u32::try_from(b).unwrap()),
            Position {
                line: 1,
                character: 0
            }
        );
        assert_eq!(
            offset(
                text,
                Position {
                    line: 1,
                    character: 99
                }
            ),
            text.len() - 1
        );
        assert_eq!(
            offset(
                text,
                Position {
                    line: 9,
                    character: 0
                }
            ),
            text.len()
        );
    }
}
