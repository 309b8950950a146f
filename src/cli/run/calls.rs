//! The calls file of `toolgate run --calls`, read as a stream: one JSON object per line, each
//! line at most [`MAX_LINE`] bytes, handed out in turns of at most [`TURN_CALLS`] calls (or
//! [`TURN_BYTES`] of lines), so that memory stays flat for a file of any size.

use std::io::{BufRead, Read};

use serde::Deserialize;

use super::super::call::Failed;
use crate::runtime::ToolCall;

/// The longest line (one call) a calls file may have: 16 MiB, the line cap of MCP's stdio transport in rmcp.
pub const MAX_LINE: usize = 16 << 20;
/// The most calls one turn holds; a longer file runs as several turns, one after another.
pub const TURN_CALLS: usize = 256;
/// The most bytes of lines one turn holds.
pub const TURN_BYTES: usize = 64 << 20;

#[derive(Deserialize)]
struct Line {
    #[serde(default)]
    call_id: Option<String>,
    #[serde(alias = "tool")]
    name: String,
    #[serde(default, alias = "args")]
    arguments: Option<serde_json::Value>,
    #[serde(default)]
    idempotency_key: Option<String>,
}

/// A calls file being read: its lines, numbered, parsed one at a time.
pub struct CallsReader<R> {
    input: R,
    line: usize,
    calls: usize,
    buf: Vec<u8>,
}

impl<R: BufRead> CallsReader<R> {
    /// Reads calls from `input`.
    pub fn new(input: R) -> Self {
        CallsReader {
            input,
            line: 0,
            calls: 0,
            buf: Vec::new(),
        }
    }

    /// The next call and the bytes of its line; `None` at the end of the input.
    pub fn next_call(&mut self) -> Result<Option<(ToolCall, usize)>, Failed> {
        loop {
            self.buf.clear();
            // One byte past the cap tells a line that is too long from one that fits exactly.
            let n = (&mut self.input)
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| Failed(format!("cannot read the calls file: {e}")))?;
            if n == 0 {
                return Ok(None);
            }
            self.line += 1;
            if self.buf.last() != Some(&b'\n') && self.buf.len() > MAX_LINE {
                return Err(Failed(format!(
                    "line {} of the calls file is longer than {} MiB, the most one call may take; \
                     split its data or pass it by reference (a file path) instead",
                    self.line,
                    MAX_LINE >> 20
                )));
            }
            let text = std::str::from_utf8(&self.buf).map_err(|e| {
                Failed(format!(
                    "line {} of the calls file is not UTF-8 (byte {}); write the calls as UTF-8 JSON",
                    self.line,
                    e.valid_up_to() + 1
                ))
            })?;
            if text.trim().is_empty() {
                continue;
            }
            let l: Line = serde_json::from_str(text).map_err(|e| {
                Failed(format!(
                    "line {} of the calls file is not a call: {e}",
                    self.line
                ))
            })?;
            self.calls += 1;
            let id = l.call_id.unwrap_or_else(|| format!("call-{}", self.calls));
            let mut call = ToolCall::new(
                id,
                l.name,
                l.arguments.unwrap_or_else(|| serde_json::json!({})),
            );
            if let Some(k) = l.idempotency_key {
                call = call.with_idempotency_key(k);
            }
            return Ok(Some((call, n)));
        }
    }

    /// The next turn: up to [`TURN_CALLS`] calls or [`TURN_BYTES`] of lines; empty at the end.
    pub fn next_turn(&mut self) -> Result<Vec<ToolCall>, Failed> {
        let mut turn = Vec::new();
        let mut bytes = 0;
        while turn.len() < TURN_CALLS && bytes < TURN_BYTES {
            match self.next_call()? {
                Some((call, n)) => {
                    bytes += n;
                    turn.push(call);
                }
                None => break,
            }
        }
        Ok(turn)
    }

    /// Reads the whole input, keeping nothing: the first bad line's error, or the call count.
    pub fn check_all(mut self) -> Result<usize, Failed> {
        while self.next_call()?.is_some() {}
        Ok(self.calls)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(s: &str) -> CallsReader<&[u8]> {
        CallsReader::new(s.as_bytes())
    }

    #[test]
    fn calls_are_numbered_across_blank_lines() {
        let mut r = reader("{\"name\":\"a\"}\n\n  \n{\"tool\":\"b\",\"args\":{\"x\":1}}");
        let (a, _) = r.next_call().unwrap().unwrap();
        let (b, _) = r.next_call().unwrap().unwrap();
        assert_eq!((a.call_id.as_str(), a.name.as_str()), ("call-1", "a"));
        assert_eq!((b.call_id.as_str(), b.name.as_str()), ("call-2", "b"));
        assert_eq!(b.arguments, serde_json::json!({"x": 1}));
        assert!(r.next_call().unwrap().is_none());
    }

    #[test]
    fn a_bad_line_is_named_by_its_number() {
        let r = reader("{\"name\":\"a\"}\n\nnot json\n");
        let Failed(m) = r.check_all().unwrap_err();
        assert!(
            m.starts_with("line 3 of the calls file is not a call"),
            "{m}"
        );
    }

    #[test]
    fn a_line_past_the_cap_is_refused_without_being_held() {
        let big = format!(
            "{{\"name\":\"a\",\"args\":{{\"s\":\"{}\"}}}}\n",
            "x".repeat(MAX_LINE)
        );
        let mut r = reader(&big);
        let Failed(m) = r.next_call().unwrap_err();
        assert!(
            m.starts_with("line 1 of the calls file is longer than 16 MiB"),
            "{m}"
        );
        assert!(r.buf.len() <= MAX_LINE + 1);
    }

    #[test]
    fn a_line_of_exactly_the_cap_is_read() {
        let head = "{\"name\":\"a\",\"args\":{\"s\":\"";
        let tail = "\"}}";
        let fill = MAX_LINE - head.len() - tail.len();
        let line = format!("{head}{}{tail}", "x".repeat(fill));
        assert_eq!(line.len(), MAX_LINE);
        let mut r = reader(&line);
        assert!(r.next_call().unwrap().is_some());
    }

    #[test]
    fn turns_hold_at_most_turn_calls() {
        let text = "{\"name\":\"a\"}\n".repeat(TURN_CALLS * 2 + 3);
        let mut r = reader(&text);
        let sizes: Vec<usize> = std::iter::from_fn(|| {
            let t = r.next_turn().unwrap();
            (!t.is_empty()).then_some(t.len())
        })
        .collect();
        assert_eq!(sizes, vec![TURN_CALLS, TURN_CALLS, 3]);
        assert_eq!(r.calls, TURN_CALLS * 2 + 3);
    }
}
