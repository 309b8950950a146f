//! `toolgate lint --fix`: the findings' fixes applied to the YAML source, each kept only when
//! the file still loads, the finding is gone, and the file has no error or warning it did not
//! have before (an `enum` from the description that leaves out the `default`, say).
//!
//! Each file's fixes are tried one at a time, last position first (so the offsets of the ones
//! still to try stay valid), and each trial is linted again in memory with the whole project
//! ([`crate::check::recheck`]); nothing is written here.

use std::path::PathBuf;

use crate::check::{CheckedProject, recheck};
use crate::diagnostic::{Applicability, Diagnostic, Fix, Severity};
use crate::spec::source::SourceId;

/// A finding and the fix tried for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixedFinding {
    /// The rule code.
    pub code: &'static str,
    /// The finding's message.
    pub message: String,
    /// What the fix does.
    pub title: String,
}

/// One file's text before and after its fixes.
#[derive(Clone, Debug)]
pub struct FixedFile {
    /// The file.
    pub source: SourceId,
    /// Its path as loaded.
    pub path: PathBuf,
    /// The text as loaded.
    pub before: String,
    /// The text with the kept fixes.
    pub after: String,
    /// The findings fixed.
    pub fixed: Vec<FixedFinding>,
}

/// What [`fix_project`] did.
#[derive(Clone, Debug, Default)]
pub struct FixReport {
    /// Files with at least one kept fix.
    pub files: Vec<FixedFile>,
    /// Fixes tried and dropped, with why: the file no longer loaded, the finding stayed, or a
    /// new error or warning appeared.
    pub rejected: Vec<(FixedFinding, String)>,
}

impl FixReport {
    /// Number of findings fixed.
    pub fn fixed(&self) -> usize {
        self.files.iter().map(|f| f.fixed.len()).sum()
    }
}

/// Tries every fix of `checked`'s findings (the unsafe ones too when `include_unsafe`).
pub fn fix_project(checked: &CheckedProject, include_unsafe: bool) -> FixReport {
    let mut report = FixReport::default();
    if checked.loaded.import.is_some() {
        return report;
    }
    let wanted = |f: &Fix| include_unsafe || f.applicability == Applicability::Safe;
    let mut by_file: Vec<(SourceId, Vec<(&Diagnostic, &Fix)>)> = Vec::new();
    for d in &checked.diagnostics {
        let (Some(_), Some(fix)) = (d.code, d.fix.as_deref()) else {
            continue;
        };
        let Some(first) = fix.edits.first() else {
            continue;
        };
        let source = first.span.source;
        if !wanted(fix) || fix.edits.iter().any(|e| e.span.source != source) {
            continue;
        }
        match by_file.iter_mut().find(|(s, _)| *s == source) {
            Some((_, list)) => list.push((d, fix)),
            None => by_file.push((source, vec![(d, fix)])),
        }
    }
    for (source, mut fixes) in by_file {
        let Some(file) = checked.loaded.sources.get(source) else {
            continue;
        };
        // The file's errors and warnings as it stands (after the fixes kept so far).
        let mut current = serious_in(&checked.diagnostics, source);
        fixes.sort_by_key(|(_, f)| std::cmp::Reverse(f.edits.iter().map(|e| e.span.start).min()));
        let mut text = file.text.to_string();
        let mut fixed = Vec::new();
        let mut lowest = u32::MAX;
        for (d, fix) in fixes {
            let finding = FixedFinding {
                code: d.code.unwrap_or(""),
                message: d.message.clone(),
                title: fix.title.clone(),
            };
            // An edit reaching past a start already changed would land in shifted text.
            let end = fix.edits.iter().map(|e| e.span.end).max().unwrap_or(0);
            let trial = if end <= lowest {
                fix.apply(&text)
            } else {
                None
            };
            let kept = match trial {
                None => Err("its edits overlap another fix".to_owned()),
                Some(t) => {
                    let again = recheck(checked, &[(source, t.clone())]);
                    let after = serious_in(&again.diagnostics, source);
                    let new = after.iter().find(|x| !current.contains(x));
                    if let Some(x) = again
                        .diagnostics
                        .iter()
                        .find(|x| x.code.is_none() && x.span.source == source)
                    {
                        Err(format!("the file would not load: {}", x.message))
                    } else if again.diagnostics.iter().any(|x| {
                        x.span.source == source && x.code == d.code && x.message == d.message
                    }) {
                        Err("the finding would stay".to_owned())
                    } else if let Some((code, message)) = new {
                        Err(format!("it would add {}: {message}", code.unwrap_or("")))
                    } else {
                        Ok((t, after))
                    }
                }
            };
            match kept {
                Ok((t, after)) => {
                    text = t;
                    current = after;
                    lowest = lowest.min(fix.edits.iter().map(|e| e.span.start).min().unwrap_or(0));
                    fixed.push(finding);
                }
                Err(why) => report.rejected.push((finding, why)),
            }
        }
        if !fixed.is_empty() {
            fixed.reverse();
            report.files.push(FixedFile {
                source,
                path: file.path.clone(),
                before: file.text.to_string(),
                after: text,
                fixed,
            });
        }
    }
    report
}

/// The errors and warnings of one file, by rule and message (spans move when text is added).
fn serious_in(diags: &[Diagnostic], source: SourceId) -> Vec<(Option<&'static str>, String)> {
    diags
        .iter()
        .filter(|d| d.severity >= Severity::Warning && d.span.source == source)
        .map(|d| (d.code, d.message.clone()))
        .collect()
}

/// A unified diff of one file's fixes (`--diff`), with `a/` and `b/` paths as git writes them.
pub fn unified_diff(file: &FixedFile) -> String {
    let path = file.path.to_string_lossy().replace('\\', "/");
    similar::TextDiff::from_lines(&file.before, &file.after)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}
