//! The spanned syntax tree of `toolgate.yaml`, the project file.

use std::fmt;

use indexmap::IndexMap;
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::ir::{AskMode, Decision, Effect, FormatterKind};
use crate::spec::literal::{DurationLit, SizeLit};
use crate::spec::yaml::Spanned;

/// `toolgate.yaml` as written.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProjectFile {
    /// The version of the contracts as a whole (semver, `1.4.0`): the generated crate's
    /// version, which `toolgate diff` checks against the changes.
    #[serde(default)]
    pub version: Option<Spanned<crate::spec::ast::Label>>,
    /// Globs of spec files, relative to the project folder (default `tool-specs/**/*.yaml`).
    #[serde(default)]
    pub specs: Option<Spanned<Vec<Spanned<String>>>>,
    /// The workspace root the tools act in (default `.`).
    #[serde(default)]
    pub workspace: Option<Spanned<String>>,
    /// Where the journal and artifacts live (default `{state_home}/toolgate/{project}`, outside the workspace).
    #[serde(default)]
    pub state_dir: Option<Spanned<String>>,
    /// Where the journal lives when not in the state folder: a PostgreSQL URL
    /// (`postgres://USER@HOST:PORT/DATABASE`) shared by several hosts, or `{url, lease}`.
    /// `TOOLGATE_JOURNAL` overrides it (keep passwords there, not here).
    #[serde(default)]
    pub journal: Option<Spanned<JournalAst>>,
    /// Named tool sets.
    #[serde(default)]
    pub toolsets: IndexMap<String, Spanned<ToolsetAst>>,
    /// What `toolgate serve` serves when its command line does not say.
    #[serde(default)]
    pub serve: Option<Spanned<ServeAst>>,
    /// Project-wide defaults.
    #[serde(default)]
    pub defaults: Option<Spanned<DefaultsAst>>,
    /// How `ask` resolves per context.
    #[serde(default)]
    pub contexts: IndexMap<String, Spanned<ContextAst>>,
    /// Sandbox profiles.
    #[serde(default)]
    pub sandbox_profiles: IndexMap<String, Spanned<SandboxProfileAst>>,
    /// Upstream MCP servers.
    #[serde(default)]
    pub mcp_servers: IndexMap<String, Spanned<McpServerAst>>,
    /// Provider targets (`openai-strict`, `openai`, `anthropic`, `gemini`, `mcp`).
    #[serde(default)]
    pub targets: Option<Spanned<Vec<Spanned<String>>>>,
    /// Linter configuration.
    #[serde(default)]
    pub lint: Option<Spanned<LintConfigAst>>,
    /// Paths no tool may read or write, added to the default set (`{glob, reason}`), and
    /// exceptions from it (`{except, reason}`).
    #[serde(default)]
    pub protect: Option<Spanned<Vec<Spanned<ProtectEntryAst>>>>,
    /// The egress policy of HTTP tools.
    #[serde(default)]
    pub network: Option<Spanned<crate::spec::http::NetworkAst>>,
    /// What one call and one session may consume: artifact bytes and builtin file sizes.
    #[serde(default)]
    pub budgets: Option<Spanned<BudgetsAst>>,
}

/// `budgets`: each a size (`4096`, `256MiB`, `1GiB`); an absent key keeps its default.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BudgetsAst {
    /// Artifact bytes one call may write (default 256MiB); the artifact stops there.
    #[serde(default)]
    pub call_artifacts: Option<Spanned<SizeLit>>,
    /// Artifact bytes one session may write (default 1GiB).
    #[serde(default)]
    pub session_artifacts: Option<Spanned<SizeLit>>,
    /// The artifact store's quota (default 4GiB): the oldest artifacts of other sessions are
    /// evicted to make room.
    #[serde(default)]
    pub artifact_store: Option<Spanned<SizeLit>>,
    /// The largest file read_file reads (default 256MiB).
    #[serde(default)]
    pub read_file_size: Option<Spanned<SizeLit>>,
    /// Bytes of each file search_files searches (default 8MiB).
    #[serde(default)]
    pub search_file_size: Option<Spanned<SizeLit>>,
    /// The largest file write_file and apply_patch hold in memory (default 16MiB).
    #[serde(default)]
    pub edit_file_size: Option<Spanned<SizeLit>>,
}

