//! The escape suite, permission stage: in a workspace full of secrets, every standard tool that
//! takes a path (or a glob) is refused a protected path however it is spelled — `./.env`,
//! `config/../.env`, `CONFIG/.ENV`, a link to it, a folder of keys, `.ssh` — before any rule,
//! with POLICY_DENIED naming the path, the glob and the reason; no allow rule, session grant or
//! approver changes that, and the approver is never asked. bash's rules refuse commands that
//! name protected paths, and never allow a command line that is more than one plain command.
//!
//! What the permission stage lets through on purpose (a folder such as `keys/` that only holds
//! protected files, a pattern like `**/*.pem`) is the builtins' and the sandbox's to filter;
//! those routes are checked here only for the permission decision.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;

use common::escape::{HostileWorkspace, Secret};
use common::{Scripted, call, run1};
use serde_json::{Value, json};
use toolgate::ir::{ErrorType, Status};
use toolgate::policy::DecisionSource;
use toolgate::runtime::extend::{ApprovalOutcome, ApprovalScope};
use toolgate::runtime::{Session, ToolResult, ToolRuntime};

/// Spellings of protected paths that try to dodge the globs.
const DODGES: &[&str] = &[
    ".env",
    "./.env",
    "config/../.env",
    "CONFIG/.ENV",
    "envlink",
    "keylink/server.pem",
    "keys/id_rsa",
    "./keys/../keys/server.pem",
    ".ssh",
    ".ssh/config",
    "deploy/.aws/credentials",
    "vendor/lib/.env",
];

const ZERO_HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The hostile workspace with links (`envlink -> .env`, `keylink -> keys`) and an `.ssh`
/// folder of its own.
fn workspace() -> HostileWorkspace {
    let mut ws = HostileWorkspace::new();
    std::os::unix::fs::symlink(".env", ws.path().join("envlink")).unwrap();
    std::os::unix::fs::symlink("keys", ws.path().join("keylink")).unwrap();
    let marker = format!("TGSECRET-ws-ssh-{}", std::process::id());
    ws.fixture
        .write(".ssh/config", &format!("Host x\n  IdentityFile {marker}\n"));
    ws.secrets.push(Secret {
        path: ".ssh/config".into(),
        marker,
    });
    ws
}

/// An approver that allows everything for the session, with a card naming secret files: were
/// it ever asked about a protected path, it would grant it.
fn generous() -> Arc<Scripted> {
    Scripted::new(ApprovalOutcome::AllowForSession {
        scope: Some(ApprovalScope {
            writes: BTreeSet::from([
                "file:.env".to_owned(),
                "file:notes.md".to_owned(),
                "file:keys/new.pem".to_owned(),
            ]),
        }),
    })
}

