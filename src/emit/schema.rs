//! JSON Schema 2020-12 documents of each tool's arguments and result (`schemas/`).
//!
//! These are the contract's own schemas, as authored (key order and `x-…` keywords kept, since
//! validators ignore unknown keywords), with `$schema` put first and a `title` naming the tool.

use serde_json::{Map, Value, json};

use crate::ir::ToolDefinition;

/// The 2020-12 meta-schema URI.
pub const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";

/// The arguments schema document.
pub fn arguments(tool: &ToolDefinition) -> Value {
    document(&tool.parameters, &format!("{} arguments", tool.name))
}

/// The result schema document, when the tool declares a result.
pub fn result(tool: &ToolDefinition) -> Option<Value> {
    tool.result
        .as_ref()
        .map(|r| document(r, &format!("{} result", tool.name)))
}

fn document(schema: &Value, title: &str) -> Value {
    let mut out = Map::new();
    out.insert("$schema".into(), json!(DIALECT));
    match schema {
        Value::Object(obj) => {
            if !obj.contains_key("title") {
                out.insert("title".into(), json!(title));
            }
            for (k, v) in obj {
                if k != "$schema" {
                    out.insert(k.clone(), v.clone());
                }
            }
        }
        Value::Bool(false) => {
            out.insert("not".into(), json!({}));
        }
        _ => {}
    }
    Value::Object(out)
}
