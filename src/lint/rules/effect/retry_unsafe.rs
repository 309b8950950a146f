//! TGE003 retry-unsafe.

use crate::diagnostic::Severity;
use crate::ir::{ErrorType, Idempotency};
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::effect::names::words;
use crate::rule::Rule;
use crate::spec::ast::StringOr;
use crate::spec::source::Span;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::RetryUnsafe,
    severity: Severity::Error,
    applies: Applies::SpecsOnly,
    purpose: "Finds automatic retries of work that repeats its effect when run twice.",
    explanation: r#"## What it does
Reports a `retry` with more than one attempt on a tool that is `non_idempotent` (declared, or by
default for its effect: every effect that writes defaults to it) or `conditionally_idempotent`
without a precondition parameter (`expected_hash`, `if_match`, `etag`, `sha` ...), when the
tool has no idempotency key (`idempotency: {class, key}`) and the retried errors include one
after which the first attempt may already have taken effect.

Errors that prove the call did not run are safe to retry on anything: `RATE_LIMITED`,
`SCHEDULING_CONFLICT`, `RESOURCE_NOT_FOUND`, `PRECONDITION_FAILED` and the validation and
permission errors. `TIMEOUT` and `UNKNOWN_OUTCOME` are the worst: the work may well have
happened. A `retry` without `on` retries the runtime's transient errors, which include both.

## Why is this bad?
Smithy: operations that are not read-only, not idempotent and have no idempotency token "SHOULD
be considered unsafe to retry". A `send_email` retried after a timeout sends the mail twice; a
`create_order` retried creates two orders. The runtime's own recovery keeps non-idempotent work
that may have run as `unknown_outcome` for a person to settle — an automatic retry skips that.

## Example
```yaml
name: create_invoice
effect: external_side_effect
idempotency: non_idempotent
retry: {max_attempts: 3, on: [TIMEOUT, NETWORK_ERROR]}
```

Use instead:
```yaml
name: create_invoice
effect: external_side_effect
idempotency: {class: non_idempotent, key: "args.request_id"}
retry: {max_attempts: 3, on: [TIMEOUT, NETWORK_ERROR]}
```
"#,
};

/// Errors after which the call cannot have taken effect.
fn proves_nothing_ran(e: ErrorType) -> bool {
    match e {
        ErrorType::UnknownTool
        | ErrorType::InvalidArguments
        | ErrorType::SemanticValidationError
        | ErrorType::CostLimit
        | ErrorType::PolicyDenied
        | ErrorType::UserDenied
        | ErrorType::ApprovalUnavailable
        | ErrorType::RateLimited
        | ErrorType::ResourceNotFound
        | ErrorType::PreconditionFailed
        | ErrorType::SchedulingConflict => true,
        ErrorType::Timeout
        | ErrorType::Cancelled
        | ErrorType::SandboxViolation
        | ErrorType::ProcessError
        | ErrorType::NetworkError
        | ErrorType::OutputLimit
        | ErrorType::RuntimeException
        | ErrorType::UnknownOutcome
        | ErrorType::UpstreamError => false,
    }
}

/// Whether a parameter name carries a precondition that makes a repeat detectable.
pub(crate) fn is_precondition(name: &str) -> bool {
    let w = words(name);
    let has = |s: &str| w.iter().any(|x| x == s);
    has("expected")
        || has("precondition")
        || has("etag")
        || has("hash")
        || has("sha")
        || (has("if") && has("match"))
}

/// Reports retries of non-idempotent work.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    let Some(def) = tool.def else { return };
    let Some(retry) = &tool.spec.value.retry else {
        return;
    };
    if def.retry.max_attempts <= 1 || def.idempotency_key.is_some() {
        return;
    }
    let class = def.idempotency;
    let precondition = tool
        .properties()
        .into_iter()
        .find(|(k, _, _)| is_precondition(&k.name));
    match class {
        Idempotency::Pure | Idempotency::Idempotent => return,
        Idempotency::ConditionallyIdempotent if precondition.is_some() => return,
        Idempotency::ConditionallyIdempotent | Idempotency::NonIdempotent => {}
    }
    // The retried errors after which the first attempt may have taken effect, with their spans.
    let listed = retry.value.on.as_ref();
    let unsafe_errors: Vec<(ErrorType, Span)> = match listed {
        Some(on) => on
            .value
            .iter()
            .filter_map(|e| ErrorType::parse(&e.value).map(|t| (t, tool.span(e.range))))
            .filter(|(t, _)| !proves_nothing_ran(*t))
            .collect(),
        None => Vec::new(),
    };
    if listed.is_some() && unsafe_errors.is_empty() {
        return;
    }
    let worst = unsafe_errors
        .iter()
        .find(|(t, _)| matches!(t, ErrorType::Timeout | ErrorType::UnknownOutcome));
    let at = match (worst, unsafe_errors.first()) {
        (Some((_, s)), _) | (None, Some((_, s))) => *s,
        (None, None) => tool.span(
            retry
                .value
                .max_attempts
                .as_ref()
                .map(|m| m.range)
                .unwrap_or(retry.range),
        ),
    };
    let what = if listed.is_none() {
        "the runtime's transient errors (no `on` list)".to_owned()
    } else {
        unsafe_errors
            .iter()
            .map(|(t, _)| format!("`{t}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let why = match worst {
        Some((t, _)) => format!(
            "after `{t}` the first attempt may already have taken effect, so a retry can repeat it"
        ),
        None => {
            "a failed attempt may have partly taken effect, so a retry can repeat it".to_owned()
        }
    };
    let declared = match tool.spec.value.idempotency.as_ref() {
        Some(i) => {
            let range = match &i.value {
                StringOr::Map(m) => m.class.range,
                StringOr::String(_) => i.range,
            };
            (tool.span(range), format!("declared `{class}` here"))
        }
        None => (
            tool.spec
                .value
                .effect
                .as_ref()
                .map(|e| tool.span(e.range))
                .unwrap_or_else(|| tool.name_span()),
            format!("`{class}` by default for effect `{}`", def.effect),
        ),
    };
    let subject = match class {
        Idempotency::ConditionallyIdempotent => {
            "conditionally idempotent with no precondition parameter"
        }
        _ => "not idempotent",
    };
    let help = match (class, &tool.spec.value.idempotency) {
        (Idempotency::ConditionallyIdempotent, _) => {
            "add a precondition parameter (such as `expected_hash`) that makes a repeat fail instead of applying twice, or give the tool an idempotency key"
        }
        (_, Some(i)) if matches!(i.value, StringOr::Map(_)) => {
            "add `key:` to `idempotency` (a CEL expression over the arguments the backend deduplicates on), or retry only errors that prove nothing ran, such as `RATE_LIMITED`"
        }
        _ => {
            "give the tool an idempotency key (`idempotency: {class: non_idempotent, key: \"args.request_id\"}`) that the backend deduplicates on, retry only errors that prove nothing ran (such as `RATE_LIMITED`), or remove `retry`"
        }
    };
    ctx.report(
        at,
        format!(
            "`{}` retries {what} up to {} attempts but is {subject} and has no idempotency key: {why}",
            tool.name, def.retry.max_attempts
        ),
    )
    .label(declared.0, declared.1)
    .help(help);
}
