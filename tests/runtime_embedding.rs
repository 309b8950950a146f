//! The embedding surface: a closure as the approver, binding errors returned by `build` at the
//! end of the builder chain, and a runtime whose handlers are all bound.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::sync::Arc;

use common::{Fixture, call, run1};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use toolgate::ir::{ErrorType, Status};
use toolgate::runtime::extend::{ApprovalOutcome, HandlerContext, HandlerOutput, approver_fn};
use toolgate::runtime::{BindError, BuildError, Session};

/// A closure answers `ask`: it sees the request in full and allows only one path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closure_is_an_approver() {
    let f = Fixture::new();
    let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = asked.clone();
    let rt = f
        .builder()
        .approver(approver_fn(move |request| {
            seen.lock().unwrap().push(request.tool.clone());
            if request.arguments.contains("\"allowed.txt\"") {
                ApprovalOutcome::AllowOnce
            } else {
                ApprovalOutcome::Deny {
                    reason: Some("only allowed.txt".into()),
                }
            }
        }))
        .build()
        .unwrap();
    let s = Session::new("s", "interactive");
    let write =
        |id: &str, path: &str| call(id, "write_file", json!({"path": path, "content": "x\n"}));
    let allowed = run1(&rt, &s, write("c1", "allowed.txt")).await;
    let denied = run1(&rt, &s, write("c2", "other.txt")).await;
    assert_eq!(
        (allowed.status(), denied.status(), denied.error_type()),
        (Status::Success, Status::Denied, Some(ErrorType::UserDenied)),
        "{}",
        denied.projection().text
    );
    assert!(f.path().join("allowed.txt").exists());
    assert!(!f.path().join("other.txt").exists());
    assert_eq!(*asked.lock().unwrap(), vec!["write_file", "write_file"]);
}

async fn echo(
    _ctx: HandlerContext,
    args: Value,
) -> Result<HandlerOutput, toolgate::runtime::extend::HandlerError> {
    Ok(HandlerOutput::structured(args))
}

/// `bind` keeps the chain going; the first wrong binding is what `build` returns.
#[test]
fn a_wrong_binding_is_returned_by_build() {
    let f = Fixture::new();
    let e = f
        .builder()
        .bind("no_such_tool", echo)
        .bind("read_file", echo)
        .build()
        .unwrap_err();
    assert!(
        matches!(&e, BuildError::Bind(BindError::UnknownTool(t)) if t == "no_such_tool"),
        "{e}"
    );
    let e = f.builder().bind("echo_handler", echo).build().unwrap_err();
    assert!(
        matches!(&e, BuildError::Bind(BindError::AlreadyBound(t)) if t == "echo_handler"),
        "{e}"
    );
    // Every handler tool bound once (the fixture binds them all): it builds.
    f.builder().build().unwrap();
}
