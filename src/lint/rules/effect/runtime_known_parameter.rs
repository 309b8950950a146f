//! TGE006 runtime-known-parameter.

use crate::diagnostic::Severity;
use crate::lint::context::{LintContext, SchemaNode, SchemaRole, ToolView};
use crate::lint::rule::{Applies, RuleMeta};
use crate::lint::rules::effect::names::{SecretKind, secret_kind, words};
use crate::rule::Rule;
use crate::spec::resolve::CelRole;

/// Metadata.
pub const META: RuleMeta = RuleMeta {
    rule: Rule::RuntimeKnownParameter,
    severity: Severity::Warning,
    applies: Applies::Everywhere,
    purpose: "Finds parameters the model must fill although the runtime already knows the value.",
    explanation: r#"## What it does
Reports parameters whose value the harness has and the model can only guess or copy:

- credentials, at any depth: `api_key`, `access_key`, `private_key`, `client_secret`, `token`,
  `access_token`, `auth`, `authorization`, `credentials` (marked `writeOnly` or not);
- tracing ids: `trace_id`, `span_id`, `correlation_id`; `request_id` when its description says
  it identifies this request or is for tracing;
- who is calling: `caller`, `current_user`, `requester`; `user_id`/`username` when described as
  the current, calling or authenticated user (a `user_id` naming another user is a real
  argument and is not reported);
- the session: `session_id`/`conversation_id`/`thread_id` when described as the current session
  (a handle returned by an earlier call is a real argument);
- the tenant: `tenant_id` unless the tool is about tenants (`create_tenant`);
- the workspace: `workspace_root`, `project_root`, and `cwd`/`workdir` described as the
  workspace rather than a directory inside it;
- `idempotency_key`, unless the contract's `idempotency.key` uses it.

## Why is this bad?
OpenAI's guidance: "Don't make the model fill arguments you already know." A model asked for a
session or user id invents one or copies it from the conversation, and a wrong value acts for
someone else; a model handed a credential can repeat it in any later message or argument. The
runtime has all of these with the call and can pass them to the backend itself.

## Example
```yaml
parameters:
  type: object
  properties:
    api_key: {type: string, description: Key for the billing API.}
    user_id: {type: string, description: The id of the current user.}
    amount: {type: integer, minimum: 1}
```

Use instead:
```yaml
parameters:
  type: object
  properties:
    amount: {type: integer, minimum: 1}
exec:
  command:
    argv: [billing-cli, charge, "{args.amount}"]
    env: {secret: [BILLING_API_KEY]}
```
"#,
};

/// Description phrases that make an id refer to the caller rather than to an argument.
const CURRENT_USER: &[&str] = &[
    "current user",
    "calling user",
    "authenticated user",
    "logged-in user",
    "logged in user",
    "requesting user",
    "user making",
    "acting user",
    "the caller",
    "signed-in user",
    "signed in user",
];
const CURRENT_SESSION: &[&str] = &[
    "current session",
    "this session",
    "current conversation",
    "this conversation",
    "current chat",
    "this chat",
    "current thread",
    "this thread",
];
const THIS_REQUEST: &[&str] = &[
    "this request",
    "current request",
    "tracing",
    "trace",
    "correlat",
    "logging",
];
const WORKSPACE: &[&str] = &[
    "workspace",
    "project root",
    "repository root",
    "current working directory",
    "current directory",
];
const INSIDE: &[&str] = &[
    "relative",
    "subdirectory",
    "sub-directory",
    "within",
    "inside",
    "default",
    "under",
];

/// Why the runtime knows a parameter's value, when it does.
fn known_by_runtime(tool: &ToolView, name: &str, description: &str) -> Option<&'static str> {
    let joined = words(name).concat();
    let desc = description.to_lowercase();
    let says = |list: &[&str]| list.iter().any(|p| desc.contains(p));
    let tool_is_about = |entity: &str| words(tool.name).iter().any(|w| w.starts_with(entity));
    match joined.as_str() {
        "traceid" | "spanid" | "correlationid" | "traceparent" => {
            Some("tracing ids belong to the runtime, which records every call in its trace")
        }
        "requestid" if says(THIS_REQUEST) => {
            Some("the runtime gives every call an id and records it in its trace")
        }
        "caller" | "callerid" | "currentuser" | "currentuserid" | "requester" | "requesterid"
        | "requestinguser"
            if !tool_is_about("caller") =>
        {
            Some("the runtime knows who is calling")
        }
        "userid" | "user" | "username" | "useremail" | "userlogin"
            if says(CURRENT_USER) && !tool_is_about("user") =>
        {
            Some(
                "the runtime knows who is calling; only a user other than the caller is an argument",
            )
        }
        "sessionid" | "session" | "conversationid" | "threadid" | "chatid"
            if says(CURRENT_SESSION) && !tool_is_about("session") =>
        {
            Some("the runtime knows the session the call belongs to")
        }
        "tenantid" | "tenant" | "tenantname" if !tool_is_about("tenant") => Some(
            "the runtime knows the caller's tenant; a model-chosen tenant can reach another tenant's data",
        ),
        "workspaceroot" | "projectroot" | "reporoot" | "repositoryroot" if !says(INSIDE) => {
            Some("the runtime knows the workspace root (CEL sees it as `workspace`)")
        }
        "cwd" | "workdir" | "workingdir" | "workingdirectory" | "workspace" | "workspacedir"
        | "workspacepath" | "rootdir" | "projectdir"
            if says(WORKSPACE) && !says(INSIDE) && !tool_is_about("workspace") =>
        {
            Some("the runtime knows the workspace root (CEL sees it as `workspace`)")
        }
        "idempotencykey" | "idempotencytoken" | "dedupkey" | "deduplicationkey"
            if !used_as_key(tool, name) =>
        {
            Some(
                "the runtime gives every call an operation id that stays the same across its own retries; pass that to the backend",
            )
        }
        _ => None,
    }
}

/// Whether the contract's `idempotency.key` reads `args.<name>`.
fn used_as_key(tool: &ToolView, name: &str) -> bool {
    tool.resolved.cel.iter().any(|s| {
        s.role == CelRole::IdempotencyKey
            && s.analysis.as_ref().is_some_and(|a| {
                a.arg_paths
                    .iter()
                    .any(|p| p.first().is_some_and(|f| f == name))
            })
    })
}

/// Reports a parameter the runtime should supply.
pub(crate) fn check(ctx: &mut LintContext, tool: &ToolView, node: &SchemaNode) {
    if node.role != SchemaRole::Parameters {
        return;
    }
    let Some((key, _)) = node.property else {
        return;
    };
    if secret_kind(&key.name) == Some(SecretKind::Credential) {
        ctx.report(
            tool.span(key.range),
            format!("parameter `{}` makes the model supply a credential", key.name),
        )
        .help("credentials belong in the environment: remove the parameter and hand the secret to the backend (`exec.command.env.secret`, the MCP server's `env`, or the handler's configuration); a model that knows a key can repeat it anywhere");
        return;
    }
    // The rest are about top-level arguments only.
    if node.pointer
        != format!(
            "/properties/{}",
            key.name.replace('~', "~0").replace('/', "~1")
        )
    {
        return;
    }
    let Some(why) = known_by_runtime(tool, &key.name, node.description()) else {
        return;
    };
    ctx.report(
        tool.span(key.range),
        format!(
            "parameter `{}` asks the model for a value the runtime already has",
            key.name
        ),
    )
    .help(format!(
        "{why}: remove it from `parameters` and let the backend take it from the call context"
    ));
}
