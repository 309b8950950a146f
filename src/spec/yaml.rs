//! The YAML layer: strict parsing into spanned values, and spanned generic nodes for embedded
//! JSON Schemas.
//!
//! Everything that touches serde-saphyr lives here, so its fast-moving API stays behind one
//! module. The loader refuses what a contract never needs and what an attacker would use:
//! anchors and aliases, duplicate keys, deep nesting, YAML 1.1 booleans (`no` stays a string),
//! and files over a size limit.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::MessageFormatter;

use crate::spec::source::TextRange;
use crate::spec::suggest;

/// Files above this size are refused before parsing (a contract is a few KiB).
pub const MAX_FILE_BYTES: usize = 4 * 1024 * 1024;
/// Deepest nesting accepted; JSON Schemas for tool arguments are shallow.
pub const MAX_DEPTH: usize = 64;
/// Most YAML nodes accepted in one file.
pub const MAX_NODES: usize = 250_000;

/// A value with the byte range of the YAML node it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Spanned<T> {
    /// The value.
    pub value: T,
    /// Where it was written.
    pub range: TextRange,
}

impl<T> Spanned<T> {
    /// Wraps a value with a range.
    pub fn new(value: T, range: TextRange) -> Self {
        Spanned { value, range }
    }

    /// A reference to the value.
    pub fn get(&self) -> &T {
        &self.value
    }
}

impl<T> std::ops::Deref for Spanned<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

fn range_of(loc: &serde_saphyr::Location) -> TextRange {
    let span = loc.span();
    match (span.byte_offset(), span.byte_len()) {
        (Some(off), Some(len)) => TextRange::new(off as usize, len as usize),
        _ => TextRange::new(span.offset() as usize, span.len() as usize),
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Spanned<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = serde_saphyr::Spanned::<T>::deserialize(d)?;
        Ok(Spanned {
            range: range_of(&s.referenced),
            value: s.value,
        })
    }
}

impl<T: serde::Serialize> serde::Serialize for Spanned<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(s)
    }
}

/// A mapping key with its range.
#[derive(Clone, Debug, PartialEq)]
pub struct Key {
    /// The key text.
    pub name: String,
    /// Where the key was written.
    pub range: TextRange,
}

/// A generic YAML value with ranges on every key and value: the form embedded JSON Schemas
/// (`parameters`, `result`) and example arguments take, so lint rules can point inside them.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// The value.
    pub value: NodeValue,
    /// Where the value was written (a mapping's range starts at its first key).
    pub range: TextRange,
}

/// The shapes a [`Node`] can have.
#[derive(Clone, Debug, PartialEq)]
pub enum NodeValue {
    /// `null` or `~` or an empty value.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number (integers stay integers).
    Number(serde_json::Number),
    /// A string scalar.
    String(String),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in the author's order.
    Map(Vec<(Key, Node)>),
}

