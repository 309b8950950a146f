//! Tool by tool: which tools were removed, renamed or added, and what changed in a tool that
//! is in both versions (effect, idempotency, descriptions, schemas, limits, sandbox, exec).

use std::collections::HashMap;

use crate::diff::{Change, ChangeKind, schema, tool_change};
use crate::ir::{Bundle, ToolDefinition};

/// Reports removed, renamed and added tools; returns the renames (new name → old name).
///
/// A rename is a new tool that lists a removed tool's name under `aliases`, or — without an
/// alias, so still breaking — a new tool whose parameters equal a removed tool's.
pub fn compare_tool_sets<'a>(
    old: &'a Bundle,
    new: &'a Bundle,
    out: &mut Vec<Change>,
) -> HashMap<&'a str, &'a str> {
    let old_names: HashMap<&str, &ToolDefinition> =
        old.tools.iter().map(|t| (t.name.as_str(), t)).collect();
    let new_names: HashMap<&str, &ToolDefinition> =
        new.tools.iter().map(|t| (t.name.as_str(), t)).collect();
    let mut removed: Vec<&ToolDefinition> = old
        .tools
        .iter()
        .filter(|t| !new_names.contains_key(t.name.as_str()))
        .collect();
    let mut renames = HashMap::new();
    for n in new
        .tools
        .iter()
        .filter(|t| !old_names.contains_key(t.name.as_str()))
    {
        let by_alias = removed.iter().position(|o| n.aliases.contains(&o.name));
        let by_shape = || removed.iter().position(|o| o.parameters == n.parameters);
        match by_alias
            .map(|i| (i, true))
            .or_else(|| by_shape().map(|i| (i, false)))
        {
            Some((i, alias)) => {
                let o = removed.remove(i);
                renames.insert(n.name.as_str(), o.name.as_str());
                let (kind, how) = if alias {
                    (
                        ChangeKind::ToolRenamedWithAlias,
                        "; the old name stays an alias",
                    )
                } else {
                    (
                        ChangeKind::ToolRenamed,
                        " with the same parameters, and no alias keeps the old name working",
                    )
                };
                out.push(tool_change(
                    kind,
                    &n.name,
                    "name",
                    format!("`{}` is now `{}`{how}", o.name, n.name),
                ));
            }
            None => out.push(tool_change(
                ChangeKind::ToolAdded,
                &n.name,
                "",
                format!("tool `{}` is new", n.name),
            )),
        }
    }
    for o in removed {
        // A removed tool whose name another tool keeps as an alias still answers.
        if let Some(keeper) = new.tools.iter().find(|t| t.aliases.contains(&o.name)) {
            out.push(tool_change(
                ChangeKind::ToolRenamedWithAlias,
                &o.name,
                "name",
                format!(
                    "`{}` is gone; `{}` answers to its name",
                    o.name, keeper.name
                ),
            ));
            continue;
        }
        out.push(tool_change(
            ChangeKind::ToolRemoved,
            &o.name,
            "",
            format!("tool `{}` was removed", o.name),
        ));
    }
    renames
}

