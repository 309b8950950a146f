//! The PostgreSQL journal against a real server (tests/common/postgres.rs starts one per test
//! binary, or uses `TOOLGATE_TEST_POSTGRES`): the `Journal` semantics across two journals on one
//! database (two hosts), leases, fencing, recovery by class and on a timer, migrations, refusals,
//! and the real binary with `journal: postgres://…` — a `kill -9` mid-call included.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::postgres::{self, TestDatabase};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use toolgate::ir::{Decision, Effect, Idempotency, Status};
use toolgate::policy::DecisionSource;
use toolgate::runtime::extend::{
    Claim, Journal, KeySource, OperationFinish, OperationStart, OperationState, PermissionRecord,
    Resolution, Settled, SettledBy, Settlement, canonical_json,
};
use toolgate::runtime::{PostgresJournal, PostgresOptions, RuntimeBuilder, SqliteJournal};
use toolgate::spec::load::LoadOptions;

const WAIT_LIMIT: Duration = Duration::from_secs(60);

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn opts(lease_ms: u64) -> PostgresOptions {
    PostgresOptions {
        lease: Duration::from_millis(lease_ms),
        ..PostgresOptions::default()
    }
}

/// A journal on `db` as one host would open it.
fn host(db: &TestDatabase, lease_ms: u64) -> PostgresJournal {
    PostgresJournal::open_with(&db.url, opts(lease_ms)).unwrap()
}

/// A started operation of `tool` with these arguments under a spec key.
fn op(
    id: &str,
    key: &str,
    args: Value,
    effect: Effect,
    idempotency: Idempotency,
) -> OperationStart {
    let canonical = canonical_json(&args);
    OperationStart {
        operation_id: id.into(),
        session_id: "s".into(),
        call_id: format!("call-{id}"),
        tool: "mark_once".into(),
        tool_version: 1,
        schema_version: "blake3:0000000000000000".into(),
        effect,
        idempotency,
        idempotency_key: key.into(),
        key_source: KeySource::Spec,
        arguments_hash: blake3::hash(canonical.as_bytes()).to_hex().to_string(),
        arguments: canonical,
        permission: PermissionRecord {
            decision: Decision::Allow,
            source: DecisionSource::Default,
            reason: None,
            chain: Vec::new(),
            restricted_by: None,
            resolution: Resolution::Policy,
            granted: true,
        },
        scheduler_batch: Some(0),
        started_at: "2026-12-01T00:00:00.000000Z".into(),
        principal: Some("alice@https://issuer.example".into()),
    }
}

fn write(id: &str, key: &str, name: &str) -> OperationStart {
    op(
        id,
        key,
        json!({"name": name}),
        Effect::LocalWrite,
        Idempotency::NonIdempotent,
    )
}

fn finish_of(op: &OperationStart) -> OperationFinish {
    let mut trace: toolgate::runtime::extend::TraceRecord = serde_json::from_value(json!({
        "call_id": op.call_id, "session_id": op.session_id, "context": "headless",
        "tool": op.tool, "arguments_hash": op.arguments_hash, "runtime": "command",
        "start_time": op.started_at, "end_time": op.started_at, "duration_us": 1,
        "status": "success", "retry_count": 0, "output_size": 6, "replayed": false,
        "protections": [], "artifact_ids": [], "annotations": [],
    }))
    .unwrap();
    trace.effect = Some(op.effect);
    OperationFinish {
        operation_id: op.operation_id.clone(),
        finished_at: "2026-12-01T00:00:01.000000Z".into(),
        status: Status::Success,
        error_type: None,
        exit_code: Some(0),
        output_size: 6,
        result_digest: "blake3:1".into(),
        external_reference: None,
        artifact_ids: Vec::new(),
        retry_count: 0,
        result: json!({"status": "success", "summary": "marked", "z": 1, "a": 2}),
        trace,
    }
}

/// Ends a host's lease now, as if its heartbeats had stopped reaching the server.
fn expire(db: &TestDatabase, j: &PostgresJournal) {
    db.psql(&format!(
        "UPDATE owners SET lease_expires_at = now() - interval '1 second' WHERE owner_id = '{}'",
        j.owner()
    ))
    .unwrap();
}

fn settlement(id: &str, outcome: Settled) -> Settlement {
    Settlement {
        operation_id: id.into(),
        outcome,
        by: SettledBy::Person,
        reason: "checked".into(),
        external_reference: None,
        at: "2026-12-01T00:00:02Z".into(),
    }
}

