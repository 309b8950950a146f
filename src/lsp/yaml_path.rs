//! Where the cursor is in a YAML document: the path of keys and list items that leads to it, and
//! whether a key or a value is being typed.
//!
//! Read from the text alone, by indentation and on the cursor's line by flow brackets, so it works
//! on a document that does not parse yet (the usual state while typing). Block mappings and
//! sequences, `- ` items (also at their parent key's column), and `{…}`/`[…]` flow collections
//! on one line are understood; inside multi-line scalars the answer is a best guess.

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// A mapping key.
    Key(String),
    /// An item of a sequence (which one does not matter to the schema).
    Item,
}

/// What is being typed at the cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A key of the mapping at the cursor's path.
    Key,
    /// The value of the node at the cursor's path.
    Value,
}

/// The cursor's place in the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    /// For [`Place::Key`], the mapping the key goes into; for [`Place::Value`], the node itself.
    pub path: Vec<Segment>,
    /// Key or value.
    pub place: Place,
    /// What is typed so far (from `start` to the cursor).
    pub prefix: String,
    /// Byte offset where the typed word starts.
    pub start: usize,
}

/// The cursor's place at byte `offset` of `text`.
pub fn cursor_at(text: &str, offset: usize) -> Cursor {
    let offset = floor_char_boundary(text, offset);
    let lines: Vec<&str> = text.split('\n').collect();
    let line_idx = text[..offset].matches('\n').count();
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line = lines.get(line_idx).copied().unwrap_or("");
    let col = offset - line_start;

    let head = Head::of(line);
    // A blank line, or the cursor in the indentation: a key at the cursor's column.
    if head.content >= line.trim_end().len().max(col) || col < head.content {
        let path = if col <= head.first_col() {
            container(&lines, line_idx, col, false)
        } else {
            line_path(&lines, line_idx)
        };
        return Cursor {
            path,
            place: Place::Key,
            prefix: String::new(),
            start: offset,
        };
    }
    let mut path = line_path(&lines, line_idx);
    let content = &line[head.content..col];
    let content_start = line_start + head.content;
    if let Some((key, value_at)) = split_key(content) {
        path.push(Segment::Key(key));
        let value = &content[value_at..];
        let value_start = content_start + value_at + (value.len() - value.trim_start().len());
        let value = value.trim_start();
        if value.starts_with(['{', '[']) {
            return flow(path, value, value_start);
        }
        return Cursor {
            path,
            place: Place::Value,
            prefix: value.to_owned(),
            start: value_start,
        };
    }
    if content.starts_with(['{', '[']) {
        return flow(path, content, content_start);
    }
    Cursor {
        path,
        place: Place::Key,
        prefix: content.to_owned(),
        start: content_start,
    }
}

/// The leading structure of a line: indentation, `- ` markers, where the content starts.
struct Head {
    dashes: Vec<usize>,
    content: usize,
}

impl Head {
    fn of(line: &str) -> Head {
        let bytes = line.as_bytes();
        let mut i = line.len() - line.trim_start_matches(' ').len();
        let mut dashes = Vec::new();
        while bytes.get(i) == Some(&b'-') && matches!(bytes.get(i + 1), None | Some(b' ')) {
            dashes.push(i);
            i += 1;
            i += line[i..].len() - line[i..].trim_start_matches(' ').len();
        }
        Head { dashes, content: i }
    }

    /// The column of the line's first node: its first dash, or its content.
    fn first_col(&self) -> usize {
        self.dashes.first().copied().unwrap_or(self.content)
    }
}

