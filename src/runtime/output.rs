//! The output policy's mechanics: redaction of secrets and spec patterns, and bounding text to
//! the byte and line limits with a marker saying what was left out.
//!
//! Redaction runs before anything is stored or shown, so neither the result, nor an artifact, nor
//! `read_artifact` later can hand a matched secret to the model.

use std::sync::OnceLock;

use regex::{Regex, RegexSet};
use serde_json::Value;

use crate::ir::OutputKeep;

/// What a redacted secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// Well-known credential shapes (redacted when the output policy's `redact_secrets` is on).
const SECRET_PATTERNS: &[&str] = &[
    // A whole key, or one whose end was cut off (a head, or a range ending inside it) …
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\z)",
    // … or whose start was (a tail, or a range starting inside it).
    r"\A[A-Za-z0-9+/=\s]*?-----END [A-Z ]*PRIVATE KEY-----",
    // Word boundaries are ASCII ones (`(?-u:\b)`): the shapes are ASCII, a letter of another
    // script beside one only widens what is redacted, and the regex engine's fast automata
    // give up on a Unicode boundary at the first non-ASCII byte (the cut marker has one),
    // leaving a megabyte of head and tail to its slowest engine.
    r"(?-u:\b)AKIA[0-9A-Z]{16}(?-u:\b)",
    r"(?-u:\b)gh[pousr]_[A-Za-z0-9]{36,}(?-u:\b)",
    r"(?-u:\b)github_pat_[A-Za-z0-9_]{40,}(?-u:\b)",
    r"(?-u:\b)xox[abprs]-[A-Za-z0-9-]{10,}(?-u:\b)",
    r"(?-u:\b)sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}",
    r"(?i)(?-u:\b)bearer\s+[A-Za-z0-9._~+/=-]{20,}",
    r"(?-u:\b)AIza[0-9A-Za-z_-]{35}(?-u:\b)",
];

fn secret_patterns() -> &'static [Regex] {
    static PATTERNS: OnceLock<Vec<Regex>> = OnceLock::new();
    PATTERNS.get_or_init(|| {
        SECRET_PATTERNS
            .iter()
            .filter_map(|p| Regex::new(p).ok())
            .collect()
    })
}

/// Whether any well-known secret shape occurs in a text: one pass over it instead of one per
/// pattern (most texts hold none).
fn may_hold_secrets(text: &str) -> bool {
    static SET: OnceLock<Option<RegexSet>> = OnceLock::new();
    SET.get_or_init(|| RegexSet::new(SECRET_PATTERNS).ok())
        .as_ref()
        .is_none_or(|set| set.is_match(text))
}

/// What to redact from one call's output.
#[derive(Clone, Copy, Debug)]
pub struct Redactor<'a> {
    /// Whether the well-known secret patterns apply.
    pub secrets: bool,
    /// The spec's own patterns.
    pub patterns: &'a [Regex],
    /// Literal values (secret environment variables of a command tool).
    pub literals: &'a [String],
}

impl Redactor<'_> {
    /// Whether nothing would ever be redacted.
    fn is_noop(&self) -> bool {
        !self.secrets && self.patterns.is_empty() && self.literals.is_empty()
    }

    /// Redacts a text.
    pub fn text(&self, text: &str) -> String {
        if self.is_noop() {
            return text.to_owned();
        }
        let mut out = text.to_owned();
        for l in self.literals.iter().filter(|l| l.len() >= 4) {
            if out.contains(l.as_str()) {
                out = out.replace(l.as_str(), REDACTED);
            }
        }
        for re in self.patterns {
            if re.is_match(&out) {
                out = re.replace_all(&out, REDACTED).into_owned();
            }
        }
        if self.secrets && may_hold_secrets(&out) {
            for re in secret_patterns() {
                if re.is_match(&out) {
                    out = re.replace_all(&out, REDACTED).into_owned();
                }
            }
        }
        out
    }

    /// Masks what a cut left of a secret literal at either end of a text (a range that starts
    /// or ends inside one): a suffix of a literal at the start, a prefix at the end.
    pub fn edges(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for l in self.literals.iter().filter(|l| l.len() >= 4) {
            // The longest cut piece of at least 4 bytes, at each end.
            let at_end = (4..l.len())
                .rev()
                .find(|k| l.get(..*k).is_some_and(|p| out.ends_with(p)));
            if let Some(k) = at_end {
                out.truncate(out.len() - k);
                out.push_str(REDACTED);
            }
            let at_start = (4..l.len())
                .rev()
                .find(|k| l.get(l.len() - k..).is_some_and(|s| out.starts_with(s)));
            if let Some(k) = at_start {
                out = format!("{REDACTED}{}", &out[k..]);
            }
        }
        out
    }

    /// Redacts every string inside a JSON value.
    pub fn json(&self, v: &mut Value) {
        if self.is_noop() {
            return;
        }
        match v {
            Value::String(s) => {
                let r = self.text(s);
                if r != *s {
                    *s = r;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|i| self.json(i)),
            Value::Object(m) => m.values_mut().for_each(|i| self.json(i)),
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
}

/// A text cut to the limits: what is kept, and whether anything was left out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bounded {
    /// The kept text, with an omission marker where text was left out.
    pub text: String,
    /// Whether anything was left out.
    pub truncated: bool,
}

/// Cuts a text to `max_bytes` and `max_lines`, keeping the head, the tail or both.
pub fn bound(text: &str, max_bytes: u64, max_lines: u64, keep: OutputKeep) -> Bounded {
    let max_bytes = usize::try_from(max_bytes).unwrap_or(usize::MAX).max(1);
    let max_lines = usize::try_from(max_lines).unwrap_or(usize::MAX).max(1);
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    if text.len() <= max_bytes && lines.len() <= max_lines {
        return Bounded {
            text: text.to_owned(),
            truncated: false,
        };
    }
    let (head_budget, tail_budget) = match keep {
        OutputKeep::Head => ((max_lines, max_bytes), (0, 0)),
        OutputKeep::Tail => ((0, 0), (max_lines, max_bytes)),
        OutputKeep::HeadTail => (
            (max_lines.div_ceil(2), max_bytes.div_ceil(2)),
            (max_lines / 2, max_bytes / 2),
        ),
    };
    let head = take(&lines, head_budget, false);
    let rest = &lines[head.lines..];
    let tail = take(rest, tail_budget, true);
    let omitted_lines = rest.len() - tail.lines;
    let omitted_bytes = text.len() - head.text.len() - tail.text.len();
    let mut out = head.text;
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&format!(
        "[… {omitted_lines} line{} ({omitted_bytes} bytes) omitted …]\n",
        if omitted_lines == 1 { "" } else { "s" }
    ));
    out.push_str(&tail.text);
    Bounded {
        text: out,
        truncated: true,
    }
}

