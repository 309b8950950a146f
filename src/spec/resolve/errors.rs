//! `errors`: a hint per error type, told to the model when a call fails with it.

use indexmap::IndexMap;

use crate::ir::ErrorType;
use crate::spec::ast::ToolSpec;
use crate::spec::source::TextRange;

use super::did_you_mean;
use super::tool::ToolResolver;

impl ToolResolver<'_> {
    /// The tool's error hints, keyed by error type.
    pub(super) fn error_hints(&mut self, t: &ToolSpec) -> IndexMap<ErrorType, String> {
        let mut out = IndexMap::new();
        let Some(node) = &t.errors else { return out };
        if !node.is_map() {
            self.contract(
                node.range,
                format!(
                    "`errors` must map error types to hints, not {}",
                    node.kind()
                ),
                None,
            );
            return out;
        }
        for (k, v) in node.entries() {
            let Some(et) = ErrorType::parse(&k.name) else {
                self.unknown_error_type(k.range, &k.name);
                continue;
            };
            match v.as_str() {
                Some(hint) => {
                    out.insert(et, hint.to_owned());
                }
                None => self.contract(
                    v.range,
                    format!("the hint for `{}` must be text, not {}", k.name, v.kind()),
                    None,
                ),
            }
        }
        out
    }

    /// An error type the vocabulary does not have (in `errors` or `retry.on`).
    pub(super) fn unknown_error_type(&mut self, range: TextRange, text: &str) {
        let names: Vec<&str> = ErrorType::ALL.iter().map(|e| e.as_str()).collect();
        self.contract(
            range,
            format!("unknown error type `{text}`"),
            Some(did_you_mean(text, &names)),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{HEAD, errors, offset, resolve_tool, text_at};
    use crate::ir::ErrorType;
    use crate::rule::Rule;

    #[test]
    fn hints_resolve_by_error_type_in_order() {
        let r = resolve_tool(&format!(
            "{HEAD}errors:\n  TIMEOUT: retry with a smaller folder\n  RESOURCE_NOT_FOUND: list the folder first\n"
        ));
        assert!(r.diagnostics.is_empty(), "{:#?}", r.diagnostics);
        let hints = &r.definitions().next().unwrap().errors;
        let got: Vec<(ErrorType, &str)> = hints.iter().map(|(k, v)| (*k, v.as_str())).collect();
        assert_eq!(
            got,
            [
                (ErrorType::Timeout, "retry with a smaller folder"),
                (ErrorType::ResourceNotFound, "list the folder first")
            ]
        );
    }

    #[test]
    fn errors_must_be_a_mapping_of_known_types_to_text() {
        let r = resolve_tool(&format!("{HEAD}errors: [TIMEOUT]\n"));
        let e = errors(&r, Rule::InvalidContract);
        assert_eq!(e.len(), 1, "{:#?}", r.diagnostics);
        assert!(
            e[0].message
                .starts_with("`errors` must map error types to hints, not "),
            "{}",
            e[0].message
        );

        let r = resolve_tool(&format!(
            "{HEAD}errors:\n  TIME_OUT: wait\n  TIMEOUT: [wait]\n"
        ));
        let e = errors(&r, Rule::InvalidContract);
        assert_eq!(e.len(), 2, "{:#?}", r.diagnostics);
        assert_eq!(e[0].message, "unknown error type `TIME_OUT`");
        assert_eq!(e[0].help.as_deref(), Some("did you mean `TIMEOUT`?"));
        assert_eq!(text_at(&r, e[0]), "TIME_OUT");
        assert!(
            e[1].message
                .starts_with("the hint for `TIMEOUT` must be text, not ")
        );
        assert_eq!(e[1].span.start, offset(&r, "[wait]"));
    }
}
