//! [`ProjectConfig`]: what toolgate.yaml says that the runtime and emitters need, resolved.

use std::collections::BTreeMap;

use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ir::vocab::{Decision, Effect};

/// The resolved project settings shared by every tool.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ProjectConfig {
    /// The version of the contracts as a whole (semver), when toolgate.yaml gives one: the
    /// generated crate's version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The workspace root, relative to the project folder (the folder of toolgate.yaml).
    pub workspace: String,
    /// Where the journal and artifacts live: a path relative to the project folder, or a
    /// template ([`DEFAULT_STATE_DIR`]; see [`resolve_state_dir`]).
    pub state_dir: String,
    /// Named tool sets exposed together.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub toolsets: IndexMap<String, Toolset>,
    /// What `toolgate serve` serves when its command line does not say.
    #[serde(default, skip_serializing_if = "ServeConfig::is_empty")]
    pub serve: ServeConfig,
    /// The permission decision per effect class when no rule matches.
    pub default_permissions: BTreeMap<Effect, Decision>,
    /// How `ask` resolves in each context.
    pub contexts: IndexMap<String, ContextPolicy>,
    /// Sandbox profiles by name.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub sandbox_profiles: IndexMap<String, SandboxProfile>,
    /// Upstream MCP servers by name.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub mcp_servers: IndexMap<String, McpServer>,
    /// The provider targets the contracts are compiled for.
    pub targets: Vec<Target>,
    /// Paths no tool may read or write beyond the default set, and exceptions from it
    /// (`protect` in toolgate.yaml).
    #[serde(default, skip_serializing_if = "ProtectPolicy::is_empty")]
    pub protect: ProtectPolicy,
    /// The egress policy of HTTP tools.
    #[serde(default, skip_serializing_if = "crate::ir::NetworkPolicy::is_empty")]
    pub network: crate::ir::NetworkPolicy,
    /// What one call and one session may consume (`budgets` in toolgate.yaml).
    #[serde(default, skip_serializing_if = "Budgets::is_default")]
    pub budgets: Budgets,
    /// A journal on a server (`journal` in toolgate.yaml), for the command line. Never written
    /// into bundles: its URL may name a user and host an embedder's deployment does not share.
    #[serde(skip)]
    pub journal: Option<JournalSetting>,
}

/// `journal` in toolgate.yaml: a PostgreSQL journal shared by several hosts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JournalSetting {
    /// `postgres://…`.
    pub url: String,
    /// Each host's lease, when toolgate.yaml sets it.
    pub lease: Option<std::time::Duration>,
}

/// Caps on what calls consume: artifact bytes per call, per session and in the store, and the
/// largest files builtins work on. Sizes in bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Budgets {
    /// Artifact bytes one call may write; the artifact stops there.
    pub call_artifacts: u64,
    /// Artifact bytes one session may write.
    pub session_artifacts: u64,
    /// The artifact store's quota: the oldest artifacts of other sessions are evicted to make
    /// room, and what still does not fit is not kept.
    pub artifact_store: u64,
    /// The largest file read_file reads (it streams; this bounds its time).
    pub read_file_size: u64,
    /// Bytes of each file search_files searches.
    pub search_file_size: u64,
    /// The largest file write_file and apply_patch hold in memory.
    pub edit_file_size: u64,
}

impl Default for Budgets {
    fn default() -> Self {
        Budgets {
            call_artifacts: 256 << 20,
            session_artifacts: 1 << 30,
            artifact_store: 4 << 30,
            read_file_size: 256 << 20,
            search_file_size: 8 << 20,
            edit_file_size: 16 << 20,
        }
    }
}

impl Budgets {
    /// Whether every budget has its default.
    pub fn is_default(&self) -> bool {
        *self == Budgets::default()
    }
}

