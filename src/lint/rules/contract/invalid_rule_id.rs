//! TGK007 invalid-rule-id.

use crate::diagnostic::Severity;
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::InvalidRuleId,
    severity: Severity::Error,
    applies: Applies::SpecsOnly,
    purpose: "Finds validate or permission rule ids that are duplicated or use characters outside letters, digits, `-`, `_` and `.`.",
    explanation: r#"## What it does
Checks that every `validate` and `permissions.rules` id within a tool is unique and made of
letters, digits, `-`, `_` and `.`.

## Why is this bad?
Rule ids are how decisions are explained ("denied by rule `no-secrets`"), how traces are searched
and how approvals are audited. Two rules with one id make that record ambiguous.

## Example
```yaml
validate:
  - {id: path check, expr: "path.within_workspace(args.path)", message: Path escapes the workspace.}
  - {id: path check, expr: "size(args.path) > 0", message: Path is empty.}
```

Use instead:
```yaml
validate:
  - {id: path-within-workspace, expr: "path.within_workspace(args.path)", message: Path escapes the workspace.}
  - {id: path-not-empty, expr: "size(args.path) > 0", message: Path is empty.}
```
"#,
};
