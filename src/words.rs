//! Words in identifiers and prose: the one splitter the linter's naming and effect rules and the
//! runtime's unknown-tool suggestions share, and the one verb table ([`verbs`]) the linter's
//! naming, multi-action, effect and listing rules read.

#[cfg(feature = "compiler")]
pub(crate) mod verbs;

/// The words of an identifier in any case style, lowercased: `getFileContents`, `get_file`,
/// `get-file`, `HTMLParser`, `DATA_EXPORT_v2`.
pub fn split_identifier(name: &str) -> Vec<String> {
    let chars: Vec<char> = name.chars().collect();
    let mut words = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            flush(&mut cur, &mut words);
            continue;
        }
        let prev = i.checked_sub(1).and_then(|p| chars.get(p)).copied();
        let next = chars.get(i + 1).copied();
        let boundary = match prev {
            Some(p) if p.is_alphanumeric() => {
                (p.is_lowercase() && c.is_uppercase())
                    || (p.is_uppercase()
                        && c.is_uppercase()
                        && next.is_some_and(char::is_lowercase))
                    || (p.is_ascii_digit() && c.is_alphabetic())
            }
            _ => false,
        };
        if boundary {
            flush(&mut cur, &mut words);
        }
        cur.extend(c.to_lowercase());
    }
    flush(&mut cur, &mut words);
    words
}

fn flush(cur: &mut String, words: &mut Vec<String>) {
    if !cur.is_empty() {
        words.push(std::mem::take(cur));
    }
}

/// The lowercased alphanumeric words of prose (`don't` gives `don`, `t`; good enough for overlap).
pub fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_split_in_every_case_style() {
        for (name, words) in [
            ("getFileContents", &["get", "file", "contents"][..]),
            ("get-annotated-message", &["get", "annotated", "message"]),
            ("HTMLParser", &["html", "parser"]),
            ("DATA_EXPORT_v2", &["data", "export", "v2"]),
            (
                "read_directory_recursive",
                &["read", "directory", "recursive"],
            ),
        ] {
            assert_eq!(split_identifier(name), words, "{name}");
        }
        assert_eq!(tokens("Don't read it."), ["don", "t", "read", "it"]);
    }
}