/// What a project adds to the default protected set, and what it exempts from it. The
/// default set ([`DEFAULT_PROTECTED`]) always applies and is not written out.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProtectPolicy {
    /// Protected globs the project adds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<ProtectedPath>,
    /// Globs exempted from protection, each with the reason the project gave.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub except: Vec<ProtectedPath>,
}

impl ProtectPolicy {
    /// Whether the project adds and exempts nothing.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty() && self.except.is_empty()
    }

    /// The default set, then the project's globs.
    pub fn all_paths(&self) -> Vec<ProtectedPath> {
        DEFAULT_PROTECTED
            .iter()
            .map(|(glob, reason)| ProtectedPath {
                glob: (*glob).to_owned(),
                reason: (*reason).to_owned(),
                default: true,
            })
            .chain(self.paths.iter().cloned())
            .collect()
    }
}

/// One protected glob (or one exception) and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProtectedPath {
    /// A glob over workspace-relative paths, matched at any depth unless it starts with `/`
    /// (anchored at the workspace root); a match protects everything beneath it too.
    pub glob: String,
    /// Why, as the model and the person read it.
    pub reason: String,
    /// Whether it is one of toolgate's defaults.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub default: bool,
}

const SECRET: &str = "Secrets are never readable or writable by tools.";
const KEY: &str = "Private keys and certificates are never readable or writable by tools.";
const CREDENTIALS: &str =
    "Credential files of common tools are never readable or writable by tools.";

/// The protected globs every project starts with (a project may add to them; removing one is
/// an `except` entry, which lint reports).
pub const DEFAULT_PROTECTED: &[(&str, &str)] = &[
    (".env", SECRET),
    (".env.*", SECRET),
    ("*.env", SECRET),
    ("*.pem", KEY),
    ("*.key", KEY),
    ("*.p12", KEY),
    ("*.pfx", KEY),
    ("*.jks", KEY),
    ("*.keystore", KEY),
    ("*.crt", KEY),
    ("*.cer", KEY),
    ("*.gpg", KEY),
    ("id_rsa", KEY),
    ("id_rsa.*", KEY),
    ("id_dsa", KEY),
    ("id_dsa.*", KEY),
    ("id_ecdsa", KEY),
    ("id_ecdsa.*", KEY),
    ("id_ecdsa_sk", KEY),
    ("id_ecdsa_sk.*", KEY),
    ("id_ed25519", KEY),
    ("id_ed25519.*", KEY),
    ("id_ed25519_sk", KEY),
    ("id_ed25519_sk.*", KEY),
    (".ssh", CREDENTIALS),
    (".gnupg", CREDENTIALS),
    (".aws", CREDENTIALS),
    (".azure", CREDENTIALS),
    (".config/gcloud", CREDENTIALS),
    (".kube", CREDENTIALS),
    (".docker/config.json", CREDENTIALS),
    (".netrc", CREDENTIALS),
    ("_netrc", CREDENTIALS),
    (".git-credentials", CREDENTIALS),
    (".npmrc", CREDENTIALS),
    (".pypirc", CREDENTIALS),
    (".pgpass", CREDENTIALS),
    (".my.cnf", CREDENTIALS),
    (".htpasswd", CREDENTIALS),
    ("credentials.json", CREDENTIALS),
    ("*.tfstate", CREDENTIALS),
    ("*.tfstate.*", CREDENTIALS),
];

/// A named set of tools.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Toolset {
    /// What the set is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its members, by tool name.
    pub tools: Vec<String>,
    /// The OAuth scopes a caller of `serve --http` needs, all of them, to call its tools (a tool
    /// some scope-bound toolset holds is callable only through one whose scopes the caller
    /// has).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
}

/// `serve` in toolgate.yaml.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ServeConfig {
    /// The toolset `toolgate serve` serves unless `--toolset` or `--all` says otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub toolset: Option<String>,
    /// How `serve --http` authenticates callers (absent: it serves loopback addresses only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<ServeAuth>,
    /// What one client may cost `serve --http`: timeouts and caps.
    #[serde(default, skip_serializing_if = "ServeLimits::is_default")]
    pub limits: ServeLimits,
    /// Browser origins `serve --http` answers besides its own addresses (`serve.allowed_origins`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_origins: Vec<String>,
}

