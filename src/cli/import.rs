//! `toolgate import --from-mcp SERVER`: starter specs for the tools of an upstream MCP server.
//! (`--from FORMAT FILE`, from a tool-list file: [`super::import_list`].)
//!
//! Connects to a server declared in toolgate.yaml (or started from `--command`), calls
//! `tools/list`, and writes one spec per tool to `<out>/<server>/<tool>.yaml` (default out:
//! `tool-specs` in the project folder), each running through `exec: {mcp: {server, tool}}`.
//! The effect comes from the annotations ([`crate::spec::import::effect_from_hints`]; without
//! enough hints, `external_side_effect`), the parameters from `inputSchema`, the result from
//! `outputSchema`. Defaults are conservative: every call asks for approval until someone
//! reviews the contract, a 30 s timeout, bounded output. Existing files are kept unless
//! `--force`.

use std::path::{Path, PathBuf};

use clap::Args;
use rmcp::model::Tool;
use serde_json::{Map, Value, json};

use crate::ir::{Effect, McpServer, ServerEnv};
use crate::mcp::tools::clean_schema;
use crate::runtime::exec::mcp::{UpstreamSandbox, connect};
use crate::spec::import::effect_from_hints;
use crate::spec::load::{LoadOptions, load};
use crate::spec::project::resolve_project;

pub(crate) mod limits;
pub(crate) mod output;

use limits::{ImportLimits, LimitName, Walk, check_tools, over};
pub(super) use output::file_name;
use output::{comment_text, distinct_names, write_all, yaml_text};

/// Arguments of `toolgate import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The MCP server to read (a name under `mcp_servers` in toolgate.yaml, or the name for
    /// `--command`).
    #[arg(
        long = "from-mcp",
        value_name = "SERVER",
        required_unless_present = "from"
    )]
    pub from_mcp: Option<String>,
    /// Read a file of this format instead: `openapi` (an OpenAPI 3.0 or 3.1 document, imported
    /// as HTTP tools, docs/http.md) or a tool list: `openai`, `anthropic`, `gemini`, `mcp`.
    #[arg(long, value_name = "FORMAT", conflicts_with = "from_mcp", requires = "file", value_parser = parse_from)]
    pub from: Option<ImportFrom>,
    /// The file `--from` reads.
    #[arg(value_name = "FILE", requires = "from")]
    pub file: Option<PathBuf>,
    /// The API's base URL, when the OpenAPI document names no absolute server.
    #[arg(long, requires = "from")]
    pub server: Option<String>,
    /// Start the server with this command line (split on whitespace) instead of toolgate.yaml.
    #[arg(long)]
    pub command: Option<String>,
    /// The project file (default: ./toolgate.yaml if present).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Where the specs go (default: tool-specs in the project folder); files are written to
    /// `<out>/<server>/`.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace spec files that exist already.
    #[arg(long)]
    pub force: bool,
    /// Raise (or lower) one of the import's bounds, `NAME=N`: `document` (bytes read),
    /// `nodes` (schema nodes visited), `depth` (schema nesting), `tools`, `output` (bytes
    /// written), `timeout` (seconds an MCP server has to list its tools). Repeatable.
    #[arg(long = "limit", value_name = "NAME=N", value_parser = limits::parse_limit)]
    pub limits: Vec<(LimitName, u64)>,
}

/// What `--from` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImportFrom {
    /// An OpenAPI document: one HTTP tool per operation.
    Openapi,
    /// A tool-list file of a provider's format.
    List(crate::spec::import::ImportFormat),
}

fn parse_from(s: &str) -> Result<ImportFrom, String> {
    if s == "openapi" {
        return Ok(ImportFrom::Openapi);
    }
    match crate::spec::import::ImportFormat::parse(s) {
        Some(f) => Ok(ImportFrom::List(f)),
        None => Err(format!(
            "unknown format `{s}`; use one of: openapi, openai, anthropic, gemini, mcp"
        )),
    }
}

