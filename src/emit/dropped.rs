//! What a target cannot carry: the keywords of a contract's `parameters` that a provider list
//! moves into a description instead of enforcing, with their JSON pointers in the authored
//! schema. The emitters and the linter's `constraint-dropped-by-target` rule share this, so the
//! rule reports exactly what the emitters do.

use serde_json::{Map, Value};

use crate::emit::openai;
use crate::emit::rewrite::SILENT;
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

/// Root combinators OpenAI, Anthropic and Gemini reject at the top level.
const ROOT_COMBINATORS: &[&str] = &[
    "anyOf", "oneOf", "allOf", "not", "enum", "const", "if", "then", "else",
];

/// The keywords of `parameters` that `target`'s tool list moves into a description.
pub fn dropped(target: Target, parameters: &Value) -> Vec<Dropped> {
    let mut out = Vec::new();
    match target {
        Target::Mcp => {}
        Target::Openai | Target::Anthropic | Target::Gemini => root(parameters, &mut out),
        Target::OpenaiStrict => {
            if openai::strict_parameters(parameters).is_err() {
                // Emitted with `strict: false`: only the root is rewritten.
                root(parameters, &mut out);
            } else {
                root(parameters, &mut out);
                walk(parameters, "", true, &mut out);
            }
        }
    }
    out
}

fn root(parameters: &Value, out: &mut Vec<Dropped>) {
    if let Some(obj) = parameters.as_object() {
        for (k, v) in obj {
            if ROOT_COMBINATORS.contains(&k.as_str()) {
                out.push(Dropped {
                    pointer: String::new(),
                    keyword: k.clone(),
                    value: v.clone(),
                });
            }
        }
    }
}

fn strict_keeps(k: &str, v: &Value) -> bool {
    match k {
        "format" => v
            .as_str()
            .is_some_and(|f| openai::STRICT_FORMATS.contains(&f)),
        // Converted (`oneOf` → `anyOf`) or merged (`allOf`), not dropped.
        "oneOf" | "allOf" => true,
        _ => openai::STRICT_KEYWORDS.contains(&k) || SILENT.contains(&k) || k.starts_with("x-"),
    }
}

fn escape(k: &str) -> String {
    k.replace('~', "~0").replace('/', "~1")
}

fn walk(node: &Value, pointer: &str, is_root: bool, out: &mut Vec<Dropped>) {
    let Some(obj) = node.as_object() else {
        return;
    };
    for (k, v) in obj {
        if is_root && ROOT_COMBINATORS.contains(&k.as_str()) {
            continue;
        }
        if !strict_keeps(k, v) {
            out.push(Dropped {
                pointer: pointer.to_owned(),
                keyword: k.clone(),
                value: v.clone(),
            });
        }
    }
    children(obj, pointer, out);
}

fn children(obj: &Map<String, Value>, pointer: &str, out: &mut Vec<Dropped>) {
    for key in ["properties", "$defs", "definitions"] {
        for (name, sub) in obj
            .get(key)
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            walk(
                sub,
                &format!("{pointer}/{key}/{}", escape(name)),
                false,
                out,
            );
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(sub) = obj.get(key) {
            walk(sub, &format!("{pointer}/{key}"), false, out);
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for (i, sub) in obj
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            walk(sub, &format!("{pointer}/{key}/{i}"), false, out);
        }
    }
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
                ("/$defs/P".to_owned(), "default".to_owned()),
            ]
        );
        assert_eq!(dropped(Target::Anthropic, &p).len(), 1);
        assert!(dropped(Target::Mcp, &p).is_empty());
    }
}
