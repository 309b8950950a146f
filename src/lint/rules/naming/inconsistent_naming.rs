//! TGN009 inconsistent-naming.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::naming::words::CaseStyle;
use crate::rule::Rule;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::InconsistentNaming,
    severity: Severity::Info,
    applies: Applies::Everywhere,
    purpose: "Finds tools whose name style differs from the one most tools in the set use.",
    explanation: r#"## What it does
Classifies every tool name as snake_case, kebab-case, camelCase, PascalCase, SCREAMING_SNAKE_CASE or
dotted (single lowercase words fit any style) and reports the tools that do not use the style most
of the set uses. Nothing is reported when no style has a clear majority.

## Why is this bad?
Models generalize from the names they see: in a set of `read_file`, `write_file` and
`searchFiles`, the odd one out is more often misspelt (`search_files`), and a reader cannot guess
names either. One convention makes the set predictable.

## Example
```yaml
tools:
  - {name: read_file, description: Read a UTF-8 text file; returns its numbered lines.}
  - {name: write_file, description: Write a UTF-8 text file; returns its new hash.}
  - {name: searchFiles, description: Search file contents; returns matching lines.}
```

Use instead:
```yaml
  - {name: search_files, description: Search file contents; returns matching lines.}
```
"#,
};

/// Reports the tools outside the majority style.
pub(crate) fn check(ctx: &mut LintContext, tools: &[ToolView]) {
    let styled: Vec<(&ToolView, CaseStyle)> = tools
        .iter()
        .filter(|t| !t.name.is_empty())
        .map(|t| (t, CaseStyle::of(t.name)))
        .filter(|(_, s)| *s != CaseStyle::Word)
        .collect();
    let mut counts: Vec<(CaseStyle, usize)> = Vec::new();
    for (_, s) in &styled {
        match counts.iter_mut().find(|(c, _)| c == s) {
            Some((_, n)) => *n += 1,
            None => counts.push((*s, 1)),
        }
    }
    if counts.len() < 2 {
        return;
    }
    counts.sort_by_key(|c| std::cmp::Reverse(c.1));
    let (major, n) = counts[0];
    if counts[1].1 == n {
        return;
    }
    let Some((example, _)) = styled.iter().find(|(_, s)| *s == major) else {
        return;
    };
    for (t, s) in &styled {
        if *s == major {
            continue;
        }
        ctx.report(
            t.name_span(),
            format!(
                "`{}` uses {}, while {n} other tools use {}",
                t.name,
                s.as_str(),
                major.as_str()
            ),
        )
        .label(
            example.name_span(),
            format!("`{}` uses {}", example.name, major.as_str()),
        )
        .help(format!(
            "rename it in {} so the tool set follows one convention",
            major.as_str()
        ));
    }
}
