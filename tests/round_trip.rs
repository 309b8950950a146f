#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! Round trip: every exported list, serialized and parsed back, compared with the IR it came
//! from. Whatever the target can express must be there (names, descriptions, titles, property
//! sets, required sets, types, enums, constants, nesting, annotations); whatever it cannot must
//! have moved into the node's description as `{keyword: value}` rather than vanish.

mod support;

use serde_json::{Map, Value, json};
use toolgate::emit::rewrite;
use toolgate::emit::{self, GeminiForm, ListOptions};
use toolgate::ir::{Effect, Idempotency, Provider, ToolDefinition};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// The schema as authored (MCP, Gemini JSON Schema, Anthropic, OpenAI non-strict).
    Faithful,
    /// OpenAI strict: optional properties are required and nullable.
    Strict,
    /// Gemini OpenAPI subset: uppercase types, `nullable`, string enums, `const` as `enum`.
    OpenApi,
}

/// Keywords that are structure (compared explicitly) or that targets may drop silently.
fn is_structural(k: &str) -> bool {
    matches!(
        k,
        "type"
            | "properties"
            | "required"
            | "items"
            | "enum"
            | "description"
            | "anyOf"
            | "oneOf"
            | "$defs"
            | "definitions"
            | "$schema"
            | "$id"
            | "$comment"
            | "$ref"
    ) || k.starts_with("x-")
}

fn types(obj: &Map<String, Value>) -> Vec<String> {
    rewrite::types_of(obj)
        .into_iter()
        .map(str::to_lowercase)
        .collect()
}

fn accepts_null(obj: &Map<String, Value>) -> bool {
    types(obj).iter().any(|t| t == "null")
        || obj.get("nullable") == Some(&json!(true))
        || obj
            .get("enum")
            .and_then(Value::as_array)
            .is_some_and(|e| e.contains(&Value::Null))
        || obj
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|b| b.iter().any(|b| b.get("type") == Some(&json!("null"))))
}

/// In strict output an optional object/array/union is `anyOf: [X, {type: null}]`; compare X.
fn unwrap_nullable(ir: &Map<String, Value>, out: &Map<String, Value>) -> Map<String, Value> {
    if !ir.contains_key("anyOf")
        && let Some(Value::Array(b)) = out.get("anyOf")
        && b.len() == 2
        && b[1] == json!({"type": "null"})
        && let Some(inner) = b[0].as_object()
    {
        let mut merged = inner.clone();
        for k in ["description", "title"] {
            if let Some(v) = out.get(k) {
                merged.insert(k.into(), v.clone());
            }
        }
        return merged;
    }
    out.clone()
}

