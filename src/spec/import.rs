//! Reading tool lists that teams already ship (OpenAI, Anthropic, Gemini, MCP) as spec ASTs, so every
//! rule that needs no toolgate-only key can judge them, with spans into the JSON file.
//!
//! JSON is parsed by the same YAML loader (JSON is YAML's flow syntax), which keeps a span on
//! every key and value. MCP annotations, where present, imply an effect for the effect rules.
//! Provider-defined tools (Anthropic's `{type: bash_20250124, name: bash}`, OpenAI's
//! `{type: web_search}`) are recognised by their `type`: the provider supplies their description
//! and schema, so no rule judges them (see [`ImportedTool::native`]). Gemini's schema dialect
//! (OpenAPI's, with upper-case type names such as `STRING`) is read as JSON Schema with the type
//! names lower-cased, so the same rules apply.

use std::path::Path;

use crate::diagnostic::{Diagnostic, Severity};
use crate::ir::{Effect, Idempotency};
use crate::spec::ast::{StringOr, ToolSpec};
use crate::spec::load::{LoadedSpecs, SpecFile, parse_in, read_source};
use crate::spec::source::{SourceId, Span, TextRange};
use crate::spec::yaml::{Node, NodeValue, Spanned};

/// The tool-list formats `toolgate lint --from` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportFormat {
    /// OpenAI Chat Completions (`{type: function, function: {...}}`) or Responses (flat) tools.
    Openai,
    /// Anthropic Messages tools (`{name, description, input_schema}`).
    Anthropic,
    /// MCP tools (`{name, title, description, inputSchema, outputSchema, annotations}`), as a
    /// `tools/list` result, a JSON-RPC response holding one, or a bare list.
    Mcp,
    /// Gemini function declarations (`{name, description, parameters | parametersJsonSchema,
    /// response | responseJsonSchema}`), as `{functionDeclarations: [...]}`, a list of such tools,
    /// a request's `{tools: [...]}`, or a bare list.
    Gemini,
}

impl ImportFormat {
    /// Parses `openai`, `anthropic`, `gemini`, `mcp`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "openai" => Some(ImportFormat::Openai),
            "anthropic" => Some(ImportFormat::Anthropic),
            "gemini" => Some(ImportFormat::Gemini),
            "mcp" => Some(ImportFormat::Mcp),
            _ => None,
        }
    }
}

/// What an imported tool carried beside name, description and schemas.
#[derive(Clone, Debug, Default)]
pub struct ImportedTool {
    /// MCP annotations, as written.
    pub annotations: Option<serde_json::Value>,
    /// Whether the effect was inferred from annotations (rather than unknown).
    pub effect_inferred: bool,
    /// The provider's type of a provider-defined tool (`bash_20250124`, `web_search`): the
    /// provider supplies its description and schema, so the list carries neither.
    pub native: Option<String>,
}

/// Names Anthropic reserves for its own (typed) tools, each with one `type` that serves it.
/// A tool list may send them as `{type, name}` only; a list that sends one of these names with a
/// schema and no description most likely means the model-native tool.
const ANTHROPIC_NATIVE_NAMES: &[(&str, &str)] = &[
    ("bash", "bash_20250124"),
    ("computer", "computer_20250124"),
    ("str_replace_editor", "text_editor_20250124"),
    ("str_replace_based_edit_tool", "text_editor_20250429"),
    ("web_search", "web_search_20250305"),
    ("code_execution", "code_execution_20250522"),
];

/// The `type` of Anthropic's own tool of this name (`bash` → `bash_20250124`), if it has one.
pub fn anthropic_native_type(name: &str) -> Option<&'static str> {
    ANTHROPIC_NATIVE_NAMES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| *t)
}

/// The provider type of a provider-defined tool: Anthropic tools whose `type` is not `custom`,
/// OpenAI tools whose `type` is neither `function` nor `custom` (the Responses API's built-ins).
fn native_type(item: &Node, format: ImportFormat) -> Option<String> {
    let t = item.get("type").and_then(Node::as_str)?;
    let native = match format {
        ImportFormat::Anthropic => t != "custom",
        ImportFormat::Openai => {
            !matches!(t, "function" | "custom") && item.get("function").is_none()
        }
        ImportFormat::Mcp | ImportFormat::Gemini => false,
    };
    native.then(|| t.to_owned())
}