/// One `protect` entry: a protected glob, or an exception, with its reason.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProtectEntryAst {
    /// A glob no tool may read or write, matched at any depth (a leading `/` anchors it at the
    /// workspace root); a matching folder protects everything in it.
    #[serde(default)]
    pub glob: Option<Spanned<String>>,
    /// A glob exempted from protection (lint reports each exception that shrinks the defaults).
    #[serde(default)]
    pub except: Option<Spanned<String>>,
    /// Why: what the model and the person read when a call is refused.
    pub reason: Spanned<String>,
}

/// `serve`: the defaults of `toolgate serve`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServeAst {
    /// The toolset to serve (`--toolset` and `--all` override it). Without one, `serve`
    /// serves only the tools that neither run processes nor write or delete.
    #[serde(default)]
    pub toolset: Option<Spanned<String>>,
    /// How `serve --http` authenticates callers: bearer JWTs of these issuers, for this
    /// resource. Without it, `serve --http` serves loopback addresses only.
    #[serde(default)]
    pub auth: Option<Spanned<ServeAuthAst>>,
    /// What one client may cost `serve --http`: timeouts and caps (every one has a default).
    #[serde(default)]
    pub limits: Option<Spanned<ServeLimitsAst>>,
    /// Browser origins `serve --http` answers besides its own addresses
    /// (`https://app.example.com`, `http://localhost:*`): a request whose `Origin` is not one
    /// of them is refused with 403. Requests without `Origin` (not from a browser) pass.
    #[serde(default)]
    pub allowed_origins: Vec<Spanned<String>>,
}

/// `serve.limits`: timeouts and caps of `serve --http`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServeLimitsAst {
    /// How long a client may take to send a request's headers, and a connection may sit idle
    /// between requests (default `10s`).
    #[serde(default)]
    pub header_timeout: Option<Spanned<DurationLit>>,
    /// How long a client may take to send a request's body (default `30s`).
    #[serde(default)]
    pub body_timeout: Option<Spanned<DurationLit>>,
    /// Open connections at once (default 512).
    #[serde(default)]
    pub connections: Option<Spanned<i64>>,
    /// Live MCP sessions at once (default 1000).
    #[serde(default)]
    pub sessions: Option<Spanned<i64>>,
    /// Live MCP sessions of one principal (default 32).
    #[serde(default)]
    pub sessions_per_principal: Option<Spanned<i64>>,
    /// How long a session may go without a request before it ends (default `5m`).
    #[serde(default)]
    pub session_idle: Option<Spanned<DurationLit>>,
}

/// `serve.auth`: `serve --http` as an OAuth 2.1 resource server.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServeAuthAst {
    /// This server's resource URI (`https://tools.example.com/mcp`): every token's audience.
    pub resource: Spanned<String>,
    /// The authorization servers whose tokens are accepted.
    pub issuers: Vec<Spanned<TokenIssuerAst>>,
    /// Scopes every token must grant (a token without them gets 403 insufficient_scope).
    #[serde(default)]
    pub scopes: Vec<Spanned<String>>,
    /// Token claims rules see as `principal.claims` (`email`, `groups`, …).
    #[serde(default)]
    pub claims: Vec<Spanned<String>>,
}

/// An authorization server: its issuer identifier and where its keys are.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TokenIssuerAst {
    /// The issuer identifier its tokens carry as `iss`.
    pub issuer: Spanned<String>,
    /// The URL of its JWK Set (`https://…/.well-known/jwks.json`).
    #[serde(default)]
    pub jwks_url: Option<Spanned<String>>,
    /// A file holding its JWK Set, relative to the project folder.
    #[serde(default)]
    pub jwks_file: Option<Spanned<String>>,
    /// How long fetched keys are kept (default `5m`); an unknown key id fetches them sooner.
    #[serde(default)]
    pub refresh: Option<Spanned<DurationLit>>,
}

