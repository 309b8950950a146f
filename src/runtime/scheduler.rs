//! The scheduler (chapter §11–14): concurrency is the runtime's decision, not the model's.
//!
//! Each authorized call has a [`Footprint`] — the resource keys its spec's CEL gives for
//! `resources.reads` / `resources.writes` — a concurrency group and an effect. Two calls
//! conflict when one writes a resource the other reads or writes (`tree:src` covers every
//! `file:src/…` and `tree:src/…` key; other keys match exactly), when they share a group whose
//! `max` is 1, or when either is *exclusive*: an effect that may change something (anything but
//! `pure`, `read_only`, `network_read`) with no declared resources, or a call whose resources
//! could not be evaluated. A read-only call without declared resources may read anything, so it
//! conflicts with every call that writes. Each call goes into the first batch after every earlier
//! call it conflicts with (and where its group has room), with an edge to the one in the highest
//! batch per key and reason; batches run one after another, the calls of a batch in parallel. The [`Plan`] is a value: inspect it,
//! serialize it, or print it.
//!
//! The plan orders one turn's calls. Calls of different turns, sessions and requests — and of
//! other toolgate processes on the project — meet in [`admission`]: every authorized call is
//! admitted against one table per runtime, and takes the project's cross-process locks
//! ([`lockfile`] on one host, `pg_locks` across hosts), before it runs.

use std::collections::{BTreeSet, HashMap};
use std::fmt;

use serde::Serialize;

use crate::ir::{ConcurrencyGroup, Effect, ErrorType};

pub mod admission;
mod key_index;
pub mod lockfile;
pub(crate) mod locks;
#[cfg(feature = "journal-postgres")]
pub mod pg_locks;
#[cfg(test)]
mod plan_props;

use key_index::{KeyIndex, Latest, raise};

pub use admission::{Wait, WaitedBehind};
pub use lockfile::{LOCK_FILE, ProjectLocks};
#[cfg(feature = "journal-postgres")]
pub use pg_locks::PgLocks;

/// The resources one call touches.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Footprint {
    /// Resource keys read.
    pub reads: BTreeSet<String>,
    /// Resource keys written.
    pub writes: BTreeSet<String>,
    /// Why the keys could not be evaluated, when they could not (the call then runs alone).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unresolved: Option<String>,
}

/// What the scheduler needs to know about one call.
#[derive(Clone, Debug)]
pub struct ScheduleInput<'a> {
    /// Position in the model's list of calls.
    pub index: usize,
    /// The call id.
    pub call_id: &'a str,
    /// The tool.
    pub tool: &'a str,
    /// Its effect.
    pub effect: Effect,
    /// Whether the spec declares any resources.
    pub declares_resources: bool,
    /// The call's resources.
    pub footprint: &'a Footprint,
    /// Its concurrency group.
    pub group: Option<&'a ConcurrencyGroup>,
}

/// One scheduled call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PlannedCall {
    /// Position in the model's list of calls (0-based).
    pub index: usize,
    /// The call id.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The batch it runs in (0-based).
    pub batch: usize,
    /// Resources read.
    pub reads: BTreeSet<String>,
    /// Resources written.
    pub writes: BTreeSet<String>,
    /// Its concurrency group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Why it must run alone, if it must.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exclusive: Option<String>,
}

/// An ordering constraint: `before` runs to completion before `after` starts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Edge {
    /// Index of the earlier call.
    pub before: usize,
    /// Index of the later call.
    pub after: usize,
    /// The conflict.
    pub reason: String,
}

/// A call refused before scheduling.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RefusedCall {
    /// Position in the model's list.
    pub index: usize,
    /// The call id.
    pub call_id: String,
    /// The tool name as called.
    pub tool: String,
    /// Why.
    pub error_type: ErrorType,
}

/// The schedule of one `execute`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// Scheduled calls in call order.
    pub calls: Vec<PlannedCall>,
    /// Conflicts, in call order.
    pub edges: Vec<Edge>,
    /// Call indices per batch.
    pub batches: Vec<Vec<usize>>,
    /// Calls that never reached the scheduler.
    pub refused: Vec<RefusedCall>,
}

