//! Extension points: what an embedding program plugs into a [`RuntimeBuilder`], and the types
//! their signatures name.
//!
//! - [`Hook`]: observes every stage, makes a permission decision stricter, redacts projections
//!   (every method has a default: a hook that only redacts writes only [`Hook::redact`]).
//! - [`Approver`]: answers `ask` decisions; [`approver_fn`] makes one of a closure.
//! - [`ToolHandler`]: runs a `handler: rust` tool ([`RuntimeBuilder::bind`]); with typed
//!   arguments and result, [`TypedHandler`] for a generated crate's tool type.
//! - [`Executor`]: replaces a backend ([`RuntimeBuilder::executor`]).
//! - [`Journal`]: where operations are recorded ([`RuntimeBuilder::journal`]); with recovery's
//!   [`Precondition`] and [`Reconciler`].
//! - [`TraceSink`]: where trace records go ([`RuntimeBuilder::trace_sink`]).
//!
//! Every builder method takes the implementation by value; an `Arc` of one implements the
//! trait too, for an embedding program that keeps a handle on what it plugged in.
//!
//! [`RuntimeBuilder`]: crate::runtime::RuntimeBuilder
//! [`RuntimeBuilder::bind`]: crate::runtime::RuntimeBuilder::bind
//! [`RuntimeBuilder::executor`]: crate::runtime::RuntimeBuilder::executor
//! [`RuntimeBuilder::journal`]: crate::runtime::RuntimeBuilder::journal
//! [`RuntimeBuilder::trace_sink`]: crate::runtime::RuntimeBuilder::trace_sink

pub use super::approval::{
    ApprovalFuture, ApprovalOutcome, ApprovalRequest, ApprovalScope, Approver, ApproverFn,
    FixedApprover, Grant, approver_fn,
};
#[cfg(feature = "mcp")]
pub use super::exec::mcp::{McpExecutor, McpUpstreams};
pub use super::exec::{Backend, ExecContext, ExecFailure, ExecFuture, Executor, RawOutcome};
pub use super::handler::{HandlerContext, HandlerError, HandlerFuture, HandlerOutput, ToolHandler};
pub use super::hooks::{Annotations, CallView, Hook, HookPoint, Redactions};
pub use super::journal::{
    AttemptRecord, AuditEntry, Claim, FileHashPrecondition, Journal, JournalError, JournalFuture,
    KeySource, OperationFinish, OperationRecord, OperationStart, OperationState, Precondition,
    PreconditionCheck, ReconcileFuture, Reconciler, Reconciliation, Settled, SettledBy, Settlement,
    derived_key,
};
pub use super::permission::{AuthorizedCall, PermissionRecord, Resolution};
pub use super::trace::{TraceRecord, TraceSink};
pub use super::typed::{Typed, TypedHandler, TypedTool, typed};
pub use super::validate::canonical_json;
pub use super::workspace::Workspace;