/// Runs `toolgate import`.
pub fn run(a: ImportArgs) -> miette::Result<u8> {
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => return super::call::fail(&format!("cannot read the current folder: {e}")),
    };
    let limits = ImportLimits::with(&a.limits);
    if let (Some(ImportFrom::Openapi), Some(file)) = (a.from, &a.file) {
        return super::import_openapi::run(
            file,
            a.out.as_deref(),
            a.server.as_deref(),
            a.force,
            &limits,
        );
    }
    if a.server.is_some() {
        return super::call::fail("--server applies to `--from openapi` only");
    }
    let (from_mcp, list) = match (&a.from_mcp, a.from, &a.file) {
        (_, Some(ImportFrom::List(format)), Some(file)) => (None, Some((format, file))),
        (Some(server), _, _) => (Some(server.clone()), None),
        _ => return super::call::fail("give --from-mcp SERVER, or --from FORMAT FILE"),
    };
    let loaded = match load(&LoadOptions {
        paths: Vec::new(),
        config: a.config.clone(),
        cwd: cwd.clone(),
    }) {
        Ok(l) => l,
        Err(e) => return super::call::fail(&e.to_string()),
    };
    let mut diags = Vec::new();
    let (project, _) = resolve_project(loaded.project.as_ref().map(|(id, p)| (*id, p)), &mut diags);
    let root = loaded.root.clone();
    if let Some((format, file)) = list {
        let dir = a
            .out
            .clone()
            .map(|o| if o.is_absolute() { o } else { cwd.join(o) })
            .unwrap_or_else(|| root.join("tool-specs"));
        return match super::import_list::write_specs(file, &cwd, format, &dir, a.force, &limits) {
            Ok((n, written, kept)) => {
                eprintln!(
                    "{n} tool(s) from {}: {written} written, {kept} kept. Review each contract's effect and permissions, bind the handlers, then run `toolgate lint`.",
                    file.display()
                );
                Ok(super::EXIT_OK)
            }
            Err(m) => super::call::fail(&m),
        };
    }
    let Some(from_mcp) = from_mcp else {
        return super::call::fail("give --from-mcp SERVER, or --from FORMAT FILE");
    };
    let server = match &a.command {
        Some(c) => McpServer {
            command: c.split_whitespace().map(str::to_owned).collect(),
            env: ServerEnv {
                inherit: ["PATH", "HOME", "LANG"].map(str::to_owned).to_vec(),
                set: Default::default(),
            },
            cwd: None,
            sandbox: None,
        },
        None => match project.mcp_servers.get(&from_mcp) {
            Some(s) => s.clone(),
            None => {
                let known: Vec<&str> = project.mcp_servers.keys().map(String::as_str).collect();
                return super::call::fail(&format!(
                    "toolgate.yaml declares no MCP server `{}` (declared: {}); give --command to start one",
                    from_mcp,
                    if known.is_empty() {
                        "none".to_owned()
                    } else {
                        known.join(", ")
                    }
                ));
            }
        },
    };
    let sandbox = UpstreamSandbox {
        profiles: project.sandbox_profiles.clone(),
        workspace: root.join(&project.workspace),
        state_dir: None,
        protected: crate::policy::ProtectedSet::new(&project.protect)
            .ok()
            .map(std::sync::Arc::new),
        policy: Some(std::sync::Arc::new(crate::policy::PolicyFiles::at_root(
            &root,
        ))),
        shim: crate::runtime::exec::spawn::default_shim(),
    };
    let tools = match list_tools(&from_mcp, &server, &root, &sandbox, &limits) {
        Ok(t) => t,
        Err(m) => return super::call::fail(&m),
    };
    let dir = a
        .out
        .clone()
        .map(|o| if o.is_absolute() { o } else { cwd.join(o) })
        .unwrap_or_else(|| root.join("tool-specs"))
        .join(file_name(&from_mcp));
    let names = distinct_names(tools.iter().map(|t| t.name.as_ref()));
    let mut files = Vec::with_capacity(tools.len());
    for (t, name) in tools.iter().zip(names) {
        match starter_spec_named(&from_mcp, t, name) {
            Ok(f) => files.push(f),
            Err(m) => return super::call::fail(&m),
        }
    }
    if let Err(m) = output::check_output(&files, &limits) {
        return super::call::fail(&format!(
            "the MCP server `{}`: {m}",
            comment_text(&from_mcp)
        ));
    }
    let (written, kept) = match write_all(&dir, &files, a.force) {
        Ok(n) => n,
        Err(m) => return super::call::fail(&m),
    };
    eprintln!(
        "{} tool(s) from `{}`: {written} written, {kept} kept. Review each contract's effect and permissions, then run `toolgate lint`.",
        tools.len(),
        comment_text(&from_mcp)
    );
    Ok(super::EXIT_OK)
}

/// Starts the server, lists its tools page by page within the limits (the tool count, the
/// bytes of all pages, each schema's nodes and depth, and one timeout for starting and
/// listing together), closes it.
fn list_tools(
    name: &str,
    server: &McpServer,
    root: &Path,
    sandbox: &UpstreamSandbox,
    limits: &ImportLimits,
) -> Result<Vec<Tool>, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let label = format!("the MCP server `{}`", comment_text(name));
    rt.block_on(async {
        // The cgroups of `started` live until the server is closed below.
        let started = tokio::time::timeout(limits.timeout, connect(name, server, root, sandbox));
        let mut started = match started.await {
            Ok(s) => s.map_err(|e| e.to_string())?,
            Err(_) => {
                return Err(over(
                    &format!(
                        "{label} did not finish starting within {} s",
                        limits.timeout.as_secs()
                    ),
                    LimitName::Timeout,
                    limits.timeout.as_secs(),
                ));
            }
        };
        let running = &mut started.service;
        let listed =
            tokio::time::timeout(limits.timeout, list_pages(running.peer(), &label, limits)).await;
        let _ = running.close().await;
        match listed {
            Ok(tools) => tools,
            Err(_) => Err(over(
                &format!(
                    "{label} did not answer `tools/list` within {} s",
                    limits.timeout.as_secs()
                ),
                LimitName::Timeout,
                limits.timeout.as_secs(),
            )),
        }
    })
}

