#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! Every emitted tool list checked against the provider's rules, written here independently of
//! the emitters (reference: shared providers.md): OpenAI strict (§2.3) and non-strict (§2.4),
//! Anthropic (§3.1), Gemini (§4.1–4.3, both parameter forms), and MCP against the official
//! `schema.json` of 2025-06-18 (draft-07) and 2025-11-25 (2020-12).

mod support;

use serde_json::{Map, Value, json};
use toolgate::emit::{self, GeminiForm, ListOptions};
use toolgate::ir::{Bundle, Provider, ToolDefinition};

fn list(bundle: &Bundle, target: Provider, options: &ListOptions) -> Value {
    let tools: Vec<&ToolDefinition> = bundle.tools.iter().collect();
    emit::tool_list(target, &tools, options).unwrap()
}

fn chars_ok(s: &str, first: fn(char) -> bool, rest: fn(char) -> bool, max: usize) -> bool {
    let mut it = s.chars();
    it.next().is_some_and(first) && it.all(rest) && s.chars().count() <= max
}

fn word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

fn types(node: &Map<String, Value>) -> Vec<String> {
    match node.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(a)) => a.iter().map(|t| t.as_str().unwrap().to_owned()).collect(),
        _ => vec![],
    }
}

// ---------------------------------------------------------------------------------------------
// OpenAI

const OPENAI_STRICT_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "description",
    "title",
    "$ref",
    "$defs",
    "pattern",
    "format",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
];
const OPENAI_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];
const JSON_TYPES: &[&str] = &[
    "string", "number", "integer", "boolean", "object", "array", "null",
];

#[derive(Default)]
struct StrictStats {
    properties: usize,
    enum_values: usize,
    chars: usize,
    depth: usize,
}

fn check_strict_node(tool: &str, node: &Value, path: &str, depth: usize, stats: &mut StrictStats) {
    let obj = node
        .as_object()
        .unwrap_or_else(|| panic!("{tool}{path}: strict schemas are objects, not {node}"));
    for k in obj.keys() {
        assert!(
            OPENAI_STRICT_KEYWORDS.contains(&k.as_str()),
            "{tool}{path}: keyword `{k}` is not supported in strict mode"
        );
    }
    if let Some(r) = obj.get("$ref") {
        let r = r.as_str().unwrap();
        assert!(
            r == "#" || r.starts_with("#/$defs/"),
            "{tool}{path}: $ref {r}"
        );
        assert_eq!(
            obj.len(),
            1,
            "{tool}{path}: $ref must have no siblings in strict mode"
        );
        return;
    }
    let ts = types(obj);
    for t in &ts {
        assert!(JSON_TYPES.contains(&t.as_str()), "{tool}{path}: type {t}");
    }
    assert!(
        !ts.is_empty()
            || obj.contains_key("anyOf")
            || obj.contains_key("enum")
            || obj.contains_key("const"),
        "{tool}{path}: every strict node has a type"
    );
    if let Some(f) = obj.get("format") {
        assert!(
            OPENAI_FORMATS.contains(&f.as_str().unwrap()),
            "{tool}{path}: format {f}"
        );
    }
    if let Some(e) = obj.get("enum") {
        let e = e.as_array().unwrap();
        stats.enum_values += e.len();
        let len: usize = e.iter().filter_map(Value::as_str).map(str::len).sum();
        stats.chars += len;
        if e.len() > 250 {
            assert!(
                len <= 15_000,
                "{tool}{path}: a large enum's values exceed 15,000 characters"
            );
        }
    }
    if let Some(Value::String(c)) = obj.get("const") {
        stats.chars += c.len();
    }
    let mut depth = depth;
    if ts.iter().any(|t| t == "object") {
        depth += 1;
        stats.depth = stats.depth.max(depth);
        assert_eq!(
            obj.get("additionalProperties"),
            Some(&json!(false)),
            "{tool}{path}: additionalProperties must be false"
        );
        let props = obj
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or_else(|| panic!("{tool}{path}: objects need properties"));
        let required: Vec<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .unwrap_or_else(|| panic!("{tool}{path}: required missing"))
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let keys: Vec<&str> = props.keys().map(String::as_str).collect();
        let mut a = required.clone();
        let mut b = keys.clone();
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b, "{tool}{path}: required must list every property");
        assert_eq!(
            required.len(),
            keys.len(),
            "{tool}{path}: duplicate required entries"
        );
        stats.properties += props.len();
        stats.chars += keys.iter().map(|k| k.len()).sum::<usize>();
        for (k, sub) in props {
            check_strict_node(tool, sub, &format!("{path}/properties/{k}"), depth, stats);
        }
    } else {
        assert!(
            !obj.contains_key("properties") && !obj.contains_key("additionalProperties"),
            "{tool}{path}: object keywords on a non-object"
        );
    }
    if ts.iter().any(|t| t == "array") {
        let items = obj
            .get("items")
            .unwrap_or_else(|| panic!("{tool}{path}: arrays need items"));
        check_strict_node(tool, items, &format!("{path}/items"), depth, stats);
    }
    if let Some(branches) = obj.get("anyOf") {
        for (i, b) in branches.as_array().unwrap().iter().enumerate() {
            check_strict_node(tool, b, &format!("{path}/anyOf/{i}"), depth, stats);
        }
    }
    if let Some(defs) = obj.get("$defs") {
        assert!(path.is_empty(), "{tool}{path}: $defs only at the root");
        for (k, sub) in defs.as_object().unwrap() {
            stats.chars += k.len();
            check_strict_node(tool, sub, &format!("/$defs/{k}"), 0, stats);
        }
    }
}

