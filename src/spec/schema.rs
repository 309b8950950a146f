//! The JSON Schemas of the spec format and of toolgate.yaml, generated from the syntax tree
//! types so they cannot drift from what the loader accepts.

use crate::spec::ast::ToolSpec;
use crate::spec::project_file::ProjectFile;

fn render(mut schema: schemars::Schema, title: &str, description: &str) -> String {
    if let Some(obj) = schema.as_object_mut() {
        obj.insert("title".into(), title.into());
        obj.insert("description".into(), description.into());
    }
    let mut s = serde_json::to_string_pretty(&schema).unwrap_or_default();
    s.push('\n');
    s
}

/// The JSON Schema of a tool spec file (one tool, or `tools: [...]`).
pub fn spec_schema() -> String {
    render(
        schemars::schema_for!(ToolSpec),
        "toolgate tool spec",
        "A tool contract: one tool per file, or several under `tools:`. See `toolgate explain` for the lint rules.",
    )
}

/// The JSON Schema of toolgate.yaml.
pub fn project_schema() -> String {
    render(
        schemars::schema_for!(ProjectFile),
        "toolgate project file",
        "toolgate.yaml: spec globs, workspace, toolsets, permission defaults, contexts, sandbox profiles, MCP servers, targets and lint settings.",
    )
}
