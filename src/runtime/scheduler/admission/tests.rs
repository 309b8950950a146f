#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use pretty_assertions::assert_eq;
use tokio::sync::mpsc;

use super::*;

fn claim(effect: Effect, reads: &[&str], writes: &[&str]) -> ResourceClaim {
    let footprint = Footprint {
        reads: reads.iter().map(|s| (*s).to_owned()).collect(),
        writes: writes.iter().map(|s| (*s).to_owned()).collect(),
        unresolved: None,
    };
    let declares = !reads.is_empty() || !writes.is_empty();
    ResourceClaim::new(effect, declares, footprint, None).unwrap()
}

fn in_group(mut c: ResourceClaim, name: &str, max: u32) -> ResourceClaim {
    c.group = Some(ConcurrencyGroup {
        name: name.into(),
        max,
    });
    c
}

fn holder(id: &str) -> Holder {
    Holder {
        session_id: "s".into(),
        call_id: id.into(),
        tool: "t".into(),
    }
}

fn behind(id: &str, resource: &str) -> WaitedBehind {
    WaitedBehind::call(&holder(id), resource.into())
}

/// A call that holds its admission until told to let go; its name goes to `order` when it is
/// admitted.
struct Held {
    release: oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Result<Option<Wait>, String>>,
}

fn hold(
    table: &Arc<AdmissionTable>,
    id: &'static str,
    c: ResourceClaim,
    cancel: CancellationToken,
    order: &mpsc::UnboundedSender<&'static str>,
) -> Held {
    let (release, released) = oneshot::channel::<()>();
    let (table, order) = (table.clone(), order.clone());
    let task = tokio::spawn(async move {
        match table.admit(holder(id), c, &cancel).await {
            Ok(a) => {
                order.send(id).unwrap();
                let _ = released.await;
                Ok(a.wait.clone())
            }
            Err(NotAdmitted::Cancelled(w)) => Err(format!("cancelled: {:?}", w.behind)),
            Err(NotAdmitted::Locks { error, .. }) => Err(error.to_string()),
        }
    });
    Held { release, task }
}

/// Lets the spawned tasks run until they block.
async fn settle() {
    for _ in 0..20 {
        tokio::task::yield_now().await;
    }
    tokio::time::sleep(Duration::from_millis(20)).await;
}