impl Plan {
    /// Renumbers the plan's calls as if `by` calls came before them (a later turn of a file).
    pub fn shift(&mut self, by: usize) {
        for c in &mut self.calls {
            c.index += by;
        }
        for e in &mut self.edges {
            e.before += by;
            e.after += by;
        }
        for b in &mut self.batches {
            for i in b.iter_mut() {
                *i += by;
            }
        }
        for r in &mut self.refused {
            r.index += by;
        }
    }

    /// Plans authorized calls (given in call order).
    ///
    /// Near-linear in the calls: earlier calls are indexed by key ([`KeyIndex`]) and by kind
    /// (exclusive, may read anything, writes, group of `max: 1`), each index keeping the call
    /// with the highest batch, so a call meets only the few earlier calls that bound its batch.
    /// It gets an edge to each of those (one per key and reason), not to every earlier call it
    /// conflicts with: the other orderings follow from these.
    pub fn build(inputs: &[ScheduleInput<'_>]) -> Plan {
        let exclusive: Vec<Option<String>> = inputs.iter().map(exclusive_reason).collect();
        let mut batch_of: Vec<usize> = Vec::with_capacity(inputs.len());
        let mut edges = Vec::new();
        // The earlier calls with the highest batch: any, exclusive, that may read anything,
        // that write something; by key written, by key read or written; by group of `max: 1`.
        let mut any: Option<Latest> = None;
        let mut alone: Option<Latest> = None;
        let mut reader: Option<Latest> = None;
        let mut writer: Option<Latest> = None;
        let mut written = KeyIndex::default();
        let mut touched = KeyIndex::default();
        let mut serial: HashMap<&str, Latest> = HashMap::new();
        let mut groups = GroupRoom::default();
        let mut found: Vec<usize> = Vec::new();
        for (i, call) in inputs.iter().enumerate() {
            found.clear();
            let mut take = |l: Option<Latest>| found.extend(l.map(|(_, j)| j));
            take(alone);
            if exclusive[i].is_some() {
                take(any);
            }
            if !call.footprint.writes.is_empty() {
                take(reader);
            }
            if reads_anything(call) {
                take(writer);
            }
            for k in call.footprint.reads.iter().chain(&call.footprint.writes) {
                take(written.latest(k));
            }
            for k in &call.footprint.writes {
                take(touched.latest(k));
            }
            if let Some(g) = call.group {
                take(serial.get(g.name.as_str()).copied());
            }
            found.sort_unstable();
            found.dedup();
            let mut batch = 0;
            for &j in &found {
                if let Some(reason) = conflict(&inputs[j], call, &exclusive[j], &exclusive[i]) {
                    batch = batch.max(batch_of[j] + 1);
                    edges.push(Edge {
                        before: inputs[j].index,
                        after: call.index,
                        reason,
                    });
                }
            }
            if let Some(group) = call.group {
                if group.max > 1 {
                    // Later batches until the group has room.
                    batch = groups.first_with_room(&group.name, group.max, batch);
                }
                groups.join(&group.name, batch);
            }
            batch_of.push(batch);
            let at = (batch, i);
            raise(&mut any, at);
            if exclusive[i].is_some() {
                raise(&mut alone, at);
            }
            if reads_anything(call) {
                raise(&mut reader, at);
            }
            if !call.footprint.writes.is_empty() {
                raise(&mut writer, at);
            }
            for k in &call.footprint.writes {
                written.insert(k, at);
                touched.insert(k, at);
            }
            for k in &call.footprint.reads {
                touched.insert(k, at);
            }
            if let Some(g) = call.group.filter(|g| g.max <= 1) {
                let slot = serial.entry(g.name.as_str()).or_insert(at);
                *slot = (*slot).max(at);
            }
        }
        let count = batch_of.iter().map(|b| b + 1).max().unwrap_or(0);
        let mut batches = vec![Vec::new(); count];
        for (i, b) in batch_of.iter().enumerate() {
            batches[*b].push(inputs[i].index);
        }
        let calls = inputs
            .iter()
            .zip(batch_of)
            .zip(exclusive)
            .map(|((c, batch), exclusive)| PlannedCall {
                index: c.index,
                call_id: c.call_id.to_owned(),
                tool: c.tool.to_owned(),
                batch,
                reads: c.footprint.reads.clone(),
                writes: c.footprint.writes.clone(),
                group: c.group.map(|g| g.name.clone()),
                exclusive,
            })
            .collect();
        Plan {
            calls,
            edges,
            batches,
            refused: Vec::new(),
        }
    }

    /// The batch a call (by index) runs in.
    pub fn batch_of(&self, index: usize) -> Option<usize> {
        self.calls
            .binary_search_by_key(&index, |c| c.index)
            .ok()
            .map(|k| self.calls[k].batch)
    }
}

/// Why a call must run alone, if it must.
fn exclusive_reason(c: &ScheduleInput<'_>) -> Option<String> {
    exclusive_why(c.effect, c.declares_resources, c.footprint)
}

/// Why a call with this effect, declaration and footprint must run alone, if it must.
pub(crate) fn exclusive_why(
    effect: Effect,
    declares_resources: bool,
    footprint: &Footprint,
) -> Option<String> {
    if let Some(why) = &footprint.unresolved {
        return Some(format!("its resources could not be evaluated ({why})"));
    }
    // A call that may change something and does not say what must be assumed to change
    // anything: it runs alone. (Undeclared reads are treated as reading everything instead, see
    // `clash`.)
    (!effect.is_read_only() && !declares_resources)
        .then(|| format!("{effect} without declared resources"))
}

/// A read-only call that declares no resources may read anything (as [`Side`] says).
fn reads_anything(c: &ScheduleInput<'_>) -> bool {
    c.effect != Effect::Pure && !c.declares_resources
}

/// How many calls of each concurrency group each batch holds.
#[derive(Debug, Default)]
struct GroupRoom<'a> {
    members: HashMap<(&'a str, usize), usize>,
    /// For a group, a cap and a full batch: a later batch to look at next (full batches stay
    /// full, so a call never walks the same full batches again).
    skip: HashMap<(&'a str, u32, usize), usize>,
}

impl<'a> GroupRoom<'a> {
    /// The first batch from `from` on where `group` has fewer than `max` calls.
    fn first_with_room(&mut self, group: &'a str, max: u32, from: usize) -> usize {
        let full = |b: usize| self.members.get(&(group, b)).copied().unwrap_or(0) >= max as usize;
        let mut walked = Vec::new();
        let mut b = from;
        while full(b) {
            walked.push(b);
            b = self.skip.get(&(group, max, b)).copied().unwrap_or(b + 1);
        }
        for w in walked {
            self.skip.insert((group, max, w), b);
        }
        b
    }

    /// Counts a call of `group` in `batch`.
    fn join(&mut self, group: &'a str, batch: usize) {
        *self.members.entry((group, batch)).or_insert(0) += 1;
    }
}

/// What the conflict check knows about one call.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Side<'a> {
    /// Its effect.
    pub(crate) effect: Effect,
    /// Whether its spec declares any resources.
    pub(crate) declares_resources: bool,
    /// Its resources.
    pub(crate) footprint: &'a Footprint,
    /// Its concurrency group.
    pub(crate) group: Option<&'a ConcurrencyGroup>,
    /// Why it runs alone, if it does.
    pub(crate) exclusive: Option<&'a str>,
}

impl Side<'_> {
    /// A read-only call that declares no resources may read anything.
    fn reads_anything(&self) -> bool {
        self.effect != Effect::Pure && !self.declares_resources
    }
}