impl Node {
    /// The value under `key` when this is a mapping.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|(_, v)| v)
    }

    /// The key and value under `key` when this is a mapping.
    pub fn entry(&self, key: &str) -> Option<(&Key, &Node)> {
        match &self.value {
            NodeValue::Map(entries) => entries
                .iter()
                .find(|(k, _)| k.name == key)
                .map(|(k, v)| (k, v)),
            _ => None,
        }
    }

    /// The entries when this is a mapping.
    pub fn entries(&self) -> &[(Key, Node)] {
        match &self.value {
            NodeValue::Map(entries) => entries,
            _ => &[],
        }
    }

    /// The items when this is a sequence.
    pub fn items(&self) -> &[Node] {
        match &self.value {
            NodeValue::Seq(items) => items,
            _ => &[],
        }
    }

    /// The string when this is a string scalar.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            NodeValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean when this is a boolean scalar.
    pub fn as_bool(&self) -> Option<bool> {
        match &self.value {
            NodeValue::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number as `f64` when this is a number.
    pub fn as_f64(&self) -> Option<f64> {
        match &self.value {
            NodeValue::Number(n) => n.as_f64(),
            _ => None,
        }
    }

    /// The number as `u64` when this is a non-negative integer.
    pub fn as_u64(&self) -> Option<u64> {
        match &self.value {
            NodeValue::Number(n) => n.as_u64(),
            _ => None,
        }
    }

    /// Whether this is a mapping.
    pub fn is_map(&self) -> bool {
        matches!(self.value, NodeValue::Map(_))
    }

    /// A short name of the node's kind for messages.
    pub fn kind(&self) -> &'static str {
        match &self.value {
            NodeValue::Null => "null",
            NodeValue::Bool(_) => "a boolean",
            NodeValue::Number(_) => "a number",
            NodeValue::String(_) => "a string",
            NodeValue::Seq(_) => "a list",
            NodeValue::Map(_) => "a mapping",
        }
    }

    /// The range from this node's start to the end of its last descendant.
    pub fn extent(&self) -> TextRange {
        let mut r = self.range;
        match &self.value {
            NodeValue::Seq(items) => {
                for i in items {
                    r = r.cover(i.extent());
                }
            }
            NodeValue::Map(entries) => {
                for (k, v) in entries {
                    r = r.cover(k.range).cover(v.extent());
                }
            }
            _ => {}
        }
        r
    }

    /// The node at a JSON pointer (`/properties/path`), for locating schema errors.
    pub fn at_pointer(&self, pointer: &str) -> Option<&Node> {
        let mut cur = self;
        for raw in pointer.split('/').skip(1) {
            let seg = raw.replace("~1", "/").replace("~0", "~");
            cur = match &cur.value {
                NodeValue::Map(_) => cur.get(&seg)?,
                NodeValue::Seq(items) => items.get(seg.parse::<usize>().ok()?)?,
                _ => return None,
            };
        }
        Some(cur)
    }

    /// The node as JSON, keys in the author's order.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value;
        match &self.value {
            NodeValue::Null => Value::Null,
            NodeValue::Bool(b) => Value::Bool(*b),
            NodeValue::Number(n) => Value::Number(n.clone()),
            NodeValue::String(s) => Value::String(s.clone()),
            NodeValue::Seq(items) => Value::Array(items.iter().map(Node::to_json).collect()),
            NodeValue::Map(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.name.clone(), v.to_json()))
                    .collect(),
            ),
        }
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = serde_saphyr::Spanned::<NodeValue>::deserialize(d)?;
        Ok(Node {
            range: range_of(&s.referenced),
            value: s.value,
        })
    }
}

