//! [`ToolHandler`]: the interface of a tool implemented by the embedding program
//! (`exec: {handler: rust}`), and what it receives and returns.
//!
//! A handler gets arguments that already passed schema validation, semantic validation and the
//! permission decision; it cannot see or skip those steps. It reports failures as a
//! [`HandlerError`] with an [`ErrorType`] the model can act on.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;

use tokio_util::sync::CancellationToken;

use crate::ir::ErrorType;

/// What a handler knows about the call it serves.
#[derive(Clone, Debug)]
pub struct HandlerContext {
    /// The model's call id.
    pub call_id: String,
    /// The session the call belongs to.
    pub session_id: String,
    /// The tool's name.
    pub tool: String,
    /// The key the far side can deduplicate on (stable across retries and recovery).
    pub idempotency_key: String,
    /// 1 for the first attempt.
    pub attempt: u32,
    /// The workspace root.
    pub workspace: PathBuf,
    /// Cancelled when the call times out or is cancelled; a handler should stop promptly.
    pub cancel: CancellationToken,
}

/// What a handler produced.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HandlerOutput {
    /// The structured result (validated against the tool's `result` schema when it has one).
    pub structured: Option<serde_json::Value>,
    /// Text output, formatted by the tool's output policy.
    pub text: Option<String>,
}

impl HandlerOutput {
    /// Output with a structured result.
    pub fn structured(value: serde_json::Value) -> Self {
        HandlerOutput {
            structured: Some(value),
            text: None,
        }
    }

    /// Output with text only.
    pub fn text(text: impl Into<String>) -> Self {
        HandlerOutput {
            structured: None,
            text: Some(text.into()),
        }
    }
}

/// A handler's failure: a typed error the model can recover from.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{error_type}: {message}")]
pub struct HandlerError {
    /// The kind of failure (drives retry and the hint the model gets).
    pub error_type: ErrorType,
    /// What went wrong, for the model.
    pub message: String,
}

impl HandlerError {
    /// A failure of a given type.
    pub fn new(error_type: ErrorType, message: impl Into<String>) -> Self {
        HandlerError {
            error_type,
            message: message.into(),
        }
    }
}

/// The future a handler returns.
pub type HandlerFuture<'a> =
    Pin<Box<dyn Future<Output = Result<HandlerOutput, HandlerError>> + Send + 'a>>;

/// A tool implemented in the embedding program.
pub trait ToolHandler: Send + Sync + 'static {
    /// Runs one call with validated, authorized arguments.
    fn call<'a>(&'a self, ctx: HandlerContext, args: serde_json::Value) -> HandlerFuture<'a>;
}

impl<H: ToolHandler + ?Sized> ToolHandler for std::sync::Arc<H> {
    fn call<'a>(&'a self, ctx: HandlerContext, args: serde_json::Value) -> HandlerFuture<'a> {
        (**self).call(ctx, args)
    }
}

impl<F, Fut> ToolHandler for F
where
    F: Fn(HandlerContext, serde_json::Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<HandlerOutput, HandlerError>> + Send + 'static,
{
    fn call<'a>(&'a self, ctx: HandlerContext, args: serde_json::Value) -> HandlerFuture<'a> {
        Box::pin(self(ctx, args))
    }
}