fn compare(ir: &Value, out: &Value, mode: Mode, path: &str) {
    let (Some(ir), Some(out)) = (ir.as_object(), out.as_object()) else {
        return;
    };
    if ir.contains_key("$ref") {
        // A recursive reference: kept, or (in the OpenAPI subset, which has no `$ref` here)
        // described.
        let described = mode == Mode::OpenApi
            && out
                .get("description")
                .and_then(Value::as_str)
                .is_some_and(|d| d.contains("$ref: "));
        assert!(
            ir.get("$ref") == out.get("$ref") || described,
            "{path}: recursive $ref lost"
        );
        return;
    }
    let out = unwrap_nullable(ir, out);
    let desc = out.get("description").and_then(Value::as_str).unwrap_or("");
    if let Some(d) = ir.get("description").and_then(Value::as_str) {
        assert!(
            desc.starts_with(d),
            "{path}: description `{desc}` lost `{d}`"
        );
    }
    // Types.
    let it = types(ir);
    let mut ot = types(&out);
    if out.get("nullable") == Some(&json!(true)) {
        ot.push("null".into());
    }
    for t in &it {
        assert!(ot.contains(t), "{path}: type {t} lost ({ot:?})");
    }
    for t in &ot {
        assert!(it.contains(t) || t == "null", "{path}: type {t} added");
    }
    // Enums and constants.
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .filter(|x| !x.is_null())
            .map(|x| {
                x.as_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| x.to_string())
            })
            .collect()
    };
    if let Some(e) = ir.get("enum") {
        let o = out
            .get("enum")
            .unwrap_or_else(|| panic!("{path}: enum lost"));
        assert_eq!(strings(e), strings(o), "{path}: enum values");
    }
    if let Some(c) = ir.get("const") {
        let kept = out.get("const") == Some(c)
            || (mode == Mode::OpenApi
                && out.get("enum").map(&strings) == Some(strings(&json!([c]))))
            || desc.contains("const: ");
        assert!(kept, "{path}: const lost");
    }
    // Every other keyword: kept with its value, or moved into the description.
    for (k, v) in ir {
        if is_structural(k) || k == "const" {
            continue;
        }
        let kept = out.get(k) == Some(v)
            || (mode == Mode::OpenApi && k == "examples" && out.contains_key("example"))
            || desc.contains(&format!("{k}: "));
        assert!(
            kept,
            "{path}: `{k}` neither kept nor moved into the description"
        );
    }
    // Objects: property and required sets.
    if let Some(props) = ir.get("properties").and_then(Value::as_object) {
        let oprops = out
            .get("properties")
            .and_then(Value::as_object)
            .unwrap_or_else(|| panic!("{path}: properties lost"));
        let a: Vec<&String> = props.keys().collect();
        let b: Vec<&String> = oprops.keys().collect();
        assert_eq!(a, b, "{path}: property set (and order)");
        let req = |o: &Map<String, Value>| -> Vec<String> {
            o.get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().map(|x| x.as_str().unwrap().to_owned()).collect())
                .unwrap_or_default()
        };
        let (ir_req, out_req) = (req(ir), req(&out));
        match mode {
            Mode::Strict => {
                assert_eq!(
                    out_req.len(),
                    props.len(),
                    "{path}: strict requires every property"
                );
                for (k, sub) in oprops {
                    if !ir_req.contains(k) {
                        assert!(
                            accepts_null(sub.as_object().unwrap()),
                            "{path}/{k}: optional must accept null"
                        );
                    }
                }
            }
            Mode::Faithful | Mode::OpenApi => assert_eq!(ir_req, out_req, "{path}: required"),
        }
        for (k, sub) in props {
            compare(sub, &oprops[k], mode, &format!("{path}/{k}"));
        }
    }
    if let (Some(i), Some(o)) = (ir.get("items"), out.get("items")) {
        compare(i, o, mode, &format!("{path}/items"));
    } else if ir.contains_key("items") {
        panic!("{path}: items lost");
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = ir.get(key).and_then(Value::as_array) {
            let ob = out
                .get("anyOf")
                .or_else(|| out.get(key))
                .and_then(Value::as_array);
            match ob {
                Some(ob) => {
                    for (i, b) in branches.iter().enumerate() {
                        compare(b, &ob[i], mode, &format!("{path}/{key}/{i}"));
                    }
                }
                None => assert!(desc.contains(&format!("{key}: ")), "{path}: {key} lost"),
            }
        }
    }
}

fn ir_schema(s: &Value) -> Value {
    let mut s = s.clone();
    rewrite::inline_refs(&mut s);
    s
}

fn by_name<'a>(tools: &'a [&ToolDefinition], name: &str) -> &'a ToolDefinition {
    tools.iter().find(|t| t.name == name).unwrap()
}

fn round_trip(list: &Value) -> Value {
    serde_json::from_str(&emit::to_json_text(list).unwrap()).unwrap()
}

