//! `toolgate export`: one provider tool list on stdout.

use std::path::PathBuf;

use clap::Args;

use crate::emit::{self, GeminiForm, ListOptions};
use crate::ir::Provider;

/// Arguments of `toolgate export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Spec files, folders or globs (default: the project's specs, or tool-specs/).
    pub paths: Vec<PathBuf>,
    /// The project file (default: ./toolgate.yaml if present).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The provider whose list format is written (`--target` is the older spelling).
    #[arg(
        long,
        alias = "target",
        value_parser = ["openai-chat", "openai-responses", "anthropic", "mcp", "gemini"]
    )]
    pub provider: String,
    /// Only the tools of this toolset.
    #[arg(long)]
    pub toolset: Option<String>,
    /// How Gemini declarations carry parameters: `json-schema` or `openapi`.
    #[arg(long, default_value = "json-schema", value_parser = ["json-schema", "openapi"])]
    pub gemini_form: String,
}

/// Runs `toolgate export`.
pub fn run(a: ExportArgs) -> miette::Result<u8> {
    let Some(provider) = Provider::parse(&a.provider) else {
        return Err(miette::miette!("unknown provider `{}`", a.provider));
    };
    let (_, bundle) = match super::build::load_bundle(&a.paths, &a.config)? {
        Ok(x) => x,
        Err(code) => return Ok(code),
    };
    let tools = match &a.toolset {
        Some(name) => emit::toolset_tools(&bundle, name).map_err(|e| miette::miette!("{e}"))?,
        None => bundle.tools.iter().collect(),
    };
    let mut options = ListOptions::for_project(&bundle.project);
    options.gemini_form = GeminiForm::parse(&a.gemini_form).unwrap_or_default();
    let list = emit::tool_list(provider, &tools, &options).map_err(|e| miette::miette!("{e}"))?;
    let text = emit::to_json_text(&list).map_err(|e| miette::miette!("{e}"))?;
    super::print(&text)?;
    Ok(super::EXIT_OK)
}
