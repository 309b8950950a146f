//! The spanned syntax tree of a tool spec file, exactly as written.
//!
//! Every value a diagnostic may point at is a [`Spanned`] (or a [`Node`] for embedded JSON
//! Schemas and example arguments). Nothing here has defaults applied: that is
//! [`crate::spec::resolve`]'s job, so lint rules can tell "not written" from "written as the
//! default".

use std::fmt;
use std::marker::PhantomData;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::ir::{Decision, Effect, FormatterKind, HandlerLanguage, Idempotency, OutputKeep};
use crate::spec::literal::{DurationLit, SizeLit};
use crate::spec::yaml::{Node, Spanned};

/// A spec file: one tool at the top level, or several under `tools:`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSpec {
    /// Several tools in one file (then no other key may be set).
    #[serde(default)]
    pub tools: Option<Spanned<Vec<Spanned<ToolSpec>>>>,
    /// The name models call the tool by.
    #[serde(default)]
    pub name: Option<Spanned<String>>,
    /// Integer bumped on breaking changes.
    #[serde(default)]
    pub version: Option<Spanned<u32>>,
    /// Display name.
    #[serde(default)]
    pub title: Option<Spanned<String>>,
    /// Former names that still reach the tool (the runtime maps them to it).
    #[serde(default)]
    pub aliases: Option<Spanned<Vec<Spanned<String>>>>,
    /// Marks the tool as on its way out: `{since, use}`.
    #[serde(default)]
    pub deprecated: Option<Spanned<DeprecatedAst>>,
    /// What the tool does, when to use it, what it returns.
    #[serde(default)]
    pub description: Option<Spanned<String>>,
    /// What running it can change.
    #[serde(default)]
    pub effect: Option<Spanned<Effect>>,
    /// `pure`, `idempotent`, `conditionally_idempotent`, `non_idempotent`, or `{class, key}`.
    #[serde(default)]
    pub idempotency: Option<Spanned<StringOr<IdempotencyMap>>>,
    /// JSON Schema of the arguments.
    #[serde(default)]
    pub parameters: Option<Node>,
    /// JSON Schema of the structured result.
    #[serde(default)]
    pub result: Option<Node>,
    /// Semantic argument rules.
    #[serde(default)]
    pub validate: Option<Spanned<Vec<Spanned<ValidateRuleAst>>>>,
    /// Permission rules and policy tests.
    #[serde(default)]
    pub permissions: Option<Spanned<PermissionsAst>>,
    /// Resource keys read and written.
    #[serde(default)]
    pub resources: Option<Spanned<ResourcesAst>>,
    /// A group name, or `{name, max}`.
    #[serde(default)]
    pub concurrency_group: Option<Spanned<StringOr<ConcurrencyGroupMap>>>,
    /// Execution budget.
    #[serde(default)]
    pub timeout: Option<Spanned<DurationLit>>,
    /// Retry policy.
    #[serde(default)]
    pub retry: Option<Spanned<RetryAst>>,
    /// Output policy.
    #[serde(default)]
    pub output: Option<Spanned<OutputAst>>,
    /// Error type → hint for the model.
    #[serde(default)]
    pub errors: Option<Node>,
    /// Sandbox profile name.
    #[serde(default)]
    pub sandbox: Option<Spanned<String>>,
    /// How the tool runs.
    #[serde(default)]
    pub exec: Option<Spanned<ExecAst>>,
}

/// `deprecated`: since when, and the tool to use instead.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeprecatedAst {
    /// Since when: a tool version (`2`), a project version (`1.4.0`) or a date (`2026-05-01`).
    pub since: Spanned<Label>,
    /// The tool to call instead.
    #[serde(default, rename = "use")]
    pub successor: Option<Spanned<String>>,
}

/// A scalar read as text: a string, or a number as written (`since: 2`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label(pub String);

