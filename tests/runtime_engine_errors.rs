//! Engine errors: what `execute` returns instead of results when the runtime itself cannot go
//! on — a session limited to a toolset the project does not define, a journal that cannot
//! record. A tool whose start could not be recorded never runs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use common::{Counters, Fixture, bind_handlers, call, repo};
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolgate::runtime::extend::Journal;
use toolgate::runtime::extend::{
    AttemptRecord, JournalError, JournalFuture, OperationFinish, OperationRecord, OperationStart,
    Settlement,
};
use toolgate::runtime::{EngineError, MemoryJournal, RuntimeBuilder, Session};
use toolgate::spec::load::LoadOptions;

/// A journal on memory whose writes can be made to fail, as a full or vanished disk would.
#[derive(Default)]
struct BrokenJournal {
    inner: MemoryJournal,
    fail_start: AtomicBool,
    fail_finish: AtomicBool,
}

fn broken<'a, T: Send + 'a>(what: &str) -> JournalFuture<'a, T> {
    let e = JournalError::Failed(format!("{what}: No space left on device (os error 28)"));
    Box::pin(async move { Err(e) })
}

impl Journal for BrokenJournal {
    fn start<'a>(&'a self, op: &'a OperationStart) -> JournalFuture<'a, ()> {
        if self.fail_start.load(Ordering::SeqCst) {
            return broken("start");
        }
        self.inner.start(op)
    }
    fn attempt<'a>(&'a self, attempt: &'a AttemptRecord) -> JournalFuture<'a, ()> {
        self.inner.attempt(attempt)
    }
    fn finish<'a>(&'a self, finish: &'a OperationFinish) -> JournalFuture<'a, ()> {
        if self.fail_finish.load(Ordering::SeqCst) {
            return broken("finish");
        }
        self.inner.finish(finish)
    }
    fn settle<'a>(&'a self, settlement: &'a Settlement) -> JournalFuture<'a, ()> {
        self.inner.settle(settlement)
    }
    fn by_idempotency_key<'a>(
        &'a self,
        tool: &'a str,
        key: &'a str,
    ) -> JournalFuture<'a, Option<OperationRecord>> {
        self.inner.by_idempotency_key(tool, key)
    }
    fn operation<'a>(
        &'a self,
        operation_id: &'a str,
    ) -> JournalFuture<'a, Option<OperationRecord>> {
        self.inner.operation(operation_id)
    }
    fn unfinished<'a>(&'a self) -> JournalFuture<'a, Vec<OperationRecord>> {
        self.inner.unfinished()
    }
}

fn runtime(
    f: &Fixture,
    journal: Arc<BrokenJournal>,
    counters: Arc<Counters>,
) -> toolgate::runtime::ToolRuntime {
    let b = RuntimeBuilder::from_specs(&LoadOptions {
        paths: vec![
            repo().join("tool-specs"),
            repo().join("tests/fixtures/runtime"),
        ],
        config: Some(repo().join("tests/fixtures/runtime/toolgate.yaml")),
        cwd: repo(),
    })
    .unwrap()
    .workspace(f.path())
    .state_dir(f.state.path())
    .journal(journal);
    bind_handlers(b, counters).build().unwrap()
}

fn note(id: &str) -> toolgate::runtime::ToolCall {
    call(id, "send_note", json!({"request_id": id, "text": "hello"}))
}

#[tokio::test]
async fn an_undefined_toolset_is_an_engine_error() {
    let f = Fixture::new();
    let counters = Arc::new(Counters::default());
    let rt = runtime(&f, Arc::default(), counters.clone());
    let session = Session::new("s", "interactive").with_toolset("nightly");
    let e = rt
        .execute(vec![note("n1")], &session, CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(&e, EngineError::UnknownToolset(t) if t == "nightly"),
        "{e}"
    );
    assert_eq!(counters.notes_delivered.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_start_the_journal_cannot_record_never_runs() {
    let f = Fixture::new();
    let counters = Arc::new(Counters::default());
    let journal = Arc::new(BrokenJournal::default());
    let rt = runtime(&f, journal.clone(), counters.clone());
    let session = Session::new("s", "interactive");
    journal.fail_start.store(true, Ordering::SeqCst);
    let e = rt
        .execute(vec![note("n1")], &session, CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(e, EngineError::Journal(_)), "{e}");
    assert!(e.to_string().contains("No space left on device"), "{e}");
    assert_eq!(counters.notes_delivered.load(Ordering::SeqCst), 0);

    // Once the journal records again, the same call runs (nothing was claimed for it).
    journal.fail_start.store(false, Ordering::SeqCst);
    let r = rt
        .execute(vec![note("n1")], &session, CancellationToken::new())
        .await
        .unwrap();
    assert!(r[0].is_success(), "{}", r[0].summary());
    assert_eq!(counters.notes_delivered.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_finish_the_journal_cannot_record_is_an_engine_error() {
    let f = Fixture::new();
    let counters = Arc::new(Counters::default());
    let journal = Arc::new(BrokenJournal::default());
    let rt = runtime(&f, journal.clone(), counters.clone());
    journal.fail_finish.store(true, Ordering::SeqCst);
    let e = rt
        .execute(
            vec![note("n1")],
            &Session::new("s", "interactive"),
            CancellationToken::new(),
        )
        .await
        .unwrap_err();
    assert!(matches!(e, EngineError::Journal(_)), "{e}");
    // The note went out; the journal still holds its start, so recovery will see it as
    // unfinished and settle it — never run it again in silence.
    assert_eq!(counters.notes_delivered.load(Ordering::SeqCst), 1);
    let unfinished = journal.inner.unfinished().await.unwrap();
    assert_eq!(unfinished.len(), 1);
    assert_eq!(unfinished[0].start.tool, "send_note");
}
