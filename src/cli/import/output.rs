//! What every `toolgate import` writes, and how: YAML in which no control, bidi or zero-width
//! character is written raw (each becomes a visible escape that loads back as the same
//! character), comments with such characters spelled out, tool names as safe, distinct file
//! names, and files that appear whole or not at all, only inside the output folder.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::limits::{ImportLimits, LimitName, over};

/// The longest file stem (and tool name) written.
pub const MAX_NAME_LEN: usize = 64;

/// Characters that change how text around them is shown, or are not shown at all: the bidi
/// embeddings, overrides, isolates and marks, and the zero-width ones.
fn is_hidden(c: char) -> bool {
    matches!(
        c,
        '\u{061C}'
            | '\u{180E}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2066}'..='\u{2069}'
            | '\u{FEFF}'
    )
}

/// The two C1 controls that bracket a hidden character's code while serde_saphyr writes the
/// text: it writes them (as every control) as `\x91` and `\x92` inside a double-quoted scalar,
/// where [`unmark`] turns the bracket into the YAML escape `\uXXXX`.
const OPEN: char = '\u{91}';
const CLOSE: char = '\u{92}';

fn mark_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if is_hidden(c) || c == OPEN || c == CLOSE {
            out.push(OPEN);
            out.push_str(&format!("{:04X}", c as u32));
            out.push(CLOSE);
        } else {
            out.push(c);
        }
    }
    out
}

fn mark(v: &mut Value) {
    match v {
        Value::String(s) if s.chars().any(|c| is_hidden(c) || c == OPEN || c == CLOSE) => {
            *s = mark_str(s);
        }
        Value::Array(a) => a.iter_mut().for_each(mark),
        Value::Object(m) => {
            let keys: Vec<String> = m.keys().cloned().collect();
            for k in keys {
                if let Some(mut x) = m.shift_remove(&k) {
                    mark(&mut x);
                    m.insert(mark_str(&k), x);
                }
            }
        }
        _ => {}
    }
}

/// Replaces each `\x91XXXX\x92` escape sequence (only ever written for a marked character,
/// since every raw `\u{91}` was marked) by `\uXXXX`; a `\\` is skipped whole, so an escaped
/// backslash is never read as the start of one.
fn unmark(yaml: &str) -> String {
    let b = yaml.as_bytes();
    let mut out = String::with_capacity(yaml.len());
    let mut i = 0;
    let mut last = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        if b.get(i + 1) == Some(&b'\\') {
            i += 2;
            continue;
        }
        let hex = |r: std::ops::Range<usize>| {
            yaml.get(r)
                .filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit()))
        };
        if yaml.get(i..i + 4) == Some("\\x91")
            && let Some(code) = hex(i + 4..i + 8)
            && yaml.get(i + 8..i + 12) == Some("\\x92")
        {
            out.push_str(&yaml[last..i]);
            out.push_str("\\u");
            out.push_str(code);
            i += 12;
            last = i;
            continue;
        }
        i += 2;
    }
    out.push_str(&yaml[last..]);
    out
}

/// A spec value as YAML text in which every control, bidi and zero-width character (in keys
/// and values) is a YAML escape: visible in review, and the same character once loaded.
pub fn yaml_text(spec: &Value) -> Result<String, String> {
    let mut v = spec.clone();
    mark(&mut v);
    let text = serde_saphyr::to_string(&v).map_err(|e| format!("cannot write YAML: {e}"))?;
    Ok(unmark(&text))
}

