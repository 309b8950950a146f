//! [`ToolDefinition`]: one resolved tool contract, with every default filled in.
//!
//! This is what the emitters and the runtime read; it has no spans and serializes into
//! `bundle.json`. CEL expressions are kept as source text and compiled once by whoever
//! evaluates them ([`crate::cel`]).

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ir::vocab::{Decision, Effect, ErrorType, FormatterKind, HandlerLanguage, Idempotency};

/// Compiles an `output.redact` pattern: the one engine (the `regex` crate's syntax) both the
/// spec resolver checks with and the runtime redacts with, so a pattern that loads also runs.
pub fn compile_redaction(pattern: &str) -> Result<regex::Regex, regex::Error> {
    regex::Regex::new(pattern)
}

/// A resolved tool contract.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolDefinition {
    /// The name models call the tool by.
    pub name: String,
    /// Bumped on every breaking change of the contract.
    pub version: u32,
    /// Former names that still reach this tool: the runtime maps them to it, and the trace
    /// records the name the call used.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
    /// Set when the tool is on its way out: since when, and what to use instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deprecated: Option<Deprecation>,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, when to use it, what it returns.
    pub description: String,
    /// What running it can change.
    pub effect: Effect,
    /// Whether repeating a call repeats its effect.
    pub idempotency: Idempotency,
    /// CEL giving the idempotency key from the arguments, when a parameter carries it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    /// JSON Schema (2020-12) of the arguments; always an object schema.
    pub parameters: Value,
    /// JSON Schema of the structured result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// Semantic argument rules, checked after the schema.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub validate: Vec<ValidationRule>,
    /// Permission rules and their tests.
    pub permissions: PermissionPolicy,
    /// The resource keys a call reads and writes, for the scheduler.
    #[serde(default)]
    pub resources: ResourceSets,
    /// A group whose members never run at once beyond `max`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency_group: Option<ConcurrencyGroup>,
    /// Execution budget of one attempt, in milliseconds.
    pub timeout_ms: u64,
    /// Automatic retries of transient failures.
    pub retry: RetryPolicy,
    /// How raw output becomes what the model reads.
    pub output: OutputPolicy,
    /// Per error type, the hint the model gets.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub errors: IndexMap<ErrorType, String>,
    /// The sandbox profile the tool runs under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
    /// How the tool runs.
    pub exec: ExecSpec,
}

/// A tool on its way out (`deprecated: {since, use}`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Deprecation {
    /// Since when: a tool version, a project version or a date, as written.
    pub since: String,
    /// The tool to call instead.
    #[serde(rename = "use", default, skip_serializing_if = "Option::is_none")]
    pub successor: Option<String>,
}

impl ToolDefinition {
    /// The description models read: the spec's, with a deprecation note when the tool is
    /// deprecated.
    pub fn model_description(&self) -> std::borrow::Cow<'_, str> {
        let Some(d) = &self.deprecated else {
            return std::borrow::Cow::Borrowed(&self.description);
        };
        let note = match &d.successor {
            Some(s) => format!("Deprecated since {}: use `{s}` instead.", d.since),
            None => format!("Deprecated since {}.", d.since),
        };
        if self.description.is_empty() {
            return std::borrow::Cow::Owned(note);
        }
        std::borrow::Cow::Owned(format!("{}\n\n{note}", self.description.trim_end()))
    }
}

/// A semantic rule over the arguments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ValidationRule {
    /// Unique within the tool.
    pub id: String,
    /// CEL over `args` (and `tool`, `context`, `workspace`) that must be true.
    pub expr: String,
    /// What the model is told when it is false.
    pub message: String,
    /// How to fix the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// Permission rules: the strictest matching rule wins, else `default`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PermissionPolicy {
    /// Rules in spec order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<PermissionRule>,
    /// The decision when no rule matches (from toolgate.yaml's defaults for the effect).
    pub default: Decision,
    /// Policy tests: arguments and the decision they must get.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<PermissionExample>,
}

/// One permission rule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PermissionRule {
    /// Unique within the tool.
    pub id: String,
    /// What a match decides.
    pub decision: Decision,
    /// CEL that is true when the rule matches.
    pub expr: String,
    /// Why, shown to the model and the approver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A policy test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PermissionExample {
    /// The arguments of the example call.
    pub args: Value,
    /// The context the call is made in (defaults to `interactive`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// The decision the call must get.
    pub expect: Decision,
}

/// Resource keys for the scheduler: CEL expressions yielding a string or a list of strings.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ResourceSets {
    /// What a call reads, e.g. `'file:' + args.path`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reads: Vec<String>,
    /// What a call writes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writes: Vec<String>,
}

