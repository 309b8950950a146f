//! TGP005 unactionable-validation-message.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::effect::names::words;
use crate::rule::Rule;
use crate::spec::resolve::CelRole;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::UnactionableValidationMessage,
    severity: Severity::Info,
    applies: Applies::SpecsOnly,
    purpose: "Finds validate rules whose failure tells the model nothing it can act on.",
    explanation: r#"## What it does
Reports a `validate` rule without a `message` (the model is then told only "argument check
`<id>` failed"), and one whose message names none of the parameters its expression reads and
that has no `hint`. A parameter counts as named when every word of its name appears in the
message, in any inflection (`start_line` as "start line", `patterns` as "pattern").

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

/// Whether `text` mentions a parameter: every word of its name occurs in the text, compared
/// by stem (`patterns` ~ "pattern", `exclude` ~ "excluded", `start_line` ~ "start line").
fn mentions(text: &str, name: &str) -> bool {
    let said: Vec<String> = words(text).iter().map(|w| stem(w)).collect();
    let wanted = words(name);
    !wanted.is_empty() && wanted.iter().all(|w| said.contains(&stem(w)))
}

/// A crude English stem: one common suffix off, keeping at least three letters.
fn stem(word: &str) -> String {
    for suffix in ["ing", "ed", "es", "s", "e", "d"] {
        if let Some(base) = word.strip_suffix(suffix)
            && base.chars().count() >= 3
        {
            return base.to_owned();
        }
    }
    word.to_owned()
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
        assert!(mentions("The paths must be relative.", "path"));
        assert!(mentions("A pattern cannot also be excluded.", "patterns"));
        assert!(mentions("A pattern cannot also be excluded.", "exclude"));
        assert!(!mentions("The start must come first.", "start_line"));
        assert!(!mentions("Invalid input.", "path"));
        assert!(mentions("perPage is at most 100.", "perPage"));
    }
}