/// Loads tool-list files.
pub fn load(paths: &[std::path::PathBuf], cwd: &Path, format: ImportFormat) -> LoadedSpecs {
    let mut loaded = LoadedSpecs::empty(cwd.to_path_buf());
    loaded.import = Some(format);
    for p in paths {
        let full = if p.is_absolute() {
            p.clone()
        } else {
            cwd.join(p)
        };
        let id = match read_source(&mut loaded.sources, &full, p.clone()) {
            Ok(id) => id,
            Err(e) => {
                loaded.errors.push(e);
                continue;
            }
        };
        match parse_in::<Node>(&loaded.sources, id) {
            Ok(root) => match import_list(id, &root, format) {
                Ok((tools, imported)) => loaded.files.push(SpecFile {
                    source: id,
                    tools,
                    imported,
                }),
                Err(e) => loaded.errors.push(e),
            },
            Err(e) => loaded.errors.push(e),
        }
    }
    loaded
}

/// Turns the root of a tool-list file into spec ASTs.
pub fn import_list(
    id: SourceId,
    root: &Node,
    format: ImportFormat,
) -> Result<(Vec<Spanned<ToolSpec>>, Vec<ImportedTool>), Diagnostic> {
    let found = match format {
        ImportFormat::Gemini => gemini_declarations(root),
        _ => find_list(root).map(|l| l.iter().collect()),
    };
    let list: Vec<&Node> = found.ok_or_else(|| {
        let expected = match format {
            ImportFormat::Gemini => {
                "no function declarations found: expected `{\"functionDeclarations\": [...]}`, a list of such tools, `{\"tools\": [...]}`, or a JSON array of declarations"
            }
            _ => {
                "no tool list found: expected a JSON array of tools, `{\"tools\": [...]}`, or a JSON-RPC `tools/list` response"
            }
        };
        Diagnostic::new(
            None,
            Severity::Error,
            Span::new(id, root.range.start as usize, 0),
            expected,
        )
    })?;
    let mut tools = Vec::new();
    let mut meta = Vec::new();
    for item in list {
        let Some(t) = tool_object(item, format) else {
            return Err(Diagnostic::new(
                None,
                Severity::Error,
                item.range.in_file(id),
                format!(
                    "not a tool: expected a mapping with `name`, found {}",
                    item.kind()
                ),
            ));
        };
        let (mut spec, mut m) = convert(t, item.range, format);
        m.native = native_type(item, format);
        if let Some(native) = &m.native
            && spec.name.as_ref().is_none_or(|n| n.value.is_empty())
        {
            // OpenAI's built-ins have no name: their type is what the model calls.
            spec.name = Some(Spanned::new(native.clone(), item.range));
        }
        tools.push(Spanned::new(spec, item.range));
        meta.push(m);
    }
    Ok((tools, meta))
}

/// Gemini's function declarations: under `functionDeclarations` (or `function_declarations`) of
/// one tool, of each tool of a list or of a request's `tools`, or a bare list of declarations.
fn gemini_declarations(root: &Node) -> Option<Vec<&Node>> {
    match &root.value {
        NodeValue::Seq(items) => Some(gemini_list(items)),
        NodeValue::Map(_) => {
            gemini_tool(root).or_else(|| match root.get("tools").map(|t| &t.value) {
                Some(NodeValue::Seq(items)) => Some(gemini_list(items)),
                _ => None,
            })
        }
        _ => None,
    }
}

/// The declarations of one Gemini tool (`{functionDeclarations: [...]}`).
fn gemini_tool(t: &Node) -> Option<Vec<&Node>> {
    let d = t
        .get("functionDeclarations")
        .or_else(|| t.get("function_declarations"))?;
    matches!(d.value, NodeValue::Seq(_)).then(|| d.items().iter().collect())
}

/// A list of Gemini tools (their declarations, in order), or a bare list of declarations.
fn gemini_list(items: &[Node]) -> Vec<&Node> {
    if items.iter().any(|i| gemini_tool(i).is_some()) {
        items.iter().filter_map(gemini_tool).flatten().collect()
    } else {
        items.iter().collect()
    }
}

fn find_list(root: &Node) -> Option<&[Node]> {
    match &root.value {
        NodeValue::Seq(items) => Some(items),
        NodeValue::Map(_) => root
            .get("tools")
            .or_else(|| root.get("result").and_then(|r| r.get("tools")))
            .and_then(|t| match &t.value {
                NodeValue::Seq(items) => Some(items.as_slice()),
                _ => None,
            }),
        _ => None,
    }
}

