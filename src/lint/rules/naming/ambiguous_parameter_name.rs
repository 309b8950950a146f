//! TGN007 ambiguous-parameter-name.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::naming::words::{is_stop_word, is_verb, split_identifier, tokens};
use crate::rule::Rule;
use crate::spec::yaml::Node;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::AmbiguousParameterName,
    severity: Severity::Info,
    applies: Applies::Everywhere,
    purpose: "Finds top-level parameters with bare names such as `id`, `data`, `value` or `user`.",
    explanation: r#"## What it does
Reports top-level parameters named only `id`, `data`, `value`, `user`, `item`, `obj`, `object`,
`info`, `input`, `args`, `arguments`, `params`, `parameters`, `payload` or `entity`, and suggests a
name that says what the value is (`agent_id`, `username`, …) where the description or the tool
name gives one away.

## Why is this bad?
A bare name leaves the model to guess which identifier, which user field, what shape of data.
Anthropic's guidance is blunt: "instead of `user`, try `user_id`". The right name prevents the
wrong value from being sent in the first place.

## Example
```yaml
name: close_agent
description: Stop a sub-agent started by spawn_agent; returns its final status.
parameters:
  type: object
  properties:
    id: {type: string, maxLength: 64, description: Agent id to close.}
```

Use instead:
```yaml
    agent_id: {type: string, maxLength: 64, description: Id of the agent to close, as returned by spawn_agent.}
```
"#,
};

/// Names that say nothing about what the value is.
const AMBIGUOUS: &[&str] = &[
    "args",
    "arguments",
    "data",
    "entity",
    "id",
    "info",
    "input",
    "item",
    "obj",
    "object",
    "params",
    "parameters",
    "payload",
    "user",
    "value",
];

/// Reports bare names among the top-level properties.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    let Some(props) = tool.parameters().and_then(|p| p.get("properties")) else {
        return;
    };
    for (key, node) in props.entries() {
        let name = key.name.to_ascii_lowercase();
        if !AMBIGUOUS.contains(&name.as_str()) {
            continue;
        }
        let desc = node.get("description").and_then(Node::as_str).unwrap_or("");
        let (message, help) = match name.as_str() {
            "id" => {
                let noun = noun_before_id(desc).or_else(|| tool_noun(tool.name));
                let suggestion = noun.map(|n| format!("`{n}_id`")).unwrap_or_else(|| "`<thing>_id`".into());
                (
                    format!("`{}` does not say what it identifies", key.name),
                    format!("rename it to {suggestion}, naming the thing it identifies"),
                )
            }
            "user" => (
                format!("`{}` does not say whether it is an id, a login or a name", key.name),
                "rename it to `user_id`, `username` or `user_email`, whichever it is".to_owned(),
            ),
            _ => (
                format!("`{}` does not say what it holds", key.name),
                "name what it holds (`patch`, `form_values`, `mime_data` …), or split it into typed parameters".to_owned(),
            ),
        };
        ctx.report(tool.span(key.range), message).help(help);
    }
}

/// `agent` in "Agent id to close" or "The ID of the agent".
fn noun_before_id(desc: &str) -> Option<String> {
    let toks = tokens(desc);
    let i = toks.iter().position(|t| t == "id" || t == "identifier")?;
    let before = i
        .checked_sub(1)
        .and_then(|j| toks.get(j))
        .filter(|w| !is_stop_word(w) && !is_verb(w));
    let after = toks
        .get(i + 1)
        .filter(|w| *w == "of")
        .and_then(|_| toks.get(i + 2))
        .and_then(|w| if w == "the" { toks.get(i + 3) } else { Some(w) });
    before.or(after).filter(|w| !is_stop_word(w)).cloned()
}

/// The last word of the tool name that is not a verb (`agent` in `close_agent`).
fn tool_noun(tool: &str) -> Option<String> {
    split_identifier(tool)
        .into_iter()
        .rev()
        .find(|w| !is_verb(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nouns_for_ids() {
        assert_eq!(
            noun_before_id("Agent id to close (from spawn_agent).").as_deref(),
            Some("agent")
        );
        assert_eq!(
            noun_before_id("The ID of the workflow run.").as_deref(),
            Some("workflow")
        );
        assert_eq!(noun_before_id("Identifier to use.").as_deref(), None);
        assert_eq!(tool_noun("close_agent").as_deref(), Some("agent"));
    }
}
