//! Resolution of `toolgate.yaml` into [`ProjectConfig`], with built-in defaults.

use std::collections::BTreeMap;
use std::time::Duration;

use indexmap::IndexMap;

use crate::diagnostic::{Diagnostic, Severity};
use crate::ir::project::{PRIVATE_TMP, SYSTEM_ROOT, TOOLCHAIN_ROOT};
use crate::ir::{
    AskMode, Budgets, ContextPolicy, Effect, FormatterKind, McpServer, ProjectConfig,
    ProtectPolicy, ProtectedPath, ResourceLimits, SandboxProfile, ServerEnv, Target, Toolset,
};
use crate::policy::ProtectedSet;
use crate::rule::Rule;
use crate::spec::project_file::{BudgetsAst, McpServerAst, ProjectFile, ProtectEntryAst};
use crate::spec::source::SourceId;
use crate::spec::yaml::Spanned;

/// Defaults that apply to tools which do not set their own.
#[derive(Clone, Debug)]
pub struct ToolDefaults {
    /// Timeout set in toolgate.yaml, if any.
    pub timeout: Option<Duration>,
    /// Output formatter.
    pub formatter: Option<FormatterKind>,
    /// Most bytes the model sees.
    pub max_bytes: u64,
    /// Most lines the model sees.
    pub max_lines: u64,
    /// Size above which whole output is kept as an artifact even when shown in full.
    pub artifact_threshold: u64,
}

pub use crate::ir::tool::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES};
/// Output above this is kept as an artifact by default, even when shown in full.
pub const DEFAULT_ARTIFACT_THRESHOLD: u64 = 64 * 1024;
/// How long an interactive approval waits by default.
pub const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(120);

/// The sandbox profiles every project has unless toolgate.yaml redefines them.
///
/// - `workspace-read`: reads the system folders, the tool's toolchain and the workspace; writes
///   only its private `/tmp`.
/// - `workspace-write`: the same, and writes the workspace (its `.git` stays read-only).
/// - `none`: the host's file system as it is, with network and no limits; protected files are
///   still masked (best effort: where the kernel cannot, it runs without the masks).
pub fn builtin_profiles() -> IndexMap<String, SandboxProfile> {
    let limits = ResourceLimits {
        cpu_seconds: Some(600),
        memory_bytes: Some(4 << 30),
        file_size_bytes: Some(1 << 30),
        open_files: Some(1024),
        processes: Some(512),
    };
    let system = || vec![SYSTEM_ROOT.to_owned(), TOOLCHAIN_ROOT.to_owned()];
    let mut m = IndexMap::new();
    m.insert(
        "none".to_owned(),
        SandboxProfile {
            read: vec!["/".into()],
            write: vec!["/".into()],
            network: true,
            best_effort: true,
            limits: ResourceLimits::default(),
        },
    );
    m.insert(
        "workspace-read".to_owned(),
        SandboxProfile {
            read: [system(), vec!["{workspace}".to_owned()]].concat(),
            write: vec!["/dev/null".into(), PRIVATE_TMP.into()],
            network: false,
            best_effort: false,
            limits: limits.clone(),
        },
    );
    m.insert(
        "workspace-write".to_owned(),
        SandboxProfile {
            read: system(),
            write: vec!["{workspace}".into(), "/dev/null".into(), PRIVATE_TMP.into()],
            network: false,
            best_effort: false,
            limits,
        },
    );
    m
}

/// An upstream server's environment, from either spelling: `env: {inherit, set}`, or the older
/// `inherit_env: [...]` beside a plain `env:` map (both of which may be written together).
fn server_env(s: &McpServerAst) -> ServerEnv {
    let mut env = ServerEnv::default();
    let names = s.inherit_env.iter().flat_map(|l| l.value.iter());
    let names = names.chain(s.env.iter().flat_map(|e| e.value.inherit.iter()));
    for name in names {
        if !env.inherit.contains(&name.value) {
            env.inherit.push(name.value.clone());
        }
    }
    if let Some(e) = &s.env {
        for (k, v) in &e.value.set {
            env.set.insert(k.clone(), v.value.clone());
        }
    }
    env
}

