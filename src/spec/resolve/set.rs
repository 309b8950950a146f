//! Checks across the whole set of tools: each name is defined once, and toolsets name tools
//! that exist.

use std::collections::HashMap;

use crate::diagnostic::Diagnostic;
use crate::rule::Rule;
use crate::spec::load::LoadedSpecs;
use crate::spec::source::Span;

use super::{ResolvedTool, error};

/// Tool names are unique: each later definition of a name is an error pointing at the first.
pub(super) fn check_names(
    loaded: &LoadedSpecs,
    tools: &[ResolvedTool],
    diags: &mut Vec<Diagnostic>,
) {
    // The first definition of each name, and how many there have been so far.
    let mut seen: HashMap<&str, (Span, usize)> = HashMap::new();
    for t in tools {
        let Some(ast) = loaded.files.get(t.file).and_then(|f| f.tools.get(t.index)) else {
            continue;
        };
        let Some(name) = &ast.value.name else {
            continue;
        };
        let span = name.range.in_file(t.source);
        match seen.get_mut(name.value.as_str()) {
            Some((first, count)) => {
                *count += 1;
                let message = match *count {
                    2 => format!("tool `{}` is defined twice", name.value),
                    n => format!(
                        "tool `{}` is defined again (definition {n} of the name)",
                        name.value
                    ),
                };
                diags.push(
                    error(Rule::DuplicateToolName, span, message)
                        .with_label(*first, "first defined here")
                        .with_help(
                            "tool names must be unique: rename one, or bump `version` in place of a copy",
                        ),
                );
            }
            None => {
                seen.insert(name.value.as_str(), (span, 1));
            }
        }
    }
}

/// Every member of a toolset in toolgate.yaml is a tool some spec defines.
pub(super) fn check_toolsets(
    loaded: &LoadedSpecs,
    tools: &[ResolvedTool],
    diags: &mut Vec<Diagnostic>,
) {
    let Some((pid, pf)) = &loaded.project else {
        return;
    };
    let names: Vec<&str> = tools
        .iter()
        .filter_map(|t| {
            loaded
                .files
                .get(t.file)?
                .tools
                .get(t.index)?
                .value
                .name
                .as_ref()
        })
        .map(|n| n.value.as_str())
        .collect();
    for (set, ts) in &pf.toolsets {
        for member in &ts.value.tools {
            if !names.contains(&member.value.as_str()) {
                let help = crate::suggest::did_you_mean(&member.value, names.iter().copied())
                    .unwrap_or_else(|| "list tools by their `name`".into());
                diags.push(
                    error(
                        Rule::UnknownProjectReference,
                        member.range.in_file(*pid),
                        format!(
                            "toolset `{set}` names `{}`, which no spec defines",
                            member.value
                        ),
                    )
                    .with_help(help),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{HEAD, errors, resolve_files};
    use crate::rule::Rule;

    #[test]
    fn a_name_defined_again_points_at_its_first_definition() {
        let r = resolve_files(
            &[("a.yaml", HEAD), ("b.yaml", HEAD), ("c.yaml", HEAD)],
            None,
        );
        let e = errors(&r, Rule::DuplicateToolName);
        let messages: Vec<&str> = e.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "tool `t` is defined twice",
                "tool `t` is defined again (definition 3 of the name)"
            ]
        );
        let first = r.loaded.files[0].source;
        assert!(e.iter().all(|d| d.labels[0].span.source == first));
        assert_eq!(e[1].span.source, r.loaded.files[2].source);
        assert_eq!(
            r.definitions().count(),
            3,
            "the definitions themselves stay valid"
        );
    }

    #[test]
    fn a_toolset_member_no_spec_defines_is_a_reference_error() {
        let note = HEAD.replace("name: t\n", "name: write_note\n");
        let r = resolve_files(
            &[("a.yaml", HEAD), ("b.yaml", &note)],
            Some("toolsets:\n  notes: {tools: [t, write_nte, u]}\n"),
        );
        let e = errors(&r, Rule::UnknownProjectReference);
        let got: Vec<(&str, &str)> = e
            .iter()
            .map(|d| (d.message.as_str(), d.help.as_deref().unwrap_or("")))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "toolset `notes` names `write_nte`, which no spec defines",
                    "did you mean `write_note`?"
                ),
                (
                    "toolset `notes` names `u`, which no spec defines",
                    "list tools by their `name`"
                )
            ]
        );
    }
}
