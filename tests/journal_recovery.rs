//! The durable journal through the library: finished calls replay after a restart (under the
//! contract version that ran), keys are claimed per request, and recovery settles what a crash
//! left unfinished by idempotency class — with preconditions, a reconcile hook and a person —
//! for the SQLite journal and the in-memory one alike.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock};

use common::{Counters, Fixture, bind_handlers, call, repo, run1};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use toolgate::ir::{Bundle, Decision, ErrorType, Status};
use toolgate::policy::DecisionSource;
use toolgate::runtime::extend::Workspace;
use toolgate::runtime::extend::canonical_json;
use toolgate::runtime::extend::{ApprovalOutcome, FixedApprover};
use toolgate::runtime::extend::{HandlerContext, HandlerError, HandlerOutput};
use toolgate::runtime::extend::{
    Journal, KeySource, OperationRecord, OperationStart, Precondition, PreconditionCheck,
    ReconcileFuture, Reconciler, Reconciliation, Settled, SettledBy, Settlement, derived_key,
};
use toolgate::runtime::extend::{PermissionRecord, Resolution};
use toolgate::runtime::{JOURNAL_FILE, JournalReader, SqliteJournal};
use toolgate::runtime::{MemoryJournal, RuntimeBuilder, Session};
use toolgate::spec::load::LoadOptions;

/// The runtime fixtures plus `compare_and_set`, a conditionally idempotent handler tool.
fn bundle() -> Arc<Bundle> {
    static BUNDLE: OnceLock<Arc<Bundle>> = OnceLock::new();
    BUNDLE
        .get_or_init(|| {
            let opts = LoadOptions {
                paths: vec![
                    repo().join("tool-specs"),
                    repo().join("tests/fixtures/runtime"),
                    repo().join("tests/fixtures/journal"),
                ],
                config: Some(repo().join("tests/fixtures/runtime/toolgate.yaml")),
                cwd: repo(),
            };
            let checked = toolgate::check::check_specs(&opts).unwrap();
            Arc::new(checked.bundle().expect("the fixture specs lint clean"))
        })
        .clone()
}

type Store = Arc<Mutex<HashMap<String, String>>>;

/// A builder over the fixture tools with every handler bound; `compare_and_set` works on `store`.
fn builder(
    f: &Fixture,
    bundle: Arc<Bundle>,
    counters: Arc<Counters>,
    store: Store,
) -> RuntimeBuilder {
    let s = store.clone();
    bind_handlers(
        RuntimeBuilder::from_bundle(bundle, env!("CARGO_MANIFEST_DIR"))
            .workspace(f.path())
            .state_dir(f.state.path())
            .approver(Arc::new(FixedApprover(ApprovalOutcome::AllowOnce))),
        counters,
    )
    .bind(
        "compare_and_set",
        Arc::new(move |_ctx: HandlerContext, args: Value| {
            let s = s.clone();
            async move {
                let mut m = s.lock().unwrap();
                let name = args["name"].as_str().unwrap_or("").to_owned();
                if m.get(&name).map(String::as_str) != args["expected"].as_str() {
                    return Err(HandlerError::new(ErrorType::PreconditionFailed, "changed"));
                }
                m.insert(
                    name.clone(),
                    args["value"].as_str().unwrap_or("").to_owned(),
                );
                Ok(HandlerOutput::text(name))
            }
        }),
    )
    .precondition("compare_and_set", Arc::new(StoreHolds(store)))
}

/// `compare_and_set`'s precondition: the entry still holds `expected`.
struct StoreHolds(Store);

impl Precondition for StoreHolds {
    fn check(&self, args: &Value, _ws: &Workspace) -> PreconditionCheck {
        let m = self.0.lock().unwrap();
        let name = args["name"].as_str().unwrap_or("");
        match (m.get(name), args["expected"].as_str()) {
            (Some(v), Some(e)) if v == e => {
                PreconditionCheck::Holds(format!("{name} is still {e}"))
            }
            (Some(v), Some(e)) => PreconditionCheck::Broken(format!("{name} is {v}, not {e}")),
            _ => PreconditionCheck::Unknown(format!("{name} is not in the store")),
        }
    }
}

