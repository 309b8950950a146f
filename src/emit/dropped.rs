//! What a target cannot carry: the keywords of a contract's `parameters` that a provider list
//! moves into a description instead of enforcing, with their JSON pointers in the authored
//! schema. The emitters and the linter's `constraint-dropped-by-target` rule share this, so the
//! rule reports exactly what the emitters do.

use serde_json::Value;

use crate::emit::openai::{self, StrictChangeKind};
use crate::emit::rewrite;
use crate::ir::Target;

/// A keyword a target moves into the description.
#[derive(Clone, Debug, PartialEq)]
pub struct Dropped {
    /// JSON pointer of the schema node holding it, in the authored `parameters`.
    pub pointer: String,
    /// The keyword.
    pub keyword: String,
    /// Its value.
    pub value: Value,
}

/// The keywords of `parameters` that `target`'s tool list moves into a description (Gemini in
/// its default `parametersJsonSchema` form).
pub fn dropped(target: Target, parameters: &Value) -> Vec<Dropped> {
    match target {
        Target::Mcp => Vec::new(),
        Target::Openai | Target::Anthropic | Target::Gemini => root(parameters),
        Target::OpenaiStrict => {
            let conversion = openai::strict_conversion(parameters);
            if !conversion.is_strict() {
                // Emitted with `strict: false`: only the root is rewritten.
                return root(parameters);
            }
            conversion
                .changes
                .into_iter()
                .filter_map(|c| match c.kind {
                    StrictChangeKind::Moved { keyword, value } => Some(Dropped {
                        pointer: c.pointer,
                        keyword,
                        value,
                    }),
                    _ => None,
                })
                .collect()
        }
    }
}

/// What [`rewrite::fix_root`] moves out of the root, as every provider form applies it.
fn root(parameters: &Value) -> Vec<Dropped> {
    let mut s = parameters.clone();
    rewrite::strip_private(&mut s);
    rewrite::inline_refs(&mut s);
    s.as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| rewrite::ROOT_COMBINATORS.contains(&k.as_str()))
        .map(|(k, v)| Dropped {
            pointer: String::new(),
            keyword: k.clone(),
            value: v.clone(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reports_what_strict_mode_moves_into_descriptions() {
        let p = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "maxLength": 10, "format": "uri", "x-sensitive": true},
                "n": {"type": "integer", "minimum": 1}
            },
            "$defs": {"P": {"type": "string", "default": "a"}},
            "additionalProperties": false,
            "anyOf": [{"required": ["path"]}, {"required": ["n"]}]
        });
        // `$defs/P` is referenced by nothing, so the emitter drops the whole definition
        // (`inline_refs`) rather than moving its `default` anywhere: nothing to report there.
        let got: Vec<(String, String)> = dropped(Target::OpenaiStrict, &p)
            .into_iter()
            .map(|d| (d.pointer, d.keyword))
            .collect();
        assert_eq!(
            got,
            vec![
                (String::new(), "anyOf".to_owned()),
                ("/properties/path".to_owned(), "maxLength".to_owned()),
                ("/properties/path".to_owned(), "format".to_owned()),
            ]
        );
        assert_eq!(dropped(Target::Anthropic, &p).len(), 1);
        assert!(dropped(Target::Mcp, &p).is_empty());
    }
}
