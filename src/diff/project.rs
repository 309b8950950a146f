//! toolgate.yaml: toolsets gaining or losing tools, contexts' no-answer rules, protected paths,
//! and sandbox profiles that restrict less.

use std::collections::HashMap;

use crate::diff::{Change, ChangeKind};
use crate::ir::{AskMode, ProjectConfig, ProtectedPath, SandboxProfile};

fn change(kind: ChangeKind, at: String, message: String) -> Change {
    Change {
        kind,
        tool: None,
        at,
        message,
        witness: None,
    }
}

/// Compares the project settings of both versions; `renames` maps a renamed tool's new name to
/// its old one (a toolset that swaps one for the other serves the same tool).
pub fn compare(
    old: &ProjectConfig,
    new: &ProjectConfig,
    renames: &HashMap<&str, &str>,
    out: &mut Vec<Change>,
) {
    toolsets(old, new, renames, out);
    contexts(old, new, out);
    protect(old, new, out);
    sandbox_profiles(old, new, out);
}

fn toolsets(
    old: &ProjectConfig,
    new: &ProjectConfig,
    renames: &HashMap<&str, &str>,
    out: &mut Vec<Change>,
) {
    for (name, n) in &new.toolsets {
        // A new toolset serves tools nobody was served through it before: each is a widening.
        let before: &[String] = old
            .toolsets
            .get(name)
            .map(|t| t.tools.as_slice())
            .unwrap_or(&[]);
        let was_served = |t: &String| {
            before.contains(t)
                || renames
                    .get(t.as_str())
                    .is_some_and(|o| before.iter().any(|b| b == o))
        };
        for tool in n.tools.iter().filter(|t| !was_served(t)) {
            let mut c = change(
                ChangeKind::ToolsetGainedTool,
                format!("toolsets.{name}"),
                format!("toolset `{name}` now serves `{tool}`"),
            );
            c.tool = Some(tool.clone());
            out.push(c);
        }
    }
    for (name, o) in &old.toolsets {
        let after: &[String] = new
            .toolsets
            .get(name)
            .map(|t| t.tools.as_slice())
            .unwrap_or(&[]);
        let still_served = |t: &String| {
            after.contains(t)
                || after
                    .iter()
                    .any(|a| renames.get(a.as_str()) == Some(&t.as_str()))
        };
        for tool in o.tools.iter().filter(|t| !still_served(t)) {
            let mut c = change(
                ChangeKind::ToolsetLostTool,
                format!("toolsets.{name}"),
                format!("toolset `{name}` no longer serves `{tool}`"),
            );
            c.tool = Some(tool.clone());
            out.push(c);
        }
    }
}

fn contexts(old: &ProjectConfig, new: &ProjectConfig, out: &mut Vec<Change>) {
    for (name, o) in &old.contexts {
        let at = format!("contexts.{name}");
        let Some(n) = new.contexts.get(name) else {
            out.push(change(
                ChangeKind::ContextAskTightened,
                at,
                format!("context `{name}` is gone: sessions in it are refused"),
            ));
            continue;
        };
        match (o.ask, n.ask) {
            (AskMode::Deny, AskMode::Prompt) => out.push(change(
                ChangeKind::ContextAskLoosened,
                at.clone(),
                format!("context `{name}` now prompts where it denied every ask"),
            )),
            (AskMode::Prompt, AskMode::Deny) => out.push(change(
                ChangeKind::ContextAskTightened,
                at.clone(),
                format!("context `{name}` now denies every ask"),
            )),
            _ => {}
        }
        if n.ask == AskMode::Prompt && o.ask == AskMode::Prompt {
            let (a, b) = (o.approval_timeout_ms, n.approval_timeout_ms);
            if b > a {
                out.push(change(
                    ChangeKind::ContextAskLoosened,
                    at,
                    format!("context `{name}` waits longer for an approval ({a} ms → {b} ms)"),
                ));
            } else if b < a {
                out.push(change(
                    ChangeKind::ContextAskTightened,
                    at,
                    format!("context `{name}` waits less for an approval ({a} ms → {b} ms)"),
                ));
            }
        }
    }
    for (name, n) in &new.contexts {
        if !old.contexts.contains_key(name) && n.ask == AskMode::Prompt {
            out.push(change(
                ChangeKind::ContextAskLoosened,
                format!("contexts.{name}"),
                format!("context `{name}` is new and prompts for approvals"),
            ));
        }
    }
}

