//! The runtime cost budget of one evaluation: steps, bytes built and a deadline.
//!
//! The cel crate evaluates without a limit and offers no hook, so the budget is charged from
//! the expression itself. At compile time [`budgeted`] rewrites a copy of the tree: every
//! comprehension (the expansion of `all`, `exists`, `exists_one`, `map`, `filter`) calls
//! [`CHARGE`] once per iteration, and `map`/`filter` pass each element they append through it,
//! which charges the element's size. Work outside comprehensions is bounded by the expression's
//! length (the guard) and the arguments' size, so only loops can multiply it.
//!
//! The charge function reads a meter kept in a thread-local: evaluation is synchronous, on the
//! thread that called [`metered`], which installs the meter around it.

use std::cell::RefCell;
use std::time::Instant;

use cel::common::ast::{CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr, operators};
use cel::{ExecutionError, Value};

/// Most comprehension iterations one evaluation may run (Kubernetes gives a CEL expression a
/// runtime cost limit of 1,000,000 units).
pub const MAX_EVALUATION_STEPS: u64 = 1_000_000;
/// Most bytes the elements built by `map` and `filter` may add up to in one evaluation:
/// strings and bytes count their length, lists and maps [`ENTRY_BYTES`] an entry.
pub const MAX_EVALUATION_BYTES: u64 = 64 * 1024 * 1024;
/// What one list or map entry counts for in [`MAX_EVALUATION_BYTES`] (a value slot).
pub const ENTRY_BYTES: u64 = 16;
/// Steps between two reads of the clock: reading it every step would cost more than the step.
const CLOCK_EVERY: u64 = 1024;

/// The function the rewritten tree calls. CEL's grammar cannot spell `@` in a name (it is how
/// the crate names `@result` too), so no user expression can call or shadow it.
pub(crate) const CHARGE: &str = "@charge";

/// The limits of one evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Comprehension iterations allowed.
    pub steps: u64,
    /// Bytes the built elements may add up to.
    pub bytes: u64,
    /// When evaluation must stop (the call's timeout), if any.
    pub deadline: Option<Instant>,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            steps: MAX_EVALUATION_STEPS,
            bytes: MAX_EVALUATION_BYTES,
            deadline: None,
        }
    }
}

/// Which limit an evaluation ran into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spent {
    /// More than this many steps.
    Steps(u64),
    /// More than this many bytes built.
    Bytes(u64),
    /// The deadline passed.
    Deadline,
}

impl std::fmt::Display for Spent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Spent::Steps(n) => write!(f, "it took more than {n} comprehension steps"),
            Spent::Bytes(n) => write!(f, "it built more than {n} bytes"),
            Spent::Deadline => f.write_str("the call's timeout passed while it ran"),
        }
    }
}

/// The running count of one evaluation.
struct Meter {
    budget: Budget,
    steps: u64,
    bytes: u64,
    spent: Option<Spent>,
}

impl Meter {
    fn charge(&mut self, bytes: u64) -> Result<(), Spent> {
        if let Some(spent) = self.spent {
            return Err(spent);
        }
        self.steps += 1;
        self.bytes = self.bytes.saturating_add(bytes);
        let spent = if self.steps > self.budget.steps {
            Some(Spent::Steps(self.budget.steps))
        } else if self.bytes > self.budget.bytes {
            Some(Spent::Bytes(self.budget.bytes))
        } else if self.steps.is_multiple_of(CLOCK_EVERY)
            && self.budget.deadline.is_some_and(|d| Instant::now() >= d)
        {
            Some(Spent::Deadline)
        } else {
            None
        };
        self.spent = spent;
        spent.map_or(Ok(()), Err)
    }
}

thread_local! {
    static METER: RefCell<Option<Meter>> = const { RefCell::new(None) };
}

/// Runs `evaluate` under `budget`; also says which limit it ran into, if any. A cut-off
/// evaluation may still return a value (`||` absorbs the error of a side it does not need),
/// so callers must treat `Some` as the outcome, whatever `evaluate` returned.
pub(crate) fn metered<T>(budget: Budget, evaluate: impl FnOnce() -> T) -> (T, Option<Spent>) {
    let meter = Meter {
        budget,
        steps: 0,
        bytes: 0,
        spent: None,
    };
    let outer = METER.with(|m| m.replace(Some(meter)));
    let out = evaluate();
    let spent = METER.with(|m| m.replace(outer)).and_then(|m| m.spent);
    (out, spent)
}

