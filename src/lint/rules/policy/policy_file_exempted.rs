//! TGP013 policy-file-exempted.

use std::path::{Path, PathBuf};

use crate::diagnostic::Severity;
use crate::ir::ProtectedPath;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::policy::default_protection_exempted::sample;
use crate::policy::ProtectedSet;
use crate::policy::files::{DEFAULT_SPEC_GLOBS, lexical, literal_prefix};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::PolicyFileExempted,
    severity: Severity::Warning,
    applies: Applies::SpecsOnly,
    purpose: "Finds a `protect` exception or a sandbox profile's `write` path that would open a policy file to tools: it has no effect.",
    explanation: r#"## What it does
Reports, in toolgate.yaml, each `except` entry of `protect:` that matches a policy file — the
project file, a spec file the `specs:` globs load, or a path where a new spec would match them —
and each sandbox profile `write:` path that names a policy file or lies in a spec folder. A write
path that is the workspace, or above it, is not reported: it grants the workspace, not the policy.

## Why is this bad?
Policy files are read-only to every tool, whatever the policy says: the builtins refuse to write
them (POLICY_DENIED) and command tools see them mounted read-only. An entry that looks as if it
lets tools edit toolgate.yaml or the specs has no effect, and misleads whoever reads the policy
into thinking an agent may change its own governance. A change to the policy is made by a person,
then trusted with `toolgate trust`. (A profile that writes the state folder is TGE008.)

## Example
```yaml
protect:
  - {except: "tool-specs/**", reason: The agent maintains its tools.}
sandbox_profiles:
  specs-write:
    read: ["{system}", "{workspace}"]
    write: [tool-specs]
```

Use instead: edit the specs yourself and run `toolgate trust`; drop the entries.
"#,
};

/// The policy's paths as lint sees them (no file system walk): the project file, the spec files
/// loaded, and each spec glob's folder and sample matches.
struct PolicyPaths {
    /// The workspace root, absolute.
    workspace: PathBuf,
    /// Files, absolute.
    files: Vec<PathBuf>,
    /// Paths a new spec could take (samples of the globs), absolute.
    new_specs: Vec<PathBuf>,
    /// The spec folders (each glob's literal prefix), absolute.
    folders: Vec<PathBuf>,
}

impl PolicyPaths {
    fn of(ctx: &LintContext, tools: &[ToolView]) -> Option<PolicyPaths> {
        let (id, pf) = ctx.project_file?;
        let file = std::path::absolute(&ctx.sources.get(id)?.path).ok()?;
        let root = file.parent()?.to_path_buf();
        let workspace = lexical(&root.join(pf.workspace.as_ref().map_or(".", |w| &w.value)));
        let globs: Vec<String> = match &pf.specs {
            Some(s) if !s.value.is_empty() => s.value.iter().map(|g| g.value.clone()).collect(),
            _ => DEFAULT_SPEC_GLOBS.iter().map(|g| (*g).to_owned()).collect(),
        };
        let mut files = vec![lexical(&file)];
        files.extend(
            tools
                .iter()
                .filter_map(|t| std::path::absolute(&t.file.path).ok())
                .map(|p| lexical(&p)),
        );
        let mut new_specs = Vec::new();
        let mut folders = Vec::new();
        for g in &globs {
            folders.push(lexical(&root.join(literal_prefix(g))));
            new_specs.push(lexical(&root.join(sample(g))));
            new_specs.push(lexical(&root.join(sample(&g.replace("**/", "")))));
        }
        Some(PolicyPaths {
            workspace,
            files,
            new_specs,
            folders,
        })
    }

    /// The first policy path, workspace-relative, an `except` glob matches.
    fn excepted(&self, except: &str) -> Option<String> {
        let set = ProtectedSet::from_globs(
            vec![ProtectedPath {
                glob: except.to_owned(),
                reason: String::new(),
                default: false,
            }],
            &[],
        )
        .ok()?;
        self.files
            .iter()
            .chain(&self.new_specs)
            .filter_map(|p| p.strip_prefix(&self.workspace).ok())
            .map(|r| r.to_string_lossy().into_owned())
            .find(|r| set.protects(r).is_some())
    }

    /// The first policy path a profile's write root would open: a file at or beneath it, or a
    /// spec folder it lies in. The workspace and the folders above it open no policy file.
    fn written(&self, raw: &str) -> Option<PathBuf> {
        if raw.starts_with('{') && raw.ends_with('}') && raw != "{workspace}" {
            return None;
        }
        // As the sandbox resolves a root: `{workspace}` replaced, a relative path from it.
        let root = lexical(
            &self
                .workspace
                .join(raw.replace("{workspace}", &self.workspace.to_string_lossy())),
        );
        if self.workspace.starts_with(&root) {
            return None;
        }
        self.files
            .iter()
            .find(|f| f.starts_with(&root))
            .or_else(|| self.folders.iter().find(|d| root.starts_with(d)))
            .cloned()
    }
}

/// Reports exceptions and write paths that would open a policy file.
pub(crate) fn check(ctx: &mut LintContext, tools: &[ToolView]) {
    let Some((file, pf)) = ctx.project_file else {
        return;
    };
    let Some(paths) = PolicyPaths::of(ctx, tools) else {
        return;
    };
    let shown = |p: &Path| {
        p.strip_prefix(&paths.workspace)
            .map(|r| r.display().to_string())
            .unwrap_or_else(|_| p.display().to_string())
    };
    let mut found = Vec::new();
    for entry in pf.protect.iter().flat_map(|e| &e.value) {
        let Some(except) = &entry.value.except else {
            continue;
        };
        if let Some(hit) = paths.excepted(&except.value) {
            found.push((
                except.range,
                format!(
                    "`except: {}` covers the policy file `{hit}`: it has no effect, policy files stay read-only to every tool",
                    except.value
                ),
            ));
        }
    }
    for (name, profile) in &pf.sandbox_profiles {
        for w in &profile.value.write {
            if let Some(hit) = paths.written(&w.value) {
                found.push((
                    w.range,
                    format!(
                        "sandbox profile `{name}` writes `{}`, which covers the policy's `{}`: it has no effect there, policy files and spec folders stay read-only to every tool",
                        w.value,
                        shown(&hit)
                    ),
                ));
            }
        }
    }
    for (range, message) in found {
        ctx.report(range.in_file(file), message)
            .help("remove it: a person edits the policy and runs `toolgate trust`");
    }
}
