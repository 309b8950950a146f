//! TGE008 state-folder-writable.

use std::path::{Component, Path, PathBuf};

use crate::diagnostic::Severity;
use crate::ir::project::{ProjectConfig, resolve_state_dir};
use crate::ir::tool::ExecSpec;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::StateFolderWritable,
    severity: Severity::Warning,
    applies: Applies::SpecsOnly,
    purpose: "Finds a state folder that a sandboxed command tool or MCP server may write.",
    explanation: r#"## What it does
Reports the project's `state_dir` when it lies beneath a writable root of a sandbox profile that
a command tool or an MCP server runs under — typically `state_dir: .toolgate` beside
`sandbox: workspace-write`, whose writable root is the whole workspace.

The writable roots are those the process sees as trees of the host: a private `/tmp` (what
`/tmp` is in a profile's `write` under the mount namespace) does not count, except for a
best-effort profile, which may run without the namespace on a kernel that lacks it; nor does
`/dev/null`; nor a profile that writes `/` (`none`), which isolates no files and only masks the
state folder. The runtime refuses to start on the same finding, judged against the kernel it
runs on.

Paths are compared as written: `{workspace}` and relative profile paths beneath the workspace,
a relative `state_dir` beneath the project folder. An absolute path is compared only with an
absolute one.

## Why is this bad?
The state folder holds the execution journal and the artifacts. A tool that can write it can
delete or rewrite the journal — so recovery no longer knows what ran, and a non-idempotent call
may run twice — or replace an artifact the model reads later. Landlock can only grant paths, not
carve one out of a granted folder, and the view's mask over the state folder does not keep a
tool from moving a folder above it, so the state folder has to live outside every writable
root.

## Example
```yaml
# toolgate.yaml
state_dir: .toolgate          # inside the workspace, which workspace-write may write
```

Use instead: leave `state_dir` out (the default, `{state_home}/toolgate/{project}`, is under
`$XDG_STATE_HOME` or `~/.local/state`), or name a folder outside the workspace.
"#,
};

/// Reports a state folder beneath a writable root of a profile some command tool or MCP server
/// uses.
pub(crate) fn check(ctx: &mut LintContext, tools: &[ToolView]) {
    let Some((file, pf)) = ctx.project_file else {
        return;
    };
    let Some(state_key) = &pf.state_dir else {
        return;
    };
    let project = ctx.project;
    let Some(state) = state_path(&state_key.value) else {
        return;
    };
    // Command tools, and MCP servers (which run under the exec shim too), by profile.
    let users = tools
        .iter()
        .filter_map(|tool| {
            let def = tool.def?;
            match (&def.exec, &def.sandbox) {
                (ExecSpec::Command(_), Some(profile)) => Some((profile, tool.name.to_owned())),
                _ => None,
            }
        })
        .chain(project.mcp_servers.iter().filter_map(|(name, server)| {
            Some((server.sandbox.as_ref()?, format!("mcp_servers.{name}")))
        }));
    let mut exposed: Vec<(String, String, Vec<String>)> = Vec::new();
    for (profile, user) in users {
        if let Some(entry) = exposed.iter_mut().find(|(p, _, _)| p == profile) {
            entry.2.push(user);
            continue;
        }
        if let Some(root) = writable_root_over(project, profile, &state) {
            exposed.push((profile.clone(), root, vec![user]));
        }
    }
    for (profile, root, users) in exposed {
        let shown: Vec<String> = users.iter().take(3).map(|u| format!("`{u}`")).collect();
        let more = users.len().saturating_sub(3);
        let who = if more > 0 {
            format!("{} and {more} more", shown.join(", "))
        } else {
            shown.join(", ")
        };
        ctx.report(
            state_key.range.in_file(file),
            format!(
                "the state folder `{}` is writable by tools under sandbox profile `{profile}` (writable root `{root}`): {who}",
                state_key.value
            ),
        )
        .help("leave `state_dir` out to use the default outside the workspace (`{state_home}/toolgate/{project}`), or name a folder outside every writable root");
    }
}

/// Where a path lies: beneath the project folder, or absolute.
#[derive(Debug, PartialEq)]
enum Located {
    InProject(PathBuf),
    Absolute(PathBuf),
}

fn state_path(raw: &str) -> Option<Located> {
    if raw.contains('{') || raw.starts_with("~/") {
        // A template or home path: absolute once expanded (the project folder does not matter).
        let p = resolve_state_dir(raw, Path::new("/")).ok()?;
        return Some(Located::Absolute(normalize(&p)));
    }
    Some(locate(Path::new(raw), Path::new("")))
}

fn locate(path: &Path, base: &Path) -> Located {
    if path.is_absolute() {
        Located::Absolute(normalize(path))
    } else {
        Located::InProject(normalize(&base.join(path)))
    }
}

/// The first writable root of `profile` that contains `state`, as written in the profile.
fn writable_root_over(project: &ProjectConfig, profile: &str, state: &Located) -> Option<String> {
    let profile = project.sandbox_profiles.get(profile)?;
    let workspace = Path::new(&project.workspace);
    profile.shared_write_roots().into_iter().find_map(|raw| {
        let root = match raw.strip_prefix("{workspace}") {
            Some(rest) => locate(&workspace.join(rest.trim_start_matches('/')), Path::new("")),
            None => locate(Path::new(raw), workspace),
        };
        let contains = match (&root, state) {
            (Located::InProject(r), Located::InProject(s))
            | (Located::Absolute(r), Located::Absolute(s)) => s.starts_with(r),
            _ => false,
        };
        contains.then(|| raw.to_owned())
    })
}

/// Removes `.` and resolves `..` without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_compared_as_written() {
        assert_eq!(
            state_path(".toolgate"),
            Some(Located::InProject(PathBuf::from(".toolgate")))
        );
        assert_eq!(
            state_path("./state/../.toolgate"),
            Some(Located::InProject(PathBuf::from(".toolgate")))
        );
        assert_eq!(
            state_path("/tmp/tg"),
            Some(Located::Absolute(PathBuf::from("/tmp/tg")))
        );
        assert_eq!(
            locate(Path::new("."), Path::new("")),
            Located::InProject(PathBuf::new())
        );
        assert!(Path::new(".toolgate").starts_with(PathBuf::new()));
    }
}