impl<'de> Deserialize<'de> for Label {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Label;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a version or a date")
            }
            fn visit_str<E>(self, v: &str) -> Result<Label, E> {
                Ok(Label(v.to_owned()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Label, E> {
                Ok(Label(v.to_string()))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Label, E> {
                Ok(Label(v.to_string()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Label, E> {
                Ok(Label(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

impl schemars::JsonSchema for Label {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Label".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": ["string", "number"]})
    }
}

/// Either a plain string or a mapping with more detail.
#[derive(Debug)]
pub enum StringOr<M> {
    /// The short form.
    String(String),
    /// The long form.
    Map(M),
}

impl<'de, M: Deserialize<'de>> Deserialize<'de> for StringOr<M> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<M>(PhantomData<M>);
        impl<'de, M: Deserialize<'de>> Visitor<'de> for V<M> {
            type Value = StringOr<M>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or a mapping")
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(StringOr::String(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
                Ok(StringOr::String(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                M::deserialize(de::value::MapAccessDeserializer::new(map)).map(StringOr::Map)
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// One value or a list of them (each spanned).
#[derive(Debug)]
pub enum OneOrMany<T> {
    /// A single value (its span is the enclosing one).
    One(T),
    /// A list.
    Many(Vec<Spanned<T>>),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for OneOrMany<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = OneOrMany<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or a list of strings")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                T::deserialize(de::value::StrDeserializer::<E>::new(v)).map(OneOrMany::One)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<Spanned<T>>()? {
                    items.push(item);
                }
                Ok(OneOrMany::Many(items))
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// The long form of `idempotency`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdempotencyMap {
    /// The class.
    pub class: Spanned<Idempotency>,
    /// CEL giving the idempotency key from the arguments (e.g. `args.request_id`).
    #[serde(default)]
    pub key: Option<Spanned<String>>,
}

/// The long form of `concurrency_group`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConcurrencyGroupMap {
    /// The group name.
    pub name: Spanned<String>,
    /// How many members may run at once (default 1).
    #[serde(default)]
    pub max: Option<Spanned<u32>>,
}

/// One `validate` rule.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ValidateRuleAst {
    /// Unique id within the tool.
    pub id: Spanned<String>,
    /// CEL that must be true.
    pub expr: Spanned<String>,
    /// What the model is told when it is false.
    #[serde(default)]
    pub message: Option<Spanned<String>>,
    /// How to fix the call.
    #[serde(default)]
    pub hint: Option<Spanned<String>>,
}

/// The `permissions` key.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PermissionsAst {
    /// Rules.
    #[serde(default)]
    pub rules: Vec<Spanned<PermissionRuleAst>>,
    /// Policy tests.
    #[serde(default)]
    pub examples: Vec<Spanned<PermissionExampleAst>>,
}

/// One permission rule: exactly one of `allow`, `ask`, `deny`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PermissionRuleAst {
    /// Unique id within the tool.
    pub id: Spanned<String>,
    /// CEL: allow when true.
    #[serde(default)]
    pub allow: Option<Spanned<String>>,
    /// CEL: ask when true.
    #[serde(default)]
    pub ask: Option<Spanned<String>>,
    /// CEL: deny when true.
    #[serde(default)]
    pub deny: Option<Spanned<String>>,
    /// Why (shown to the model and the approver).
    #[serde(default)]
    pub reason: Option<Spanned<String>>,
}

impl PermissionRuleAst {
    /// The decision and expression, if exactly one was written.
    pub fn decisions(&self) -> Vec<(Decision, &Spanned<String>)> {
        let mut out = Vec::new();
        if let Some(e) = &self.allow {
            out.push((Decision::Allow, e));
        }
        if let Some(e) = &self.ask {
            out.push((Decision::Ask, e));
        }
        if let Some(e) = &self.deny {
            out.push((Decision::Deny, e));
        }
        out
    }
}

/// One policy test.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PermissionExampleAst {
    /// The arguments.
    pub args: Node,
    /// The decision they must get.
    pub expect: Spanned<Decision>,
    /// The context (default `interactive`).
    #[serde(default)]
    pub context: Option<Spanned<String>>,
}

/// The `resources` key.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResourcesAst {
    /// CEL (one or a list) yielding the resource keys a call reads (`file:src/a.py`), which the
    /// scheduler orders calls by; it grants nothing (file system access is the sandbox
    /// profile's `read`).
    #[serde(default)]
    pub reads: Option<Spanned<OneOrMany<String>>>,
    /// CEL (one or a list) yielding the resource keys a call writes, which the scheduler orders
    /// calls by; it grants nothing (file system access is the sandbox profile's `write`).
    #[serde(default)]
    pub writes: Option<Spanned<OneOrMany<String>>>,
}

/// The `retry` key.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetryAst {
    /// Attempts in all (the first included).
    #[serde(default)]
    pub max_attempts: Option<Spanned<u32>>,
    /// Error types that are retried.
    #[serde(default)]
    pub on: Option<Spanned<Vec<Spanned<String>>>>,
    /// Delay between attempts.
    #[serde(default)]
    pub backoff: Option<Spanned<BackoffAst>>,
    /// Time all attempts may take.
    #[serde(default)]
    pub budget: Option<Spanned<DurationLit>>,
}

/// The `retry.backoff` key.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackoffAst {
    /// First delay.
    #[serde(default)]
    pub initial: Option<Spanned<DurationLit>>,
    /// Growth per attempt.
    #[serde(default)]
    pub factor: Option<Spanned<f64>>,
    /// Largest delay.
    #[serde(default)]
    pub max: Option<Spanned<DurationLit>>,
    /// Randomize delays.
    #[serde(default)]
    pub jitter: Option<Spanned<bool>>,
}

/// The `output` key.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OutputAst {
    /// Formatter.
    #[serde(default)]
    pub formatter: Option<Spanned<FormatterKind>>,
    /// Most bytes the model sees.
    #[serde(default)]
    pub max_bytes: Option<Spanned<SizeLit>>,
    /// Most lines the model sees.
    #[serde(default)]
    pub max_lines: Option<Spanned<u64>>,
    /// Which part of long output the model sees: `head`, `tail` or `head_tail`.
    #[serde(default)]
    pub keep: Option<Spanned<OutputKeep>>,
    /// Output larger than this is kept whole as an artifact even when it is shown in full
    /// (output the limits cut is always kept).
    #[serde(default)]
    pub artifact_threshold: Option<Spanned<SizeLit>>,
    /// Regular expressions redacted from what the model sees.
    #[serde(default)]
    pub redact: Option<Spanned<Vec<Spanned<String>>>>,
    /// Redact common secret patterns (default true).
    #[serde(default)]
    pub redact_secrets: Option<Spanned<bool>>,
    /// A JSON Pointer into the structured result to the identifier of what the call made
    /// elsewhere (an issue number, a message id), recorded in the journal.
    #[serde(default)]
    pub external_reference: Option<Spanned<String>>,
}

/// The `exec` key: exactly one backend.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ExecAst {
    /// A builtin tool.
    Builtin(Spanned<String>),
    /// A process.
    Command(CommandAst),
    /// An upstream MCP tool.
    Mcp(McpExecAst),
    /// A handler bound by the embedding program (`rust`).
    Handler(Spanned<HandlerLanguage>),
    /// One HTTP request built from the arguments.
    Http(crate::spec::http::HttpExecAst),
}