fn is_blank_or_comment(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// The path of the collection line `j`'s content belongs to (its items included).
fn line_path(lines: &[&str], j: usize) -> Vec<Segment> {
    let head = Head::of(lines.get(j).copied().unwrap_or(""));
    let mut path = match head.dashes.first() {
        Some(&d) => container(lines, j, d, true),
        None => container(lines, j, head.content, false),
    };
    path.extend(head.dashes.iter().map(|_| Segment::Item));
    path
}

/// The path of the collection that holds a node starting at column `col` of line `idx`
/// (`item`: the node is a `- ` item at that column).
fn container(lines: &[&str], idx: usize, col: usize, item: bool) -> Vec<Segment> {
    for j in (0..idx).rev() {
        let line = lines.get(j).copied().unwrap_or("");
        if is_blank_or_comment(line) {
            continue;
        }
        let head = Head::of(line);
        let key = split_key(&line[head.content..]).map(|(k, _)| k);
        if item {
            if head.dashes.first() == Some(&col) {
                continue; // an earlier item of the same sequence
            }
            if head.content <= col {
                let mut path = line_path(lines, j);
                path.extend(key.map(Segment::Key));
                return path;
            }
        } else if head.content == col {
            if !head.dashes.is_empty() {
                return line_path(lines, j); // a sibling key in the same list item
            }
            // a sibling key: same container, keep looking
        } else if head.content < col {
            let mut path = line_path(lines, j);
            path.extend(key.map(Segment::Key));
            return path;
        }
    }
    Vec::new()
}

/// Splits `key: value` at the key's colon: the key (unquoted) and where the value starts.
fn split_key(content: &str) -> Option<(String, usize)> {
    if content.starts_with(['{', '[', '#']) {
        return None;
    }
    let (key, after) = match content.chars().next() {
        Some(q @ ('"' | '\'')) => {
            let close = content[1..].find(q)? + 1;
            (content[1..close].to_owned(), close + 1)
        }
        _ => {
            let colon = colon_at(content)?;
            (content[..colon].trim_end().to_owned(), colon)
        }
    };
    let rest = content.get(after..)?;
    let rest_trimmed = rest.trim_start();
    let colon = after + (rest.len() - rest_trimmed.len());
    if !rest_trimmed.starts_with(':') {
        return None;
    }
    let value_at = colon + 1;
    match content[value_at..].chars().next() {
        None | Some(' ' | '\t') => Some((key, value_at)),
        _ => None,
    }
}

/// The first `:` followed by a space or the end, before any comment.
fn colon_at(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'#' if i > 0 && bytes[i - 1] == b' ' => return None,
            b':' if matches!(bytes.get(i + 1), None | Some(b' ' | b'\t')) => return Some(i),
            _ => {}
        }
    }
    None
}

/// The cursor inside a flow collection (`{a: 1, b: [x, y]}`) that starts at `start`.
fn flow(mut path: Vec<Segment>, text: &str, start: usize) -> Cursor {
    enum Frame {
        Map { key: Option<String>, in_value: bool },
        Seq,
    }
    let mut frames: Vec<Frame> = Vec::new();
    let mut depth_of_path: Vec<usize> = Vec::new();
    let mut token = 0usize;
    let mut quote: Option<char> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            continue;
        }
        let next = chars.peek().map(|&(_, n)| n);
        match c {
            '{' | '[' => {
                depth_of_path.push(path.len());
                match frames.last() {
                    Some(Frame::Map { key: Some(k), .. }) => path.push(Segment::Key(k.clone())),
                    Some(Frame::Seq) => path.push(Segment::Item),
                    _ => {}
                }
                frames.push(if c == '{' {
                    Frame::Map {
                        key: None,
                        in_value: false,
                    }
                } else {
                    Frame::Seq
                });
                token = i + 1;
            }
            '}' | ']' => {
                frames.pop();
                if let Some(len) = depth_of_path.pop() {
                    path.truncate(len);
                }
                token = i + 1;
            }
            ',' => {
                if let Some(Frame::Map { key, in_value }) = frames.last_mut() {
                    *key = None;
                    *in_value = false;
                }
                token = i + 1;
            }
            ':' if matches!(next, None | Some(' ' | ',' | '}')) => {
                if let Some(Frame::Map { key, in_value }) = frames.last_mut()
                    && !*in_value
                {
                    let k = text[token..i].trim().trim_matches(['"', '\'']);
                    *key = Some(k.to_owned());
                    *in_value = true;
                    token = i + 1;
                }
            }
            '"' | '\'' if text[token..i].trim().is_empty() => quote = Some(c),
            _ => {}
        }
    }
    let typed = &text[token..];
    let prefix = typed.trim_start();
    let word_start = start + token + (typed.len() - prefix.len());
    let (place, extra) = match frames.last() {
        Some(Frame::Map {
            key: Some(k),
            in_value: true,
        }) => (Place::Value, Some(Segment::Key(k.clone()))),
        Some(Frame::Seq) => (Place::Value, Some(Segment::Item)),
        _ => (Place::Key, None),
    };
    path.extend(extra);
    Cursor {
        path,
        place,
        prefix: prefix.to_owned(),
        start: word_start,
    }
}

