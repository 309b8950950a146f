//! Emitters: from the IR ([`crate::ir::Bundle`]) to what a harness embeds and what a model reads.
//!
//! - [`schema`]: JSON Schema 2020-12 of each tool's arguments and result;
//! - [`openai`], [`anthropic`], [`gemini`], [`mcp`]: provider tool lists, each provider's rules
//!   applied (through the shared steps in [`rewrite`]);
//! - [`rust`]: a crate of typed argument/result structs, handler traits and a builder;
//! - `lists`: every provider list of a build (the bundle's and each toolset's), each tool
//!   converted once;
//! - [`output`]: the set of files of a build, written atomically or compared with a folder;
//! - [`fingerprint`]: what a build's output depends on, so an up-to-date folder is not rebuilt;
//! - [`dropped`]: which keywords a target moves into descriptions (for the linter).
//!
//! Every emitter is deterministic: tools sorted by name, the author's key order kept, a trailing
//! newline on every file.

pub mod anthropic;
pub mod dropped;
pub mod fingerprint;
pub mod gemini;
pub(crate) mod lists;
pub mod mcp;
pub mod openai;
pub mod output;
pub mod rewrite;
pub mod rust;
pub mod schema;

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde_json::Value;

use crate::ir::{Bundle, ProjectConfig, Provider, Target, ToolDefinition};

pub use output::OutputFiles;

/// How Gemini function declarations carry their parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GeminiForm {
    /// `parametersJsonSchema` (JSON Schema; the default).
    #[default]
    JsonSchema,
    /// `parameters`: the OpenAPI 3.0 subset (`Schema` protobuf).
    OpenApi,
}

impl GeminiForm {
    /// Parses `json-schema` or `openapi`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "json-schema" => Some(GeminiForm::JsonSchema),
            "openapi" => Some(GeminiForm::OpenApi),
            _ => None,
        }
    }
}

/// Choices that shape the provider lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListOptions {
    /// Emit OpenAI tools with `strict: true` where the schema allows it.
    pub openai_strict: bool,
    /// The Gemini parameter form.
    pub gemini_form: GeminiForm,
}

impl Default for ListOptions {
    fn default() -> Self {
        ListOptions {
            openai_strict: true,
            gemini_form: GeminiForm::JsonSchema,
        }
    }
}

impl ListOptions {
    /// The options a project's targets ask for: strict OpenAI unless the project targets
    /// `openai` without `openai-strict`.
    pub fn for_project(project: &ProjectConfig) -> Self {
        let strict = project.targets.contains(&Target::OpenaiStrict)
            || !project.targets.contains(&Target::Openai);
        ListOptions {
            openai_strict: strict,
            gemini_form: GeminiForm::JsonSchema,
        }
    }
}

/// A failure to emit: a contract a target cannot carry, or a toolgate bug.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EmitError {
    /// A tool or property name the target rejects.
    #[error("{target}: {what} `{name}` of tool `{tool}` does not match {rule}")]
    InvalidName {
        /// The provider (or `files` for an output file name).
        target: &'static str,
        /// `tool name` or `property name`.
        what: &'static str,
        /// The tool.
        tool: String,
        /// The offending name.
        name: String,
        /// The rule it breaks.
        rule: &'static str,
    },
    /// Two tools would be called by one name at a provider (the names it rejects become the
    /// same stand-in, [`crate::ir::Provider::tool_name`]).
    #[error("{provider}: tools {} would all be called `{name}`; rename one so that the names differ in letters, digits, `_` or `-`", .tools.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>().join(", "))]
    NameCollision {
        /// The provider.
        provider: &'static str,
        /// The name they would share.
        name: String,
        /// The tools.
        tools: Vec<String>,
    },
    /// A schema whose subschemas, `$ref`s followed, nest deeper than the Rust emitter maps.
    #[error(
        "rust: the schema `{scope}` nests deeper than {limit} subschemas once its `$ref`s are followed; flatten the chain of definitions"
    )]
    TooDeep {
        /// The schema: the tool and `args` or `result` (`read_file/args`).
        scope: String,
        /// The limit ([`crate::emit::rust::types::MAX_TYPE_DEPTH`]).
        limit: usize,
    },
    /// Generated Rust did not parse: a toolgate bug.
    #[error("generated Rust for `{tool}` does not parse ({message}); please report this bug")]
    InvalidTokens {
        /// The tool (or item) whose code failed.
        tool: String,
        /// The parser's message.
        message: String,
    },
    /// A template failed to render: a toolgate bug.
    #[error("template `{name}` failed: {message}")]
    Template {
        /// The template.
        name: String,
        /// What went wrong.
        message: String,
    },
    /// JSON serialization failed.
    #[error("cannot serialize JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// `--toolset` names no toolset.
    #[error("no toolset named `{name}` (toolsets: {})", .known.join(", "))]
    UnknownToolset {
        /// The name asked for.
        name: String,
        /// The toolsets there are.
        known: Vec<String>,
    },
    /// A toolset lists a tool that does not exist.
    #[error("toolset `{toolset}` lists `{tool}`, which is not a tool of the project")]
    UnknownToolsetMember {
        /// The toolset.
        toolset: String,
        /// The missing tool.
        tool: String,
    },
    /// Reading or writing the output folder failed.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// The members of a toolset, sorted by name.
