//! TGC005 cel-constant-condition.

use crate::cel::ProblemKind;
use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::CelConstantCondition,
    severity: Severity::Warning,
    applies: Applies::SpecsOnly,
    purpose: "Finds conditions that do not depend on the call and so always give the same answer.",
    explanation: r#"## What it does
Reports `validate`, permission and `when` conditions that reference none of `args`, `tool`,
`context` or `workspace`.

## Why is this bad?
A constant rule is either dead (`false`) or applies to everything (`true`); both usually hide a
mistake, and an always-`allow` rule silently turns off the effect default.

## Example
```yaml
permissions:
  rules:
    - {id: all-ok, allow: "true"}
```

Use instead:
```yaml
permissions:
  rules:
    - {id: src-only, allow: "args.path.startsWith(\"src/\")"}
```
"#,
};

/// Reports the checker's `Constant` problems.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    super::report_problems(ctx, tool, ProblemKind::Constant);
}
