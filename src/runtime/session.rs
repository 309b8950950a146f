//! [`ToolCall`] (what the model asked for) and [`Session`] (who asked, in which context, and
//! what that session has been granted so far).
//!
//! A session outlives one `execute`: the harness keeps it across turns so that an
//! allow-for-session grant ([`crate::runtime::approval`]) applies to later calls of the same
//! session, and to nothing else.

use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::runtime::approval::{Grant, GrantBook};

/// One tool call as the model produced it: untrusted input.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The model's id for the call (generated when the model gave none).
    #[serde(default = "new_call_id")]
    pub call_id: String,
    /// The tool the model named.
    #[serde(alias = "tool")]
    pub name: String,
    /// The arguments, as the model wrote them.
    #[serde(default = "empty_object", alias = "args")]
    pub arguments: serde_json::Value,
}

impl ToolCall {
    /// A call.
    pub fn new(
        call_id: impl Into<String>,
        name: impl Into<String>,
        arguments: serde_json::Value,
    ) -> Self {
        ToolCall {
            call_id: call_id.into(),
            name: name.into(),
            arguments,
        }
    }
}

/// A fresh, time-ordered call id (`call-` + UUID v7).
pub fn new_call_id() -> String {
    format!("call-{}", uuid::Uuid::now_v7())
}

fn empty_object() -> serde_json::Value {
    serde_json::Value::Object(serde_json::Map::new())
}

/// A conversation's identity, its execution context and its approval grants.
///
/// Cloning shares the grants: every clone is the same session.
#[derive(Clone, Debug)]
pub struct Session {
    id: Arc<str>,
    context: Arc<str>,
    toolset: Option<Arc<str>>,
    grants: Arc<Mutex<GrantBook>>,
}

impl Session {
    /// A session in a context (`interactive`, `ci`, `headless` or one toolgate.yaml defines).
    pub fn new(id: impl Into<String>, context: impl Into<String>) -> Self {
        Session {
            id: Arc::from(id.into()),
            context: Arc::from(context.into()),
            toolset: None,
            grants: Arc::new(Mutex::new(GrantBook::default())),
        }
    }

    /// Limits the tools the session sees to one toolset of toolgate.yaml.
    pub fn with_toolset(mut self, toolset: impl Into<String>) -> Self {
        self.toolset = Some(Arc::from(toolset.into()));
        self
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The context name.
    pub fn context(&self) -> &str {
        &self.context
    }

    /// The toolset the session is limited to, if any.
    pub fn toolset(&self) -> Option<&str> {
        self.toolset.as_deref()
    }

    /// The grants given so far, for display and audit.
    pub fn grants(&self) -> Vec<Grant> {
        self.book(|b| b.grants().to_vec())
    }

    /// Runs `f` on the grant book. A poisoned lock only means another thread panicked while
    /// holding it; the book itself is a plain list that is never left half-updated.
    pub(crate) fn book<T>(&self, f: impl FnOnce(&mut GrantBook) -> T) -> T {
        let mut guard = match self.grants.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        f(&mut guard)
    }
}
