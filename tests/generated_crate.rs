#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! The generated crate for the standard library and every emit fixture, built for real: it must
//! `cargo build`, pass `cargo clippy --all-targets -- -D warnings`, and pass its own tests —
//! the schema conformance test toolgate emits (the `schemars` schema of each `<Tool>Args`
//! against the contract, on proptest samples generated here and labelled by the contract's
//! validator) and a binding test written below against the generated handler API.
//!
//! Builds share `target/generated-crates`, so reruns only rebuild the generated crate.

mod support;

use toolgate::emit::rust::{self, RustOptions, ToolgateDependency};

#[path = "support/samples.rs"]
mod samples;

const CRATE: &str = "toolgate-tools-check";

/// Exercises `Handlers` and toolgate's typed adapter on the fixture's handler tools.
const BIND_TEST: &str = r#"
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::future::Future;
use std::task::{Context, Poll, Waker};

use toolgate::ir::ErrorType;
use toolgate::runtime::extend::{HandlerContext, HandlerError, HandlerOutput, TypedHandler};
use toolgate_tools_check::*;

fn ready<F: Future>(f: F) -> F::Output {
    let mut f = std::pin::pin!(f);
    match f.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("handler future was not ready"),
    }
}

fn ctx(tool: &str) -> HandlerContext {
    HandlerContext {
        call_id: "c1".into(),
        session_id: "s1".into(),
        tool: tool.into(),
        idempotency_key: "k1".into(),
        attempt: 1,
        workspace: std::path::PathBuf::from("."),
        cancel: tokio_util::sync::CancellationToken::new(),
    }
}

struct Orders;
impl TypedHandler<CreateOrder> for Orders {
    async fn call(&self, _ctx: HandlerContext, args: CreateOrderArgs) -> Result<CreateOrderResult, HandlerError> {
        if args.items.is_empty() {
            return Err(HandlerError::new(ErrorType::SemanticValidationError, "no items"));
        }
        Ok(CreateOrderResult {
            order_id: format!("o-{}", args.customer.name),
            status: CreateOrderStatus::Placed,
            total: args.items.iter().map(|i| i.quantity as f64).sum(),
        })
    }
}

struct Routes;
impl TypedHandler<PlanRoute> for Routes {
    async fn call(&self, _ctx: HandlerContext, args: PlanRouteArgs) -> Result<PlanRouteResult, HandlerError> {
        let leg = PlanRouteLeg { meters: (args.origin.lat - args.destination.lat).abs(), sub_legs: None };
        Ok(PlanRouteResult { legs: vec![leg] })
    }
}

struct Matcher;
impl TypedHandler<MatchType> for Matcher {
    async fn call(&self, _ctx: HandlerContext, args: MatchTypeArgs) -> Result<MatchTypeResult, HandlerError> {
        Ok(MatchTypeResult { matched: args.type_ == "x" && args.self_ != Some(false) })
    }
}

struct Settings;
impl TypedHandler<SetValue> for Settings {
    async fn call(&self, _ctx: HandlerContext, _args: SetValueArgs) -> Result<SetValueResult, HandlerError> {
        Ok("rev-2".to_owned())
    }
}

struct Notes;
impl TypedHandler<ReadNote> for Notes {
    async fn call(&self, _ctx: HandlerContext, args: ReadNoteArgs) -> Result<ReadNoteResult, HandlerError> {
        Ok(ReadNoteResult { text: args.title })
    }
}
impl TypedHandler<WriteNote> for Notes {
    async fn call(&self, _ctx: HandlerContext, _args: WriteNoteArgs) -> Result<WriteNoteResult, HandlerError> {
        Ok(WriteNoteResult { existed: true })
    }
}

#[test]
fn handlers_bind_every_handler_tool() {
    let bindings = Handlers {
        create_order: Orders,
        plan_route: Routes,
        match_type: Matcher,
        set_value: Settings,
        read_note: Notes,
        write_note: Notes,
    }
    .bind()
    .unwrap();
    for tool in ["create_order", "plan_route", "match_type", "set_value", "read_note", "write_note"] {
        assert!(bindings.handler(tool).is_some(), "{tool}");
    }
}