impl ServeConfig {
    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        self.toolset.is_none()
            && self.auth.is_none()
            && self.limits.is_default()
            && self.allowed_origins.is_empty()
    }
}

/// `serve.limits`: what `serve --http` lets one client cost before a token is read or a session
/// is made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ServeLimits {
    /// How long a client may take to send a request's headers, and how long a connection may
    /// sit idle between requests, before it is closed (milliseconds).
    pub header_timeout_ms: u64,
    /// How long a client may take to send a request's body once its headers are in
    /// (milliseconds): a request still unfinished then is answered 408 and closed.
    pub body_timeout_ms: u64,
    /// Open connections at once; one more is answered 503 and closed.
    pub connections: u32,
    /// Live MCP sessions at once; one more `initialize` is answered 503.
    pub sessions: u32,
    /// Live MCP sessions of one principal; one more `initialize` is answered 429.
    pub sessions_per_principal: u32,
    /// How long a session may go without a request before it ends (milliseconds).
    pub session_idle_ms: u64,
}

impl Default for ServeLimits {
    fn default() -> Self {
        ServeLimits {
            header_timeout_ms: 10_000,
            body_timeout_ms: 30_000,
            connections: 512,
            sessions: 1000,
            sessions_per_principal: 32,
            session_idle_ms: 300_000,
        }
    }
}

impl ServeLimits {
    /// Whether every limit is its default.
    pub fn is_default(&self) -> bool {
        *self == ServeLimits::default()
    }
}

/// `serve.auth`: `serve --http` as an OAuth 2.1 resource server (bearer JWTs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ServeAuth {
    /// This server's resource URI (RFC 8707/9728): the audience every token must name.
    pub resource: String,
    /// The issuers whose tokens are accepted.
    pub issuers: Vec<TokenIssuer>,
    /// Scopes every token must grant.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// Token claims shown to rules as `principal.claims`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<String>,
}

/// An authorization server whose tokens `serve --http` accepts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TokenIssuer {
    /// Its issuer identifier: the `iss` its tokens carry.
    pub issuer: String,
    /// Where its signing keys are (a JWK Set).
    pub jwks: JwksSource,
    /// How long fetched keys are kept before they are fetched again, in milliseconds.
    pub refresh_ms: u64,
}

/// Where a JWK Set is read from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum JwksSource {
    /// An `https://` (or loopback `http://`) URL.
    Url(String),
    /// A file, relative to the project folder (read again when it changes).
    File(String),
}

/// How an `ask` decision is settled in one context.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ContextPolicy {
    /// Whether someone can be asked.
    pub ask: AskMode,
    /// How long to wait for an answer before it counts as unavailable, in milliseconds.
    pub approval_timeout_ms: u64,
}

/// Whether anyone can answer an `ask` in a context.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AskMode {
    /// Ask the approver (a person at a prompt, or an MCP client's elicitation).
    Prompt,
    /// Nobody can answer: `ask` ends as denied with APPROVAL_UNAVAILABLE.
    Deny,
}

/// A sandbox profile: what a command tool sees of the file system (its *view*), what it may
/// write, its network and its limits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SandboxProfile {
    /// Paths the process can read: absolute paths, paths relative to the workspace, and the
    /// roots [`SYSTEM_ROOT`] (the system folders), [`TOOLCHAIN_ROOT`] (the folders of the
    /// tool's own toolchain) and `{workspace}` (the workspace root). `/` shows the host's whole
    /// file system.
    pub read: Vec<String>,
    /// Paths the process can write (and read); `/tmp` is a private, empty `/tmp` of its own.
    pub write: Vec<String>,
    /// Whether the process may open network sockets.
    pub network: bool,
    /// Whether missing kernel features are tolerated (recorded) instead of failing closed.
    pub best_effort: bool,
    /// Resource limits.
    pub limits: ResourceLimits,
}

