//! Permission and approval: the outcome × context matrix, timeouts, session grants and approval
//! cards, deny beating allow, and hooks that can only tighten.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;

use common::{Fixture, Recorder, Scripted, Silent, call, run, run1};
use pretty_assertions::assert_eq;
use serde_json::json;
use toolgate::ir::{Decision, ErrorType, Status};
use toolgate::runtime::extend::Resolution;
use toolgate::runtime::extend::{Annotations, CallView, Hook, HookPoint};
use toolgate::runtime::extend::{
    ApprovalFuture, ApprovalOutcome, ApprovalRequest, ApprovalScope, Approver,
};
use toolgate::runtime::{MemoryJournal, Session};

/// An approver that forwards to whichever approver a test case sets.
#[derive(Default)]
struct Switch(std::sync::Mutex<Option<Arc<dyn Approver>>>);

impl Approver for Switch {
    fn request<'a>(&'a self, request: &'a ApprovalRequest) -> ApprovalFuture<'a> {
        let current = self.0.lock().unwrap().clone();
        Box::pin(async move {
            match current {
                Some(a) => a.request(request).await,
                None => ApprovalOutcome::Unavailable,
            }
        })
    }
}

fn write_call(id: &str, path: &str) -> toolgate::runtime::ToolCall {
    call(id, "write_file", json!({"path": path, "content": "x\n"}))
}

/// Every approver outcome in every context, plus an approver that never answers: only the two
/// allows run the call, and only where someone can be asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_matrix() {
    let outcomes: Vec<(&str, Option<ApprovalOutcome>)> = vec![
        ("allow_once", Some(ApprovalOutcome::AllowOnce)),
        (
            "allow_session",
            Some(ApprovalOutcome::AllowForSession { scope: None }),
        ),
        (
            "deny",
            Some(ApprovalOutcome::Deny {
                reason: Some("not now".into()),
            }),
        ),
        ("cancel", Some(ApprovalOutcome::Cancel)),
        ("unavailable", Some(ApprovalOutcome::Unavailable)),
        ("timeout", None),
    ];
    // One runtime; its approver forwards to the case's approver.
    let f = Fixture::new();
    let switch = Arc::new(Switch::default());
    let rt = f.builder().approver(switch.clone()).build().unwrap();
    let mut table = Vec::new();
    for context in ["interactive", "ci", "headless"] {
        for (name, outcome) in &outcomes {
            let scripted = outcome.clone().map(Scripted::new);
            let approver: Arc<dyn Approver> = match &scripted {
                Some(s) => s.clone(),
                None => Arc::new(Silent),
            };
            *switch.0.lock().unwrap() = Some(approver);
            let s = Session::new("s", context);
            let path = format!("{context}-{name}.txt");
            let r = run1(&rt, &s, write_call("c", &path)).await;
            let written = f.path().join(&path).exists();
            let asked = scripted.map_or("-".to_owned(), |s| s.asked().to_string());
            table.push(format!(
                "{context:<11} {name:<13} {:<9} {:<20} written={written} asked={asked}",
                r.status().as_str(),
                r.error_type().map_or("", |e| e.as_str()),
            ));
        }
    }
    let expected = [
        "interactive allow_once    success                        written=true asked=1",
        "interactive allow_session success                        written=true asked=1",
        "interactive deny          denied    USER_DENIED          written=false asked=1",
        "interactive cancel        cancelled CANCELLED            written=false asked=1",
        "interactive unavailable   denied    APPROVAL_UNAVAILABLE written=false asked=1",
        "interactive timeout       denied    APPROVAL_UNAVAILABLE written=false asked=-",
        "ci          allow_once    denied    APPROVAL_UNAVAILABLE written=false asked=0",
        "ci          allow_session denied    APPROVAL_UNAVAILABLE written=false asked=0",
        "ci          deny          denied    APPROVAL_UNAVAILABLE written=false asked=0",
        "ci          cancel        denied    APPROVAL_UNAVAILABLE written=false asked=0",
        "ci          unavailable   denied    APPROVAL_UNAVAILABLE written=false asked=0",
        "ci          timeout       denied    APPROVAL_UNAVAILABLE written=false asked=-",
        "headless    allow_once    denied    APPROVAL_UNAVAILABLE written=false asked=0",
        "headless    allow_session denied    APPROVAL_UNAVAILABLE written=false asked=0",
        "headless    deny          denied    APPROVAL_UNAVAILABLE written=false asked=0",
        "headless    cancel        denied    APPROVAL_UNAVAILABLE written=false asked=0",
        "headless    unavailable   denied    APPROVAL_UNAVAILABLE written=false asked=0",
        "headless    timeout       denied    APPROVAL_UNAVAILABLE written=false asked=-",
    ];
    assert_eq!(table, expected);
}