/// A toolset.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolsetAst {
    /// What the set is for.
    #[serde(default)]
    pub description: Option<Spanned<String>>,
    /// Member tool names.
    pub tools: Vec<Spanned<String>>,
    /// OAuth scopes a caller of `serve --http` needs, all of them, to call these tools.
    #[serde(default)]
    pub scopes: Vec<Spanned<String>>,
}

/// `defaults`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DefaultsAst {
    /// Decision per effect class when no rule matches.
    #[serde(default)]
    pub permissions: IndexMap<Effect, Spanned<Decision>>,
    /// Timeout for tools that declare none.
    #[serde(default)]
    pub timeout: Option<Spanned<DurationLit>>,
    /// Output limits for tools that declare none.
    #[serde(default)]
    pub output: Option<Spanned<DefaultOutputAst>>,
}

/// `defaults.output`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DefaultOutputAst {
    /// Default formatter.
    #[serde(default)]
    pub formatter: Option<Spanned<FormatterKind>>,
    /// Most bytes the model sees.
    #[serde(default)]
    pub max_bytes: Option<Spanned<SizeLit>>,
    /// Most lines the model sees.
    #[serde(default)]
    pub max_lines: Option<Spanned<u64>>,
    /// Output larger than this is kept whole as an artifact even when it is shown in full
    /// (output the limits cut is always kept).
    #[serde(default)]
    pub artifact_threshold: Option<Spanned<SizeLit>>,
}

/// A context's `ask` resolution.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ContextAst {
    /// `prompt` (someone can answer) or `deny` (nobody can: asks end as APPROVAL_UNAVAILABLE).
    pub ask: Spanned<AskMode>,
    /// How long to wait for an answer.
    #[serde(default)]
    pub approval_timeout: Option<Spanned<DurationLit>>,
}

/// A sandbox profile.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SandboxProfileAst {
    /// Paths the process may read (a file system grant, unlike a tool's `resources.reads`):
    /// `{system}` (the system folders), `{toolchain}` (the tool's toolchain), `{workspace}` (the
    /// workspace root), absolute paths, paths relative to the workspace.
    #[serde(default)]
    pub read: Vec<Spanned<String>>,
    /// Paths the process may write (a file system grant, unlike a tool's `resources.writes`;
    /// `/tmp` is a private, empty `/tmp` per execution).
    #[serde(default)]
    pub write: Vec<Spanned<String>>,
    /// Network allowed (default false).
    #[serde(default)]
    pub network: Option<Spanned<bool>>,
    /// Tolerate missing kernel features (default false: fail closed).
    #[serde(default)]
    pub best_effort: Option<Spanned<bool>>,
    /// Resource limits.
    #[serde(default)]
    pub limits: Option<Spanned<LimitsAst>>,
}

/// Resource limits.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitsAst {
    /// CPU time.
    #[serde(default)]
    pub cpu: Option<Spanned<DurationLit>>,
    /// Address space.
    #[serde(default)]
    pub memory: Option<Spanned<SizeLit>>,
    /// Largest written file.
    #[serde(default)]
    pub file_size: Option<Spanned<SizeLit>>,
    /// Open file descriptors.
    #[serde(default)]
    pub open_files: Option<Spanned<u64>>,
    /// Processes in the tree.
    #[serde(default)]
    pub processes: Option<Spanned<u64>>,
}

/// An upstream MCP server.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpServerAst {
    /// The command line.
    pub command: Spanned<Vec<Spanned<String>>>,
    /// The server's environment, which starts empty: `{inherit: [NAME…], set: {NAME: value}}`,
    /// as `exec.command.env` of a command tool.
    #[serde(default)]
    pub env: Option<Spanned<ServerEnvAst>>,
    /// The older spelling of `env.inherit` (still read; TGN012 renamed-key).
    #[serde(default)]
    #[schemars(extend("deprecated" = true))]
    pub inherit_env: Option<Spanned<Vec<Spanned<String>>>>,
    /// Working directory.
    #[serde(default)]
    pub cwd: Option<Spanned<String>>,
    /// The sandbox profile the server runs under (default `none`: protected files masked).
    #[serde(default)]
    pub sandbox: Option<Spanned<String>>,
}

