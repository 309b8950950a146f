//! Shared set-up of the runtime tests: the standard tool library plus the test tools of
//! `tests/fixtures/runtime`, a temporary workspace, test handlers, a recording hook and
//! scripted approvers.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolgate::ir::{Bundle, ErrorType};
use toolgate::runtime::extend::{
    Annotations, CallView, HandlerContext, HandlerError, HandlerOutput, Hook, HookPoint,
};
use toolgate::runtime::extend::{ApprovalFuture, ApprovalOutcome, ApprovalRequest, Approver};
use toolgate::runtime::{RuntimeBuilder, Session, ToolCall, ToolResult, ToolRuntime};
use toolgate::spec::load::LoadOptions;

pub mod escape;
pub mod postgres;
pub mod sandbox;
pub mod toolchain;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The fixture project's specs, loaded and linted once per test binary (the runtime refuses
/// specs with lint errors; `from_specs` itself is exercised by the CLI tests).
pub fn specs() -> LoadOptions {
    LoadOptions {
        paths: vec![
            repo().join("tool-specs"),
            repo().join("tests/fixtures/runtime"),
        ],
        config: Some(repo().join("tests/fixtures/runtime/toolgate.yaml")),
        cwd: repo(),
    }
}

pub fn bundle() -> Arc<Bundle> {
    static BUNDLE: OnceLock<Arc<Bundle>> = OnceLock::new();
    BUNDLE
        .get_or_init(|| {
            let checked = toolgate::check::check_specs(&specs()).unwrap();
            Arc::new(checked.bundle().expect("the fixture specs lint clean"))
        })
        .clone()
}

/// The exec shim command tools run under: `toolgate-shim`, as the runtime finds it beside
/// `toolgate` (the test binary itself cannot be re-executed as one).
pub fn shim() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_toolgate-shim"))
}

/// A temporary workspace and state folder.
pub struct Fixture {
    pub ws: tempfile::TempDir,
    pub state: tempfile::TempDir,
}

impl Fixture {
    pub fn new() -> Self {
        Fixture {
            ws: tempfile::tempdir().unwrap(),
            state: tempfile::tempdir().unwrap(),
        }
    }

    pub fn path(&self) -> &Path {
        self.ws.path()
    }

    pub fn write(&self, rel: &str, text: &str) {
        let p = self.ws.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.ws.path().join(rel)).unwrap()
    }

    /// The runtime builder over the fixture project, with every test handler bound.
    pub fn builder(&self) -> RuntimeBuilder {
        let b = RuntimeBuilder::from_specs(&LoadOptions {
            paths: vec![
                repo().join("tool-specs"),
                repo().join("tests/fixtures/runtime"),
            ],
            config: Some(repo().join("tests/fixtures/runtime/toolgate.yaml")),
            cwd: repo(),
        })
        .unwrap()
        .workspace(self.ws.path())
        .state_dir(self.state.path())
        .shim(shim());
        bind_handlers(b, Arc::new(Counters::default()))
    }
}

/// What the test handlers count.
#[derive(Default, Debug)]
pub struct Counters {
    pub flaky_calls: AtomicU32,
    pub notes_delivered: AtomicU32,
}

