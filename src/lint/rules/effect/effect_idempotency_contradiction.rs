//! TGE005 effect-idempotency-contradiction.

use crate::diagnostic::Severity;
use crate::ir::Idempotency;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;
use crate::spec::ast::StringOr;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::EffectIdempotencyContradiction,
    severity: Severity::Error,
    applies: Applies::Everywhere,
    purpose: "Finds effect and idempotency declarations (or MCP hints) that cannot both be true.",
    explanation: r#"## What it does
Reports a tool whose declarations contradict each other:

- a read effect (`pure`, `read_only`, `network_read`) with idempotency `non_idempotent` or
  `conditionally_idempotent`: a call that changes nothing has nothing to repeat;
- idempotency `pure` with an effect that changes something (`local_write` and up): `pure` means
  no side effect at all;
- in an imported MCP list, `readOnlyHint: true` together with `destructiveHint: true`.

`idempotentHint` on a read-only MCP tool is not reported: MCP says it only matters when the tool
is not read-only, and a read is idempotent anyway.

## Why is this bad?
The runtime takes decisions from both. Idempotency decides whether a call may run again after a
crash or a timeout; the effect decides approval and scheduling. When they disagree, one of them
is wrong, and either a read is treated as dangerous or a write as harmless. Smithy rejects
`@readonly` combined with a conflicting trait for the same reason.

## Example
```yaml
name: list_orders
effect: read_only
idempotency: non_idempotent
```

Use instead:
```yaml
name: list_orders
effect: read_only
idempotency: pure
```
"#,
};

/// Reports contradicting effect and idempotency.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    let Some(effect) = tool.effect else { return };
    let effect_span = tool
        .spec
        .value
        .effect
        .as_ref()
        .map(|e| tool.span(e.range))
        .unwrap_or_else(|| tool.name_span());
    if !tool.is_spec() {
        let hint = |k: &str| {
            tool.annotations
                .and_then(|a| a.get(k))
                .and_then(serde_json::Value::as_bool)
        };
        if hint("readOnlyHint") == Some(true) && hint("destructiveHint") == Some(true) {
            ctx.report(
                effect_span,
                format!("`{}` is annotated both `readOnlyHint: true` and `destructiveHint: true`", tool.name),
            )
            .help("a read-only tool changes nothing, so it cannot be destructive: drop `destructiveHint` or set `readOnlyHint: false`");
        }
        return;
    }
    let Some(idem) = &tool.spec.value.idempotency else {
        return;
    };
    let (class, idem_range) = match &idem.value {
        StringOr::String(s) => (Idempotency::parse(s), idem.range),
        StringOr::Map(m) => (Some(m.class.value), m.class.range),
    };
    let Some(class) = class else { return };
    let idem_span = tool.span(idem_range);
    if effect.is_read_only()
        && matches!(
            class,
            Idempotency::NonIdempotent | Idempotency::ConditionallyIdempotent
        )
    {
        ctx.report(
            idem_span,
            format!("`{}` declares effect `{effect}` but idempotency `{class}`", tool.name),
        )
        .label(effect_span, "a read changes nothing, so repeating it repeats nothing")
        .help("if the tool only reads, declare `idempotency: pure`; if a call changes something (consumes a message, advances a cursor), declare the write effect it has");
    } else if class == Idempotency::Pure && !effect.is_read_only() {
        ctx.report(
            idem_span,
            format!("`{}` declares idempotency `pure` but effect `{effect}`", tool.name),
        )
        .label(effect_span, "this effect changes state")
        .help("`pure` means no side effect at all: declare `idempotent` if repeating a call has no further effect, else `non_idempotent`");
    }
}
