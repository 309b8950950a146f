//! [`Plan::build`] against the pairwise planner it replaced (kept here as the reference): the
//! same batches for any calls, and edges that are real conflicts explaining each batch.

use std::collections::BTreeSet;

use proptest::prelude::*;

use super::{Edge, Footprint, Plan, ScheduleInput, conflict, exclusive_reason};
use crate::ir::{ConcurrencyGroup, Effect};

/// The batches (per call) and edges of the pairwise planner: every earlier call checked.
fn pairwise(inputs: &[ScheduleInput<'_>]) -> (Vec<usize>, Vec<Edge>) {
    let exclusive: Vec<Option<String>> = inputs.iter().map(exclusive_reason).collect();
    let mut batch_of: Vec<usize> = Vec::with_capacity(inputs.len());
    let mut edges = Vec::new();
    for (i, call) in inputs.iter().enumerate() {
        let mut batch = 0;
        for j in 0..i {
            if let Some(reason) = conflict(&inputs[j], call, &exclusive[j], &exclusive[i]) {
                batch = batch.max(batch_of[j] + 1);
                edges.push(Edge {
                    before: inputs[j].index,
                    after: call.index,
                    reason,
                });
            }
        }
        if let Some(group) = call.group.filter(|g| g.max > 1) {
            while (0..i)
                .filter(|&j| {
                    batch_of[j] == batch && inputs[j].group.is_some_and(|g| g.name == group.name)
                })
                .count()
                >= group.max as usize
            {
                batch += 1;
            }
        }
        batch_of.push(batch);
    }
    (batch_of, edges)
}

const KEYS: &[&str] = &[
    "file:a",
    "file:a/b",
    "file:a/b/c",
    "file:b",
    "file:ab",
    "dir:a",
    "dir:a/b",
    "tree:a",
    "tree:.",
    "tree:b",
    "file:.",
    "tree:",
    "file:/x",
    "tree:a/",
    "git:index",
    "git:a",
    "plain",
];

const EFFECTS: &[Effect] = &[
    Effect::Pure,
    Effect::ReadOnly,
    Effect::LocalWrite,
    Effect::NetworkRead,
    Effect::ExternalSideEffect,
];

/// One generated call: effect, declares resources, reads, writes, unresolved, group.
type Call = (usize, bool, Vec<usize>, Vec<usize>, bool, usize);

fn call() -> impl Strategy<Value = Call> {
    (
        0..EFFECTS.len(),
        prop::bool::weighted(0.8),
        prop::collection::vec(0..KEYS.len(), 0..3),
        prop::collection::vec(0..KEYS.len(), 0..3),
        prop::bool::weighted(0.05),
        0..5usize,
    )
}

fn groups() -> Vec<ConcurrencyGroup> {
    [("g", 1), ("g", 2), ("h", 3), ("h", 2)]
        .iter()
        .map(|(n, max)| ConcurrencyGroup {
            name: (*n).to_owned(),
            max: *max,
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The indexed planner gives every call the pairwise planner's batch; each of its edges
    /// is one of the pairwise edges, and each call's batch is one past its edges' latest
    /// (or its group's first batch with room).
    #[test]
    fn same_batches_as_the_pairwise_planner(calls in prop::collection::vec(call(), 0..40)) {
        let groups = groups();
        let footprints: Vec<Footprint> = calls
            .iter()
            .map(|(_, _, r, w, unresolved, _)| Footprint {
                reads: r.iter().map(|&k| KEYS[k].to_owned()).collect(),
                writes: w.iter().map(|&k| KEYS[k].to_owned()).collect(),
                unresolved: unresolved.then(|| "no".to_owned()),
            })
            .collect();
        let inputs: Vec<ScheduleInput<'_>> = calls
            .iter()
            .zip(&footprints)
            .enumerate()
            .map(|(i, ((effect, declares, r, w, _, group), footprint))| ScheduleInput {
                index: i,
                call_id: "c",
                tool: "t",
                effect: EFFECTS[*effect],
                declares_resources: *declares || !r.is_empty() || !w.is_empty(),
                footprint,
                group: groups.get(*group),
            })
            .collect();
        let plan = Plan::build(&inputs);
        let (batches, pairwise_edges) = pairwise(&inputs);
        let got: Vec<usize> = plan.calls.iter().map(|c| c.batch).collect();
        prop_assert_eq!(&got, &batches);
        let all: BTreeSet<(usize, usize, &str)> = pairwise_edges
            .iter()
            .map(|e| (e.before, e.after, e.reason.as_str()))
            .collect();
        for e in &plan.edges {
            prop_assert!(all.contains(&(e.before, e.after, e.reason.as_str())), "{e:?}");
        }
        for (i, input) in inputs.iter().enumerate() {
            let bound = plan
                .edges
                .iter()
                .filter(|e| e.after == i)
                .map(|e| batches[e.before] + 1)
                .max()
                .unwrap_or(0);
            let grouped = input.group.is_some_and(|g| g.max > 1);
            prop_assert!(bound == batches[i] || (grouped && bound < batches[i]), "call {i}");
        }
        // Edges in call order, as before.
        let order: Vec<(usize, usize)> = plan.edges.iter().map(|e| (e.after, e.before)).collect();
        let mut sorted = order.clone();
        sorted.sort_unstable();
        prop_assert_eq!(order, sorted);
    }
}