impl ResourceSets {
    /// Whether the tool declares no resources at all.
    pub fn is_empty(&self) -> bool {
        self.reads.is_empty() && self.writes.is_empty()
    }
}

/// A named group limiting how many member calls run at once.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ConcurrencyGroup {
    /// The group's name.
    pub name: String,
    /// How many members may run at once.
    pub max: u32,
}

/// Automatic retry of transient failures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (1 = never retry).
    pub max_attempts: u32,
    /// The error types that are retried.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub on: Vec<ErrorType>,
    /// The delay between attempts.
    pub backoff: Backoff,
    /// Total time all attempts may take, in milliseconds.
    pub budget_ms: u64,
}

impl RetryPolicy {
    /// A policy that never retries.
    pub fn none(budget_ms: u64) -> Self {
        RetryPolicy {
            max_attempts: 1,
            on: Vec::new(),
            backoff: Backoff::default(),
            budget_ms,
        }
    }
}

/// Exponential backoff.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Backoff {
    /// First delay, in milliseconds.
    pub initial_ms: u64,
    /// Growth per attempt.
    pub factor: f64,
    /// Largest delay, in milliseconds.
    pub max_ms: u64,
    /// Whether delays are randomized (full jitter).
    pub jitter: bool,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            initial_ms: 200,
            factor: 2.0,
            max_ms: 5_000,
            jitter: true,
        }
    }
}

/// Which part of long output the model sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputKeep {
    /// The beginning.
    Head,
    /// The end.
    Tail,
    /// Both ends, with a marker for what was left out.
    HeadTail,
}

/// Bytes of output the model sees by default.
pub const DEFAULT_MAX_BYTES: u64 = 32 * 1024;
/// Lines of output the model sees by default.
pub const DEFAULT_MAX_LINES: u64 = 400;

/// The output policy of a tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OutputPolicy {
    /// The formatter for this tool's raw output.
    pub formatter: FormatterKind,
    /// Most bytes of output text the model sees.
    pub max_bytes: u64,
    /// Most lines of output text the model sees.
    pub max_lines: u64,
    /// Which part of long output is kept.
    pub keep: OutputKeep,
    /// Output larger than this is kept whole as an artifact even when it is shown in full
    /// (output the limits cut is always kept, within the artifact budgets).
    pub artifact_threshold: u64,
    /// Extra regular expressions whose matches are redacted from what the model sees.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redact: Vec<String>,
    /// Whether common secret patterns (tokens, keys) are redacted.
    pub redact_secrets: bool,
    /// A JSON Pointer into the structured result to the identifier of what the call made
    /// elsewhere; the journal records the value there as the operation's external reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external_reference: Option<String>,
}

/// How a tool runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExecSpec {
    /// A tool built into toolgate's runtime.
    Builtin {
        /// Its name (`read_file`, `search_files`, ...).
        name: String,
    },
    /// A process started from an argv template.
    Command(CommandSpec),
    /// A tool of an upstream MCP server declared in toolgate.yaml.
    Mcp {
        /// The server's name in toolgate.yaml.
        server: String,
        /// The tool's name on that server.
        tool: String,
    },
    /// A handler bound by the embedding program.
    Handler {
        /// The handler language.
        language: HandlerLanguage,
    },
    /// One HTTP request built from the arguments.
    Http(crate::ir::HttpSpec),
}

/// A command tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CommandSpec {
    /// The argv template; each element becomes exactly one argument (or none, or one per list
    /// item for `each`).
    pub argv: Vec<ArgvElement>,
    /// Working directory template, relative to the workspace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The environment the process gets.
    #[serde(default)]
    pub env: EnvSpec,
    /// CEL giving the text written to stdin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdin: Option<String>,
    /// Whether argv runs through `sh -c` (the spec must ask for it).
    #[serde(default)]
    pub shell: bool,
}

/// One element of an argv template.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ArgvElement {
    /// Literal text with `{cel}` placeholders, producing one argument.
    Template(String),
    /// A template included only when the CEL condition is true.
    When {
        /// CEL condition.
        when: String,
        /// The template.
        value: String,
    },
    /// One argument per item of the CEL list.
    Each(String),
}

/// The environment of a command tool: nothing is inherited unless listed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EnvSpec {
    /// Variables passed through from toolgate's own environment.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inherit: Vec<String>,
    /// Variables set to a template.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub set: IndexMap<String, String>,
    /// Inherited variables whose values are secrets: redacted from what the model sees.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secret: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_patterns_use_one_engine() {
        assert!(compile_redaction(r"\bAKIA[0-9A-Z]{16}\b").is_ok());
        // Look-around is ECMA-262 (what JSON Schema `pattern` accepts) but not this engine:
        // refused at load time, never accepted there and refused at startup.
        assert!(compile_redaction(r"token(?=:)").is_err());
    }
}
