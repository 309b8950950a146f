//! What the containment rules read from permission rules: the glob lists of `deny` rules
//! ([`deny_globs`]), the functions an expression calls ([`calls`]), and whether the project's
//! protected set already covers a glob ([`covered`]).

use std::collections::BTreeSet;

use cel::Program;
use cel::common::ast::{Expr, IdedExpr, LiteralValue};

use crate::ir::Decision;
use crate::lint::context::ToolView;
use crate::policy::ProtectedSet;
use crate::spec::resolve::CelRole;
use crate::spec::source::Span;

/// The globs one `deny` rule refuses: `path.matches_glob(args.<param>, [<globs>])` where a match
/// denies (not under a `!`).
#[derive(Clone, Debug)]
pub(crate) struct DenyGlobs {
    /// The rule.
    pub(crate) rule: String,
    /// The rule's expression in the spec.
    pub(crate) span: Span,
    /// The globs as written, in order, each once.
    pub(crate) globs: Vec<String>,
}

impl DenyGlobs {
    /// The globs in a comparable form ([`normalize`]), as a set.
    pub(crate) fn key(&self) -> BTreeSet<String> {
        self.globs.iter().map(|g| normalize(g)).collect()
    }

    /// `` `a`, `b` `` (at most five, then "and N more").
    pub(crate) fn shown(globs: &[String]) -> String {
        let mut s: Vec<String> = globs.iter().take(5).map(|g| format!("`{g}`")).collect();
        if globs.len() > 5 {
            s.push(format!("and {} more", globs.len() - 5));
        }
        s.join(", ")
    }
}

/// The glob lists of a tool's `deny` rules, one entry per rule that has any.
pub(crate) fn deny_globs(tool: &ToolView) -> Vec<DenyGlobs> {
    tool.resolved
        .cel
        .iter()
        .filter_map(|site| {
            let CelRole::Permission(id, Decision::Deny) = &site.role else {
                return None;
            };
            let program = site.program.as_ref()?;
            let mut globs = Vec::new();
            collect_globs(program.expression(), false, &mut globs);
            let mut seen = BTreeSet::new();
            globs.retain(|g| seen.insert(g.clone()));
            (!globs.is_empty()).then(|| DenyGlobs {
                rule: id.clone(),
                span: site.span,
                globs,
            })
        })
        .collect()
}

/// Globs of `path.matches_glob(args…, [literals])` calls in positive position.
fn collect_globs(e: &IdedExpr, negated: bool, out: &mut Vec<String>) {
    let Expr::Call(call) = &e.expr else {
        return;
    };
    match call.func_name.as_str() {
        "!_" => {
            for a in &call.args {
                collect_globs(a, !negated, out);
            }
        }
        "_&&_" | "_||_" => {
            for a in &call.args {
                collect_globs(a, negated, out);
            }
        }
        "_?_:_" => {
            for a in call.args.iter().skip(1) {
                collect_globs(a, negated, out);
            }
        }
        "matches_glob" if !negated && namespace(call) == Some("path") => {
            let on_args = call.args.first().is_some_and(reads_args);
            if let (
                true,
                Some(IdedExpr {
                    expr: Expr::List(list),
                    ..
                }),
            ) = (on_args, call.args.get(1))
            {
                for el in &list.elements {
                    if let Expr::Literal(LiteralValue::String(s)) = &el.expr {
                        out.push(s.to_string());
                    }
                }
            }
        }
        _ => {}
    }
}

/// `path` of `path.matches_glob(…)`.
fn namespace(call: &cel::common::ast::CallExpr) -> Option<&str> {
    match call.target.as_deref().map(|t| &t.expr) {
        Some(Expr::Ident(ns)) => Some(ns.as_str()),
        _ => None,
    }
}

/// Whether an expression is (a path into) `args`.
fn reads_args(e: &IdedExpr) -> bool {
    match &e.expr {
        Expr::Ident(n) => n == "args",
        Expr::Select(s) => reads_args(&s.operand),
        Expr::Call(c) if c.func_name == "_[_]" => c.args.first().is_some_and(reads_args),
        _ => false,
    }
}

