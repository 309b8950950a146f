//! Reading one part of an artifact — a line range or a byte range — as the model may see it:
//! only the part is read, however large the artifact, and it is redacted as the producing
//! call's output was. `read_artifact` and the MCP server's `resources/read` both read here.

use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};

use super::{ArtifactError, ArtifactOwner, ArtifactRedaction, ArtifactStore, parse_id};
use crate::runtime::output::Redactor;

/// Which part of an artifact to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArtifactRange {
    /// Lines `start..=end` (1-based; `end: None` reads on as far as the limits allow).
    Lines {
        /// First line.
        start: u64,
        /// Last line.
        end: Option<u64>,
    },
    /// `length` bytes from `offset` (0-based; `length: None` as many as the limits allow).
    Bytes {
        /// First byte.
        offset: u64,
        /// How many.
        length: Option<u64>,
    },
}

impl ArtifactRange {
    /// The unit of the range, as the footer names it.
    fn unit(self) -> &'static str {
        match self {
            ArtifactRange::Lines { .. } => "lines",
            ArtifactRange::Bytes { .. } => "bytes",
        }
    }
}

/// The most one read returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadLimits {
    /// Bytes of text.
    pub max_bytes: u64,
    /// Lines (of a line range).
    pub max_lines: u64,
}

/// A part of an artifact, redacted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArtifactPart {
    /// The text (lossy UTF-8).
    pub text: String,
    /// First line (or byte) returned.
    pub start: u64,
    /// Last line (or byte) returned.
    pub end: u64,
    /// The artifact's size.
    pub total_bytes: u64,
    /// The artifact's lines.
    pub total_lines: u64,
    /// Whether more follows: of the asked lines, or of the artifact's bytes.
    pub truncated: bool,
    /// The range that was asked for.
    pub range: ArtifactRange,
}

impl ArtifactPart {
    /// The footer line that says where the part lies: `[ID: lines 1-200 of 5000; more follows]`.
    pub fn footer(&self, id: &str) -> String {
        let total = match self.range {
            ArtifactRange::Lines { .. } => self.total_lines,
            ArtifactRange::Bytes { .. } => self.total_bytes,
        };
        format!(
            "[{id}: {} {}-{} of {total}{}]",
            self.range.unit(),
            self.start,
            self.end,
            if self.truncated { "; more follows" } else { "" }
        )
    }

    /// Where to read on when more follows: the rest of the asked lines, or the next bytes
    /// (as many as were asked).
    pub fn next(&self) -> Option<ArtifactRange> {
        if !self.truncated {
            return None;
        }
        Some(match self.range {
            ArtifactRange::Lines { end, .. } => ArtifactRange::Lines {
                start: self.end + 1,
                end,
            },
            ArtifactRange::Bytes { length, .. } => ArtifactRange::Bytes {
                offset: self.end + 1,
                length,
            },
        })
    }
}

/// A part that cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PartError {
    /// The artifact cannot be found or read.
    #[error(transparent)]
    Artifact(#[from] ArtifactError),
    /// The range starts past the end of the artifact.
    #[error("{0}")]
    PastEnd(String),
}

impl ArtifactStore {
    /// Reads one part of an artifact for a caller ([`ArtifactStore::read_part`]): an artifact
    /// `owner` may not read is answered as one that does not exist, so that nobody learns
    /// whether another caller's id is stored.
    pub fn read_part_as(
        &self,
        id: &str,
        owner: &ArtifactOwner,
        range: ArtifactRange,
        limits: ReadLimits,
    ) -> Result<ArtifactPart, PartError> {
        if parse_id(id).is_some() && !self.readable_by(id, owner) {
            return Err(PartError::Artifact(ArtifactError::NotFound(id.to_owned())));
        }
        self.read_part(id, range, limits)
    }