/// Runs one call and checks the protected-path refusal, and that nothing secret came back.
async fn refused_as_protected(
    ws: &HostileWorkspace,
    rt: &ToolRuntime,
    session: &Session,
    tool: &str,
    args: Value,
) -> ToolResult {
    let route = format!("{tool} {args}");
    let r = run1(rt, session, call("c", tool, args)).await;
    ws.assert_result_clean(&route, rt, &r);
    assert_eq!(
        (r.status(), r.error_type()),
        (Status::Denied, Some(ErrorType::PolicyDenied)),
        "{route}: {}",
        r.summary()
    );
    let record = rt.traces().pop().unwrap().permission.unwrap();
    assert!(
        matches!(record.source, DecisionSource::Protected { .. }),
        "{route}: decided by {:?}",
        record.source
    );
    assert!(!record.granted, "{route}");
    assert!(
        r.summary().contains(" is protected (matches `"),
        "{route}: {}",
        r.summary()
    );
    assert_eq!(r.hint(), Some(toolgate::runtime::PROTECTED_HINT), "{route}");
    r
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_path_tool_refuses_every_spelling_of_a_protected_path() {
    let ws = workspace();
    let approver = generous();
    let rt = ws
        .fixture
        .builder()
        .approver(approver.clone())
        .build()
        .unwrap();
    let s = Session::new("s", "interactive");
    // A session grant exists before the attempts: the card names `.env`.
    let r = run1(
        &rt,
        &s,
        call(
            "c",
            "write_file",
            json!({"path": "notes.md", "content": "x\n"}),
        ),
    )
    .await;
    assert!(r.is_success(), "{}", r.summary());
    assert_eq!(approver.asked(), 1);

    let mut routes = 0;
    for path in DODGES {
        for (tool, args) in [
            ("read_file", json!({"path": path})),
            (
                "write_file",
                json!({"path": path, "content": "owned\n", "overwrite": true}),
            ),
            (
                "apply_patch",
                json!({"path": path, "expected_hash": ZERO_HASH,
                       "edits": [{"old_text": "API_KEY", "new_text": "X"}]}),
            ),
            ("search_files", json!({"pattern": "API_KEY", "path": path})),
            ("grep", json!({"pattern": "API_KEY", "path": path})),
            ("list_dir", json!({"path": path})),
            // slow_edit's own rule allows every workspace path: protection comes first.
            ("slow_edit", json!({"path": path, "ms": 1})),
        ] {
            refused_as_protected(&ws, &rt, &s, tool, args).await;
            routes += 1;
        }
    }
    // Globs: a literal prefix that is protected, however spelled or linked.
    for pattern in [
        ".env",
        "./.env",
        "CONFIG/.ENV",
        "envlink",
        ".ssh/*",
        "deploy/.aws/**",
    ] {
        refused_as_protected(&ws, &rt, &s, "glob", json!({ "pattern": pattern })).await;
        routes += 1;
    }
    for glob in [".env", "deploy/.aws/*", "keylink/id_rsa"] {
        refused_as_protected(
            &ws,
            &rt,
            &s,
            "search_files",
            json!({"pattern": "API_KEY", "glob": glob}),
        )
        .await;
        routes += 1;
    }
    // git_diff's `paths` list: one protected entry refuses the call.
    refused_as_protected(
        &ws,
        &rt,
        &s,
        "git_diff",
        json!({"paths": ["src/app.py", "config/../.env"]}),
    )
    .await;
    routes += 1;
    assert_eq!(routes, DODGES.len() * 7 + 6 + 3 + 1);
    assert_eq!(
        approver.asked(),
        1,
        "no protected call reached the approver"
    );
    // Nothing was written: every secret still holds its marker, no new key exists.
    for secret in &ws.secrets {
        if !secret.path.starts_with('/') {
            let text = ws.fixture.read(&secret.path);
            assert!(text.contains(&secret.marker), "{} was changed", secret.path);
        }
    }
    assert!(!ws.path().join("keys/new.pem").exists());
    assert!(!ws.path().join(".ssh/authorized_keys").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_refusal_names_the_path_the_glob_and_the_reason() {
    let ws = workspace();
    let rt = ws.runtime();
    let s = Session::new("s", "interactive");
    let r =
        refused_as_protected(&ws, &rt, &s, "read_file", json!({"path": "config/../.env"})).await;
    assert_eq!(
        r.summary(),
        "read_file was denied: `.env` is protected (matches `.env`): Secrets are never readable or writable by tools."
    );
    let r = refused_as_protected(&ws, &rt, &s, "read_file", json!({"path": "envlink"})).await;
    assert_eq!(
        r.summary(),
        "read_file was denied: `.env` is protected (matches `.env`): Secrets are never readable or writable by tools. Paths are judged by the file they lead to: `envlink` leads to `.env`."
    );
    let record = rt.traces().pop().unwrap().permission.unwrap();
    assert_eq!(
        record.source,
        DecisionSource::Protected {
            parameter: "path".into(),
            path: ".env".into(),
            glob: ".env".into(),
        }
    );
    // The rules' chain is kept for the record: read_file's own rule did not match.
    assert_eq!(
        record
            .chain
            .iter()
            .map(|o| (o.id.as_str(), o.matched))
            .collect::<Vec<_>>(),
        [("no-repository-internals", false)]
    );
    let r = refused_as_protected(&ws, &rt, &s, "list_dir", json!({"path": "./.ssh"})).await;
    assert_eq!(
        r.summary(),
        "list_dir was denied: `.ssh` is protected (matches `.ssh`): Credential files of common tools are never readable or writable by tools."
    );
}

/// A folder that holds only protected files is not itself protected: the permission stage lets
/// the call through, and the tools filter what is inside (the builtins' and the sandbox's part).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_of_keys_is_not_itself_protected() {
    let ws = workspace();
    let rt = ws.runtime();
    let s = Session::new("s", "interactive");
    for (tool, args) in [
        ("read_file", json!({"path": "keys/"})),
        ("list_dir", json!({"path": "keys"})),
        ("glob", json!({"pattern": "keys/*"})),
        (
            "search_files",
            json!({"pattern": "API_KEY", "path": "keys"}),
        ),
        ("grep", json!({"pattern": "API_KEY", "path": "keys"})),
    ] {
        let route = format!("{tool} {args}");
        let r = run1(&rt, &s, call("c", tool, args)).await;
        let record = rt.traces().pop().unwrap().permission.unwrap();
        assert!(
            !matches!(record.source, DecisionSource::Protected { .. }),
            "{route}: {}",
            r.summary()
        );
        // What the tools return without reading file content carries no secret today.
        if matches!(tool, "read_file" | "list_dir" | "glob") {
            ws.assert_result_clean(&route, &rt, &r);
        }
    }
}

/// bash: a command that names a protected path is denied (a link to one too, judged through
/// the workspace at run time); a line that is more than one plain command is never allowed
/// without a person; one plain reading command over workspace files runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_never_runs_a_protected_path_or_a_compound_line_unasked() {
    let ws = workspace();
    let rt = ws.runtime();
    let ci = Session::new("s", "ci");
    for command in [
        "cat .env",
        "cat ./.env",
        "cat config/../.env",
        "cat CONFIG/.ENV",
        "cat envlink",
        "head -c 100 keylink/server.pem",
        "cat ~/.ssh/id_rsa",
        "ls\ncat .env",
        "ls; cat .env",
        "echo $(cat .env)",
        "echo `cat .env`",
        "wc -c < .env",
        "tail .ssh/config",
        "cat $HOME/.ssh/id_rsa",
    ] {
        let route = format!("bash {command:?}");
        let r = run1(&rt, &ci, call("c", "bash", json!({ "command": command }))).await;
        ws.assert_result_clean(&route, &rt, &r);
        assert_eq!(
            r.error_type(),
            Some(ErrorType::PolicyDenied),
            "{route}: {}",
            r.summary()
        );
        let record = rt.traces().pop().unwrap().permission.unwrap();
        assert_eq!(
            record.source,
            DecisionSource::Rule {
                id: "no-protected-paths".into()
            },
            "{route}"
        );
    }
    for command in [
        "ls\ntouch x",
        "ls\rtouch x",
        "ls; rm x",
        "ls $(rm x)",
        "ls `rm x`",
        "ls > f",
        "cat /etc/shadow",
        "head ../x",
        "cat .e*",
    ] {
        let route = format!("bash {command:?}");
        let r = run1(&rt, &ci, call("c", "bash", json!({ "command": command }))).await;
        ws.assert_result_clean(&route, &rt, &r);
        assert_eq!(
            r.error_type(),
            Some(ErrorType::ApprovalUnavailable),
            "{route} must ask (nobody can in ci): {}",
            r.summary()
        );
    }
    assert!(!ws.path().join("x").exists() && !ws.path().join("f").exists());
    let r = run1(
        &rt,
        &ci,
        call("c", "bash", json!({"command": "cat src/app.py"})),
    )
    .await;
    let record = rt.traces().pop().unwrap().permission.unwrap();
    assert_eq!(
        record.source,
        DecisionSource::Rule {
            id: "read-only-commands".into()
        },
        "{}",
        r.summary()
    );
    ws.assert_result_clean("bash cat src/app.py", &rt, &r);
}

/// A command line nested as deep as bash's 4,000-character `command` allows (each opener the
/// shell reader recurses into, up to ~2,000 levels) is refused by the rule that cannot read it — the reader's depth bound, not a stack overflow
/// that would take the whole runtime down — and the runtime keeps serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_refuses_a_line_nested_too_deep_to_read() {
    let ws = workspace();
    let rt = ws.runtime();
    let ci = Session::new("s", "ci");
    for (open, close) in [
        ("(", ")"),
        ("$(", ")"),
        ("$((", "))"),
        ("`$(", ")`"),
        ("\"$(", ")\""),
    ] {
        let n = (4000 - "cat .env".len()) / (open.len() + close.len());
        let command = format!("{}cat .env{}", open.repeat(n), close.repeat(n));
        let route = format!("bash {open}×{n}");
        let r = run1(&rt, &ci, call("c", "bash", json!({ "command": command }))).await;
        ws.assert_result_clean(&route, &rt, &r);
        assert_eq!(
            r.error_type(),
            Some(ErrorType::PolicyDenied),
            "{route}: {}",
            r.summary()
        );
        let summary = r.summary();
        assert!(
            summary.contains("could not be evaluated") && summary.contains("levels deep"),
            "{route}: {summary}"
        );
    }
    let r = run1(
        &rt,
        &ci,
        call("c", "bash", json!({"command": "cat src/app.py"})),
    )
    .await;
    assert_eq!(r.status(), Status::Success, "{}", r.summary());
}