/// Every namespaced function an expression calls (`path.protected`, `shell.is_simple`).
pub(crate) fn calls(program: &Program) -> BTreeSet<String> {
    fn walk(e: &IdedExpr, out: &mut BTreeSet<String>) {
        match &e.expr {
            Expr::Call(c) => {
                if let Some(ns) = namespace(c)
                    && matches!(ns, "path" | "shell")
                {
                    out.insert(format!("{ns}.{}", c.func_name));
                }
                if let Some(t) = &c.target {
                    walk(t, out);
                }
                for a in &c.args {
                    walk(a, out);
                }
            }
            Expr::Select(s) => walk(&s.operand, out),
            Expr::Comprehension(c) => {
                for x in [
                    &c.iter_range,
                    &c.accu_init,
                    &c.loop_cond,
                    &c.loop_step,
                    &c.result,
                ] {
                    walk(x, out);
                }
            }
            Expr::List(l) => {
                for x in &l.elements {
                    walk(x, out);
                }
            }
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    walk(program.expression(), &mut out);
    out
}

/// Every string literal in an expression.
pub(crate) fn string_literals(program: &Program) -> Vec<String> {
    fn walk(e: &IdedExpr, out: &mut Vec<String>) {
        match &e.expr {
            Expr::Literal(LiteralValue::String(s)) => out.push(s.to_string()),
            Expr::Call(c) => {
                if let Some(t) = &c.target {
                    walk(t, out);
                }
                for a in &c.args {
                    walk(a, out);
                }
            }
            Expr::Select(s) => walk(&s.operand, out),
            Expr::Comprehension(c) => {
                for x in [
                    &c.iter_range,
                    &c.accu_init,
                    &c.loop_cond,
                    &c.loop_step,
                    &c.result,
                ] {
                    walk(x, out);
                }
            }
            Expr::List(l) => {
                for x in &l.elements {
                    walk(x, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(program.expression(), &mut out);
    out
}

/// A glob in the form rules and `protect` share: no leading `./`, `/` or `**/`, no trailing
/// `/` or `/**` (a folder's match covers what is in it), lower case (protection ignores case).
pub(crate) fn normalize(glob: &str) -> String {
    let mut g = glob.trim();
    g = g.trim_start_matches("./").trim_start_matches('/');
    while let Some(rest) = g.strip_prefix("**/") {
        g = rest;
    }
    loop {
        let before = g;
        g = g.trim_end_matches("/**").trim_end_matches('/');
        if g == before {
            break;
        }
    }
    g.to_ascii_lowercase()
}

/// The project's protected set, in the form [`Coverage::covers`] compares globs with.
pub(crate) struct Coverage {
    set: ProtectedSet,
    /// The set's unanchored globs, normalized.
    unanchored: BTreeSet<String>,
}

impl Coverage {
    /// The project's set (the default set when the project's does not compile; the loader
    /// reports that).
    pub(crate) fn of(project: &crate::ir::ProjectConfig) -> Coverage {
        let set = ProtectedSet::new(&project.protect)
            .unwrap_or_else(|_| (*crate::policy::protect::default_set()).clone());
        Coverage::new(set)
    }

    fn new(set: ProtectedSet) -> Coverage {
        let unanchored = set
            .paths()
            .iter()
            .filter(|p| !p.glob.starts_with('/'))
            .map(|p| normalize(&p.glob))
            .collect();
        Coverage { set, unanchored }
    }

    /// Whether the protected set covers everything a glob matches: one of its folder or file
    /// components is protected on its own — a literal the set protects (`.ssh` in
    /// `**/.ssh/**`), or a wildcard component written as one of the set's globs (`*.pem` in
    /// `**/*.pem`).
    pub(crate) fn covers(&self, glob: &str) -> bool {
        normalize(glob).split('/').any(|c| {
            if c.is_empty() || c == "**" {
                false
            } else if c.contains(['*', '?', '[', '{']) {
                self.unanchored.contains(c)
            } else {
                self.set.protects(c).is_some()
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::ProtectPolicy;

    #[test]
    fn globs_compare_in_one_form() {
        assert_eq!(normalize("**/.env"), ".env");
        assert_eq!(normalize(".git/**"), ".git");
        assert_eq!(normalize("/Secrets/"), "secrets");
        assert_eq!(normalize("**/**/*.PEM"), "*.pem");
    }

    #[test]
    fn the_default_set_covers_the_old_secret_globs_but_not_git() {
        let set = Coverage::new(ProtectedSet::new(&ProtectPolicy::default()).unwrap());
        for g in [
            "**/.env",
            "**/.env.*",
            "**/*.pem",
            "**/*.key",
            "config/*.pem",
            "**/.ssh/**",
        ] {
            assert!(set.covers(g), "{g}");
        }
        for g in [".git/**", "**/secrets/**", "**/*.txt", "**/*"] {
            assert!(!set.covers(g), "{g}");
        }
    }

    #[test]
    fn deny_globs_are_read_from_positive_positions() {
        let program = |s: &str| crate::cel::compile(s).unwrap();
        let mut out = Vec::new();
        collect_globs(
            program("has(args.path) && path.matches_glob(args.path, ['a', 'b']) || !path.matches_glob(args.path, ['c'])")
                .expression(),
            false,
            &mut out,
        );
        assert_eq!(out, ["a", "b"]);
        assert_eq!(
            calls(&program(
                "shell.is_simple(args.c) && shell.words(args.c).all(w, !path.protected(w))"
            )),
            BTreeSet::from([
                "path.protected".to_owned(),
                "shell.is_simple".to_owned(),
                "shell.words".to_owned()
            ])
        );
    }
}
