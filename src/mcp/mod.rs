//! Serving a toolset over MCP (seed chapter §44: MCP is an access protocol, not a runtime).
//!
//! MCP standardizes how a client discovers and invokes tools; it says nothing about
//! permission, sandboxing, retries, idempotency, conflicts or journaling. [`ToolgateServer`]
//! puts toolgate's runtime behind a standard MCP face: `tools/list` comes from the contracts
//! ([`tools`]), and every `tools/call` goes through the whole pipeline — validation,
//! permission (with `ask` answered by the client through elicitation, [`approval`]),
//! scheduling, the journal, execution under timeout and cancellation, output policy and
//! projection. Tool failures — and calls of tools the server does not serve — are `isError`
//! results carrying the projection the model reads; only a malformed request is a JSON-RPC
//! error. Output a result cuts is kept as an artifact, which the connection's client can read
//! as an MCP resource ([`resources`]).
//!
//! ```no_run
//! # async fn demo(builder: toolgate::runtime::RuntimeBuilder) -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use toolgate::mcp::{ElicitationApprover, ServeOptions, ToolgateServer};
//!
//! let approver = Arc::new(ElicitationApprover::new());
//! let runtime = builder.approver(approver.clone()).build()?;
//! ToolgateServer::new(runtime, Some(approver), ServeOptions::default())?
//!     .serve_stdio()
//!     .await?;
//! # Ok(()) }
//! ```
//!
//! The other direction — toolgate as the client of upstream MCP servers — is the `mcp`
//! backend, `crate::runtime::exec::mcp`.

pub mod approval;
#[cfg(feature = "serve-http")]
pub mod auth;
#[cfg(feature = "serve-http")]
pub mod http;
#[cfg(feature = "serve-http")]
pub mod listen;
pub mod resources;
pub mod server;
#[cfg(feature = "serve-http")]
pub mod sessions;
pub mod tools;

pub use approval::ElicitationApprover;
pub use server::{Exposure, ServeError, ServeOptions, ToolgateServer};
pub use tools::{McpTool, call_result, mcp_tool};
