//! Gemini `tools`: one `{functionDeclarations: [...]}` entry (providers.md §4).
//!
//! By default parameters go in `parametersJsonSchema` (JSON Schema: `$schema` and `x-…`
//! stripped, local `$ref`s inlined, root combinators moved into the description) and the result
//! in `responseJsonSchema`. [`GeminiForm::OpenApi`] writes `parameters`/`response` in the OpenAPI
//! 3.0 subset instead: uppercase single `type`, `nullable` for `[T, "null"]`, string `enum`s,
//! `const` as a one-value `enum`, and every keyword the subset lacks moved into the description.
//! A tool without parameters has neither key (the API's form for "no arguments").

use serde_json::{Map, Value, json};

use crate::emit::rewrite::{self, types_of};
use crate::emit::{EmitError, GeminiForm, name_matches};
use crate::ir::{Provider, ToolDefinition};

const TARGET: &str = "gemini";

/// Keywords of the OpenAPI-subset `Schema`.
pub const OPENAPI_KEYWORDS: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "items",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "propertyOrdering",
    "default",
    "example",
    "anyOf",
];

/// The `tools` list: one entry holding every declaration.
pub fn tools(tools: &[&ToolDefinition], form: GeminiForm) -> Result<Value, EmitError> {
    let mut decls = Vec::with_capacity(tools.len());
    for tool in tools {
        decls.push(declaration(tool, form)?);
    }
    Ok(json!([{ "functionDeclarations": decls }]))
}

/// Whether a name is a valid Gemini parameter (property) name.
pub fn is_parameter_name(name: &str) -> bool {
    name_matches(
        name,
        |c| c.is_ascii_alphabetic() || c == '_',
        |c| c.is_ascii_alphanumeric() || c == '_',
        64,
    )
}

/// One function declaration, under the name Gemini accepts ([`Provider::tool_name`]).
pub(crate) fn declaration(tool: &ToolDefinition, form: GeminiForm) -> Result<Value, EmitError> {
    let mut bad = None;
    rewrite::visit(&tool.parameters, 0, &mut |obj, _| {
        for key in obj
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|p| p.keys())
        {
            if bad.is_none() && !is_parameter_name(key) {
                bad = Some(key.clone());
            }
        }
    });
    if let Some(name) = bad {
        return Err(EmitError::InvalidName {
            target: TARGET,
            what: "property name",
            tool: tool.name.clone(),
            name,
            rule: "^[A-Za-z_][A-Za-z0-9_]{0,63}$",
        });
    }
    let mut decl = Map::new();
    decl.insert("name".into(), json!(Provider::Gemini.tool_name(&tool.name)));
    decl.insert("description".into(), json!(tool.model_description()));
    let has_params = tool
        .parameters
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    match form {
        GeminiForm::JsonSchema => {
            if has_params {
                decl.insert(
                    "parametersJsonSchema".into(),
                    json_schema(&tool.parameters, true),
                );
            }
            if let Some(r) = &tool.result {
                decl.insert("responseJsonSchema".into(), json_schema(r, false));
            }
        }
        GeminiForm::OpenApi => {
            if has_params {
                decl.insert("parameters".into(), openapi_schema(&tool.parameters, true));
            }
            if let Some(r) = &tool.result {
                decl.insert("response".into(), openapi_schema(r, false));
            }
        }
    }
    Ok(Value::Object(decl))
}

/// The `parametersJsonSchema` form.
pub fn json_schema(schema: &Value, root_object: bool) -> Value {
    let mut s = schema.clone();
    rewrite::strip_private(&mut s);
    rewrite::inline_refs(&mut s);
    if root_object {
        rewrite::fix_root(&mut s);
    }
    s
}

/// The OpenAPI-subset `parameters` form.
pub fn openapi_schema(schema: &Value, root_object: bool) -> Value {
    let mut s = schema.clone();
    rewrite::strip_private(&mut s);
    rewrite::inline_refs(&mut s);
    rewrite::merge_all_of(&mut s);
    if root_object {
        rewrite::fix_root(&mut s);
    }
    to_openapi(&mut s);
    s
}

