//! TGE001 effect-verb-mismatch.

use crate::diagnostic::Severity;
use crate::ir::Effect;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::effect::names::{VerbClass, tool_verb};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::EffectVerbMismatch,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds tools whose name's verb says one effect and whose declared effect says another.",
    explanation: r#"## What it does
Takes the verb a tool name is built around (its first word, else the word after a namespace such
as `git_`, else its last word: `delete_branch`, `git_commit`, `issue_read`) and compares what it
promises with the declared `effect` (for imported MCP lists, the effect the annotations imply):

| verb | expected effect | reported when the effect is |
|---|---|---|
| get, list, read, search, find, show, describe, fetch, view | a read | `local_write`, `network_write`, `external_side_effect`, `destructive` |
| create, write, update, edit, set, add, put, patch, move, rename | a write | `read_only`, `network_read` |
| remove, unlink | a write | `read_only`, `network_read` |
| send, post, publish, notify, email, deploy, merge, push | a write beyond the machine | `read_only`, `network_read` |
| run, exec, execute, shell, bash | `process_execution` | `read_only`, `network_read` without a `sandbox` |
| delete, drop, purge, destroy, truncate | `destructive` | anything else but `pure` |

A `pure` tool is never reported: it computes from its arguments, so its verb names the
computation (`add_numbers`, `create_uuid`, `remove_duplicates`).

A verb after `or`/`and` counts too (`get_or_create_label` is a write). Tools whose effect is
unknown (imported lists without annotations) are skipped. This is Smithy's
`HttpMethodSemanticsValidator` for tool contracts.

## Why is this bad?
Permissions, scheduling, retries and the approval prompt all follow the effect, while people and
models read the name. A `delete_*` tool declared `read_only` runs without approval, in parallel,
and is retried; a `get_*` tool declared `destructive` asks for approval on every call until people
learn to click through prompts. One of the two is wrong.

## Example
```yaml
name: delete_branch
effect: local_write
```

Use instead:
```yaml
name: delete_branch
effect: destructive
```
"#,
};

/// Reports a tool whose name's verb contradicts its effect.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    let Some(effect) = tool.effect else { return };
    let Some(verb) = tool_verb(tool.name) else {
        return;
    };
    let sandboxed = tool.spec.value.sandbox.is_some();
    if !verb.class.contradicts(effect, sandboxed) {
        return;
    }
    let (says, expected) = match verb.class {
        VerbClass::Read => (
            "a read",
            "a read effect (`read_only`, `network_read` or `pure`)",
        ),
        VerbClass::Write | VerbClass::Remove => (
            "a change",
            "a write effect such as `local_write` or `network_write`",
        ),
        VerbClass::Send => (
            "an action beyond the machine",
            "`network_write` or `external_side_effect`",
        ),
        VerbClass::Run => (
            "running a program",
            "`process_execution` (or a `sandbox` that keeps it read-only)",
        ),
        VerbClass::Delete => ("a deletion", "`destructive`"),
        VerbClass::Other => return,
    };
    let at = tool
        .spec
        .value
        .effect
        .as_ref()
        .map(|e| tool.span(e.range))
        .unwrap_or_else(|| tool.name_span());
    let declared = if tool.is_spec() {
        format!("declares effect `{effect}`")
    } else if effect.is_read_only() {
        "is annotated read-only (`readOnlyHint: true`)".to_owned()
    } else if effect == Effect::Destructive {
        "is annotated destructive (`destructiveHint: true`)".to_owned()
    } else {
        "is annotated non-destructive (`destructiveHint: false`)".to_owned()
    };
    let name_span = tool.name_span();
    let help = match verb.class {
        VerbClass::Delete => "deleting cannot be undone: declare `effect: destructive` so calls need approval and are never retried blindly, or rename the tool if it does not delete".to_owned(),
        VerbClass::Read if effect == Effect::Destructive => format!(
            "if `{}` only reads, declare a read effect; if it really changes state, rename it after what it changes",
            tool.name
        ),
        _ => format!("declare {expected}, or rename the tool after what it really does"),
    };
    let help = if tool.is_spec() {
        help
    } else {
        format!(
            "if `{}` changes or deletes anything, its annotations should say so (`readOnlyHint: false`, `destructiveHint`); otherwise rename it after what it does",
            tool.name
        )
    };
    ctx.report(
        at,
        format!(
            "`{}` is named like {says} (`{}`) but {declared}",
            tool.name, verb.word
        ),
    )
    .label(name_span, format!("the verb `{}` says {says}", verb.word))
    .help(help);
}
