//! `toolgate import --from openai|anthropic|gemini|mcp FILE`: starter specs from a tool list a
//! team already ships.
//!
//! The file is read as `toolgate lint --from` reads it ([`crate::spec::import`]): an OpenAI
//! Chat or Responses `tools` list, Anthropic `tools`, Gemini `functionDeclarations` (either
//! parameter form; OpenAPI's upper-case type names and `nullable` become JSON Schema's), or an
//! MCP `tools/list` result. Each tool becomes one spec, `<out>/<tool>.yaml`, with its name,
//! title, description, parameters and result schema as the list has them — every constraint
//! kept — and conservative defaults: the effect from MCP annotations when they say enough,
//! else `external_side_effect`; every call asks a person until the contract is reviewed; a 30 s
//! timeout; bounded output; `exec: {handler: rust}`, for the team to bind its implementation
//! (or to replace with a command or an MCP server). Provider-defined tools (Anthropic's
//! `bash_…`, OpenAI's `web_search`) have no schema to import and are skipped.

use std::path::Path;

use serde_json::{Map, Value, json};

use crate::cli::import::limits::{ImportLimits, LimitName, Walk, check_tools, over};
use crate::cli::import::output::{comment_text, distinct_names, write_all, yaml_text};
use crate::ir::{Effect, Idempotency};
use crate::spec::import::{ImportFormat, ImportedTool};
use crate::spec::load::LoadedSpecs;

/// One tool of a list, as the starter spec needs it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ListedTool {
    /// The name in the list.
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub parameters: Value,
    pub result: Option<Value>,
    pub effect: Option<Effect>,
    pub idempotent: bool,
}

/// The tools of a tool-list file, or what is wrong with it.
pub(crate) fn read_list(
    path: &Path,
    cwd: &Path,
    format: ImportFormat,
) -> Result<Vec<ListedTool>, String> {
    let loaded: LoadedSpecs = crate::spec::import::load(&[path.to_path_buf()], cwd, format);
    if let Some(e) = loaded.errors.first() {
        let at = loaded
            .sources
            .get(e.span.source)
            .map(|f| {
                let lc = f.line_column(e.span.start);
                format!(":{}:{}", lc.line, lc.column)
            })
            .unwrap_or_default();
        return Err(format!("{}{at}: {}", path.display(), e.message));
    }
    let mut out = Vec::new();
    for file in &loaded.files {
        for (spec, meta) in file.tools.iter().zip(&file.imported) {
            if is_native(meta) {
                continue;
            }
            let s = &spec.value;
            let mut parameters = s
                .parameters
                .as_ref()
                .map(|n| n.to_json())
                .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
            let mut result = s.result.as_ref().map(|n| n.to_json());
            for schema in std::iter::once(&mut parameters).chain(result.as_mut()) {
                tidy(schema, 0);
            }
            if let Value::Object(p) = &mut parameters {
                p.entry("type").or_insert_with(|| json!("object"));
                p.entry("properties").or_insert_with(|| json!({}));
            }
            out.push(ListedTool {
                name: s.name.as_ref().map(|n| n.value.clone()).unwrap_or_default(),
                title: s.title.as_ref().map(|t| t.value.clone()),
                description: s.description.as_ref().map(|d| d.value.clone()),
                parameters,
                result,
                effect: s.effect.as_ref().map(|e| e.value),
                idempotent: s.idempotency.is_some(),
            });
        }
    }
    Ok(out)
}

fn is_native(meta: &ImportedTool) -> bool {
    meta.native.is_some()
}

/// Deepest schema nesting rewritten.
const MAX_DEPTH: usize = 64;

/// The schema keywords that hold a count.
const COUNTS: &[&str] = &[
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
];