fn protect(old: &ProjectConfig, new: &ProjectConfig, out: &mut Vec<Change>) {
    let globs = |p: &[ProtectedPath]| p.iter().map(|p| p.glob.clone()).collect::<Vec<_>>();
    let (op, np) = (globs(&old.protect.paths), globs(&new.protect.paths));
    let (oe, ne) = (globs(&old.protect.except), globs(&new.protect.except));
    for g in op.iter().filter(|g| !np.contains(g)) {
        out.push(change(
            ChangeKind::ProtectRemoved,
            "protect".into(),
            format!("`{g}` is no longer protected (e.g. `{}`)", sample_path(g)),
        ));
    }
    for g in ne.iter().filter(|g| !oe.contains(g)) {
        out.push(change(
            ChangeKind::ProtectRemoved,
            "protect".into(),
            format!(
                "`{g}` is now exempt from protection (e.g. `{}`)",
                sample_path(g)
            ),
        ));
    }
    for g in np.iter().filter(|g| !op.contains(g)) {
        out.push(change(
            ChangeKind::ProtectAdded,
            "protect".into(),
            format!("`{g}` is now protected"),
        ));
    }
    for g in oe.iter().filter(|g| !ne.contains(g)) {
        out.push(change(
            ChangeKind::ProtectAdded,
            "protect".into(),
            format!("`{g}` is no longer exempt from protection"),
        ));
    }
}

/// A path a glob matches, to show what a removed protection exposes.
pub fn sample_path(glob: &str) -> String {
    let p = glob
        .trim_start_matches('/')
        .replace("**/", "")
        .replace("**", "x")
        .replace(['*', '?'], "x");
    if p.is_empty() { "x".into() } else { p }
}

fn sandbox_profiles(old: &ProjectConfig, new: &ProjectConfig, out: &mut Vec<Change>) {
    for (name, o) in &old.sandbox_profiles {
        let Some(n) = new.sandbox_profiles.get(name) else {
            continue;
        };
        for what in loosened(o, n) {
            out.push(change(
                ChangeKind::SandboxRestrictionRemoved,
                format!("sandbox_profiles.{name}"),
                format!("sandbox profile `{name}`: {what}"),
            ));
        }
    }
}

/// What a profile allows that it did not.
fn loosened(o: &SandboxProfile, n: &SandboxProfile) -> Vec<String> {
    let mut out = Vec::new();
    for r in n
        .read
        .iter()
        .filter(|r| !o.read.contains(r) && !o.write.contains(r))
    {
        out.push(format!("`{r}` is now readable"));
    }
    for w in n.write.iter().filter(|w| !o.write.contains(w)) {
        out.push(format!("`{w}` is now writable"));
    }
    if n.network && !o.network {
        out.push("the network is now reachable".into());
    }
    if n.best_effort && !o.best_effort {
        out.push("missing kernel features are now tolerated (best_effort)".into());
    }
    let (ol, nl) = (&o.limits, &n.limits);
    for (limit, a, b) in [
        ("cpu", ol.cpu_seconds, nl.cpu_seconds),
        ("memory", ol.memory_bytes, nl.memory_bytes),
        ("file_size", ol.file_size_bytes, nl.file_size_bytes),
        ("open_files", ol.open_files, nl.open_files),
        ("processes", ol.processes, nl.processes),
    ] {
        match (a, b) {
            (Some(a), None) => out.push(format!("the {limit} limit ({a}) is gone")),
            (Some(a), Some(b)) if b > a => {
                out.push(format!("the {limit} limit rose from {a} to {b}"))
            }
            _ => {}
        }
    }
    out
}
