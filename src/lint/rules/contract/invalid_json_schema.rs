//! TGK003 invalid-json-schema.

use crate::diagnostic::Severity;
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::InvalidJsonSchema,
    severity: Severity::Error,
    applies: Applies::Everywhere,
    purpose: "Finds `parameters` or `result` schemas that are not valid JSON Schema 2020-12.",
    explanation: r#"## What it does
Validates `parameters` and `result` against the JSON Schema 2020-12 meta-schema, compiles them
(catching bad regular expressions and unresolvable `$ref`s), checks that `parameters` is an
object schema, and that every name in `required` is declared under `properties`.

## Why is this bad?
Providers reject invalid schemas (one bad tool fails the whole request), and the runtime could not
validate arguments against them. A `required` entry with no property is almost always a typo that
makes every call fail.

## Example
```yaml
parameters:
  type: object
  properties:
    path: {type: strin}
  required: [pth]
```

Use instead:
```yaml
parameters:
  type: object
  properties:
    path: {type: string, maxLength: 4096}
  required: [path]
```
"#,
};
