//! TGN001 tool-name-invalid.

use crate::diagnostic::Severity;
use crate::ir::Target;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;
use crate::spec::cel_span::map_range;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::ToolNameInvalid,
    severity: Severity::Error,
    applies: Applies::Everywhere,
    purpose: "Finds tool names that a provider in use rejects.",
    explanation: r#"## What it does
Checks each tool name against the rules of the targets in use (`targets:` in toolgate.yaml; all
of them by default): OpenAI and Anthropic accept `^[a-zA-Z0-9_-]{1,64}$`; Gemini needs a letter or
`_` first, then letters, digits, `_`, `.`, `:` or `-`, at most 64 for portability; MCP accepts
`^[A-Za-z0-9._-]{1,128}$`. An empty name is rejected everywhere. The finding names the targets
that reject the name and points at the first offending character.

## Why is this bad?
A provider rejects the whole request when one tool name is invalid — every tool in the list is
lost, not just the bad one. MCP clients that prefix server names may also cut long names.

## Example
```yaml
name: files.read
description: Read a UTF-8 text file in the workspace; returns its numbered lines.
```

Use instead:
```yaml
name: files_read
```
"#,
};

/// Why a target rejects a name.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Problem {
    /// No name at all.
    Empty,
    /// A character outside the target's set, at a character index.
    Char(char, usize),
    /// A first character the target does not accept.
    Start(char),
    /// Longer than the target allows.
    Length(usize),
}

impl Problem {
    fn describe(&self) -> String {
        match self {
            Problem::Empty => "the name is empty".into(),
            Problem::Char(c, _) => format!("{} is not allowed", show(*c)),
            Problem::Start(c) => format!("it must start with a letter or `_`, not {}", show(*c)),
            Problem::Length(max) => format!("it is longer than {max} characters"),
        }
    }
}

fn show(c: char) -> String {
    if c == ' ' {
        "a space".into()
    } else if c.is_ascii_graphic() {
        format!("`{c}`")
    } else {
        format!("U+{:04X}", c as u32)
    }
}

/// The first problem a target has with a name.
fn problem(target: Target, name: &str) -> Option<Problem> {
    if name.is_empty() {
        return Some(Problem::Empty);
    }
    let (extra, max, letter_first): (&[char], usize, bool) = match target {
        Target::Openai | Target::OpenaiStrict | Target::Anthropic => (&['_', '-'], 64, false),
        Target::Gemini => (&['_', '.', ':', '-'], 64, true),
        Target::Mcp => (&['_', '.', '-'], 128, false),
    };
    if let Some((i, c)) = name
        .chars()
        .enumerate()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || extra.contains(c)))
    {
        return Some(Problem::Char(c, i));
    }
    if let Some(c) = name.chars().next()
        && letter_first
        && !(c.is_ascii_alphabetic() || c == '_')
    {
        return Some(Problem::Start(c));
    }
    (name.chars().count() > max).then_some(Problem::Length(max))
}

/// The name made portable: invalid characters become `_`, a leading digit gets a `_`, at most 64.
fn portable(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.chars()
        .next()
        .is_some_and(|c| !(c.is_ascii_alphabetic() || c == '_'))
    {
        s.insert(0, '_');
    }
    s.chars().take(64).collect()
}

/// Reports a name some target in use rejects.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    let Some(name) = &tool.spec.value.name else {
        return;
    };
    let mut groups: Vec<(Problem, Vec<&str>)> = Vec::new();
    for t in Target::ALL.iter().copied().filter(|t| ctx.targets(*t)) {
        let Some(p) = problem(t, &name.value) else {
            continue;
        };
        match groups.iter_mut().find(|(q, _)| *q == p) {
            Some((_, ts)) => ts.push(t.as_str()),
            None => groups.push((p, vec![t.as_str()])),
        }
    }
    let Some((first, _)) = groups.first() else {
        return;
    };
    let span = match first {
        Problem::Char(_, i) => {
            let r = map_range(&tool.file.text, name.range, &name.value, *i, i + 1);
            tool.span(r)
        }
        _ => tool.span(name.range),
    };
    let reasons: Vec<String> = groups
        .iter()
        .map(|(p, ts)| format!("{} ({})", join(ts), p.describe()))
        .collect();
    let message = if name.value.is_empty() {
        "the tool name is empty".to_owned()
    } else {
        format!(
            "tool name `{}` is rejected by {}",
            super::printable(&name.value),
            reasons.join(" and by ")
        )
    };
    let fixed = portable(&name.value);
    let help = if fixed.is_empty() || name.value.is_empty() {
        "give the tool a name of letters, digits, `_` and `-`, starting with a letter or `_`, at most 64 characters".to_owned()
    } else {
        format!(
            "rename it, e.g. to `{fixed}`: letters, digits, `_` and `-`, starting with a letter or `_`, at most 64 characters, is accepted everywhere"
        )
    };
    ctx.report(span, message).help(help);
}

fn join(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_rules() {
        assert_eq!(problem(Target::OpenaiStrict, "read_file"), None);
        assert_eq!(
            problem(Target::OpenaiStrict, "files.read"),
            Some(Problem::Char('.', 5))
        );
        assert_eq!(problem(Target::Mcp, "files.read"), None);
        assert_eq!(problem(Target::Gemini, "files.read"), None);
        assert_eq!(
            problem(Target::Gemini, "2fa_check"),
            Some(Problem::Start('2'))
        );
        assert_eq!(problem(Target::Anthropic, "2fa_check"), None);
        assert_eq!(
            problem(Target::Anthropic, &"a".repeat(65)),
            Some(Problem::Length(64))
        );
        assert_eq!(problem(Target::Mcp, &"a".repeat(65)), None);
        assert_eq!(problem(Target::Mcp, ""), Some(Problem::Empty));
        assert_eq!(
            problem(Target::Mcp, "read file"),
            Some(Problem::Char(' ', 4))
        );
    }

    #[test]
    fn portable_names() {
        assert_eq!(portable("files.read"), "files_read");
        assert_eq!(portable("2fa"), "_2fa");
        assert_eq!(portable("read file"), "read_file");
    }
}
