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
//! let runtime = RuntimeBuilder::from_bundle(bundle, "/path/to/repo").build()?;
//! let session = Session::new("session-1", "interactive");
//! let calls = vec![ToolCall::new("c1", "read_file", serde_json::json!({"path": "src/main.rs"}))];
//! for result in runtime.execute(calls, &session, CancellationToken::new()).await? {
//!     println!("{}", result.projection().text);
//! }
//! # Ok(()) }
//! ```
//!
//! The stages run in this order, and are private to the runtime: registry lookup → validation
//! (schema, then CEL rules and the workspace path policy) → permission (with the approver) →
//! scheduling → the journal → execution (under retry) → result normalization → projection.
//! Hooks observe every stage; traces and metrics record every call; the artifact store keeps
//! large outputs.
//!
//! The surface: what a harness uses to run calls is re-exported here; what it plugs in — hooks,
//! approvers, handlers, executors, journals, trace sinks, recovery's preconditions and
//! reconcilers, and the types their signatures name — is in [`extend`]; what the kernel offers
//! the process sandbox, and the exec shim's entry point, are in [`sandbox`].

// What only the command line and the MCP server use (the question renderer, the registry
// handle, the MCP idempotency key) is dead code in a build of the runtime alone.
#![cfg_attr(not(all(feature = "cli", feature = "mcp")), allow(dead_code))]

pub(crate) mod approval;
pub(crate) mod artifacts;
pub(crate) mod bindings;
pub(crate) mod builder;
pub(crate) mod exec;
pub mod extend;
pub(crate) mod format;
pub(crate) mod handler;
pub(crate) mod hooks;
pub(crate) mod journal;
pub(crate) mod metrics;
pub(crate) mod output;
pub(crate) mod permission;
pub(crate) mod pipeline;
pub(crate) mod principal;
pub(crate) mod projection;
pub mod provider;
pub(crate) mod question;
pub(crate) mod registry;
pub(crate) mod result;
pub(crate) mod retry;
pub mod sandbox;
pub(crate) mod scheduler;
pub(crate) mod session;
pub(crate) mod trace;
pub(crate) mod typed;
pub(crate) mod validate;
pub(crate) mod workspace;

pub use artifacts::{ArtifactMeta, ArtifactRef, ArtifactStore};
pub use bindings::{BindError, HandlerBindings};
pub use builder::{BuildError, LOCK_DIR_ENV, RuntimeBuilder};
#[cfg(feature = "journal-postgres")]
pub use journal::postgres::{
    DEFAULT_LEASE, LOCK_CLASS, PostgresJournal, PostgresOptions,
    SCHEMA_VERSION as POSTGRES_SCHEMA_VERSION, check_url as check_journal_url, is_postgres_url,
};
#[cfg(feature = "journal-sqlite")]
pub use journal::sqlite::{
    JOURNAL_FILE, JournalReader, RecordedArguments, SCHEMA_VERSION, SqliteJournal, SqliteOptions,
};
pub use journal::{MemoryJournal, RecoveryReport};
pub use metrics::MetricsSnapshot;
pub use permission::PROTECTED_HINT;
pub use pipeline::{EngineError, Execution, ToolRuntime};
pub use principal::Principal;
pub use projection::Projection;
pub use provider::{Provider, ProviderAdapter, RenderedTurn, ReplyError, Turn, TurnError};
pub use result::ToolResult;
pub use scheduler::{Footprint, LOCK_FILE, Plan, ScheduleInput, WaitedBehind};
#[cfg(feature = "journal-postgres")]
pub use scheduler::{PgLocks, pg_locks::INTENT_SLOTS};
pub use session::{Session, ToolCall};
/// The token that cancels a turn ([`ToolRuntime::execute`]).
pub use tokio_util::sync::CancellationToken;
