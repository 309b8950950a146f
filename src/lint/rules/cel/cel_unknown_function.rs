//! TGC002 cel-unknown-function.

use crate::cel::ProblemKind;
use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::CelUnknownFunction,
    severity: Severity::Error,
    applies: Applies::SpecsOnly,
    purpose: "Finds calls to functions toolgate does not provide.",
    explanation: r#"## What it does
Reports calls to functions outside the CEL standard library, the strings extension and
toolgate's own helpers. Operators, `size`, `contains`, `startsWith`, `endsWith`, `matches`, the
conversions (`int`, `string`, ...), the strings extension (`lowerAscii`, `split`, `replace`,
`substring`, `trim`, `join`, `indexOf`, ...) and the macros (`has`, `all`, `exists`,
`exists_one`, `map`, `filter`) are known. toolgate adds `path.within_workspace(p)`,
`path.matches_glob(p, globs)`, `path.normalize(p)`, `path.base(p)`, `path.dir(p)`,
`path.ext(p)`, `path.is_absolute(p)`, `path.in_git_dir(p)`, `path.protected(p)`,
`shell.words(s)`, `shell.commands(s)` and `shell.is_simple(s)` (docs/protect.md).

## Why is this bad?
An unknown function fails at evaluation time, for every call — the rule never decides anything.

## Example
```yaml
deny: "path.matches_glb(args.path, [\"**/.env\"])"
```

Use instead:
```yaml
deny: "path.matches_glob(args.path, [\"**/.env\"])"
```
"#,
};

/// Reports the checker's `UnknownFunction` problems.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    super::report_problems(ctx, tool, ProblemKind::UnknownFunction);
}
