//! Expressions: every CEL expression of a spec is compiled and checked against the parameter
//! schema for its slot ([`crate::cel::check`]) and kept as a [`CelSite`]; syntax errors are
//! contract errors at their exact position in the YAML file. Templates (`{{ expr }}` in argv,
//! cwd and env values) are parsed and each placeholder is checked the same way.

use std::sync::Arc;

use crate::cel::Compiled;
use serde_json::Value;

use crate::ir::template::{self, TemplatePart};
use crate::rule::Rule;
use crate::spec::cel_span;
use crate::spec::source::{Span, TextRange};
use crate::spec::yaml::Spanned;

use super::tool::ToolResolver;
use super::{CelRole, CelSite};

/// A site whose expression did not parse.
fn unparsed(role: CelRole, span: Span, text: &str) -> CelSite {
    CelSite {
        role,
        span,
        text: text.to_owned(),
        program: None,
        analysis: None,
        problem_spans: Vec::new(),
    }
}

impl ToolResolver<'_> {
    /// Compiles and checks one expression, recording a [`CelSite`]; syntax errors become contract
    /// diagnostics at their exact position.
    pub(super) fn compile_site(
        &mut self,
        role: CelRole,
        expr: &Spanned<String>,
        parameters: &Value,
    ) -> Option<Arc<Compiled>> {
        let span = self.span(expr.range);
        if expr.value.trim().is_empty() {
            self.diags.push(
                super::error(Rule::CelSyntaxError, span, "empty expression")
                    .with_help("write a CEL expression, e.g. `args.path.startsWith('src/')`"),
            );
            self.cel.push(unparsed(role, span, &expr.value));
            return None;
        }
        match crate::cel::compile(&expr.value) {
            Ok(program) => {
                let analysis = crate::cel::check::check(
                    &program,
                    parameters,
                    role.slot(),
                    self.options.cost_budget,
                );
                let problem_spans = analysis
                    .problems
                    .iter()
                    .map(|p| self.map_chars(expr, p.start, p.end))
                    .collect();
                let program = Arc::new(program);
                self.cel.push(CelSite {
                    role,
                    span,
                    text: expr.value.clone(),
                    program: Some(program.clone()),
                    analysis: Some(analysis),
                    problem_spans,
                });
                Some(program)
            }
            Err(errors) => {
                for e in errors.iter().take(3) {
                    let at = cel_span::char_index(&expr.value, e.line, e.column);
                    let s = self.map_chars(expr, at, at + 1);
                    self.diags.push(
                        super::error(
                            Rule::CelSyntaxError,
                            s,
                            format!("CEL syntax error: {}", e.message),
                        )
                        .with_label(span, "in this expression"),
                    );
                }
                self.cel.push(unparsed(role, span, &expr.value));
                None
            }
        }
    }

    /// The file span of chars `start..end` of an expression (at least one char, within it).
    fn map_chars(&self, expr: &Spanned<String>, start: usize, end: usize) -> Span {
        let total = expr.value.chars().count();
        let start = start.min(total.saturating_sub(1));
        let end = end.min(total).max(start + 1);
        cel_span::map_range(&self.src.text, expr.range, &expr.value, start, end)
            .in_file(self.source)
    }

    /// Parses a template and checks each placeholder as an expression at its own position.
    pub(super) fn check_template(&mut self, t: &Spanned<String>, parameters: &Value) {
        match template::parse(&t.value) {
            Ok(parts) => {
                for p in parts {
                    if let TemplatePart::Expr { source, start } = p {
                        let len = source.chars().count();
                        let span = self.map_chars(t, start, start + len);
                        let sub = Spanned::new(
                            source,
                            TextRange {
                                start: span.start,
                                end: span.end,
                            },
                        );
                        self.compile_site_at(CelRole::Template, &sub, t, start, parameters);
                    }
                }
            }
            Err(e) => {
                let s = self.map_chars(t, e.at, e.at + 1);
                self.diags
                    .push(super::error(Rule::InvalidContract, s, e.message));
            }
        }
    }

    /// Like [`Self::compile_site`] for an expression embedded in a template at `offset` chars.
    fn compile_site_at(
        &mut self,
        role: CelRole,
        sub: &Spanned<String>,
        whole: &Spanned<String>,
        offset: usize,
        parameters: &Value,
    ) {
        let before = self.cel.len();
        let diags_before = self.diags.len();
        self.compile_site(role, sub, parameters);
        // Re-map spans relative to the enclosing template, whose token the walk understands.
        let in_template = |start: usize, end: usize| {
            cel_span::map_range(&self.src.text, whole.range, &whole.value, start, end)
                .in_file(self.source)
        };
        if let Some(site) = self.cel.get_mut(before) {
            site.span = in_template(offset, offset + sub.value.chars().count());
            if let Some(a) = &site.analysis {
                site.problem_spans = a
                    .problems
                    .iter()
                    .map(|p| in_template(offset + p.start, offset + p.end))
                    .collect();
            }
        }
        for d in self.diags.iter_mut().skip(diags_before) {
            if d.code == Some(Rule::CelSyntaxError.code()) {
                d.span = in_template(offset, offset + 1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{HEAD, errors, resolve_tool, text_at};
    use crate::rule::Rule;

    #[test]
    fn a_checked_expression_keeps_its_program_and_the_spans_of_its_problems() {
        let r = resolve_tool(&format!(
            "{HEAD}validate: [{{id: short, expr: 'args.pth.size() < 80'}}]\n"
        ));
        let site = &r.tools[0].cel[0];
        assert!(site.program.is_some());
        assert_eq!(site.text, "args.pth.size() < 80");
        let problems = &site.analysis.as_ref().unwrap().problems;
        assert!(!problems.is_empty());
        let file = r.loaded.sources.get(site.span.source).unwrap();
        assert_eq!(file.slice(site.problem_spans[0]), "args.pth");
    }

    #[test]
    fn an_empty_expression_and_a_syntax_error_are_located() {
        let r = resolve_tool(&format!(
            "{HEAD}validate: [{{id: empty, expr: ' '}}, {{id: broken, expr: 'args.path ==* 1'}}]\n"
        ));
        let e = errors(&r, Rule::CelSyntaxError);
        assert_eq!(e[0].message, "empty expression");
        assert_eq!(text_at(&r, e[0]), "' '");
        assert!(
            e[1].message.starts_with("CEL syntax error: "),
            "{}",
            e[1].message
        );
        assert_eq!(e[1].labels[0].message, "in this expression");
        assert_eq!(text_at(&r, e[1]).len(), 1);
        assert!(r.tools[0].cel.iter().all(|s| s.program.is_none()));
        assert!(r.definitions().next().is_none());
    }

    #[test]
    fn template_placeholders_are_sites_at_their_own_position() {
        let r = resolve_tool(
            "name: t
description: Show one file's history.
effect: read_only
parameters: {type: object, properties: {path: {type: string}}, required: [path]}
exec: {command: {argv: [git, log, '--', '{args.pth}']}}
",
        );
        let site = &r.tools[0].cel[0];
        assert_eq!(site.role, super::CelRole::Template);
        let file = r.loaded.sources.get(site.span.source).unwrap();
        assert_eq!(file.slice(site.span), "args.pth");
        assert_eq!(file.slice(site.problem_spans[0]), "args.pth");
    }

    #[test]
    fn a_broken_template_is_a_contract_error_and_a_broken_placeholder_a_syntax_error() {
        let r = resolve_tool(
            "name: t
description: Show one file's history.
effect: read_only
parameters: {type: object, properties: {path: {type: string}}, required: [path]}
exec: {command: {argv: [git, log, '{args.path', '{args.path ==* 1}']}}
",
        );
        let contract = errors(&r, Rule::InvalidContract);
        assert_eq!(contract.len(), 1, "{:#?}", r.diagnostics);
        let syntax = errors(&r, Rule::CelSyntaxError);
        assert_eq!(syntax.len(), 1, "{:#?}", r.diagnostics);
        // Reported at the placeholder's first character, inside the template.
        let file = r.source_text();
        let placeholder = file.rfind("args.path ==*").unwrap();
        assert_eq!(syntax[0].span.start as usize, placeholder);
    }
}
