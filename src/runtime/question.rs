//! What an approver shows of a call: every argument in full, escaped so that nothing in a value
//! can hide part of it ([`arguments`]), any other text a person reads before approving — a tool
//! name, a reason, a file name, a witness call — escaped the same way ([`shown`]), and the bound
//! past which a question is not shown at all ([`too_large`]).
//!
//! Every place a person approves uses these: the terminal prompt of `toolgate call`, the MCP
//! elicitation of `toolgate serve`, and the trust prompt (`toolgate trust`, the gate of `call`
//! and `serve`).
//!
//! A person approves what they read, so the text must be all of the call and must look like
//! what it is:
//!
//! - every leaf value on its own line, named by its path (`edits[0].old_text`);
//! - strings between quotes, `"`, `\`, line feeds, carriage returns and tabs escaped as `\"`,
//!   `\\`, `\n`, `\r`, `\t`; every other character that would not show as itself — control
//!   characters (so ANSI escape sequences), invisible and bidirectional formatting characters,
//!   spaces other than U+0020 — written as `\u{…}` (`\u{1b}`, `\u{202e}`), so it can neither
//!   reorder nor hide text;
//! - a string with line breaks shown one numbered line per row, so a second line cannot hide
//!   behind the first;
//! - a run of [`SPACE_RUN`] or more spaces shown as `⟪N spaces⟫` (the marker characters are
//!   escaped where a value holds them), so padding cannot push text out of sight;
//! - every string's length in characters (and lines).
//!
//! Nothing is cut: a question longer than [`MAX_QUESTION_BYTES`] is not asked at all, and the
//! call ends as APPROVAL_UNAVAILABLE saying why.

use std::fmt::Write as _;

use serde_json::Value;

/// The longest question an approver is asked, in bytes: 64 KiB. A person cannot review more in
/// a prompt or a dialog, and MCP clients are not required to show more (a client may cut a long
/// elicitation message without saying so). Past it, the call is not approvable there.
pub const MAX_QUESTION_BYTES: usize = 64 * 1024;

/// The shortest run of spaces shown as `⟪N spaces⟫` instead of as spaces (deep code indentation
/// stays readable; padding does not).
pub const SPACE_RUN: usize = 16;

/// The line that introduces the arguments in every question.
pub const ARGUMENTS_HEADING: &str = "arguments, each in full (strings quoted, \\u{hex} a hidden character, ⟪N spaces⟫ a run of spaces):";

/// The arguments of a call, one leaf per line (indented by two spaces), from their canonical
/// JSON.
pub fn arguments(canonical_json: &str) -> String {
    let mut out = String::new();
    match serde_json::from_str::<Value>(canonical_json) {
        Ok(Value::Object(map)) if map.is_empty() => out.push_str("  (none)\n"),
        Ok(Value::Object(map)) => {
            for (k, v) in &map {
                leaf(&mut out, &key_path("", k), v);
            }
        }
        Ok(other) => leaf(&mut out, "arguments", &other),
        Err(_) => leaf(
            &mut out,
            "arguments",
            &Value::String(canonical_json.to_owned()),
        ),
    }
    out
}

/// Free text as it is safe to show a person (outside quotes): every character that would not
/// show as itself, carriage returns and line feeds included, written as `\u{…}`, and a run of
/// [`SPACE_RUN`] or more spaces as `⟪N spaces⟫`. A tool name, a reason, a file name or a
/// witness call goes through this before it reaches a prompt.
pub fn shown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut spaces = 0usize;
    for c in text.chars() {
        if c == ' ' {
            spaces += 1;
            continue;
        }
        flush_spaces(&mut out, &mut spaces);
        if must_escape(c) {
            escape(&mut out, c);
        } else {
            out.push(c);
        }
    }
    flush_spaces(&mut out, &mut spaces);
    out
}

/// Why a question cannot be asked: it is longer than [`MAX_QUESTION_BYTES`]. `None` when it fits.
pub fn too_large(question: &str) -> Option<String> {
    (question.len() > MAX_QUESTION_BYTES).then(|| {
        format!(
            "the approval question would be {} bytes with every argument in full, more than the {} bytes (64 KiB) an approver is asked to read",
            question.len(),
            MAX_QUESTION_BYTES
        )
    })
}

fn key_path(prefix: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    match (plain, prefix.is_empty()) {
        (true, true) => key.to_owned(),
        (true, false) => format!("{prefix}.{key}"),
        (false, _) => format!("{prefix}[{}]", quoted(key)),
    }
}

fn leaf(out: &mut String, path: &str, v: &Value) {
    match v {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                leaf(out, &key_path(path, k), v);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, v) in items.iter().enumerate() {
                leaf(out, &format!("{path}[{i}]"), v);
            }
        }
        Value::String(s) => string(out, path, s),
        other => {
            let _ = writeln!(out, "  {path} = {other}");
        }
    }
}

