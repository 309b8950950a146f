//! Provider glue: a model's reply in, [`ToolCall`]s for the runtime, the provider's result
//! messages out.
//!
//! A harness that talks to OpenAI (Chat Completions or Responses), Anthropic Messages, Gemini
//! or an MCP client hands the reply to [`ProviderAdapter::parse`] and gets a [`Turn`]: every
//! call of the reply, ids preserved, to be run together by one [`ToolRuntime::run`] so the
//! scheduler sees them as one batch. [`ProviderAdapter::render`] turns the results into what
//! the provider expects next (a `role: tool` message per call, `function_call_output` items, one
//! user message of `tool_result` blocks, `functionResponse` parts, JSON-RPC responses holding a
//! `CallToolResult`); [`ProviderAdapter::run`] does all three.
//!
//! A call is never lost to the glue: arguments that are not JSON, or not an object, go to the
//! runtime as written and come back as INVALID_ARGUMENTS for the same call id; a name no tool
//! has comes back as the runtime's UNKNOWN_TOOL observation with its alternatives; a stand-in
//! name the emitters wrote for a provider that rejects the contract's own
//! ([`Provider::tool_name`]) maps back to the contract. Only a reply that is not of the
//! provider's shape at all is an error ([`ReplyError`]).

mod anthropic;
mod gemini;
mod mcp;
mod openai_chat;
mod openai_responses;

use serde_json::Value;

pub use crate::ir::{Provider, ProviderNames};
use crate::runtime::{
    CancellationToken, EngineError, Plan, Session, ToolCall, ToolResult, ToolRuntime,
};

/// A reply that is not of the provider's documented shape.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReplyError {
    /// The reply text is not JSON.
    #[error("the {provider} reply is not JSON: {source}")]
    NotJson {
        /// The provider.
        provider: Provider,
        /// The parser's error (line and column).
        source: serde_json::Error,
    },
    /// A field the provider always sends is missing or of another type.
    #[error("the {provider} reply has no {what} at `{at}`; {expected}")]
    Shape {
        /// The provider.
        provider: Provider,
        /// Where, as a path into the reply (`choices[0].message`).
        at: String,
        /// What was looked for.
        what: &'static str,
        /// What the provider's format has there.
        expected: &'static str,
    },
}

/// A failure of [`ProviderAdapter::run`]: the reply, or the engine.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TurnError {
    /// The reply is not of the provider's shape.
    #[error(transparent)]
    Reply(#[from] ReplyError),
    /// The runtime itself failed (see [`EngineError`]).
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// The arguments of a call as the reply holds them.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum WireArguments {
    /// A JSON value (an object when well formed).
    Json(Value),
    /// A JSON text that does not parse, kept as written.
    Unparsed(String),
}

impl WireArguments {
    /// Arguments sent as a JSON text (OpenAI): parsed when they parse; an empty text is `{}`
    /// (some OpenAI-compatible servers send it for a call without arguments).
    pub(crate) fn from_text(text: &str) -> Self {
        if text.trim().is_empty() {
            return WireArguments::Json(Value::Object(serde_json::Map::new()));
        }
        match serde_json::from_str(text) {
            Ok(v) => WireArguments::Json(v),
            Err(_) => WireArguments::Unparsed(text.to_owned()),
        }
    }

    /// An OpenAI `arguments` field: a JSON text as documented, the object itself as some
    /// compatible servers send it, or `{}` when absent.
    pub(crate) fn from_openai(field: Option<&Value>) -> Self {
        match field {
            Some(Value::String(s)) => WireArguments::from_text(s),
            Some(v) => WireArguments::Json(v.clone()),
            None => WireArguments::Json(Value::Object(serde_json::Map::new())),
        }
    }

    fn into_value(self) -> Value {
        match self {
            WireArguments::Json(v) => v,
            // The runtime's validation reports a text as INVALID_ARGUMENTS, naming the JSON
            // error (validate::schema_check).
            WireArguments::Unparsed(s) => Value::String(s),
        }
    }
}

/// One call as the reply holds it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct WireCall {
    /// The call id the results must carry (the provider's, or one made for Gemini).
    pub id: String,
    /// The name the model called the tool by.
    pub called: String,
    /// The arguments.
    pub arguments: WireArguments,
    /// The JSON-RPC id of an MCP request, echoed in its response.
    pub rpc_id: Option<Value>,
    /// Whether the provider gave the id (Gemini's `functionCall.id` is optional, and is echoed
    /// only when it was sent).
    pub id_given: bool,
}

impl WireCall {
    /// A call whose id the provider gave, outside JSON-RPC.
    pub(crate) fn given(id: String, called: String, arguments: WireArguments) -> Self {
        WireCall {
            id,
            called,
            arguments,
            rpc_id: None,
            id_given: true,
        }
    }
}

/// The calls of one model reply: one turn of the runtime.
#[derive(Clone, Debug, PartialEq)]
pub struct Turn {
    provider: Provider,
    wire: Vec<WireCall>,
    calls: Vec<ToolCall>,
}

impl Turn {
    /// The provider the reply came from.
    pub fn provider(&self) -> Provider {
        self.provider
    }

    /// The calls, in reply order, under the contracts' names.
    pub fn calls(&self) -> &[ToolCall] {
        &self.calls
    }