/// Resolves the project file (or defaults when there is none).
pub fn resolve_project(
    project: Option<(SourceId, &ProjectFile)>,
    diags: &mut Vec<Diagnostic>,
) -> (ProjectConfig, ToolDefaults) {
    let empty = ProjectFile::default();
    let (source, p) = match project {
        Some((id, p)) => (id, p),
        None => (SourceId(0), &empty),
    };
    let err = |range: crate::spec::source::TextRange, msg: String| {
        Diagnostic::new(
            Some(Rule::InvalidContract.code()),
            Severity::Error,
            range.in_file(source),
            msg,
        )
    };

    let mut default_permissions = BTreeMap::new();
    for e in Effect::ALL {
        default_permissions.insert(*e, e.default_permission());
    }
    let mut defaults = ToolDefaults {
        timeout: None,
        formatter: None,
        max_bytes: DEFAULT_MAX_BYTES,
        max_lines: DEFAULT_MAX_LINES,
        artifact_threshold: DEFAULT_ARTIFACT_THRESHOLD,
    };
    if let Some(d) = &p.defaults {
        for (effect, decision) in &d.value.permissions {
            default_permissions.insert(*effect, decision.value);
        }
        defaults.timeout = d.value.timeout.as_ref().map(|t| t.value.0);
        if let Some(o) = &d.value.output {
            defaults.formatter = o.value.formatter.as_ref().map(|f| f.value);
            if let Some(v) = &o.value.max_bytes {
                defaults.max_bytes = v.value.0;
            }
            if let Some(v) = &o.value.max_lines {
                defaults.max_lines = v.value;
            }
            if let Some(v) = &o.value.artifact_threshold {
                defaults.artifact_threshold = v.value.0;
            }
        }
    }

    let mut contexts = IndexMap::new();
    contexts.insert(
        crate::ir::project::DEFAULT_CONTEXT.to_owned(),
        ContextPolicy {
            ask: AskMode::Prompt,
            approval_timeout_ms: DEFAULT_APPROVAL_TIMEOUT.as_millis() as u64,
        },
    );
    for name in ["ci", "headless"] {
        contexts.insert(
            name.to_owned(),
            ContextPolicy {
                ask: AskMode::Deny,
                approval_timeout_ms: 0,
            },
        );
    }
    for (name, c) in &p.contexts {
        let ask = c.value.ask.value;
        let timeout = c
            .value
            .approval_timeout
            .as_ref()
            .map(|t| t.value.0)
            .unwrap_or(DEFAULT_APPROVAL_TIMEOUT);
        contexts.insert(
            name.clone(),
            ContextPolicy {
                ask,
                approval_timeout_ms: timeout.as_millis() as u64,
            },
        );
    }

    let mut sandbox_profiles = builtin_profiles();
    for (name, sp) in &p.sandbox_profiles {
        let s = &sp.value;
        let limits = s
            .limits
            .as_ref()
            .map(|l| ResourceLimits {
                cpu_seconds: l.value.cpu.as_ref().map(|c| c.value.0.as_secs().max(1)),
                memory_bytes: l.value.memory.as_ref().map(|m| m.value.0),
                file_size_bytes: l.value.file_size.as_ref().map(|m| m.value.0),
                open_files: l.value.open_files.as_ref().map(|m| m.value),
                processes: l.value.processes.as_ref().map(|m| m.value),
            })
            .unwrap_or_default();
        sandbox_profiles.insert(
            name.clone(),
            SandboxProfile {
                read: s.read.iter().map(|r| r.value.clone()).collect(),
                write: s.write.iter().map(|r| r.value.clone()).collect(),
                network: s.network.as_ref().is_some_and(|n| n.value),
                best_effort: s.best_effort.as_ref().is_some_and(|n| n.value),
                limits,
            },
        );
    }

    let mut mcp_servers = IndexMap::new();
    for (name, s) in &p.mcp_servers {
        if s.value.command.value.is_empty() {
            diags.push(err(
                s.value.command.range,
                format!("MCP server `{name}` has an empty command"),
            ));
        }
        if let Some(profile) = &s.value.sandbox
            && !sandbox_profiles.contains_key(&profile.value)
        {
            let known: Vec<&str> = sandbox_profiles.keys().map(String::as_str).collect();
            diags.push(err(
                profile.range,
                format!(
                    "MCP server `{name}` names the sandbox profile `{}`, which is not defined (defined: {})",
                    profile.value,
                    known.join(", ")
                ),
            ));
        }
        mcp_servers.insert(
            name.clone(),
            McpServer {
                command: s
                    .value
                    .command
                    .value
                    .iter()
                    .map(|c| c.value.clone())
                    .collect(),
                env: server_env(&s.value),
                cwd: s.value.cwd.as_ref().map(|c| c.value.clone()),
                sandbox: s.value.sandbox.as_ref().map(|c| c.value.clone()),
            },
        );
    }

    let mut targets = Vec::new();
    match &p.targets {
        Some(ts) => {
            for t in &ts.value {
                match Target::ALL.iter().find(|x| x.as_str() == t.value) {
                    Some(x) => targets.push(*x),
                    None => {
                        let names: Vec<&str> = Target::ALL.iter().map(|x| x.as_str()).collect();
                        let help = crate::suggest::did_you_mean(&t.value, names.iter().copied())
                            .unwrap_or_else(|| format!("targets are: {}", names.join(", ")));
                        diags.push(
                            err(t.range, format!("unknown target `{}`", t.value)).with_help(help),
                        );
                    }
                }
            }
        }
        None => targets.extend([
            Target::OpenaiStrict,
            Target::Anthropic,
            Target::Gemini,
            Target::Mcp,
        ]),
    }

    let toolsets = p
        .toolsets
        .iter()
        .map(|(name, t)| {
            (
                name.clone(),
                Toolset {
                    description: t.value.description.as_ref().map(|d| d.value.clone()),
                    tools: t.value.tools.iter().map(|n| n.value.clone()).collect(),
                    scopes: t.value.scopes.iter().map(|s| s.value.clone()).collect(),
                },
            )
        })
        .collect();

    let protect = resolve_protect(p.protect.as_ref(), &err, diags);
    let budgets = resolve_budgets(p.budgets.as_ref().map(|b| &b.value));
    let journal = p.journal.as_ref().and_then(|j| {
        let (url, lease) = match &j.value {
            crate::spec::project_file::JournalAst::Url(u) => (u.clone(), None),
            crate::spec::project_file::JournalAst::Server(s) => (s.url.clone(), s.lease.map(|l| l.0)),
        };
        match check_journal_url(&url) {
            Ok(()) => Some(crate::ir::project::JournalSetting { url, lease }),
            Err(why) => {
                diags.push(err(j.range, format!("`journal` {why}")).with_help(
                    "write `journal: postgres://USER@HOST:PORT/DATABASE` (the password in the TOOLGATE_JOURNAL environment variable, which overrides this, rather than here), or leave `journal` out to keep the journal in the state folder",
                ));
                None
            }
        }
    });

    let mut serve = crate::ir::ServeConfig {
        auth: p
            .serve
            .as_ref()
            .and_then(|s| s.value.auth.as_ref())
            .and_then(|a| crate::spec::serve_auth::resolve(a, &err, diags)),
        limits: p
            .serve
            .as_ref()
            .and_then(|s| s.value.limits.as_ref())
            .map(|l| crate::spec::serve_auth::resolve_limits(l, &err, diags))
            .unwrap_or_default(),
        allowed_origins: p
            .serve
            .as_ref()
            .map(|s| s.value.allowed_origins.as_slice())
            .unwrap_or_default()
            .iter()
            .filter_map(|o| match check_origin(&o.value) {
                Ok(()) => Some(o.value.clone()),
                Err(why) => {
                    diags.push(err(o.range, format!("`serve.allowed_origins`: {why}")).with_help(
                        "write an origin as a browser sends it: a scheme, a host and an optional port (`https://app.example.com`, `http://localhost:8080`, `http://localhost:*`)",
                    ));
                    None
                }
            })
            .collect(),
        ..crate::ir::ServeConfig::default()
    };
    if let Some(t) = p.serve.as_ref().and_then(|s| s.value.toolset.as_ref()) {
        if p.toolsets.contains_key(&t.value) {
            serve.toolset = Some(t.value.clone());
        } else {
            let names: Vec<&str> = p.toolsets.keys().map(String::as_str).collect();
            let help = crate::suggest::did_you_mean(&t.value, names.iter().copied())
                .unwrap_or_else(|| {
                    if names.is_empty() {
                        "define it under `toolsets`".into()
                    } else {
                        format!("toolsets are: {}", names.join(", "))
                    }
                });
            diags.push(
                err(
                    t.range,
                    format!(
                        "`serve.toolset` names `{}`, which `toolsets` does not define",
                        t.value
                    ),
                )
                .with_help(help),
            );
        }
    }

    let version = p
        .version
        .as_ref()
        .and_then(|v| match semver::Version::parse(&v.value.0) {
            Ok(parsed) => Some(parsed.to_string()),
            Err(e) => {
                diags.push(
                    err(
                        v.range,
                        format!("`version` `{}` is not a semantic version: {e}", v.value.0),
                    )
                    .with_help("write MAJOR.MINOR.PATCH, e.g. `version: 1.4.0` (quoted or not)"),
                );
                None
            }
        });
    let config = ProjectConfig {
        version,
        workspace: p
            .workspace
            .as_ref()
            .map(|w| w.value.clone())
            .unwrap_or_else(|| ".".into()),
        state_dir: p
            .state_dir
            .as_ref()
            .map(|w| w.value.clone())
            .unwrap_or_else(|| crate::ir::project::DEFAULT_STATE_DIR.into()),
        toolsets,
        serve,
        default_permissions,
        contexts,
        sandbox_profiles,
        mcp_servers,
        targets,
        protect,
        network: p
            .network
            .as_ref()
            .map(|n| crate::spec::http::resolve_network(&n.value))
            .unwrap_or_default(),
        budgets,
        journal,
    };
    (config, defaults)
}

