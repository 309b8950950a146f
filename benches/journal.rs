//! Journal benchmarks: what durability costs a call, in one run against the same calls with the
//! in-memory journal (no disk).
//!
//! - `per_call/{memory,sqlite}/slow_edit`: one side-effecting call at a time (a `local_write`
//!   handler that returns at once). With SQLite its start is committed with `synchronous=FULL`
//!   before the body runs, its finish committed (without a flush of its own) before the result
//!   is returned: one flush per call.
//! - `per_call/{memory,sqlite}/slow_read`: a read-only call (no sleep); SQLite records it
//!   without waiting, the in-memory journal not at all.
//! - `per_call/{memory,sqlite}/echo_handler`: a pure call; no journal records it.
//! - `sixteen_concurrent/{memory,sqlite}`: a turn of sixteen independent `slow_edit` calls (one
//!   batch, each call on its own task): the writer groups their starts, then their finishes,
//!   into shared commits. Divide by 16 for the cost per call.
//! - `per_call/postgres/…` and `sixteen_concurrent/postgres`: the same calls with the PostgreSQL
//!   journal (a claim transaction with its advisory locks and lease renewal, then the finish;
//!   reads and the audit queued). The server is `TOOLGATE_BENCH_POSTGRES` (the URL of a database
//!   the bench may fill), else a private cluster started as the tests start one
//!   (tests/common/postgres.rs) with a database of its own; without either, the rows are
//!   skipped with a line saying so.
//! - `device/commit`: one bare SQLite commit (WAL, `synchronous=FULL`, one small row) in the same
//!   folder — what the disk charges for a flush while the bench runs, to read the rest against.
//!
//! Run with `cargo bench --bench journal`; the medians are in criterion's output and in
//! `target/criterion/*/*/new/estimates.json`. At the end the bench prints how many records the
//! SQLite writer put in each commit.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolgate::ir::Status;
use toolgate::runtime::extend::{HandlerContext, HandlerOutput, Journal};
use toolgate::runtime::{JOURNAL_FILE, PostgresJournal, SqliteJournal};
use toolgate::runtime::{MemoryJournal, RuntimeBuilder, Session, ToolCall, ToolRuntime};
use toolgate::spec::load::LoadOptions;

#[path = "../tests/common/postgres.rs"]
#[allow(dead_code)]
mod postgres;

/// Stands in for tests/common/toolchain.rs, which tests/common/postgres.rs names (the bench
/// only uses its server).
mod toolchain {
    pub enum Toolchain {
        Postgres,
    }
    pub fn require(_: &[Toolchain]) -> bool {
        true
    }
}

/// The environment variable naming the bench's PostgreSQL database.
const BENCH_POSTGRES: &str = "TOOLGATE_BENCH_POSTGRES";