/// The timeout case says what happened, and the record keeps the rule chain.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_timeout_is_unavailable_with_the_rule_chain() {
    let f = Fixture::new();
    let rt = f.builder().approver(Arc::new(Silent)).build().unwrap();
    let s = Session::new("s", "interactive");
    let r = run1(&rt, &s, write_call("c", "a.txt")).await;
    assert_eq!(
        r.summary(),
        "write_file needs approval (New and replaced files are approved by a person) but nobody answered within 300ms, so the call was not run."
    );
    let trace = rt.traces().pop().unwrap();
    let p = trace.permission.unwrap();
    assert_eq!(p.decision, Decision::Ask);
    assert_eq!(
        p.resolution,
        Resolution::ApprovalTimeout { timeout_ms: 300 }
    );
    let chain: Vec<(String, bool)> = p.chain.iter().map(|r| (r.id.clone(), r.matched)).collect();
    assert_eq!(
        chain,
        vec![
            ("no-repository-internals".into(), false),
            ("review-writes".into(), true)
        ]
    );
    // Without any approver, an interactive ask is unavailable too.
    let rt = f.builder().build().unwrap();
    let r = run1(&rt, &s, write_call("c", "a.txt")).await;
    assert_eq!(r.error_type(), Some(ErrorType::ApprovalUnavailable));
    assert!(r.summary().contains("no approver is connected"));
}

/// Allow-for-session grants exactly the approved call: the same call again runs without
/// asking, any other call asks again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_grant_never_widens_past_the_canonical_call() {
    let f = Fixture::new();
    let approver = Scripted::new(ApprovalOutcome::AllowForSession { scope: None });
    let rt = f.builder().approver(approver.clone()).build().unwrap();
    let s = Session::new("s", "interactive");
    let same = |id| {
        call(
            id,
            "write_file",
            json!({"content": "x\n", "path": "a.txt", "overwrite": true}),
        )
    };
    assert!(run1(&rt, &s, same("1")).await.is_success());
    // Same call, keys in another order: the canonical form matches, no second question.
    let reordered = call(
        "2",
        "write_file",
        json!({"overwrite": true, "path": "a.txt", "content": "x\n"}),
    );
    assert!(run1(&rt, &s, reordered).await.is_success());
    assert_eq!(approver.asked(), 1);
    let r = run1(
        &rt,
        &s,
        call(
            "3",
            "write_file",
            json!({"path": "a.txt", "content": "y\n", "overwrite": true}),
        ),
    )
    .await;
    assert!(r.is_success());
    assert_eq!(approver.asked(), 2);
    // Another session knows nothing of these grants.
    let other = Session::new("t", "interactive");
    assert!(run1(&rt, &other, same("4")).await.is_success());
    assert_eq!(approver.asked(), 3);
    assert_eq!(s.grants().len(), 2);
}

/// A journal that shares grants (here one `MemoryJournal` behind two runtimes, as a shared
/// PostgreSQL journal is behind two hosts) carries a session's allow-for-session grant to the
/// other runtime when it resumes that session, and to no other session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_journal_carries_session_grants_to_another_runtime() {
    let f = Fixture::new();
    let journal = Arc::new(MemoryJournal::default());
    let first_approver = Scripted::new(ApprovalOutcome::AllowForSession { scope: None });
    let second_approver = Scripted::new(ApprovalOutcome::Deny { reason: None });
    let first = f
        .builder()
        .journal(journal.clone())
        .approver(first_approver.clone())
        .build()
        .unwrap();
    let second = f
        .builder()
        .journal(journal.clone())
        .approver(second_approver.clone())
        .build()
        .unwrap();
    let args = json!({"content": "x\n", "path": "a.txt", "overwrite": true});
    let s = Session::new("s", "interactive");
    assert!(
        run1(&first, &s, call("1", "write_file", args.clone()))
            .await
            .is_success()
    );
    assert_eq!(first_approver.asked(), 1);
    // The same session id, resumed by the other runtime: the grant holds there, unasked.
    let resumed = Session::new("s", "interactive");
    let r = run1(&second, &resumed, call("2", "write_file", args.clone())).await;
    assert!(r.is_success(), "{r:?}");
    assert_eq!(second_approver.asked(), 0);
    assert_eq!(resumed.grants(), s.grants());
    // Other arguments, or another session, are asked about (and this approver denies).
    let other_args = json!({"content": "y\n", "path": "a.txt", "overwrite": true});
    let r = run1(&second, &resumed, call("3", "write_file", other_args)).await;
    assert_eq!(r.error_type(), Some(ErrorType::UserDenied));
    let r = run1(
        &second,
        &Session::new("t", "interactive"),
        call("4", "write_file", args),
    )
    .await;
    assert_eq!(r.error_type(), Some(ErrorType::UserDenied));
    assert_eq!(second_approver.asked(), 2);
}