/// The mapping that holds name/description/schema (OpenAI Chat nests it under `function`).
fn tool_object(item: &Node, format: ImportFormat) -> Option<&Node> {
    if !item.is_map() {
        return None;
    }
    if format == ImportFormat::Openai
        && let Some(f) = item.get("function").filter(|f| f.is_map())
    {
        return Some(f);
    }
    Some(item)
}

fn string(n: Option<&Node>) -> Option<Spanned<String>> {
    n.and_then(|n| n.as_str().map(|s| Spanned::new(s.to_owned(), n.range)))
}

fn convert(t: &Node, whole: TextRange, format: ImportFormat) -> (ToolSpec, ImportedTool) {
    let mut parameters = [
        "inputSchema",
        "input_schema",
        "parametersJsonSchema",
        "parameters",
    ]
    .iter()
    .find_map(|k| t.get(k))
    .cloned();
    // `response` means a result schema only in Gemini's declarations.
    let result_keys: &[&str] = match format {
        ImportFormat::Gemini => &["responseJsonSchema", "response"],
        _ => &["outputSchema", "output_schema"],
    };
    let mut result = result_keys.iter().find_map(|k| t.get(k)).cloned();
    if format == ImportFormat::Gemini {
        for schema in [&mut parameters, &mut result].into_iter().flatten() {
            lower_type_names(schema, 0);
        }
    }
    let annotations = t.get("annotations").filter(|a| a.is_map());
    let (effect, idempotent) = annotations.map(infer_effect).unwrap_or((None, false));
    let spec = ToolSpec {
        name: string(t.get("name")).or_else(|| Some(Spanned::new(String::new(), whole))),
        title: string(t.get("title")).or_else(|| string(annotations.and_then(|a| a.get("title")))),
        description: string(t.get("description")),
        effect: effect.map(|(e, r)| Spanned::new(e, r)),
        idempotency: idempotent.then(|| {
            Spanned::new(
                StringOr::String(Idempotency::Idempotent.as_str().to_owned()),
                annotations.map(|a| a.range).unwrap_or(whole),
            )
        }),
        parameters,
        result,
        ..ToolSpec::default()
    };
    let meta = ImportedTool {
        annotations: annotations.map(Node::to_json),
        effect_inferred: spec.effect.is_some(),
        native: None,
    };
    (spec, meta)
}

/// Deepest schema nesting rewritten (the loader caps YAML depth; this bounds the recursion too).
const MAX_SCHEMA_DEPTH: usize = 64;

/// Gemini's OpenAPI-style type names (`STRING`, `OBJECT`) as JSON Schema's (`string`,
/// `object`), everywhere in a schema; other values are left as written.
fn lower_type_names(node: &mut Node, depth: usize) {
    if depth > MAX_SCHEMA_DEPTH {
        return;
    }
    const GEMINI_TYPES: &[&str] = &[
        "STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL",
    ];
    match &mut node.value {
        NodeValue::Map(entries) => {
            for (k, v) in entries.iter_mut() {
                if k.name == "type"
                    && let NodeValue::String(t) = &mut v.value
                    && GEMINI_TYPES.contains(&t.as_str())
                {
                    *t = t.to_ascii_lowercase();
                    continue;
                }
                lower_type_names(v, depth + 1);
            }
        }
        NodeValue::Seq(items) => {
            for i in items.iter_mut() {
                lower_type_names(i, depth + 1);
            }
        }
        _ => {}
    }
}

/// The effect MCP annotations imply, if they say enough, with the span of the deciding hint.
fn infer_effect(a: &Node) -> (Option<(Effect, TextRange)>, bool) {
    let hint = |k: &str| a.get(k).and_then(|n| n.as_bool().map(|b| (b, n.range)));
    let read_only = hint("readOnlyHint");
    let destructive = hint("destructiveHint");
    let open_world = hint("openWorldHint");
    let idempotent = hint("idempotentHint").is_some_and(|(b, _)| b);
    let effect = effect_from_hints(
        read_only.map(|h| h.0),
        destructive.map(|h| h.0),
        open_world.map(|h| h.0),
    );
    let range = match (read_only, destructive) {
        (Some((true, r)), _) => Some(r),
        (_, Some((_, r))) => Some(r),
        _ => None,
    };
    (effect.zip(range), idempotent)
}

