//! Static checks the `cel` crate does not have: references, functions, result types and
//! evaluation cost, all computed from the tool's parameter schema.
//!
//! The checker walks the parsed expression once and returns [`Problem`]s with character ranges
//! inside the expression text; callers map those back into the YAML file.

use std::collections::HashMap;
use std::fmt;

use cel::Program;
use cel::common::ast::{Expr, IdedExpr, LiteralValue};

use crate::cel::functions::{self, Returns};
use crate::cel::schema::{Lookup, SchemaView, Ty};
use crate::suggest::did_you_mean;

/// A CEL type as far as the checker can tell.
#[derive(Clone, Debug, PartialEq)]
pub enum CelType {
    /// bool
    Bool,
    /// int
    Int,
    /// uint
    Uint,
    /// double
    Double,
    /// string
    String,
    /// bytes
    Bytes,
    /// null
    Null,
    /// list of an element type
    List(Box<CelType>),
    /// map with values of a type
    Map(Box<CelType>),
    /// unknown until run time
    Dyn,
}

impl fmt::Display for CelType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CelType::Bool => f.write_str("bool"),
            CelType::Int => f.write_str("int"),
            CelType::Uint => f.write_str("uint"),
            CelType::Double => f.write_str("double"),
            CelType::String => f.write_str("string"),
            CelType::Bytes => f.write_str("bytes"),
            CelType::Null => f.write_str("null"),
            CelType::List(e) => write!(f, "list({e})"),
            CelType::Map(v) => write!(f, "map(string, {v})"),
            CelType::Dyn => f.write_str("dyn"),
        }
    }
}

/// What an expression's value is used for, which decides the type it must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// A condition: `validate`, `permissions`, `when`.
    Condition,
    /// Resource keys: a string or a list of strings.
    Resources,
    /// A list expanded into arguments (`each`).
    List,
    /// A single string (idempotency key, stdin).
    String,
    /// Any value that is turned into text (template placeholders).
    Text,
}

impl Slot {
    /// Human name of what the slot expects.
    pub fn expected(self) -> &'static str {
        match self {
            Slot::Condition => "bool",
            Slot::Resources => "a string or a list of strings",
            Slot::List => "a list",
            Slot::String => "string",
            Slot::Text => "a value",
        }
    }

    fn accepts(self, t: &CelType) -> bool {
        if *t == CelType::Dyn {
            return true;
        }
        match self {
            Slot::Condition => *t == CelType::Bool,
            Slot::Resources => {
                matches!(t, CelType::String)
                    || matches!(t, CelType::List(e) if matches!(**e, CelType::String | CelType::Dyn))
            }
            Slot::List => matches!(t, CelType::List(_)),
            Slot::String => *t == CelType::String,
            Slot::Text => true,
        }
    }
}

/// The names an expression may use besides `args`.
pub const VARIABLES: &[&str] = &["args", "tool", "context", "workspace", "principal"];

/// A problem found in one expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    /// Which check found it.
    pub kind: ProblemKind,
    /// Character range inside the expression text.
    pub start: usize,
    /// End of the range (exclusive).
    pub end: usize,
    /// One sentence.
    pub message: String,
    /// How to fix it.
    pub help: Option<String>,
}

/// The checks of [`check`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProblemKind {
    /// `args.x` where `x` is not a parameter, or an unknown variable.
    UnknownReference,
    /// A function toolgate does not provide.
    UnknownFunction,
    /// The value does not fit the slot.
    ResultType,
    /// A comprehension over something with no size bound.
    UnboundedCost,
    /// The cost estimate exceeds the budget.
    CostOverBudget,
    /// The expression references nothing: it always gives the same answer.
    Constant,
}

/// The checker's findings and what it learned.
#[derive(Clone, Debug, Default)]
pub struct Analysis {
    /// Problems, in source order.
    pub problems: Vec<Problem>,
    /// The inferred type of the whole expression.
    pub result: Option<CelType>,
    /// Estimated evaluation steps, when bounded.
    pub cost: Option<u64>,
    /// `args` paths read, e.g. `["path"]`, `["edits", "[]", "old"]`.
    pub arg_paths: Vec<Vec<String>>,
}

