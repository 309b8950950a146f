//! TGK001 invalid-contract.

use crate::diagnostic::Severity;
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::InvalidContract,
    severity: Severity::Error,
    applies: Applies::Everywhere,
    purpose: "Finds contracts missing a required key or holding a value toolgate cannot interpret.",
    explanation: r#"## What it does
Reports a tool contract that toolgate cannot turn into a definition: no `name`, no `effect`, no
`exec`, a permission rule with zero or several of `allow`/`ask`/`deny`, an unknown error type in
`errors` or `retry.on`, a malformed argv element or template, an invalid `redact` pattern, or a
project-file value such as an unknown ask mode or target.

## Why is this bad?
The runtime decides permissions, scheduling and retries from these keys. A contract without them
cannot be executed safely, so toolgate refuses it rather than guess.

## Example
```yaml
name: delete_branch
description: Delete a git branch.
parameters: {type: object, properties: {branch: {type: string}}}
# no effect, no exec
```

Use instead:
```yaml
name: delete_branch
description: Delete a local git branch that is fully merged.
effect: destructive
parameters: {type: object, properties: {branch: {type: string, maxLength: 200}}, required: [branch]}
exec:
  command: {argv: [git, branch, -d, "{args.branch}"]}
```
"#,
};