/// Compares one tool's two versions.
pub fn compare_tool(o: &ToolDefinition, n: &ToolDefinition, out: &mut Vec<Change>) {
    let t = n.name.as_str();
    if o.deprecated.is_none()
        && let Some(d) = &n.deprecated
    {
        let instead = d
            .successor
            .as_ref()
            .map(|s| format!(", use `{s}`"))
            .unwrap_or_default();
        out.push(tool_change(
            ChangeKind::ToolDeprecated,
            t,
            "deprecated",
            format!("`{t}` is deprecated since {}{instead}", d.since),
        ));
    }
    if n.effect > o.effect {
        out.push(tool_change(
            ChangeKind::EffectRaised,
            t,
            "effect",
            format!("effect raised from {} to {}", o.effect, n.effect),
        ));
    } else if n.effect < o.effect {
        out.push(tool_change(
            ChangeKind::EffectLowered,
            t,
            "effect",
            format!("effect lowered from {} to {}", o.effect, n.effect),
        ));
    }
    // Idempotency is declared from safest (pure) to least safe (non_idempotent).
    if n.idempotency > o.idempotency {
        out.push(tool_change(
            ChangeKind::IdempotencyWeakened,
            t,
            "idempotency",
            format!(
                "idempotency weakened from {} to {}",
                o.idempotency, n.idempotency
            ),
        ));
    } else if n.idempotency < o.idempotency {
        out.push(tool_change(
            ChangeKind::IdempotencyStrengthened,
            t,
            "idempotency",
            format!(
                "idempotency strengthened from {} to {}",
                o.idempotency, n.idempotency
            ),
        ));
    }
    if o.description != n.description || o.title != n.title {
        out.push(tool_change(
            ChangeKind::DescriptionChanged,
            t,
            "description",
            "the tool's description changed",
        ));
    }
    schema::compare_parameters(t, &o.parameters, &n.parameters, out);
    schema::compare_result(t, o.result.as_ref(), n.result.as_ref(), out);
    compare_limits(o, n, out);
    if o.sandbox != n.sandbox {
        let name = |s: &Option<String>| s.clone().unwrap_or_else(|| "none".into());
        out.push(tool_change(
            ChangeKind::SandboxProfileChanged,
            t,
            "sandbox",
            format!(
                "sandbox profile changed from {} to {}",
                name(&o.sandbox),
                name(&n.sandbox)
            ),
        ));
    }
    if o.exec != n.exec {
        out.push(tool_change(
            ChangeKind::ExecChanged,
            t,
            "exec",
            "how the tool runs changed",
        ));
    }
}

fn compare_limits(o: &ToolDefinition, n: &ToolDefinition, out: &mut Vec<Change>) {
    let t = n.name.as_str();
    if n.timeout_ms < o.timeout_ms {
        out.push(tool_change(
            ChangeKind::TimeoutShortened,
            t,
            "timeout",
            format!(
                "timeout shortened from {} ms to {} ms",
                o.timeout_ms, n.timeout_ms
            ),
        ));
    } else if n.timeout_ms > o.timeout_ms {
        out.push(tool_change(
            ChangeKind::TimeoutLengthened,
            t,
            "timeout",
            format!(
                "timeout lengthened from {} ms to {} ms",
                o.timeout_ms, n.timeout_ms
            ),
        ));
    }
    // The retry budget follows the timeout unless set: a changed timeout alone is not a
    // changed retry policy.
    let same_budget = o.retry.budget_ms == n.retry.budget_ms || o.timeout_ms != n.timeout_ms;
    if (o.retry.max_attempts, &o.retry.on, &o.retry.backoff)
        != (n.retry.max_attempts, &n.retry.on, &n.retry.backoff)
        || !same_budget
    {
        out.push(tool_change(
            ChangeKind::RetryChanged,
            t,
            "retry",
            format!(
                "retry changed (attempts {} → {}, retried on [{}] → [{}])",
                o.retry.max_attempts,
                n.retry.max_attempts,
                join(&o.retry.on),
                join(&n.retry.on)
            ),
        ));
    }
    let limits = [
        ("output.max_bytes", o.output.max_bytes, n.output.max_bytes),
        ("output.max_lines", o.output.max_lines, n.output.max_lines),
        (
            "output.artifact_threshold",
            o.output.artifact_threshold,
            n.output.artifact_threshold,
        ),
    ];
    for (at, before, after) in limits {
        let kind = match after.cmp(&before) {
            std::cmp::Ordering::Less => ChangeKind::OutputLimitLowered,
            std::cmp::Ordering::Greater => ChangeKind::OutputLimitRaised,
            std::cmp::Ordering::Equal => continue,
        };
        out.push(tool_change(
            kind,
            t,
            at,
            format!("{at} changed from {before} to {after}"),
        ));
    }
}

fn join<T: std::fmt::Display>(items: &[T]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