fn floor_char_boundary(text: &str, mut offset: usize) -> usize {
    offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str) -> Segment {
        Segment::Key(k.into())
    }

    /// The cursor at the `|` of `text`.
    fn at(text: &str) -> Cursor {
        let offset = text.find('|').unwrap();
        cursor_at(&text.replace('|', ""), offset)
    }

    #[test]
    fn top_level_keys_and_values() {
        let c = at("name: x\neff|");
        assert_eq!(
            (c.path, c.place, c.prefix.as_str()),
            (vec![], Place::Key, "eff")
        );
        let c = at("name: x\neffect: re|\n");
        assert_eq!(
            (c.path, c.place, c.prefix.as_str(), c.start),
            (vec![key("effect")], Place::Value, "re", 16)
        );
    }

    #[test]
    fn nested_mappings_and_list_items() {
        let spec = "permissions:\n  rules:\n    - id: x\n      de|\n";
        let c = at(spec);
        assert_eq!(
            c.path,
            vec![key("permissions"), key("rules"), Segment::Item]
        );
        assert_eq!((c.place, c.prefix.as_str()), (Place::Key, "de"));
        // Items at their parent key's column, and a blank line at an item's key column.
        let c = at("rules:\n- id: x\n  deny: y\n- id: z\n  |\n");
        assert_eq!(c.path, vec![key("rules"), Segment::Item]);
        assert_eq!(c.place, Place::Key);
        // The first key of a new item.
        let c = at("permissions:\n  rules:\n    - id: x\n    - |");
        assert_eq!(
            c.path,
            vec![key("permissions"), key("rules"), Segment::Item]
        );
        // A sibling after a deeper block goes back out.
        let c = at("output:\n  formatter: text\n  redact:\n    - a\n  max_l|");
        assert_eq!(c.path, vec![key("output")]);
        // A value under a key in an item.
        let c = at("permissions:\n  examples:\n    - args: {}\n      expect: d|");
        assert_eq!(
            c.path,
            vec![
                key("permissions"),
                key("examples"),
                Segment::Item,
                key("expect")
            ]
        );
        assert_eq!(c.place, Place::Value);
    }

    #[test]
    fn flow_collections_on_one_line() {
        let c = at("output: {formatter: text, max_|}");
        assert_eq!(
            (c.path, c.place, c.prefix.as_str()),
            (vec![key("output")], Place::Key, "max_")
        );
        let c = at("output: {formatter: te|}");
        assert_eq!(c.path, vec![key("output"), key("formatter")]);
        assert_eq!((c.place, c.prefix.as_str()), (Place::Value, "te"));
        let c = at("permissions:\n  examples:\n    - {args: {path: \"a, b\"}, expect: al|}");
        assert_eq!(
            c.path,
            vec![
                key("permissions"),
                key("examples"),
                Segment::Item,
                key("expect")
            ]
        );
        let c = at("resources: {reads: [a, b|");
        assert_eq!(c.path, vec![key("resources"), key("reads"), Segment::Item]);
    }

    #[test]
    fn comments_blank_lines_and_quoted_keys() {
        let c = at("exec:\n  # how it runs\n\n  \"builtin\": re|");
        assert_eq!(c.path, vec![key("exec"), key("builtin")]);
        let c = at("timeout: 5s # the budget\nretry:\n  |");
        assert_eq!((c.path, c.place), (vec![key("retry")], Place::Key));
    }
}
