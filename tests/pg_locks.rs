//! The cross-host resource locks on a real PostgreSQL: two runtimes, each with its own state
//! folder and its own connection pool, stand for two hosts on one workspace. Nothing but the
//! database's advisory locks orders their calls. The tools (`tests/fixtures/pg_locks`) are real
//! processes that write the time they start and end.
#![cfg(feature = "journal-postgres")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::postgres::TestDatabase;
use common::{repo, shim};
use pretty_assertions::assert_eq;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolgate::ir::ErrorType;
use toolgate::runtime::{
    PgLocks, RuntimeBuilder, Session, ToolCall, ToolResult, ToolRuntime, WaitedBehind,
};
use toolgate::spec::load::LoadOptions;

/// A pool of its own on the test database; `name` becomes the sessions' application_name.
fn pool(db: &TestDatabase, name: &str) -> deadpool_postgres::Pool {
    let mut cfg: tokio_postgres::Config = db.url.parse().unwrap();
    cfg.application_name(name);
    let mgr = deadpool_postgres::Manager::new(cfg, tokio_postgres::NoTls);
    deadpool_postgres::Pool::builder(mgr)
        .max_size(16)
        .build()
        .unwrap()
}

/// One host: a runtime on the shared workspace with a state folder and a pool of its own.
fn host(db: &TestDatabase, ws: &Path, name: &str) -> (ToolRuntime, tempfile::TempDir) {
    let state = tempfile::tempdir().unwrap();
    let rt = RuntimeBuilder::from_specs(&LoadOptions {
        paths: vec![repo().join("tests/fixtures/pg_locks")],
        config: Some(repo().join("tests/fixtures/pg_locks/toolgate.yaml")),
        cwd: repo(),
    })
    .unwrap()
    .workspace(ws)
    .state_dir(state.path())
    .shim(shim())
    .postgres_locks(PgLocks::new(pool(db, name), "pg-locks-test"))
    .build()
    .unwrap();
    // No lock file: the database is all the two hosts share.
    assert_eq!(rt.lock_file(), None);
    (rt, state)
}

async fn one(
    rt: &ToolRuntime,
    session: &str,
    call: ToolCall,
    cancel: CancellationToken,
) -> ToolResult {
    let s = Session::new(session, "headless");
    let mut r = rt.execute(vec![call], &s, cancel).await.unwrap();
    r.pop().unwrap()
}

fn call(tool: &str, out: &str, path: &str, seconds: &str) -> ToolCall {
    ToolCall::new(
        out,
        tool,
        json!({"out": out, "path": path, "seconds": seconds}),
    )
}

/// The (start, end, name) of every interval written, by start.
fn intervals(ws: &Path) -> Vec<(u128, u128, String)> {
    let mut out: Vec<(u128, u128, String)> = std::fs::read_dir(ws.join("intervals"))
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let text = std::fs::read_to_string(e.path()).unwrap();
            let (s, t) = text.trim().split_once(' ').unwrap();
            (
                s.parse().unwrap(),
                t.parse().unwrap(),
                e.file_name().to_string_lossy().into_owned(),
            )
        })
        .collect();
    out.sort();
    out
}

/// The most intervals that were open at one moment.
fn max_open(iv: &[(u128, u128, String)]) -> usize {
    iv.iter()
        .map(|(s, _, _)| iv.iter().filter(|(a, b, _)| a <= s && s < b).count())
        .max()
        .unwrap_or(0)
}

