//! Rust code generation: a crate (or a `build.rs` module) of typed tools.
//!
//! Per tool, `<Tool>Args` and `<Tool>Result` ([`types`]); per `exec: {handler: rust}` tool, a
//! `<Tool>Handler` trait and its adapter, and one `Tools::builder()` that binds them to the
//! embedded bundle ([`handlers`]). Code is built with `quote!` only, identifiers come from
//! [`ident`], items are collected by (section, name) and formatted with prettyplease; each item
//! is parsed on its own so a toolgate bug names the item that broke
//! ([`EmitError::InvalidTokens`]). The crate's `Cargo.toml` is built with `toml_edit` and its
//! README from `templates/` ([`manifest`]); [`conformance`] optionally adds a test comparing the
//! derived schemas with the contracts on sample arguments.

pub mod conformance;
pub mod handlers;
pub mod ident;
pub mod manifest;
pub mod tokens;
pub mod types;

use proc_macro2::TokenStream;
use quote::quote;

use crate::emit::rust::handlers::HandlerTool;
use crate::emit::rust::ident::{Case, Namespace};
use crate::emit::rust::types::{ToolCx, TypeSpace};
use crate::emit::{EmitError, OutputFiles};
use crate::ir::{Bundle, ExecSpec};

/// Where the generated code finds `bundle.json`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BundleSource {
    /// Next to the source file: `include_str!("bundle.json")` (the generated crate).
    Adjacent,
    /// In `OUT_DIR`: `include_str!(concat!(env!("OUT_DIR"), "/bundle.json"))` (build.rs).
    OutDir,
}

/// How the generated crate depends on toolgate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolgateDependency {
    /// A path dependency on a toolgate source tree.
    Path(String),
    /// A registry version requirement.
    Version(String),
}

impl Default for ToolgateDependency {
    /// The source tree this toolgate was built from.
    fn default() -> Self {
        ToolgateDependency::Path(env!("CARGO_MANIFEST_DIR").to_owned())
    }
}

/// Settings of the generated crate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RustOptions {
    /// The package name (`toolgate-tools` by default).
    pub crate_name: String,
    /// Where toolgate comes from.
    pub toolgate: ToolgateDependency,
    /// Adds `tests/schema_conformance.rs` and a `jsonschema` dev-dependency: for each tool, the
    /// derived schema of `<Tool>Args` must agree with the contract on `tests/samples/<tool>.json`.
    pub conformance_tests: bool,
}

impl Default for RustOptions {
    fn default() -> Self {
        RustOptions {
            crate_name: "toolgate-tools".into(),
            toolgate: ToolgateDependency::default(),
            conformance_tests: false,
        }
    }
}

/// Names of one tool's generated items.
pub struct ToolNames {
    /// The tool's name.
    pub tool: String,
    /// `<Tool>Args`.
    pub args: String,
    /// `<Tool>Result`.
    pub result: String,
    /// `<Tool>Handler` and the builder method, for `handler: rust` tools.
    pub handler: Option<(String, String)>,
}

/// The generated items of a bundle and the names given to each tool's types.
pub fn items(
    bundle: &Bundle,
    source: BundleSource,
) -> Result<(Vec<syn::Item>, Vec<ToolNames>), EmitError> {
    let mut bases = Namespace::new(Case::Pascal);
    let mut methods = Namespace::new(Case::Snake);
    methods.reserve("build");
    let mut reserved = vec![
        "Tools".to_owned(),
        "ToolsBuilder".to_owned(),
        "ToolsError".to_owned(),
        "Adapter".to_owned(),
        "TypedTool".to_owned(),
    ];
    let mut plan = Vec::new();
    for tool in &bundle.tools {
        let base = bases.claim(&ident::pascal(&tool.name));
        let is_handler = matches!(tool.exec, ExecSpec::Handler { .. });
        for suffix in ["Args", "Result", "Handler", "Tool"] {
            reserved.push(format!("{base}{suffix}"));
        }
        let method = if is_handler {
            Some(methods.claim(&ident::snake(&tool.name)))
        } else {
            None
        };
        plan.push((tool, base, method));
    }
    let mut space = TypeSpace::new(&reserved);
    let mut names = Vec::new();
    let mut handler_tools = Vec::new();
    for (tool, base, method) in &plan {
        let args = format!("{base}Args");
        let result = format!("{base}Result");
        let cx = ToolCx {
            pascal: base.clone(),
            scope: format!("{}/args", tool.name),
            root: &tool.parameters,
        };
        space.root_struct(&cx, &args, base, &tool.parameters)?;
        if let Some(r) = &tool.result {
            let cx = ToolCx {
                pascal: base.clone(),
                scope: format!("{}/result", tool.name),
                root: r,
            };
            space.root_alias(&cx, &result, Some(r))?;
        } else {
            space.root_alias(&cx, &result, None)?;
        }
        let mut handler = None;
        if let Some(method) = method {
            handler = Some((format!("{base}Handler"), method.clone()));
            let h = HandlerTool {
                name: tool.name.clone(),
                args: args.clone(),
                result: result.clone(),
                handler: format!("{base}Handler"),
                adapter: format!("{base}Tool"),
                method: method.clone(),
                description: tool.description.clone(),
            };
            handlers::handler_items(&mut space, &h);
            handler_tools.push(h);
        }
        names.push(ToolNames {
            tool: tool.name.clone(),
            args,
            result,
            handler,
        });
    }
    if !handler_tools.is_empty() {
        handlers::adapter_items(&mut space);
    }
    handlers::builder_items(&mut space, &handler_tools);
    let include = match source {
        BundleSource::Adjacent => quote!(include_str!("bundle.json")),
        BundleSource::OutDir => quote!(include_str!(concat!(env!("OUT_DIR"), "/bundle.json"))),
    };
    let mut out = vec![parse_item("BUNDLE_JSON", handlers::bundle_const(include))?];
    for ((_, name), tokens) in space.items {
        out.extend(parse_items(&name, tokens)?);
    }
    Ok((out, names))
}