/// `lint`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LintConfigAst {
    /// Rule id or name → `error`, `warning`, `info` or `off`.
    #[serde(default)]
    pub severity: IndexMap<String, Spanned<String>>,
    /// Rules turned off everywhere.
    #[serde(default)]
    pub ignore: Vec<Spanned<String>>,
    /// Whether the preview rules run too (default false; `toolgate rules` shows each rule's tier).
    #[serde(default)]
    pub preview: Option<Spanned<bool>>,
    /// Rule ids or names turned on besides the default ones (preview rules included).
    #[serde(default)]
    pub select: Vec<Spanned<String>>,
    /// File glob → rules turned off for matching files.
    #[serde(default)]
    pub per_file_ignores: IndexMap<String, Spanned<Vec<Spanned<String>>>>,
    /// Whether `# toolgate: ignore[...]` comments are honoured (default true).
    #[serde(default)]
    pub inline_ignores: Option<Spanned<bool>>,
    /// Tunable thresholds.
    #[serde(default)]
    pub options: Option<Spanned<LintOptionsAst>>,
}

/// `lint.options`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LintOptionsAst {
    /// Most tools one toolset should expose.
    #[serde(default)]
    pub max_tools: Option<Spanned<usize>>,
    /// Fewest words a tool description should have (0, the default: no floor).
    #[serde(default)]
    pub description_min_words: Option<Spanned<usize>>,
    /// Most characters a description may have.
    #[serde(default)]
    pub description_max_chars: Option<Spanned<usize>>,
    /// Highest CEL evaluation cost estimate accepted.
    #[serde(default)]
    pub cel_cost_budget: Option<Spanned<u64>>,
}

/// `journal`: a PostgreSQL URL, or the URL with the lease of each host's hold on it.
#[derive(Debug, Clone, schemars::JsonSchema)]
#[serde(untagged)]
pub enum JournalAst {
    /// `postgres://USER@HOST:PORT/DATABASE` (or `postgresql://`).
    Url(String),
    /// `{url, lease}`.
    Server(JournalServerAst),
}

/// `journal: {url, lease}`.
#[derive(Debug, Clone, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JournalServerAst {
    /// `postgres://USER@HOST:PORT/DATABASE` (or `postgresql://`).
    pub url: String,
    /// How long a host counts as alive without renewing its hold on the journal (default
    /// `15s`): when it expires, other hosts settle that host's unfinished operations.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub lease: Option<DurationLit>,
}

impl<'de> Deserialize<'de> for JournalAst {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, MapAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = JournalAst;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str(
                    "a PostgreSQL URL (postgres://USER@HOST:PORT/DATABASE), or {url, lease}",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<JournalAst, E> {
                Ok(JournalAst::Url(v.to_owned()))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<JournalAst, A::Error> {
                let (mut url, mut lease) = (None, None);
                while let Some(k) = m.next_key::<String>()? {
                    match k.as_str() {
                        "url" => url = Some(m.next_value::<String>()?),
                        "lease" => lease = Some(m.next_value::<DurationLit>()?),
                        other => {
                            return Err(de::Error::unknown_field(other, &["url", "lease"]));
                        }
                    }
                }
                let url = url.ok_or_else(|| de::Error::missing_field("url"))?;
                Ok(JournalAst::Server(JournalServerAst { url, lease }))
            }
        }
        d.deserialize_any(V)
    }
}

/// `mcp_servers.*.env`: what an upstream server's environment holds.
#[derive(Debug, Default)]
pub struct ServerEnvAst {
    /// Variables passed through from toolgate's environment.
    pub inherit: Vec<Spanned<String>>,
    /// Variables set to a value.
    pub set: IndexMap<String, Spanned<String>>,
    /// Written the older way, as a plain map of `NAME: value` (which is all `set`).
    pub flat: bool,
}

