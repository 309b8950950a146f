//! Source files and byte spans: where every spec node came from.
//!
//! A [`Span`] is a byte range inside one [`SourceFile`] of a [`SourceMap`]; line and column are
//! computed only when something is rendered (ruff's `TextRange` + `LineIndex` split).

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Index of a file inside a [`SourceMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct SourceId(pub u32);

/// A byte range inside one source file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Span {
    /// The file the range belongs to.
    pub source: SourceId,
    /// First byte.
    pub start: u32,
    /// One past the last byte (`start == end` for a point).
    pub end: u32,
}

impl Span {
    /// A span from a start offset and a length.
    pub fn new(source: SourceId, start: usize, len: usize) -> Self {
        let start = u32::try_from(start).unwrap_or(u32::MAX);
        let end = start.saturating_add(u32::try_from(len).unwrap_or(u32::MAX));
        Span { source, start, end }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        (self.end - self.start) as usize
    }

    /// Whether the span covers no bytes.
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// The smallest span covering both (they must share a file).
    pub fn cover(self, other: Span) -> Span {
        Span {
            source: self.source,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// A 1-based line and column (in characters) for display.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineColumn {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, counted in Unicode scalar values.
    pub column: usize,
}

/// A byte range inside a file that is known from context (AST nodes carry these; their file is
/// the [`SourceId`] of the document that holds them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct TextRange {
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

impl TextRange {
    /// A range from a start offset and a length.
    pub fn new(start: usize, len: usize) -> Self {
        let start = u32::try_from(start).unwrap_or(u32::MAX);
        TextRange {
            start,
            end: start.saturating_add(u32::try_from(len).unwrap_or(u32::MAX)),
        }
    }

    /// The same range, placed in a file.
    pub fn in_file(self, source: SourceId) -> Span {
        Span {
            source,
            start: self.start,
            end: self.end,
        }
    }

    /// The smallest range covering both.
    pub fn cover(self, other: TextRange) -> TextRange {
        TextRange {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// One loaded file: its path as given, its text, and a line index.
#[derive(Debug)]
pub struct SourceFile {
    /// The path as the user gave or the loader found it.
    pub path: PathBuf,
    /// The file's text (always valid UTF-8; invalid files are refused before this).
    pub text: Arc<str>,
    line_starts: Vec<u32>,
}

impl SourceFile {
    /// Wraps a file's text and indexes its lines.
    pub fn new(path: impl Into<PathBuf>, text: impl Into<Arc<str>>) -> Self {
        let text: Arc<str> = text.into();
        let mut line_starts = vec![0u32];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(u32::try_from(i + 1).unwrap_or(u32::MAX));
            }
        }
        SourceFile {
            path: path.into(),
            text,
            line_starts,
        }
    }

    /// The path for messages, with `/` separators.
    pub fn display_path(&self) -> String {
        self.path.to_string_lossy().replace('\\', "/")
    }

    /// Line and column of a byte offset (clamped to the text).
    pub fn line_column(&self, offset: u32) -> LineColumn {
        let offset = offset.min(u32::try_from(self.text.len()).unwrap_or(u32::MAX));
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let start = self.line_starts.get(line).copied().unwrap_or(0) as usize;
        let end = (offset as usize).min(self.text.len());
        let column = self
            .text
            .get(start..end)
            .map(|s| s.chars().count())
            .unwrap_or(end - start);
        LineColumn {
            line: line + 1,
            column: column + 1,
        }
    }

    /// Byte offset of a 1-based line and 1-based character column, if inside the text.
    pub fn offset_of(&self, line: usize, column: usize) -> Option<usize> {
        let start = *self.line_starts.get(line.checked_sub(1)?)? as usize;
        let rest = self.text.get(start..)?;
        let mut offset = start;
        for (i, (byte_idx, _)) in rest.char_indices().enumerate() {
            if i + 1 == column {
                return Some(start + byte_idx);
            }
            offset = start + byte_idx;
        }
        // Column one past the last character of the text.
        Some(if column <= 1 {
            start
        } else {
            offset.max(start)
        })
    }

    /// Number of lines.
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// The text of a 1-based line, without its newline.
    pub fn line_text(&self, line: usize) -> Option<&str> {
        let start = *self.line_starts.get(line.checked_sub(1)?)? as usize;
        let end = self
            .line_starts
            .get(line)
            .map(|&e| e as usize)
            .unwrap_or(self.text.len());
        self.text
            .get(start..end)
            .map(|s| s.trim_end_matches(['\n', '\r']))
    }

    /// The text a span covers.
    pub fn slice(&self, span: Span) -> &str {
        self.text
            .get(span.start as usize..span.end as usize)
            .unwrap_or("")
    }
}

/// Every file a run has loaded; spans refer into it by [`SourceId`].
#[derive(Debug, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a file and returns its id.
    pub fn add(&mut self, path: impl Into<PathBuf>, text: impl Into<Arc<str>>) -> SourceId {
        let id = SourceId(u32::try_from(self.files.len()).unwrap_or(u32::MAX));
        self.files.push(SourceFile::new(path, text));
        id
    }

    /// The file behind an id.
    pub fn get(&self, id: SourceId) -> Option<&SourceFile> {
        self.files.get(id.0 as usize)
    }

    /// The id of a file already loaded from `path`.
    pub fn find(&self, path: &Path) -> Option<SourceId> {
        self.files
            .iter()
            .position(|f| f.path == path)
            .and_then(|i| u32::try_from(i).ok())
            .map(SourceId)
    }

    /// All files with their ids.
    pub fn iter(&self) -> impl Iterator<Item = (SourceId, &SourceFile)> {
        self.files
            .iter()
            .enumerate()
            .map(|(i, f)| (SourceId(u32::try_from(i).unwrap_or(u32::MAX)), f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_column_round_trips() {
        let f = SourceFile::new("a.yaml", "ab\nçd\n\nx");
        assert_eq!(f.line_column(0), LineColumn { line: 1, column: 1 });
        assert_eq!(f.line_column(3), LineColumn { line: 2, column: 1 });
        assert_eq!(f.line_column(5), LineColumn { line: 2, column: 2 });
        assert_eq!(f.offset_of(2, 2), Some(5));
        assert_eq!(f.offset_of(4, 1), Some(8));
        assert_eq!(f.line_text(2), Some("çd"));
        assert_eq!(f.line_text(3), Some(""));
        assert_eq!(f.line_count(), 4);
    }
}
