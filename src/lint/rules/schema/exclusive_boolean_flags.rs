//! TGS011 exclusive-boolean-flags.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::naming::words::split_identifier;
use crate::lint::rules::schema::forbidden_pairs::{Atom, forbidden_pairs};
use crate::lint::rules::schema::shape;
use crate::rule::Rule;
use crate::spec::yaml::{Key, Node};

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::ExclusiveBooleanFlags,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds pairs of boolean parameters that encode one choice, so both can be set to true.",
    explanation: r#"Smell: mutually exclusive parameters.

## What it does
Reports two boolean parameters whose names are opposites — `on`/`off`, `enable`/`disable`,
`include_x`/`exclude_x`, `show_x`/`hide_x`, `recursive`/`non_recursive`, `verbose`/`quiet`,
`ascending`/`descending`, `x`/`no_x` — and pairs of booleans a `validate` rule forbids to be true
together (`!(args.a && args.b)`).

## Why is this bad?
Two flags for one choice make a contradictory call (`{on: true, off: true}`) valid as far as the
schema is concerned. The model has to learn the rule by failing, or the tool silently picks one.
OpenAI's guidance uses exactly this, `toggle_light(on, off)`, as the example of invalid states made
representable.

## Example
```yaml
name: set_light
description: Switch the desk light; returns its new state.
parameters:
  type: object
  properties:
    on: {type: boolean}
    off: {type: boolean}
```

Use instead:
```yaml
parameters:
  type: object
  properties:
    state: {type: string, enum: ["on", "off"], description: The state to switch to.}
  required: [state]
  additionalProperties: false
```
"#,
};

/// Words that are opposite choices.
const OPPOSITES: &[(&str, &str)] = &[
    ("accept", "reject"),
    ("add", "remove"),
    ("after", "before"),
    ("allow", "block"),
    ("allow", "deny"),
    ("append", "overwrite"),
    ("append", "replace"),
    ("asc", "desc"),
    ("ascending", "descending"),
    ("async", "sync"),
    ("close", "open"),
    ("disable", "enable"),
    ("disabled", "enabled"),
    ("exclude", "include"),
    ("excluding", "including"),
    ("force", "safe"),
    ("hidden", "visible"),
    ("hide", "show"),
    ("lock", "unlock"),
    ("loud", "quiet"),
    ("off", "on"),
    ("private", "public"),
    ("quiet", "verbose"),
    ("silent", "verbose"),
    ("start", "stop"),
    ("with", "without"),
];
/// Words that negate the rest of a name (`no_verify` against `verify`).
const NEGATIONS: &[&str] = &["dont", "no", "non", "not", "skip", "without"];

/// Reports opposite boolean pairs among the top-level properties.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    let Some(props) = tool.parameters().and_then(|p| p.get("properties")) else {
        return;
    };
    let flags: Vec<(&Key, &Node)> = props
        .entries()
        .iter()
        .filter(|(_, n)| shape::single_type(n) == Some("boolean"))
        .map(|(k, n)| (k, n))
        .collect();
    let mut seen: Vec<(&str, &str)> = Vec::new();
    let help = |a: &str, b: &str| {
        format!(
            "replace `{a}` and `{b}` with one parameter: a single boolean, or an enum naming each state"
        )
    };
    for (i, (a, _)) in flags.iter().enumerate() {
        for (b, _) in flags.iter().skip(i + 1) {
            if opposite(&a.name, &b.name) {
                seen.push((&a.name, &b.name));
                ctx.report(
                    tool.span(b.range),
                    format!("`{}` and `{}` are two flags for one choice, so a call may set both to true", a.name, b.name),
                )
                .label(tool.span(a.range), "the opposite flag")
                .help(help(&a.name, &b.name));
            }
        }
    }
    for pair in forbidden_pairs(tool) {
        let (Atom::True(a), Atom::True(b)) = (&pair.a, &pair.b) else {
            continue;
        };
        if seen
            .iter()
            .any(|(x, y)| (x == a && y == b) || (x == b && y == a))
        {
            continue;
        }
        let is_flag = |name: &str| flags.iter().any(|(k, _)| k.name == name);
        if !is_flag(a) || !is_flag(b) {
            continue;
        }
        ctx.report(pair.span, format!("validate rule `{}` forbids `{a}` and `{b}` both being true: they are one choice in two flags", pair.rule_id))
            .help(help(a, b));
    }
}

/// Whether two parameter names are opposite flags.
fn opposite(a: &str, b: &str) -> bool {
    let wa = split_identifier(a);
    let wb = split_identifier(b);
    let negates = |x: &[String], y: &[String]| {
        x.split_first()
            .is_some_and(|(first, rest)| NEGATIONS.contains(&first.as_str()) && rest == y)
            || x.first().is_some_and(|w| {
                y.first()
                    .is_some_and(|v| *w == format!("non{v}") || *w == format!("un{v}"))
                    && x[1..] == y[1..]
            })
    };
    if negates(&wa, &wb) || negates(&wb, &wa) {
        return true;
    }
    if wa.len() != wb.len() {
        return false;
    }
    let diffs: Vec<(&String, &String)> = wa.iter().zip(&wb).filter(|(x, y)| x != y).collect();
    match diffs.as_slice() {
        [(x, y)] => OPPOSITES
            .iter()
            .any(|(p, q)| (p == x && q == y) || (p == y && q == x)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opposite_names() {
        assert!(opposite("on", "off"));
        assert!(opposite("show_hidden", "hide_hidden"));
        assert!(opposite("includeTests", "excludeTests"));
        assert!(opposite("recursive", "non_recursive"));
        assert!(opposite("verify", "no_verify"));
        assert!(opposite("nonrecursive", "recursive"));
        assert!(opposite("verbose", "quiet"));
        assert!(!opposite("recursive", "follow_symlinks"));
        assert!(!opposite("show_hidden", "show_sizes"));
        assert!(!opposite("submit", "slowly"));
    }

    #[test]
    fn opposites_are_sorted_pairs() {
        assert!(OPPOSITES.iter().all(|(a, b)| a < b));
    }
}