pub fn toolset_tools<'a>(
    bundle: &'a Bundle,
    name: &str,
) -> Result<Vec<&'a ToolDefinition>, EmitError> {
    let Some(set) = bundle.project.toolsets.get(name) else {
        return Err(EmitError::UnknownToolset {
            name: name.to_owned(),
            known: bundle.project.toolsets.keys().cloned().collect(),
        });
    };
    let mut out = Vec::with_capacity(set.tools.len());
    for member in &set.tools {
        let tool = bundle
            .tool(member)
            .ok_or_else(|| EmitError::UnknownToolsetMember {
                toolset: name.to_owned(),
                tool: member.clone(),
            })?;
        out.push(tool);
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out.dedup_by(|a, b| a.name == b.name);
    Ok(out)
}

/// One provider list for the given tools (sorted by name by the caller).
pub fn tool_list(
    provider: Provider,
    tools: &[&ToolDefinition],
    options: &ListOptions,
) -> Result<Value, EmitError> {
    check_collisions(provider, tools.iter().map(|t| t.name.as_str()))?;
    match provider {
        Provider::OpenaiChat => openai::chat(tools, options.openai_strict),
        Provider::OpenaiResponses => openai::responses(tools, options.openai_strict),
        Provider::Anthropic => anthropic::tools(tools),
        Provider::Mcp => mcp::list_tools_result(tools),
        Provider::Gemini => gemini::tools(tools, options.gemini_form),
    }
}

/// Refuses a list in which two tools would be called by one name at the provider.
pub fn check_collisions<'a>(
    provider: Provider,
    names: impl IntoIterator<Item = &'a str>,
) -> Result<(), EmitError> {
    let names = crate::ir::ProviderNames::new(provider, names);
    match names.collisions().first() {
        None => Ok(()),
        Some((name, tools)) => Err(EmitError::NameCollision {
            provider: provider.as_str(),
            name: name.clone(),
            tools: tools.clone(),
        }),
    }
}

/// Pretty JSON with a trailing newline: the form of every emitted JSON file.
pub fn to_json_text(value: &Value) -> Result<String, EmitError> {
    let mut s = serde_json::to_string_pretty(value)?;
    s.push('\n');
    Ok(s)
}

/// Checks a name against a simple character-class rule: first character from `first`, the rest
/// from `rest`, at most `max` characters.
pub(crate) fn name_matches(
    name: &str,
    first: fn(char) -> bool,
    rest: fn(char) -> bool,
    max: usize,
) -> bool {
    let mut chars = name.chars();
    let Some(c) = chars.next() else {
        return false;
    };
    first(c) && chars.all(rest) && name.chars().count() <= max
}

/// Truncates text to at most `max` characters, marking the cut with `…`.
pub(crate) fn truncate_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// What `toolgate build` produces.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BuildOptions {
    /// Provider list choices.
    pub lists: ListOptions,
    /// The generated crate (`rust/`), when wanted.
    pub rust: Option<rust::RustOptions>,
}

/// Every file of a build: `bundle.json`, `schemas/`, `tools/`, `toolsets/<name>/tools/` and
/// `rust/`, relative to the output folder, with the build's [`fingerprint`].
pub fn build_files(bundle: &Bundle, options: &BuildOptions) -> Result<OutputFiles, EmitError> {
    let bundle_json = bundle_json(bundle)?;
    let fingerprint = fingerprint::fingerprint(&bundle_json, options);
    files_of(bundle, bundle_json, fingerprint, options)
}

