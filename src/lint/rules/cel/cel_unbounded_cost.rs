//! TGC004 cel-unbounded-cost.

use crate::cel::ProblemKind;
use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::CelUnboundedCost,
    severity: Severity::Warning,
    applies: Applies::SpecsOnly,
    purpose: "Finds comprehensions over lists or strings whose size the schema does not bound.",
    explanation: r#"## What it does
Reports `all`, `exists`, `exists_one`, `map` and `filter` over an argument whose schema has no
`maxItems` (lists) or `maxLength` (strings, through `split`), so the cost of evaluating the
expression grows with whatever the model sends.

## Why is this bad?
The `cel` crate has no evaluation limit. A model (or an attacker steering one) can send a
million-element list and make every policy check slow. Bounding the parameter bounds the cost,
and also tells the model what is reasonable.

## Example
```yaml
parameters:
  type: object
  properties:
    paths: {type: array, items: {type: string}}
validate:
  - {id: inside, expr: "args.paths.all(p, path.within_workspace(p))", message: Paths must stay in the workspace.}
```

Use instead:
```yaml
    paths: {type: array, items: {type: string, maxLength: 4096}, maxItems: 100}
```
"#,
};

/// Reports the checker's `UnboundedCost` problems.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    super::report_problems(ctx, tool, ProblemKind::UnboundedCost);
}