/// An approval card: apply_patch may then change the files on the card without asking; a file
/// outside it asks again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_card_scopes_later_patches() {
    let f = Fixture::new();
    for p in ["src/a.py", "src/b.py", "src/c.py"] {
        f.write(p, "TIMEOUT = 5\n");
    }
    let card = ApprovalScope {
        writes: BTreeSet::from(["file:src/a.py".to_owned(), "file:src/b.py".to_owned()]),
    };
    let approver = Scripted::new(ApprovalOutcome::AllowForSession { scope: Some(card) });
    let rt = f.builder().approver(approver.clone()).build().unwrap();
    let s = Session::new("s", "interactive");
    let hash = blake3::hash(b"TIMEOUT = 5\n").to_hex().to_string();
    let patch = |id: &str, path: &str| {
        call(
            id,
            "apply_patch",
            json!({"path": path, "expected_hash": hash, "edits": [{"old_text": "5", "new_text": "30"}]}),
        )
    };
    let results = run(
        &rt,
        &s,
        vec![patch("1", "src/a.py"), patch("2", "src/b.py")],
    )
    .await;
    assert!(results.iter().all(|r| r.is_success()));
    assert_eq!(approver.asked(), 1);
    let proposed = approver.requests.lock().unwrap()[0]
        .proposed_scope
        .clone()
        .unwrap();
    assert_eq!(
        proposed.writes,
        BTreeSet::from(["file:src/a.py".to_owned()])
    );
    assert!(run1(&rt, &s, patch("3", "src/c.py")).await.is_success());
    assert_eq!(approver.asked(), 2, "a file off the card asks again");
    // The card is bound to apply_patch: write_file to a card file still asks.
    assert!(
        run1(
            &rt,
            &s,
            call(
                "4",
                "write_file",
                json!({"path": "src/a.py", "content": "", "overwrite": true})
            )
        )
        .await
        .is_success()
    );
    assert_eq!(approver.asked(), 3);
}

/// Deny beats allow: the rules of `guarded` both allow and deny a call with "secret" in it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deny_beats_allow() {
    let f = Fixture::new();
    let rt = f.builder().build().unwrap();
    let s = Session::new("s", "interactive");
    assert!(
        run1(&rt, &s, call("1", "guarded", json!({"text": "hello"})))
            .await
            .is_success()
    );
    let r = run1(&rt, &s, call("2", "guarded", json!({"text": "my secret"}))).await;
    assert_eq!(
        (r.status(), r.error_type()),
        (Status::Denied, Some(ErrorType::PolicyDenied))
    );
    assert_eq!(
        r.summary(),
        "guarded was denied by policy rule `deny-secrets` (Secrets are never echoed)."
    );
    let p = rt.traces().pop().unwrap().permission.unwrap();
    assert_eq!(p.chain.iter().filter(|r| r.matched).count(), 2);
}

/// A hook that tries to allow everything, at every point.
struct Loosener;

impl Hook for Loosener {
    fn on(&self, _view: &CallView<'_>, a: &mut Annotations) {
        a.restrict(Decision::Allow, "let it through");
    }
}

/// A hook that denies one tool.
struct NoEcho;

impl Hook for NoEcho {
    fn points(&self) -> &[HookPoint] {
        &[HookPoint::BeforePermission]
    }

    fn on(&self, view: &CallView<'_>, a: &mut Annotations) {
        if view.tool == "echo" {
            a.restrict(Decision::Deny, "echo is switched off in this harness");
        }
    }
}

/// Hooks see views and can only tighten: an allow from a hook changes nothing, a denied call
/// never reaches execution, and a hook's deny stops an allowed call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_cannot_bypass_a_deny() {
    let f = Fixture::new();
    f.write(".env", "TOKEN=1\n");
    let recorder = Arc::new(Recorder::default());
    let journal = Arc::new(MemoryJournal::default());
    let rt = f
        .builder()
        .hook(Arc::new(Loosener))
        .hook(recorder.clone())
        .hook(Arc::new(NoEcho))
        .journal(journal.clone())
        .build()
        .unwrap();
    let s = Session::new("s", "interactive");
    let r = run1(&rt, &s, call("c", "read_file", json!({"path": ".env"}))).await;
    assert_eq!(r.error_type(), Some(ErrorType::PolicyDenied));
    let points: Vec<HookPoint> = recorder.events().into_iter().map(|(p, _)| p).collect();
    assert_eq!(
        points,
        vec![
            HookPoint::BeforeValidate,
            HookPoint::AfterValidate,
            HookPoint::BeforePermission,
            HookPoint::AfterPermission,
            HookPoint::OnError,
            HookPoint::BeforeProject,
            HookPoint::AfterProject,
        ]
    );
    assert!(journal.operations().is_empty());
    assert!(!r.projection().text.contains("TOKEN"));
    let r = run1(&rt, &s, call("e", "echo", json!({"text": "hi"}))).await;
    assert_eq!(
        r.summary(),
        "echo was denied by a policy hook (echo is switched off in this harness)."
    );
    let notes = rt.traces().pop().unwrap().annotations;
    assert!(notes.contains(&("seen".to_owned(), "BeforeProject".to_owned())));
}

