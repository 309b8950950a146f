//! TGS004 mutually-exclusive-parameters.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::schema::forbidden_pairs::{Atom, forbidden_pairs};
use crate::lint::rules::schema::multi_action_tool::{is_selector_name, switches};
use crate::lint::rules::schema::unstable_result_shape::quote;
use crate::lint::rules::schema::{prose, shape};
use crate::rule::Rule;
use crate::spec::source::Span;
use crate::spec::yaml::Node;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::MutuallyExclusiveParameters,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds parameters that must not (or must) be given together, or only with some value of another, which the model has to learn from prose or rejections.",
    explanation: r#"Smell: mutually exclusive parameters.

## What it does
Finds parameter combinations the schema's shape does not express: `not: {required: [a, b]}`, a
root `oneOf`/`anyOf` of bare `required` lists, `dependentRequired` and `dependentSchemas`;
descriptions that say "either … or", "mutually exclusive", "cannot be used with", "only one of",
"instead of", "alternative to", "omit this when …" about a sibling parameter; a tool description
that says "`a` and `b` are mutually exclusive" (or "cannot be combined"); descriptions that make a parameter
depend on a condition on a sibling ("required when state_reason is …", "Only set if
visibility is …"), also between the fields of an array's items ("Only used when kind is
number"),
including what the tool's description says about a parameter in a list such as
"- closeReason: If isFinal is true, …" (names match across `snake_case` and `camelCase`);
tool descriptions that offer groups of optional parameters as alternatives ("only one of display
or window_title", "by replacing text (old_str/new_str) or applying a diff", "use the 'head'
parameter …, or the 'tail' parameter …"); two optional parameters described alike but for
opposites, each keeping "only the first …" and "only the last …"; a tool whose parameters are
all optional while its first sentence offers some of them as alternatives ("Wait for text to
appear or a specified time to pass"); the per-operation parameters of a multi-action tool
(parameters that belong to some values of its switch only, as TGS001 finds them, including
"for the undo subcommand", where the switch is named after its value); and `validate`
rules such as `!(has(args.a) && has(args.b))`.

What does not count: parameters that only go together ("if provided, `b` also needs to be
provided", "if provided with `repo`, …"), a dependency rather than an exclusion; independent
optional filters; plain "a or b" in prose without a cue ("the
`start` or `end` value"); a parameter whose meaning depends on state rather than on another
parameter.

## Why is this bad?
Models fill parameters independently; a rule that two of them exclude each other is learnt only by
failing. Providers also reject or ignore root-level `oneOf`/`anyOf` and `not`, so the constraint
often disappears from what the model sees.

## Example
```yaml
name: find_in_page
description: Find text in the page snapshot and return the matching lines.
parameters:
  type: object
  properties:
    text: {type: string, description: Plain text to find. Provide either text or regex.}
    regex: {type: string, description: Regular expression to find.}
  not: {required: [text, regex]}
```

Use instead: one parameter whose shape carries the choice.
```yaml
parameters:
  type: object
  properties:
    query: {type: string, maxLength: 500, description: What to find.}
    match: {type: string, enum: [text, regex], default: text, description: How `query` is matched.}
  required: [query]
  additionalProperties: false
```
"#,
};

/// Cues whose sentence may name the other parameter before the cue.
const ANYWHERE_CUES: &[&str] = &[
    "mutually exclusive",
    "not both",
    "will be ignored",
    "is ignored if",
    "is ignored when",
    "are ignored if",
];

/// Reports every excluding combination once per pair.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    let Some(params) = tool.parameters() else {
        return;
    };
    // A set, not a list: a tool with thousands of parameters may report thousands of pairs.
    let mut seen: std::collections::HashSet<(String, String)> = std::collections::HashSet::new();
    let mut first = |a: &str, b: &str| {
        let pair = if a <= b {
            (a.to_owned(), b.to_owned())
        } else {
            (b.to_owned(), a.to_owned())
        };
        seen.insert(pair)
    };
    let help = "merge them into one parameter (an enum, or a tagged object) or split the tool, so that every combination the schema accepts is valid";

    // `not: {required: [a, b]}` at the root or in `allOf`.
    let mut roots = vec![params];
    if let Some(all) = params.get("allOf") {
        roots.extend(all.items());
    }
    for r in &roots {
        let Some(req) = r.get("not").and_then(|n| n.get("required")) else {
            continue;
        };
        let names: Vec<&str> = req.items().iter().filter_map(Node::as_str).collect();
        if let [a, b, ..] = names.as_slice()
            && first(a, b)
        {
            ctx.report(
                tool.span(req.extent()),
                format!(
                    "{} must not be given together (`not: {{required: [...]}}`)",
                    list(&names)
                ),
            )
            .help(help);
        }
    }

    // A root `oneOf`/`anyOf` of bare `required` lists.
    for key in ["oneOf", "anyOf"] {
        let Some((union_key, union)) = params.entry(key) else {
            continue;
        };
        let branches = union.items();
        let bare = !branches.is_empty()
            && branches.iter().all(|b| {
                b.is_map()
                    && b.entries().iter().all(|(k, _)| {
                        matches!(
                            k.name.as_str(),
                            "required" | "not" | "description" | "title"
                        )
                    })
            });
        if !bare {
            continue;
        }
        let mut names: Vec<&str> = Vec::new();
        for b in branches {
            for n in shape::required(b) {
                if !names.contains(&n) {
                    names.push(n);
                }
            }
        }
        if names.len() < 2 {
            continue;
        }
        let how = if key == "oneOf" {
            "exactly one of"
        } else {
            "at least one of"
        };
        if first(names[0], names[1]) {
            ctx.report(
                tool.span(union_key.range),
                format!("the root `{key}` requires {how} {}", list(&names)),
            )
            .help(help);
        }
    }

    // `dependentRequired` and `dependentSchemas`.
    let dependent_help = "group the parameters that belong together in one object parameter (e.g. `range: {since, until}`), so the schema's shape carries the dependency";
    if let Some(dep) = params.get("dependentRequired") {
        for (k, v) in dep.entries() {
            let needs: Vec<&str> = v.items().iter().filter_map(Node::as_str).collect();
            if let Some(b) = needs.first()
                && first(&k.name, b)
            {
                ctx.report(
                    tool.span(k.range),
                    format!(
                        "`{}` is valid only together with {} (`dependentRequired`)",
                        k.name,
                        list(&needs)
                    ),
                )
                .help(dependent_help);
            }
        }
    }
    if let Some(dep) = params.get("dependentSchemas") {
        for (k, _) in dep.entries() {
            if first(&k.name, "") {
                ctx.report(
                    tool.span(k.range),
                    format!(
                        "`{}` changes which other parameters are valid (`dependentSchemas`)",
                        k.name
                    ),
                )
                .help(dependent_help);
            }
        }
    }

    // Descriptions that say so about a sibling: each parameter's own, and what the tool's
    // description says about it in a list such as "- closeReason: If isFinal is true, …".
    let props: Vec<(&crate::spec::yaml::Key, &Node)> = params
        .get("properties")
        .map(|p| p.entries().iter().map(|(k, v)| (k, v)).collect())
        .unwrap_or_default();
    let required = shape::required(params);
    let mut described: Vec<(&crate::spec::yaml::Key, String, Span)> = Vec::new();
    for (key, node) in &props {
        if let Some(desc) = node.get("description")
            && let Some(text) = desc.as_str()
        {
            described.push((key, text.to_owned(), tool.span(desc.range)));
        }
    }
    if let Some(d) = &tool.spec.value.description {
        for (name, text) in prose::parameter_lines(&d.value) {
            if let Some((key, _)) = props.iter().find(|(k, _)| prose::same_name(&k.name, &name)) {
                described.push((key, text, tool.span(d.range)));
            }
        }
    }
    for (key, text, at) in &described {
        for (sentence, cue) in prose::exclusion_sentences(text) {
            // "x instead of y", "cannot be used with y", "either y or z": the other parameter
            // comes after the cue; "y and z are mutually exclusive" may name it before.
            let after = if ANYWHERE_CUES.contains(&cue) {
                sentence.as_str()
            } else {
                let at = sentence.to_ascii_lowercase().find(cue).unwrap_or(0);
                &sentence[at..]
            };
            let others: Vec<&crate::spec::yaml::Key> = props
                .iter()
                .map(|(k, _)| *k)
                .filter(|k| k.name != key.name && prose::mentions(after, &k.name))
                .collect();
            let fresh: Vec<&crate::spec::yaml::Key> = others
                .into_iter()
                .filter(|k| first(&key.name, &k.name))
                .collect();
            if fresh.is_empty() {
                continue;
            }
            let names: Vec<&str> = fresh.iter().map(|k| k.name.as_str()).collect();
            let d = ctx.report(
                *at,
                format!(
                    "`{}` excludes {}, as its description says (\"{cue}\")",
                    key.name,
                    list(&names)
                ),
            );
            d.help(help);
            for k in fresh.iter().take(3) {
                d.label(tool.span(k.range), format!("`{}` is declared here", k.name));
            }
        }
    }

    // Descriptions that make a parameter depend on a condition on a sibling ("required when
    // state_reason is duplicate").
    for (key, text, at) in &described {
        for (sentence, cue) in prose::dependency_sentences(text) {
            let cue_at = sentence.to_ascii_lowercase().find(cue).unwrap_or(0);
            let after = sentence.get(cue_at..).unwrap_or(&sentence);
            let fresh: Vec<&crate::spec::yaml::Key> = props
                .iter()
                .map(|(k, _)| *k)
                .filter(|k| {
                    k.name != key.name
                        && !is_selector_name(&k.name)
                        && prose::mentions(after, &k.name)
                })
                .filter(|k| first(&key.name, &k.name))
                .collect();
            if fresh.is_empty() {
                continue;
            }
            let names: Vec<&str> = fresh.iter().map(|k| k.name.as_str()).collect();
            let d = ctx.report(
                *at,
                format!(
                    "`{}` depends on {}, as its description says (\"{cue}\")",
                    key.name,
                    list(&names)
                ),
            );
            d.help(dependent_help);
            for k in fresh.iter().take(3) {
                d.label(tool.span(k.range), format!("`{}` is declared here", k.name));
            }
        }
    }

    // The same one level down: a field of an array's items that depends on a condition on
    // another field of the same item ("Only applies when type is choice"). Selector-named fields
    // count here, since TGS001 reads only the root's switch.
    for (array, node) in &props {
        let fields: Vec<(&crate::spec::yaml::Key, &Node)> = node
            .get("items")
            .and_then(|i| i.get("properties"))
            .map(|p| p.entries().iter().map(|(k, v)| (k, v)).collect())
            .unwrap_or_default();
        for (key, field) in &fields {
            let Some(desc) = field.get("description") else {
                continue;
            };
            let Some(text) = desc.as_str() else {
                continue;
            };
            for (sentence, cue) in prose::dependency_sentences(text) {
                let cue_at = sentence.to_ascii_lowercase().find(cue).unwrap_or(0);
                let after = sentence.get(cue_at..).unwrap_or(&sentence);
                let Some(other) = fields
                    .iter()
                    .map(|(k, _)| *k)
                    .find(|k| k.name != key.name && prose::mentions(after, &k.name))
                else {
                    continue;
                };
                let (a, b) = (
                    format!("{}[].{}", array.name, key.name),
                    format!("{}[].{}", array.name, other.name),
                );
                if !first(&a, &b) {
                    continue;
                }
                let subject = format!("in each item of `{}`, `{}`", array.name, key.name);
                let declared = (tool.span(other.range), other.name.as_str());
                let d = report_dependent(ctx, tool.span(desc.range), &subject, declared, &sentence);
                d.help(dependent_help);
            }
        }
    }

    // A description that starts with a condition on a sibling: "If is_final is true, the reason
    // it closes".
    for (key, text, at) in &described {
        for sentence in prose::sentences(text) {
            // Only a sentence that opens with a condition can name a sibling as one: checked
            // once here rather than once per parameter.
            if !prose::opens_with_condition(&sentence) {
                continue;
            }
            let Some(other) = props
                .iter()
                .map(|(k, _)| *k)
                .find(|k| k.name != key.name && prose::conditioned_on(&sentence, &k.name))
            else {
                continue;
            };
            if !first(&key.name, &other.name) {
                continue;
            }
            let subject = format!("`{}`", key.name);
            let declared = (tool.span(other.range), other.name.as_str());
            let d = report_dependent(ctx, *at, &subject, declared, &sentence);
            d.help(dependent_help);
        }
    }

    // The tool's description offering groups of optional parameters as alternatives.
    if let Some(desc) = &tool.spec.value.description {
        let optional: Vec<&str> = props
            .iter()
            .map(|(k, _)| k.name.as_str())
            .filter(|n| !required.contains(n))
            .collect();
        for alt in prose::alternatives(&desc.value, &optional) {
            let (Some(a), Some(b)) = (alt.left.first(), alt.right.first()) else {
                continue;
            };
            if !first(a, b) {
                continue;
            }
            let left: Vec<&str> = alt.left.iter().map(String::as_str).collect();
            let right: Vec<&str> = alt.right.iter().map(String::as_str).collect();
            let message = if alt.at_least_one {
                format!(
                    "at least one of {} or {} must be given, as the description of `{}` says (\"{}\")",
                    group(&left),
                    group(&right),
                    tool.name,
                    alt.cue
                )
            } else {
                format!(
                    "{} or {}, not both: the description of `{}` offers them as alternatives (\"{}\")",
                    group(&left),
                    group(&right),
                    tool.name,
                    alt.cue
                )
            };
            let d = ctx.report(tool.span(desc.range), message);
            d.help(help);
            for name in left.iter().chain(&right).take(3) {
                if let Some((k, _)) = props.iter().find(|(k, _)| k.name == *name) {
                    d.label(tool.span(k.range), format!("`{name}` is declared here"));
                }
            }
        }
    }

    // Two optional parameters described alike but for a pair of opposites, each restricting the
    // result ("returns only the first N lines" / "only the last N lines"): one excludes the other.
    let optional: Vec<(&crate::spec::yaml::Key, &str)> = props
        .iter()
        .filter(|(k, _)| !required.contains(&k.name.as_str()))
        .filter_map(|(k, n)| Some((*k, n.get("description")?.as_str()?)))
        .collect();
    for (i, j) in prose::restriction_pairs(&optional.iter().map(|(_, d)| *d).collect::<Vec<_>>()) {
        let ((a, da), (b, db)) = (optional[i], optional[j]);
        {
            if let Some((x, y)) = prose::opposite_restrictions(da, db)
                && first(&a.name, &b.name)
            {
                let d = ctx.report(
                    tool.span(b.range),
                    format!(
                        "`{}` and `{}` exclude each other: one keeps \"only the {x}\", the other \"only the {y}\"",
                        a.name, b.name
                    ),
                );
                d.help(help);
                d.label(tool.span(a.range), format!("`{}` is declared here", a.name));
            }
        }
    }

    // A tool whose parameters are all optional, described as needing one of them: "Wait for
    // text to appear or a specified time to pass".
    if required.is_empty()
        && props.len() >= 2
        && let Some(d) = &tool.spec.value.description
        && let Some(group) = prose::offered_group(
            &d.value,
            &props
                .iter()
                .map(|(k, _)| k.name.as_str())
                .collect::<Vec<_>>(),
        )
        && group.len() >= 2
        && first(&group[0], &group[1])
    {
        let names: Vec<&str> = group.iter().map(String::as_str).collect();
        ctx.report(
            tool.span(d.range),
            format!(
                "`{}` needs one of {}, as its description offers them as alternatives, but the schema requires none",
                tool.name,
                list(&names)
            ),
        )
        .help("make the alternatives one required parameter whose shape carries the choice (an enum plus a value, or a tagged `oneOf`), or split the tool");
    }

    // Parameters that belong to some values of a switch only (the switch itself is TGS001's).
    for sw in switches(tool) {
        let mut names: Vec<&str> = Vec::new();
        for (_, n, _) in &sw.per_value {
            for part in n.split(", ") {
                if !part.is_empty() && !names.contains(&part) {
                    names.push(part);
                }
            }
        }
        if names.is_empty() || !first(&sw.key.name, "") {
            continue;
        }
        let shown: Vec<&str> = names.iter().take(5).copied().collect();
        let more = if names.len() > 5 {
            format!(" and {} more", names.len() - 5)
        } else {
            String::new()
        };
        let (verb, them) = if names.len() == 1 {
            ("applies", "it")
        } else {
            ("apply", "them")
        };
        let d = ctx.report(
            tool.span(sw.key.range),
            format!(
                "{}{more} {verb} only to some values of `{}`: the schema accepts {them} with every value",
                list(&shown),
                sw.key.name
            ),
        );
        d.help("split the tool per value, or make the parameters a `oneOf` keyed by a `const` on the switch, so each value takes only its own parameters");
        for (span, _, msg) in sw.per_value.iter().take(3) {
            d.label(*span, msg.clone());
        }
    }

    // `validate` rules such as `!(has(args.a) && has(args.b))`.
    for pair in forbidden_pairs(tool) {
        let (Atom::Present(a), Atom::Present(b)) = (&pair.a, &pair.b) else {
            continue;
        };
        if !first(a, b) {
            continue;
        }
        let what = if pair.exactly_one {
            "needs exactly one of"
        } else {
            "forbids giving both"
        };
        let d = ctx.report(
            pair.span,
            format!("validate rule `{}` {what} `{a}` and `{b}`", pair.rule_id),
        );
        d.help(help);
        if let Some(k) = props.iter().find(|(k, _)| k.name == *a).map(|(k, _)| k) {
            let span: Span = tool.span(k.range);
            d.label(span, format!("`{a}` is declared here"));
        }
    }
}

/// Parameters given together: `a`, or `a` with `b`.
/// Reports that `subject` depends on the parameter declared at `declared`, quoting the
/// description's `sentence` that says so.
fn report_dependent<'c>(
    ctx: &'c mut LintContext,
    at: Span,
    subject: &str,
    (declared_at, other): (Span, &str),
    sentence: &str,
) -> &'c mut crate::diagnostic::Diagnostic {
    let d = ctx.report(
        at,
        format!(
            "{subject} depends on `{other}`, as its description says (\"{}\")",
            quote(sentence)
        ),
    );
    d.label(declared_at, format!("`{other}` is declared here"));
    d
}

fn group(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    quoted.join(" with ")
}

fn list(names: &[&str]) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    match quoted.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}