/// One value of an `env` map, before knowing which spelling the map is.
enum EnvValue {
    Text(String),
    List(Vec<Spanned<String>>),
    Map(IndexMap<String, Spanned<String>>),
}

impl<'de> Deserialize<'de> for EnvValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = EnvValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string, a list of variable names or a map of variables to values")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<EnvValue, E> {
                Ok(EnvValue::Text(v.to_owned()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<EnvValue, E> {
                Ok(EnvValue::Text(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<EnvValue, E> {
                Ok(EnvValue::Text(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<EnvValue, E> {
                Ok(EnvValue::Text(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<EnvValue, E> {
                Ok(EnvValue::Text(v.to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<EnvValue, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<Spanned<String>>()? {
                    items.push(item);
                }
                Ok(EnvValue::List(items))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<EnvValue, A::Error> {
                let mut out = IndexMap::new();
                while let Some(k) = map.next_key::<String>()? {
                    let v = map.next_value::<Spanned<String>>()?;
                    out.insert(k, v);
                }
                Ok(EnvValue::Map(out))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for ServerEnvAst {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ServerEnvAst;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("`{inherit: [NAME, …], set: {NAME: value, …}}`")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ServerEnvAst, A::Error> {
                let mut entries: Vec<(String, Spanned<EnvValue>)> = Vec::new();
                while let Some(k) = map.next_key::<String>()? {
                    if entries.iter().any(|(seen, _)| *seen == k) {
                        return Err(de::Error::custom(format!("duplicate key `{k}` in `env`")));
                    }
                    let v = map.next_value::<Spanned<EnvValue>>()?;
                    entries.push((k, v));
                }
                // The older spelling: every value a string (so every key a variable).
                if entries
                    .iter()
                    .all(|(_, v)| matches!(v.value, EnvValue::Text(_)))
                    && !entries.is_empty()
                {
                    let set = entries
                        .into_iter()
                        .filter_map(|(k, v)| match v.value {
                            EnvValue::Text(t) => Some((k, Spanned::new(t, v.range))),
                            _ => None,
                        })
                        .collect();
                    return Ok(ServerEnvAst {
                        inherit: Vec::new(),
                        set,
                        flat: true,
                    });
                }
                let mut out = ServerEnvAst::default();
                for (k, v) in entries {
                    match (k.as_str(), v.value) {
                        ("inherit", EnvValue::List(names)) => out.inherit = names,
                        ("set", EnvValue::Map(vars)) => out.set = vars,
                        ("inherit", _) => {
                            return Err(de::Error::custom(
                                "`env.inherit` is a list of variable names, e.g. `inherit: [PATH, HOME]`",
                            ));
                        }
                        ("set", _) => {
                            return Err(de::Error::custom(
                                "`env.set` is a map of variables to values, e.g. `set: {LANG: C.UTF-8}`",
                            ));
                        }
                        (other, _) => {
                            return Err(de::Error::custom(format!(
                                "unknown key `{other}` in `env`: it holds `inherit` (a list of variable names) and `set` (a map of variables to values){}",
                                crate::suggest::did_you_mean(other, ["inherit", "set"])
                                    .map(|s| format!("; {s}"))
                                    .unwrap_or_default()
                            )));
                        }
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_map(V)
    }
}

impl schemars::JsonSchema for ServerEnvAst {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ServerEnvAst".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "anyOf": [
                {
                    "type": "object",
                    "description": "The server's environment, which starts empty.",
                    "properties": {
                        "inherit": {
                            "description": "Variables passed through from toolgate's environment.",
                            "type": "array",
                            "items": {"type": "string"}
                        },
                        "set": {
                            "description": "Variables set to a value.",
                            "type": "object",
                            "additionalProperties": {"type": "string"}
                        }
                    },
                    "additionalProperties": false
                },
                {
                    "description": "The older spelling of `env.set`: a map of NAME: value (TGN012 renamed-key).",
                    "deprecated": true,
                    "type": "object",
                    "additionalProperties": {"type": ["string", "number", "boolean"]}
                }
            ]
        })
    }
}
