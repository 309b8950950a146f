//! The governed runtime: a tool call is a request; everything between request and execution
//! happens here.
//!
//! Build a [`ToolRuntime`] with a [`RuntimeBuilder`] (from a [`crate::ir::Bundle`], from
//! [`HandlerBindings`] of a generated crate, or — with the `compiler` feature — straight from the
//! specs), then hand it the model's calls:
//!
//! ```no_run
//! # async fn demo(bundle: toolgate::ir::Bundle) -> Result<(), Box<dyn std::error::Error>> {
//! use toolgate::runtime::{RuntimeBuilder, Session, ToolCall};
//! use tokio_util::sync::CancellationToken;
//!
//! let runtime = RuntimeBuilder::from_bundle(bundle).workspace("/path/to/repo").build()?;
//! let session = Session::new("session-1", "interactive");
//! let calls = vec![ToolCall::new("c1", "read_file", serde_json::json!({"path": "src/main.rs"}))];
//! for result in runtime.execute(calls, &session, CancellationToken::new()).await? {
//!     println!("{}", result.projection().text);
//! }
//! # Ok(()) }
//! ```
//!
//! The stages, in the order [`pipeline`] runs them: [`registry`] lookup → [`validate`] (schema,
//! then CEL rules and the [`workspace`] path policy) → [`permission`] (with the [`approval`]
//! [`Approver`]) → [`scheduler`] → [`journal`] → [`exec`] (under [`retry`]) → [`result`]
//! normalization → [`projection`]. [`hooks`] observe every stage; [`trace`] and [`metrics`]
//! record every call; [`artifacts`] keeps large outputs.

pub mod approval;
pub mod artifacts;
pub mod bindings;
pub mod build;
pub mod exec;
pub mod format;
pub mod handler;
pub mod hooks;
pub mod journal;
pub mod metrics;
pub mod output;
pub mod permission;
pub mod pipeline;
pub mod projection;
pub mod question;
pub mod registry;
pub mod result;
pub mod retry;
pub mod scheduler;
pub mod session;
pub mod trace;
pub mod validate;
pub mod workspace;

pub use approval::{ApprovalOutcome, ApprovalRequest, ApprovalScope, Approver};
pub use bindings::{BindError, HandlerBindings};
pub use build::{BuildError, RuntimeBuilder};
pub use exec::{Backend, ExecContext, Executor, RawOutcome};
pub use handler::{HandlerContext, HandlerError, HandlerFuture, HandlerOutput, ToolHandler};
pub use hooks::{Annotations, CallView, Hook, HookPoint, Redactions};
pub use journal::{Journal, MemoryJournal};
pub use pipeline::{EngineError, Execution, ToolRuntime};
pub use projection::Projection;
pub use result::ToolResult;
pub use scheduler::Plan;
pub use session::{Session, ToolCall};
