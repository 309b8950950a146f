//! The handler backend: `exec: {handler: rust}` tools run the [`ToolHandler`](crate::runtime::extend::ToolHandler) the embedding
//! program bound in [`HandlerBindings`]. Every poll of the handler's future is guarded, so a
//! handler that panics becomes a RUNTIME_EXCEPTION result instead of taking the runtime down;
//! a handler still running when the pipeline gives up on it is dropped with the attempt.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};

use serde_json::Value;

use crate::ir::ErrorType;
use crate::runtime::bindings::HandlerBindings;
use crate::runtime::exec::{ExecContext, ExecFuture, Executor, RawOutcome};
use crate::runtime::handler::{HandlerContext, HandlerError, HandlerFuture, HandlerOutput};
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

/// A handler future whose panics are caught and reported as `Err(())`. (No task is spawned:
/// a spawn per call costs more than the rest of the pipeline.)
struct CatchUnwind<'a>(HandlerFuture<'a>);

impl Future for CatchUnwind<'_> {
    type Output = Result<Result<HandlerOutput, HandlerError>, ()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let fut = &mut self.0;
        match std::panic::catch_unwind(AssertUnwindSafe(|| fut.as_mut().poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(r)) => Poll::Ready(Ok(r)),
            Err(_) => Poll::Ready(Err(())),
        }
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
            match CatchUnwind(handler.call(hctx, args)).await {
                Ok(Ok(out)) => outcome(out),
                Ok(Err(e)) => RawOutcome::failure(e.error_type, e.message),
                Err(()) => RawOutcome::failure(
                    ErrorType::RuntimeException,
                    format!("the handler of `{name}` panicked"),
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