/// A provider's schema as a spec's JSON Schema: no `$schema`, OpenAPI's `nullable: true`
/// (Gemini's `parameters`) as a type that admits null, and the counts Gemini's `Schema` writes
/// as strings (protobuf's JSON form of int64: `"maxLength": "80"`) as numbers.
fn tidy(schema: &mut Value, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match schema {
        Value::Object(o) => {
            if depth == 0 {
                o.remove("$schema");
            }
            if o.get("nullable") == Some(&Value::Bool(true))
                && let Some(Value::String(t)) = o.get("type").cloned()
            {
                o.remove("nullable");
                o.insert("type".into(), json!([t, "null"]));
            }
            for key in COUNTS {
                if let Some(n) = o
                    .get(*key)
                    .and_then(Value::as_str)
                    .and_then(|t| t.parse::<u64>().ok())
                {
                    o.insert((*key).into(), json!(n));
                }
            }
            for v in o.values_mut() {
                tidy(v, depth + 1);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|v| tidy(v, depth + 1)),
        _ => {}
    }
}

/// The starter spec of one listed tool, named `name` (a safe, distinct file stem): its file
/// stem and YAML text.
pub(crate) fn starter_spec(
    origin: &str,
    t: &ListedTool,
    name: String,
) -> Result<(String, String), String> {
    let effect = t.effect.unwrap_or(Effect::ExternalSideEffect);
    let idempotency = if effect.is_read_only() {
        Idempotency::Pure
    } else if t.idempotent {
        Idempotency::Idempotent
    } else {
        Idempotency::NonIdempotent
    };
    let description = t
        .description
        .as_deref()
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(str::to_owned)
        .unwrap_or_else(|| format!("Runs the tool `{}` imported from {origin}.", t.name));
    let mut spec = Map::new();
    spec.insert("name".into(), json!(name));
    spec.insert("version".into(), json!(1));
    if let Some(title) = &t.title {
        spec.insert("title".into(), json!(title));
    }
    spec.insert("description".into(), json!(description));
    spec.insert("effect".into(), json!(effect.as_str()));
    spec.insert("idempotency".into(), json!(idempotency.as_str()));
    spec.insert("parameters".into(), t.parameters.clone());
    if let Some(r) = &t.result {
        spec.insert("result".into(), r.clone());
    }
    let mut permissions = json!({
        "rules": [{
            "id": "review-imported",
            "ask": "true",
            "reason": format!("Imported from {origin}: a person approves each call until the contract is reviewed.")
        }]
    });
    if let Some(args) = super::import::example_arguments(&t.parameters) {
        permissions["examples"] = json!([{"args": args, "expect": "ask"}]);
    }
    spec.insert("permissions".into(), permissions);
    spec.insert("timeout".into(), json!("30s"));
    spec.insert(
        "output".into(),
        json!({"formatter": "text", "max_bytes": "32KiB", "max_lines": 400}),
    );
    spec.insert("exec".into(), json!({"handler": "rust"}));
    let body = yaml_text(&Value::Object(spec))?;
    let source = match t.effect {
        Some(_) => "from the tool's MCP annotations",
        None => "assumed: the list does not say what the tool changes",
    };
    let header = format!(
        "# Imported from {origin} (tool `{}`) by `toolgate import --from`.\n\
         # effect {}: {source}.\n\
         # Review the effect, the permissions and the limits, replace the review-imported rule\n\
         # with rules that fit the tool, and bind its handler (or replace `exec` with a command\n\
         # or an MCP server).\n",
        comment_text(&t.name),
        effect.as_str()
    );
    Ok((name, format!("{header}{body}")))
}

/// Writes the starter specs of a list file into `dir` within the limits; returns (tools,
/// written, kept) counts. Nothing is written when any tool passes a bound.
pub(crate) fn write_specs(
    path: &Path,
    cwd: &Path,
    format: ImportFormat,
    dir: &Path,
    force: bool,
    limits: &ImportLimits,
) -> Result<(usize, usize, usize), String> {
    let full = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    if let Ok(meta) = std::fs::metadata(&full)
        && meta.len() > limits.document_bytes
    {
        return Err(over(
            &format!("{} is {} bytes", path.display(), meta.len()),
            LimitName::Document,
            limits.document_bytes,
        ));
    }
    let tools = read_list(path, cwd, format)?;
    check_tools(tools.len(), &path.display().to_string(), limits)?;
    let mut walk = Walk::new(limits);
    for t in &tools {
        let at = format!("{}, tool `{}`", path.display(), comment_text(&t.name));
        walk.value(&t.parameters, &format!("{at} parameters"))?;
        if let Some(r) = &t.result {
            walk.value(r, &format!("{at} result"))?;
        }
    }
    let origin = format!("the {} tool list {}", format_name(format), file_label(path));
    let names = distinct_names(tools.iter().map(|t| t.name.as_str()));
    let mut files = Vec::with_capacity(tools.len());
    for (t, name) in tools.iter().zip(names) {
        files.push(starter_spec(&origin, t, name)?);
    }
    super::import::output::check_output(&files, limits)
        .map_err(|m| format!("{}: {m}", path.display()))?;
    let (written, kept) = write_all(dir, &files, force)?;
    Ok((tools.len(), written, kept))
}

fn format_name(format: ImportFormat) -> &'static str {
    match format {
        ImportFormat::Openai => "OpenAI",
        ImportFormat::Anthropic => "Anthropic",
        ImportFormat::Gemini => "Gemini",
        ImportFormat::Mcp => "MCP",
    }
}

fn file_label(path: &Path) -> String {
    path.file_name()
        .map(|n| format!("`{}`", comment_text(&n.to_string_lossy())))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