/// Advisory locks in the test database: (granted, waiting).
fn advisory(db: &TestDatabase) -> (usize, usize) {
    let out = db
        .psql(
            "SELECT count(*) FILTER (WHERE granted) || ' ' || count(*) FILTER (WHERE NOT granted) \
             FROM pg_locks WHERE locktype = 'advisory' \
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        )
        .unwrap();
    let (g, w) = out.split_once(' ').unwrap();
    (g.parse().unwrap(), w.parse().unwrap())
}

/// Waits (up to 10 s) until the advisory locks (granted, waiting) satisfy `pred`.
async fn until(db: &TestDatabase, what: &str, pred: impl Fn((usize, usize)) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let n = advisory(db);
        if pred(n) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "gave up waiting until {what}: {n:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits until no advisory lock is held or awaited (releases run on a task of their own).
async fn settles(db: &TestDatabase) -> (usize, usize) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let n = advisory(db);
        if n == (0, 0) || Instant::now() > deadline {
            return n;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn waited_for_other_host(rts: &[&ToolRuntime]) -> Vec<WaitedBehind> {
    rts.iter()
        .flat_map(|rt| rt.traces())
        .filter_map(|t| t.wait)
        .flat_map(|w| w.behind)
        .filter(|b| b.other_process)
        .collect()
}

/// Writes of one file from two hosts never overlap, and a call that waited for the other host
/// says what for; when all is done the database holds no lock.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_of_one_resource_from_two_hosts_are_serialized() {
    let Some(db) = common::postgres::database() else {
        return;
    };
    let ws = tempfile::tempdir().unwrap();
    let (a, _sa) = host(&db, ws.path(), "host-a");
    let (b, _sb) = host(&db, ws.path(), "host-b");
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..12 {
        let rt = if i % 2 == 0 { a.clone() } else { b.clone() };
        tasks.spawn(async move {
            let c = call("span", &format!("w{i}"), "shared.txt", "0.03");
            one(&rt, &format!("s{i}"), c, CancellationToken::new()).await
        });
    }
    while let Some(r) = tasks.join_next().await {
        let r = r.unwrap();
        assert!(r.is_success(), "{r:?}");
    }
    let iv = intervals(ws.path());
    assert_eq!(iv.len(), 12);
    assert_eq!(max_open(&iv), 1, "{iv:?}");
    let other = waited_for_other_host(&[&a, &b]);
    assert!(!other.is_empty(), "some call waited for the other host");
    assert!(
        other.iter().all(|w| w.resource == "file:shared.txt"),
        "{other:?}"
    );
    assert_eq!(settles(&db).await, (0, 0));
}

/// Reads of one file from two hosts run at once; a write of another file beside them too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_share_across_hosts() {
    let Some(db) = common::postgres::database() else {
        return;
    };
    let ws = tempfile::tempdir().unwrap();
    let (a, _sa) = host(&db, ws.path(), "host-a");
    let (b, _sb) = host(&db, ws.path(), "host-b");
    // Each holds on until all three have started: they can end only if they ran at once.
    for name in ["ra", "rb", "wc"] {
        std::fs::write(ws.path().join(format!("hold-{name}")), "").unwrap();
    }
    let release = {
        let ws = ws.path().to_path_buf();
        tokio::spawn(async move {
            let started = |n: &str| ws.join(format!("started-{n}")).exists();
            while !["ra", "rb", "wc"].iter().all(|n| started(n)) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            for name in ["ra", "rb", "wc"] {
                std::fs::remove_file(ws.join(format!("hold-{name}"))).unwrap();
            }
        })
    };
    let never = CancellationToken::new;
    let (ra, rb, wc) = tokio::join!(
        one(&a, "s1", call("peek", "ra", "shared.txt", "0.01"), never()),
        one(&b, "s2", call("peek", "rb", "shared.txt", "0.01"), never()),
        one(&b, "s3", call("span", "wc", "other.txt", "0.01"), never()),
    );
    assert!(ra.is_success() && rb.is_success() && wc.is_success());
    release.await.unwrap();
    let iv = intervals(ws.path());
    assert_eq!(max_open(&iv), 3, "{iv:?}");
    assert_eq!(settles(&db).await, (0, 0));
}

/// A concurrency group of `max: 2` holds across hosts: never three at once, two at times.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_max_holds_across_hosts() {
    let Some(db) = common::postgres::database() else {
        return;
    };
    let ws = tempfile::tempdir().unwrap();
    let (a, _sa) = host(&db, ws.path(), "host-a");
    let (b, _sb) = host(&db, ws.path(), "host-b");
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..8 {
        let rt = if i % 2 == 0 { a.clone() } else { b.clone() };
        tasks.spawn(async move {
            let c = call("slot", &format!("g{i}"), "gpu.txt", "0.3");
            one(&rt, &format!("s{i}"), c, CancellationToken::new()).await
        });
    }
    while let Some(r) = tasks.join_next().await {
        assert!(r.unwrap().is_success());
    }
    let iv = intervals(ws.path());
    assert_eq!(iv.len(), 8);
    assert_eq!(max_open(&iv), 2, "{iv:?}");
    assert_eq!(settles(&db).await, (0, 0));
}

