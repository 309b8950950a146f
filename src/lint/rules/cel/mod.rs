//! `TGC`: CEL expressions that cannot be checked or bounded. The checks live in
//! [`crate::cel::check`]; these rules report what it found at the expression's YAML position.

pub mod cel_constant_condition;
pub mod cel_cost_over_budget;
pub mod cel_result_type;
pub mod cel_unbounded_cost;
pub mod cel_unknown_function;
pub mod cel_unknown_reference;

use crate::cel::ProblemKind;
use crate::lint::context::{LintContext, ToolView};

/// Reports the checker's problems of one kind for every expression of a tool.
pub(crate) fn report_problems(ctx: &mut LintContext, tool: &ToolView, kind: ProblemKind) {
    for site in &tool.resolved.cel {
        let Some(analysis) = &site.analysis else {
            continue;
        };
        for (problem, span) in analysis.problems.iter().zip(&site.problem_spans) {
            if problem.kind != kind {
                continue;
            }
            let d = ctx.report(*span, problem.message.clone());
            if let Some(h) = &problem.help {
                d.help(h.clone());
            }
        }
    }
}