fn check_openai_root(tool: &str, params: &Value) {
    let root = params.as_object().unwrap();
    assert_eq!(
        root.get("type"),
        Some(&json!("object")),
        "{tool}: root must be an object"
    );
    for k in ["anyOf", "oneOf", "allOf", "enum", "not"] {
        assert!(!root.contains_key(k), "{tool}: `{k}` at the root");
    }
    assert!(
        root.get("properties").is_some_and(Value::is_object),
        "{tool}: root needs properties"
    );
}

/// Returns the number of strict tools checked.
fn check_openai(list: &Value, flat: bool) -> usize {
    let tools = list.as_array().unwrap();
    assert!(tools.len() <= 128, "at most 128 tools per request");
    let mut strict_count = 0;
    for t in tools {
        assert_eq!(t["type"], json!("function"));
        let f = if flat { t } else { &t["function"] };
        let name = f["name"].as_str().unwrap();
        assert!(
            chars_ok(name, word, word, 64),
            "{name}: name must match ^[a-zA-Z0-9_-]{{1,64}}$"
        );
        assert!(
            f["description"].as_str().unwrap().chars().count() <= 1024,
            "{name}: description over 1024"
        );
        let strict = f
            .get("strict")
            .unwrap_or_else(|| panic!("{name}: strict must be explicit"));
        let params = &f["parameters"];
        check_openai_root(name, params);
        if strict == &json!(true) {
            strict_count += 1;
            let mut stats = StrictStats::default();
            check_strict_node(name, params, "", 0, &mut stats);
            assert!(stats.depth <= 10, "{name}: nesting {}", stats.depth);
            assert!(stats.properties <= 5000);
            assert!(stats.enum_values <= 1000);
            assert!(stats.chars <= 120_000);
        } else {
            assert_eq!(strict, &json!(false), "{name}: strict is a boolean");
        }
    }
    strict_count
}

#[test]
fn openai_lists_follow_the_rules() {
    let mut strict_total = 0;
    for (name, bundle) in support::all_bundles() {
        let options = ListOptions::for_project(&bundle.project);
        let chat = check_openai(&list(&bundle, Provider::OpenaiChat, &options), false);
        let responses = check_openai(&list(&bundle, Provider::OpenaiResponses, &options), true);
        assert_eq!(chat, responses, "{name}");
        if name == "emit-project" {
            assert_eq!(chat, 0, "the project targets `openai`, not `openai-strict`");
        }
        strict_total += chat;
        // The strict variant of every bundle, whatever its targets say.
        let strict = ListOptions {
            openai_strict: true,
            ..options
        };
        check_openai(&list(&bundle, Provider::OpenaiChat, &strict), false);
    }
    assert!(
        strict_total >= 5,
        "strict checker ran on {strict_total} tools only"
    );
}