/// Text for a `#` comment: control, bidi and zero-width characters (and line breaks) spelled
/// `\u{…}`, since a comment has no escapes and YAML refuses control characters in one.
pub fn comment_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control()
            || is_hidden(c)
            || matches!(c, '\u{2028}' | '\u{2029}' | '\u{FFFE}' | '\u{FFFF}')
        {
            out.push_str(&format!("\\u{{{:04x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Names Windows reserves for devices, in any case and with any extension.
pub fn reserved(stem: &str) -> bool {
    let base = stem.split('.').next().unwrap_or("").to_ascii_uppercase();
    matches!(base.as_str(), "CON" | "PRN" | "AUX" | "NUL")
        || ((base.starts_with("COM") || base.starts_with("LPT"))
            && base.len() == 4
            && base.as_bytes()[3].is_ascii_digit())
}

/// A name toolgate accepts and any file system stores: `A-Za-z0-9_-` only (every other
/// character, `/`, `.`, NUL and controls included, becomes `_`), at most 64 characters, never
/// empty and never a reserved device name.
pub fn file_name(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(MAX_NAME_LEN)
        .collect();
    if s.is_empty() {
        s.push_str("tool");
    }
    if reserved(&s) {
        s.truncate(MAX_NAME_LEN - 1);
        s.push('_');
    }
    s
}

/// Distinct safe names for a list of names, in order: the first to claim a name keeps it,
/// a later one takes `_2`, `_3`, … (never a name another entry has as its own).
pub fn distinct_names<'a>(names: impl IntoIterator<Item = &'a str> + Clone) -> Vec<String> {
    let own: BTreeSet<String> = names.clone().into_iter().map(file_name).collect();
    let mut taken = BTreeSet::new();
    let mut out = Vec::new();
    for n in names {
        let base = file_name(n);
        let mut name = base.clone();
        let mut k = 2u64;
        while taken.contains(&name) || (name != base && own.contains(&name)) {
            let suffix = format!("_{k}");
            let keep = MAX_NAME_LEN.saturating_sub(suffix.len()).min(base.len());
            name = format!("{}{suffix}", &base[..keep]);
            k += 1;
        }
        taken.insert(name.clone());
        out.push(name);
    }
    out
}

/// Refuses output past the limit (the sum of every file's bytes).
pub fn check_output(files: &[(String, String)], limits: &ImportLimits) -> Result<(), String> {
    let total: u64 = files.iter().map(|(_, t)| t.len() as u64).sum();
    if total > limits.output_bytes {
        return Err(over(
            &format!("the {} spec file(s) would be {total} bytes", files.len()),
            LimitName::Output,
            limits.output_bytes,
        ));
    }
    let loadable = crate::spec::yaml::MAX_FILE_BYTES;
    if let Some((name, text)) = files.iter().find(|(_, t)| t.len() > loadable) {
        return Err(format!(
            "the spec of `{name}` would be {} bytes; the loader reads spec files of at most {loadable} bytes",
            text.len()
        ));
    }
    Ok(())
}

/// Writes `<dir>/<stem>.yaml` for each file, keeping files that exist unless `force`; returns
/// (written, kept). All files are written under temporary names first and renamed into place
/// only when every one is whole, so an error leaves no file behind; a rename replaces a link
/// rather than writing through it.
pub fn write_all(
    dir: &Path,
    files: &[(String, String)],
    force: bool,
) -> Result<(usize, usize), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut staged: Vec<(PathBuf, PathBuf)> = Vec::new();
    let mut kept = 0;
    let clean = |staged: &[(PathBuf, PathBuf)]| {
        for (tmp, _) in staged {
            let _ = std::fs::remove_file(tmp);
        }
    };
    for (i, (stem, text)) in files.iter().enumerate() {
        let path = dir.join(format!("{stem}.yaml"));
        if std::fs::symlink_metadata(&path).is_ok() && !force {
            eprintln!("kept {} (exists; --force replaces it)", path.display());
            kept += 1;
            continue;
        }
        let tmp = dir.join(format!(".{stem}.yaml.import-{}-{i}", std::process::id()));
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .and_then(|mut f| {
                use std::io::Write;
                f.write_all(text.as_bytes())?;
                f.sync_all()
            });
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            clean(&staged);
            return Err(format!("cannot write {}: {e}", path.display()));
        }
        staged.push((tmp, path));
    }
    for (n, (tmp, path)) in staged.iter().enumerate() {
        if let Err(e) = std::fs::rename(tmp, path) {
            clean(&staged[n..]);
            return Err(format!("cannot write {}: {e}", path.display()));
        }
        eprintln!("wrote {}", path.display());
    }
    Ok((staged.len(), kept))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn hidden_characters_are_escaped_and_load_back_the_same() {
        let v = json!({
            "name": "a\u{1b}[31mred\u{202E}txt",
            "description": "zero\u{200B}width, a C1 \u{91}0041\u{92} and a literal \\x910041\\x92",
            "k\u{2066}": "line\r\nbreak",
        });
        let text = yaml_text(&v).unwrap();
        assert_eq!(
            text,
            "name: \"a\\e[31mred\\u202Etxt\"\n\
             description: \"zero\\u200Bwidth, a C1 \\u00910041\\u0092 and a literal \\\\x910041\\\\x92\"\n\
             \"k\\u2066\": \"line\\r\\nbreak\"\n"
        );
        assert!(
            text.chars().all(|c| c == '\n' || (' '..='~').contains(&c)),
            "{text}"
        );
        let back: Value = serde_saphyr::from_str(&text).unwrap();
        assert_eq!(back, v);
    }

    #[test]
    fn comments_spell_out_what_they_cannot_hold() {
        assert_eq!(
            comment_text("a\u{1b}b\u{202E}c\nd"),
            "a\\u{001b}b\\u{202e}c\\u{000a}d"
        );
    }

    #[test]
    fn names_are_safe_and_distinct() {
        assert_eq!(file_name("../etc/passwd"), "___etc_passwd");
        assert_eq!(file_name("a\0b"), "a_b");
        assert_eq!(file_name(""), "tool");
        assert_eq!(file_name("con"), "con_");
        assert_eq!(file_name("COM1"), "COM1_");
        assert_eq!(file_name("comma"), "comma");
        let long = "x".repeat(80);
        assert_eq!(
            distinct_names(
                ["a/b", "a_b", "a.b", "a_b_2", long.as_str(), long.as_str()].into_iter()
            ),
            [
                "a_b".to_owned(),
                "a_b_3".into(),
                "a_b_4".into(),
                "a_b_2".into(),
                "x".repeat(64),
                format!("{}_2", "x".repeat(62))
            ]
        );
    }

    #[test]
    fn writes_are_whole_or_absent_and_replace_links() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside.txt");
        std::fs::write(&outside, "keep").unwrap();
        let dir = tmp.path().join("out");
        std::fs::create_dir(&dir).unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("t.yaml")).unwrap();
        let files = vec![("t".to_owned(), "name: t\n".to_owned())];
        assert_eq!(write_all(&dir, &files, false).unwrap(), (0, 1));
        assert_eq!(write_all(&dir, &files, true).unwrap(), (1, 0));
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "keep");
        assert_eq!(
            std::fs::read_to_string(dir.join("t.yaml")).unwrap(),
            "name: t\n"
        );
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["t.yaml"]);
    }
}
