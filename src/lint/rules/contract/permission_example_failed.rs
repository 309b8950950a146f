//! TGK005 permission-example-failed.

use crate::diagnostic::Severity;
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::PermissionExampleFailed,
    severity: Severity::Error,
    applies: Applies::SpecsOnly,
    purpose: "Finds permission examples (policy tests) whose expected decision the policy does not give.",
    explanation: r#"## What it does
Runs every `permissions.examples` entry through the same evaluator the runtime uses and compares
the decision with `expect`. Examples whose arguments do not match `parameters`, or that cannot be
decided, fail too.

## Why is this bad?
Examples are the unit tests of a policy. A failing one means the policy does not do what its
author believes — the most dangerous kind of bug in a permission system.

## Example
```yaml
permissions:
  rules:
    - {id: no-logs, deny: "args.path.endsWith('.log')"}
  examples:
    - {args: {path: logs/app.log.1}, expect: deny}
```

Use instead:
```yaml
permissions:
  rules:
    - {id: no-logs, deny: "path.matches_glob(args.path, ['**/*.log', '**/*.log.*'])"}
  examples:
    - {args: {path: logs/app.log.1}, expect: deny}
```

Examples are decided as calls are: a path the project's protected set covers (`protect:` in
toolgate.yaml, with its defaults) is denied before any rule.
"#,
};