/// Why two calls may not run at once: the facts, which the plan and the admission table word
/// each in their own terms. `first` means the earlier (or the running) call of the two.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Clash<'a> {
    /// One of them runs alone, for this reason.
    Alone {
        /// Whether it is the first.
        first: bool,
        /// Why.
        why: &'a str,
    },
    /// One may read anything while the other writes.
    ReadsAnything {
        /// Whether the reader is the first.
        reader_first: bool,
    },
    /// One writes what the other reads or writes: the key, or `key / key` when they differ.
    Writes {
        /// Whether the writer is the first.
        writer_first: bool,
        /// The keys.
        key: String,
    },
    /// They share a concurrency group of `max: 1`.
    Group(&'a str),
}

/// Whether (and why) two calls, `a` the earlier, may not run at once.
pub(crate) fn clash<'a>(a: Side<'a>, b: Side<'a>) -> Option<Clash<'a>> {
    if let Some(why) = a.exclusive {
        return Some(Clash::Alone { first: true, why });
    }
    if let Some(why) = b.exclusive {
        return Some(Clash::Alone { first: false, why });
    }
    let touches = |w: &BTreeSet<String>, other: &Footprint| {
        w.iter().find_map(|wk| {
            other
                .reads
                .iter()
                .chain(other.writes.iter())
                .find(|k| overlaps(wk, k))
                .map(|k| {
                    if k == wk {
                        k.clone()
                    } else {
                        format!("{wk} / {k}")
                    }
                })
        })
    };
    if a.reads_anything() && !b.footprint.writes.is_empty() {
        return Some(Clash::ReadsAnything { reader_first: true });
    }
    if b.reads_anything() && !a.footprint.writes.is_empty() {
        return Some(Clash::ReadsAnything {
            reader_first: false,
        });
    }
    if let Some(key) = touches(&a.footprint.writes, b.footprint) {
        return Some(Clash::Writes {
            writer_first: true,
            key,
        });
    }
    if let Some(key) = touches(&b.footprint.writes, a.footprint) {
        return Some(Clash::Writes {
            writer_first: false,
            key,
        });
    }
    match (a.group, b.group) {
        (Some(ga), Some(gb)) if ga.name == gb.name && ga.max <= 1 => Some(Clash::Group(&ga.name)),
        _ => None,
    }
}