/// Checks a compiled expression against the parameter schema for a slot.
pub fn check(
    program: &Program,
    parameters: &serde_json::Value,
    slot: Slot,
    cost_budget: u64,
) -> Analysis {
    let mut c = Checker {
        program,
        schema: SchemaView::new(parameters),
        problems: Vec::new(),
        arg_paths: Vec::new(),
        references_input: false,
    };
    let scope = Scope::default();
    let root = program.expression();
    let (ty, cost) = c.walk(root, &scope);
    if !slot.accepts(&ty.ty) {
        let (start, end) = c.range(root.id);
        c.problems.push(Problem {
            kind: ProblemKind::ResultType,
            start,
            end,
            message: format!("expression gives {}, but this key needs {}", ty.ty, slot.expected()),
            help: Some(match slot {
                Slot::Condition => "compare the value, e.g. `args.x == 'y'` or `has(args.x)`".into(),
                Slot::Resources => "return keys such as `'file:' + args.path` or `['file:' + args.a, 'file:' + args.b]`".into(),
                _ => format!("make the expression produce {}", slot.expected()),
            }),
        });
    }
    match cost {
        Cost::Bounded(n) if n > cost_budget => {
            let (start, end) = c.range(root.id);
            c.problems.push(Problem {
                kind: ProblemKind::CostOverBudget,
                start,
                end,
                message: format!("evaluation cost estimate {n} exceeds the budget of {cost_budget}"),
                help: Some("lower `maxItems`/`maxLength` of the parameters it iterates over, or simplify the expression".into()),
            });
        }
        _ => {}
    }
    if !c.references_input && matches!(slot, Slot::Condition) {
        let (start, end) = c.range(root.id);
        c.problems.push(Problem {
            kind: ProblemKind::Constant,
            start,
            end,
            message: "expression does not depend on the call: it always gives the same answer"
                .into(),
            help: Some("refer to `args`, `context` or `tool`, or remove the rule".into()),
        });
    }
    c.problems.sort_by_key(|p| (p.start, p.end));
    Analysis {
        problems: c.problems,
        result: Some(ty.ty),
        cost: match cost {
            Cost::Bounded(n) => Some(n),
            Cost::Unbounded => None,
        },
        arg_paths: c.arg_paths,
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Cost {
    Bounded(u64),
    Unbounded,
}

impl Cost {
    fn add(self, o: Cost) -> Cost {
        match (self, o) {
            (Cost::Bounded(a), Cost::Bounded(b)) => Cost::Bounded(a.saturating_add(b)),
            _ => Cost::Unbounded,
        }
    }
}

#[derive(Default, Clone)]
struct Scope {
    locals: HashMap<String, Ty>,
}

struct Checker<'a> {
    program: &'a Program,
    schema: SchemaView<'a>,
    problems: Vec<Problem>,
    arg_paths: Vec<Vec<String>>,
    references_input: bool,
}

impl Checker<'_> {
    /// The character range of the node with this id, covering its whole subtree (the parser
    /// records a select at its `.` and a call at its name only).
    fn range(&self, id: u64) -> (usize, usize) {
        let root = self.program.expression();
        match find(root, id) {
            Some(e) => self.extent(e),
            None => self.own(id).unwrap_or((0, 0)),
        }
    }

    fn own(&self, id: u64) -> Option<(usize, usize)> {
        self.program
            .source_info()
            .offset_for(id)
            // The parser records inclusive stop indices.
            .map(|(s, e)| (s as usize, (e as usize + 1).max(s as usize + 1)))
    }

    fn extent(&self, e: &IdedExpr) -> (usize, usize) {
        let (mut lo, mut hi) = self.own(e.id).unwrap_or((usize::MAX, 0));
        let mut cover = |r: (usize, usize)| {
            if r.0 < r.1 {
                lo = lo.min(r.0);
                hi = hi.max(r.1);
            }
        };
        match &e.expr {
            Expr::Select(s) => {
                // `a.b` and `has(a.b)`: from the operand to the end of the field name (the
                // parser places the node at the `.` or at `has(`).
                let (olo, ohi) = self.extent(&s.operand);
                return (olo, ohi + 1 + s.field.chars().count());
            }
            Expr::Call(c) => {
                if let Some(t) = &c.target {
                    cover(self.extent(t));
                }
                for a in &c.args {
                    cover(self.extent(a));
                }
                if c.func_name == "_[_]"
                    || (!c.func_name.starts_with('_') && !c.func_name.starts_with('@'))
                {
                    // Include the closing bracket or parenthesis.
                    let text = &self.program.source_info().source;
                    let close = if c.func_name == "_[_]" { ']' } else { ')' };
                    if let Some(next) = text.chars().skip(hi).position(|ch| ch == close)
                        && text.chars().skip(hi).take(next).all(char::is_whitespace)
                    {
                        hi = hi + next + 1;
                    }
                }
            }
            Expr::List(l) => {
                for el in &l.elements {
                    cover(self.extent(el));
                }
            }
            _ => {}
        }
        if lo == usize::MAX {
            (0, hi.max(1))
        } else {
            (lo, hi.max(lo + 1))
        }
    }

    /// The `args` path an expression spells (`args.a.b`, `args.a[0].b`), if it is one.
    fn args_path(e: &IdedExpr) -> Option<Vec<String>> {
        match &e.expr {
            Expr::Ident(n) if n == "args" => Some(Vec::new()),
            Expr::Select(s) if !s.test => {
                let mut p = Self::args_path(&s.operand)?;
                p.push(s.field.clone());
                Some(p)
            }
            Expr::Call(c) if c.func_name == "_[_]" && c.args.len() == 2 => {
                let mut p = Self::args_path(&c.args[0])?;
                match &c.args[1].expr {
                    Expr::Literal(LiteralValue::String(s)) => p.push(s.to_string()),
                    _ => p.push("[]".into()),
                }
                Some(p)
            }
            _ => None,
        }
    }

    fn check_args_path(&mut self, e: &IdedExpr, path: Vec<String>) -> Ty {
        self.references_input = true;
        let segs: Vec<&str> = path.iter().map(String::as_str).collect();
        let result = match self.schema.lookup(&segs) {
            Lookup::Found(ty) => ty,
            Lookup::Missing { at, known } => {
                let (start, end) = self.range(e.id);
                let shown: Vec<&str> = segs[..=at].iter().copied().filter(|s| *s != "[]").collect();
                let bad = segs[at];
                let help = Some(
                    did_you_mean(bad, known.iter().map(String::as_str)).unwrap_or_else(|| {
                        if known.is_empty() {
                            "declare the parameter under `parameters.properties`".into()
                        } else {
                            format!("parameters here: {}", known.join(", "))
                        }
                    }),
                );
                self.problems.push(Problem {
                    kind: ProblemKind::UnknownReference,
                    start,
                    end,
                    message: format!("`args.{}` is not a declared parameter", shown.join(".")),
                    help,
                });
                Ty::dyn_()
            }
        };
        self.arg_paths.push(path);
        result
    }

    fn walk(&mut self, e: &IdedExpr, scope: &Scope) -> (Ty, Cost) {
        match &e.expr {
            Expr::Ident(name) => {
                if let Some(t) = scope.locals.get(name) {
                    return (t.clone(), Cost::Bounded(1));
                }
                match name.as_str() {
                    "args" => {
                        self.references_input = true;
                        self.arg_paths.push(Vec::new());
                        (self.schema.root_type(), Cost::Bounded(1))
                    }
                    "tool" => {
                        self.references_input = true;
                        (
                            Ty::of(CelType::Map(Box::new(CelType::Dyn))),
                            Cost::Bounded(1),
                        )
                    }
                    "principal" => {
                        self.references_input = true;
                        (
                            Ty::of(CelType::Map(Box::new(CelType::Dyn))),
                            Cost::Bounded(1),
                        )
                    }
                    "context" | "workspace" => {
                        self.references_input = true;
                        (Ty::of(CelType::String), Cost::Bounded(1))
                    }
                    other => {
                        let (start, end) = self.range(e.id);
                        self.problems.push(Problem {
                            kind: ProblemKind::UnknownReference,
                            start,
                            end,
                            message: format!("unknown variable `{other}`"),
                            help: Some(
                                did_you_mean(other, VARIABLES.iter().copied()).unwrap_or_else(
                                    || format!("expressions can use {}", VARIABLES.join(", ")),
                                ),
                            ),
                        });
                        (Ty::dyn_(), Cost::Bounded(1))
                    }
                }
            }
            Expr::Select(sel) => {
                if sel.test {
                    // has(args.x): the path must exist, its value need not.
                    let (_, cost) = match Self::args_path(&sel.operand) {
                        Some(mut p) => {
                            p.push(sel.field.clone());
                            (self.check_args_path(e, p), Cost::Bounded(1))
                        }
                        None => self.walk(&sel.operand, scope),
                    };
                    return (Ty::of(CelType::Bool), cost.add(Cost::Bounded(1)));
                }
                if let Some(p) = Self::args_path(e) {
                    return (self.check_args_path(e, p), Cost::Bounded(1));
                }
                let (_, cost) = self.walk(&sel.operand, scope);
                (Ty::dyn_(), cost.add(Cost::Bounded(1)))
            }
            Expr::Call(call) => self.walk_call(e, call, scope),
            Expr::Comprehension(comp) => {
                let (range_ty, range_cost) = self.walk(&comp.iter_range, scope);
                let elem = match &range_ty.ty {
                    CelType::List(el) => Ty::of((**el).clone()),
                    CelType::Map(_) => Ty::of(CelType::String),
                    _ => Ty::dyn_(),
                };
                let mut inner = scope.clone();
                inner.locals.insert(comp.iter_var.clone(), elem.clone());
                if let Some(v2) = &comp.iter_var2 {
                    inner.locals.insert(v2.clone(), Ty::dyn_());
                }
                let (accu_ty, accu_cost) = self.walk(&comp.accu_init, scope);
                inner.locals.insert(comp.accu_var.clone(), accu_ty);
                let (_, step_cost) = self.walk(&comp.loop_step, &inner);
                let (_, cond_cost) = self.walk(&comp.loop_cond, &inner);
                let (result_ty, result_cost) = self.walk(&comp.result, &inner);
                let per_iter = step_cost.add(cond_cost);
                let loop_cost = match (range_ty.bound, per_iter) {
                    (Some(n), Cost::Bounded(c)) => Cost::Bounded(n.saturating_mul(c.max(1))),
                    (None, _) => {
                        let (start, end) = self.range(comp.iter_range.id);
                        let what = Self::args_path(&comp.iter_range)
                            .map(|p| format!("`args.{}`", p.join(".").replace(".[]", "[]")))
                            .unwrap_or_else(|| "this value".into());
                        self.problems.push(Problem {
                            kind: ProblemKind::UnboundedCost,
                            start,
                            end,
                            message: format!("iterates over {what}, which has no size bound, so evaluation cost is unbounded"),
                            help: Some("give the parameter `maxItems` (lists) or `maxLength` (strings)".into()),
                        });
                        Cost::Unbounded
                    }
                    (Some(_), Cost::Unbounded) => Cost::Unbounded,
                };
                (
                    Ty::of(result_ty.ty),
                    range_cost.add(accu_cost).add(loop_cost).add(result_cost),
                )
            }
            Expr::List(list) => {
                let mut cost = Cost::Bounded(1);
                let mut elem: Option<CelType> = None;
                for el in &list.elements {
                    let (t, c) = self.walk(el, scope);
                    cost = cost.add(c);
                    elem = Some(match elem {
                        None => t.ty,
                        Some(prev) if prev == t.ty => prev,
                        Some(_) => CelType::Dyn,
                    });
                }
                (
                    Ty {
                        ty: CelType::List(Box::new(elem.unwrap_or(CelType::Dyn))),
                        bound: Some(list.elements.len() as u64),
                    },
                    cost,
                )
            }
            Expr::Map(map) => {
                let mut cost = Cost::Bounded(1);
                for entry in &map.entries {
                    if let cel::common::ast::EntryExpr::MapEntry(m) = &entry.expr {
                        cost = cost
                            .add(self.walk(&m.key, scope).1)
                            .add(self.walk(&m.value, scope).1);
                    }
                }
                (
                    Ty {
                        ty: CelType::Map(Box::new(CelType::Dyn)),
                        bound: Some(map.entries.len() as u64),
                    },
                    cost,
                )
            }
            Expr::Literal(lit) => (
                match lit {
                    LiteralValue::Boolean(_) => Ty::of(CelType::Bool),
                    LiteralValue::Int(_) => Ty::of(CelType::Int),
                    LiteralValue::UInt(_) => Ty::of(CelType::Uint),
                    LiteralValue::Double(_) => Ty::of(CelType::Double),
                    LiteralValue::String(s) => Ty {
                        ty: CelType::String,
                        bound: Some(s.to_string().chars().count() as u64),
                    },
                    LiteralValue::Bytes(_) => Ty::of(CelType::Bytes),
                    LiteralValue::Null => Ty::of(CelType::Null),
                },
                Cost::Bounded(1),
            ),
            Expr::Struct(_) | Expr::Unspecified => (Ty::dyn_(), Cost::Bounded(1)),
        }
    }

    fn walk_call(
        &mut self,
        e: &IdedExpr,
        call: &cel::common::ast::CallExpr,
        scope: &Scope,
    ) -> (Ty, Cost) {
        // `args.x[0]` and friends are paths, checked against the schema.
        if call.func_name == "_[_]"
            && let Some(p) = Self::args_path(e)
        {
            let cost = call
                .args
                .get(1)
                .map(|a| self.walk(a, scope).1)
                .unwrap_or(Cost::Bounded(0));
            return (self.check_args_path(e, p), cost.add(Cost::Bounded(1)));
        }
        // `path.x(...)`: a namespaced function, not a method on a variable named `path`.
        let namespaced = call.target.as_ref().and_then(|t| match &t.expr {
            Expr::Ident(ns)
                if !scope.locals.contains_key(ns) && !VARIABLES.contains(&ns.as_str()) =>
            {
                Some(format!("{ns}.{}", call.func_name))
            }
            _ => None,
        });
        let name = namespaced.clone().unwrap_or_else(|| call.func_name.clone());
        let mut cost = Cost::Bounded(1);
        let mut operand_types = Vec::new();
        if namespaced.is_none()
            && let Some(t) = &call.target
        {
            let (ty, c) = self.walk(t, scope);
            cost = cost.add(c);
            operand_types.push(ty);
        }
        for a in &call.args {
            let (ty, c) = self.walk(a, scope);
            cost = cost.add(c);
            operand_types.push(ty);
        }
        let Some(info) = functions::lookup(&name) else {
            let (start, end) = self.range(e.id);
            let known = functions::FUNCTIONS
                .iter()
                .map(|f| f.name)
                .filter(|n| !n.contains('_') || n.contains('.'));
            self.problems.push(Problem {
                kind: ProblemKind::UnknownFunction,
                start,
                end,
                message: format!("unknown function `{name}`"),
                help: Some(did_you_mean(&name, known).unwrap_or_else(|| {
                    "`toolgate explain TGC003` lists the functions specs may call".into()
                })),
            });
            return (Ty::dyn_(), cost);
        };
        let ty = match info.returns {
            Returns::Fixed(f) => {
                let ty = f.to_type();
                // A split of a bounded string is bounded by its length.
                let bound = if matches!(name.as_str(), "split" | "shell.words" | "shell.commands") {
                    operand_types.first().and_then(|t| t.bound).map(|b| b + 1)
                } else {
                    None
                };
                Ty { ty, bound }
            }
            Returns::FirstOperand => {
                let first = operand_types.first().cloned().unwrap_or_else(Ty::dyn_);
                let second = operand_types.get(1).map(|t| t.bound);
                match (&first.ty, name.as_str()) {
                    (CelType::List(_) | CelType::String, "_+_") => Ty {
                        ty: first.ty.clone(),
                        bound: match (first.bound, second.flatten()) {
                            (Some(a), Some(b)) => Some(a + b),
                            _ => None,
                        },
                    },
                    _ => Ty::of(first.ty),
                }
            }
            Returns::Element => match operand_types.first().map(|t| &t.ty) {
                Some(CelType::List(el)) | Some(CelType::Map(el)) => Ty::of((**el).clone()),
                _ => Ty::dyn_(),
            },
            Returns::Dyn => Ty::dyn_(),
        };
        (ty, cost)
    }
}