    /// Whether the reply asked for no tool call (the model answered in text).
    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    /// The name the model called each tool by, in call order.
    pub fn called_names(&self) -> impl Iterator<Item = &str> {
        self.wire.iter().map(|w| w.called.as_str())
    }
}

/// What a turn produced: the schedule, the results and the provider's messages.
#[derive(Clone, Debug)]
pub struct RenderedTurn {
    /// The schedule the calls ran under.
    pub plan: Plan,
    /// One result per call, in call order.
    pub results: Vec<ToolResult>,
    /// The messages (or items) to append to the conversation after the model's own turn.
    pub messages: Vec<Value>,
}

/// Reads one provider's replies and writes its result messages, for the tools of a runtime.
#[derive(Clone, Debug)]
pub struct ProviderAdapter {
    names: ProviderNames,
}

impl ProviderAdapter {
    /// An adapter for the runtime's tools at a provider.
    pub fn new(provider: Provider, runtime: &ToolRuntime) -> Self {
        let names = runtime.registry().names();
        Self::for_names(provider, names.iter().map(String::as_str))
    }

    /// An adapter for tools of these contract names at a provider.
    pub fn for_names<'a>(provider: Provider, names: impl IntoIterator<Item = &'a str>) -> Self {
        ProviderAdapter {
            names: ProviderNames::new(provider, names),
        }
    }

    /// The provider.
    pub fn provider(&self) -> Provider {
        self.names.provider()
    }

    /// The tool calls of a reply given as JSON text.
    pub fn parse_str(&self, reply: &str) -> Result<Turn, ReplyError> {
        let v: Value = serde_json::from_str(reply).map_err(|source| ReplyError::NotJson {
            provider: self.provider(),
            source,
        })?;
        self.parse(&v)
    }

    /// The tool calls of a reply, in reply order.
    pub fn parse(&self, reply: &Value) -> Result<Turn, ReplyError> {
        let provider = self.provider();
        let wire = match provider {
            Provider::OpenaiChat => openai_chat::parse(reply)?,
            Provider::OpenaiResponses => openai_responses::parse(reply)?,
            Provider::Anthropic => anthropic::parse(reply)?,
            Provider::Gemini => gemini::parse(reply)?,
            Provider::Mcp => mcp::parse(reply)?,
        };
        let calls = wire
            .iter()
            .map(|w| {
                let name = self.names.contract_name(&w.called);
                ToolCall::new(w.id.clone(), name, w.arguments.clone().into_value())
            })
            .collect();
        Ok(Turn {
            provider,
            wire,
            calls,
        })
    }

    /// The provider's messages carrying a turn's results (`results` in call order, as
    /// [`ToolRuntime::run`] returns them). A result whose call is not in the turn is left out.
    pub fn render(&self, turn: &Turn, results: &[ToolResult]) -> Vec<Value> {
        let pairs: Vec<(&WireCall, &ToolResult)> = turn
            .wire
            .iter()
            .filter_map(|w| results.iter().find(|r| r.call_id() == w.id).map(|r| (w, r)))
            .collect();
        if pairs.is_empty() {
            return Vec::new();
        }
        match turn.provider {
            Provider::OpenaiChat => openai_chat::render(&pairs),
            Provider::OpenaiResponses => openai_responses::render(&pairs),
            Provider::Anthropic => anthropic::render(&pairs),
            Provider::Gemini => gemini::render(&pairs),
            Provider::Mcp => mcp::render(&pairs),
        }
    }

    /// Parses a reply, runs its calls as one turn and renders the results.
    pub async fn run(
        &self,
        runtime: &ToolRuntime,
        reply: &Value,
        session: &Session,
        cancel: CancellationToken,
    ) -> Result<RenderedTurn, TurnError> {
        let turn = self.parse(reply)?;
        let execution = runtime.run(turn.calls.clone(), session, cancel).await?;
        let messages = self.render(&turn, &execution.results);
        Ok(RenderedTurn {
            plan: execution.plan,
            results: execution.results,
            messages,
        })
    }
}

/// A path into a reply, for [`ReplyError::Shape`].
pub(crate) fn shape(
    provider: Provider,
    at: impl Into<String>,
    what: &'static str,
    expected: &'static str,
) -> ReplyError {
    ReplyError::Shape {
        provider,
        at: at.into(),
        what,
        expected,
    }
}

/// A field that must be a string.
pub(crate) fn string_at(
    provider: Provider,
    v: &Value,
    key: &str,
    at: &str,
    expected: &'static str,
) -> Result<String, ReplyError> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| shape(provider, format!("{at}.{key}"), "string", expected))
}

/// An array field; a missing or null one is empty (a reply without calls).
pub(crate) fn array_at<'a>(
    provider: Provider,
    v: &'a Value,
    key: &str,
    at: &str,
    expected: &'static str,
) -> Result<&'a [Value], ReplyError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(_) => Err(shape(provider, format!("{at}.{key}"), "array", expected)),
    }
}

/// The text the model reads of a result.
pub(crate) fn text_of(r: &ToolResult) -> String {
    r.projection().text.clone()
}

/// The structured result the model may read, when the tool produced one.
pub(crate) fn structured_of(r: &ToolResult) -> Option<Value> {
    r.projection().structured.clone()
}

#[cfg(test)]
mod tests;
