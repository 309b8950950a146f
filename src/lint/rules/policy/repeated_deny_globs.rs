//! TGP010 repeated-deny-globs.

use std::collections::BTreeMap;

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::policy::globs::{Coverage, DenyGlobs, deny_globs};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::RepeatedDenyGlobs,
    severity: Severity::Warning,
    applies: Applies::SpecsOnly,
    purpose: "Finds the same list of denied globs repeated in the rules of several tools.",
    explanation: r#"## What it does
Reads the globs of every `deny` rule of the form `path.matches_glob(args.<param>, [...])` and
reports each tool whose list is the same as an earlier tool's (compared as sets, ignoring order,
case, a leading `**/` and a trailing `/**`). The first tool with the list is named.

## Why is this bad?
A list copied into every tool drifts: one copy gains `*.key`, another does not, and a new tool
gets none. What the copies mean — "no tool reads these" — is a project-wide rule, and
`protect:` in toolgate.yaml says it once, for every tool, with a reason the model reads.

## Example
```yaml
# read_file.yaml and grep.yaml, both:
deny: "path.matches_glob(args.path, ['**/.env', '**/secrets/**'])"
```

Use instead:
```yaml
# toolgate.yaml
protect:
  - {glob: secrets, reason: Deployment secrets are never read by tools.}
```
(`.env` is protected by default) and drop the per-tool rules.
"#,
};

/// Reports deny glob lists that repeat an earlier tool's.
pub(crate) fn check(ctx: &mut LintContext, tools: &[ToolView]) {
    let coverage = Coverage::of(ctx.project);
    // The first tool and rule with each list.
    let mut first: BTreeMap<std::collections::BTreeSet<String>, (String, String)> = BTreeMap::new();
    for tool in tools {
        for deny in deny_globs(tool) {
            let key = deny.key();
            let Some((owner, rule)) = first.get(&key) else {
                first.insert(key, (tool.name.to_owned(), deny.rule.clone()));
                continue;
            };
            if owner == tool.name {
                continue;
            }
            let all_protected = deny.globs.iter().all(|g| coverage.covers(g));
            let (note, help) = if all_protected {
                (
                    "; every one is protected already, so the rule adds nothing",
                    "drop the rule: `protect:` (and its defaults) refuses these paths for every tool",
                )
            } else {
                (
                    "",
                    "say it once: add the globs to `protect:` in toolgate.yaml (with a reason) and drop the per-tool rules",
                )
            };
            ctx.report(
                deny.span,
                format!(
                    "rule `{}` of `{}` denies the same globs as rule `{rule}` of `{owner}`: {}{note}",
                    deny.rule,
                    tool.name,
                    DenyGlobs::shown(&deny.globs)
                ),
            )
            .help(help);
        }
    }
}