/// The node with this id.
fn find(e: &IdedExpr, id: u64) -> Option<&IdedExpr> {
    if e.id == id {
        return Some(e);
    }
    match &e.expr {
        Expr::Select(s) => find(&s.operand, id),
        Expr::Call(c) => c
            .target
            .as_deref()
            .and_then(|t| find(t, id))
            .or_else(|| c.args.iter().find_map(|a| find(a, id))),
        Expr::Comprehension(c) => [
            &c.iter_range,
            &c.accu_init,
            &c.loop_cond,
            &c.loop_step,
            &c.result,
        ]
        .into_iter()
        .find_map(|x| find(x, id)),
        Expr::List(l) => l.elements.iter().find_map(|x| find(x, id)),
        Expr::Map(m) => m.entries.iter().find_map(|en| match &en.expr {
            cel::common::ast::EntryExpr::MapEntry(me) => {
                find(&me.key, id).or_else(|| find(&me.value, id))
            }
            cel::common::ast::EntryExpr::StructField(sf) => find(&sf.value, id),
        }),
        Expr::Struct(st) => st.entries.iter().find_map(|en| match &en.expr {
            cel::common::ast::EntryExpr::MapEntry(me) => {
                find(&me.key, id).or_else(|| find(&me.value, id))
            }
            cel::common::ast::EntryExpr::StructField(sf) => find(&sf.value, id),
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params() -> serde_json::Value {
        json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "maxLength": 100},
                "start_line": {"type": "integer"},
                "paths": {"type": "array", "items": {"type": "string"}},
                "files": {"type": "array", "maxItems": 10, "items": {"type": "string"}}
            },
            "additionalProperties": false
        })
    }

    fn run(src: &str, slot: Slot) -> Analysis {
        let program = crate::cel::compile(src).unwrap();
        check(&program, &params(), slot, 10_000)
    }

    fn kinds(a: &Analysis) -> Vec<ProblemKind> {
        a.problems.iter().map(|p| p.kind).collect()
    }

    #[test]
    fn clean_expression_has_no_problems() {
        let a = run(
            "!has(args.start_line) || args.start_line > 0",
            Slot::Condition,
        );
        assert_eq!(kinds(&a), vec![]);
        assert_eq!(a.result, Some(CelType::Bool));
    }

    #[test]
    fn unknown_parameter_is_located_with_suggestion() {
        let src = "args.pth.startsWith('src/')";
        let a = run(src, Slot::Condition);
        assert_eq!(kinds(&a), vec![ProblemKind::UnknownReference]);
        let p = &a.problems[0];
        assert_eq!(&src[p.start..p.end], "args.pth");
        assert_eq!(p.help.as_deref(), Some("did you mean `path`?"));
    }

    #[test]
    fn unknown_function_and_variable() {
        let a = run(
            "path.matches_glb(args.path, ['x']) || ctx == 'ci'",
            Slot::Condition,
        );
        assert_eq!(
            kinds(&a),
            vec![ProblemKind::UnknownFunction, ProblemKind::UnknownReference]
        );
        assert_eq!(
            a.problems[0].help.as_deref(),
            Some("did you mean `path.matches_glob`?")
        );
    }

    #[test]
    fn result_type_must_fit_the_slot() {
        assert_eq!(
            kinds(&run("args.path", Slot::Condition)),
            vec![ProblemKind::ResultType]
        );
        assert_eq!(kinds(&run("'file:' + args.path", Slot::Resources)), vec![]);
        assert_eq!(
            kinds(&run("args.files.map(f, 'file:' + f)", Slot::Resources)),
            vec![]
        );
        assert_eq!(
            kinds(&run("args.start_line", Slot::Resources)),
            vec![ProblemKind::ResultType]
        );
    }

    #[test]
    fn comprehension_over_unbounded_list_is_a_finding() {
        let a = run(
            "args.paths.all(p, path.within_workspace(p))",
            Slot::Condition,
        );
        assert_eq!(kinds(&a), vec![ProblemKind::UnboundedCost]);
        let b = run(
            "args.files.all(p, path.within_workspace(p))",
            Slot::Condition,
        );
        assert_eq!(kinds(&b), vec![]);
        assert!(b.cost.unwrap() < 100);
    }

    #[test]
    fn constant_conditions_are_reported() {
        assert_eq!(
            kinds(&run("1 == 1", Slot::Condition)),
            vec![ProblemKind::Constant]
        );
    }
}