struct Taken {
    text: String,
    lines: usize,
}

/// Takes whole lines from the start (or the end) within a (lines, bytes) budget. A first line
/// longer than the byte budget is cut at a character boundary, keeping its start (or end).
fn take(lines: &[&str], (max_lines, max_bytes): (usize, usize), from_end: bool) -> Taken {
    let mut picked: Vec<&str> = Vec::new();
    let mut bytes = 0;
    let mut partial = false;
    let ordered: Box<dyn Iterator<Item = &&str>> = if from_end {
        Box::new(lines.iter().rev())
    } else {
        Box::new(lines.iter())
    };
    for line in ordered {
        if picked.len() >= max_lines {
            break;
        }
        if bytes + line.len() > max_bytes {
            if picked.is_empty() && max_bytes > 0 {
                let part = if from_end {
                    let mut cut = line.len() - max_bytes.min(line.len());
                    while !line.is_char_boundary(cut) {
                        cut += 1;
                    }
                    &line[cut..]
                } else {
                    let mut cut = max_bytes.min(line.len());
                    while !line.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    &line[..cut]
                };
                picked.push(part);
                partial = true;
            }
            break;
        }
        bytes += line.len();
        picked.push(line);
    }
    if from_end {
        picked.reverse();
    }
    // A partially kept line still counts as left out.
    Taken {
        lines: picked.len() - usize::from(partial),
        text: picked.concat(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_secrets_are_masked() {
        let literals = vec!["s3cr3t-value".to_owned()];
        let r = Redactor {
            secrets: true,
            patterns: &[],
            literals: &literals,
        };
        assert_eq!(
            r.edges("r3t-value and s3cr3t-v"),
            "[REDACTED] and [REDACTED]"
        );
        assert_eq!(r.edges("nothing here"), "nothing here");
        let head = "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n";
        assert_eq!(r.text(head), "key:\n[REDACTED]");
        let tail = "QUJD\nREVG==\n-----END RSA PRIVATE KEY-----\ndone\n";
        assert_eq!(r.text(tail), "[REDACTED]\ndone\n");
    }

    #[test]
    fn short_text_is_kept() {
        assert_eq!(
            bound("a\nb\n", 100, 10, OutputKeep::HeadTail),
            Bounded {
                text: "a\nb\n".into(),
                truncated: false
            }
        );
    }

    #[test]
    fn long_text_keeps_head_and_tail_with_a_marker() {
        let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
        let b = bound(&text, 1000, 4, OutputKeep::HeadTail);
        assert_eq!(
            b.text,
            "line 1\nline 2\n[… 6 lines (42 bytes) omitted …]\nline 9\nline 10\n"
        );
        let b = bound(&text, 1000, 2, OutputKeep::Tail);
        assert_eq!(
            b.text,
            "[… 8 lines (56 bytes) omitted …]\nline 9\nline 10\n"
        );
        let b = bound("é".repeat(10).as_str(), 5, 10, OutputKeep::Head);
        assert_eq!(b.text, "éé\n[… 1 line (16 bytes) omitted …]\n");
    }

    proptest::proptest! {
        #[test]
        fn bounding_never_panics_and_stays_near_the_limit(
            text in "(?s).{0,400}",
            max_bytes in 1u64..200,
            max_lines in 1u64..20,
            keep in 0u8..3,
        ) {
            let keep = [OutputKeep::Head, OutputKeep::Tail, OutputKeep::HeadTail][usize::from(keep)];
            let b = bound(&text, max_bytes, max_lines, keep);
            if b.truncated {
                // The kept text plus one marker line (at most ~60 bytes).
                proptest::prop_assert!(b.text.len() as u64 <= max_bytes + 64);
            } else {
                proptest::prop_assert_eq!(b.text, text);
            }
        }
    }

    #[test]
    fn secrets_are_redacted_in_text_and_json() {
        let r = Redactor {
            secrets: true,
            patterns: &[],
            literals: &["hunter22".to_owned()],
        };
        assert_eq!(
            r.text("key AKIAABCDEFGHIJKLMNOP pw hunter22"),
            "key [REDACTED] pw [REDACTED]"
        );
        // Beside text of another script (whose letters are no ASCII word characters).
        assert_eq!(
            r.text("clé:AKIAABCDEFGHIJKLMNOP… ключAKIAABCDEFGHIJKLMNOPé"),
            "clé:[REDACTED]… ключ[REDACTED]é"
        );
        let mut v = serde_json::json!({"a": ["ghp_0123456789abcdefghijABCDEFGHIJ012345"]});
        r.json(&mut v);
        assert_eq!(v, serde_json::json!({"a": ["[REDACTED]"]}));
    }
}
