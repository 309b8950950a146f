//! Argument validation: the input is the JSON arguments of one call of the fixed contract
//! `fuzz_args` (fuzz/project/fuzz_args.yaml), run through the runtime's whole pipeline —
//! schema, validate rules, path policy, permission rules — in front of a Rust handler. Every
//! input must give a result (a refusal or the handler's answer), never a panic or an abort;
//! and a refusal stays within the project's output budget.
#![no_main]

mod common;
mod stack;

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use toolgate::runtime::{CancellationToken, Session, ToolCall, ToolRuntime};

static RUNTIME: LazyLock<ToolRuntime> = LazyLock::new(common::runtime);
static TOKIO: LazyLock<tokio::runtime::Runtime> = LazyLock::new(common::tokio_runtime);

/// The project's `output.max_bytes` (32 KiB) with room for the refusal's own framing.
const REFUSAL_BUDGET: usize = 40 * 1024;

fuzz_target!(|data: &[u8]| {
    let Ok(args) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    // On a worker, as `serve` runs a call (the main thread's larger stack would hide depth
    // bugs).
    let results = TOKIO.block_on(async {
        tokio::spawn(async {
            let session = Session::new("fuzz", "ci");
            let call = ToolCall::new("c1", "fuzz_args", args);
            RUNTIME.execute(vec![call], &session, CancellationToken::new()).await
        })
        .await
    });
    let Ok(Ok(results)) = results else {
        return;
    };
    for r in results {
        let text = &r.projection().text;
        assert!(
            text.len() <= REFUSAL_BUDGET,
            "a result of {} bytes passes the {REFUSAL_BUDGET}-byte budget: {}…",
            text.len(),
            text.chars().take(200).collect::<String>()
        );
    }
});
