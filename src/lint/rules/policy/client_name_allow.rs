//! TGP014 client-name-allow.

use cel::Program;
use cel::common::ast::{Expr, IdedExpr, LiteralValue};

use crate::diagnostic::Severity;
use crate::ir::Decision;
use crate::lint::context::{LintContext, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::rule::Rule;
use crate::spec::resolve::CelRole;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::ClientNameAllow,
    severity: Severity::Warning,
    applies: Applies::SpecsOnly,
    purpose: "Finds an allow rule that reads principal.client_name, a name the MCP client chooses.",
    explanation: r#"## What it does
Reports a permission rule whose decision is `allow` and whose condition reads
`principal.client_name` (`principal.client_name`, `principal["client_name"]` or
`has(principal.client_name)`).

## Why is this bad?
`principal.client_name` is the `clientInfo.name` the MCP client sends in `initialize`: any
client can send any name, and no token vouches for it. Beside the verified fields of a token
(`principal.subject`, `principal.scopes`, `principal.claims`), it reads like one of them, but
an allow that depends on it is granted to whoever types the name: a script calling itself
`Claude Code` gets what the rule meant for that client. Used to deny or to ask, the name can
only restrict; used to allow, it widens what a forged name gets.

## Example
```yaml
permissions:
  rules:
    - id: trusted-client
      allow: 'principal.client_name == "Claude Code"'
```

Use instead:
```yaml
permissions:
  rules:
    - id: core-team
      allow: 'principal.authenticated && has(principal.claims.team) && principal.claims.team == "core"'
```
(a verified claim of the token), or ask a person.
"#,
};

/// Reports allow rules that read `principal.client_name`.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView) {
    for site in &tool.resolved.cel {
        let CelRole::Permission(id, Decision::Allow) = &site.role else {
            continue;
        };
        let Some(program) = &site.program else {
            continue;
        };
        if !reads_client_name(program) {
            continue;
        }
        ctx.report(
            site.span,
            format!(
                "allow rule `{id}` reads `principal.client_name`, the name the MCP client sends in `initialize`: any client can claim it"
            ),
        )
        .help("allow on what a token proves (`principal.subject`, `principal.scopes`, `principal.claims`), or make the rule `ask` or `deny`");
    }
}

/// Whether an expression reads `principal.client_name` anywhere.
fn reads_client_name(program: &Program) -> bool {
    fn is_principal(e: &IdedExpr) -> bool {
        matches!(&e.expr, Expr::Ident(n) if n == "principal")
    }
    fn walk(e: &IdedExpr) -> bool {
        match &e.expr {
            Expr::Select(s) => {
                (s.field == "client_name" && is_principal(&s.operand)) || walk(&s.operand)
            }
            Expr::Call(c) => {
                let indexed = c.func_name == "_[_]"
                    && c.args.len() == 2
                    && is_principal(&c.args[0])
                    && matches!(&c.args[1].expr, Expr::Literal(LiteralValue::String(s)) if s.to_string() == "client_name");
                indexed || c.target.as_deref().is_some_and(walk) || c.args.iter().any(walk)
            }
            Expr::Comprehension(c) => [
                &c.iter_range,
                &c.accu_init,
                &c.loop_cond,
                &c.loop_step,
                &c.result,
            ]
            .into_iter()
            .any(walk),
            Expr::List(l) => l.elements.iter().any(walk),
            Expr::Map(m) => m.entries.iter().any(|en| match &en.expr {
                cel::common::ast::EntryExpr::MapEntry(me) => walk(&me.key) || walk(&me.value),
                cel::common::ast::EntryExpr::StructField(f) => walk(&f.value),
            }),
            _ => false,
        }
    }
    walk(program.expression())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reads(src: &str) -> bool {
        reads_client_name(&Program::compile(src).unwrap())
    }

    #[test]
    fn every_way_of_reading_the_name_is_found() {
        assert!(reads(r#"principal.client_name == "Claude Code""#));
        assert!(reads(r#"principal["client_name"] == "x""#));
        assert!(reads("has(principal.client_name) && args.a > 1"));
        assert!(reads(
            r#"["a"].exists(x, principal.client_name.startsWith(x))"#
        ));
        assert!(!reads(r#"principal.claims.team == "core""#));
        assert!(!reads(r#"args.client_name == "x""#));
        assert!(!reads(r#"principal.client == "cli-app""#));
    }
}