fn session() -> Session {
    Session::new("s", "interactive")
}

/// The start record a crashed runtime would have left for a call.
fn crashed(
    op: &str,
    call_id: &str,
    tool: &str,
    args: Value,
    spec_key: Option<&str>,
) -> OperationStart {
    let b = bundle();
    let def = b.tools.iter().find(|t| t.name == tool).unwrap();
    let canonical = canonical_json(&args);
    OperationStart {
        operation_id: op.into(),
        session_id: "s".into(),
        call_id: call_id.into(),
        tool: tool.into(),
        tool_version: def.version,
        schema_version: "blake3:0000000000000000".into(),
        effect: def.effect,
        idempotency: def.idempotency,
        idempotency_key: spec_key.map_or_else(|| derived_key("s", call_id), str::to_owned),
        key_source: if spec_key.is_some() {
            KeySource::Spec
        } else {
            KeySource::Derived
        },
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
        started_at: "2026-11-30T00:00:00.000000Z".into(),
        principal: None,
    }
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Sqlite,
    Memory,
}

/// Writes `ops` as started into a journal of `kind` and returns the builder of the runtime that
/// opens it after the "crash".
async fn after_crash(
    kind: Kind,
    f: &Fixture,
    ops: &[OperationStart],
    b: RuntimeBuilder,
) -> RuntimeBuilder {
    match kind {
        Kind::Sqlite => {
            let j = SqliteJournal::open(f.state.path().join(JOURNAL_FILE)).unwrap();
            for op in ops {
                j.start(op).await.unwrap();
            }
            drop(j);
            b.sqlite_journal()
        }
        Kind::Memory => {
            let j = Arc::new(MemoryJournal::default());
            for op in ops {
                j.start(op).await.unwrap();
            }
            b.journal(j)
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finished_calls_replay_after_a_restart() {
    let f = Fixture::new();
    let store = Store::default();
    let first = Arc::new(Counters::default());
    let rt = builder(&f, bundle(), first.clone(), store.clone())
        .sqlite_journal()
        .build()
        .unwrap();
    let note = json!({"request_id": "r1", "text": "deploy done"});
    let r = run1(&rt, &session(), call("c1", "send_note", note.clone())).await;
    assert_eq!(r.output(), Some("delivered #1 with key r1"));
    let edit = json!({"path": "e.txt", "ms": 0});
    run1(&rt, &session(), call("c2", "slow_edit", edit.clone())).await;
    let note_op = rt.traces()[0].operation_id.clone().unwrap();
    drop(rt);

    let second = Arc::new(Counters::default());
    let rt = builder(&f, bundle(), second.clone(), store)
        .sqlite_journal()
        .build()
        .unwrap();
    // The same key (another call id): the recorded delivery, not a second one.
    let r = run1(&rt, &session(), call("c9", "send_note", note)).await;
    assert_eq!(
        (r.replayed(), r.call_id(), r.output()),
        (true, "c9", Some("delivered #1 with key r1"))
    );
    // The same call again (derived key), and the same call id with other arguments.
    let r = run1(&rt, &session(), call("c2", "slow_edit", edit)).await;
    assert_eq!((r.status(), r.replayed()), (Status::Success, true));
    let r = run1(
        &rt,
        &session(),
        call("c2", "slow_edit", json!({"path": "f.txt", "ms": 0})),
    )
    .await;
    assert_eq!((r.status(), r.replayed()), (Status::Success, false));
    // A spec key reused for another request is the caller's mistake.
    let other = json!({"request_id": "r1", "text": "something else"});
    let r = run1(&rt, &session(), call("c10", "send_note", other)).await;
    assert_eq!(
        (r.error_type(), r.summary()),
        (
            Some(ErrorType::SemanticValidationError),
            "the idempotency key `r1` was already used by call c1 with other arguments; a key names one request"
        )
    );
    assert_eq!(second.notes_delivered.load(Ordering::SeqCst), 0);
    drop(rt);

    let op = JournalReader::open(f.state.path().join(JOURNAL_FILE))
        .unwrap()
        .operation(&note_op)
        .unwrap()
        .unwrap();
    let fin = op.finish.as_ref().unwrap();
    assert_eq!(
        (
            op.start.tool_version,
            op.start.schema_version.len(),
            op.start.key_source,
            op.start.permission.decision,
            op.attempts.len(),
            fin.status,
            fin.trace.runtime,
            fin.output_size,
        ),
        (
            1,
            23,
            KeySource::Spec,
            Decision::Allow,
            1,
            Status::Success,
            Some("handler"),
            24
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_shows_the_contract_version_that_ran() {
    let f = Fixture::new();
    let rt = builder(&f, bundle(), Arc::default(), Store::default())
        .sqlite_journal()
        .build()
        .unwrap();
    let edit = call("c1", "slow_edit", json!({"path": "e.txt", "ms": 0}));
    let first = run1(&rt, &session(), edit.clone()).await;
    drop(rt);
    let mut v2 = (*bundle()).clone();
    v2.tools
        .iter_mut()
        .find(|t| t.name == "slow_edit")
        .unwrap()
        .version = 2;
    let rt = builder(&f, Arc::new(v2), Arc::default(), Store::default())
        .sqlite_journal()
        .build()
        .unwrap();
    let r = run1(&rt, &session(), edit).await;
    assert_eq!(
        (r.replayed(), r.tool_version(), r.summary().to_owned()),
        (
            true,
            Some(1),
            format!(
                "{} (recorded under slow_edit version 1; the contract is now version 2)",
                first.summary()
            )
        )
    );
    assert_eq!(rt.traces().pop().unwrap().tool_version, Some(1));
}

async fn recovery_by_class(kind: Kind) {
    let f = Fixture::new();
    f.write("a.txt", "x = 1\n");
    f.write("b.txt", "y = 1\n");
    let a_hash = blake3::hash(b"x = 1\n").to_hex().to_string();
    let b_hash = blake3::hash(b"y = 1\n").to_hex().to_string();
    let patch = |path: &str, hash: &str, old: &str| json!({"path": path, "expected_hash": hash, "edits": [{"old_text": old, "new_text": "changed = 2"}]});
    let note = json!({"request_id": "r9", "text": "t"});
    let edit = json!({"path": "e.txt", "ms": 0});
    let patch_a = patch("a.txt", &a_hash, "x = 1");
    let patch_b = patch("b.txt", &"0".repeat(64), "y = 1");
    let read = json!({"path": "a.txt"});
    let cas_x = json!({"name": "x", "expected": "1", "value": "2"});
    let cas_y = json!({"name": "y", "expected": "1", "value": "2"});
    let ops = [
        crashed("op-1", "c1", "send_note", note.clone(), Some("r9")),
        crashed("op-2", "c2", "slow_edit", edit.clone(), None),
        crashed("op-3", "c3", "apply_patch", patch_a.clone(), None),
        crashed("op-4", "c4", "apply_patch", patch_b.clone(), None),
        crashed("op-5", "c5", "read_file", read.clone(), None),
        crashed("op-6", "c6", "compare_and_set", cas_x.clone(), None),
        crashed("op-7", "c7", "compare_and_set", cas_y.clone(), None),
    ];
    let store = Store::default();
    store
        .lock()
        .unwrap()
        .extend([("x".into(), "1".into()), ("y".into(), "2".into())]);
    let counters = Arc::new(Counters::default());
    let b = builder(&f, bundle(), counters.clone(), store.clone());
    let rt = after_crash(kind, &f, &ops, b).await.build().unwrap();

    let report = rt.recover().await.unwrap();
    let settled: Vec<(&str, Settled, SettledBy, &str)> = report
        .operations
        .iter()
        .map(|o| (o.call_id.as_str(), o.outcome, o.by, o.reason.as_str()))
        .collect();
    let unknown = Settled::UnknownOutcome;
    let rerun = Settled::Abandoned;
    let by = SettledBy::Recovery;
    assert_eq!(
        settled,
        vec![
            (
                "c1",
                unknown,
                by,
                "send_note is not idempotent and started before the crash: it may have taken effect; verify before repeating"
            ),
            (
                "c2",
                rerun,
                by,
                "slow_edit is idempotent: running it again has the effect of running it once"
            ),
            (
                "c3",
                rerun,
                by,
                "its precondition still holds (`a.txt` still has expected_hash): running it again is safe"
            ),
            (
                "c4",
                unknown,
                by,
                &format!(
                    "its precondition no longer holds (`b.txt` no longer has expected_hash (its hash is now {b_hash})): it may have taken effect; verify before repeating"
                )
            ),
            (
                "c5",
                rerun,
                by,
                "read_file changes nothing (read_only): safe to run again"
            ),
            (
                "c6",
                rerun,
                by,
                "its precondition still holds (x is still 1): running it again is safe"
            ),
            (
                "c7",
                unknown,
                by,
                "its precondition no longer holds (y is 2, not 1): it may have taken effect; verify before repeating"
            ),
        ]
    );
    assert!(rt.journal().unfinished().await.unwrap().is_empty());
    assert!(
        Arc::ptr_eq(&report, &rt.recover().await.unwrap()),
        "recovery runs once"
    );

    // Resubmitted: the uncertain ones are not run, the re-runnable ones run once.
    let s = session();
    let r = run1(&rt, &s, call("c1", "send_note", note.clone())).await;
    assert_eq!(r.error_type(), Some(ErrorType::UnknownOutcome));
    assert!(r.projection().text.contains("this may have happened. Verify before repeating; once you know, `toolgate journal resolve op-1` settles it"), "{}", r.projection().text);
    assert_eq!(counters.notes_delivered.load(Ordering::SeqCst), 0);
    for (id, tool, args) in [
        ("c2", "slow_edit", &edit),
        ("c3", "apply_patch", &patch_a),
        ("c5", "read_file", &read),
        ("c6", "compare_and_set", &cas_x),
    ] {
        let r = run1(&rt, &s, call(id, tool, args.clone())).await;
        assert_eq!(
            (id, r.status(), r.replayed()),
            (id, Status::Success, false),
            "{}",
            r.summary()
        );
    }
    assert_eq!(f.read("a.txt"), "changed = 2\n");
    for (id, tool, args) in [
        ("c4", "apply_patch", &patch_b),
        ("c7", "compare_and_set", &cas_y),
    ] {
        let r = run1(&rt, &s, call(id, tool, args.clone())).await;
        assert_eq!((id, r.error_type()), (id, Some(ErrorType::UnknownOutcome)));
    }
    assert_eq!(f.read("b.txt"), "y = 1\n");
    // The patch that ran is finished now: once more, it replays instead of applying again.
    let r = run1(&rt, &s, call("c3", "apply_patch", patch_a)).await;
    assert_eq!((r.status(), r.replayed()), (Status::Success, true));

    // A person settles the two uncertain ones.
    let settle = |op: &str, outcome, reason: &str| Settlement {
        operation_id: op.into(),
        outcome,
        by: SettledBy::Person,
        reason: reason.into(),
        external_reference: None,
        at: "2026-11-30T01:00:00Z".into(),
    };
    let j = rt.journal();
    j.settle(&settle(
        "op-1",
        Settled::Succeeded,
        "the note is in the channel",
    ))
    .await
    .unwrap();
    j.settle(&settle("op-4", Settled::Failed, "b.txt is unchanged"))
        .await
        .unwrap();
    let r = run1(&rt, &s, call("c1", "send_note", note)).await;
    assert_eq!(
        (r.status(), r.replayed(), r.summary()),
        (
            Status::Success,
            true,
            "send_note (call c1) was cut off by a crash; person established that it took effect: the note is in the channel"
        )
    );
    let r = run1(&rt, &s, call("c4", "apply_patch", patch_b)).await;
    assert_eq!(
        (r.error_type(), r.replayed()),
        (Some(ErrorType::PreconditionFailed), false),
        "it ran"
    );
    assert_eq!(counters.notes_delivered.load(Ordering::SeqCst), 0);
    let again = j
        .settle(&settle("op-1", Settled::Failed, "changed my mind"))
        .await
        .unwrap_err();
    assert_eq!(
        again.to_string(),
        "journal: operation op-1 is succeeded already; only started or unknown-outcome operations can be settled"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recovery_settles_unfinished_operations_by_idempotency_class() {
    recovery_by_class(Kind::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_memory_journal_recovers_the_same_way() {
    recovery_by_class(Kind::Memory).await;
}

/// Knows which notes the service received, by idempotency key.
struct NoteService;

impl Reconciler for NoteService {
    fn reconcile<'a>(&'a self, op: &'a OperationRecord, _ws: &'a Workspace) -> ReconcileFuture<'a> {
        Box::pin(async move {
            match op.start.idempotency_key.as_str() {
                "r-yes" => Reconciliation::Succeeded {
                    evidence: "the service has a note with key r-yes".into(),
                    external_reference: Some("note/7".into()),
                },
                "r-no" => Reconciliation::Failed {
                    evidence: "the service has no note with key r-no".into(),
                },
                _ => Reconciliation::Unknown,
            }
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconcile_hook_settles_what_recovery_cannot() {
    let f = Fixture::new();
    let note = |key: &str| json!({"request_id": key, "text": "t"});
    let ops = [
        crashed("op-1", "c1", "send_note", note("r-yes"), Some("r-yes")),
        crashed("op-2", "c2", "send_note", note("r-no"), Some("r-no")),
        crashed("op-3", "c3", "send_note", note("r-maybe"), Some("r-maybe")),
    ];
    let counters = Arc::new(Counters::default());
    let b =
        builder(&f, bundle(), counters.clone(), Store::default()).reconciler(Arc::new(NoteService));
    let rt = after_crash(Kind::Sqlite, &f, &ops, b)
        .await
        .build()
        .unwrap();
    let report = rt.recover().await.unwrap();
    let settled: Vec<(&str, Settled, SettledBy)> = report
        .operations
        .iter()
        .map(|o| (o.call_id.as_str(), o.outcome, o.by))
        .collect();
    assert_eq!(
        settled,
        vec![
            ("c1", Settled::Succeeded, SettledBy::Reconciler),
            ("c2", Settled::Failed, SettledBy::Reconciler),
            ("c3", Settled::UnknownOutcome, SettledBy::Recovery),
        ]
    );
    let s = session();
    let r = run1(&rt, &s, call("c1", "send_note", note("r-yes"))).await;
    assert_eq!(
        (r.status(), r.replayed(), r.summary()),
        (
            Status::Success,
            true,
            "send_note (call c1) was cut off by a crash; reconciler established that it took effect: the service has a note with key r-yes"
        )
    );
    let r = run1(&rt, &s, call("c2", "send_note", note("r-no"))).await;
    assert_eq!(r.output(), Some("delivered #1 with key r-no"));
    let r = run1(&rt, &s, call("c3", "send_note", note("r-maybe"))).await;
    assert_eq!(r.error_type(), Some(ErrorType::UnknownOutcome));
    assert_eq!(counters.notes_delivered.load(Ordering::SeqCst), 1);
    let op = rt.journal().operation("op-1").await.unwrap().unwrap();
    assert_eq!(
        op.settlements[0].external_reference.as_deref(),
        Some("note/7")
    );
}

/// A tool's `output.external_reference` names the field of its result that identifies what it
/// made elsewhere; the journal records that value with the finished operation.
#[tokio::test]
async fn the_journal_records_the_external_reference_a_result_names() {
    let f = Fixture::new();
    let rt = builder(&f, bundle(), Arc::default(), Store::default())
        .shim(common::shim())
        .sqlite_journal()
        .build()
        .unwrap();
    let r = run1(
        &rt,
        &session(),
        call("t1", "open_ticket", json!({"n": "7"})),
    )
    .await;
    assert_eq!(r.status(), Status::Success, "{}", r.summary());
    drop(rt);
    let reader = JournalReader::open(f.state.path().join(JOURNAL_FILE)).unwrap();
    let ops = reader.by_call("t1").unwrap();
    let finish = ops[0].finish.as_ref().unwrap();
    assert_eq!(finish.external_reference.as_deref(), Some("T-7"));
}
