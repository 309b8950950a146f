//! TGP009 unused-suppression. Reported by [`crate::lint::suppress::apply`].

use crate::diagnostic::Severity;
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::UnusedSuppression,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds suppression comments that suppress nothing, name unknown rules or give no reason.",
    explanation: r#"## What it does
Checks every `# toolgate: ignore[...]` and `# toolgate: ignore-file[...]` comment: each rule it
names must exist, must not be a contract rule (those cannot be suppressed), and must actually
suppress a finding in the lines the comment covers; the comment must give a reason after `--`.

## Why is this bad?
Stale suppressions hide the next real finding in the same place, and an unexplained one cannot be
reviewed. This is ruff's `unused-noqa` (RUF100) for tool contracts.

## Example
```yaml
# toolgate: ignore[TGS006]
parameters:
  type: object
  properties:
    paths: {type: array, items: {type: string}, maxItems: 50}
```

Use instead:
```yaml
parameters:
  type: object
  properties:
    paths: {type: array, items: {type: string}, maxItems: 50}
```
"#,
};