/// The charge function: one step, plus `value`'s size; returns `value` unchanged.
pub(crate) fn charge(value: Value) -> Result<Value, ExecutionError> {
    let bytes = size_of_value(&value);
    let charged = METER.with(|m| match m.borrow_mut().as_mut() {
        Some(meter) => meter.charge(bytes),
        // Only evaluations through the budget reach this function; outside one there is
        // nothing to charge.
        None => Ok(()),
    });
    charged
        .map(|()| value)
        .map_err(|spent| ExecutionError::function_error(CHARGE, spent))
}

fn size_of_value(value: &Value) -> u64 {
    let len = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
    match value {
        Value::String(s) => len(s.len()),
        Value::Bytes(b) => len(b.len()),
        Value::List(l) => len(l.len()).saturating_mul(ENTRY_BYTES),
        Value::Map(m) => len(m.map.len()).saturating_mul(ENTRY_BYTES),
        _ => 0,
    }
}

/// A copy of `expr` that charges the budget in every comprehension, or `None` when it has no
/// comprehension (then nothing can multiply its work and it runs as it is).
pub(crate) fn budgeted(expr: &IdedExpr) -> Option<IdedExpr> {
    if !has_comprehension(expr) {
        return None;
    }
    let mut copy = expr.clone();
    rewrite(&mut copy);
    Some(copy)
}

fn has_comprehension(expr: &IdedExpr) -> bool {
    let mut found = false;
    visit(expr, &mut |e| {
        found |= matches!(e.expr, Expr::Comprehension(_))
    });
    found
}

fn visit(expr: &IdedExpr, f: &mut impl FnMut(&IdedExpr)) {
    f(expr);
    match &expr.expr {
        Expr::Call(call) => {
            if let Some(t) = &call.target {
                visit(t, f);
            }
            call.args.iter().for_each(|a| visit(a, f));
        }
        Expr::Comprehension(c) => {
            for e in [
                &c.iter_range,
                &c.accu_init,
                &c.loop_cond,
                &c.loop_step,
                &c.result,
            ] {
                visit(e, f);
            }
        }
        Expr::List(l) => l.elements.iter().for_each(|e| visit(e, f)),
        Expr::Map(m) => m.entries.iter().for_each(|e| visit_entry(&e.expr, f)),
        Expr::Struct(s) => s.entries.iter().for_each(|e| visit_entry(&e.expr, f)),
        Expr::Select(s) => visit(&s.operand, f),
        _ => {}
    }
}

fn visit_entry(entry: &EntryExpr, f: &mut impl FnMut(&IdedExpr)) {
    match entry {
        EntryExpr::MapEntry(m) => {
            visit(&m.key, f);
            visit(&m.value, f);
        }
        EntryExpr::StructField(s) => visit(&s.value, f),
    }
}

/// Rewrites every comprehension under `expr` (inner ones included) to charge the budget.
fn rewrite(expr: &mut IdedExpr) {
    match &mut expr.expr {
        Expr::Call(call) => {
            if let Some(t) = &mut call.target {
                rewrite(t);
            }
            call.args.iter_mut().for_each(rewrite);
        }
        Expr::Comprehension(c) => {
            for e in [
                &mut c.iter_range,
                &mut c.accu_init,
                &mut c.loop_cond,
                &mut c.loop_step,
                &mut c.result,
            ] {
                rewrite(e);
            }
            charge_comprehension(c);
        }
        Expr::List(l) => l.elements.iter_mut().for_each(rewrite),
        Expr::Map(m) => m
            .entries
            .iter_mut()
            .for_each(|e| rewrite_entry(&mut e.expr)),
        Expr::Struct(s) => s
            .entries
            .iter_mut()
            .for_each(|e| rewrite_entry(&mut e.expr)),
        Expr::Select(s) => rewrite(&mut s.operand),
        _ => {}
    }
}

fn rewrite_entry(entry: &mut EntryExpr) {
    match entry {
        EntryExpr::MapEntry(m) => {
            rewrite(&mut m.key);
            rewrite(&mut m.value);
        }
        EntryExpr::StructField(s) => rewrite(&mut s.value),
    }
}