/// `exec.command`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommandAst {
    /// The argv template.
    pub argv: Spanned<Vec<Spanned<StringOr<ArgvMap>>>>,
    /// Working directory template.
    #[serde(default)]
    pub cwd: Option<Spanned<String>>,
    /// Environment.
    #[serde(default)]
    pub env: Option<Spanned<EnvAst>>,
    /// CEL giving stdin.
    #[serde(default)]
    pub stdin: Option<Spanned<String>>,
    /// Run through `sh -c`.
    #[serde(default)]
    pub shell: Option<Spanned<bool>>,
}

/// An argv element in long form: `{when, value}` or `{each}`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArgvMap {
    /// Include `value` only when this CEL is true.
    #[serde(default)]
    pub when: Option<Spanned<String>>,
    /// The template.
    #[serde(default)]
    pub value: Option<Spanned<String>>,
    /// One argument per item of this CEL list.
    #[serde(default)]
    pub each: Option<Spanned<String>>,
}

/// `exec.command.env`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnvAst {
    /// Passed through from toolgate's environment.
    #[serde(default)]
    pub inherit: Vec<Spanned<String>>,
    /// Set to a template.
    #[serde(default)]
    pub set: indexmap::IndexMap<String, Spanned<String>>,
    /// Inherited secrets (redacted from model-visible output).
    #[serde(default)]
    pub secret: Vec<Spanned<String>>,
}

/// `exec.mcp`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpExecAst {
    /// Server name from toolgate.yaml.
    pub server: Spanned<String>,
    /// Tool name on the server.
    pub tool: Spanned<String>,
}

impl<M: schemars::JsonSchema> schemars::JsonSchema for StringOr<M> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("StringOr{}", M::schema_name()).into()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let m = g.subschema_for::<M>();
        schemars::json_schema!({"anyOf": [{"type": "string"}, m]})
    }
}

impl<T: schemars::JsonSchema> schemars::JsonSchema for OneOrMany<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("OneOrMany{}", T::schema_name()).into()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let t = g.subschema_for::<T>();
        schemars::json_schema!({"anyOf": [t.clone(), {"type": "array", "items": t}]})
    }
}