/// Every page of `tools/list`, stopping at the first bound passed.
async fn list_pages(
    peer: &rmcp::Peer<rmcp::RoleClient>,
    label: &str,
    limits: &ImportLimits,
) -> Result<Vec<Tool>, String> {
    let mut tools = Vec::new();
    let mut cursor = None;
    let mut bytes = 0u64;
    let mut walk = Walk::new(limits);
    let mut pages = 0usize;
    loop {
        pages += 1;
        if pages > limits.tools {
            return Err(over(
                &format!(
                    "{label} sent more than {} pages of `tools/list`",
                    limits.tools
                ),
                LimitName::Tools,
                limits.tools as u64,
            ));
        }
        let page = peer
            .list_tools(Some(
                rmcp::model::PaginatedRequestParams::default().with_cursor(cursor.take()),
            ))
            .await
            .map_err(|e| format!("`tools/list` on {label} failed: {e}"))?;
        for t in &page.tools {
            bytes += serde_json::to_vec(t).map_or(0, |v| v.len() as u64);
            let at = format!("{label}, tool `{}`", comment_text(&t.name));
            walk.value(
                &Value::Object((*t.input_schema).clone()),
                &format!("{at} inputSchema"),
            )?;
            if let Some(o) = &t.output_schema {
                walk.value(&Value::Object((**o).clone()), &format!("{at} outputSchema"))?;
            }
        }
        tools.extend(page.tools);
        check_tools(tools.len(), label, limits)?;
        if bytes > limits.document_bytes {
            return Err(over(
                &format!("`tools/list` on {label} is more than {bytes} bytes"),
                LimitName::Document,
                limits.document_bytes,
            ));
        }
        match page.next_cursor {
            Some(c) if !c.is_empty() => cursor = Some(c),
            _ => return Ok(tools),
        }
    }
}

/// Arguments the parameter schema accepts, for the policy test; `None` when the schema is too
/// intricate for [`sample`] (the rule is then left untested, a lint warning).
pub(super) fn example_arguments(parameters: &Value) -> Option<Value> {
    // A budget of nodes, so that a schema whose definitions share one another (a DAG) cannot
    // make the sample grow with the number of paths through it.
    let mut budget = 10_000usize;
    let args = sample(parameters, parameters, 0, &mut budget)?;
    let valid = jsonschema::options()
        .build(parameters)
        .ok()
        .is_some_and(|v| v.is_valid(&args));
    valid.then_some(args)
}

/// A small instance of a schema: `const`, the first `enum` value, `default`, or the least
/// value of its type that meets the bounds; objects get their required properties.
fn sample(schema: &Value, root: &Value, depth: usize, budget: &mut usize) -> Option<Value> {
    const MAX_DEPTH: usize = 16;
    if depth > MAX_DEPTH || *budget == 0 {
        return None;
    }
    *budget -= 1;
    let s = schema.as_object()?;
    if let Some(v) = s.get("const") {
        return Some(v.clone());
    }
    if let Some(v) = s
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|e| e.first())
    {
        return Some(v.clone());
    }
    if let Some(v) = s.get("default") {
        return Some(v.clone());
    }
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let target = root.pointer(r.strip_prefix('#')?)?;
        return sample(target, root, depth + 1, budget);
    }
    for k in ["anyOf", "oneOf", "allOf"] {
        if let Some(first) = s.get(k).and_then(Value::as_array).and_then(|a| a.first()) {
            return sample(first, root, depth + 1, budget);
        }
    }
    let ty = match s.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("null"),
        _ if s.contains_key("properties") => "object",
        _ => return Some(json!({})),
    };
    let bound = |k: &str| s.get(k).and_then(Value::as_f64);
    Some(match ty {
        "string" => {
            let min = s.get("minLength").and_then(Value::as_u64).unwrap_or(1);
            json!("x".repeat(usize::try_from(min.max(1)).ok()?))
        }
        "integer" => {
            let n = bound("minimum")
                .or_else(|| bound("exclusiveMinimum").map(|m| m.floor() + 1.0))
                .unwrap_or(0.0)
                .ceil();
            json!(n as i64)
        }
        "number" => json!(
            bound("minimum")
                .or_else(|| bound("exclusiveMinimum").map(|m| m + 1.0))
                .unwrap_or(0.0)
        ),
        "boolean" => json!(false),
        "null" => Value::Null,
        "array" => {
            let n = s.get("minItems").and_then(Value::as_u64).unwrap_or(0);
            let item = s.get("items").unwrap_or(&Value::Null);
            let items = (0..n)
                .map(|_| sample(item, root, depth + 1, budget))
                .collect::<Option<Vec<_>>>()?;
            Value::Array(items)
        }
        "object" => {
            let props = s.get("properties").and_then(Value::as_object);
            let mut out = Map::new();
            for name in s
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                let prop = props.and_then(|p| p.get(name)).unwrap_or(&Value::Null);
                out.insert(name.to_owned(), sample(prop, root, depth + 1, budget)?);
            }
            Value::Object(out)
        }
        _ => return None,
    })
}

