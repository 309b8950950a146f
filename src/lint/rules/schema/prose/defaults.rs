//! Defaults stated in prose: "defaults to 30", "(default: false)", "if omitted, the current
//! directory".

use super::{is_identifier, unquote};

/// A default a description states.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum DescribedDefault {
    /// A fixed value: `Defaults to 30`, `(default: "css")`.
    Literal(Literal),
    /// A value that depends on where or when the call runs: `defaults to the current directory`.
    Environment(String),
    /// Behaviour when omitted that names no value: `if omitted, all fields are returned`.
    Behaviour(String),
}

/// A literal value written in prose.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Literal {
    /// A number.
    Number(f64),
    /// `true` or `false`.
    Bool(bool),
    /// `null` or `none`.
    Null,
    /// A quoted string or a single bare word.
    Text(String),
}

impl Literal {
    /// The literal as JSON.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        match self {
            Literal::Number(n) if n.fract() == 0.0 && n.abs() < 9.0e15 => {
                serde_json::Value::from(*n as i64)
            }
            Literal::Number(n) => serde_json::Number::from_f64(*n)
                .map(serde_json::Value::Number)
                .unwrap_or(serde_json::Value::Null),
            Literal::Bool(b) => serde_json::Value::Bool(*b),
            Literal::Null => serde_json::Value::Null,
            Literal::Text(s) => serde_json::Value::String(s.clone()),
        }
    }

    /// The literal as written in a message.
    pub(crate) fn show(&self) -> String {
        match self {
            Literal::Number(n) => n.to_string(),
            Literal::Bool(b) => b.to_string(),
            Literal::Null => "null".into(),
            Literal::Text(s) => s.clone(),
        }
    }
}

/// Words that make a described default depend on the environment of the call.
const ENVIRONMENT: &[&str] = &[
    "current",
    "currently",
    "cwd",
    "now",
    "today",
    "home",
    "random",
    "session",
    "environment",
    "locale",
];
/// Phrases with the same effect.
const ENVIRONMENT_PHRASES: &[&str] = &[
    "working directory",
    "user's default",
    "system default",
    "local time",
];

/// Clauses that state what happens when the parameter is left out.
const OMITTED: &[&str] = &[
    "if omitted",
    "when omitted",
    "if not provided",
    "when not provided",
    "if not specified",
    "when not specified",
    "if not given",
    "if not set",
    "if unset",
    "if none is given",
    "if none is provided",
    "if not passed",
];

/// The default a description states, if any.
pub(crate) fn described_default(desc: &str) -> Option<DescribedDefault> {
    let lower = desc.to_ascii_lowercase();
    let mut from = 0;
    while let Some(found) = lower.get(from..).and_then(|s| s.find("default")) {
        let idx = from + found;
        from = idx + 7;
        let before = lower[..idx].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let mut rest = &lower[idx + 7..];
        rest = rest.strip_prefix('s').unwrap_or(rest);
        rest = rest.strip_prefix(" value").unwrap_or(rest);
        let sep = [" to ", ": ", " is ", " = ", "=", ":"]
            .iter()
            .find(|s| rest.starts_with(**s))
            .map(|s| s.len())
            .or_else(|| (before == Some('(') && rest.starts_with(' ')).then_some(1));
        let Some(sep) = sep else { continue };
        let start = lower.len() - rest.len() + sep;
        let value = clause(desc, start, true);
        if value.is_empty() {
            continue;
        }
        return Some(classify(value));
    }
    for cue in OMITTED {
        if let Some(i) = lower.find(cue) {
            let value = clause(desc, i + cue.len(), false);
            let value = value.trim_start_matches([',', ' ']);
            if value.is_empty() {
                continue;
            }
            return Some(if is_environment(value) {
                DescribedDefault::Environment(value.to_owned())
            } else {
                DescribedDefault::Behaviour(value.to_owned())
            });
        }
    }
    None
}

