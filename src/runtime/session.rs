//! [`ToolCall`] (what the model asked for) and [`Session`] (who asked, in which context, and
//! what that session has been granted so far).
//!
//! A session outlives one `execute`: the harness keeps it across turns so that an
//! allow-for-session grant ([`crate::runtime::approval`]) applies to later calls of the same
//! session, and to nothing else.

use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::runtime::approval::{Grant, GrantBook};
use crate::runtime::principal::Principal;
use crate::runtime::registry::{Registry, ResolvedCall, UnknownTool};

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
    /// An idempotency key the client sent with the call (an MCP client's `_meta`): it names one
    /// request of one caller, so a retry with the same key and arguments — from any connection
    /// of the same principal, or of the same session without one — gets the recorded result
    /// instead of a second run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
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
            idempotency_key: None,
        }
    }

    /// The same call with a client's idempotency key.
    pub fn with_idempotency_key(mut self, key: impl Into<String>) -> Self {
        self.idempotency_key = Some(key.into());
        self
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
    served: Option<Arc<ServedTools>>,
    artifact_resources: bool,
    principal: Option<Arc<Principal>>,
    grants: Arc<Mutex<GrantBook>>,
}

/// A set of tools a session is limited to that is not a toolset of toolgate.yaml (what
/// `toolgate serve` serves without a chosen toolset), and what to call it in messages.
#[derive(Debug)]
struct ServedTools {
    names: Vec<String>,
    label: String,
}

impl Session {
    /// A session in a context (`interactive`, `ci`, `headless` or one toolgate.yaml defines).
    pub fn new(id: impl Into<String>, context: impl Into<String>) -> Self {
        Session {
            id: Arc::from(id.into()),
            context: Arc::from(context.into()),
            toolset: None,
            served: None,
            artifact_resources: false,
            principal: None,
            grants: Arc::new(Mutex::new(GrantBook::default())),
        }
    }

    /// Limits the tools the session sees to these (a call of any other is UNKNOWN_TOOL, naming
    /// the close ones among them); `label` names the set in that message.
    pub fn with_tools(mut self, names: Vec<String>, label: impl Into<String>) -> Self {
        self.served = Some(Arc::new(ServedTools {
            names,
            label: label.into(),
        }));
        self
    }

    /// The lookup stage for this session: the call's tool if the session sees it, else
    /// UNKNOWN_TOOL with alternatives among the tools it sees.
    pub(crate) fn lookup(
        &self,
        registry: &Registry,
        call: ToolCall,
    ) -> Result<ResolvedCall, UnknownTool> {
        match &self.served {
            Some(s) => registry.lookup_among(call, &s.names, &s.label),
            None => registry.lookup(call, self.toolset()),
        }
    }

    /// Whether a tool is one the session sees.
    pub(crate) fn sees(&self, registry: &Registry, name: &str) -> bool {
        match &self.served {
            Some(s) => s.names.iter().any(|n| n == name),
            None => match self.toolset() {
                Some(t) => registry.toolset_has(t, name),
                None => registry.get(name).is_some(),
            },
        }
    }

    /// Marks a session whose client can read the artifacts of its results as resources (an
    /// MCP connection of `toolgate serve`), so that projections name that way too.
    pub fn with_artifact_resources(mut self) -> Self {
        self.artifact_resources = true;
        self
    }

    /// Whether the session's client can read artifacts as resources.
    pub fn artifact_resources(&self) -> bool {
        self.artifact_resources
    }

    /// Limits the tools the session sees to one toolset of toolgate.yaml.
    pub fn with_toolset(mut self, toolset: impl Into<String>) -> Self {
        self.toolset = Some(Arc::from(toolset.into()));
        self
    }

    /// The same session, calling as an authenticated principal (`toolgate serve --http`).
    pub fn with_principal(mut self, principal: Principal) -> Self {
        self.principal = Some(Arc::new(principal));
        self
    }

    /// Who calls in this session, when a bearer token said.
    pub fn principal(&self) -> Option<&Principal> {
        self.principal.as_deref()
    }

    /// Who may read the artifacts this session's calls store: the session, and its principal.
    pub fn artifact_owner(&self) -> crate::runtime::artifacts::ArtifactOwner {
        crate::runtime::artifacts::ArtifactOwner::new(
            self.id.to_string(),
            self.principal().map(Principal::id),
        )
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