/// Makes one comprehension charge per iteration. `map` and `filter` (a step appending
/// `[X]` to the accumulator, maybe under `guard ? … : @result`) keep their literal
/// `loop_cond`, which the crate's in-place append path requires: their guard and their element
/// are charged instead. Every other comprehension charges in its `loop_cond`, which the crate
/// evaluates before each iteration, and whose error is never deferred.
fn charge_comprehension(c: &mut ComprehensionExpr) {
    let accu = c.accu_var.clone();
    if matches!(c.loop_cond.expr, Expr::Literal(_)) {
        let step = &mut c.loop_step;
        if let Some(items) = appended_items(step, &accu) {
            items.iter_mut().for_each(wrap);
            return;
        }
        if let Expr::Call(call) = &mut step.expr
            && call.func_name == operators::CONDITIONAL
            && call.target.is_none()
            && let [guard, then, otherwise] = call.args.as_mut_slice()
            && is_ident(otherwise, &accu)
            && let Some(items) = appended_items(then, &accu)
        {
            items.iter_mut().for_each(wrap);
            wrap(guard);
            return;
        }
    }
    wrap(&mut c.loop_cond);
}

/// The elements of `[..]` in a step `accu + [..]`.
fn appended_items<'e>(step: &'e mut IdedExpr, accu: &str) -> Option<&'e mut Vec<IdedExpr>> {
    let Expr::Call(call) = &mut step.expr else {
        return None;
    };
    if call.func_name != operators::ADD || call.target.is_some() {
        return None;
    }
    match call.args.as_mut_slice() {
        [lhs, rhs] if is_ident(lhs, accu) => match &mut rhs.expr {
            Expr::List(list) => Some(&mut list.elements),
            _ => None,
        },
        _ => None,
    }
}

fn is_ident(e: &IdedExpr, name: &str) -> bool {
    matches!(&e.expr, Expr::Ident(n) if n == name)
}

/// Replaces `e` with `@charge(e)`, keeping its id (so errors inside still point at it).
fn wrap(e: &mut IdedExpr) {
    let id = e.id;
    let inner = std::mem::take(e);
    *e = IdedExpr {
        id,
        expr: Expr::Call(CallExpr {
            func_name: CHARGE.to_owned(),
            target: None,
            args: vec![inner],
        }),
    };
}