pub fn bind_handlers(b: RuntimeBuilder, counters: Arc<Counters>) -> RuntimeBuilder {
    let c1 = counters.clone();
    let c2 = counters;
    b.bind(
        "slow_read",
        Arc::new(|_ctx: HandlerContext, args: Value| async move {
            if args["path"] == "panic" {
                panic!("a handler bug");
            }
            tokio::time::sleep(Duration::from_millis(args["ms"].as_u64().unwrap_or(0))).await;
            Ok(HandlerOutput::structured(json!({"path": args["path"]})))
        }),
    )
    .bind(
        "slow_edit",
        Arc::new(|_ctx: HandlerContext, args: Value| async move {
            tokio::time::sleep(Duration::from_millis(args["ms"].as_u64().unwrap_or(0))).await;
            Ok(HandlerOutput::text(format!(
                "edited {}",
                args["path"].as_str().unwrap_or("")
            )))
        }),
    )
    .bind(
        "flaky",
        Arc::new(move |ctx: HandlerContext, args: Value| {
            let c = c1.clone();
            async move {
                c.flaky_calls.fetch_add(1, Ordering::SeqCst);
                if u64::from(ctx.attempt) <= args["fail_times"].as_u64().unwrap_or(0) {
                    Err(HandlerError::new(
                        ErrorType::NetworkError,
                        "connection reset",
                    ))
                } else {
                    Ok(HandlerOutput::text(format!(
                        "ok on attempt {}",
                        ctx.attempt
                    )))
                }
            }
        }),
    )
    .bind(
        "echo_handler",
        Arc::new(|_ctx: HandlerContext, args: Value| async move {
            Ok(HandlerOutput::text(
                args["text"].as_str().unwrap_or("").to_owned(),
            ))
        }),
    )
    .bind(
        "send_note",
        Arc::new(move |ctx: HandlerContext, args: Value| {
            let c = c2.clone();
            async move {
                if args["fail"].as_bool() == Some(true) {
                    return Err(HandlerError::new(
                        ErrorType::NetworkError,
                        "service unavailable",
                    ));
                }
                let n = c.notes_delivered.fetch_add(1, Ordering::SeqCst) + 1;
                Ok(HandlerOutput::text(format!(
                    "delivered #{n} with key {}",
                    ctx.idempotency_key
                )))
            }
        }),
    )
}

pub fn call(id: &str, name: &str, args: Value) -> ToolCall {
    ToolCall::new(id, name, args)
}

pub async fn run(rt: &ToolRuntime, session: &Session, calls: Vec<ToolCall>) -> Vec<ToolResult> {
    rt.execute(calls, session, CancellationToken::new())
        .await
        .unwrap()
}

pub async fn run1(rt: &ToolRuntime, session: &Session, c: ToolCall) -> ToolResult {
    run(rt, session, vec![c]).await.pop().unwrap()
}

/// A hook that records every point it is called at, with the call id.
#[derive(Default)]
pub struct Recorder {
    pub events: Mutex<Vec<(HookPoint, String)>>,
}

impl Recorder {
    pub fn events(&self) -> Vec<(HookPoint, String)> {
        self.events.lock().unwrap().clone()
    }

    pub fn count(&self, point: HookPoint) -> usize {
        self.events().iter().filter(|(p, _)| *p == point).count()
    }
}

impl Hook for Recorder {
    fn on(&self, view: &CallView<'_>, annotations: &mut Annotations) {
        self.events
            .lock()
            .unwrap()
            .push((view.point, view.call_id.to_owned()));
        annotations.note("seen", format!("{:?}", view.point));
    }
}

/// An approver with a scripted answer that counts how often it is asked.
pub struct Scripted {
    pub outcome: ApprovalOutcome,
    pub asked: AtomicU32,
    pub requests: Mutex<Vec<ApprovalRequest>>,
}

impl Scripted {
    pub fn new(outcome: ApprovalOutcome) -> Arc<Self> {
        Arc::new(Scripted {
            outcome,
            asked: AtomicU32::new(0),
            requests: Mutex::new(Vec::new()),
        })
    }

    pub fn asked(&self) -> u32 {
        self.asked.load(Ordering::SeqCst)
    }
}

impl Approver for Scripted {
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        self.requests.lock().unwrap().push(request.clone());
        let o = self.outcome.clone();
        Box::pin(async move { o })
    }
}

/// An approver that never answers.
pub struct Silent;

impl Approver for Silent {
    fn request<'a>(&'a self, _request: &'a ApprovalRequest) -> ApprovalFuture<'a> {
        Box::pin(std::future::pending())
    }
}
