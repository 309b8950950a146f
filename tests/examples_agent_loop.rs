//! Runs the agent-loop example (`cargo run --example agent_loop`) for two providers, each from
//! its recorded transcript: the same task, the same calls and the same fix whichever format
//! the model's replies come in. Needs pytest (skipped outside CI without it).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../examples/agent-loop/agent.rs"]
mod agent;
mod common;

use std::path::PathBuf;

use common::toolchain::{Toolchain, require};
use pretty_assertions::assert_eq;
use toolgate::runtime::Provider;

async fn run(provider: Provider) -> (agent::Summary, String) {
    let shim = PathBuf::from(env!("CARGO_BIN_EXE_toolgate"));
    let source = agent::Source::Recorded(agent::transcript(provider));
    let mut printed = Vec::new();
    let summary = agent::run(provider, &source, &shim, &mut printed).await;
    let printed = String::from_utf8(printed).unwrap();
    (
        summary.unwrap_or_else(|e| panic!("{e}\n{printed}")),
        printed,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_chat_and_anthropic_transcripts_fix_the_login_timeout() {
    if !require(&[Toolchain::Pytest]) {
        return;
    }
    for provider in [Provider::OpenaiChat, Provider::Anthropic] {
        let (summary, printed) = run(provider).await;
        assert_eq!(
            summary.calls,
            [
                "search_files",
                "read_file",
                "run_tests",
                "apply_patch",
                "run_tests"
            ],
            "{printed}"
        );
        // Red before the fix, green after.
        assert_eq!(
            summary.tests,
            ["3 failed, 2 passed", "5 passed"],
            "{printed}"
        );
        assert_eq!(summary.changed, ["auth/session.py"], "{printed}");
        assert!(summary.final_text.starts_with("Fixed:"), "{printed}");
    }
}

/// The other formats run the same loop; checked without pytest (run_tests then fails to
/// start, which the loop reports like any other tool error).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_transcript_reaches_the_patch() {
    for provider in Provider::ALL {
        let (summary, printed) = run(*provider).await;
        assert_eq!(summary.calls.len(), 5, "{provider}: {printed}");
        assert_eq!(
            summary.changed,
            ["auth/session.py"],
            "{provider}: {printed}"
        );
    }
}
