//! The governed runtime: a tool call is a request; everything between request and execution
//! happens here.
//!
//! This module currently holds the handler interface ([`handler`]) that embedding programs and
//! generated crates implement, and [`bindings`], which pairs a bundle with bound handlers.

pub mod bindings;
pub mod handler;

pub use bindings::{BindError, HandlerBindings};
pub use handler::{HandlerContext, HandlerError, HandlerFuture, HandlerOutput, ToolHandler};
