#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

//! `examples/embed`: a harness that depends on a generated crate committed beside it. The
//! committed `toolgate build` output must be current, and the harness must run its scripted
//! turns through the runtime with the outcomes the contracts promise and pass clippy.
//!
//! Cargo builds share `target/generated-crates` with `tests/generated_crate.rs`, so toolgate's
//! runtime compiles once for both.

mod support;

use std::collections::BTreeMap;
use std::process::Command;

/// The flags the committed output was built with, from the repository root (as in
/// examples/embed/README.md). The toolgate path is relative to `generated/rust/`.
const BUILD: &[&str] = &[
    "build",
    "--config",
    "examples/embed/toolgate.yaml",
    "--out",
    "examples/embed/generated",
    "--crate-name",
    "support-tools",
    "--toolgate-path",
    "../../../..",
];

#[test]
fn embed_example_generated_output_is_current() {
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(BUILD)
        .arg("--check")
        .current_dir(support::root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "examples/embed/generated is stale; rerun `toolgate {}`:\n{}\n{}",
        BUILD.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The harness's output per call id: the lines printed under `<- cN reads:`.
fn blocks(out: &str) -> BTreeMap<String, Vec<String>> {
    let mut blocks: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut current = None;
    for line in out.lines() {
        if let Some(id) = line
            .strip_prefix("<- ")
            .and_then(|l| l.strip_suffix(" reads:"))
        {
            current = Some(id.to_owned());
            blocks.entry(id.to_owned()).or_default();
        } else if line.starts_with("==") || line.is_empty() {
            current = None;
        } else if let Some(id) = &current {
            blocks
                .entry(id.clone())
                .or_default()
                .push(line.trim().to_owned());
        }
    }
    blocks
}

#[test]
fn embed_example_runs_its_calls_through_the_runtime() {
    let root = support::root();
    let dir = root.join("examples/embed");
    let target = root.join("target/generated-crates");
    let out = support::cargo(&dir, &target, &["run", "--quiet"]);
    let blocks = blocks(&out);
    let block = |id: &str| -> &Vec<String> {
        blocks
            .get(id)
            .unwrap_or_else(|| panic!("no result for {id}:\n{out}"))
    };
    let has = |id: &str, text: &str| {
        assert!(
            block(id).iter().any(|l| l == text),
            "{id}: no line `{text}`:\n{out}"
        );
    };

    // What the model reads first: status and error type.
    let headers: Vec<(&str, &str)> = ["c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"]
        .into_iter()
        .map(|id| (id, block(id)[0].trim_start_matches("| ")))
        .collect();
    assert_eq!(
        headers,
        [
            ("c1", "lookup_order: error INVALID_ARGUMENTS"),
            ("c2", "lookup_order: success"),
            ("c3", "refund_order: denied POLICY_DENIED"),
            ("c4", "refund_order: success"),
            ("c5", "refund_order: success"),
            ("c6", "refund_order: error PRECONDITION_FAILED"),
            ("c7", "refund_order: error SEMANTIC_VALIDATION_ERROR"),
            ("c8", "refund_order: denied APPROVAL_UNAVAILABLE"),
        ],
        "{out}"
    );

    // The invalid call says what to fix; the fixed one returns the typed order.
    has(
        "c1",
        r#"| - order_id: "1001" does not match "^ORD-[0-9]{4}$""#,
    );
    has(
        "c2",
        "typed: ORD-1001 for Ada Lovelace (Delivered): 2400 cents paid, 0 refunded",
    );
    // The deny rule names itself and the spec's hint warns against splitting the refund.
    assert!(
        block("c3")
            .iter()
            .any(|l| l.contains("rule `finance-only`")),
        "{out}"
    );
    has(
        "c3",
        "| Hint: Tell the customer the finance team will handle this refund; do not split it into smaller refunds.",
    );
    // Allowed by rule, and asked-then-approved: typed results from the handler.
    has(
        "c4",
        "typed: R-0001 paid 1500 cents back on ORD-1001, 900 cents left",
    );
    has(
        "c5",
        "typed: R-0002 paid 4000 cents back on ORD-1002, 8900 cents left",
    );
    // The handler's own refusal, with the spec's hint for its error type.
    has("c6", "| ORD-1001 has 900 cents left to refund, not 1500");
    has("c6", "structured: none");
    has(
        "c7",
        "| A refund for reason `other` needs a note saying what happened.",
    );

    // The lead was asked once, about c5: c4 was allowed by rule, c3 denied before asking, and
    // the batch context has nobody to ask.
    let asked: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("[support lead asked about"))
        .collect();
    assert_eq!(asked.len(), 1, "{out}");
    assert!(
        asked[0].contains("c5") && asked[0].ends_with(": allow_once]"),
        "{out}"
    );

    support::cargo(
        &dir,
        &target,
        &["clippy", "--quiet", "--all-targets", "--", "-D", "warnings"],
    );
}
