#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use proptest::prelude::*;
use serde_json::{Value, json};

use super::*;
use crate::emit::{GeminiForm, ListOptions, tool_list};
use crate::ir::Provider;
use crate::spec::load::LoadOptions;

/// Writes a file and reads it back as a list of the format.
fn read(dir: &Path, format: ImportFormat, list: &Value) -> Vec<ListedTool> {
    let path = dir.join("list.json");
    std::fs::write(&path, serde_json::to_string_pretty(list).unwrap()).unwrap();
    read_list(&path, dir, format).unwrap()
}

/// The specs in a folder, checked: the error findings, and the bundle when there are none.
fn check(dir: &Path) -> (Vec<String>, Option<crate::ir::Bundle>) {
    let checked = crate::check::check_specs(&LoadOptions {
        paths: vec![dir.to_path_buf()],
        config: None,
        cwd: dir.to_path_buf(),
    })
    .unwrap();
    let errors = checked
        .diagnostics
        .iter()
        .filter(|d| d.severity == crate::diagnostic::Severity::Error)
        .map(|d| format!("{:?} {}", d.code, d.message))
        .collect();
    (errors, checked.bundle())
}

#[test]
fn each_format_becomes_lint_clean_conservative_specs() {
    let lists = [
        (
            ImportFormat::Openai,
            json!([{"type": "function", "function": {"name": "get_weather",
                "description": "Get the current weather for a city. Returns the temperature and conditions.",
                "parameters": {"type": "object", "properties": {
                    "city": {"type": "string", "description": "The city.", "maxLength": 80},
                    "units": {"type": ["string", "null"], "enum": ["celsius", "fahrenheit", null], "description": "The units."}},
                    "required": ["city", "units"], "additionalProperties": false}, "strict": true}},
                {"type": "web_search"}]),
        ),
        (
            ImportFormat::Anthropic,
            json!({"tools": [{"name": "get_weather",
                "description": "Get the current weather for a city. Returns the temperature and conditions.",
                "input_schema": {"type": "object", "properties": {
                    "city": {"type": "string", "description": "The city.", "maxLength": 80}},
                    "required": ["city"]}},
                {"type": "bash_20250124", "name": "bash"}]}),
        ),
        (
            ImportFormat::Gemini,
            json!([{"functionDeclarations": [{"name": "get_weather",
                "description": "Get the current weather for a city. Returns the temperature and conditions.",
                "parameters": {"type": "OBJECT", "properties": {
                    "city": {"type": "STRING", "description": "The city.", "maxLength": "80"},
                    "days": {"type": "INTEGER", "description": "Days ahead.", "nullable": true, "minimum": 0, "maximum": 7}},
                    "required": ["city"]}}]}]),
        ),
        (
            ImportFormat::Mcp,
            json!({"tools": [{"name": "get_weather", "title": "Weather",
                "description": "Get the current weather for a city. Returns the temperature and conditions.",
                "inputSchema": {"type": "object", "properties": {
                    "city": {"type": "string", "description": "The city.", "maxLength": 80}},
                    "required": ["city"]},
                "outputSchema": {"type": "object", "properties": {"celsius": {"type": "number"}}},
                "annotations": {"readOnlyHint": true, "openWorldHint": true}}]}),
        ),
    ];
    for (format, list) in lists {
        let tmp = tempfile::tempdir().unwrap();
        let tools = read(tmp.path(), format, &list);
        assert_eq!(
            tools.len(),
            1,
            "{format:?}: provider-defined tools are skipped"
        );
        let t = &tools[0];
        assert_eq!(t.name, "get_weather");
        let specs = tmp.path().join("specs");
        let (n, written, _) = write_specs(
            &tmp.path().join("list.json"),
            tmp.path(),
            format,
            &specs,
            false,
            &ImportLimits::default(),
        )
        .unwrap();
        assert_eq!((n, written), (1, 1));
        let (errors, bundle) = check(&specs);
        assert_eq!(errors, Vec::<String>::new(), "{format:?}");
        let bundle = bundle.unwrap();
        let def = &bundle.tools[0];
        match format {
            // Annotations say it reads the open world.
            ImportFormat::Mcp => {
                assert_eq!(def.effect, Effect::NetworkRead);
                assert!(def.result.is_some());
            }
            _ => assert_eq!(def.effect, Effect::ExternalSideEffect, "{format:?}"),
        }
        assert_eq!(def.parameters["properties"]["city"]["maxLength"], json!(80));
        if format == ImportFormat::Gemini {
            assert_eq!(
                def.parameters["properties"]["days"]["type"],
                json!(["integer", "null"])
            );
        }
        let text = std::fs::read_to_string(specs.join("get_weather.yaml")).unwrap();
        assert!(text.contains("review-imported"), "{text}");
    }
}

#[test]
fn a_file_that_is_no_list_is_an_error_with_where() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("list.json");
    std::fs::write(&path, "{\"nope\": 1}").unwrap();
    let e = read_list(&path, tmp.path(), ImportFormat::Anthropic).unwrap_err();
    assert!(e.contains("list.json:1:1: no tool list found"), "{e}");
}

