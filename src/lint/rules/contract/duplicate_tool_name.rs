//! TGK006 duplicate-tool-name.

use crate::diagnostic::Severity;
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::DuplicateToolName,
    severity: Severity::Error,
    applies: Applies::Everywhere,
    purpose: "Finds two tools with the same name.",
    explanation: r#"## What it does
Reports a tool whose `name` is already used by another tool in the project (or in the imported
list), pointing at both definitions.

## Why is this bad?
Models call tools by name; MCP requires names to be unique per server and providers reject
duplicate function names. Which of the two would run is undefined.

## Example
```yaml
# tool-specs/read.yaml
name: read_file
# tool-specs/read_v2.yaml
name: read_file
```

Use instead:
```yaml
# one contract, with `version: 2` when its behaviour changes
name: read_file
version: 2
```
"#,
};
