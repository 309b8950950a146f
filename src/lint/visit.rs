//! The one pass: every enabled rule sees each tool, each schema node and the tool set once.

use rayon::prelude::*;

use crate::lint::codes::Rule;
use crate::lint::context::{LintContext, SchemaNode, SchemaRole, ToolView};
use crate::lint::rule::Applies;
use crate::lint::rules;
use crate::spec::yaml::{Node, NodeValue};

/// Deepest schema nesting walked (the loader already caps YAML depth; this bounds `$defs` too).
const MAX_SCHEMA_DEPTH: usize = 48;

/// Runs every enabled rule over the tools.
pub fn run(ctx: &mut LintContext, tools: &[ToolView]) {
    // Tools are judged independently, so they are judged in parallel; findings keep tool order.
    let per_tool: Vec<Vec<crate::diagnostic::Diagnostic>> = tools
        .par_iter()
        .map(|tool| {
            let mut c = ctx.fork();
            check_tool(&mut c, tool);
            c.into_findings()
        })
        .collect();
    for f in per_tool {
        ctx.absorb(f);
    }
    for (rule, check) in rules::SET_CHECKS {
        if ctx.settings.enabled(*rule) {
            ctx.set_rule(*rule);
            check(ctx, tools);
        }
    }
}

/// Runs the tool and schema rules over one tool.
fn check_tool(ctx: &mut LintContext, tool: &ToolView) {
    // A provider-defined tool's description and schema are the provider's, not the list's: there
    // is nothing in the list to fix. Set rules (names, counts) still see it.
    if tool.native.is_some() {
        return;
    }
    let path = tool.file.display_path();
    let on = |ctx: &LintContext, rule: Rule| {
        ctx.settings.enabled(rule)
            && !ctx.settings.ignored_for(rule, &path)
            && (tool.is_spec() || rule.meta().applies == Applies::Everywhere)
    };
    for (rule, check) in rules::TOOL_CHECKS {
        if on(ctx, *rule) {
            ctx.set_rule(*rule);
            check(ctx, tool);
        }
    }
    let schema_rules: Vec<_> = rules::SCHEMA_CHECKS
        .iter()
        .filter(|(r, _)| on(ctx, *r))
        .collect();
    if schema_rules.is_empty() {
        return;
    }
    let mut visit = |ctx: &mut LintContext, n: &SchemaNode| {
        for (rule, check) in &schema_rules {
            ctx.set_rule(*rule);
            check(ctx, tool, n);
        }
    };
    if let Some(p) = tool.parameters() {
        walk(
            ctx,
            p,
            SchemaRole::Parameters,
            String::new(),
            0,
            None,
            &mut visit,
        );
    }
    if let Some(r) = &tool.spec.value.result {
        walk(
            ctx,
            r,
            SchemaRole::Result,
            String::new(),
            0,
            None,
            &mut visit,
        );
    }
}

type Visit<'v> = dyn FnMut(&mut LintContext, &SchemaNode) + 'v;

/// Visits a schema node and every subschema below it.
fn walk(
    ctx: &mut LintContext,
    node: &Node,
    role: SchemaRole,
    pointer: String,
    depth: usize,
    property: Option<(&crate::spec::yaml::Key, bool)>,
    visit: &mut Visit<'_>,
) {
    if depth > MAX_SCHEMA_DEPTH || !node.is_map() {
        return;
    }
    visit(
        ctx,
        &SchemaNode {
            node,
            role,
            pointer: pointer.clone(),
            depth,
            property,
        },
    );
    let required: Vec<&str> = node
        .get("required")
        .map(|r| r.items().iter().filter_map(Node::as_str).collect())
        .unwrap_or_default();
    for (key, value) in node.entries() {
        let here = format!("{pointer}/{}", escape(&key.name));
        match key.name.as_str() {
            "properties" => {
                for (pk, pv) in value.entries() {
                    let is_req = required.contains(&pk.name.as_str());
                    walk(
                        ctx,
                        pv,
                        role,
                        format!("{here}/{}", escape(&pk.name)),
                        depth + 1,
                        Some((pk, is_req)),
                        visit,
                    );
                }
            }
            "$defs" | "definitions" | "patternProperties" | "dependentSchemas" => {
                for (pk, pv) in value.entries() {
                    walk(
                        ctx,
                        pv,
                        role,
                        format!("{here}/{}", escape(&pk.name)),
                        depth + 1,
                        None,
                        visit,
                    );
                }
            }
            "items"
            | "additionalProperties"
            | "not"
            | "if"
            | "then"
            | "else"
            | "contains"
            | "propertyNames"
            | "unevaluatedItems"
            | "unevaluatedProperties" => {
                walk(ctx, value, role, here, depth + 1, None, visit);
            }
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
                if let NodeValue::Seq(items) = &value.value {
                    for (i, item) in items.iter().enumerate() {
                        walk(
                            ctx,
                            item,
                            role,
                            format!("{here}/{i}"),
                            depth + 1,
                            None,
                            visit,
                        );
                    }
                }
            }
            _ => {}
        }
    }
}

fn escape(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}