/// The `read` root standing for the system folders: `/usr`, `/bin`, `/sbin`, `/lib*`, `/etc`
/// and `/opt`, as present.
pub const SYSTEM_ROOT: &str = "{system}";
/// The `read` root standing for the folders of the tool's toolchain outside the system folders
/// (for example `~/.cargo` and `~/.rustup`, or `~/.pyenv`), found from its program, its `PATH`
/// and toolchain variables such as `CARGO_HOME` or `VIRTUAL_ENV`.
pub const TOOLCHAIN_ROOT: &str = "{toolchain}";
/// The `write` root that is a private `/tmp` (an empty tmpfs per execution) when the mount
/// namespace is in force.
pub const PRIVATE_TMP: &str = "/tmp";

impl SandboxProfile {
    /// Whether the profile writes the host's whole file system (`/` among its writable roots),
    /// as `none` does: it isolates no files, only masks protected ones.
    pub fn writes_everything(&self) -> bool {
        self.write.iter().any(|w| w == "/")
    }

    /// The writable roots that are trees of the host as the process sees them, as written:
    /// every writable root but `/dev/null` and the private `/tmp` (which is the host's `/tmp`
    /// only when a best-effort profile runs without the mount namespace). Empty for a profile
    /// that writes `/` (see [`SandboxProfile::writes_everything`]).
    pub fn shared_write_roots(&self) -> Vec<&str> {
        if self.writes_everything() {
            return Vec::new();
        }
        self.write
            .iter()
            .map(String::as_str)
            .filter(|w| *w != "/dev/null" && (*w != PRIVATE_TMP || self.best_effort))
            .collect()
    }
}

/// Resource limits of a sandboxed process.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ResourceLimits {
    /// CPU seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_seconds: Option<u64>,
    /// Address space, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_bytes: Option<u64>,
    /// Largest file the process may write, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_size_bytes: Option<u64>,
    /// Open file descriptors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_files: Option<u64>,
    /// Processes in the tool's tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes: Option<u64>,
}

/// An upstream MCP server started as a child process.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct McpServer {
    /// The command line that starts it.
    pub command: Vec<String>,
    /// Its environment, which starts empty (`env` in toolgate.yaml).
    #[serde(flatten)]
    pub env: ServerEnv,
    /// Working directory, relative to the project folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The sandbox profile the server runs under (default: `none`, which masks the protected
    /// files and leaves the rest of the host as it is).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<String>,
}

/// An upstream server's environment: nothing is inherited unless listed.
///
/// In bundle.json its fields keep the names of bundle format 1 (`inherit_env`, `env`) beside
/// the server's other keys.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ServerEnv {
    /// Variables passed through from toolgate's own environment.
    #[serde(rename = "inherit_env", default, skip_serializing_if = "Vec::is_empty")]
    pub inherit: Vec<String>,
    /// Variables set to a value.
    #[serde(rename = "env", default, skip_serializing_if = "IndexMap::is_empty")]
    pub set: IndexMap<String, String>,
}

/// A provider compatibility the linter checks the contracts against and the OpenAI lists follow
/// (`targets:` in toolgate.yaml; `openai-strict` is strict mode). Not a list format: those are
/// [`crate::ir::Provider`]s.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Target {
    /// OpenAI function calling with `strict: true`.
    OpenaiStrict,
    /// OpenAI function calling without strict mode.
    Openai,
    /// Anthropic Messages `tools`.
    Anthropic,
    /// Google Gemini function declarations.
    Gemini,
    /// MCP `tools/list`.
    Mcp,
}