/// "Cancel" stops the rest of the turn: later calls end as CANCELLED without running.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_stops_the_turn() {
    let f = Fixture::new();
    let rt = f
        .builder()
        .approver(Scripted::new(ApprovalOutcome::Cancel))
        .build()
        .unwrap();
    let s = Session::new("s", "interactive");
    let results = run(
        &rt,
        &s,
        vec![
            write_call("1", "a.txt"),
            call("2", "echo", json!({"text": "x"})),
        ],
    )
    .await;
    let got: Vec<(Status, Option<ErrorType>)> = results
        .iter()
        .map(|r| (r.status(), r.error_type()))
        .collect();
    assert_eq!(
        got,
        vec![
            (Status::Cancelled, Some(ErrorType::Cancelled)),
            (Status::Cancelled, Some(ErrorType::Cancelled))
        ]
    );
    assert_eq!(results[1].summary(), "echo was cancelled before it started");
}

/// A permission rule that fails to evaluate denies, and the record names it: the rules up to
/// it and the failing rule with its error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_rule_denies_and_is_on_the_chain() {
    let f = Fixture::new();
    f.write("project/toolgate.yaml", "specs: [\"*.yaml\"]\n");
    f.write(
        "project/quotient.yaml",
        r#"name: quotient
version: 1
description: >-
  A test tool whose deny rule divides by the argument n, so the rule cannot be evaluated for
  n = 0. Echoes the text back.
effect: pure
idempotency: pure
parameters:
  type: object
  properties:
    text: {type: string, description: Text to echo., maxLength: 100}
    n: {type: integer, description: The divisor.}
  required: [text, n]
  additionalProperties: false
permissions:
  rules:
    - id: allow-all
      allow: "true"
      reason: Everything is allowed.
    - id: big-quotient
      deny: "10 / args.n > 5"
      reason: Big quotients are refused.
  examples:
    - {args: {text: a, n: 1}, expect: deny}
    - {args: {text: a, n: 5}, expect: allow}
timeout: 1s
exec: {builtin: echo}
"#,
    );
    let project = f.path().join("project");
    let rt = toolgate::runtime::RuntimeBuilder::from_specs(&toolgate::spec::load::LoadOptions {
        paths: vec![project.clone()],
        config: Some(project.join("toolgate.yaml")),
        cwd: project.clone(),
    })
    .unwrap()
    .workspace(f.path())
    .state_dir(f.state.path())
    .build()
    .unwrap();
    let s = Session::new("s", "interactive");
    let r = run1(&rt, &s, call("c", "quotient", json!({"text": "a", "n": 0}))).await;
    assert_eq!(r.error_type(), Some(ErrorType::PolicyDenied));
    let p = rt.traces().pop().unwrap().permission.unwrap();
    let chain: Vec<(&str, bool, bool)> = p
        .chain
        .iter()
        .map(|r| (r.id.as_str(), r.matched, r.error.is_some()))
        .collect();
    assert_eq!(
        chain,
        vec![("allow-all", true, false), ("big-quotient", false, true)]
    );
}

/// `s` on a command tool grants only the exact call, so nothing offers it a card: a card of
/// `tree:.` would read as "any command".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_card_is_proposed_where_cards_do_not_apply() {
    let f = Fixture::new();
    let approver = Scripted::new(ApprovalOutcome::Deny { reason: None });
    let rt = f.builder().approver(approver.clone()).build().unwrap();
    let s = Session::new("s", "interactive");
    let r = run1(&rt, &s, call("c", "bash", json!({"command": "make build"}))).await;
    assert_eq!(r.error_type(), Some(ErrorType::UserDenied));
    assert_eq!(r.summary(), "The user denied this bash call");
    let asked = approver.requests.lock().unwrap()[0].clone();
    assert_eq!(asked.proposed_scope, None);
    // A local write still gets its card.
    let r = run1(&rt, &s, write_call("w", "a.txt")).await;
    assert_eq!(r.error_type(), Some(ErrorType::UserDenied));
    let asked = approver.requests.lock().unwrap()[1].clone();
    assert_eq!(
        asked.proposed_scope.unwrap().writes,
        BTreeSet::from(["file:a.txt".to_owned()])
    );
}
