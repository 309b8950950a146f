//! A tool's names over time: `aliases` (former names that still reach it) and `deprecated`
//! (`{since, use}`), read from the spec and checked across the whole set — an alias may not be
//! another tool's name or alias, and `use` must name a tool.
//!
//! Resolution calls `aliases` and `deprecation` per tool and `check` once over the set; the
//! runtime's registry maps aliases ([`crate::runtime`]), and `toolgate diff` reads both to tell
//! a rename from a removal.

use std::collections::HashMap;

use crate::diagnostic::Diagnostic;
use crate::ir::Deprecation;
use crate::rule::Rule;
use crate::spec::ast::ToolSpec;
use crate::spec::load::LoadedSpecs;
use crate::spec::source::Span;

use super::{ResolvedTool, error};

/// The tool's aliases, as written.
pub(crate) fn aliases(t: &ToolSpec) -> Vec<String> {
    t.aliases
        .as_ref()
        .map(|a| a.value.iter().map(|n| n.value.clone()).collect())
        .unwrap_or_default()
}

/// The tool's deprecation, when it has one.
pub(crate) fn deprecation(t: &ToolSpec) -> Option<Deprecation> {
    t.deprecated.as_ref().map(|d| Deprecation {
        since: d.value.since.value.0.clone(),
        successor: d.value.successor.as_ref().map(|s| s.value.clone()),
    })
}

/// Checks aliases and successors across the set: an alias is neither the tool's own name, nor
/// written twice, nor another tool's name or alias; `deprecated.use` names another tool.
pub(crate) fn check(loaded: &LoadedSpecs, tools: &[ResolvedTool], diags: &mut Vec<Diagnostic>) {
    let specs: Vec<(&ResolvedTool, &ToolSpec)> = tools
        .iter()
        .filter_map(|t| {
            let spec = loaded.files.get(t.file)?.tools.get(t.index)?;
            Some((t, &spec.value))
        })
        .collect();
    // Every name a call can use, with the tool it reaches and where it is written.
    let mut names: HashMap<&str, (&str, Span)> = HashMap::new();
    for (t, spec) in &specs {
        if let Some(n) = &spec.name {
            names
                .entry(n.value.as_str())
                .or_insert((n.value.as_str(), n.range.in_file(t.source)));
        }
    }
    for (t, spec) in &specs {
        let (Some(name), Some(list)) = (&spec.name, &spec.aliases) else {
            continue;
        };
        let mut own: Vec<&str> = Vec::new();
        for alias in &list.value {
            let span = alias.range.in_file(t.source);
            let a = alias.value.as_str();
            if a == name.value {
                diags.push(contract(
                    span,
                    format!("`{a}` is listed as an alias of itself"),
                    "list only former names of the tool under `aliases`",
                ));
                continue;
            }
            if own.contains(&a) {
                diags.push(contract(
                    span,
                    format!("alias `{a}` is listed twice"),
                    "remove the second entry",
                ));
                continue;
            }
            own.push(a);
            match names.get(a) {
                Some((other, first)) => {
                    let what = if *other == a {
                        format!("the name of tool `{other}`")
                    } else {
                        format!("an alias of tool `{other}`")
                    };
                    diags.push(
                        error(
                            Rule::DuplicateToolName,
                            span,
                            format!("alias `{a}` of `{}` is also {what}", name.value),
                        )
                        .with_label(*first, "also used here")
                        .with_help(
                            "a name reaches one tool: remove the alias, or the tool it was the \
                             name of",
                        ),
                    );
                }
                None => {
                    names.insert(a, (name.value.as_str(), span));
                }
            }
        }
    }
    let tool_names: Vec<&str> = specs
        .iter()
        .filter_map(|(_, s)| s.name.as_ref().map(|n| n.value.as_str()))
        .collect();
    for (t, spec) in &specs {
        let Some(d) = &spec.deprecated else { continue };
        let Some(successor) = &d.value.successor else {
            continue;
        };
        let span = successor.range.in_file(t.source);
        if spec
            .name
            .as_ref()
            .is_some_and(|n| n.value == successor.value)
        {
            diags.push(contract(
                span,
                format!(
                    "`deprecated.use` names the tool itself (`{}`)",
                    successor.value
                ),
                "name the tool that replaces this one, or leave `use` out",
            ));
        } else if !tool_names.contains(&successor.value.as_str()) {
            let help = match crate::suggest::closest(&successor.value, tool_names.iter().copied()) {
                Some(s) => format!("did you mean `{s}`?"),
                None => "name a tool defined by a spec".into(),
            };
            diags.push(
                error(
                    Rule::UnknownProjectReference,
                    span,
                    format!(
                        "`deprecated.use` names `{}`, which no spec defines",
                        successor.value
                    ),
                )
                .with_help(help),
            );
        }
    }
}

fn contract(span: Span, message: String, help: &str) -> Diagnostic {
    error(Rule::InvalidContract, span, message).with_help(help)
}

#[cfg(test)]
mod tests {
    use super::super::testing::resolve_files;

    fn messages(files: &[(&str, &str)]) -> Vec<String> {
        resolve_files(files, None)
            .diagnostics
            .iter()
            .map(|d| format!("{} {}", d.code.unwrap_or("-"), d.message))
            .collect()
    }

    const NEW: &str = "name: read_text\ndescription: Read a text file of the workspace.\neffect: read_only\nexec: {builtin: read_file}\n";

    #[test]
    fn aliases_and_successors_resolve_into_the_definition() {
        let aliased = format!("{NEW}aliases: [cat_file]\n");
        let r = resolve_files(&[("a.yaml", &aliased)], None);
        let def = r.definitions().next().unwrap();
        assert_eq!(def.aliases, vec!["cat_file".to_owned()]);
        let old = "name: cat_file\ndescription: Read a file.\neffect: read_only\nexec: {builtin: read_file}\ndeprecated: {since: 2, use: read_text}\n";
        let r = resolve_files(&[("a.yaml", NEW), ("b.yaml", old)], None);
        assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
        let cat = r.definitions().find(|d| d.name == "cat_file").unwrap();
        assert_eq!(
            cat.deprecated,
            Some(crate::ir::Deprecation {
                since: "2".into(),
                successor: Some("read_text".into())
            })
        );
        assert_eq!(
            cat.model_description(),
            "Read a file.\n\nDeprecated since 2: use `read_text` instead."
        );
    }

    #[test]
    fn clashing_aliases_and_unknown_successors_are_errors() {
        let got = messages(&[
            (
                "a.yaml",
                &format!("{NEW}aliases: [read_text, cat, cat, grep]\n"),
            ),
            (
                "b.yaml",
                "name: grep\ndescription: Search files.\neffect: read_only\nexec: {builtin: search_files}\ndeprecated: {since: '2026-05-01', use: read_txt}\n",
            ),
        ]);
        assert_eq!(
            got,
            vec![
                "TGK001 `read_text` is listed as an alias of itself",
                "TGK001 alias `cat` is listed twice",
                "TGK006 alias `grep` of `read_text` is also the name of tool `grep`",
                "TGK002 `deprecated.use` names `read_txt`, which no spec defines",
            ]
        );
    }
}