/// `budgets`: the defaults, with what the project sets.
fn resolve_budgets(b: Option<&BudgetsAst>) -> Budgets {
    let mut budgets = Budgets::default();
    let Some(b) = b else { return budgets };
    for (value, slot) in [
        (&b.call_artifacts, &mut budgets.call_artifacts),
        (&b.session_artifacts, &mut budgets.session_artifacts),
        (&b.artifact_store, &mut budgets.artifact_store),
        (&b.read_file_size, &mut budgets.read_file_size),
        (&b.search_file_size, &mut budgets.search_file_size),
        (&b.edit_file_size, &mut budgets.edit_file_size),
    ] {
        if let Some(v) = value {
            *slot = v.value.0;
        }
    }
    budgets
}

/// `protect`: the default set, the project's globs after it, and its exceptions. Each glob
/// must compile (checked here, so the runtime never meets a bad one) and each entry must say
/// why.
fn resolve_protect(
    entries: Option<&Spanned<Vec<Spanned<ProtectEntryAst>>>>,
    err: &dyn Fn(crate::spec::source::TextRange, String) -> Diagnostic,
    diags: &mut Vec<Diagnostic>,
) -> ProtectPolicy {
    let mut policy = ProtectPolicy::default();
    for entry in entries.map(|e| e.value.as_slice()).unwrap_or_default() {
        let e = &entry.value;
        let (glob, list) = match (&e.glob, &e.except) {
            (Some(g), None) => (g, &mut policy.paths),
            (None, Some(x)) => (x, &mut policy.except),
            (Some(_), Some(x)) => {
                diags.push(
                    err(
                        x.range,
                        "a `protect` entry has both `glob` and `except`".into(),
                    )
                    .with_help("write the protected glob and the exception as two entries"),
                );
                continue;
            }
            (None, None) => {
                diags.push(
                    err(
                        entry.range,
                        "a `protect` entry needs `glob` or `except`".into(),
                    )
                    .with_help(
                        "e.g. `- {glob: \"deploy/secrets/**\", reason: Deployment secrets.}`",
                    ),
                );
                continue;
            }
        };
        if e.reason.value.trim().is_empty() {
            diags.push(
                err(
                    e.reason.range,
                    "a `protect` entry's `reason` is empty".into(),
                )
                .with_help(
                    "say why, in a sentence the model and the person read when a call is refused",
                ),
            );
        }
        let path = ProtectedPath {
            glob: glob.value.clone(),
            reason: e.reason.value.clone(),
            default: false,
        };
        if let Err(e) = ProtectedSet::check_globs(std::slice::from_ref(&path)) {
            diags.push(
                err(glob.range, e.to_string()).with_help(
                    "`*` matches within one folder, `**` across folders, `{a,b}` either",
                ),
            );
            continue;
        }
        list.push(path);
    }
    policy
}

/// Why a `journal` setting is not a PostgreSQL URL (never repeating the URL, which may hold a
/// password).
fn check_journal_url(url: &str) -> Result<(), String> {
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Err(
            "is not a PostgreSQL URL: it must start with postgres:// or postgresql://".into(),
        );
    }
    #[cfg(feature = "journal-postgres")]
    if let Err(e) = crate::runtime::check_journal_url(url) {
        return Err(format!("cannot be used: {e}"));
    }
    Ok(())
}

/// Whether `origin` is an origin as a browser sends it (RFC 6454): `http` or `https`, a host,
/// an optional port or `*`, and nothing after; `null` for the opaque origin.
fn check_origin(origin: &str) -> Result<(), String> {
    if origin == "null" {
        return Ok(());
    }
    let Some((scheme, rest)) = origin.split_once("://") else {
        return Err(format!("`{origin}` has no scheme (`https://`)"));
    };
    if scheme != "http" && scheme != "https" {
        return Err(format!("`{origin}` is not an http or https origin"));
    }
    if rest.is_empty()
        || rest.contains(['/', '?', '#', '@'])
        || rest.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(format!(
            "`{origin}` is not a bare origin: a host and an optional port, no path"
        ));
    }
    Ok(())
}
