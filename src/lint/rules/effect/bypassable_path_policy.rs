//! TGE009 bypassable-path-policy.

use std::collections::{BTreeSet, HashMap};

use crate::diagnostic::Severity;
use crate::ir::{ExecSpec, ToolDefinition};
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::policy::globs::{Coverage, DenyGlobs, deny_globs, normalize};
use crate::policy::arguments::path_params;
use crate::rule::Rule;
use crate::spec::resolve::CelRole;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::BypassablePathPolicy,
    severity: Severity::Warning,
    applies: Applies::SpecsOnly,
    purpose: "Finds a deny rule over paths that another tool of the same toolset can get around.",
    explanation: r#"## What it does
Reads the globs of every `deny` rule of the form `path.matches_glob(args.<param>, [...])` and
looks, in every toolset the tool is in (all tools together when toolgate.yaml defines none), for
another tool that reaches the same files without the same deny: one with a path parameter
(`path`, `paths`, `*_path`, …), one whose `resources.reads` names a `tree:` key, or one that runs
a process in the workspace. Globs the project's protected set already covers (`protect:` and
its defaults) are left out: every tool obeys those.

## Why is this bad?
A deny rule guards one tool. An agent steered by a prompt injection calls whichever tool is
open: `read_file` refuses `.env`, but `grep -r API_KEY` prints it, and a search that answers
"match / no match" recovers a key by bisection. A path that must not be read has to be refused
by every tool that can read it — which is what `protect:` does, once for the whole project.

## Example
```yaml
# read_file.yaml
permissions:
  rules:
    - id: no-secrets
      deny: "path.matches_glob(args.path, ['**/secrets/**'])"
# grep.yaml, in the same toolset: grep -rn over a `path`, with no such rule
```

Use instead:
```yaml
# toolgate.yaml
protect:
  - {glob: secrets, reason: Deployment secrets are never read by tools.}
```
and drop the per-tool rule.
"#,
};

/// How another tool reaches files.
fn reach(def: &ToolDefinition, tool: &ToolView) -> Option<&'static str> {
    if matches!(def.exec, ExecSpec::Command(_)) {
        return Some("runs a process in the workspace");
    }
    if !path_params(&def.parameters).is_empty() {
        return Some("takes a path");
    }
    let tree = tool.resolved.cel.iter().any(|s| {
        matches!(s.role, CelRole::Reads)
            && (s.text.contains("'tree:") || s.text.contains("\"tree:"))
    });
    tree.then_some("reads the workspace tree")
}

/// Reports a deny rule's globs that a tool sharing a toolset can get around. Everything asked
/// per pair of tools is computed once per tool first: with a thousand tools in one set the pairs
/// are a million.
pub(crate) fn check(ctx: &mut LintContext, tools: &[ToolView]) {
    let coverage = Coverage::of(ctx.project);
    let index: HashMap<&str, usize> = tools.iter().enumerate().map(|(i, t)| (t.name, i)).collect();
    // Toolsets as labels and member indices; all tools together when none is defined.
    let toolsets: Vec<(String, Vec<usize>)> = if ctx.project.toolsets.is_empty() {
        vec![("(all tools)".to_owned(), (0..tools.len()).collect())]
    } else {
        ctx.project
            .toolsets
            .iter()
            .map(|(n, s)| {
                let members = s
                    .tools
                    .iter()
                    .filter_map(|m| index.get(m.as_str()).copied());
                (format!("`{n}`"), members.collect())
            })
            .collect()
    };
    let mut sets_of: Vec<Vec<usize>> = vec![Vec::new(); tools.len()];
    for (s, (_, members)) in toolsets.iter().enumerate() {
        for &m in members {
            if sets_of[m].last() != Some(&s) {
                sets_of[m].push(s);
            }
        }
    }
    let reaches: Vec<Option<&'static str>> = tools
        .iter()
        .map(|t| t.def.and_then(|d| reach(d, t)))
        .collect();
    let denies: Vec<Vec<DenyGlobs>> = tools.iter().map(deny_globs).collect();
    let keys: Vec<Vec<BTreeSet<String>>> = denies
        .iter()
        .map(|ds| ds.iter().map(DenyGlobs::key).collect())
        .collect();
    // `seen[j] == stamp`: tool j was already judged for the deny rule at hand.
    let mut seen = vec![0usize; tools.len()];
    let mut stamp = 0usize;
    for (i, tool) in tools.iter().enumerate() {
        for deny in &denies[i] {
            stamp += 1;
            let open: Vec<String> = deny
                .globs
                .iter()
                .filter(|g| !coverage.covers(g))
                .cloned()
                .collect();
            if open.is_empty() {
                continue;
            }
            let wanted: BTreeSet<String> = open.iter().map(|g| normalize(g)).collect();
            let mut around: Vec<String> = Vec::new();
            for &s in &sets_of[i] {
                let (set, members) = &toolsets[s];
                for &j in members {
                    // Each other tool once, named with the first toolset the two share.
                    if j == i || seen[j] == stamp {
                        continue;
                    }
                    seen[j] = stamp;
                    let Some(how) = reaches[j] else { continue };
                    if !keys[j].iter().any(|k| wanted.is_subset(k)) {
                        around.push(format!("`{}` (toolset {set}; it {how})", tools[j].name));
                    }
                }
            }
            if around.is_empty() {
                continue;
            }
            let more = around.len().saturating_sub(3);
            let mut who = around[..around.len().min(3)].join(", ");
            if more > 0 {
                who.push_str(&format!(" and {more} more"));
            }
            ctx.report(
                deny.span,
                format!(
                    "rule `{}` of `{}` denies {}, but {who} reaches the same files without that deny",
                    deny.rule,
                    tool.name,
                    DenyGlobs::shown(&open)
                ),
            )
            .help("move these globs to `protect:` in toolgate.yaml, which every tool obeys, and drop the per-tool rule; or give the other tools the same deny");
        }
    }
}