    /// Reads one part of an artifact within `limits`, redacted as its metadata says, whoever
    /// produced it (the person's own commands; a caller's reads go through
    /// [`ArtifactStore::read_part_as`]).
    pub fn read_part(
        &self,
        id: &str,
        range: ArtifactRange,
        limits: ReadLimits,
    ) -> Result<ArtifactPart, PartError> {
        let file = self.open(id)?;
        let io = |e: std::io::Error| PartError::Artifact(ArtifactError::Io(e));
        // Totals come from the metadata (the artifact may be gigabytes); an object without
        // metadata is counted.
        let (total_bytes, total_lines, redaction) = match self.metadata(id) {
            Ok(m) => (m.reference.size, m.reference.lines, m.redact),
            Err(_) => {
                let len = file.metadata().map_err(io)?.len();
                (
                    len,
                    count_file_lines(&file).map_err(io)?,
                    Default::default(),
                )
            }
        };
        let budget = limits.max_bytes.max(1);
        let mut reader = BufReader::new(file);
        let (text, start, end, truncated) = match range {
            ArtifactRange::Bytes { offset, length } => {
                if offset > total_bytes || (offset == total_bytes && total_bytes > 0) {
                    return Err(PartError::PastEnd(format!(
                        "offset {offset} is past the end of the artifact ({total_bytes} bytes)"
                    )));
                }
                let asked_end = length.map_or(total_bytes, |l| offset.saturating_add(l));
                let end = asked_end
                    .min(offset.saturating_add(budget))
                    .min(total_bytes);
                reader.seek(SeekFrom::Start(offset)).map_err(io)?;
                let mut slice = vec![0u8; usize::try_from(end - offset).unwrap_or(0)];
                reader.read_exact(&mut slice).map_err(io)?;
                (
                    String::from_utf8_lossy(&slice).into_owned(),
                    offset,
                    end.saturating_sub(1).max(offset),
                    end < total_bytes,
                )
            }
            ArtifactRange::Lines { start, end } => {
                let start = start.max(1);
                if start > total_lines && total_lines > 0 {
                    return Err(PartError::PastEnd(format!(
                        "start_line {start} is past the end of the artifact ({total_lines} lines)"
                    )));
                }
                let last = end
                    .unwrap_or(u64::MAX)
                    .min(start.saturating_add(limits.max_lines.max(1) - 1));
                let mut text = String::new();
                let mut shown_end = start.saturating_sub(1);
                let mut line = Vec::new();
                let mut n = 0u64;
                loop {
                    line.clear();
                    if reader.read_until(b'\n', &mut line).map_err(io)? == 0 {
                        break;
                    }
                    n += 1;
                    if n < start {
                        continue;
                    }
                    if n > last {
                        break;
                    }
                    let l = String::from_utf8_lossy(&line);
                    if (text.len() + l.len()) as u64 > budget {
                        break;
                    }
                    text.push_str(&l);
                    shown_end = n;
                }
                let asked_end = end.unwrap_or(total_lines).min(total_lines);
                (text, start, shown_end, shown_end < asked_end)
            }
        };
        Ok(ArtifactPart {
            text: redact(&redaction, &text),
            start,
            end,
            total_bytes,
            total_lines,
            truncated,
            range,
        })
    }
}

/// The file keeps the raw output; what the model sees is redacted as the producing call's
/// output was, secrets a range cuts in half included.
fn redact(redaction: &ArtifactRedaction, text: &str) -> String {
    // The patterns compiled when the producing tool loaded (same engine); one that no longer
    // does (a hand-edited metadata file) withholds the text rather than skipping the pattern.
    let Ok(patterns) = redaction
        .patterns
        .iter()
        .map(|p| crate::ir::tool::compile_redaction(p))
        .collect::<Result<Vec<_>, _>>()
    else {
        return "[text withheld: a redaction pattern of this artifact does not compile]".into();
    };
    let redactor = Redactor {
        secrets: redaction.secrets,
        patterns: &patterns,
        literals: &redaction.literals,
    };
    redactor.edges(&redactor.text(text))
}

/// Lines of a file without metadata (an artifact from before metadata recorded them).
fn count_file_lines(file: &std::fs::File) -> std::io::Result<u64> {
    let mut r = BufReader::new(file);
    let (mut n, mut last) = (0u64, b'\n');
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        n += buf.iter().filter(|b| **b == b'\n').count() as u64;
        last = buf[buf.len() - 1];
        let len = buf.len();
        r.consume(len);
    }
    Ok(n + u64::from(last != b'\n'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::artifacts::ArtifactOrigin;

    fn stored(text: &str) -> (tempfile::TempDir, ArtifactStore, String) {
        let dir = tempfile::tempdir().unwrap();
        let store = ArtifactStore::new(dir.path());
        let origin = ArtifactOrigin {
            tool: "t",
            call_id: "c",
            media_type: "text/plain",
        };
        let id = store.put(text.as_bytes(), origin).unwrap().id;
        (dir, store, id)
    }

    #[test]
    fn parts_page_through_the_whole_artifact() {
        let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
        let (_d, store, id) = stored(&text);
        let limits = ReadLimits {
            max_bytes: 1000,
            max_lines: 4,
        };
        let mut range = Some(ArtifactRange::Lines {
            start: 1,
            end: None,
        });
        let mut read = String::new();
        let mut footers = Vec::new();
        while let Some(r) = range {
            let part = store.read_part(&id, r, limits).unwrap();
            read.push_str(&part.text);
            footers.push(part.footer("A"));
            range = part.next();
        }
        assert_eq!(read, text);
        assert_eq!(
            footers,
            [
                "[A: lines 1-4 of 10; more follows]",
                "[A: lines 5-8 of 10; more follows]",
                "[A: lines 9-10 of 10]"
            ]
        );
        let mut range = Some(ArtifactRange::Bytes {
            offset: 3,
            length: Some(20),
        });
        let mut pages = 0;
        let mut read = String::new();
        let small = ReadLimits {
            max_bytes: 7,
            max_lines: 1,
        };
        while let Some(r) = range {
            let part = store.read_part(&id, r, small).unwrap();
            read.push_str(&part.text);
            range = part.next();
            pages += 1;
        }
        assert_eq!((read.as_str(), pages), (&text[3..], 10));
        assert!(matches!(
            store.read_part(
                &id,
                ArtifactRange::Lines {
                    start: 11,
                    end: None
                },
                limits
            ),
            Err(PartError::PastEnd(_))
        ));
    }
}
