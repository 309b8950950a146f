//! The handler backend: `exec: {handler: rust}` tools run the [`ToolHandler`] the embedding
//! program bound in [`HandlerBindings`]. Each call runs on its own task, so a handler that
//! panics becomes a RUNTIME_EXCEPTION result instead of taking the runtime down, and a handler
//! still running when the pipeline gives up on it is aborted.

use serde_json::Value;
use tokio::task::JoinHandle;

use crate::ir::ErrorType;
use crate::runtime::bindings::HandlerBindings;
use crate::runtime::exec::{ExecContext, ExecFuture, Executor, RawOutcome};
use crate::runtime::handler::{HandlerContext, HandlerOutput};
use crate::runtime::permission::AuthorizedCall;

/// Runs bound handlers.
#[derive(Clone, Debug, Default)]
pub struct HandlerExecutor {
    bindings: Option<HandlerBindings>,
}

impl HandlerExecutor {
    /// An executor for these bindings.
    pub fn new(bindings: Option<HandlerBindings>) -> Self {
        HandlerExecutor { bindings }
    }
}

/// Aborts the task when dropped (the pipeline dropped the attempt after its grace period).
struct AbortOnDrop<T>(JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Executor for HandlerExecutor {
    fn run<'a>(&'a self, call: AuthorizedCall, ctx: ExecContext) -> ExecFuture<'a> {
        let name = call.definition().name.clone();
        let handler = self
            .bindings
            .as_ref()
            .and_then(|b| b.handler(&name))
            .cloned();
        let hctx = HandlerContext {
            call_id: call.call_id().to_owned(),
            session_id: ctx.session_id.clone(),
            tool: name.clone(),
            idempotency_key: ctx.idempotency_key.clone(),
            attempt: call.attempt(),
            workspace: ctx.workspace.root().to_path_buf(),
            cancel: ctx.cancel.clone(),
        };
        let args = call.arguments().clone();
        Box::pin(async move {
            let Some(handler) = handler else {
                return RawOutcome::failure(
                    ErrorType::RuntimeException,
                    format!("no handler is bound to `{name}`"),
                );
            };
            let mut task = AbortOnDrop(tokio::spawn(async move { handler.call(hctx, args).await }));
            match (&mut task.0).await {
                Ok(Ok(out)) => outcome(out),
                Ok(Err(e)) => RawOutcome::failure(e.error_type, e.message),
                Err(e) if e.is_panic() => RawOutcome::failure(
                    ErrorType::RuntimeException,
                    format!("the handler of `{name}` panicked"),
                ),
                Err(_) => RawOutcome::failure(
                    ErrorType::Cancelled,
                    format!("the handler of `{name}` was stopped"),
                ),
            }
        })
    }
}

/// A handler's output as raw facts; structured-only output is shown to the model as JSON.
fn outcome(out: HandlerOutput) -> RawOutcome {
    let text = match (&out.text, &out.structured) {
        (Some(t), _) => Some(t.clone()),
        (None, Some(v)) => Some(pretty(v)),
        (None, None) => None,
    };
    RawOutcome {
        structured: out.structured,
        text,
        ..RawOutcome::default()
    }
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}
