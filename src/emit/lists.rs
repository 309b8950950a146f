//! The provider lists of a build — the whole bundle's and each toolset's — with each tool
//! converted once.
//!
//! A tool's entry in each format (its OpenAI function, whose strict conversion serves both Chat
//! Completions and Responses; its Anthropic tool, MCP `Tool` and Gemini declaration) is worked
//! out once, in parallel across tools, and written once as pretty JSON. Every list holding the
//! tool is then put together from those texts, each line indented to the depth the list puts
//! its entries at. The result is byte for byte what [`to_json_text`] of [`tool_list`] gives for
//! the same tools (`tests/emit_snapshots.rs` checks this for every fixture), and what
//! `toolgate export` prints.
//!
//! [`to_json_text`]: crate::emit::to_json_text
//! [`tool_list`]: crate::emit::tool_list

use std::collections::HashMap;

use rayon::prelude::*;
use serde_json::Value;

use crate::emit::{EmitError, ListOptions, OutputFiles, anthropic, gemini, mcp, openai};
use crate::ir::{Provider, ToolDefinition};

/// Each tool's entry text per target, in [`Provider::ALL`] order.
pub(crate) struct Entries<'a> {
    /// Tool names to their index in `texts` (the first tool of a name, as
    /// [`crate::ir::Bundle::tool`] finds it).
    index: HashMap<&'a str, usize>,
    texts: Vec<[String; 5]>,
}

impl<'a> Entries<'a> {
    /// Converts every tool once for every target.
    pub(crate) fn new(
        tools: &'a [ToolDefinition],
        options: &ListOptions,
    ) -> Result<Entries<'a>, EmitError> {
        let texts = tools
            .par_iter()
            .map(|t| entry_texts(t, options))
            .collect::<Result<_, EmitError>>()?;
        let mut index = HashMap::with_capacity(tools.len());
        for (i, t) in tools.iter().enumerate() {
            index.entry(t.name.as_str()).or_insert(i);
        }
        Ok(Entries { index, texts })
    }

    /// The five list files (`<target>.json`) of every tool.
    pub(crate) fn all_files(&self) -> OutputFiles {
        self.files(&self.texts.iter().collect::<Vec<_>>())
    }

    /// The five list files of some of the tools (sorted by name by the caller, as
    /// [`crate::emit::toolset_tools`] returns them).
    pub(crate) fn files_of(&self, members: &[&ToolDefinition]) -> OutputFiles {
        let texts: Vec<&[String; 5]> = members
            .iter()
            .filter_map(|m| self.index.get(m.name.as_str()))
            .map(|&i| &self.texts[i])
            .collect();
        self.files(&texts)
    }

    fn files(&self, texts: &[&[String; 5]]) -> OutputFiles {
        let mut files = OutputFiles::new();
        for (i, target) in Provider::ALL.iter().enumerate() {
            let entries: Vec<&str> = texts.iter().map(|e| e[i].as_str()).collect();
            files.insert(
                format!("{}.json", target.as_str()),
                list_text(*target, &entries),
            );
        }
        files
    }
}

/// One tool's entries, as pretty JSON, in [`Provider::ALL`] order.
fn entry_texts(tool: &ToolDefinition, options: &ListOptions) -> Result<[String; 5], EmitError> {
    let function = openai::function(tool, options.openai_strict)?;
    let mut out: [String; 5] = Default::default();
    for (slot, target) in out.iter_mut().zip(Provider::ALL) {
        let value = match target {
            Provider::Anthropic => anthropic::tool_param(tool)?,
            Provider::Gemini => gemini::declaration(tool, options.gemini_form)?,
            Provider::Mcp => mcp::tool_object(tool)?,
            Provider::OpenaiChat => openai::chat_entry(&function),
            Provider::OpenaiResponses => openai::responses_entry(&function),
        };
        *slot = pretty(&value)?;
    }
    Ok(out)
}

fn pretty(value: &Value) -> Result<String, EmitError> {
    Ok(serde_json::to_string_pretty(value)?)
}

/// A list file from its entries' texts: the shape of each target's list as serde_json's pretty
/// printer writes it (two spaces per level, `[]` when empty, one trailing newline).
pub(crate) fn list_text(target: Provider, entries: &[&str]) -> String {
    // What comes before and after the entries, and how deep they sit.
    let (open, close, depth, empty) = match target {
        Provider::OpenaiChat | Provider::OpenaiResponses | Provider::Anthropic => {
            ("[\n", "\n]\n", 1, "[]\n")
        }
        Provider::Mcp => (
            "{\n  \"tools\": [\n",
            "\n  ]\n}\n",
            2,
            "{\n  \"tools\": []\n}\n",
        ),
        Provider::Gemini => (
            "[\n  {\n    \"functionDeclarations\": [\n",
            "\n    ]\n  }\n]\n",
            3,
            "[\n  {\n    \"functionDeclarations\": []\n  }\n]\n",
        ),
    };
    if entries.is_empty() {
        return empty.to_owned();
    }
    let indent = "  ".repeat(depth);
    let size: usize = entries.iter().map(|e| e.len() * 2).sum();
    let mut out = String::with_capacity(open.len() + size + close.len());
    out.push_str(open);
    for (i, entry) in entries.iter().enumerate() {
        if i > 0 {
            out.push_str(",\n");
        }
        // Pretty JSON escapes newlines inside strings, so every line break is structural.
        for (j, line) in entry.split('\n').enumerate() {
            if j > 0 {
                out.push('\n');
            }
            out.push_str(&indent);
            out.push_str(line);
        }
    }
    out.push_str(close);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The assembled text equals serde_json's own for nested entries, several and none.
    #[test]
    fn list_text_matches_serde_json() {
        let a = json!({"name": "a", "schema": {"type": "object", "properties": {}, "required": []}, "list": [1, {"x": "multi\nline"}]});
        let b = json!({"name": "b"});
        for values in [vec![], vec![a.clone()], vec![a, b]] {
            let texts: Vec<String> = values.iter().map(|v| pretty(v).unwrap()).collect();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            let shapes = [
                (Provider::Anthropic, json!(values)),
                (Provider::Mcp, json!({"tools": values})),
                (Provider::Gemini, json!([{"functionDeclarations": values}])),
            ];
            for (target, whole) in shapes {
                let mut expected = serde_json::to_string_pretty(&whole).unwrap();
                expected.push('\n');
                assert_eq!(list_text(target, &refs), expected, "{target:?}");
            }
        }
    }
}
