//! TGE004 sensitive-parameter-unmarked.

use crate::diagnostic::Severity;
use crate::lint::codes::Rule;
use crate::lint::context::{LintContext, SchemaNode, SchemaRole, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::effect::names::{SecretKind, secret_kind};
use crate::spec::yaml::Node;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::SensitiveParameterUnmarked,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds parameters whose names say they hold secrets but that are not marked for redaction.",
    explanation: r#"## What it does
Reports a parameter (at any depth) named like a secret or personal value — `password`,
`passwd`, `passphrase`, `secret`, `ssn`, `card_number`, `cvv`, `otp`, `cookie` ... — whose
schema carries none of the marks toolgate redacts by:

- `writeOnly: true` (JSON Schema: the value is sent, never returned or shown), or
- `x-sensitive: true` (toolgate's extension), or
- `format: password` (the OpenAPI convention).

Either mark makes the runtime redact the value from the journal, traces and hook views. Names
are split into words, so `max_tokens`, `token_count`, `next_page_token`, `author` and `cursor`
are not secrets. Credentials that authenticate the tool itself (`api_key`, `access_token`,
`auth`, `client_secret`) are reported by `runtime-known-parameter` (TGE006) instead — they
should not be parameters at all — unless that rule is turned off.

## Why is this bad?
Arguments are recorded: in the journal, in traces, in approval prompts. An unmarked password is
copied into every one of them. Smithy's `MissingSensitiveTrait` warns about the same names.

## Example
```yaml
parameters:
  type: object
  properties:
    username: {type: string}
    password: {type: string}
```

Use instead:
```yaml
parameters:
  type: object
  properties:
    username: {type: string}
    password: {type: string, writeOnly: true}
```
"#,
};

/// Whether a schema carries a redaction mark.
pub(crate) fn is_marked(node: &Node) -> bool {
    node.get("writeOnly").and_then(Node::as_bool) == Some(true)
        || node.get("x-sensitive").and_then(Node::as_bool) == Some(true)
        || node.get("format").and_then(Node::as_str) == Some("password")
}

/// Reports an unmarked parameter whose name says it is secret.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView, node: &SchemaNode) {
    if node.role != SchemaRole::Parameters {
        return;
    }
    let Some((key, _)) = node.property else {
        return;
    };
    let kind = match secret_kind(&key.name) {
        Some(k) => k,
        None => return,
    };
    if kind == SecretKind::Credential && ctx.settings.enabled(Rule::RuntimeKnownParameter) {
        return;
    }
    if is_marked(node.node) {
        return;
    }
    let what = match kind {
        SecretKind::Credential => "a credential",
        SecretKind::Sensitive => "a secret or personal value",
    };
    ctx.report(
        tool.span(key.range),
        format!("parameter `{}` looks like {what} but is not marked for redaction", key.name),
    )
    .help("add `writeOnly: true` (or `x-sensitive: true`) so the runtime keeps the value out of the journal, traces and approval prompts");
}