/// A property's schema with some of the constraints a contract may carry.
fn property() -> impl Strategy<Value = Value> {
    prop_oneof![
        (
            proptest::option::of(1u64..50),
            proptest::option::of(50u64..500),
            proptest::option::of(proptest::sample::select(vec!["^[a-z]+$", "^[0-9a-f]{8}$"])),
        )
            .prop_map(|(min, max, pattern)| {
                let mut s = json!({"type": "string", "description": "A text."});
                if let Some(m) = min {
                    s["minLength"] = json!(m);
                }
                if let Some(m) = max {
                    s["maxLength"] = json!(m);
                }
                if let Some(p) = pattern {
                    s["pattern"] = json!(p);
                }
                s
            }),
        (
            proptest::option::of(-100i64..0),
            proptest::option::of(1i64..1000)
        )
            .prop_map(|(min, max)| {
                let mut s = json!({"type": "integer", "description": "A count."});
                if let Some(m) = min {
                    s["minimum"] = json!(m);
                }
                if let Some(m) = max {
                    s["maximum"] = json!(m);
                }
                s
            }),
        proptest::sample::subsequence(vec!["red", "green", "blue", "cyan"], 1..4)
            .prop_map(|e| json!({"type": "string", "description": "A colour.", "enum": e})),
        (1u64..20).prop_map(|n| json!({"type": "array", "description": "Some names.",
            "items": {"type": "string", "maxLength": 40}, "maxItems": n})),
        Just(json!({"type": "boolean", "description": "A switch."})),
    ]
}

fn parameters() -> impl Strategy<Value = Value> {
    proptest::collection::btree_map("[a-z]{1,8}", property(), 1..5).prop_flat_map(|props| {
        let names: Vec<String> = props.keys().cloned().collect();
        let n = names.len();
        proptest::sample::subsequence(names, 0..=n).prop_map(move |required| {
            json!({"type": "object", "properties": props.clone(), "required": required,
                "additionalProperties": false})
        })
    })
}

/// Every `(path, keyword, value)` of a schema: the constraints it expresses.
fn constraints(v: &Value, at: String, out: &mut Vec<(String, Value)>) {
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                constraints(x, format!("{at}/{k}"), out);
            }
        }
        Value::Array(_) | Value::String(_) | Value::Number(_) | Value::Bool(_) | Value::Null => {
            out.push((at, v.clone()))
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// Import after export keeps every constraint the provider's list expresses: what a
    /// provider can carry survives the round trip unchanged.
    #[test]
    fn import_after_export_keeps_every_constraint(params in parameters()) {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src");
        std::fs::create_dir_all(&src).unwrap();
        let spec = json!({
            "name": "tune_radio", "version": 1,
            "description": "Tune the test radio to the given settings. A test tool. Returns the settings.",
            "effect": "pure", "idempotency": "pure",
            "parameters": params, "timeout": "1s", "exec": {"builtin": "echo"}
        });
        std::fs::write(src.join("tune_radio.yaml"), serde_json::to_string(&spec).unwrap()).unwrap();
        let (errors, bundle) = check(&src);
        prop_assume!(errors.is_empty());
        let bundle = bundle.unwrap();
        let tools: Vec<_> = bundle.tools.iter().collect();
        let options = ListOptions { openai_strict: false, gemini_form: GeminiForm::JsonSchema };
        for (target, format) in [
            (Provider::OpenaiChat, ImportFormat::Openai),
            (Provider::OpenaiResponses, ImportFormat::Openai),
            (Provider::Anthropic, ImportFormat::Anthropic),
            (Provider::Gemini, ImportFormat::Gemini),
            (Provider::Mcp, ImportFormat::Mcp),
        ] {
            let list = tool_list(target, &tools, &options).unwrap();
            let listed = match target {
                Provider::OpenaiChat => list[0]["function"]["parameters"].clone(),
                Provider::OpenaiResponses => list[0]["parameters"].clone(),
                Provider::Anthropic => list[0]["input_schema"].clone(),
                Provider::Gemini => list[0]["functionDeclarations"][0]["parametersJsonSchema"].clone(),
                Provider::Mcp => list["tools"][0]["inputSchema"].clone(),
            };
            let dir = tmp.path().join(target.as_str());
            std::fs::create_dir_all(&dir).unwrap();
            let imported = read(&dir, format, &list);
            let mut want = Vec::new();
            constraints(&listed, String::new(), &mut want);
            let mut got = Vec::new();
            constraints(&imported[0].parameters, String::new(), &mut got);
            for c in &want {
                prop_assert!(got.contains(c), "{target}: {c:?} lost\nlisted {listed:#}\nimported {:#}", imported[0].parameters);
            }
            // And the starter spec of the import checks clean.
            let specs = tmp.path().join(format!("{}-specs", target.as_str()));
            write_specs(&dir.join("list.json"), &dir, format, &specs, false, &ImportLimits::default()).unwrap();
            let (errors, _) = check(&specs);
            prop_assert!(errors.is_empty(), "{target}: {errors:?}");
        }
    }
}
