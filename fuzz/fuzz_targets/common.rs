//! What the runtime-backed targets share: the fixed project in `fuzz/project`, built once per
//! process into a runtime over a scratch workspace.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use toolgate::runtime::extend::{HandlerContext, HandlerOutput};
use toolgate::runtime::{RuntimeBuilder, ToolRuntime};
use toolgate::spec::load::LoadOptions;

/// The fuzz crate's folder (the project lies in `project/`).
fn fuzz_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A scratch workspace and state folder of this process, with a few files to read.
fn scratch() -> (PathBuf, PathBuf) {
    let base = std::env::temp_dir().join(format!("toolgate-fuzz-{}", std::process::id()));
    let ws = base.join("workspace");
    let state = base.join("state");
    for dir in [ws.join("src"), ws.join(".git"), state.clone()] {
        if let Err(e) = std::fs::create_dir_all(&dir) {
            fail(&format!("cannot create {}: {e}", dir.display()));
        }
    }
    for (file, text) in [
        ("src/main.rs", "fn main() {\n    println!(\"hello\");\n}\n"),
        ("README.md", "# scratch\n\nA workspace for the fuzz targets.\n"),
        (".env", "SECRET=1\n"),
        (".git/config", "[core]\n"),
    ] {
        if let Err(e) = std::fs::write(ws.join(file), text) {
            fail(&format!("cannot write {file}: {e}"));
        }
    }
    (ws, state)
}

/// Setup that cannot go on: the harness itself is broken, not the code under test.
fn fail(msg: &str) -> ! {
    eprintln!("fuzz setup: {msg}");
    std::process::exit(2);
}

/// The runtime over the fixed project, `fuzz_args` bound to a handler that returns the size of
/// its arguments.
pub fn runtime() -> ToolRuntime {
    let dir = fuzz_dir();
    let project = dir.join("project");
    let (ws, state) = scratch();
    let size = |_ctx: HandlerContext, args: Value| async move {
        Ok(HandlerOutput::text(args.to_string().len().to_string()))
    };
    let builder = match RuntimeBuilder::from_specs(&LoadOptions {
        // Paths given here replace toolgate.yaml's `specs`: name both folders it lists.
        paths: vec![project.clone(), dir.join("../tool-specs")],
        config: Some(project.join("toolgate.yaml")),
        cwd: project,
    }) {
        Ok(b) => b,
        Err(e) => fail(&format!("the fuzz project does not load: {e}")),
    };
    match builder
        .workspace(&ws)
        .state_dir(&state)
        .bind("fuzz_args", Arc::new(size))
        .build()
    {
        Ok(rt) => rt,
        Err(e) => fail(&format!("the fuzz runtime does not build: {e}")),
    }
}

/// A tokio runtime like `toolgate serve`'s: tasks run on a worker thread with tokio's default
/// 2 MiB stack (one worker: the machine's cores belong to the fuzzer), with an alternate
/// signal stack so that an overflow there is reported.
pub fn tokio_runtime() -> tokio::runtime::Runtime {
    crate::stack::prepare();
    let built = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_stack_size(crate::stack::THREAD_STACK)
        .on_thread_start(|| std::mem::forget(crate::stack::AltStack::install()))
        .enable_all()
        .build();
    match built {
        Ok(rt) => rt,
        Err(e) => fail(&format!("no tokio runtime: {e}")),
    }
}