fn parse_item(name: &str, tokens: TokenStream) -> Result<syn::Item, EmitError> {
    syn::parse2::<syn::Item>(tokens).map_err(|e| EmitError::InvalidTokens {
        tool: name.to_owned(),
        message: e.to_string(),
    })
}

fn parse_items(name: &str, tokens: TokenStream) -> Result<Vec<syn::Item>, EmitError> {
    syn::parse2::<syn::File>(tokens)
        .map(|f| f.items)
        .map_err(|e| EmitError::InvalidTokens {
            tool: name.to_owned(),
            message: e.to_string(),
        })
}

/// Formats items as a source file, with inner doc lines first and a blank line between items.
pub fn unparse(doc: &[String], items: Vec<syn::Item>) -> String {
    let mut attrs = Vec::new();
    for line in doc {
        let text = if line.is_empty() {
            String::new()
        } else {
            format!(" {line}")
        };
        attrs.push(syn::parse_quote!(#![doc = #text]));
    }
    let file = syn::File {
        shebang: None,
        frontmatter: None,
        attrs,
        items,
    };
    space_items(&prettyplease::unparse(&file))
}

/// prettyplease writes items back to back; put a blank line before each top-level item.
fn space_items(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 20);
    let mut prev: Option<&str> = None;
    for line in text.lines() {
        let top_level_start = !line.starts_with(' ')
            && !line.starts_with('}')
            && !line.starts_with(')')
            && !line.is_empty()
            && !line.starts_with("//!");
        if let Some(p) = prev
            && top_level_start
            && !p.is_empty()
            && ((!p.starts_with(' ') && p.ends_with('}'))
                || p.starts_with('}')
                || p.ends_with(';')
                || p.starts_with("//!"))
        {
            out.push('\n');
        }
        out.push_str(line);
        out.push('\n');
        prev = Some(line);
    }
    out
}

/// The module `toolgate::build` writes to `OUT_DIR/tools.rs` (no inner attributes, so it can be
/// `include!`d).
pub fn build_module(bundle: &Bundle) -> Result<String, EmitError> {
    let (items, _) = items(bundle, BundleSource::OutDir)?;
    Ok(unparse(&[], items))
}

/// Every file of the generated crate, relative to its folder.
pub fn emit_crate(
    bundle: &Bundle,
    bundle_json: &str,
    options: &RustOptions,
) -> Result<OutputFiles, EmitError> {
    let (items, names) = items(bundle, BundleSource::Adjacent)?;
    let doc = manifest::lib_doc(bundle, &names)?;
    let doc_lines: Vec<String> = doc.trim_end().lines().map(str::to_owned).collect();
    let mut files = OutputFiles::new();
    files.insert("Cargo.toml", manifest::cargo_toml(bundle, options));
    files.insert("README.md", manifest::readme(bundle, options, &names)?);
    files.insert("src/lib.rs", unparse(&doc_lines, items));
    files.insert("src/bundle.json", bundle_json.to_owned());
    if options.conformance_tests {
        files.insert(
            "tests/schema_conformance.rs",
            conformance::test_file(&options.crate_name, &names)?,
        );
    }
    Ok(files)
}
