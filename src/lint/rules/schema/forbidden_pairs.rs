//! Pairs of arguments that a `validate` rule forbids together, read from the compiled CEL:
//! `!(has(args.a) && has(args.b))`, `!has(args.a) || !has(args.b)`, `has(args.a) != has(args.b)`,
//! and the same with boolean flags (`!(args.a && args.b)`).

use cel::common::ast::{Expr, IdedExpr, LiteralValue};

use crate::lint::context::ToolView;
use crate::spec::resolve::CelRole;
use crate::spec::source::Span;

/// What a rule tests about one argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Atom {
    /// `has(args.x)`.
    Present(String),
    /// `args.x` or `args.x == true`.
    True(String),
}

/// Two arguments a rule forbids together.
#[derive(Clone, Debug)]
pub(crate) struct ForbiddenPair {
    /// The first.
    pub a: Atom,
    /// The second.
    pub b: Atom,
    /// Whether the rule also demands one of them (`a != b`).
    pub exactly_one: bool,
    /// The rule's id.
    pub rule_id: String,
    /// The expression.
    pub span: Span,
}

/// Every pair that the tool's `validate` rules forbid together.
pub(crate) fn forbidden_pairs(tool: &ToolView) -> Vec<ForbiddenPair> {
    let mut out = Vec::new();
    for site in &tool.resolved.cel {
        let CelRole::Validate(id) = &site.role else {
            continue;
        };
        let Some(program) = &site.program else {
            continue;
        };
        let mut found = Vec::new();
        collect(program.expression(), &mut found);
        out.extend(found.into_iter().map(|(a, b, exactly_one)| ForbiddenPair {
            a,
            b,
            exactly_one,
            rule_id: id.clone(),
            span: site.span,
        }));
    }
    out
}

fn call<'e>(e: &'e IdedExpr, name: &str) -> Option<&'e [IdedExpr]> {
    match &e.expr {
        Expr::Call(c) if c.func_name == name && c.target.is_none() => Some(&c.args),
        _ => None,
    }
}

fn collect(e: &IdedExpr, out: &mut Vec<(Atom, Atom, bool)>) {
    // A conjunction of several rules.
    if let Some([l, r]) = call(e, "_&&_") {
        collect(l, out);
        collect(r, out);
        return;
    }
    // !(a && b)
    if let Some([inner]) = call(e, "!_")
        && let Some([l, r]) = call(inner, "_&&_")
        && let (Some(a), Some(b)) = (atom(l), atom(r))
    {
        out.push((a, b, false));
        return;
    }
    // !a || !b
    if let Some([l, r]) = call(e, "_||_")
        && let (Some([x]), Some([y])) = (call(l, "!_"), call(r, "!_"))
        && let (Some(a), Some(b)) = (atom(x), atom(y))
    {
        out.push((a, b, false));
        return;
    }
    // a != b
    if let Some([l, r]) = call(e, "_!=_")
        && let (Some(a), Some(b)) = (atom(l), atom(r))
    {
        out.push((a, b, true));
        return;
    }
    // a ? !b : true
    if let Some([c, t, f]) = call(e, "_?_:_")
        && let Some([y]) = call(t, "!_")
        && matches!(&f.expr, Expr::Literal(LiteralValue::Boolean(b)) if **b)
        && let (Some(a), Some(b)) = (atom(c), atom(y))
    {
        out.push((a, b, false));
    }
}

fn args_field(e: &IdedExpr) -> Option<&str> {
    match &e.expr {
        Expr::Select(s) if !s.test && matches!(&s.operand.expr, Expr::Ident(n) if n == "args") => {
            Some(&s.field)
        }
        _ => None,
    }
}

fn atom(e: &IdedExpr) -> Option<Atom> {
    match &e.expr {
        Expr::Select(s) if s.test && matches!(&s.operand.expr, Expr::Ident(n) if n == "args") => {
            Some(Atom::Present(s.field.clone()))
        }
        Expr::Select(_) => args_field(e).map(|f| Atom::True(f.to_owned())),
        Expr::Call(_) => {
            let [l, r] = call(e, "_==_")? else {
                return None;
            };
            let f = args_field(l)?;
            matches!(&r.expr, Expr::Literal(LiteralValue::Boolean(b)) if **b)
                .then(|| Atom::True(f.to_owned()))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(src: &str) -> Vec<(Atom, Atom, bool)> {
        let p = cel::Program::compile(src).unwrap();
        let mut out = Vec::new();
        collect(p.expression(), &mut out);
        out
    }

    fn present(n: &str) -> Atom {
        Atom::Present(n.into())
    }

    #[test]
    fn forms_of_not_both() {
        assert_eq!(
            pairs("!(has(args.a) && has(args.b))"),
            [(present("a"), present("b"), false)]
        );
        assert_eq!(
            pairs("!has(args.a) || !has(args.b)"),
            [(present("a"), present("b"), false)]
        );
        assert_eq!(
            pairs("has(args.a) != has(args.b)"),
            [(present("a"), present("b"), true)]
        );
        assert_eq!(
            pairs("has(args.a) ? !has(args.b) : true"),
            [(present("a"), present("b"), false)]
        );
        assert_eq!(
            pairs("!(args.on && args.off == true)"),
            [(Atom::True("on".into()), Atom::True("off".into()), false)]
        );
        assert_eq!(
            pairs("args.x > 1 && !(has(args.a) && has(args.b))").len(),
            1
        );
    }

    #[test]
    fn other_rules_give_nothing() {
        assert!(pairs("!has(args.end) || args.start <= args.end").is_empty());
        assert!(pairs("has(args.a) && has(args.b)").is_empty());
        assert!(pairs("size(args.path) > 0").is_empty());
    }
}
