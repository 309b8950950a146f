//! `toolgate lint --fix`: the findings' fixes applied to the YAML source, each kept only when
//! the file still loads, the finding is gone, and the file has no error or warning it did not
//! have before (an `enum` from the description that leaves out the `default`, say).
//!
//! Fixes are tried in batches so that a clean run lints the project again only a few times,
//! not once per fix: in each round every file puts all its fixes that do not overlap one
//! another into one batch, and one in-memory lint of the whole project
//! ([`crate::check::recheck`]) checks every file's batch at once (each file is judged by its
//! own findings). A batch that passes is kept whole; one that fails is split in halves, the
//! later positions first, and each half is tried again (a bisection: a few bad fixes among
//! `n` cost about `bad × log n` more lints). A single fix that fails next to other files'
//! trials is tried once more on its own, the other files as loaded, before it is dropped, so a
//! fix is only dropped for what it does itself. Fixes whose edits overlap a fix still being
//! tried wait for a later round, and are dropped if they overlap one that was kept. Nothing is
//! written here.

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::check::{CheckedProject, recheck};
use crate::diagnostic::{Applicability, Diagnostic, Fix, Severity};
use crate::source::{SourceFile, SourceId};

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

/// A file's errors and warnings, by rule and message (spans move when text is added).
type Serious = Vec<(Option<&'static str>, String)>;

/// Why a fix is dropped when its edits collide with a kept fix (or with each other).
const OVERLAP: &str = "its edits overlap another fix";

/// One fix to try: its finding, and the byte range its edits cover in the loaded text.
struct Candidate<'a> {
    diag: &'a Diagnostic,
    fix: &'a Fix,
    start: u32,
    end: u32,
}

/// Fixes (by position in [`FileFixes::fixes`]) tried together.
struct Batch {
    members: Vec<usize>,
    /// Tried on its own, the other files as loaded: a single fix that failed next to other
    /// files' trials.
    alone: bool,
}

/// One file's fixes and how far trying them has got.
struct FileFixes<'a> {
    source: SourceId,
    file: &'a SourceFile,
    /// Last position first, so that of two fixes the earlier in this order never lies before
    /// the later one.
    fixes: Vec<Candidate<'a>>,
    kept: BTreeSet<usize>,
    /// The file's errors and warnings with the kept fixes.
    current: Serious,
    /// Batches still to try, the next on top.
    pending: Vec<Batch>,
    /// Fixes for a later round: they overlap a fix of the batch being tried.
    waiting: Vec<usize>,
    rejected: Vec<(usize, String)>,
}

impl<'a> FileFixes<'a> {
    /// Whether fixes `a` and `b` (`a` first in [`Self::fixes`]' order) can both be applied.
    fn compatible(&self, a: usize, b: usize) -> bool {
        self.fixes[b].end <= self.fixes[a].start
    }

    /// Whether fix `i` can join the kept ones: the kept fixes do not overlap one another, so
    /// its neighbours in the order are the only ones it could collide with.
    fn fits_kept(&self, i: usize) -> bool {
        let before = self.kept.range(..i).next_back();
        let after = self.kept.range(i + 1..).next();
        before.is_none_or(|&a| self.compatible(a, i))
            && after.is_none_or(|&b| self.compatible(i, b))
    }

    /// Starts a round: the waiting fixes that fit the kept ones and one another, as a batch;
    /// those that overlap a fix of the batch wait for the next round, those that overlap a kept
    /// fix are dropped.
    fn start_round(&mut self) {
        let mut chosen: Vec<usize> = Vec::new();
        let mut later = Vec::new();
        for i in std::mem::take(&mut self.waiting) {
            if !self.fits_kept(i) {
                self.rejected.push((i, OVERLAP.to_owned()));
            } else if chosen.last().is_some_and(|&c| !self.compatible(c, i)) {
                later.push(i);
            } else {
                chosen.push(i);
            }
        }
        self.waiting = later;
        if !chosen.is_empty() {
            self.pending.push(Batch {
                members: chosen,
                alone: false,
            });
        }
    }