impl Target {
    /// Every target.
    pub const ALL: &'static [Target] = &[
        Target::OpenaiStrict,
        Target::Openai,
        Target::Anthropic,
        Target::Gemini,
        Target::Mcp,
    ];

    /// The spelling used in toolgate.yaml.
    pub fn as_str(self) -> &'static str {
        match self {
            Target::OpenaiStrict => "openai-strict",
            Target::Openai => "openai",
            Target::Anthropic => "anthropic",
            Target::Gemini => "gemini",
            Target::Mcp => "mcp",
        }
    }
}

/// The context a call is made in when nothing names one (approvals prompt there).
pub const DEFAULT_CONTEXT: &str = "interactive";

/// The `state_dir` used when toolgate.yaml names none: outside the workspace, so that a
/// sandboxed tool allowed to write the workspace cannot reach the journal or the artifacts.
pub const DEFAULT_STATE_DIR: &str = "{state_home}/toolgate/{project}";

/// Why a `state_dir` cannot be placed.
#[derive(Debug, thiserror::Error)]
pub enum StateDirError {
    /// `{state_home}` or `~` needs a home folder and none is set.
    #[error(
        "state_dir `{0}` needs a home folder, but neither XDG_STATE_HOME nor HOME is set; set HOME, or give `state_dir` in toolgate.yaml (or `--state-dir`) as a path"
    )]
    NoHome(String),
}

/// The state folder for a project folder: `{state_home}` (`$XDG_STATE_HOME`, else
/// `~/.local/state`), `{project}` (the project folder's name and a hash of its path) and a
/// leading `~/` are expanded; a relative path is taken from `root`.
pub fn resolve_state_dir(
    raw: &str,
    root: &std::path::Path,
) -> Result<std::path::PathBuf, StateDirError> {
    let home = || {
        std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(std::path::PathBuf::from)
    };
    let mut text = raw.to_owned();
    if text.contains("{state_home}") {
        let state_home = std::env::var_os("XDG_STATE_HOME")
            .map(std::path::PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| home().map(|h| h.join(".local").join("state")))
            .ok_or_else(|| StateDirError::NoHome(raw.to_owned()))?;
        text = text.replace("{state_home}", &state_home.to_string_lossy());
    }
    if text.contains("{project}") {
        text = text.replace("{project}", &project_key(root));
    }
    if let Some(rest) = text.strip_prefix("~/") {
        let home = home().ok_or_else(|| StateDirError::NoHome(raw.to_owned()))?;
        return Ok(home.join(rest));
    }
    Ok(root.join(text))
}

/// `<folder name>-<12 hex digits of the canonical path's hash>`: readable, and distinct for two
/// projects with the same folder name.
fn project_key(root: &std::path::Path) -> String {
    let canonical = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let name: String = canonical
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".to_owned())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let hash = blake3::hash(canonical.as_os_str().as_encoded_bytes()).to_hex();
    format!("{name}-{}", &hash[..12])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn relative_state_dirs_are_taken_from_the_project_folder() {
        let p = resolve_state_dir(".toolgate", Path::new("/srv/proj")).unwrap();
        assert_eq!(p, Path::new("/srv/proj/.toolgate"));
        let p = resolve_state_dir("/var/lib/tg", Path::new("/srv/proj")).unwrap();
        assert_eq!(p, Path::new("/var/lib/tg"));
    }

    #[test]
    fn the_default_is_outside_the_project_and_distinct_per_project() {
        let Some(home) = std::env::var_os("HOME") else {
            return;
        };
        let a = resolve_state_dir(DEFAULT_STATE_DIR, Path::new("/srv/a/proj")).unwrap();
        let b = resolve_state_dir(DEFAULT_STATE_DIR, Path::new("/srv/b/proj")).unwrap();
        assert!(!a.starts_with("/srv"), "{}", a.display());
        assert_ne!(a, b);
        let name = a.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with("proj-") && name.len() == "proj-".len() + 12,
            "{name}"
        );
        if std::env::var_os("XDG_STATE_HOME").is_none() {
            assert!(a.starts_with(Path::new(&home).join(".local/state/toolgate")));
        }
    }
}
