//! `--statistics`: how many findings each rule reported, most first (ruff's `--statistics`).

use std::collections::BTreeMap;

use crate::diagnostic::{Applicability, Diagnostic, Severity};
use crate::lint::codes::Rule;

/// One line per rule: count, code, name, severity and how many of the findings `--fix` can fix.
pub fn render(diags: &[Diagnostic]) -> String {
    // code -> (count, fixable, most serious severity)
    let mut per_rule: BTreeMap<&str, (usize, usize, Severity)> = BTreeMap::new();
    for d in diags {
        let slot = per_rule
            .entry(d.code.unwrap_or("load-error"))
            .or_insert((0, 0, d.severity));
        slot.0 += 1;
        slot.1 += usize::from(
            d.fix
                .as_ref()
                .is_some_and(|f| f.applicability == Applicability::Safe),
        );
        slot.2 = slot.2.max(d.severity);
    }
    let mut rows: Vec<_> = per_rule.into_iter().collect();
    rows.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(b.0)));
    let mut out = String::new();
    for (code, (count, fixable, severity)) in rows {
        let name = Rule::find(code).map(|r| r.meta().name()).unwrap_or("");
        let fixable = if fixable > 0 {
            format!("  ({fixable} fixable)")
        } else {
            String::new()
        };
        let line = format!(
            "{count:>5}  {code:<10} {name:<34} {:<7}{fixable}",
            severity.as_str()
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
