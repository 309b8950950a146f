//! TGC001 cel-unknown-reference.

use crate::cel::ProblemKind;
use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::CelUnknownReference,
    severity: Severity::Error,
    applies: Applies::SpecsOnly,
    purpose: "Finds expressions that read `args` fields not declared in `parameters`, or unknown variables.",
    explanation: r#"## What it does
Follows every `args.a.b` selection (through `properties`, `items`, local `$ref`s and
`allOf`/`anyOf`/`oneOf` branches) and reports paths that the parameter schema does not declare,
with the closest declared name. Variables other than `args`, `tool`, `context` and `workspace` are
reported too.

## Why is this bad?
The `cel` crate has no type checker: a misspelt field is only discovered when a call arrives, and
then the rule errors instead of deciding. In a permission rule that means calls fail (or, in a
careless runtime, pass).

## Example
```yaml
parameters: {type: object, properties: {path: {type: string}}}
permissions:
  rules:
    - {id: no-env, deny: "args.pth.endsWith(\".env\")"}
```

Use instead:
```yaml
permissions:
  rules:
    - {id: no-env, deny: "args.path.endsWith(\".env\")"}
```
"#,
};

/// Reports the checker's `UnknownReference` problems.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    super::report_problems(ctx, tool, ProblemKind::UnknownReference);
}