fn to_openapi(node: &mut Value) {
    let obj = match node {
        Value::Object(obj) => obj,
        other => {
            *other = json!({});
            return;
        }
    };
    if let Some(one_of) = obj.shift_remove("oneOf") {
        obj.insert("anyOf".into(), one_of);
    }
    if let Some(c) = obj.shift_remove("const") {
        obj.insert("enum".into(), json!([c]));
    }
    let types: Vec<String> = types_of(obj).into_iter().map(str::to_owned).collect();
    let mut nullable = types.iter().any(|t| t == "null");
    let concrete: Vec<&String> = types.iter().filter(|t| *t != "null").collect();
    match concrete.as_slice() {
        [] => {
            obj.shift_remove("type");
        }
        [one] => {
            obj.insert("type".into(), json!(one.to_uppercase()));
        }
        many => {
            let branches: Vec<Value> = many
                .iter()
                .map(|t| json!({"type": t.to_uppercase()}))
                .collect();
            obj.shift_remove("type");
            obj.insert("anyOf".into(), Value::Array(branches));
        }
    }
    if let Some(Value::Array(branches)) = obj.get_mut("anyOf") {
        let before = branches.len();
        branches.retain(|b| b.get("type") != Some(&json!("null")));
        nullable |= branches.len() != before;
        for b in branches.iter_mut() {
            to_openapi(b);
        }
        if branches.len() == 1
            && let Some(Value::Object(only)) = branches.pop()
        {
            obj.shift_remove("anyOf");
            for (k, v) in only {
                obj.entry(k).or_insert(v);
            }
        }
    }
    if let Some(Value::Array(values)) = obj.get_mut("enum") {
        let before = values.len();
        values.retain(|v| !v.is_null());
        nullable |= values.len() != before;
        for v in values.iter_mut() {
            if !v.is_string() {
                *v = Value::String(v.to_string());
            }
        }
    }
    if nullable {
        obj.insert("nullable".into(), Value::Bool(true));
    }
    if let Some(Value::Array(ex)) = obj.shift_remove("examples")
        && let Some(first) = ex.into_iter().next()
    {
        obj.insert("example".into(), first);
    }
    if let Some(Value::Object(props)) = obj.get_mut("properties") {
        for (_, sub) in props.iter_mut() {
            to_openapi(sub);
        }
        let names: Vec<String> = props.keys().cloned().collect();
        if let Some(Value::Array(req)) = obj.get_mut("required") {
            req.retain(|r| r.as_str().is_some_and(|r| names.iter().any(|n| n == r)));
        }
    }
    if obj.get("type") == Some(&json!("ARRAY")) && !obj.contains_key("items") {
        obj.insert("items".into(), json!({}));
    }
    if let Some(items) = obj.get_mut("items") {
        to_openapi(items);
    }
    let ty = obj.get("type").and_then(Value::as_str).map(str::to_owned);
    rewrite::demote_node(obj, &|k, v| {
        if k == "format" {
            let f = v.as_str().unwrap_or("");
            return match ty.as_deref() {
                Some("NUMBER") => matches!(f, "float" | "double"),
                Some("INTEGER") => matches!(f, "int32" | "int64"),
                Some("STRING") => matches!(
                    f,
                    "enum" | "date-time" | "email" | "byte" | "date" | "password"
                ),
                _ => false,
            };
        }
        OPENAPI_KEYWORDS.contains(&k)
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_names() {
        assert!(is_parameter_name("_private"));
        assert!(is_parameter_name("start_line"));
        assert!(!is_parameter_name("replace-all"));
        assert!(!is_parameter_name("2fa"));
        assert!(!is_parameter_name("a.b"));
    }

    #[test]
    fn openapi_form_uses_nullable_and_string_enums() {
        let s = json!({
            "type": "object",
            "properties": {
                "n": {"type": ["integer", "null"], "enum": [1, 2, null], "exclusiveMinimum": 0},
                "k": {"const": "x"}
            },
            "required": ["n"],
            "additionalProperties": false
        });
        assert_eq!(
            openapi_schema(&s, true),
            json!({
                "type": "OBJECT",
                "properties": {
                    "n": {"type": "INTEGER", "enum": ["1", "2"], "nullable": true, "description": "{exclusiveMinimum: 0}"},
                    "k": {"enum": ["x"]}
                },
                "required": ["n"],
                "description": "{additionalProperties: false}"
            })
        );
    }
}