#[test]
fn bound_handlers_run_with_typed_arguments() {
    let bindings = Handlers {
        create_order: Orders,
        plan_route: Routes,
        match_type: Matcher,
        set_value: Settings,
        read_note: Notes,
        write_note: Notes,
    }
    .bind()
    .unwrap();
    let h = bindings.handler("create_order").unwrap();
    let args = serde_json::json!({
        "customer": {"name": "Ada", "email": "ada@example.com"},
        "shipping": {"address": {"street": "Main 1", "city": "X", "zip": "12345"}},
        "items": [{"sku": "ABC-1234", "quantity": 2}],
        "coupon": null
    });
    let out = ready(h.call(ctx("create_order"), args)).unwrap();
    assert_eq!(
        out,
        HandlerOutput::structured(serde_json::json!({"order_id": "o-Ada", "status": "placed", "total": 2.0}))
    );
    let err = ready(h.call(ctx("create_order"), serde_json::json!({"items": 3}))).unwrap_err();
    assert_eq!(err.error_type, ErrorType::InvalidArguments);
    let h = bindings.handler("match_type").unwrap();
    let out = ready(h.call(ctx("match_type"), serde_json::json!({"type": "x", "self": true}))).unwrap();
    assert_eq!(out.structured, Some(serde_json::json!({"matched": true})));
    assert_eq!(Tools::bundle().unwrap().tools.len(), bindings.bundle().tools.len());
}
"#;

#[test]
fn generated_crate_builds_is_clippy_clean_and_conforms() {
    let root = support::root();
    let bundle = support::bundle(
        &root,
        &[
            "tool-specs",
            "tests/fixtures/emit",
            "tests/fixtures/emit-project/specs",
        ],
    );
    let bundle_json =
        toolgate::emit::to_json_text(&serde_json::to_value(&bundle).unwrap()).unwrap();
    let options = RustOptions {
        crate_name: CRATE.into(),
        toolgate: ToolgateDependency::Path(root.display().to_string()),
        conformance_tests: true,
    };
    let mut files = rust::emit_crate(&bundle, &bundle_json, &options).unwrap();
    for tool in &bundle.tools {
        let samples = samples::samples(&tool.parameters, 48);
        assert!(
            samples.iter().any(|s| s["valid"] == true),
            "{}: no valid sample",
            tool.name
        );
        assert!(
            samples.iter().any(|s| s["valid"] == false),
            "{}: no invalid sample",
            tool.name
        );
        files.insert(
            format!("tests/samples/{}.json", tool.name),
            serde_json::to_string_pretty(&samples).unwrap(),
        );
    }
    files.insert("tests/bind.rs", BIND_TEST);
    let dir = tempfile::tempdir().unwrap();
    files.write_to(dir.path()).unwrap();
    // The binding test needs a CancellationToken.
    let manifest = dir.path().join("Cargo.toml");
    let mut doc: toml_edit::DocumentMut =
        std::fs::read_to_string(&manifest).unwrap().parse().unwrap();
    doc["dev-dependencies"]["tokio-util"] = toml_edit::value("0.7");
    std::fs::write(&manifest, doc.to_string()).unwrap();
    // Resolve to the versions toolgate itself was tested with.
    std::fs::copy(root.join("Cargo.lock"), dir.path().join("Cargo.lock")).unwrap();

    let target = root.join("target/generated-crates");
    support::cargo(dir.path(), &target, &["build", "--quiet"]);
    support::cargo(
        dir.path(),
        &target,
        &["clippy", "--quiet", "--all-targets", "--", "-D", "warnings"],
    );
    let report = support::cargo(dir.path(), &target, &["test", "--quiet"]);
    let passed: usize = report
        .lines()
        .filter_map(|l| l.strip_prefix("test result: ok. "))
        .filter_map(|l| l.split(' ').next()?.parse::<usize>().ok())
        .sum();
    // One conformance test per tool, the two binding tests, and the crate documentation's two
    // examples (the end-to-end one compiles; leaving a handler out of `Handlers` does not).
    assert_eq!(passed, bundle.tools.len() + 2 + 2, "{report}");
}

#[test]
fn build_rs_example_compiles_its_contracts_and_runs() {
    let root = support::root();
    let dir = root.join("examples/build-rs");
    let target = root.join("target/generated-crates");
    let out = support::cargo(&dir, &target, &["run", "--quiet"]);
    assert_eq!(out.trim(), r#"{"greeting":"HELLO, ADA!"}"#);
    support::cargo(
        &dir,
        &target,
        &["clippy", "--quiet", "--all-targets", "--", "-D", "warnings"],
    );
}
