//! One line per finding, `path:line:col: CODE message` (`CODE [*] message` when `--fix` can fix it) (ruff's `--output-format concise`), for
//! logs, pipes and editors' quickfix lists.

use crate::diagnostic::{Applicability, Diagnostic};
use crate::lint::report::positions;
use crate::spec::source::SourceMap;

/// Renders one line per diagnostic; a load error (no rule code) shows its severity instead.
pub fn render(diags: &[Diagnostic], sources: &SourceMap) -> String {
    let mut out = String::new();
    for d in diags {
        let code = d.code.unwrap_or(d.severity.as_str());
        // Messages are one sentence; a line break would split the finding in a quickfix list.
        let message = d.message.replace('\n', " ");
        // `[*]`: `--fix` fixes it (ruff's mark); unsafe fixes are not marked.
        let fixable = if d
            .fix
            .as_ref()
            .is_some_and(|f| f.applicability == Applicability::Safe)
        {
            "[*] "
        } else {
            ""
        };
        match positions(sources, d.span) {
            Some((path, at, _)) => out.push_str(&format!(
                "{path}:{}:{}: {code} {fixable}{message}\n",
                at.line, at.column
            )),
            None => out.push_str(&format!("{code} {fixable}{message}\n")),
        }
    }
    out
}
