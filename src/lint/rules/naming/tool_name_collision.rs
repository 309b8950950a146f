//! TGN002 tool-name-collision.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::ToolNameCollision,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds tool names that differ only in case or separators.",
    explanation: r#"## What it does
Compares tool names after lowercasing them and dropping `-`, `_`, `.` and spaces, so `read_file`,
`readFile`, `read-file` and `Read_File` are the same name. Exact duplicates are contract errors
(TGK006) and are not reported again here.

## Why is this bad?
Models (and people) confuse names that read the same; clients and code generators that normalize
case or separators map both tools to one identifier, and one of them silently disappears.

## Example
```yaml
tools:
  - name: read_file
    description: Read a UTF-8 text file; returns its numbered lines.
  - name: readFile
    description: Read a file as bytes; returns base64.
```

Use instead: names that say how the tools differ.
```yaml
tools:
  - name: read_text_file
  - name: read_binary_file
```
"#,
};

/// The name as a collision key.
fn key(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, '-' | '_' | '.' | ' '))
        .flat_map(char::to_lowercase)
        .collect()
}

/// Reports each tool whose name collides with an earlier one.
pub(crate) fn check(ctx: &mut LintContext, tools: &[ToolView]) {
    // Normalized name → the first tools with it (one per distinct spelling), so the check is
    // linear in the number of tools.
    let mut seen: std::collections::HashMap<String, Vec<usize>> = std::collections::HashMap::new();
    for (j, b) in tools.iter().enumerate() {
        if b.name.is_empty() {
            continue;
        }
        let firsts = seen.entry(key(b.name)).or_default();
        let found = firsts.iter().map(|&i| &tools[i]).find(|a| a.name != b.name);
        if !firsts.iter().any(|&i| tools[i].name == b.name) {
            firsts.push(j);
        }
        let Some(a) = found else {
            continue;
        };
        ctx.report(
            b.name_span(),
            format!(
                "tool `{}` collides with `{}`: the names differ only in case or separators",
                b.name, a.name
            ),
        )
        .label(a.name_span(), format!("`{}` is defined here", a.name))
        .help("rename one so the names differ in words that say how the tools differ");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys() {
        assert_eq!(key("read_file"), key("readFile"));
        assert_eq!(key("read-file"), key("Read.File"));
        assert_ne!(key("read_file"), key("read_files"));
    }
}