/// A call cancelled while it waits for the other host's lock does not run and leaves nothing
/// behind: no lock granted after it gave up stays held, and the next call gets the resource as
/// soon as the holder is done.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_wait_leaks_nothing() {
    let Some(db) = common::postgres::database() else {
        return;
    };
    let ws = tempfile::tempdir().unwrap();
    let (a, _sa) = host(&db, ws.path(), "host-a");
    let (b, _sb) = host(&db, ws.path(), "host-b");
    // The first call holds x.txt until its hold file goes.
    std::fs::write(ws.path().join("hold-first"), "").unwrap();
    let holder = {
        let a = a.clone();
        tokio::spawn(async move {
            one(
                &a,
                "s1",
                call("span", "first", "x.txt", "0.01"),
                CancellationToken::new(),
            )
            .await
        })
    };
    until(&db, "the first call holds its locks", |(g, _)| g > 0).await;
    let cancel = CancellationToken::new();
    let waiter = {
        let (b, cancel) = (b.clone(), cancel.clone());
        tokio::spawn(async move {
            one(&b, "s2", call("span", "cancelled", "x.txt", "0.01"), cancel).await
        })
    };
    // It waits in the database: a lock not granted.
    until(&db, "the second call waits", |(_, w)| w == 1).await;
    assert!(!holder.is_finished());
    cancel.cancel();
    let r = waiter.await.unwrap();
    assert_eq!(r.error_type(), Some(ErrorType::Cancelled), "{r:?}");
    std::fs::remove_file(ws.path().join("hold-first")).unwrap();
    assert!(holder.await.unwrap().is_success());
    // Nothing is held or awaited any more: no lock was granted to the cancelled wait and kept.
    assert_eq!(settles(&db).await, (0, 0));
    // The resource is free for either host.
    let next = one(
        &b,
        "s3",
        call("span", "next", "x.txt", "0.01"),
        CancellationToken::new(),
    )
    .await;
    assert!(next.is_success());
    let names: Vec<String> = intervals(ws.path()).into_iter().map(|i| i.2).collect();
    assert_eq!(names, ["first", "next"]);
    assert_eq!(settles(&db).await, (0, 0));
}

/// A host whose connections drop — killed by the server here, as a dead host's are closed —
/// releases its locks: the other host's waiting call runs while the first one's call still
/// runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_connection_releases_its_locks() {
    let Some(db) = common::postgres::database() else {
        return;
    };
    let ws = tempfile::tempdir().unwrap();
    let (a, _sa) = host(&db, ws.path(), "host-a");
    let (b, _sb) = host(&db, ws.path(), "host-b");
    // The first call holds x.txt until its hold file goes (after the survivor has run).
    std::fs::write(ws.path().join("hold-dying"), "").unwrap();
    let long = {
        let a = a.clone();
        tokio::spawn(async move {
            one(
                &a,
                "s1",
                call("span", "dying", "x.txt", "0.01"),
                CancellationToken::new(),
            )
            .await
        })
    };
    until(&db, "the first call holds its locks", |(g, _)| g > 0).await;
    let waiter = {
        let b = b.clone();
        tokio::spawn(async move {
            one(
                &b,
                "s2",
                call("span", "survivor", "x.txt", "0.01"),
                CancellationToken::new(),
            )
            .await
        })
    };
    until(&db, "the survivor waits for the lock", |(_, w)| w == 1).await;
    assert!(!waiter.is_finished());
    let killed = db
        .psql(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE application_name = 'host-a'",
        )
        .unwrap();
    assert!(killed.parse::<u32>().unwrap() >= 1, "{killed}");
    let r = waiter.await.unwrap();
    assert!(r.is_success(), "{r:?}");
    std::fs::remove_file(ws.path().join("hold-dying")).unwrap();
    let _ = long.await.unwrap();
    // The survivor ran while the first call still did: released with the session, not when
    // the call ended.
    let iv = intervals(ws.path());
    let of = |name: &str| iv.iter().find(|i| i.2 == name).cloned().unwrap();
    let (dying, survivor) = (of("dying"), of("survivor"));
    assert!(survivor.0 < dying.1, "{iv:?}");
    assert_eq!(settles(&db).await, (0, 0));
}
