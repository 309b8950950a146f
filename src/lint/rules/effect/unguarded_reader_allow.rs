//! TGE010 unguarded-reader-allow.

use crate::diagnostic::Severity;
use crate::ir::Decision;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::policy::globs::{calls, string_literals};
use crate::lint::rules::schema::free_form_exec_parameter::executable;
use crate::rule::Rule;
use crate::spec::resolve::CelRole;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::UnguardedReaderAllow,
    severity: Severity::Warning,
    applies: Applies::SpecsOnly,
    purpose: "Finds an allow rule over a free-form command that does not keep it away from protected and outside paths.",
    explanation: r#"## What it does
Reports an `allow` rule that reads a free-form command parameter (a shell command, script or
code, as `free-form-exec-parameter` finds them) unless the rule guards it on all three counts:
`shell.is_simple(...)` (one command: no separators, substitutions, redirections or
expansions), `path.protected(...)` (no word names a protected path) and `path.within_workspace`
or `path.is_absolute` (no word leaves the workspace). It names the programs of the rule that
read files (`cat`, `head`, `grep`, `python`, …) when it lists any.

## Why is this bad?
`cat`, `head`, `grep`, `sed`, `python` and their kind read any file the process can: `cat .env`,
`cat ~/.ssh/id_rsa`, `head /etc/shadow`. An allow rule that lets them run without asking, and
checks only the first word, also lets through `ls\ntouch x`, `ls $(rm x)` and `cat envlink`
(a link to `.env`). Where a command is allowed without a person, its every word must stay in
the workspace and away from protected paths.

## Example
```yaml
permissions:
  rules:
    - id: read-only
      allow: "shell.words(args.command)[0] in ['ls', 'cat', 'head']"
```

Use instead:
```yaml
permissions:
  rules:
    - id: read-only
      allow: >-
        shell.is_simple(args.command)
        && shell.commands(args.command)[0] in ['ls', 'cat', 'head']
        && shell.words(args.command).all(w, path.within_workspace(w) && !path.protected(w))
```
"#,
};

/// Programs that print (or hand to code) the content of any file they are given.
const READERS: &[&str] = &[
    "awk", "base64", "bash", "bat", "bun", "cat", "cp", "cut", "dd", "deno", "diff", "egrep",
    "fgrep", "find", "gawk", "git", "grep", "head", "hexdump", "jq", "less", "lua", "more", "nl",
    "node", "od", "paste", "perl", "php", "python", "python3", "rg", "ruby", "sed", "sh", "sort",
    "strings", "tac", "tail", "tar", "uniq", "xxd", "zsh",
];

/// Reports unguarded allow rules over free-form commands.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    if tool.def.is_none() {
        return;
    }
    let commands: Vec<String> = tool
        .properties()
        .iter()
        .filter(|(k, node, _)| executable(&k.name, node).is_some())
        .map(|(k, _, _)| k.name.clone())
        .collect();
    if commands.is_empty() {
        return;
    }
    for site in &tool.resolved.cel {
        let CelRole::Permission(id, Decision::Allow) = &site.role else {
            continue;
        };
        let (Some(program), Some(analysis)) = (&site.program, &site.analysis) else {
            continue;
        };
        let Some(param) = commands
            .iter()
            .find(|c| analysis.arg_paths.iter().any(|p| p.first() == Some(*c)))
        else {
            continue;
        };
        let called = calls(program);
        let guarded = called.contains("shell.is_simple")
            && called.contains("path.protected")
            && (called.contains("path.within_workspace") || called.contains("path.is_absolute"));
        if guarded {
            continue;
        }
        let mut readers: Vec<String> = string_literals(program)
            .into_iter()
            .filter(|s| READERS.contains(&s.as_str()))
            .collect();
        readers.dedup();
        let what = if readers.is_empty() {
            format!("the free-form command `args.{param}`")
        } else {
            let shown: Vec<String> = readers.iter().map(|r| format!("`{r}`")).collect();
            format!(
                "`args.{param}` with {}, which read any file they are given,",
                shown.join(", ")
            )
        };
        let missing: Vec<&str> = [
            ("shell.is_simple", called.contains("shell.is_simple")),
            ("path.protected", called.contains("path.protected")),
            (
                "path.within_workspace",
                called.contains("path.within_workspace") || called.contains("path.is_absolute"),
            ),
        ]
        .iter()
        .filter(|(_, has)| !has)
        .map(|(f, _)| *f)
        .collect();
        ctx.report(
            site.span,
            format!(
                "allow rule `{id}` runs {what} without asking, and does not check {}",
                missing
                    .iter()
                    .map(|f| format!("`{f}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
        .help(format!(
            "allow only one plain command whose words stay in the workspace and off protected paths: `shell.is_simple(args.{param}) && shell.words(args.{param}).all(w, path.within_workspace(w) && !path.protected(w))`"
        ));
    }
}