/// A database for the PostgreSQL rows (kept alive while they run), or why there is none.
fn postgres_database() -> Result<(String, Option<postgres::TestDatabase>), String> {
    if let Ok(url) = std::env::var(BENCH_POSTGRES) {
        return Ok((url, None));
    }
    postgres::probe()?;
    postgres::server()?;
    let db = postgres::database().ok_or("no database")?;
    Ok((db.url.clone(), Some(db)))
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn runtime(ws: &Path, state: &Path, journal: Arc<dyn Journal>) -> ToolRuntime {
    let nothing = |_ctx: HandlerContext, _args: Value| async move { Ok(HandlerOutput::text("")) };
    let echo = |_ctx: HandlerContext, args: Value| async move {
        Ok(HandlerOutput::text(
            args["text"].as_str().unwrap_or("").to_owned(),
        ))
    };
    RuntimeBuilder::from_specs(&LoadOptions {
        paths: vec![
            repo().join("tool-specs"),
            repo().join("tests/fixtures/runtime"),
        ],
        config: Some(repo().join("tests/fixtures/runtime/toolgate.yaml")),
        cwd: repo(),
    })
    .unwrap()
    .workspace(ws)
    .state_dir(state)
    .journal(journal)
    .bind("echo_handler", Arc::new(echo))
    .bind("slow_edit", Arc::new(nothing))
    .bind("slow_read", Arc::new(nothing))
    .bind("flaky", Arc::new(nothing))
    .bind("send_note", Arc::new(nothing))
    .build()
    .unwrap()
}

/// A journal of each kind, with a runtime over it.
struct Setup {
    _ws: tempfile::TempDir,
    _state: tempfile::TempDir,
    name: &'static str,
    rt: ToolRuntime,
    sqlite: Option<Arc<SqliteJournal>>,
    _db: Option<postgres::TestDatabase>,
}

fn setups() -> Vec<Setup> {
    let mut out = Vec::new();
    let pg = match postgres_database() {
        Ok(db) => Some(db),
        Err(why) => {
            println!(
                "per_call/postgres and sixteen_concurrent/postgres skipped: no PostgreSQL ({why}); set {BENCH_POSTGRES} to a database URL"
            );
            None
        }
    };
    let mut pg_db = None;
    for name in ["memory", "sqlite", "postgres"] {
        let ws = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let (journal, sqlite): (Arc<dyn Journal>, _) = match name {
            "memory" => (Arc::new(MemoryJournal::default()), None),
            "postgres" => {
                let Some((url, db)) = &pg else { continue };
                pg_db = db.as_ref().map(|d| d.name.clone());
                (Arc::new(PostgresJournal::open(url).unwrap()), None)
            }
            _ => {
                let j = Arc::new(SqliteJournal::open(state.path().join(JOURNAL_FILE)).unwrap());
                (j.clone(), Some(j))
            }
        };
        let rt = runtime(ws.path(), state.path(), journal);
        out.push(Setup {
            _ws: ws,
            _state: state,
            name,
            rt,
            sqlite,
            _db: None,
        });
    }
    // The database outlives the runtimes (dropped with the last setup).
    if pg_db.is_some()
        && let Some(last) = out.last_mut()
    {
        last._db = pg.and_then(|(_, db)| db);
    }
    out
}

/// Call ids never repeat (a repeated id would be replayed, not run).
static NEXT: AtomicU64 = AtomicU64::new(0);

fn next_id() -> String {
    format!("c{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

fn edit(i: usize) -> ToolCall {
    ToolCall::new(
        next_id(),
        "slow_edit",
        json!({"path": format!("f{i}.txt"), "ms": 0}),
    )
}

/// A bare commit on the same file system: the device's price of one flush.
fn device(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let conn = rusqlite::Connection::open(dir.path().join("raw.db")).unwrap();
    conn.pragma_update_and_check(None, "journal_mode", "WAL", |_| Ok(()))
        .unwrap();
    conn.pragma_update(None, "synchronous", "FULL").unwrap();
    conn.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        .unwrap();
    let body = "x".repeat(200);
    let mut g = c.benchmark_group("device");
    g.sample_size(50).measurement_time(Duration::from_secs(5));
    g.bench_function("commit", |b| {
        b.iter(|| {
            conn.execute("INSERT INTO t (body) VALUES (?1)", [&body])
                .unwrap()
        })
    });
    g.finish();
}

fn bench(c: &mut Criterion) {
    let setups = setups();
    let tokio_rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let session = Session::new("bench", "interactive");

    let mut g = c.benchmark_group("per_call");
    g.sample_size(50).measurement_time(Duration::from_secs(5));
    for s in &setups {
        for tool in ["slow_edit", "slow_read", "echo_handler"] {
            g.bench_function(format!("{}/{tool}", s.name), |b| {
                b.iter_custom(|iters| {
                    tokio_rt.block_on(async {
                        let start = Instant::now();
                        for _ in 0..iters {
                            let call = match tool {
                                "slow_edit" => edit(0),
                                "slow_read" => ToolCall::new(
                                    next_id(),
                                    tool,
                                    json!({"path": "notes.txt", "ms": 0}),
                                ),
                                _ => ToolCall::new(next_id(), tool, json!({"text": "hello"})),
                            };
                            let r =
                                s.rt.execute(vec![call], &session, CancellationToken::new())
                                    .await
                                    .unwrap();
                            assert_eq!(r[0].status(), Status::Success);
                            black_box(r);
                        }
                        start.elapsed()
                    })
                });
            });
        }
    }
    g.finish();

    let mut g = c.benchmark_group("sixteen_concurrent");
    g.sample_size(50).measurement_time(Duration::from_secs(5));
    for s in &setups {
        let before = s.sqlite.as_ref().map(|j| j.commit_stats());
        g.bench_function(s.name, |b| {
            b.iter_custom(|iters| {
                tokio_rt.block_on(async {
                    let start = Instant::now();
                    for _ in 0..iters {
                        let calls = (0..16).map(edit).collect();
                        let r =
                            s.rt.run(calls, &session, CancellationToken::new())
                                .await
                                .unwrap();
                        assert_eq!(r.plan.batches.len(), 1);
                        black_box(r);
                    }
                    start.elapsed()
                })
            });
        });
        if let (Some(j), Some(before)) = (&s.sqlite, before) {
            let after = j.commit_stats();
            let (commits, records) = (
                after.commits - before.commits,
                after.records - before.records,
            );
            println!(
                "sixteen_concurrent/sqlite: {records} records in {commits} commits ({:.1} records per commit)",
                records as f64 / commits.max(1) as f64
            );
        }
    }
    g.finish();
}

criterion_group!(benches, device, bench);
criterion_main!(benches);
