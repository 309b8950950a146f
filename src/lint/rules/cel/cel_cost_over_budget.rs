//! TGC006 cel-cost-over-budget.

use crate::cel::ProblemKind;
use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::CelCostOverBudget,
    severity: Severity::Warning,
    applies: Applies::SpecsOnly,
    purpose: "Finds expressions whose estimated evaluation cost exceeds the configured budget.",
    explanation: r#"## What it does
Estimates the number of evaluation steps of each expression from the schema bounds of what it
iterates over (nested comprehensions multiply) and reports estimates above
`lint.options.cel_cost_budget` (default 100000).

## Why is this bad?
Policies run on every call, before anything else; a quadratic check over two 1000-item lists costs
a million steps per call.

## Example
```yaml
expr: "args.a.all(x, args.b.exists(y, x == y))"   # maxItems 1000 each
```

Use instead:
```yaml
# lower maxItems, or restructure the check so it is linear
```
"#,
};

/// Reports the checker's `CostOverBudget` problems.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    super::report_problems(ctx, tool, ProblemKind::CostOverBudget);
}
