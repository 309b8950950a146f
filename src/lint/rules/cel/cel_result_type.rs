//! TGC003 cel-result-type.

use crate::cel::ProblemKind;
use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::CelResultType,
    severity: Severity::Error,
    applies: Applies::SpecsOnly,
    purpose: "Finds expressions whose value does not fit their key: conditions must be bool, resources strings.",
    explanation: r#"## What it does
Infers the type of each expression from literals, operators, function signatures and the
parameter schema, and reports when it cannot fit where it is used: `validate`, permission rules
and argv `when` need `bool`; `resources.reads`/`writes` need a string or a list of strings;
`each` needs a list; idempotency keys and `stdin` need a string.

## Why is this bad?
A condition that yields a string is an evaluation error on every call; resource keys that are
numbers make the scheduler unable to tell conflicts apart.

## Example
```yaml
validate:
  - {id: has-path, expr: "args.path", message: A path is required.}
```

Use instead:
```yaml
validate:
  - {id: has-path, expr: "size(args.path) > 0", message: A path is required.}
```
"#,
};

/// Reports the checker's `ResultType` problems.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    super::report_problems(ctx, tool, ProblemKind::ResultType);
}