    /// The text with the kept fixes and `extra` applied: one pass over the loaded text.
    fn text_with(&self, extra: &[usize]) -> String {
        let mut edits: Vec<(u32, std::cmp::Reverse<usize>, u32, &str)> = Vec::new();
        for &i in self.kept.iter().chain(extra) {
            for e in &self.fixes[i].fix.edits {
                // Of two fixes at one position, the later in the order (the earlier in the
                // file) goes first, as if each were applied to the text the other left.
                edits.push((e.span.start, std::cmp::Reverse(i), e.span.end, &e.content));
            }
        }
        edits.sort_unstable();
        let text = &*self.file.text;
        let mut out =
            String::with_capacity(text.len() + edits.iter().map(|e| e.3.len()).sum::<usize>());
        let mut at = 0usize;
        for (start, _, end, content) in edits {
            // Checked when the fixes were gathered: in the text, on character boundaries,
            // and not overlapping.
            out.push_str(text.get(at..start as usize).unwrap_or_default());
            out.push_str(content);
            at = end as usize;
        }
        out.push_str(text.get(at..).unwrap_or_default());
        out
    }

    /// Whether the batch passes in `again` (a lint with the batch applied): `Ok` with the
    /// file's errors and warnings then, or why not.
    fn verdict(&self, again: &CheckedProject, batch: &[usize]) -> Result<Serious, String> {
        let source = self.source;
        if let Some(x) = again
            .diagnostics
            .iter()
            .find(|x| x.code.is_none() && x.span.source == source)
        {
            return Err(format!("the file would not load: {}", x.message));
        }
        let stays = |i: &usize| {
            let d = self.fixes[*i].diag;
            again
                .diagnostics
                .iter()
                .any(|x| x.span.source == source && x.code == d.code && x.message == d.message)
        };
        if batch.iter().any(stays) {
            return Err("the finding would stay".to_owned());
        }
        let after = serious_in(&again.diagnostics, source);
        if let Some((code, message)) = after.iter().find(|x| !self.current.contains(x)) {
            return Err(format!("it would add {}: {message}", code.unwrap_or("")));
        }
        Ok(after)
    }

    /// Records the outcome of the batch just tried (`solo`: with no other file changed).
    fn settle(&mut self, batch: Batch, outcome: Result<Serious, String>, solo: bool) {
        match outcome {
            Ok(after) => {
                self.kept.extend(batch.members);
                self.current = after;
            }
            Err(why) if batch.members.len() == 1 => {
                if solo || batch.alone {
                    self.rejected.push((batch.members[0], why));
                } else {
                    self.pending.push(Batch {
                        members: batch.members,
                        alone: true,
                    });
                }
            }
            Err(_) => {
                let mut first = batch.members;
                let second = first.split_off(first.len() / 2);
                self.pending.push(Batch {
                    members: second,
                    alone: false,
                });
                self.pending.push(Batch {
                    members: first,
                    alone: false,
                });
            }
        }
    }

    fn finding(&self, i: usize) -> FixedFinding {
        let c = &self.fixes[i];
        FixedFinding {
            code: c.diag.code.unwrap_or(""),
            message: c.diag.message.clone(),
            title: c.fix.title.clone(),
        }
    }
}

/// Whether a fix's edits lie in `text`, on character boundaries, without overlapping one
/// another (what [`Fix::apply`] checks, without building the text).
fn edits_valid(fix: &Fix, text: &str) -> bool {
    let mut spans: Vec<(usize, usize)> = fix
        .edits
        .iter()
        .map(|e| (e.span.start as usize, e.span.end as usize))
        .collect();
    spans.sort_unstable();
    let mut at = 0usize;
    for (start, end) in spans {
        if start < at || end < start || !text.is_char_boundary(start) || !text.is_char_boundary(end)
        {
            return false;
        }
        at = end;
    }
    true
}