fn kind(c: &Claim) -> &'static str {
    match c {
        Claim::Started => "started",
        Claim::Existing(_) => "existing",
        Claim::Blocked(_) => "blocked",
        Claim::Orphaned(_) => "orphaned",
    }
}

#[test]
fn each_test_gets_a_database_of_its_own_and_it_is_dropped() {
    let Some(db) = postgres::database() else {
        return;
    };
    db.psql("CREATE TABLE t (x int); INSERT INTO t VALUES (7)")
        .expect("create a table");
    assert_eq!(db.psql("SELECT x FROM t").expect("select"), "7");
    let name = db.name.clone();
    let server = postgres::server().expect("the server");
    let exists = |n: &str| {
        server
            .psql(&format!(
                "SELECT count(*) FROM pg_database WHERE datname = '{n}'"
            ))
            .expect("count")
    };
    assert_eq!(exists(&name), "1");
    drop(db);
    assert_eq!(exists(&name), "0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hosts_claim_one_key_once_and_block_an_uncertain_repeat() {
    let Some(db) = postgres::database() else {
        return;
    };
    let a = host(&db, 5_000);
    let b = host(&db, 5_000);
    let first = write("op-1", "k1", "x");
    assert_eq!(kind(&a.claim(&first).await.unwrap()), "started");
    // The same key on the other host: the operation on record, running in this process.
    match b.claim(&write("op-2", "k1", "x")).await.unwrap() {
        Claim::Existing(e) => {
            assert_eq!(e.start.operation_id, "op-1");
            assert_eq!(e.state(), OperationState::Started);
            assert_eq!(e.running_in, Some(std::process::id()));
            assert_eq!(
                e.start.principal.as_deref(),
                Some("alice@https://issuer.example")
            );
        }
        c => panic!("{c:?}"),
    }
    // Another key, same tool and arguments, not safe to repeat: blocked while op-1 runs.
    assert_eq!(
        kind(&b.claim(&write("op-3", "k2", "x")).await.unwrap()),
        "blocked"
    );
    // Other arguments run.
    assert_eq!(
        kind(&b.claim(&write("op-4", "k3", "y")).await.unwrap()),
        "started"
    );
    // A live host's operation is not settled by the other.
    let e = b
        .settle(&settlement("op-1", Settled::Failed))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("op-1 is still running in toolgate process"),
        "{e}"
    );
    assert!(b.unfinished().await.unwrap().is_empty());
    // Finished there, replayed here, with the result as it was recorded.
    a.finish(&finish_of(&first)).await.unwrap();
    match b.claim(&write("op-5", "k1", "x")).await.unwrap() {
        Claim::Existing(e) => {
            let f = e.finish.unwrap();
            assert_eq!(f.status, Status::Success);
            assert_eq!(
                serde_json::to_string(&f.result).unwrap(),
                r#"{"status":"success","summary":"marked","z":1,"a":2}"#
            );
        }
        c => panic!("{c:?}"),
    }
    assert_eq!(
        kind(&b.claim(&write("op-6", "k2", "x")).await.unwrap()),
        "started"
    );
    assert_eq!(
        db.psql("SELECT count(*) FROM operations WHERE idempotency_key = 'k1'")
            .unwrap(),
        "1"
    );
    assert_eq!(
        db.psql("SELECT DISTINCT principal FROM operations")
            .unwrap(),
        "alice@https://issuer.example"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_claims_of_one_key_on_two_hosts_start_it_once() {
    let Some(db) = postgres::database() else {
        return;
    };
    let a = std::sync::Arc::new(host(&db, 5_000));
    let b = std::sync::Arc::new(host(&db, 5_000));
    let mut tasks = Vec::new();
    for i in 0..16 {
        let j = if i % 2 == 0 { a.clone() } else { b.clone() };
        tasks.push(tokio::spawn(async move {
            let c = j
                .claim(&write(&format!("op-{i}"), "same", "x"))
                .await
                .unwrap();
            kind(&c)
        }));
    }
    let mut kinds = Vec::new();
    for t in tasks {
        kinds.push(t.await.unwrap());
    }
    kinds.sort_unstable();
    assert_eq!(kinds.iter().filter(|k| **k == "started").count(), 1);
    assert_eq!(kinds.iter().filter(|k| **k == "existing").count(), 15);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_lease_orphans_the_hosts_operations_and_fences_it() {
    let Some(db) = postgres::database() else {
        return;
    };
    let a = host(&db, 1_500);
    let b = host(&db, 5_000);
    let started = write("op-1", "k1", "x");
    assert_eq!(kind(&a.claim(&started).await.unwrap()), "started");
    expire(&db, &a);
    // The other host sees an orphan: recovery's to settle, and the claim says so.
    let open = b.unfinished().await.unwrap();
    assert_eq!(open.len(), 1);
    assert_eq!(open[0].running_in, None);
    assert_eq!(
        kind(&b.claim(&write("op-2", "k1", "x")).await.unwrap()),
        "orphaned"
    );
    assert_eq!(
        kind(&b.claim(&write("op-3", "k9", "x")).await.unwrap()),
        "orphaned"
    );
    // The expired host starts nothing more, however long its own clock thinks it has.
    let e = a
        .claim(&write("op-4", "k4", "z"))
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("lease on the PostgreSQL journal"), "{e}");
    assert!(e.contains("restart it"), "{e}");
    // Its heartbeat does not bring it back.
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(a.claim(&write("op-5", "k5", "w")).await.is_err());
    assert_eq!(
        db.psql(&format!(
            "SELECT lease_expires_at < now() FROM owners WHERE owner_id = '{}'",
            a.owner()
        ))
        .unwrap(),
        "t"
    );
    // Settled on the other host; a finish from the fenced host afterwards is refused.
    b.settle(&Settlement {
        by: SettledBy::Recovery,
        ..settlement("op-1", Settled::UnknownOutcome)
    })
    .await
    .unwrap();
    let e = a
        .finish(&finish_of(&started))
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("finish of an operation settled after its owner's lease expired"),
        "{e}"
    );
    // Not safe to repeat while unknown; a person's verdict lets it run.
    assert_eq!(
        kind(&b.claim(&write("op-6", "k6", "x")).await.unwrap()),
        "blocked"
    );
    b.settle(&settlement("op-1", Settled::Failed))
        .await
        .unwrap();
    assert_eq!(
        kind(&b.claim(&write("op-7", "k6", "x")).await.unwrap()),
        "started"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_heartbeat_keeps_a_lease_alive_past_its_length() {
    let Some(db) = postgres::database() else {
        return;
    };
    let a = host(&db, 900);
    let b = host(&db, 5_000);
    assert_eq!(
        kind(&a.claim(&write("op-1", "k1", "x")).await.unwrap()),
        "started"
    );
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    assert!(b.unfinished().await.unwrap().is_empty());
    assert_eq!(
        kind(&a.claim(&write("op-2", "k2", "y")).await.unwrap()),
        "started"
    );
    // Closing the journal gives the lease up: what is still started is an orphan at once.
    drop(a);
    assert_eq!(b.unfinished().await.unwrap().len(), 2);
}

/// The project of the runtime tests: `mark_once` (not idempotent) and the standard library.
fn runtime_builder(db: &TestDatabase, ws: &Path, state: &Path, lease_ms: u64) -> RuntimeBuilder {
    RuntimeBuilder::from_specs(&LoadOptions {
        paths: Vec::new(),
        config: Some(repo().join("tests/fixtures/mcp_durable/toolgate.yaml")),
        cwd: repo(),
    })
    .unwrap()
    .workspace(ws)
    .state_dir(state)
    .shim(env!("CARGO_BIN_EXE_toolgate-shim"))
    .postgres_journal_with(&db.url, opts(lease_ms))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recovery_settles_a_dead_hosts_operations_by_class_and_on_a_timer() {
    let Some(db) = postgres::database() else {
        return;
    };
    let ws = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let rt = runtime_builder(&db, ws.path(), state.path(), 800)
        .build()
        .unwrap();
    assert!(rt.recover().await.unwrap().is_empty());
    let mut reports = Vec::new();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let task = rt
        .spawn_periodic_recovery(move |r| {
            let _ = tx.send(r.map(|r| r.to_string()).map_err(|e| e.to_string()));
        })
        .expect("a shared journal asks for periodic recovery");
    // Another host starts two operations and dies (its lease runs out).
    let dead = host(&db, 5_000);
    let unsafe_op = write("op-w", "k1", "x");
    let safe_op = op(
        "op-r",
        "k2",
        json!({"path": "a"}),
        Effect::ReadOnly,
        Idempotency::Idempotent,
    );
    assert_eq!(kind(&dead.claim(&unsafe_op).await.unwrap()), "started");
    dead.start(&safe_op).await.unwrap();
    dead.flush().await.unwrap();
    expire(&db, &dead);
    // Nobody calls anything: the timer settles both.
    let start = Instant::now();
    loop {
        let states = db
            .psql("SELECT string_agg(operation_id || '=' || state, ',' ORDER BY operation_id) FROM operations")
            .unwrap();
        if states == "op-r=abandoned,op-w=unknown_outcome" {
            break;
        }
        assert!(start.elapsed() < WAIT_LIMIT, "not settled: {states}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    while let Ok(r) = rx.try_recv() {
        reports.push(r.unwrap());
    }
    assert!(
        reports
            .iter()
            .any(|r| r.contains("2 unfinished operation(s) settled")),
        "{reports:?}"
    );
    task.abort();
    assert_eq!(
        db.psql("SELECT settled_by FROM settlements WHERE operation_id = 'op-w'")
            .unwrap(),
        "recovery"
    );
}

#[test]
fn migrations_apply_once_and_a_newer_or_foreign_schema_is_refused() {
    let Some(db) = postgres::database() else {
        return;
    };
    // Four hosts open a new database at once: one applies the schema.
    let opened: Vec<_> = (0..4)
        .map(|_| {
            let url = db.url.clone();
            std::thread::spawn(move || PostgresJournal::open_with(&url, opts(5_000)).map(drop))
        })
        .collect();
    for t in opened {
        t.join().unwrap().unwrap();
    }
    drop(host(&db, 5_000));
    assert_eq!(
        db.psql("SELECT string_agg(version::text, ',') FROM schema_migrations")
            .unwrap(),
        "1,2,3"
    );
    // Closed journals leave no owner behind.
    assert_eq!(db.psql("SELECT count(*) FROM owners").unwrap(), "0");
    db.psql("INSERT INTO schema_migrations (version, toolgate) VALUES (7, '9.0.0')")
        .unwrap();
    let e = PostgresJournal::open(&db.url).unwrap_err().to_string();
    assert!(
        e.contains("has journal schema version 7, newer than this toolgate reads (up to 3)"),
        "{e}"
    );

    let Some(foreign) = postgres::database() else {
        return;
    };
    foreign
        .psql("CREATE TABLE operations (id int); INSERT INTO operations VALUES (1)")
        .unwrap();
    let e = PostgresJournal::open(&foreign.url).unwrap_err().to_string();
    assert!(e.contains("is not a toolgate journal"), "{e}");
    assert!(e.contains("operations"), "{e}");
    assert_eq!(
        foreign.psql("SELECT count(*) FROM operations").unwrap(),
        "1"
    );
    assert_eq!(
        foreign
            .psql("SELECT count(*) FROM pg_tables WHERE tablename = 'owners'")
            .unwrap(),
        "0"
    );
}

/// A version 1 journal (before grants were kept) is brought to version 2 on open, in place:
/// its operations stay, and the grants table appears.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_1_journal_is_migrated_in_place() {
    let Some(db) = postgres::database() else {
        return;
    };
    let a = host(&db, 5_000);
    let started = write("op-v1", "k-v1", "v1.txt");
    assert_eq!(kind(&a.claim(&started).await.unwrap()), "started");
    a.finish(&finish_of(&started)).await.unwrap();
    a.flush().await.unwrap();
    drop(a);
    // What a version 1 database looked like: no grants table, version 1 recorded.
    db.psql(
        "DROP TABLE grants; DELETE FROM schema_migrations WHERE version >= 2;
         ALTER TABLE operations DROP COLUMN key_scope;",
    )
    .unwrap();
    let b = host(&db, 5_000);
    assert_eq!(
        db.psql("SELECT string_agg(version::text, ',' ORDER BY version) FROM schema_migrations")
            .unwrap(),
        "1,2,3"
    );
    assert_eq!(db.psql("SELECT count(*) FROM grants").unwrap(), "0");
    let kept = b
        .operation("op-v1")
        .await
        .unwrap()
        .expect("the operation stays");
    assert_eq!(kept.state(), OperationState::Finished(Status::Success));
}

/// Two hosts on one database share a session's allow-for-session grants: a session resumed on
/// the other host (the same session id) runs the granted call without asking; another session
/// is asked; a grant given twice is kept once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_grants_hold_on_another_host() {
    let Some(db) = postgres::database() else {
        return;
    };
    let ws = tempfile::tempdir().unwrap();
    let (state_a, state_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let yes = common::Scripted::new(
        toolgate::runtime::extend::ApprovalOutcome::AllowForSession { scope: None },
    );
    let no =
        common::Scripted::new(toolgate::runtime::extend::ApprovalOutcome::Deny { reason: None });
    let a = grants_runtime(&db, ws.path(), state_a.path())
        .approver(yes.clone())
        .build()
        .unwrap();
    let b = grants_runtime(&db, ws.path(), state_b.path())
        .approver(no.clone())
        .build()
        .unwrap();
    let args = json!({"path": "granted.txt", "content": "x\n", "overwrite": true});
    let session = toolgate::runtime::Session::new("resumed", "interactive");
    let call = |id: &str| toolgate::runtime::ToolCall::new(id, "write_file", args.clone());
    let r = common::run1(&a, &session, call("1")).await;
    assert!(r.is_success(), "{r:?}");
    let r = common::run1(&a, &session, call("2")).await;
    assert!(r.is_success(), "{r:?}");
    assert_eq!(yes.asked(), 1);
    assert_eq!(db.psql("SELECT count(*) FROM grants").unwrap(), "1");
    let on_b = toolgate::runtime::Session::new("resumed", "interactive");
    let r = common::run1(&b, &on_b, call("3")).await;
    assert!(r.is_success(), "{r:?}");
    assert_eq!(no.asked(), 0);
    let other = toolgate::runtime::Session::new("other", "interactive");
    let r = common::run1(&b, &other, call("4")).await;
    assert_eq!(r.error_type(), Some(toolgate::ir::ErrorType::UserDenied));
    assert_eq!(no.asked(), 1);
}

/// The standard library on a workspace, journaling to `db`, where writes ask (the `interactive`
/// context prompts).
fn grants_runtime(db: &TestDatabase, ws: &Path, state: &Path) -> RuntimeBuilder {
    common::Fixture::new()
        .builder()
        .workspace(ws)
        .state_dir(state)
        .postgres_journal_with(&db.url, opts(5_000))
}

#[test]
fn an_unreachable_server_or_a_bad_url_is_a_clear_error_without_the_password() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let e = PostgresJournal::open(&format!("postgres://tg:s3cret@127.0.0.1:{port}/journal"))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!(
            "cannot use the PostgreSQL journal at tg@127.0.0.1:{port}/journal: "
        )),
        "{e}"
    );
    assert!(!e.contains("s3cret"), "{e}");
    let e = PostgresJournal::open("postgres://tg:s3cret@db:port/journal")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("the journal URL is not a PostgreSQL URL"),
        "{e}"
    );
    assert!(!e.contains("s3cret"), "{e}");
}

