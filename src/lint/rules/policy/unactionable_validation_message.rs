//! TGP005 unactionable-validation-message.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, Group, RuleMeta};
use crate::lint::rules::effect::names::words;
use crate::spec::resolve::CelRole;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    code: "TGP005",
    name: "unactionable-validation-message",
    group: Group::Policy,
    severity: Severity::Info,
    applies: Applies::SpecsOnly,
    purpose: "Finds validate rules whose failure tells the model nothing it can act on.",
    explanation: r#"## What it does
Reports a `validate` rule without a `message` (the model is then told only "argument check
`<id>` failed"), and one whose message names none of the parameters its expression reads and
that has no `hint`. A parameter counts as named when the message contains it as a word
(`start_line`) or as its words (`start line`).

## Why is this bad?
A failed check is an observation the model acts on. "Invalid input." leaves it guessing which
argument to change and how, so it retries variations or gives up; "start_line must not be
greater than end_line" with a hint to swap them is fixed in one call. Anthropic: errors should
give "specific and actionable improvements, rather than opaque error codes".

## Example
```yaml
validate:
  - id: line-range
    expr: "args.start_line <= args.end_line"
    message: Invalid range.
```

Use instead:
```yaml
validate:
  - id: line-range
    expr: "args.start_line <= args.end_line"
    message: start_line must not be greater than end_line.
    hint: Swap the two values, or omit end_line to read to the end.
```
"#,
};

/// Whether `text` mentions a parameter name, as written or as its words.
fn mentions(text: &str, name: &str) -> bool {
    let lower = text.to_lowercase();
    let as_words = words(name).join(" ");
    contains_word(&lower, &name.to_lowercase())
        || (!as_words.is_empty() && contains_word(&lower, &as_words))
}

/// Whether `needle` occurs in `hay` with no letter, digit or `_` right before or after it.
fn contains_word(hay: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    hay.match_indices(needle).any(|(i, _)| {
        let before = hay[..i].chars().next_back();
        let after = hay[i + needle.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

/// Reports validate rules with missing or unactionable messages.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    let Some(rules) = &tool.spec.value.validate else {
        return;
    };
    for rule in &rules.value {
        let r = &rule.value;
        let id = &r.id.value;
        let Some(message) = &r.message else {
            ctx.report(
                tool.span(r.id.range),
                format!("validate rule `{id}` has no `message`: the model is told only that check `{id}` failed"),
            )
            .help("add a `message` that names the argument and says what a valid value is, and a `hint` on how to fix the call");
            continue;
        };
        if r.hint.is_some() {
            continue;
        }
        let mut params: Vec<&str> = tool
            .resolved
            .cel
            .iter()
            .filter(|s| s.role == CelRole::Validate(id.clone()))
            .filter_map(|s| s.analysis.as_ref())
            .flat_map(|a| a.arg_paths.iter().flatten())
            .map(String::as_str)
            .filter(|seg| *seg != "[]")
            .collect();
        params.sort_unstable();
        params.dedup();
        if params.is_empty() || params.iter().any(|p| mentions(&message.value, p)) {
            continue;
        }
        ctx.report(
            tool.span(message.range),
            format!(
                "the message of validate rule `{id}` names none of the arguments it checks ({}) and there is no `hint`",
                params.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", ")
            ),
        )
        .help("name the argument in the message, or add a `hint` that says how to fix the call");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_names_as_words() {
        assert!(mentions(
            "start_line must not be greater than end_line.",
            "start_line"
        ));
        assert!(mentions("The start line is after the end.", "start_line"));
        assert!(mentions("The path must stay inside the workspace.", "path"));
        assert!(!mentions("The paths must be relative.", "path"));
        assert!(!mentions("Invalid input.", "path"));
        assert!(mentions("perPage is at most 100.", "perPage"));
    }
}