/// Why two calls of one plan (a before b) may not run at once, by their numbers.
fn conflict(
    a: &ScheduleInput<'_>,
    b: &ScheduleInput<'_>,
    a_excl: &Option<String>,
    b_excl: &Option<String>,
) -> Option<String> {
    fn side<'a>(c: &ScheduleInput<'a>, excl: &'a Option<String>) -> Side<'a> {
        Side {
            effect: c.effect,
            declares_resources: c.declares_resources,
            footprint: c.footprint,
            group: c.group,
            exclusive: excl.as_deref(),
        }
    }
    let (na, nb) = (a.index + 1, b.index + 1);
    let pick = |first: bool| if first { (na, nb) } else { (nb, na) };
    Some(match clash(side(a, a_excl), side(b, b_excl))? {
        Clash::Alone { first, why } => format!("#{} runs alone: {why}", pick(first).0),
        Clash::ReadsAnything { reader_first } => {
            let (reader, writer) = pick(reader_first);
            format!("#{writer} writes while #{reader} may read anything")
        }
        Clash::Writes { writer_first, key } => format!("#{} writes {key}", pick(writer_first).0),
        Clash::Group(name) => format!("concurrency group {name} (max 1)"),
    })
}

/// Whether two resource keys name overlapping things. `file:`, `dir:` and `tree:` keys are
/// paths: a tree or dir covers everything beneath it. Other kinds match exactly.
pub fn overlaps(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let (Some((ka, pa)), Some((kb, pb))) = (a.split_once(':'), b.split_once(':')) else {
        return false;
    };
    let fs = |k: &str| matches!(k, "file" | "dir" | "tree");
    if !fs(ka) || !fs(kb) {
        return false;
    }
    let covers = |kind: &str, root: &str, p: &str| {
        kind != "file"
            && (root == "."
                || p == root
                || p.strip_prefix(root).is_some_and(|r| r.starts_with('/')))
    };
    pa == pb || covers(ka, pa, pb) || covers(kb, pb, pa)
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.calls.len();
        writeln!(
            f,
            "plan: {n} call{} in {} batch{}",
            if n == 1 { "" } else { "s" },
            self.batches.len(),
            if self.batches.len() == 1 { "" } else { "es" }
        )?;
        for (b, members) in self.batches.iter().enumerate() {
            let items: Vec<String> = members
                .iter()
                // `calls` is in call order: a search, not a scan, per member.
                .filter_map(|i| {
                    self.calls
                        .binary_search_by_key(i, |c| c.index)
                        .ok()
                        .map(|k| &self.calls[k])
                })
                .map(describe)
                .collect();
            let mode = if members.len() > 1 {
                "parallel"
            } else {
                "alone"
            };
            writeln!(f, "  batch {} ({mode}): {}", b + 1, items.join(", "))?;
        }
        for e in &self.edges {
            writeln!(
                f,
                "  order: #{} before #{} ({})",
                e.before + 1,
                e.after + 1,
                e.reason
            )?;
        }
        for r in &self.refused {
            writeln!(
                f,
                "  not scheduled: #{} {} ({})",
                r.index + 1,
                r.tool,
                r.error_type
            )?;
        }
        Ok(())
    }
}

