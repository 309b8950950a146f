//! Rust code generation: a crate (or a `build.rs` module) of typed tools.
//!
//! Per tool, `<Tool>Args` and `<Tool>Result` ([`types`]); per `exec: {handler: rust}` tool, a
//! type `<Tool>` for toolgate's `TypedHandler<Tool>`, and one `Handlers` struct that binds them
//! to the embedded bundle ([`handlers`]). Code is built with `quote!` only, identifiers come from
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

use std::path::{Component, Path, PathBuf};

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
    /// A path dependency on a toolgate source tree (relative paths are resolved by cargo from
    /// the crate's folder).
    Path(String),
    /// A registry version requirement.
    Version(String),
}

impl Default for ToolgateDependency {
    /// The source tree this toolgate was built from, as an absolute path: right on this
    /// machine only. `toolgate build` uses [`ToolgateDependency::for_crate_dir`] instead.
    fn default() -> Self {
        ToolgateDependency::Path(env!("CARGO_MANIFEST_DIR").to_owned())
    }
}

impl ToolgateDependency {
    /// The portable default for a crate generated into `crate_dir` (`<out>/rust`): the source
    /// tree this toolgate was built from, as a path relative to `crate_dir`, while that tree is
    /// still there and is not a package cargo unpacked from a registry; otherwise this
    /// toolgate's version from the registry. A relative path stays right on every clone of a
    /// repository holding both the output and toolgate's source (and for any checkout at the
    /// same place beside the project), where the absolute path of one machine would make
    /// `build --check` report the output stale everywhere else.
    pub fn for_crate_dir(crate_dir: &Path) -> ToolgateDependency {
        let source = Path::new(env!("CARGO_MANIFEST_DIR"));
        if !source.join("Cargo.toml").is_file() || in_cargo_registry(source) {
            return ToolgateDependency::Version(env!("CARGO_PKG_VERSION").to_owned());
        }
        let from = std::env::current_dir()
            .map(|cwd| normalize(&cwd.join(crate_dir)))
            .unwrap_or_else(|_| crate_dir.to_path_buf());
        match relative_path(&from, source) {
            Some(rel) => ToolgateDependency::Path(rel),
            None => ToolgateDependency::default(),
        }
    }
}

/// Whether a source tree is a package cargo unpacked from a registry
/// (`~/.cargo/registry/src/<index>/toolgate-<version>`), which `cargo install toolgate` builds.
fn in_cargo_registry(source: &Path) -> bool {
    let parts: Vec<_> = source.components().map(|c| c.as_os_str()).collect();
    parts
        .windows(2)
        .any(|w| w[0] == "registry" && w[1] == "src")
}

/// `path` with `.` and `..` resolved lexically (the folder may not exist yet).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The path from folder `from` to `to`, both absolute, with `/` separators; `None` when they
/// share no root (two Windows drives).
fn relative_path(from: &Path, to: &Path) -> Option<String> {
    let from: Vec<Component> = from.components().collect();
    let to: Vec<Component> = to.components().collect();
    if from.first() != to.first() {
        return None;
    }
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_owned(); from.len() - common];
    parts.extend(
        to[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    if parts.is_empty() {
        return Some(".".to_owned());
    }
    Some(parts.join("/"))
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
    /// `<Tool>` (the type `TypedHandler` is implemented for) and the field of `Handlers`, for
    /// `handler: rust` tools.
    pub handler: Option<(String, String)>,
}

/// The generated items of a bundle and the names given to each tool's types.
pub fn items(
    bundle: &Bundle,
    source: BundleSource,
) -> Result<(Vec<syn::Item>, Vec<ToolNames>), EmitError> {
    let mut bases = Namespace::new(Case::Pascal);
    let mut methods = Namespace::new(Case::Snake);
    let mut reserved = vec![
        "Tools".to_owned(),
        "Handlers".to_owned(),
        "ToolsError".to_owned(),
    ];
    let mut plan = Vec::new();
    for tool in &bundle.tools {
        let base = bases.claim(&ident::pascal(&tool.name));
        let is_handler = matches!(tool.exec, ExecSpec::Handler { .. });
        for suffix in ["Args", "Result"] {
            reserved.push(format!("{base}{suffix}"));
        }
        if is_handler {
            // The tool's type, and the name of its parameter of `Handlers`.
            reserved.push(base.clone());
            reserved.push(format!("{base}Handler"));
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
            handler = Some((base.clone(), method.clone()));
            let h = HandlerTool {
                name: tool.name.clone(),
                args: args.clone(),
                result: result.clone(),
                marker: base.clone(),
                field: method.clone(),
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

/// The module `toolgate::build_script` writes to `OUT_DIR/tools.rs` (no inner attributes, so it can be
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
    let doc = manifest::lib_doc(bundle, &options.crate_name, &names)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        let rel = |a: &str, b: &str| relative_path(Path::new(a), Path::new(b));
        assert_eq!(
            rel("/repo/examples/embed/generated/rust", "/repo").as_deref(),
            Some("../../../..")
        );
        assert_eq!(
            rel("/home/me/proj/build/toolgate/rust", "/home/me/src/toolgate").as_deref(),
            Some("../../../../src/toolgate")
        );
        assert_eq!(rel("/a/b", "/a/b").as_deref(), Some("."));
        assert_eq!(rel("/a", "/a/b/c").as_deref(), Some("b/c"));
        assert_eq!(
            normalize(Path::new("/a/./b/../c/rust")),
            PathBuf::from("/a/c/rust")
        );
    }

    #[test]
    fn registry_packages_are_recognised() {
        assert!(in_cargo_registry(Path::new(
            "/home/me/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/toolgate-0.1.0"
        )));
        assert!(!in_cargo_registry(Path::new("/home/me/src/toolgate")));
    }

    /// From inside this source tree the default is a relative path that leads back to it.
    #[test]
    fn the_default_dependency_is_relative_to_the_crate() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let crate_dir = root.join("examples/embed/generated/rust");
        assert_eq!(
            ToolgateDependency::for_crate_dir(&crate_dir),
            ToolgateDependency::Path("../../../..".into())
        );
    }
}