/// Registers the charge function on an evaluation context.
pub(crate) fn register(ctx: &mut cel::Context<'_, '_>) -> Result<(), cel::DeclarationError> {
    ctx.add_function(CHARGE, charge)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::{Bindings, EvalError, Evaluator, compile};

    fn evaluate(src: &str, args: serde_json::Value, budget: Budget) -> Result<Value, EvalError> {
        let b = Bindings {
            args: &args,
            tool_name: "t",
            tool_effect: "pure",
            tool_version: 1,
            context: "ci",
            workspace: "/w",
        };
        let ev = Evaluator::new(&b).unwrap().with_budget(budget);
        ev.value(&compile(src).unwrap())
    }

    fn small(steps: u64, bytes: u64) -> Budget {
        Budget {
            steps,
            bytes,
            deadline: None,
        }
    }

    #[test]
    fn nested_comprehensions_spend_the_step_budget() {
        let items: Vec<u32> = (0..200).collect();
        let args = serde_json::json!({ "items": items });
        let src = "args.items.all(x, args.items.all(y, x == y || x != y))";
        // 200 × 200 inner steps plus 200 outer ones: over 10,000.
        let r = evaluate(src, args.clone(), small(10_000, u64::MAX));
        assert_eq!(r, Err(EvalError::BudgetExceeded(Spent::Steps(10_000))));
        // The same expression within a budget large enough answers.
        let r = evaluate(src, args, small(50_000, u64::MAX));
        assert_eq!(r, Ok(Value::Bool(true)));
    }

    #[test]
    fn what_map_builds_is_charged_by_size() {
        let ss: Vec<String> = (0..100).map(|i| format!("{i:0>1000}")).collect();
        let args = serde_json::json!({ "ss": ss });
        // 100 × 100 strings of 2,000 bytes: 20 MB, far over 1 MB; few steps.
        let src = "size(args.ss.map(a, args.ss.map(b, a + b))) == 100";
        let r = evaluate(src, args.clone(), small(u64::MAX, 1 << 20));
        assert_eq!(r, Err(EvalError::BudgetExceeded(Spent::Bytes(1 << 20))));
        // `filter` charges what it keeps: 100 strings of 1,000 bytes pass 64 KiB.
        let r = evaluate(
            "size(args.ss.filter(s, true)) == 100",
            args,
            small(u64::MAX, 1 << 16),
        );
        assert_eq!(r, Err(EvalError::BudgetExceeded(Spent::Bytes(1 << 16))));
    }

    #[test]
    fn ordinary_rules_stay_within_the_default_budget() {
        let args = serde_json::json!({ "items": [1, 2, 3, 4], "paths": ["a", "b/c"] });
        for (src, want) in [
            ("args.items.all(x, x > 0)", true),
            ("args.items.exists(x, x == 3)", true),
            ("args.items.exists_one(x, x > 3)", true),
            ("args.items.filter(x, x % 2 == 0) == [2, 4]", true),
            ("args.items.map(x, x > 2, x * 10) == [30, 40]", true),
            (
                "args.items.map(x, args.items.map(y, x * y))[3][3] == 16",
                true,
            ),
            ("args.paths.all(p, !p.startsWith('/'))", true),
            ("args.items.all(x, x < 3)", false),
        ] {
            assert_eq!(
                evaluate(src, args.clone(), Budget::default()),
                Ok(Value::Bool(want)),
                "{src}"
            );
        }
    }

    #[test]
    fn a_passed_deadline_stops_the_loop() {
        let items: Vec<u32> = (0..100).collect();
        let args = serde_json::json!({ "items": items });
        let budget = Budget {
            deadline: Some(Instant::now()),
            ..Budget::default()
        };
        let r = evaluate(
            "args.items.all(x, args.items.all(y, x != y || true))",
            args,
            budget,
        );
        assert_eq!(r, Err(EvalError::BudgetExceeded(Spent::Deadline)));
    }

    #[test]
    fn an_absorbing_operator_cannot_hide_a_cut_off() {
        let items: Vec<u32> = (0..200).collect();
        let args = serde_json::json!({ "items": items });
        // `||` and `&&` answer without the side that failed; the cut-off still wins.
        for src in [
            "args.items.all(x, args.items.all(y, x >= 0 && y >= 0)) || true",
            "false && args.items.all(x, true) || args.items.exists(x, args.items.exists(y, x < y && false)) || true",
            "args.items.map(x, args.items.all(y, true)).exists(b, !b) || true",
        ] {
            let r = evaluate(src, args.clone(), small(5_000, u64::MAX));
            assert_eq!(
                r,
                Err(EvalError::BudgetExceeded(Spent::Steps(5_000))),
                "{src}"
            );
        }
    }

    #[test]
    fn only_comprehensions_are_rewritten_and_map_keeps_its_append_shape() {
        assert!(compile("args.a + 'x' == 'y'").unwrap().budgeted.is_none());
        for src in ["args.items.map(x, x + 1)", "args.items.filter(x, x > 1)"] {
            let c = compile(src).unwrap();
            let Some(IdedExpr {
                expr: Expr::Comprehension(comp),
                ..
            }) = &c.budgeted
            else {
                panic!("{src}: not rewritten");
            };
            // The crate's in-place append needs a literal `loop_cond` and `@result + [X]`.
            assert!(matches!(comp.loop_cond.expr, Expr::Literal(_)), "{src}");
            let mut step = comp.loop_step.clone();
            let items = match appended_items(&mut step, &comp.accu_var) {
                Some(items) => items.clone(),
                None => {
                    let Expr::Call(call) = &mut step.expr else {
                        panic!("{src}: step is not a call");
                    };
                    appended_items(&mut call.args[1], &comp.accu_var)
                        .expect("guarded append")
                        .clone()
                }
            };
            assert!(
                matches!(&items[0].expr, Expr::Call(c) if c.func_name == CHARGE),
                "{src}"
            );
        }
    }

    #[test]
    fn user_source_cannot_name_the_charge_function() {
        assert!(compile("@charge(1) == 1").is_err());
    }
}