/// The starter spec of one upstream tool: its name ([`file_name`] of the tool's) and YAML text.
pub fn starter_spec(server: &str, t: &Tool) -> (String, String) {
    let name = file_name(&t.name);
    match starter_spec_named(server, t, name.clone()) {
        Ok(spec) => spec,
        Err(e) => (name, format!("# {}\n", comment_text(&e))),
    }
}

/// The starter spec of one upstream tool, named `name` (a safe, distinct [`file_name`]): its
/// name and YAML text.
pub fn starter_spec_named(
    server: &str,
    t: &Tool,
    name: String,
) -> Result<(String, String), String> {
    let hints = t.annotations.as_ref();
    let inferred = effect_from_hints(
        hints.and_then(|h| h.read_only_hint),
        hints.and_then(|h| h.destructive_hint),
        hints.and_then(|h| h.open_world_hint),
    );
    let effect = inferred.unwrap_or(Effect::ExternalSideEffect);
    let idempotency = if effect.is_read_only() {
        "pure"
    } else if hints.and_then(|h| h.idempotent_hint) == Some(true) {
        "idempotent"
    } else {
        "non_idempotent"
    };
    let description = t
        .description
        .as_deref()
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(str::to_owned)
        .unwrap_or_else(|| format!("Runs the tool `{}` of the MCP server `{server}`.", t.name));
    let title = t
        .title
        .clone()
        .or_else(|| hints.and_then(|h| h.title.clone()));
    let mut spec = Map::new();
    spec.insert("name".into(), json!(name));
    spec.insert("version".into(), json!(1));
    if let Some(title) = title {
        spec.insert("title".into(), json!(title));
    }
    spec.insert("description".into(), json!(description));
    spec.insert("effect".into(), json!(effect.as_str()));
    spec.insert("idempotency".into(), json!(idempotency));
    let mut parameters = clean_schema(&Value::Object((*t.input_schema).clone()));
    if let Value::Object(p) = &mut parameters {
        p.remove("$schema");
        p.entry("type").or_insert_with(|| json!("object"));
    }
    spec.insert("parameters".into(), parameters);
    if let Some(out) = &t.output_schema {
        let mut result = clean_schema(&Value::Object((**out).clone()));
        if let Value::Object(r) = &mut result {
            r.remove("$schema");
        }
        spec.insert("result".into(), result);
    }
    let mut permissions = json!({
        "rules": [{
            "id": "review-imported",
            "ask": "true",
            "reason": format!("Imported from the MCP server `{server}`: a person approves each call until the contract is reviewed.")
        }]
    });
    if let Some(args) = spec.get("parameters").and_then(example_arguments) {
        permissions["examples"] = json!([{"args": args, "expect": "ask"}]);
    }
    spec.insert("permissions".into(), permissions);
    spec.insert("timeout".into(), json!("30s"));
    spec.insert(
        "output".into(),
        json!({"formatter": "text", "max_bytes": "32KiB", "max_lines": 400}),
    );
    spec.insert(
        "exec".into(),
        json!({"mcp": {"server": server, "tool": t.name.as_ref()}}),
    );
    let body = yaml_text(&Value::Object(spec))?;
    let source = match inferred {
        Some(_) => "from the tool's MCP annotations",
        None => "assumed: the tool's MCP annotations do not say enough",
    };
    let server = comment_text(server);
    let header = format!(
        "# Imported from the MCP server `{server}` (tool `{}`) by `toolgate import --from-mcp`.\n\
         # effect {}: {source}. Review the effect, the permissions and the limits, then\n\
         # replace the review-imported rule with rules that fit the tool.\n",
        comment_text(&t.name),
        effect.as_str()
    );
    Ok((name, format!("{header}{body}")))
}