fn string(out: &mut String, path: &str, s: &str) {
    let chars = s.chars().count();
    let characters = if chars == 1 {
        "character"
    } else {
        "characters"
    };
    let lines: Vec<&str> = s.split('\n').collect();
    if lines.len() == 1 {
        let _ = writeln!(out, "  {path} = {} ({chars} {characters})", quoted(s));
        return;
    }
    let _ = writeln!(
        out,
        "  {path} = string of {chars} {characters} in {} lines:",
        lines.len()
    );
    let width = lines.len().to_string().len();
    for (i, line) in lines.iter().enumerate() {
        let _ = writeln!(out, "    {:>width$} │ {}", i + 1, quoted(line));
    }
}

/// A string between double quotes, escaped as the module says.
fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    let mut spaces = 0usize;
    for c in s.chars() {
        if c == ' ' {
            spaces += 1;
            continue;
        }
        flush_spaces(&mut out, &mut spaces);
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if must_escape(c) => escape(&mut out, c),
            c => out.push(c),
        }
    }
    flush_spaces(&mut out, &mut spaces);
    out.push('"');
    out
}

/// Writes a run of spaces: as themselves when short, as `⟪N spaces⟫` from [`SPACE_RUN`] on.
fn flush_spaces(out: &mut String, spaces: &mut usize) {
    if *spaces >= SPACE_RUN {
        let _ = write!(out, "⟪{spaces} spaces⟫");
    } else {
        out.extend(std::iter::repeat_n(' ', *spaces));
    }
    *spaces = 0;
}

/// The one way a hidden character is written: `\u{…}`, its code point in lowercase hex.
fn escape(out: &mut String, c: char) {
    let _ = write!(out, "\\u{{{:x}}}", c as u32);
}

/// Characters that would not show as themselves: controls, invisible and bidirectional
/// formatting characters, spaces other than U+0020, line and paragraph separators, and the
/// space-run markers.
fn must_escape(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{00A0}' | '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}'
            | '\u{1680}' | '\u{180E}' | '\u{2000}'..='\u{200F}' | '\u{2028}'..='\u{202F}'
            | '\u{205F}'..='\u{206F}' | '\u{3000}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}' | '\u{FFA0}' | '\u{FFF9}'..='\u{FFFB}' | '\u{E0000}'..='\u{E0FFF}'
            | '⟪' | '⟫')
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn every_leaf_is_shown_by_its_path() {
        let args = r#"{"edits":[{"new_text":"b","old_text":"a"}],"overwrite":true,"path":"src/a.py","tags":[],"weird key":1}"#;
        assert_eq!(
            arguments(args),
            concat!(
                "  edits[0].new_text = \"b\" (1 character)\n",
                "  edits[0].old_text = \"a\" (1 character)\n",
                "  overwrite = true\n",
                "  path = \"src/a.py\" (8 characters)\n",
                "  tags = []\n",
                "  [\"weird key\"] = 1\n",
            )
        );
        assert_eq!(arguments("{}"), "  (none)\n");
    }

    #[test]
    fn lines_are_numbered_and_nothing_hides_in_them() {
        let padded = format!("ls{}\ntouch x\r\u{1b}[2K\n", " ".repeat(3000));
        let args = serde_json::json!({ "command": padded }).to_string();
        assert_eq!(
            arguments(&args),
            concat!(
                "  command = string of 3016 characters in 3 lines:\n",
                "    1 │ \"ls⟪3000 spaces⟫\"\n",
                "    2 │ \"touch x\\r\\u{1b}[2K\"\n",
                "    3 │ \"\"\n",
            )
        );
    }

    #[test]
    fn invisible_characters_and_markers_are_escaped() {
        let args = serde_json::json!({ "p": "a\u{202E}b\u{200B}c\u{00A0}⟪1 spaces⟫\u{E0041}  d" })
            .to_string();
        assert_eq!(
            arguments(&args),
            "  p = \"a\\u{202e}b\\u{200b}c\\u{a0}\\u{27ea}1 spaces\\u{27eb}\\u{e0041}  d\" (20 characters)\n"
        );
    }

    #[test]
    fn free_text_is_escaped_the_same_way() {
        assert_eq!(
            shown("a\u{1b}[2Jb\u{202e}c\u{200b}\r\nd"),
            "a\\u{1b}[2Jb\\u{202e}c\\u{200b}\\u{d}\\u{a}d"
        );
        assert_eq!(
            shown(&format!("x{}y ⟪z⟫", " ".repeat(20))),
            "x⟪20 spaces⟫y \\u{27ea}z\\u{27eb}"
        );
        assert_eq!(shown("tool-specs/bash.yaml"), "tool-specs/bash.yaml");
    }

    #[test]
    fn the_bound_is_64_kib() {
        assert_eq!(too_large(&"x".repeat(MAX_QUESTION_BYTES)), None);
        let why = too_large(&"x".repeat(MAX_QUESTION_BYTES + 1)).unwrap();
        assert_eq!(
            why,
            "the approval question would be 65537 bytes with every argument in full, more than the 65536 bytes (64 KiB) an approver is asked to read"
        );
    }
}