#[test]
fn openai_falls_back_to_non_strict_only_for_shapes_strict_cannot_express() {
    let bundle = support::bundle(
        &support::root().join("tests/fixtures/emit"),
        &["set_value.yaml", "create_order.yaml"],
    );
    let l = list(&bundle, Provider::OpenaiResponses, &ListOptions::default());
    let strict: Vec<(String, bool)> = l
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_owned(),
                t["strict"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        strict,
        vec![
            ("create_order".to_owned(), true),
            ("set_value".to_owned(), false)
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Anthropic

#[test]
fn anthropic_lists_follow_the_rules() {
    for (_, bundle) in support::all_bundles() {
        let l = list(&bundle, Provider::Anthropic, &ListOptions::default());
        for t in l.as_array().unwrap() {
            let obj = t.as_object().unwrap();
            for k in obj.keys() {
                assert!(
                    ["name", "description", "input_schema"].contains(&k.as_str()),
                    "unexpected key {k}"
                );
            }
            let name = t["name"].as_str().unwrap();
            assert!(chars_ok(name, word, word, 64), "{name}");
            let schema = t["input_schema"].as_object().unwrap();
            assert_eq!(schema.get("type"), Some(&json!("object")), "{name}");
            for k in ["oneOf", "anyOf", "allOf"] {
                assert!(!schema.contains_key(k), "{name}: {k} at the top level");
            }
            for key in schema
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(|p| p.keys())
            {
                let ok = |c: char| word(c) || c == '.';
                assert!(chars_ok(key, ok, ok, 64), "{name}: property key {key}");
            }
            assert_no_private_keywords(name, &t["input_schema"]);
        }
    }
}

fn assert_no_private_keywords(tool: &str, v: &Value) {
    match v {
        Value::Object(m) => {
            for (k, sub) in m {
                if k != "properties" && k != "$defs" {
                    assert!(
                        !k.starts_with("x-") && k != "$schema",
                        "{tool}: `{k}` leaked into provider output"
                    );
                }
                assert_no_private_keywords(tool, sub);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| assert_no_private_keywords(tool, x)),
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------
// Gemini

const GEMINI_OPENAPI_KEYWORDS: &[&str] = &[
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
const GEMINI_TYPES: &[&str] = &[
    "STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL",
];

fn param_name_ok(k: &str) -> bool {
    chars_ok(
        k,
        |c| c.is_ascii_alphabetic() || c == '_',
        |c| c.is_ascii_alphanumeric() || c == '_',
        64,
    )
}

fn check_gemini_openapi(tool: &str, node: &Value, path: &str) {
    let obj = node
        .as_object()
        .unwrap_or_else(|| panic!("{tool}{path}: not an object"));
    for k in obj.keys() {
        assert!(
            GEMINI_OPENAPI_KEYWORDS.contains(&k.as_str()),
            "{tool}{path}: `{k}` is an unknown field of Schema"
        );
    }
    if let Some(t) = obj.get("type") {
        let t = t
            .as_str()
            .unwrap_or_else(|| panic!("{tool}{path}: type must be a single value"));
        assert!(GEMINI_TYPES.contains(&t), "{tool}{path}: type {t}");
        if t == "ARRAY" {
            assert!(obj.contains_key("items"), "{tool}{path}: arrays need items");
        }
    }
    if let Some(e) = obj.get("enum") {
        assert!(
            e.as_array().unwrap().iter().all(Value::is_string),
            "{tool}{path}: enum values must be strings"
        );
    }
    if let Some(props) = obj.get("properties").and_then(Value::as_object) {
        for r in obj
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            assert!(
                props.contains_key(r.as_str().unwrap()),
                "{tool}{path}: required {r} is not defined"
            );
        }
        for (k, sub) in props {
            assert!(param_name_ok(k), "{tool}{path}: parameter name {k}");
            check_gemini_openapi(tool, sub, &format!("{path}/properties/{k}"));
        }
    }
    if let Some(items) = obj.get("items") {
        check_gemini_openapi(tool, items, &format!("{path}/items"));
    }
    for (i, b) in obj
        .get("anyOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        check_gemini_openapi(tool, b, &format!("{path}/anyOf/{i}"));
    }
}

fn check_gemini_json_schema(tool: &str, schema: &Value) {
    assert_eq!(
        schema["type"],
        json!("object"),
        "{tool}: parametersJsonSchema describes an object"
    );
    assert_no_private_keywords(tool, schema);
    let defs: Vec<String> = schema
        .get("$defs")
        .and_then(Value::as_object)
        .map(|d| d.keys().map(|k| format!("#/$defs/{k}")).collect())
        .unwrap_or_default();
    fn walk(tool: &str, v: &Value, defs: &[String]) {
        match v {
            Value::Object(m) => {
                if let Some(r) = m.get("$ref") {
                    assert!(
                        defs.contains(&r.as_str().unwrap().to_owned()),
                        "{tool}: $ref {r} should have been inlined"
                    );
                }
                if let Some(props) = m.get("properties").and_then(Value::as_object) {
                    for k in props.keys() {
                        assert!(param_name_ok(k), "{tool}: parameter name {k}");
                    }
                }
                m.values().for_each(|x| walk(tool, x, defs));
            }
            Value::Array(a) => a.iter().for_each(|x| walk(tool, x, defs)),
            _ => {}
        }
    }
    walk(tool, schema, &defs);
}

#[test]
fn gemini_lists_follow_the_rules() {
    for (_, bundle) in support::all_bundles() {
        for form in [GeminiForm::JsonSchema, GeminiForm::OpenApi] {
            let options = ListOptions {
                gemini_form: form,
                ..ListOptions::default()
            };
            let l = list(&bundle, Provider::Gemini, &options);
            let outer = l.as_array().unwrap();
            assert_eq!(outer.len(), 1);
            let decls = outer[0]["functionDeclarations"].as_array().unwrap();
            assert!(decls.len() <= 512);
            for d in decls {
                let name = d["name"].as_str().unwrap();
                assert!(
                    chars_ok(
                        name,
                        |c| c.is_ascii_alphabetic() || c == '_',
                        |c| c.is_ascii_alphanumeric() || "_.:-".contains(c),
                        64
                    ),
                    "{name}"
                );
                assert!(
                    !(d.get("parameters").is_some() && d.get("parametersJsonSchema").is_some()),
                    "{name}: parameters and parametersJsonSchema are exclusive"
                );
                match form {
                    GeminiForm::JsonSchema => {
                        assert!(d.get("parameters").is_none() && d.get("response").is_none());
                        if let Some(s) = d.get("parametersJsonSchema") {
                            check_gemini_json_schema(name, s);
                        }
                        if let Some(s) = d.get("responseJsonSchema") {
                            assert_no_private_keywords(name, s);
                        }
                    }
                    GeminiForm::OpenApi => {
                        assert!(d.get("parametersJsonSchema").is_none());
                        if let Some(s) = d.get("parameters") {
                            assert_eq!(s["type"], json!("OBJECT"), "{name}");
                            check_gemini_openapi(name, s, "");
                        }
                        if let Some(s) = d.get("response") {
                            check_gemini_openapi(name, s, "/response");
                        }
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// MCP

fn mcp_validator(revision: &str, definition: &str) -> jsonschema::Validator {
    let path = support::root().join(format!("tests/fixtures/mcp-schema/{revision}/schema.json"));
    let mut schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let (defs, draft) = if revision == "2025-06-18" {
        ("definitions", jsonschema::Draft::Draft7)
    } else {
        ("$defs", jsonschema::Draft::Draft202012)
    };
    schema
        .as_object_mut()
        .unwrap()
        .insert("$ref".into(), json!(format!("#/{defs}/{definition}")));
    jsonschema::options()
        .with_draft(draft)
        .build(&schema)
        .unwrap()
}

#[test]
fn mcp_lists_validate_against_the_official_schemas() {
    let validators: Vec<(&str, jsonschema::Validator, jsonschema::Validator)> =
        ["2025-06-18", "2025-11-25"]
            .into_iter()
            .map(|rev| {
                (
                    rev,
                    mcp_validator(rev, "ListToolsResult"),
                    mcp_validator(rev, "Tool"),
                )
            })
            .collect();
    let mut checked = 0;
    for (name, bundle) in support::all_bundles() {
        let l = list(&bundle, Provider::Mcp, &ListOptions::default());
        for (rev, list_v, tool_v) in &validators {
            let errors: Vec<String> = list_v
                .iter_errors(&l)
                .map(|e| format!("{} at {}", e, e.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{name} {rev}: {errors:#?}");
            for tool in l["tools"].as_array().unwrap() {
                assert!(tool_v.is_valid(tool), "{name} {rev}: {tool}");
                checked += 1;
            }
        }
        for tool in l["tools"].as_array().unwrap() {
            let a = tool["annotations"].as_object().unwrap();
            for hint in [
                "readOnlyHint",
                "destructiveHint",
                "idempotentHint",
                "openWorldHint",
            ] {
                assert!(
                    a.get(hint).is_some_and(Value::is_boolean),
                    "{name}: {hint} must be explicit"
                );
            }
            if let Some(out) = tool.get("outputSchema") {
                assert_eq!(
                    out["type"],
                    json!("object"),
                    "outputSchema root must be an object"
                );
            }
            assert_no_private_keywords(tool["name"].as_str().unwrap(), &tool["inputSchema"]);
        }
    }
    assert!(checked >= 16, "{checked}");
}
