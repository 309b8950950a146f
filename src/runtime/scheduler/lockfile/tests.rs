//! Two [`ProjectLocks`] on one file stand for two processes: open file description locks of
//! two descriptions conflict as those of two processes do.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::time::Duration;

use pretty_assertions::assert_eq;

use super::*;
use crate::ir::{ConcurrencyGroup, Effect};
use crate::runtime::scheduler::Footprint;

fn claim(effect: Effect, reads: &[&str], writes: &[&str]) -> ResourceClaim {
    let footprint = Footprint {
        reads: reads.iter().map(|s| (*s).to_owned()).collect(),
        writes: writes.iter().map(|s| (*s).to_owned()).collect(),
        unresolved: None,
    };
    let declares = !reads.is_empty() || !writes.is_empty();
    ResourceClaim::new(effect, declares, footprint, None).unwrap()
}

fn grouped(max: u32) -> ResourceClaim {
    let mut c = claim(Effect::ReadOnly, &["svc:gpu"], &[]);
    c.group = Some(ConcurrencyGroup {
        name: "gpu".into(),
        max,
    });
    c
}

struct Pair {
    _dir: tempfile::TempDir,
    a: ProjectLocks,
    b: ProjectLocks,
}

fn pair() -> Pair {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state").join(LOCK_FILE);
    let a = ProjectLocks::open(&path).unwrap();
    let b = ProjectLocks::open(&path).unwrap();
    Pair { _dir: dir, a, b }
}

async fn now(l: &ProjectLocks, c: &ResourceClaim) -> Acquired {
    let r = tokio::time::timeout(
        Duration::from_secs(5),
        l.acquire(c, &CancellationToken::new()),
    )
    .await
    .expect("not blocked");
    match r {
        Ok(a) => a,
        Err(e) => panic!("{e:?}"),
    }
}

/// Whether acquiring blocks (for 100 ms), leaving nothing behind when it does.
async fn blocks(l: &ProjectLocks, c: &ResourceClaim) -> bool {
    let cancel = CancellationToken::new();
    match tokio::time::timeout(Duration::from_millis(100), l.acquire(c, &cancel)).await {
        Ok(r) => {
            r.unwrap();
            false
        }
        Err(_) => true,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writers_exclude_and_readers_share_across_lock_files() {
    let p = pair();
    let write_a = claim(Effect::LocalWrite, &[], &["file:a"]);
    let read_a = claim(Effect::ReadOnly, &["file:a"], &[]);
    let held = now(&p.a, &write_a).await;
    assert!(held.waited.is_empty());
    assert!(blocks(&p.b, &write_a).await);
    assert!(blocks(&p.b, &read_a).await);
    assert!(!blocks(&p.b, &claim(Effect::LocalWrite, &[], &["file:b"])).await);
    // The waiter gets the lock when the holder lets go, and says what it waited for.
    let waiter = {
        let c = write_a.clone();
        let b = p.b;
        tokio::spawn(async move {
            let r = b.acquire(&c, &CancellationToken::new()).await;
            r.map(|a| a.waited).map_err(|e| format!("{e:?}"))
        })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!waiter.is_finished());
    drop(held);
    let waited = tokio::time::timeout(Duration::from_secs(5), waiter)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(waited, vec![WaitedBehind::lock("file:a".into())]);
    // Two readers share.
    let r1 = now(&p.a, &read_a).await;
    let r2 = now(&p.a, &read_a).await;
    drop((r1, r2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trees_cover_their_files_and_alone_excludes_everything() {
    let p = pair();
    let tree = now(&p.a, &claim(Effect::LocalWrite, &[], &["tree:src"])).await;
    assert!(blocks(&p.b, &claim(Effect::ReadOnly, &["file:src/x.rs"], &[])).await);
    assert!(blocks(&p.b, &claim(Effect::ReadOnly, &["tree:."], &[])).await);
    assert!(!blocks(&p.b, &claim(Effect::ReadOnly, &["file:srcx/x.rs"], &[])).await);
    // A read without declared resources may read anything: it waits for any writer.
    assert!(blocks(&p.b, &claim(Effect::ReadOnly, &[], &[])).await);
    drop(tree);
    let alone = now(&p.a, &claim(Effect::ProcessExecution, &[], &[])).await;
    assert!(blocks(&p.b, &claim(Effect::ReadOnly, &["file:z"], &[])).await);
    // A pure call outside any group takes no lock at all.
    assert!(ResourceClaim::new(Effect::Pure, false, Footprint::default(), None).is_none());
    drop(alone);
    assert!(!blocks(&p.b, &claim(Effect::ReadOnly, &["file:z"], &[])).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_has_max_slots_across_lock_files() {
    let p = pair();
    let one = now(&p.a, &grouped(2)).await;
    let two = now(&p.b, &grouped(2)).await;
    assert!(blocks(&p.a, &grouped(2)).await);
    assert!(blocks(&p.b, &grouped(2)).await);
    drop(one);
    let three = now(&p.b, &grouped(2)).await;
    drop((two, three));
    let solo = now(&p.a, &grouped(1)).await;
    assert!(blocks(&p.b, &grouped(1)).await);
    drop(solo);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_waiter_holds_nothing() {
    let p = pair();
    let write = claim(Effect::LocalWrite, &[], &["git:index"]);
    let held = now(&p.a, &write).await;
    let cancel = CancellationToken::new();
    let waiting = p.b.acquire(&write, &cancel);
    let stop = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        cancel.cancel();
    };
    let (r, ()) = tokio::join!(waiting, stop);
    match r {
        Err(NotAcquired::Cancelled(w)) => {
            assert_eq!(w, vec![WaitedBehind::lock("git:index".into())]);
        }
        other => panic!("{other:?}"),
    }
    drop(held);
    // The cancelled waiter's thread takes the lock when it is free and lets go at once.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let again = now(&p.b, &write).await;
    assert!(again.waited.is_empty());
}
