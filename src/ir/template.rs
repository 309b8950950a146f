//! Argument templates: text with `{cel}` placeholders (`{{` and `}}` are literal braces).
//!
//! A template always yields exactly one string, however many placeholders it has and whatever
//! they evaluate to, so a hostile argument can never become two argv elements.

/// A piece of a template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TemplatePart {
    /// Literal text.
    Literal(String),
    /// A CEL expression and the character index where it starts in the template.
    Expr {
        /// The expression text.
        source: String,
        /// Index (in characters) of the expression's first character in the template.
        start: usize,
    },
}

/// A template that cannot be parsed, at a character index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateError {
    /// Character index of the problem.
    pub at: usize,
    /// What is wrong.
    pub message: String,
}

/// Splits a template into literal and expression parts.
pub fn parse(template: &str) -> Result<Vec<TemplatePart>, TemplateError> {
    let chars: Vec<char> = template.chars().collect();
    let mut parts = Vec::new();
    let mut lit = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '{' if chars.get(i + 1) == Some(&'{') => {
                lit.push('{');
                i += 2;
            }
            '}' if chars.get(i + 1) == Some(&'}') => {
                lit.push('}');
                i += 2;
            }
            '{' => {
                let open = i;
                let mut depth = 1;
                let mut j = i + 1;
                let mut quote: Option<char> = None;
                while j < chars.len() {
                    let d = chars[j];
                    match (quote, d) {
                        (Some(q), x) if x == q => quote = None,
                        (Some(_), '\\') => j += 1,
                        (Some(_), _) => {}
                        (None, '\'' | '"') => quote = Some(d),
                        (None, '{') => depth += 1,
                        (None, '}') => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        (None, _) => {}
                    }
                    j += 1;
                }
                if j >= chars.len() {
                    return Err(TemplateError {
                        at: open,
                        message: "unclosed `{` in template (write `{{` for a literal brace)".into(),
                    });
                }
                let source: String = chars[open + 1..j].iter().collect();
                if source.trim().is_empty() {
                    return Err(TemplateError {
                        at: open,
                        message: "empty placeholder `{}`".into(),
                    });
                }
                if !lit.is_empty() {
                    parts.push(TemplatePart::Literal(std::mem::take(&mut lit)));
                }
                parts.push(TemplatePart::Expr {
                    source,
                    start: open + 1,
                });
                i = j + 1;
            }
            '}' => {
                return Err(TemplateError {
                    at: i,
                    message: "unmatched `}` in template (write `}}` for a literal brace)".into(),
                });
            }
            _ => {
                lit.push(c);
                i += 1;
            }
        }
    }
    if !lit.is_empty() || parts.is_empty() {
        parts.push(TemplatePart::Literal(lit));
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_placeholders_and_escapes() {
        assert_eq!(
            parse("--file={args.path}").unwrap(),
            vec![
                TemplatePart::Literal("--file=".into()),
                TemplatePart::Expr {
                    source: "args.path".into(),
                    start: 8
                }
            ]
        );
        assert_eq!(
            parse("{{x}}").unwrap(),
            vec![TemplatePart::Literal("{x}".into())]
        );
        assert_eq!(
            parse("{ {'a': 1}['a'] }").unwrap(),
            vec![TemplatePart::Expr {
                source: " {'a': 1}['a'] ".into(),
                start: 1
            }]
        );
        assert_eq!(
            parse("{'}'}").unwrap(),
            vec![TemplatePart::Expr {
                source: "'}'".into(),
                start: 1
            }]
        );
        assert!(parse("a{b").is_err());
        assert!(parse("a}b").is_err());
        assert!(parse("{}").is_err());
    }
}
