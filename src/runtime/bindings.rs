//! [`HandlerBindings`]: a bundle together with the handlers bound to its `handler: rust` tools.
//!
//! Generated crates build one from their embedded bundle and typed handlers; the runtime is
//! built from it. Binding checks that the tool exists and is meant to be bound, so a typo
//! fails at start-up, not at the first call.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::ir::{Bundle, ExecSpec};
use crate::runtime::handler::ToolHandler;

/// A handler that cannot be bound, or a tool left without one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BindError {
    /// No tool of that name in the bundle.
    #[error("no tool named `{0}` in the bundle")]
    UnknownTool(String),
    /// The tool runs some other way (builtin, command, MCP).
    #[error(
        "tool `{0}` is not declared `exec: {{handler: rust}}`, so it cannot be bound to a handler"
    )]
    NotAHandlerTool(String),
    /// Bound twice.
    #[error("tool `{0}` already has a handler")]
    AlreadyBound(String),
    /// Tools declared `handler: rust` with no handler.
    #[error("no handler bound for: {}", .0.join(", "))]
    Missing(Vec<String>),
}

/// A bundle and its bound handlers.
#[derive(Clone)]
pub struct HandlerBindings {
    bundle: Arc<Bundle>,
    handlers: BTreeMap<String, Arc<dyn ToolHandler>>,
}

impl std::fmt::Debug for HandlerBindings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandlerBindings")
            .field("tools", &self.bundle.tools.len())
            .field("handlers", &self.handlers.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl HandlerBindings {
    /// Bindings for a bundle, with no handler bound yet.
    pub fn new(bundle: impl Into<Arc<Bundle>>) -> Self {
        HandlerBindings {
            bundle: bundle.into(),
            handlers: BTreeMap::new(),
        }
    }

    /// Binds a handler to a `handler: rust` tool.
    pub fn bind(&mut self, tool: &str, handler: Arc<dyn ToolHandler>) -> Result<(), BindError> {
        let def = self
            .bundle
            .tool(tool)
            .ok_or_else(|| BindError::UnknownTool(tool.to_owned()))?;
        if !matches!(def.exec, ExecSpec::Handler { .. }) {
            return Err(BindError::NotAHandlerTool(tool.to_owned()));
        }
        if self.handlers.contains_key(tool) {
            return Err(BindError::AlreadyBound(tool.to_owned()));
        }
        self.handlers.insert(tool.to_owned(), handler);
        Ok(())
    }

    /// The `handler: rust` tools that have no handler yet.
    pub fn missing(&self) -> Vec<String> {
        self.bundle
            .tools
            .iter()
            .filter(|t| {
                matches!(t.exec, ExecSpec::Handler { .. }) && !self.handlers.contains_key(&t.name)
            })
            .map(|t| t.name.clone())
            .collect()
    }

    /// Fails when a `handler: rust` tool has no handler.
    pub fn check_complete(&self) -> Result<(), BindError> {
        let missing = self.missing();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(BindError::Missing(missing))
        }
    }

    /// The bundle.
    pub fn bundle(&self) -> &Arc<Bundle> {
        &self.bundle
    }

    /// The handler bound to a tool.
    pub fn handler(&self, tool: &str) -> Option<&Arc<dyn ToolHandler>> {
        self.handlers.get(tool)
    }
}