fn describe(c: &PlannedCall) -> String {
    let mut parts = Vec::new();
    if !c.reads.is_empty() {
        parts.push(format!("reads {}", join(&c.reads)));
    }
    if !c.writes.is_empty() {
        parts.push(format!("writes {}", join(&c.writes)));
    }
    if let Some(g) = &c.group {
        parts.push(format!("group {g}"));
    }
    if c.exclusive.is_some() {
        parts.push("exclusive".into());
    }
    if parts.is_empty() {
        format!("#{} {}", c.index + 1, c.tool)
    } else {
        format!("#{} {} [{}]", c.index + 1, c.tool, parts.join("; "))
    }
}

fn join(keys: &BTreeSet<String>) -> String {
    keys.iter().cloned().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(reads: &[&str], writes: &[&str]) -> Footprint {
        Footprint {
            reads: reads.iter().map(|s| (*s).to_owned()).collect(),
            writes: writes.iter().map(|s| (*s).to_owned()).collect(),
            unresolved: None,
        }
    }

    fn input<'a>(
        index: usize,
        tool: &'a str,
        effect: Effect,
        f: &'a Footprint,
    ) -> ScheduleInput<'a> {
        ScheduleInput {
            index,
            call_id: "c",
            tool,
            effect,
            declares_resources: !f.reads.is_empty() || !f.writes.is_empty(),
            footprint: f,
            group: None,
        }
    }

    #[test]
    fn key_overlap() {
        assert!(overlaps("file:a", "file:a"));
        assert!(!overlaps("file:a", "file:b"));
        assert!(overlaps("tree:.", "file:src/a"));
        assert!(overlaps("file:src/a", "tree:src"));
        assert!(!overlaps("file:srcx/a", "tree:src"));
        assert!(!overlaps("git:index", "file:a"));
    }

    #[test]
    fn reads_share_writes_serialize_opaque_runs_alone() {
        let (ra, rb, wa, none) = (
            fp(&["file:a"], &[]),
            fp(&["file:b"], &[]),
            fp(&[], &["file:a"]),
            fp(&[], &[]),
        );
        let plan = Plan::build(&[
            input(0, "read_file", Effect::ReadOnly, &ra),
            input(1, "read_file", Effect::ReadOnly, &rb),
            input(2, "apply_patch", Effect::LocalWrite, &wa),
            input(3, "apply_patch", Effect::LocalWrite, &wa),
            input(4, "send_mail", Effect::ExternalSideEffect, &none),
        ]);
        assert_eq!(plan.batches, vec![vec![0, 1], vec![2], vec![3], vec![4]]);
        // One edge per call to the conflicting call it must follow (#1 → #3 → #4 → #5), not
        // the pairs that follow from those.
        let edges: Vec<(usize, usize)> = plan.edges.iter().map(|e| (e.before, e.after)).collect();
        assert_eq!(edges, vec![(0, 2), (2, 3), (3, 4)]);
        assert_eq!(plan.edges[0].reason, "#3 writes file:a");
    }

    #[test]
    fn groups_cap_parallelism() {
        let f = fp(&["x"], &[]);
        let g = ConcurrencyGroup {
            name: "g".into(),
            max: 2,
        };
        let mut inputs: Vec<ScheduleInput<'_>> = (0..3)
            .map(|i| input(i, "t", Effect::ReadOnly, &f))
            .collect();
        for i in &mut inputs {
            i.group = Some(&g);
        }
        assert_eq!(Plan::build(&inputs).batches, vec![vec![0, 1], vec![2]]);
    }
}
