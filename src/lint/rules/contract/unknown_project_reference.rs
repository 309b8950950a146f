//! TGK002 unknown-project-reference.

use crate::diagnostic::Severity;
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::UnknownProjectReference,
    severity: Severity::Error,
    applies: Applies::SpecsOnly,
    purpose: "Finds references to sandbox profiles, MCP servers, builtins, contexts or tools that do not exist.",
    explanation: r#"## What it does
Reports a name that should be defined elsewhere but is not: `sandbox:` naming a profile missing
from `sandbox_profiles`, `exec.mcp.server` naming an undeclared server, `exec.builtin` naming a
builtin toolgate does not have, an example `context` that is not configured, or a toolset member
that no spec defines.

## Why is this bad?
A dangling reference would either fail at run time or, worse, run the tool without the sandbox the
author meant. toolgate fails closed at load instead.

## Example
```yaml
sandbox: workspace-wrte
```

Use instead:
```yaml
sandbox: workspace-write
```
"#,
};