/// The text from `start` to the end of its clause: a comma (for values), `;`, `)`, a line end, a
/// sentence end, or a following `if`/`when`/`unless`/`(`.
fn clause(desc: &str, start: usize, value: bool) -> &str {
    let Some(rest) = desc.get(start..) else {
        return "";
    };
    let lower = rest.to_ascii_lowercase();
    let bytes = rest.as_bytes();
    let mut end = rest.len();
    for (i, c) in rest.char_indices() {
        let stop = match c {
            ';' | ')' | '\n' => true,
            ',' => value,
            '.' => bytes.get(i + 1).is_none_or(|b| b.is_ascii_whitespace()),
            ' ' => {
                value
                    && [" if ", " when ", " unless ", " ("]
                        .iter()
                        .any(|p| lower[i..].starts_with(p))
            }
            _ => false,
        };
        if stop {
            end = i;
            break;
        }
    }
    rest[..end].trim()
}

fn is_environment(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    crate::lint::rules::naming::words::tokens(&lower)
        .iter()
        .any(|w| ENVIRONMENT.contains(&w.as_str()))
        || ENVIRONMENT_PHRASES.iter().any(|p| lower.contains(p))
}

fn classify(value: &str) -> DescribedDefault {
    if let Some(inner) = unquote(value) {
        // `page-{timestamp}.png` is computed per call, not a fixed value.
        if inner.contains('{') && inner.contains('}') {
            return DescribedDefault::Environment(inner.to_owned());
        }
        return DescribedDefault::Literal(Literal::Text(inner.to_owned()));
    }
    let lower = value.to_ascii_lowercase();
    let mut words = lower.split_whitespace();
    let first = words.next().unwrap_or("");
    let rest = words.count();
    match first {
        "true" | "false" if rest == 0 => {
            return DescribedDefault::Literal(Literal::Bool(first == "true"));
        }
        "null" | "none" if rest == 0 => return DescribedDefault::Literal(Literal::Null),
        _ => {}
    }
    if let Ok(n) = first.parse::<f64>()
        && n.is_finite()
        && rest <= 2
    {
        return DescribedDefault::Literal(Literal::Number(n));
    }
    if is_environment(value) {
        return DescribedDefault::Environment(value.to_owned());
    }
    if rest == 0 && is_identifier(value) {
        return DescribedDefault::Literal(Literal::Text(value.to_owned()));
    }
    DescribedDefault::Behaviour(value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(s: &str) -> Option<DescribedDefault> {
        described_default(s)
    }

    #[test]
    fn literal_defaults() {
        use DescribedDefault::Literal as L;
        assert_eq!(
            lit("Replace all occurrences (default false)"),
            Some(L(Literal::Bool(false)))
        );
        assert_eq!(
            lit("Results per page (default: 30, max: 100)"),
            Some(L(Literal::Number(30.0)))
        );
        assert_eq!(
            lit("Button to click, defaults to left"),
            Some(L(Literal::Text("left".into())))
        );
        assert_eq!(
            lit("Default is -1 (end of file)."),
            Some(L(Literal::Number(-1.0)))
        );
        assert_eq!(
            lit("Defaults to \"info\"."),
            Some(L(Literal::Text("info".into())))
        );
        assert_eq!(
            lit("Whether to run login semantics. Defaults to true."),
            Some(L(Literal::Bool(true)))
        );
        assert_eq!(
            lit("Maximum lines (defaults to 100)."),
            Some(L(Literal::Number(100.0)))
        );
    }

    #[test]
    fn environment_and_behaviour_defaults() {
        assert!(matches!(
            lit("Defaults to the current working directory."),
            Some(DescribedDefault::Environment(_))
        ));
        assert!(matches!(
            lit("Describes the last check (optional). Default: Now"),
            Some(DescribedDefault::Environment(_))
        ));
        assert!(matches!(
            lit("the directory to search in (if not provided, searches in the current directory)"),
            Some(DescribedDefault::Environment(_))
        ));
        assert!(matches!(
            lit("Shell binary to launch. Defaults to the user's default shell."),
            Some(DescribedDefault::Environment(_))
        ));
        assert!(matches!(
            lit("If omitted, all fields are returned."),
            Some(DescribedDefault::Behaviour(_))
        ));
        assert!(matches!(
            lit("Defaults to `page-{timestamp}.pdf`."),
            Some(DescribedDefault::Environment(_))
        ));
        assert!(matches!(
            lit("Sort field, defaults to best match"),
            Some(DescribedDefault::Behaviour(_))
        ));
        assert_eq!(lit("Uses the default branch of the repository."), None);
        assert_eq!(lit("Default branch name"), None);
        assert_eq!(lit("The path to read."), None);
    }
}