#[tokio::test]
async fn opening_an_unreachable_server_from_inside_a_runtime_is_an_error_not_a_panic() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let e = PostgresJournal::open(&format!("postgres://tg@127.0.0.1:{port}/journal")).unwrap_err();
    assert!(
        e.to_string().contains("cannot use the PostgreSQL journal"),
        "{e}"
    );
}

/// A project in a temporary folder: `mark_once`, `read_file`, and `journal` as given.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new(journal: &str) -> Project {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("specs")).unwrap();
        std::fs::create_dir_all(dir.path().join("ws")).unwrap();
        std::fs::copy(
            repo().join("tests/fixtures/mcp_durable/specs/mark_once.yaml"),
            dir.path().join("specs/mark_once.yaml"),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("toolgate.yaml"),
            format!(
                "specs: [\"specs/*.yaml\"]\nworkspace: ws\nstate_dir: state\n{journal}\ncontexts:\n  headless: {{ask: deny}}\ntargets: [anthropic]\n"
            ),
        )
        .unwrap();
        Project { dir }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_toolgate"));
        c.args(args)
            .current_dir(self.dir.path())
            .env_remove("TOOLGATE_JOURNAL")
            .stdin(Stdio::null());
        c
    }

    fn call(&self, name: &str, key: &str) -> Output {
        self.command(&[
            "call",
            "mark_once",
            "--args",
            &json!({"name": name}).to_string(),
            "--idempotency-key",
            key,
            // Client keys are scoped per session without a principal: a retry names it.
            "--session",
            "retry-session",
            "--context",
            "headless",
        ])
        .output()
        .unwrap()
    }

    fn marks(&self) -> usize {
        std::fs::read_to_string(self.dir.path().join("ws/marks"))
            .unwrap_or_default()
            .lines()
            .count()
    }
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn toolgate_call_journals_to_the_server_and_replays_across_processes() {
    let Some(db) = postgres::database() else {
        return;
    };
    let p = Project::new(&format!("journal: {}", db.url));
    let first = p.call("one", "req-1");
    assert!(first.status.success(), "{}", text(&first));
    let again = p.call("one", "req-1");
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(p.marks(), 1, "the second call replayed");
    assert_eq!(
        db.psql("SELECT count(*) || ' ' || max(state) FROM operations")
            .unwrap(),
        "1 success"
    );
    assert_eq!(
        db.psql("SELECT count(*) FROM audit WHERE tool = 'mark_once'")
            .unwrap(),
        "2"
    );
    // No journal file in the state folder: the server holds it.
    assert!(!p.dir.path().join("state/journal.db").exists());
    // `journal stats` reads SQLite only, and says so rather than show an empty journal.
    let list = p.command(&["journal", "stats"]).output().unwrap();
    assert_eq!(list.status.code(), Some(2), "{}", text(&list));
    assert!(
        text(&list).contains("reads the SQLite journal only"),
        "{}",
        text(&list)
    );
    // TOOLGATE_JOURNAL names the server instead of toolgate.yaml.
    let q = Project::new("");
    let out = q
        .command(&[
            "call",
            "mark_once",
            "--args",
            r#"{"name":"one"}"#,
            "--idempotency-key",
            "req-1",
            "--session",
            "retry-session",
            "--context",
            "headless",
            "--format",
            "json",
        ])
        .env("TOOLGATE_JOURNAL", &db.url)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains(r#""replayed": true"#), "{}", text(&out));
    assert_eq!(q.marks(), 0);
    // `journal list` reads the server: three calls, the first ran, the others replayed it.
    let out = p
        .command(&["journal", "list", "--tool", "mark_once", "--format", "json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let rows: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let seen: Vec<(String, bool)> = rows
        .iter()
        .map(|r| {
            (
                r["status"].as_str().unwrap().to_owned(),
                r["replayed"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("success".to_owned(), false),
            ("success".to_owned(), true),
            ("success".to_owned(), true)
        ]
    );
    let out = p
        .command(&["journal", "list", "--operations", "--format", "json"])
        .output()
        .unwrap();
    let ops: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(ops.len(), 1, "{ops:?}");
    assert_eq!(ops[0]["kind"], "operation");
}

#[test]
fn a_call_killed_mid_run_is_settled_by_another_process_once_its_lease_expires() {
    let Some(db) = postgres::database() else {
        return;
    };
    let p = Project::new(&format!("journal: {{url: \"{}\", lease: 2s}}", db.url));
    std::fs::write(p.dir.path().join("ws/hold-held"), "").unwrap();
    let mut child = p
        .command(&[
            "call",
            "mark_once",
            "--args",
            r#"{"name":"held"}"#,
            "--context",
            "headless",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while p.marks() < 1 {
        assert!(start.elapsed() < WAIT_LIMIT, "the call never ran");
        std::thread::sleep(Duration::from_millis(20));
    }
    // kill -9: no chance to give its lease up.
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::remove_file(p.dir.path().join("ws/hold-held")).unwrap();
    let recover = |p: &Project| {
        let out = p
            .command(&["journal", "recover", "--context", "headless"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        text(&out)
    };
    // Its lease has not run out yet: still its own.
    assert_eq!(db.psql("SELECT state FROM operations").unwrap(), "started");
    std::thread::sleep(Duration::from_millis(2_500));
    let report = recover(&p);
    assert!(
        report.contains("1 unfinished operation(s) settled") && report.contains("unknown_outcome"),
        "{report}"
    );
    assert_eq!(
        db.psql("SELECT state FROM operations").unwrap(),
        "unknown_outcome"
    );
    // The same call is refused until a person says what happened, then it runs.
    let again = p
        .command(&[
            "call",
            "mark_once",
            "--args",
            r#"{"name":"held"}"#,
            "--context",
            "headless",
        ])
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert!(text(&again).contains("UNKNOWN_OUTCOME"), "{}", text(&again));
    let id = db.psql("SELECT operation_id FROM operations").unwrap();
    let show = p.command(&["journal", "show", &id]).output().unwrap();
    assert!(show.status.success(), "{}", text(&show));
    assert!(text(&show).contains("unknown_outcome"), "{}", text(&show));
    let resolved = p
        .command(&[
            "journal", "resolve", &id, "--as", "failed", "--note", "no mark",
        ])
        .output()
        .unwrap();
    assert!(resolved.status.success(), "{}", text(&resolved));
    let third = p
        .command(&[
            "call",
            "mark_once",
            "--args",
            r#"{"name":"held"}"#,
            "--context",
            "headless",
        ])
        .output()
        .unwrap();
    assert!(third.status.success(), "{}", text(&third));
    assert_eq!(p.marks(), 2);
}

#[test]
fn the_binary_names_an_unreachable_server_and_a_bad_url_where_it_is_written() {
    let p = Project::new("");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = p
        .command(&["call", "mark_once", "--args", r#"{"name":"a"}"#])
        .env(
            "TOOLGATE_JOURNAL",
            format!("postgres://tg:s3cret@127.0.0.1:{port}/journal"),
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let t = text(&out);
    assert!(t.contains(&format!("tg@127.0.0.1:{port}/journal")), "{t}");
    assert!(!t.contains("s3cret"), "{t}");
    assert_eq!(p.marks(), 0);

    let bad = Project::new("journal: mysql://tg:s3cret@db/journal");
    let out = bad.command(&["lint"]).output().unwrap();
    assert!(!out.status.success());
    let t = text(&out);
    assert!(t.contains("toolgate.yaml:4:"), "{t}");
    assert!(t.contains("`journal` is not a PostgreSQL URL"), "{t}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hosts_recovering_one_dead_hosts_operations_together_settle_each_once() {
    let Some(db) = postgres::database() else {
        return;
    };
    let (ws, state) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let one = runtime_builder(&db, ws.path(), state.path(), 5_000)
        .build()
        .unwrap();
    let two = runtime_builder(&db, ws.path(), state.path(), 5_000)
        .build()
        .unwrap();
    let dead = host(&db, 5_000);
    for i in 0..6 {
        let o = write(&format!("op-{i}"), &format!("k{i}"), &format!("n{i}"));
        assert_eq!(kind(&dead.claim(&o).await.unwrap()), "started");
    }
    expire(&db, &dead);
    let (a, b) = tokio::join!(one.recover_ended(), two.recover_ended());
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.operations.len() + b.operations.len(), 6, "{a}{b}");
    assert_eq!(
        db.psql("SELECT count(*) || ' ' || count(DISTINCT operation_id) FROM settlements")
            .unwrap(),
        "6 6"
    );
}

#[test]
fn toolgate_serve_settles_a_dead_hosts_calls_without_being_asked() {
    let Some(db) = postgres::database() else {
        return;
    };
    let p = Project::new(&format!("journal: {{url: \"{}\", lease: 1s}}", db.url));
    let mut serve = p
        .command(&["serve", "--all"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let dead = host(&db, 5_000);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let o = write("op-dead", "k1", "x");
    assert_eq!(kind(&rt.block_on(dead.claim(&o)).unwrap()), "started");
    expire(&db, &dead);
    let start = Instant::now();
    loop {
        let s = db.psql("SELECT state FROM operations").unwrap();
        if s == "unknown_outcome" {
            break;
        }
        assert!(start.elapsed() < WAIT_LIMIT, "not settled: {s}");
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(serve.stdin.take());
    let out = serve.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("1 unfinished operation(s) settled"), "{err}");
}

/// A client key `key` sent by `principal` (or, without one, by the session) with these
/// arguments.
fn keyed(
    id: &str,
    key: &str,
    name: &str,
    session: &str,
    principal: Option<&str>,
) -> OperationStart {
    let mut o = write(id, key, name);
    o.key_source = KeySource::Client;
    o.session_id = session.into();
    o.principal = principal.map(str::to_owned);
    o
}

/// Client keys are walls between callers: the same principal in another session gets its
/// recorded result; another principal (or another session without one) sending the same key
/// — with the same arguments or other ones — starts a request of its own, and nothing it gets
/// back is the first caller's.
async fn client_keys_are_scoped_per_principal(j: &impl Journal) {
    let alice = Some("alice@https://issuer.example");
    let first = keyed("op-a", "req-1", "x", "alice-1", alice);
    assert_eq!(kind(&j.claim(&first).await.unwrap()), "started");
    j.finish(&finish_of(&first)).await.unwrap();
    match j
        .claim(&keyed("op-a2", "req-1", "x", "alice-2", alice))
        .await
        .unwrap()
    {
        Claim::Existing(e) => assert_eq!(e.start.operation_id, "op-a"),
        c => panic!("alice's own retry: {c:?}"),
    }
    let bob = Some("bob@https://issuer.example");
    for (id, name, session, principal) in [
        ("op-b", "x", "bob-1", bob),
        ("op-c", "y", "carol-1", Some("carol@https://issuer.example")),
        ("op-s1", "z", "anon-1", None),
        ("op-s2", "z2", "anon-2", None),
    ] {
        let o = keyed(id, "req-1", name, session, principal);
        let claimed = j.claim(&o).await.unwrap();
        assert_eq!(kind(&claimed), "started", "{id}: {claimed:?}");
        j.finish(&finish_of(&o)).await.unwrap();
    }
    // Without a principal the session is the scope: its own retry replays.
    match j
        .claim(&keyed("op-s1b", "req-1", "z", "anon-1", None))
        .await
        .unwrap()
    {
        Claim::Existing(e) => assert_eq!(e.start.operation_id, "op-s1"),
        c => panic!("the session's own retry: {c:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_keys_are_scoped_per_principal_in_postgres_and_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = SqliteJournal::open(dir.path().join("journal.db")).unwrap();
    client_keys_are_scoped_per_principal(&sqlite).await;
    let Some(db) = postgres::database() else {
        return;
    };
    client_keys_are_scoped_per_principal(&host(&db, 5_000)).await;
}

/// A spec key (`idempotency_key:` of the contract) is the same wall: the principal who made
/// the call gets its recorded result from any session; another principal with the same key
/// and arguments gets a run of its own; sessions without a principal (the local user) share
/// theirs with each other and with nobody else.
async fn spec_keys_are_scoped_per_principal(j: &impl Journal) {
    let by = |id: &str, session: &str, principal: Option<&str>| {
        let mut o = write(id, "order-7", "x");
        o.key_source = KeySource::Spec;
        o.session_id = session.into();
        o.principal = principal.map(str::to_owned);
        o
    };
    let alice = Some("alice@https://issuer.example");
    let first = by("op-a", "alice-1", alice);
    assert_eq!(kind(&j.claim(&first).await.unwrap()), "started");
    j.finish(&finish_of(&first)).await.unwrap();
    match j.claim(&by("op-a2", "alice-2", alice)).await.unwrap() {
        Claim::Existing(e) => assert_eq!(e.start.operation_id, "op-a"),
        c => panic!("alice's own retry: {c:?}"),
    }
    for (id, session, principal) in [
        ("op-b", "bob-1", Some("bob@https://issuer.example")),
        ("op-l", "local-1", None),
    ] {
        let o = by(id, session, principal);
        let claimed = j.claim(&o).await.unwrap();
        assert_eq!(kind(&claimed), "started", "{id}: {claimed:?}");
        j.finish(&finish_of(&o)).await.unwrap();
    }
    match j.claim(&by("op-l2", "local-2", None)).await.unwrap() {
        Claim::Existing(e) => assert_eq!(e.start.operation_id, "op-l"),
        c => panic!("the local user's retry from another session: {c:?}"),
    }
    // The person's own lookup sees every principal's (the latest).
    let seen = j
        .by_idempotency_key("mark_once", "order-7")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(seen.start.operation_id, "op-l");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spec_keys_are_scoped_per_principal_in_every_journal() {
    spec_keys_are_scoped_per_principal(&toolgate::runtime::MemoryJournal::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let sqlite = SqliteJournal::open(dir.path().join("journal.db")).unwrap();
    spec_keys_are_scoped_per_principal(&sqlite).await;
    let Some(db) = postgres::database() else {
        return;
    };
    spec_keys_are_scoped_per_principal(&host(&db, 5_000)).await;
}