fn drain(rx: &mut mpsc::UnboundedReceiver<&'static str>) -> Vec<&'static str> {
    let mut out = Vec::new();
    while let Ok(x) = rx.try_recv() {
        out.push(x);
    }
    out
}

#[tokio::test]
async fn conflicting_calls_wait_in_arrival_order_and_independent_ones_pass() {
    let t = Arc::new(AdmissionTable::new(None));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let none = CancellationToken::new();
    let a = hold(
        &t,
        "a",
        claim(Effect::LocalWrite, &[], &["file:a"]),
        none.clone(),
        &tx,
    );
    settle().await;
    let b = hold(
        &t,
        "b",
        claim(Effect::LocalWrite, &[], &["file:a"]),
        none.clone(),
        &tx,
    );
    settle().await;
    // A read of `a` conflicts with the running writer and with the waiting one: it waits
    // behind both, and never overtakes `b`.
    let c = hold(
        &t,
        "c",
        claim(Effect::ReadOnly, &["file:a"], &[]),
        none.clone(),
        &tx,
    );
    settle().await;
    // A write of `b` conflicts with nothing: it runs at once, past the waiters.
    let d = hold(
        &t,
        "d",
        claim(Effect::LocalWrite, &[], &["file:b"]),
        none.clone(),
        &tx,
    );
    settle().await;
    assert_eq!(drain(&mut rx), ["a", "d"]);
    assert_eq!(t.counts(), (2, 2));
    a.release.send(()).unwrap();
    settle().await;
    assert_eq!(drain(&mut rx), ["b"]);
    d.release.send(()).unwrap();
    b.release.send(()).unwrap();
    settle().await;
    assert_eq!(drain(&mut rx), ["c"]);
    c.release.send(()).unwrap();
    assert_eq!(a.task.await.unwrap().unwrap(), None);
    assert_eq!(d.task.await.unwrap().unwrap(), None);
    let wb = b.task.await.unwrap().unwrap().unwrap();
    assert_eq!(wb.behind, vec![behind("a", "file:a")]);
    assert!(wb.queued_us >= 20_000, "{wb:?}");
    let wc = c.task.await.unwrap().unwrap().unwrap();
    assert_eq!(
        wc.behind,
        vec![behind("a", "file:a"), behind("b", "file:a")]
    );
    assert_eq!(t.counts(), (0, 0));
}

#[tokio::test]
async fn a_cancelled_or_dropped_waiter_leaves_the_queue() {
    let t = Arc::new(AdmissionTable::new(None));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let none = CancellationToken::new();
    let a = hold(
        &t,
        "a",
        claim(Effect::LocalWrite, &[], &["file:a"]),
        none.clone(),
        &tx,
    );
    settle().await;
    let cancel_b = CancellationToken::new();
    let b = hold(
        &t,
        "b",
        claim(Effect::LocalWrite, &[], &["tree:."]),
        cancel_b.clone(),
        &tx,
    );
    let c = hold(
        &t,
        "c",
        claim(Effect::LocalWrite, &[], &["file:a"]),
        none.clone(),
        &tx,
    );
    settle().await;
    // `e` conflicts only with the waiting `b` (`tree:.` covers `file:x`): it waits behind it.
    let e = hold(
        &t,
        "e",
        claim(Effect::ReadOnly, &["file:x"], &[]),
        none.clone(),
        &tx,
    );
    settle().await;
    assert_eq!(drain(&mut rx), ["a"]);
    assert_eq!(t.counts(), (1, 3));
    cancel_b.cancel();
    settle().await;
    // With `b` gone, `e` conflicts with nothing; `c` still waits for `a`.
    assert_eq!(drain(&mut rx), ["e"]);
    assert_eq!(
        b.task.await.unwrap().unwrap_err(),
        format!("cancelled: {:?}", vec![behind("a", "file:a / tree:.")])
    );
    // Dropping a waiter's future (its task aborted) removes it as well.
    c.task.abort();
    let _ = c.task.await;
    assert_eq!(t.counts(), (2, 0));
    a.release.send(()).unwrap();
    e.release.send(()).unwrap();
    a.task.await.unwrap().unwrap();
    let we = e.task.await.unwrap().unwrap().unwrap();
    assert_eq!(
        we.behind,
        vec![behind("b", "tree:. / file:x")],
        "it waited behind the tree write only"
    );
    assert_eq!(t.counts(), (0, 0));
}

#[tokio::test]
async fn groups_cap_parallelism_and_alone_means_alone() {
    let t = Arc::new(AdmissionTable::new(None));
    let (tx, mut rx) = mpsc::unbounded_channel();
    let none = CancellationToken::new();
    let g = |r: &str| in_group(claim(Effect::ReadOnly, &[r], &[]), "gpu", 2);
    let a = hold(&t, "a", g("file:1"), none.clone(), &tx);
    let b = hold(&t, "b", g("file:2"), none.clone(), &tx);
    settle().await;
    let c = hold(&t, "c", g("file:3"), none.clone(), &tx);
    settle().await;
    assert_eq!(drain(&mut rx), ["a", "b"]);
    // A pure call outside any group never enters; a pure call in a group of max 1 conflicts
    // only with that group.
    let pure = |g: Option<&str>| {
        ResourceClaim::new(
            Effect::Pure,
            false,
            Footprint::default(),
            g.map(|n| ConcurrencyGroup {
                name: n.into(),
                max: 1,
            }),
        )
    };
    assert!(pure(None).is_none());
    let p = hold(&t, "p", pure(Some("solo")).unwrap(), none.clone(), &tx);
    settle().await;
    assert_eq!(drain(&mut rx), ["p"]);
    // An effect without declared resources runs alone: it waits for every call but the pure
    // one, and every later call waits for it.
    let x = hold(
        &t,
        "x",
        claim(Effect::ExternalSideEffect, &[], &[]),
        none.clone(),
        &tx,
    );
    settle().await;
    let y = hold(
        &t,
        "y",
        claim(Effect::ReadOnly, &["file:9"], &[]),
        none.clone(),
        &tx,
    );
    settle().await;
    assert_eq!(drain(&mut rx), Vec::<&str>::new());
    a.release.send(()).unwrap();
    settle().await;
    assert_eq!(drain(&mut rx), ["c"]);
    b.release.send(()).unwrap();
    c.release.send(()).unwrap();
    settle().await;
    assert_eq!(drain(&mut rx), ["x"]);
    x.release.send(()).unwrap();
    settle().await;
    assert_eq!(drain(&mut rx), ["y"]);
    y.release.send(()).unwrap();
    p.release.send(()).unwrap();
    let wc = c.task.await.unwrap().unwrap().unwrap();
    let group = "concurrency group gpu (max 2)";
    assert_eq!(wc.behind, vec![behind("a", group), behind("b", group)]);
    let wx = x.task.await.unwrap().unwrap().unwrap();
    let alone =
        "everything: this call runs alone (external_side_effect without declared resources)";
    assert_eq!(
        wx.behind,
        vec![behind("a", alone), behind("b", alone), behind("c", alone)]
    );
    let wy = y.task.await.unwrap().unwrap().unwrap();
    assert_eq!(
        wy.behind,
        vec![behind(
            "x",
            "everything: it runs alone (external_side_effect without declared resources)"
        )]
    );
    assert_eq!(t.counts(), (0, 0));
}

/// Many calls with random footprints, some cancelled: all finish (no deadlock), and no two that
/// conflict ever run at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn random_calls_never_deadlock_or_overlap() {
    let t = Arc::new(AdmissionTable::new(None));
    let running: Arc<Mutex<Vec<(u64, ResourceClaim)>>> = Arc::default();
    let keys = [
        "file:a",
        "file:b",
        "file:src/x",
        "tree:src",
        "tree:.",
        "git:index",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..300u64 {
        let pick = |next: &mut dyn FnMut(u64) -> u64| -> Vec<&str> {
            (0..next(3))
                .map(|_| keys[usize::try_from(next(keys.len() as u64)).unwrap()])
                .collect()
        };
        let reads = pick(&mut next);
        let writes = pick(&mut next);
        let effect = match next(10) {
            0 => Effect::ProcessExecution,
            1..=4 => Effect::ReadOnly,
            _ => Effect::LocalWrite,
        };
        let mut c = match effect {
            Effect::ReadOnly => claim(effect, &reads, &[]),
            _ => claim(effect, &reads, &writes),
        };
        if next(4) == 0 {
            c = in_group(c, "g", 1 + u32::try_from(next(2)).unwrap());
        }
        let cancel = CancellationToken::new();
        if next(8) == 0 {
            let cancel = cancel.clone();
            let after = Duration::from_micros(next(3000));
            tokio::spawn(async move {
                tokio::time::sleep(after).await;
                cancel.cancel();
            });
        }
        let hold_for = Duration::from_micros(next(500));
        let (t, running) = (t.clone(), running.clone());
        tasks.spawn(async move {
            let Ok(_admitted) = t.admit(holder("r"), c.clone(), &cancel).await else {
                return;
            };
            {
                let mut r = running.lock().unwrap();
                for (j, other) in r.iter() {
                    assert!(shared(other, &c).is_none(), "#{i} runs beside #{j}");
                }
                if let Some((g, max)) = c.group_limit() {
                    let members: Vec<usize> = r
                        .iter()
                        .filter_map(|(_, o)| o.group_limit().filter(|(og, _)| *og == g))
                        .map(|(_, m)| m)
                        .collect();
                    let max = members.iter().copied().fold(max, usize::min);
                    assert!(members.len() < max, "#{i}: group {g} over {max}");
                }
                r.push((i, c.clone()));
            }
            tokio::time::sleep(hold_for).await;
            running.lock().unwrap().retain(|(j, _)| *j != i);
        });
    }
    tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(r) = tasks.join_next().await {
            r.unwrap();
        }
    })
    .await
    .expect("every call finished");
    assert_eq!(t.counts(), (0, 0));
}
