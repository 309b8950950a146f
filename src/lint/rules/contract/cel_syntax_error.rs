//! TGK004 cel-syntax-error.

use crate::diagnostic::Severity;
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::CelSyntaxError,
    severity: Severity::Error,
    applies: Applies::SpecsOnly,
    purpose: "Finds CEL expressions (or template placeholders) that do not parse.",
    explanation: r#"## What it does
Parses every CEL expression of a contract — `validate`, permission rules, `resources`,
idempotency keys, argv conditions and `{...}` placeholders — and reports syntax errors at the
exact line and column inside the YAML file.

## Why is this bad?
An expression that does not parse can never be evaluated; a permission rule that cannot run must
not silently let calls through.

## Example
```yaml
validate:
  - id: range
    expr: "args.start_line <= args.end_line &&& true"
```

Use instead:
```yaml
validate:
  - id: range
    expr: "args.start_line <= args.end_line"
```
"#,
};