/// Tries every fix of `checked`'s findings (the unsafe ones too when `include_unsafe`).
pub fn fix_project(checked: &CheckedProject, include_unsafe: bool) -> FixReport {
    let mut report = FixReport::default();
    if checked.loaded.import.is_some() {
        return report;
    }
    let mut files = gather(checked, include_unsafe);
    loop {
        for f in &mut files {
            if f.pending.is_empty() && !f.waiting.is_empty() {
                f.start_round();
            }
        }
        // A single fix to try on its own first: one lint for it, the other files as loaded.
        if let Some(f) = files
            .iter_mut()
            .find(|f| f.pending.last().is_some_and(|b| b.alone))
        {
            let Some(batch) = f.pending.pop() else {
                continue;
            };
            let again = recheck(checked, &[(f.source, f.text_with(&batch.members))]);
            let outcome = f.verdict(&again, &batch.members);
            f.settle(batch, outcome, true);
            continue;
        }
        // Every file's next batch, and the kept fixes of the others, in one lint.
        let mut replaced = Vec::new();
        let mut trying = Vec::new();
        for (k, f) in files.iter_mut().enumerate() {
            match f.pending.pop() {
                Some(batch) => {
                    replaced.push((f.source, f.text_with(&batch.members)));
                    trying.push((k, batch));
                }
                None if !f.kept.is_empty() => replaced.push((f.source, f.text_with(&[]))),
                None => {}
            }
        }
        if trying.is_empty() {
            break;
        }
        let solo = replaced.len() == 1;
        let again = recheck(checked, &replaced);
        for (k, batch) in trying {
            let f = &mut files[k];
            let outcome = f.verdict(&again, &batch.members);
            f.settle(batch, outcome, solo);
        }
    }
    for f in files {
        let mut rejected = f.rejected.clone();
        rejected.sort_by_key(|(i, _)| *i);
        report
            .rejected
            .extend(rejected.into_iter().map(|(i, why)| (f.finding(i), why)));
        if !f.kept.is_empty() {
            report.files.push(FixedFile {
                source: f.source,
                path: f.file.path.clone(),
                before: f.file.text.to_string(),
                after: f.text_with(&[]),
                // In the file's order.
                fixed: f.kept.iter().rev().map(|&i| f.finding(i)).collect(),
            });
        }
    }
    report
}

/// The wanted fixes of `checked`'s findings, by file (in the order the findings name them),
/// each file's last position first; fixes with broken edits are dropped at once.
fn gather(checked: &CheckedProject, include_unsafe: bool) -> Vec<FileFixes<'_>> {
    let wanted = |f: &Fix| include_unsafe || f.applicability == Applicability::Safe;
    let mut files: Vec<FileFixes<'_>> = Vec::new();
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
        let Some(file) = checked.loaded.sources.get(source) else {
            continue;
        };
        let candidate = Candidate {
            diag: d,
            fix,
            start: fix.edits.iter().map(|e| e.span.start).min().unwrap_or(0),
            end: fix.edits.iter().map(|e| e.span.end).max().unwrap_or(0),
        };
        match files.iter_mut().find(|f| f.source == source) {
            Some(f) => f.fixes.push(candidate),
            None => files.push(FileFixes {
                source,
                file,
                fixes: vec![candidate],
                kept: BTreeSet::new(),
                current: serious_in(&checked.diagnostics, source),
                pending: Vec::new(),
                waiting: Vec::new(),
                rejected: Vec::new(),
            }),
        }
    }
    for f in &mut files {
        f.fixes.sort_by_key(|c| std::cmp::Reverse(c.start));
        for i in 0..f.fixes.len() {
            if edits_valid(f.fixes[i].fix, &f.file.text) {
                f.waiting.push(i);
            } else {
                f.rejected.push((i, OVERLAP.to_owned()));
            }
        }
    }
    files
}

/// The errors and warnings of one file, by rule and message (spans move when text is added).
fn serious_in(diags: &[Diagnostic], source: SourceId) -> Serious {
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