#[test]
fn exported_lists_lose_nothing_the_target_can_express() {
    let mut compared = 0;
    for (bundle_name, bundle) in support::all_bundles() {
        let tools: Vec<&ToolDefinition> = bundle.tools.iter().collect();
        let options = ListOptions::for_project(&bundle.project);
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();

        // OpenAI, both APIs.
        for target in [Provider::OpenaiChat, Provider::OpenaiResponses] {
            let l = round_trip(&emit::tool_list(target, &tools, &options).unwrap());
            let listed: Vec<&str> = l
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.get("function").unwrap_or(t)["name"].as_str().unwrap())
                .collect();
            assert_eq!(
                listed, names,
                "{bundle_name}: tools sorted by name, none lost"
            );
            for t in l.as_array().unwrap() {
                let f = t.get("function").unwrap_or(t);
                let def = by_name(&tools, f["name"].as_str().unwrap());
                assert_eq!(f["description"], json!(def.description));
                let mode = if f["strict"] == json!(true) {
                    Mode::Strict
                } else {
                    Mode::Faithful
                };
                compare(
                    &ir_schema(&def.parameters),
                    &f["parameters"],
                    mode,
                    &format!("{bundle_name}/{}", def.name),
                );
                compared += 1;
            }
        }
        // Anthropic.
        let l = round_trip(&emit::tool_list(Provider::Anthropic, &tools, &options).unwrap());
        for t in l.as_array().unwrap() {
            let def = by_name(&tools, t["name"].as_str().unwrap());
            assert_eq!(t["description"], json!(def.description));
            compare(
                &ir_schema(&def.parameters),
                &t["input_schema"],
                Mode::Faithful,
                &format!("anthropic/{}", def.name),
            );
            compared += 1;
        }
        // Gemini, both forms.
        for (form, mode) in [
            (GeminiForm::JsonSchema, Mode::Faithful),
            (GeminiForm::OpenApi, Mode::OpenApi),
        ] {
            let o = ListOptions {
                gemini_form: form,
                ..options
            };
            let l = round_trip(&emit::tool_list(Provider::Gemini, &tools, &o).unwrap());
            for d in l[0]["functionDeclarations"].as_array().unwrap() {
                let def = by_name(&tools, d["name"].as_str().unwrap());
                assert_eq!(d["description"], json!(def.description));
                let (pk, rk) = match form {
                    GeminiForm::JsonSchema => ("parametersJsonSchema", "responseJsonSchema"),
                    GeminiForm::OpenApi => ("parameters", "response"),
                };
                let has_params = def.parameters["properties"]
                    .as_object()
                    .is_some_and(|p| !p.is_empty());
                assert_eq!(
                    d.get(pk).is_some(),
                    has_params,
                    "{}: parameters present iff declared",
                    def.name
                );
                if let Some(p) = d.get(pk) {
                    compare(
                        &ir_schema(&def.parameters),
                        p,
                        mode,
                        &format!("gemini/{}", def.name),
                    );
                }
                assert_eq!(d.get(rk).is_some(), def.result.is_some());
                if let (Some(r), Some(ir)) = (d.get(rk), &def.result) {
                    compare(
                        &ir_schema(ir),
                        r,
                        mode,
                        &format!("gemini/{}/result", def.name),
                    );
                }
                compared += 1;
            }
        }
        // MCP.
        let l = round_trip(&emit::tool_list(Provider::Mcp, &tools, &options).unwrap());
        for t in l["tools"].as_array().unwrap() {
            let def = by_name(&tools, t["name"].as_str().unwrap());
            assert_eq!(t["description"], json!(def.description));
            assert_eq!(
                t.get("title"),
                def.title.as_ref().map(|x| json!(x)).as_ref()
            );
            compare(
                &def.parameters,
                &t["inputSchema"],
                Mode::Faithful,
                &format!("mcp/{}", def.name),
            );
            let object_result = def
                .result
                .as_ref()
                .is_some_and(|r| r["type"] == json!("object"));
            assert_eq!(
                t.get("outputSchema").is_some(),
                object_result,
                "{}",
                def.name
            );
            if let Some(out) = t.get("outputSchema") {
                compare(
                    def.result.as_ref().unwrap(),
                    out,
                    Mode::Faithful,
                    &format!("mcp/{}/result", def.name),
                );
            }
            assert_eq!(
                t["annotations"],
                json!({
                    "readOnlyHint": def.effect.is_read_only(),
                    "destructiveHint": def.effect == Effect::Destructive,
                    "idempotentHint": matches!(def.idempotency, Idempotency::Pure | Idempotency::Idempotent),
                    "openWorldHint": def.effect.is_open_world(),
                })
            );
            compared += 1;
        }
    }
    assert!(compared >= 8 * 6, "{compared}");
}

#[test]
fn dropped_constraints_are_described() {
    let bundle = support::bundle(
        &support::root().join("tests/fixtures/emit"),
        &["create_order.yaml"],
    );
    let tools: Vec<&ToolDefinition> = bundle.tools.iter().collect();
    let l = emit::tool_list(Provider::OpenaiResponses, &tools, &ListOptions::default()).unwrap();
    assert_eq!(
        l[0]["parameters"]["properties"]["customer"]["properties"]["name"],
        json!({"type": "string", "description": "Full name.\n\n{minLength: 1, maxLength: 200}"})
    );
}

#[test]
fn the_linter_hook_names_what_strict_output_describes() {
    for (_, bundle) in support::all_bundles() {
        for tool in &bundle.tools {
            let strict = emit::openai::strict_parameters(&tool.parameters);
            let text = match &strict {
                Ok(s) => serde_json::to_string(s).unwrap(),
                Err(_) => serde_json::to_string(&emit::openai::loose_parameters(&tool.parameters))
                    .unwrap(),
            };
            for d in emit::dropped::dropped(toolgate::ir::Target::OpenaiStrict, &tool.parameters) {
                assert!(
                    text.contains(&format!("{}: ", d.keyword)),
                    "{}: {:?} not described",
                    tool.name,
                    d
                );
            }
        }
    }
}