impl<'de> Deserialize<'de> for NodeValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = NodeValue;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E>(self) -> Result<NodeValue, E> {
        Ok(NodeValue::Null)
    }
    fn visit_none<E>(self) -> Result<NodeValue, E> {
        Ok(NodeValue::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<NodeValue, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
    fn visit_bool<E>(self, v: bool) -> Result<NodeValue, E> {
        Ok(NodeValue::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<NodeValue, E> {
        Ok(NodeValue::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<NodeValue, E> {
        Ok(NodeValue::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<NodeValue, E> {
        serde_json::Number::from_f64(v)
            .map(NodeValue::Number)
            .ok_or_else(|| E::custom(format!("`{v}` is not a finite number")))
    }
    fn visit_str<E>(self, v: &str) -> Result<NodeValue, E> {
        Ok(NodeValue::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<NodeValue, E> {
        Ok(NodeValue::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<NodeValue, A::Error> {
        let mut items = Vec::with_capacity(a.size_hint().unwrap_or(0).min(64));
        while let Some(item) = a.next_element::<Node>()? {
            items.push(item);
        }
        Ok(NodeValue::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<NodeValue, A::Error> {
        let mut entries: Vec<(Key, Node)> = Vec::new();
        while let Some(key) = a.next_key::<Spanned<KeyText>>()? {
            let value = a.next_value::<Node>()?;
            entries.push((
                Key {
                    name: key.value.0,
                    range: key.range,
                },
                value,
            ));
        }
        Ok(NodeValue::Map(entries))
    }
}

/// A mapping key: a string, or a scalar turned into its text (`200:` in an `errors` map).
struct KeyText(String);

impl<'de> Deserialize<'de> for KeyText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = KeyText;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a scalar mapping key")
            }
            fn visit_str<E>(self, v: &str) -> Result<KeyText, E> {
                Ok(KeyText(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<KeyText, E> {
                Ok(KeyText(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_bool<E>(self, v: bool) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_unit<E>(self) -> Result<KeyText, E> {
                Ok(KeyText("null".to_owned()))
            }
        }
        d.deserialize_any(V)
    }
}

/// A YAML document that could not be read, located in its file.
#[derive(Clone, Debug, PartialEq)]
pub struct YamlError {
    /// What is wrong, in one sentence.
    pub message: String,
    /// Where (a point when the parser knows no more).
    pub range: TextRange,
    /// How to fix it, when known.
    pub help: Option<String>,
}

/// The parser settings every toolgate YAML file is read with.
fn options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_depth = MAX_DEPTH;
    budget.max_aliases = 0;
    budget.max_anchors = 0;
    budget.max_nodes = MAX_NODES;
    budget.max_documents = 1;
    let mut o = serde_saphyr::Options::default();
    o.budget = Some(budget);
    o.strict_booleans = true;
    o.leading_zero_numbers_as_strings = true;
    o.duplicate_keys = serde_saphyr::DuplicateKeyPolicy::Error;
    o
}

/// Parses one YAML document into `T`, refusing oversized input and the constructs the module
/// doc lists. `text` must already be valid UTF-8.
pub fn parse<T: DeserializeOwned>(
    text: &str,
    locate: impl Fn(usize, usize) -> Option<usize>,
) -> Result<T, YamlError> {
    if text.len() > MAX_FILE_BYTES {
        return Err(YamlError {
            message: format!(
                "file is {} bytes; toolgate reads spec files of at most {} bytes",
                text.len(),
                MAX_FILE_BYTES
            ),
            range: TextRange::new(0, 0),
            help: Some(
                "split the file: one tool per file, or several files matched by a glob".into(),
            ),
        });
    }
    serde_saphyr::from_str_with_options::<T>(text, options()).map_err(|e| convert_error(&e, locate))
}

fn convert_error(
    e: &serde_saphyr::Error,
    locate: impl Fn(usize, usize) -> Option<usize>,
) -> YamlError {
    let inner = e.without_snippet();
    let raw: Cow<'_, str> = serde_saphyr::UserMessageFormatter.format_message(inner);
    let range = e
        .location()
        .map(|loc| {
            let span = loc.span();
            match (span.byte_offset(), span.byte_len()) {
                (Some(off), Some(len)) if off < u32::MAX as u64 => {
                    TextRange::new(off as usize, len as usize)
                }
                _ => {
                    let off = locate(loc.line() as usize, loc.column() as usize).unwrap_or(0);
                    TextRange::new(off, 0)
                }
            }
        })
        .unwrap_or_default();
    let (message, help) = explain(&raw);
    YamlError {
        message,
        range,
        help,
    }
}

/// Turns the parser's wording into toolgate's: one sentence, plus how to fix it.
fn explain(raw: &str) -> (String, Option<String>) {
    let msg = raw.trim().to_owned();
    if let Some((unknown, expected)) = suggest::parse_unknown(&msg) {
        let help = crate::suggest::did_you_mean(&unknown, expected.iter().map(String::as_str))
            .unwrap_or_else(|| {
                if expected.is_empty() {
                    "remove this key".to_owned()
                } else {
                    format!("expected one of: {}", expected.join(", "))
                }
            });
        let what = if msg.contains("variant") {
            "value"
        } else {
            "key"
        };
        return (format!("unknown {what} `{unknown}`"), Some(help));
    }
    if msg.contains("duplicate mapping key") {
        let key = msg
            .split('`')
            .nth(1)
            .map(str::to_owned)
            .or_else(|| {
                msg.split("duplicate mapping key:")
                    .nth(1)
                    .map(|s| s.split(',').next().unwrap_or("").trim().to_owned())
            })
            .unwrap_or_default();
        return (
            format!("duplicate key `{key}`"),
            Some("each key may appear once in a mapping; remove or merge the repeated one".into()),
        );
    }
    if msg.contains("Anchors")
        || msg.contains("Aliases")
        || msg.contains("anchor")
        || msg.contains("alias")
    {
        return (
            "YAML anchors and aliases are not allowed in toolgate files".into(),
            Some("write the value out in full; aliases make specs hard to review and enable alias bombs".into()),
        );
    }
    if msg.contains("recursion limit") || msg.contains("depth") {
        return (
            format!("nesting deeper than {MAX_DEPTH} levels"),
            Some("flatten the structure; tool argument schemas are shallow".into()),
        );
    }
    if msg.contains("budget breached") {
        return (
            format!("document too large: {msg}"),
            Some(format!("keep a spec file under {MAX_NODES} YAML nodes")),
        );
    }
    if let Some(field) = msg.strip_prefix("missing field ") {
        let field = field.trim_matches('`');
        return (
            format!("missing key `{field}`"),
            Some(format!("add `{field}:` to this mapping")),
        );
    }
    if msg.contains("single YAML document") || msg.contains("multiple documents") {
        return (
            "more than one YAML document (`---`) in a file".into(),
            Some("put each tool in its own file, or list several under `tools:`".into()),
        );
    }
    (msg, None)
}

impl<T: schemars::JsonSchema> schemars::JsonSchema for Spanned<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }
    fn schema_id() -> std::borrow::Cow<'static, str> {
        T::schema_id()
    }
    fn inline_schema() -> bool {
        T::inline_schema()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }
}

impl schemars::JsonSchema for Node {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "JsonSchemaDocument".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A JSON Schema (2020-12), written in YAML.",
            "$ref": "https://json-schema.org/draft/2020-12/schema"
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::source::SourceFile;

    fn parse_node(text: &str) -> Result<Node, YamlError> {
        let f = SourceFile::new("t.yaml", text);
        parse::<Node>(text, |l, c| f.offset_of(l, c))
    }

    #[test]
    fn nodes_keep_key_and_value_ranges() {
        let text = "type: object\nproperties:\n  path: {type: string}\n";
        let n = parse_node(text).unwrap();
        let (k, v) = n.get("properties").unwrap().entry("path").unwrap();
        assert_eq!(&text[k.range.start as usize..k.range.end as usize], "path");
        assert_eq!(v.get("type").unwrap().as_str(), Some("string"));
    }

    #[test]
    fn yaml_11_booleans_and_octals_stay_strings() {
        let n = parse_node("a: no\nb: 017\nc: true\n").unwrap();
        assert_eq!(n.get("a").unwrap().as_str(), Some("no"));
        assert_eq!(n.get("b").unwrap().as_str(), Some("017"));
        assert_eq!(n.get("c").unwrap().as_bool(), Some(true));
    }

    #[test]
    fn duplicate_keys_are_located() {
        let e = parse_node("a: 1\nb: 2\na: 3\n").unwrap_err();
        assert_eq!(e.message, "duplicate key `a`");
        assert_eq!(e.range.start, 10);
    }

    #[test]
    fn aliases_are_refused() {
        let e = parse_node("a: &x 1\nb: *x\n").unwrap_err();
        assert!(e.message.contains("anchors and aliases"), "{e:?}");
    }

    #[test]
    fn deep_nesting_is_refused() {
        let text = format!("a: {}{}", "[".repeat(100_000), "]".repeat(100_000));
        let e = parse_node(&text).unwrap_err();
        assert!(e.message.contains("nesting"), "{e:?}");
    }
}
