//! `TGV`: provider compatibility. Each rule runs only when its target is in use (toolgate.yaml's
//! `targets`, by default openai-strict, anthropic, gemini and mcp); the name and keyword rules
//! follow `providers.md` §0–§4 and its keyword matrix (§7).

pub mod anthropic_incompatible;
pub mod constraint_dropped_by_target;
pub mod gemini_incompatible;
pub mod mcp_incompatible;
pub mod openai_strict_incompatible;
pub mod too_many_tools;

use crate::spec::source::TextRange;
use crate::spec::yaml::{Key, Node, NodeValue};

/// The composition keyword (`oneOf`, `anyOf`, `allOf`) at the root of a schema, if any.
pub(crate) fn root_composition(root: &Node) -> Option<&Key> {
    root.entries()
        .iter()
        .find(|(k, _)| matches!(k.name.as_str(), "oneOf" | "anyOf" | "allOf"))
        .map(|(k, _)| k)
}

/// What to underline for something an emitter reports at a JSON pointer of the schema: the
/// `keyword` of that node when it has it, else the key that names the node, else the node.
/// A pointer the authored schema does not have (it points into an inlined `$ref`) stops at the
/// deepest node the authored schema has on the way, so the finding names the reference.
pub(crate) fn locate(root: &Node, pointer: &str, keyword: Option<&str>) -> TextRange {
    let mut cur = root;
    let mut key: Option<TextRange> = None;
    for raw in pointer.split('/').skip(1) {
        let seg = raw.replace("~1", "/").replace("~0", "~");
        let next = match &cur.value {
            NodeValue::Map(_) => cur.entry(&seg).map(|(k, v)| (Some(k.range), v)),
            NodeValue::Seq(items) => seg
                .parse::<usize>()
                .ok()
                .and_then(|i| items.get(i))
                .map(|v| (None, v)),
            _ => None,
        };
        let Some((k, v)) = next else { break };
        key = k;
        cur = v;
    }
    keyword
        .and_then(|kw| cur.entry(kw))
        .map(|(k, _)| k.range)
        .or(key)
        .unwrap_or(cur.range)
}