/// What [`write_build`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Written {
    /// Files of the build.
    pub files: usize,
    /// Files written or removed because their content changed.
    pub changed: usize,
    /// Whether the folder already held this build (same fingerprint, files untouched), so
    /// nothing was emitted.
    pub skipped: bool,
}

/// Builds into `dir`: skips emitting when the folder already holds the output of a build with
/// the same fingerprint ([`output::current`]), else writes [`build_files`] with
/// [`OutputFiles::write_to`].
pub fn write_build(
    bundle: &Bundle,
    options: &BuildOptions,
    dir: &Path,
) -> Result<Written, EmitError> {
    let bundle_json = bundle_json(bundle)?;
    let fingerprint = fingerprint::fingerprint(&bundle_json, options);
    if let Some(files) = output::current(dir, &fingerprint) {
        return Ok(Written {
            files,
            changed: 0,
            skipped: true,
        });
    }
    let files = files_of(bundle, bundle_json, fingerprint, options)?;
    let changed = files.write_to(dir)?;
    Ok(Written {
        files: files.len(),
        changed,
        skipped: false,
    })
}

/// The bundle as `bundle.json` holds it.
fn bundle_json(bundle: &Bundle) -> Result<String, EmitError> {
    let mut text = serde_json::to_string_pretty(bundle)?;
    text.push('\n');
    Ok(text)
}

fn files_of(
    bundle: &Bundle,
    bundle_json: String,
    fingerprint: String,
    options: &BuildOptions,
) -> Result<OutputFiles, EmitError> {
    // The Rust crate is the larger half of the work: it runs beside the JSON files, which
    // spread over the remaining threads.
    let (rust, json) = rayon::join(
        || {
            options
                .rust
                .as_ref()
                .map(|r| rust::emit_crate(bundle, &bundle_json, r))
                .transpose()
        },
        || json_files(bundle, &bundle_json, &options.lists),
    );
    let mut files = json?;
    if let Some(crate_files) = rust? {
        files.extend_under("rust", crate_files);
    }
    files.set_fingerprint(fingerprint);
    Ok(files)
}

fn json_files(
    bundle: &Bundle,
    bundle_json: &str,
    options: &ListOptions,
) -> Result<OutputFiles, EmitError> {
    let mut files = OutputFiles::new();
    files.insert("bundle.json", bundle_json.to_owned());
    let schemas: Vec<Vec<(String, String)>> = bundle
        .tools
        .par_iter()
        .map(|tool| {
            check_file_name(&tool.name)?;
            let mut out = vec![(
                format!("schemas/{}.args.json", tool.name),
                to_json_text(&schema::arguments(tool))?,
            )];
            if let Some(r) = schema::result(tool) {
                out.push((
                    format!("schemas/{}.result.json", tool.name),
                    to_json_text(&r)?,
                ));
            }
            Ok(out)
        })
        .collect::<Result<_, EmitError>>()?;
    for (path, text) in schemas.into_iter().flatten() {
        files.insert(path, text);
    }
    // Every list is a subset of the bundle's: a bundle free of shared names makes them all so.
    for target in Provider::ALL {
        check_collisions(*target, bundle.tools.iter().map(|t| t.name.as_str()))?;
    }
    let entries = lists::Entries::new(&bundle.tools, options)?;
    files.extend_under("tools", entries.all_files());
    for name in bundle.project.toolsets.keys() {
        check_file_name(name)?;
        let members = toolset_tools(bundle, name)?;
        files.extend_under(
            &format!("toolsets/{name}/tools"),
            entries.files_of(&members),
        );
    }
    Ok(files)
}

/// Tool and toolset names become file names: no separators, no leading dot.
fn check_file_name(name: &str) -> Result<(), EmitError> {
    let ok = !name.is_empty() && !name.starts_with('.') && !name.contains(['/', '\\', '\0']);
    if ok {
        Ok(())
    } else {
        Err(EmitError::InvalidName {
            target: "files",
            what: "name",
            tool: name.to_owned(),
            name: name.to_owned(),
            rule: "a file name without `/`, `\\` or a leading `.`",
        })
    }
}
