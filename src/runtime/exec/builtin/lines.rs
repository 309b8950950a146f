//! [`Lines`]: a file read line by line in bounded memory — one read buffer and at most
//! `max_line` bytes of the current line, however long the file or its lines — hashing every
//! byte as it passes (blake3, in whole buffers), and stopping when the call is cancelled.

use std::io::{self, Read};

use tokio_util::sync::CancellationToken;

/// Bytes read at a time.
const CHUNK: usize = 64 * 1024;

/// One line: its first `max_line` bytes (without the newline) and whether it was longer.
#[derive(Debug)]
pub(super) struct Line<'a> {
    /// The kept bytes (empty when the line was skipped).
    pub(super) bytes: &'a [u8],
    /// Whether the line had more bytes than were kept.
    pub(super) cut: bool,
}

/// A reader of lines.
pub(super) struct Lines<R> {
    src: R,
    buf: Vec<u8>,
    pos: usize,
    len: usize,
    eof: bool,
    line: Vec<u8>,
    max_line: usize,
    hasher: Option<blake3::Hasher>,
    read: u64,
    cancel: CancellationToken,
}

impl<R: Read> Lines<R> {
    /// Lines of `src`, keeping at most `max_line` bytes of each; `hash` hashes everything read.
    pub(super) fn new(src: R, max_line: usize, hash: bool, cancel: CancellationToken) -> Self {
        Lines {
            src,
            buf: vec![0; CHUNK],
            pos: 0,
            len: 0,
            eof: false,
            line: Vec::new(),
            max_line,
            hasher: hash.then(blake3::Hasher::new),
            read: 0,
            cancel,
        }
    }

    /// The first bytes of the file (up to `n`, at most one buffer), without consuming them.
    pub(super) fn peek(&mut self, n: usize) -> io::Result<&[u8]> {
        let n = n.min(CHUNK);
        while self.len - self.pos < n && !self.eof {
            if self.pos > 0 {
                self.buf.copy_within(self.pos..self.len, 0);
                self.len -= self.pos;
                self.pos = 0;
            }
            self.fill_at(self.len)?;
        }
        Ok(&self.buf[self.pos..self.len.min(self.pos + n)])
    }

    /// The next line, or `None` at the end. With `keep` false its bytes are only counted (and
    /// hashed), not copied.
    pub(super) fn next_line(&mut self, keep: bool) -> io::Result<Option<Line<'_>>> {
        self.line.clear();
        let mut cut = false;
        let mut any = false;
        loop {
            if self.pos == self.len {
                if self.eof {
                    break;
                }
                self.pos = 0;
                self.len = 0;
                self.fill_at(0)?;
                continue;
            }
            any = true;
            let avail = &self.buf[self.pos..self.len];
            let (take, end) = match memchr::memchr(b'\n', avail) {
                Some(i) => (i, true),
                None => (avail.len(), false),
            };
            if keep {
                let room = self.max_line.saturating_sub(self.line.len());
                let part = &avail[..take];
                if part.len() > room {
                    cut = true;
                }
                self.line.extend_from_slice(&part[..part.len().min(room)]);
            }
            self.pos += take + usize::from(end);
            if end {
                break;
            }
        }
        if !any {
            return Ok(None);
        }
        if !cut && self.line.last() == Some(&b'\r') {
            self.line.pop();
        }
        Ok(Some(Line {
            bytes: &self.line,
            cut,
        }))
    }

    /// Bytes read so far.
    pub(super) fn bytes_read(&self) -> u64 {
        self.read
    }

    /// The hash of everything read (when hashing), after reading to the end.
    pub(super) fn finish(mut self) -> io::Result<Option<String>> {
        while !self.eof {
            self.pos = 0;
            self.len = 0;
            self.fill_at(0)?;
        }
        Ok(self.hasher.map(|h| h.finalize().to_hex().to_string()))
    }

    /// Reads into the buffer from `at`, hashing what arrives.
    fn fill_at(&mut self, at: usize) -> io::Result<()> {
        if self.cancel.is_cancelled() {
            return Err(io::Error::new(
                io::ErrorKind::Interrupted,
                "the call was stopped",
            ));
        }
        let n = loop {
            match self.src.read(&mut self.buf[at..]) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                r => break r?,
            }
        };
        if n == 0 {
            self.eof = true;
        }
        if let Some(h) = &mut self.hasher {
            h.update(&self.buf[at..at + n]);
        }
        self.read += n as u64;
        self.len = at + n;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &[u8], max: usize) -> Vec<(String, bool)> {
        let mut l = Lines::new(text, max, true, CancellationToken::new());
        let mut out = Vec::new();
        while let Some(line) = l.next_line(true).unwrap() {
            out.push((String::from_utf8_lossy(line.bytes).into_owned(), line.cut));
        }
        assert_eq!(
            l.finish().unwrap().unwrap(),
            blake3::hash(text).to_hex().to_string()
        );
        out
    }

    #[test]
    fn splits_like_read_until_and_cuts_long_lines() {
        let t = |s: &str| (s.to_owned(), false);
        assert_eq!(all(b"a\nb\r\n\nc", 10), vec![t("a"), t("b"), t(""), t("c")]);
        assert_eq!(all(b"a\n", 10), vec![t("a")]);
        assert_eq!(all(b"", 10), vec![]);
        assert_eq!(
            all(b"0123456789abc\nz", 4),
            vec![("0123".to_owned(), true), t("z")]
        );
    }

    #[test]
    fn long_files_pass_in_bounded_buffers() {
        let text: Vec<u8> = (0..300_000u32)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect();
        let lines = all(&text, 64);
        assert_eq!(lines.len(), 300_000);
        assert_eq!(lines[299_999].0, "line 299999");
        // One line of 1 MiB without a newline keeps only its first bytes.
        let big = vec![b'x'; 1 << 20];
        assert_eq!(all(&big, 8), vec![("xxxxxxxx".to_owned(), true)]);
    }

    #[test]
    fn peek_does_not_consume() {
        let mut l = Lines::new(&b"ab\ncd\n"[..], 10, false, CancellationToken::new());
        assert_eq!(l.peek(4).unwrap(), b"ab\nc");
        assert_eq!(l.next_line(true).unwrap().unwrap().bytes, b"ab");
        assert_eq!(l.next_line(false).unwrap().unwrap().bytes, b"");
        assert!(l.next_line(true).unwrap().is_none());
        assert_eq!(l.bytes_read(), 6);
    }
}