/// The effect MCP annotation hints imply, if they say enough. MCP's defaults
/// (`destructiveHint: true`, `openWorldHint: true`) are not assumed: an unstated hint leaves
/// the effect unknown.
pub fn effect_from_hints(
    read_only: Option<bool>,
    destructive: Option<bool>,
    open_world: Option<bool>,
) -> Option<Effect> {
    match (read_only, destructive, open_world) {
        (Some(true), _, Some(true)) => Some(Effect::NetworkRead),
        (Some(true), _, _) => Some(Effect::ReadOnly),
        (_, Some(true), _) => Some(Effect::Destructive),
        (Some(false) | None, Some(false), Some(true)) => Some(Effect::NetworkWrite),
        (Some(false) | None, Some(false), Some(false) | None) => Some(Effect::LocalWrite),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::source::SourceFile;

    fn import(text: &str, format: ImportFormat) -> Vec<(ToolSpec, ImportedTool)> {
        let f = SourceFile::new("t.json", text);
        let root: Node = crate::spec::yaml::parse(text, |l, c| f.offset_of(l, c)).unwrap();
        let (tools, meta) = import_list(SourceId(0), &root, format).unwrap();
        tools.into_iter().map(|t| t.value).zip(meta).collect()
    }

    #[test]
    fn reads_the_three_formats() {
        let openai = r#"[{"type": "function", "function": {"name": "get_weather", "description": "Weather.", "parameters": {"type": "object", "properties": {}}}}]"#;
        let t = import(openai, ImportFormat::Openai);
        assert_eq!(t[0].0.name.as_ref().unwrap().value, "get_weather");
        assert!(t[0].0.parameters.is_some());

        let mcp = r#"{"tools": [{"name": "read", "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true, "openWorldHint": false}}]}"#;
        let t = import(mcp, ImportFormat::Mcp);
        assert_eq!(t[0].0.effect.as_ref().unwrap().value, Effect::ReadOnly);
        assert!(t[0].1.effect_inferred);

        let anthropic =
            r#"[{"name": "x", "input_schema": {"type": "object"}, "source": {"repo": "a/b"}}]"#;
        let t = import(anthropic, ImportFormat::Anthropic);
        assert!(t[0].0.effect.is_none());
        assert_eq!(t[0].1.native, None);
    }

    #[test]
    fn reads_gemini_declarations() {
        let one = r#"{"functionDeclarations": [{"name": "get_weather", "description": "Weather.", "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}}, "response": {"type": "OBJECT", "properties": {"temp": {"type": "NUMBER"}}}}]}"#;
        let t = import(one, ImportFormat::Gemini);
        assert_eq!(t.len(), 1);
        let p = t[0].0.parameters.as_ref().unwrap();
        assert_eq!(p.get("type").and_then(Node::as_str), Some("object"));
        assert_eq!(
            p.at_pointer("/properties/city/type").and_then(Node::as_str),
            Some("string")
        );
        assert!(t[0].0.result.is_some());

        let request = r#"{"tools": [{"functionDeclarations": [{"name": "a"}, {"name": "b"}]}, {"googleSearch": {}}]}"#;
        let names: Vec<String> = import(request, ImportFormat::Gemini)
            .into_iter()
            .map(|(s, _)| s.name.unwrap().value)
            .collect();
        assert_eq!(names, ["a", "b"]);

        let bare = r#"[{"name": "c", "parametersJsonSchema": {"type": "object"}}]"#;
        let t = import(bare, ImportFormat::Gemini);
        assert_eq!(t[0].0.name.as_ref().unwrap().value, "c");
        assert!(t[0].0.parameters.is_some());
    }

    #[test]
    fn recognises_provider_defined_tools() {
        let anthropic = r#"[{"type": "bash_20250124", "name": "bash"}, {"type": "custom", "name": "mine", "input_schema": {"type": "object"}}]"#;
        let t = import(anthropic, ImportFormat::Anthropic);
        assert_eq!(t[0].1.native.as_deref(), Some("bash_20250124"));
        assert_eq!(t[1].1.native, None);

        let openai =
            r#"[{"type": "web_search"}, {"type": "function", "name": "f", "parameters": {}}]"#;
        let t = import(openai, ImportFormat::Openai);
        assert_eq!(t[0].1.native.as_deref(), Some("web_search"));
        assert_eq!(t[0].0.name.as_ref().unwrap().value, "web_search");
        assert_eq!(t[1].1.native, None);

        // MCP has no provider-defined tools: `type` means nothing there.
        let mcp = r#"[{"type": "bash_20250124", "name": "bash", "inputSchema": {}}]"#;
        assert_eq!(import(mcp, ImportFormat::Mcp)[0].1.native, None);

        assert_eq!(anthropic_native_type("computer"), Some("computer_20250124"));
        assert_eq!(anthropic_native_type("shell"), None);
    }
}
