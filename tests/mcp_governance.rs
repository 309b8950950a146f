//! `toolgate serve` across restarts, connections and processes, driven by a real MCP client
//! (rmcp's, over the child's stdin and stdout) against the real binary:
//!
//! - `kill -9` of `serve` during a call that is not idempotent; a restart; the same call from a
//!   new client does not run again — UNKNOWN_OUTCOME naming the operation — until a person
//!   settles it with `toolgate journal resolve`, while the new `serve` keeps running;
//! - after the restart, `journal list` shows the calls refused before the kill, with their rule
//!   chains;
//! - a key in `_meta` names a request across connections: replayed with the same arguments,
//!   refused with others; a deliberate repeat without a key runs again;
//! - two `serve` processes (and a `toolgate call`) share one journal; one never settles the
//!   other's running call;
//! - an unknown tool, or one outside the served set, is an `isError` result naming the close
//!   served tools; without a choice only read-only tools are served, and the startup line
//!   says so;
//! - what a `kill -9` loses of the audit: measured, and only the last calls.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    RequestMetaObject,
};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

/// A bound on every wait for something that must happen, so a broken server fails the test
/// instead of hanging it. Not a timing assertion.
const WAIT_LIMIT: Duration = Duration::from_secs(60);

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A workspace and a state folder for the fixture project `tests/fixtures/mcp_durable`.
struct Project {
    ws: tempfile::TempDir,
    state: tempfile::TempDir,
    config: PathBuf,
}

impl Project {
    fn new() -> Self {
        Project::with_config("toolgate.yaml")
    }

    fn with_config(name: &str) -> Self {
        Project {
            ws: tempfile::tempdir().unwrap(),
            state: tempfile::tempdir().unwrap(),
            config: repo().join("tests/fixtures/mcp_durable").join(name),
        }
    }

    fn ws(&self) -> &Path {
        self.ws.path()
    }

    fn base_args(&self) -> Vec<String> {
        vec![
            "--config".into(),
            self.config.to_string_lossy().into_owned(),
            "--workspace".into(),
            self.ws().to_string_lossy().into_owned(),
            "--state-dir".into(),
            self.state.path().to_string_lossy().into_owned(),
        ]
    }

    /// `toolgate ARGS` with the project's options appended.
    fn toolgate(&self, args: &[&str]) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_toolgate"));
        cmd.args(args);
        if args.first() == Some(&"journal") && args.get(1) != Some(&"recover") {
            cmd.arg("--state-dir").arg(self.state.path());
        } else {
            cmd.args(self.base_args());
        }
        cmd.stdin(Stdio::null()).output().unwrap()
    }

    /// stdout of a command that must succeed.
    fn ok(&self, args: &[&str]) -> String {
        let o = self.toolgate(args);
        assert_eq!(
            o.status.code(),
            Some(0),
            "toolgate {args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap()
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut args = args.to_vec();
        args.extend(["--format", "json"]);
        serde_json::from_str(&self.ok(&args)).unwrap()
    }

    fn marks(&self) -> Vec<String> {
        std::fs::read_to_string(self.ws().join("marks"))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// Makes `mark_once` calls of that name wait (until `hold(name, false)`).
    fn hold(&self, name: &str, on: bool) {
        let p = self.ws().join(format!("hold-{name}"));
        if on {
            std::fs::write(p, "").unwrap();
        } else {
            let _ = std::fs::remove_file(p);
        }
    }

    async fn serve(&self, extra: &[&str]) -> Server {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolgate"));
        cmd.arg("serve")
            .args(self.base_args())
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let stderr = child.stderr.take().unwrap();
        let said = Arc::new(Mutex::new(String::new()));
        let s = said.clone();
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(l)) = lines.next_line().await {
                let mut said = s.lock().unwrap();
                said.push_str(&l);
                said.push('\n');
            }
        });
        let info = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("mcp-governance-test", "0"),
        );
        let client = tokio::time::timeout(WAIT_LIMIT, info.serve((stdout, stdin)))
            .await
            .unwrap()
            .unwrap();
        Server {
            client: Some(client),
            child,
            said,
        }
    }
}

struct Server {
    client: Option<RunningService<RoleClient, ClientConfig>>,
    child: tokio::process::Child,
    said: Arc<Mutex<String>>,
}

/// What a call came back with: status, error type, the text the model reads.
#[derive(Debug)]
struct Answer {
    is_error: bool,
    status: String,
    error_type: Option<String>,
    text: String,
}

impl Answer {
    fn of(r: CallToolResult) -> Answer {
        let meta = r.meta.clone().unwrap_or_default();
        let text = r
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n");
        Answer {
            is_error: r.is_error == Some(true),
            status: meta
                .get("io.toolgate/status")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
            error_type: meta
                .get("io.toolgate/error_type")
                .and_then(Value::as_str)
                .map(str::to_owned),
            text,
        }
    }
}

impl Server {
    fn pid(&self) -> u32 {
        self.child.id().unwrap()
    }

    fn client(&self) -> &RunningService<RoleClient, ClientConfig> {
        self.client.as_ref().unwrap()
    }

    async fn call(&self, tool: &str, args: Value, key: Option<&str>) -> Answer {
        let Value::Object(args) = args else {
            panic!("arguments must be an object")
        };
        let mut params = CallToolRequestParams::new(tool.to_owned()).with_arguments(args);
        if let Some(k) = key {
            let mut meta = RequestMetaObject::default();
            meta.insert(
                "io.toolgate/idempotency-key".to_owned(),
                Value::String(k.to_owned()),
            );
            params.meta = Some(meta);
        }
        let r = tokio::time::timeout(WAIT_LIMIT, self.client().peer().call_tool(params))
            .await
            .unwrap()
            .unwrap();
        Answer::of(r)
    }

    async fn tools(&self) -> Vec<String> {
        let listed = self.client().peer().list_all_tools().await.unwrap();
        listed.into_iter().map(|t| t.name.into_owned()).collect()
    }

    fn said(&self) -> String {
        self.said.lock().unwrap().clone()
    }

    /// `kill -9`: nothing of the process gets to run again.
    async fn kill(mut self) {
        self.child.start_kill().unwrap();
        self.child.wait().await.unwrap();
    }

    /// The client leaves (stdin closes); the server flushes its journal and exits.
    async fn close(mut self) {
        if let Some(mut c) = self.client.take() {
            let _ = c.close().await;
        }
        let status = tokio::time::timeout(WAIT_LIMIT, self.child.wait())
            .await
            .unwrap()
            .unwrap();
        assert!(status.success(), "serve exited with {status}");
    }
}

async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < WAIT_LIMIT, "gave up waiting until {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The operation ids in a text.
fn operation_ids(text: &str) -> Vec<String> {
    regex::Regex::new(r"op-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
        .unwrap()
        .find_iter(text)
        .map(|m| m.as_str().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_cut_off_by_kill_9_is_not_run_again_by_a_new_client_until_it_is_settled() {
    let p = Project::new();
    let deploy = json!({"name": "deploy"});

    // The first server: a refused call, an unknown tool, then a call held mid-way and killed.
    let a = p.serve(&["--toolset", "work"]).await;
    let refused = a
        .call("mark_once", json!({"name": "forbidden-x"}), None)
        .await;
    assert_eq!(
        (refused.status.as_str(), refused.error_type.as_deref()),
        ("denied", Some("POLICY_DENIED"))
    );
    let unknown = a.call("mark_twice", json!({"name": "x"}), None).await;
    assert_eq!(unknown.error_type.as_deref(), Some("UNKNOWN_TOOL"));
    // Both are in the journal's audit before the kill (it writes in batches, within ms).
    wait_until("the refusals are in the audit", || {
        p.json(&["journal", "list", "--error-type", "POLICY_DENIED"])
            .as_array()
            .is_some_and(|a| !a.is_empty())
            && p.json(&["journal", "list", "--error-type", "UNKNOWN_TOOL"])
                .as_array()
                .is_some_and(|a| !a.is_empty())
    })
    .await;
    p.hold("deploy", true);
    let held = {
        let peer = a.client().peer().clone();
        let Value::Object(args) = deploy.clone() else {
            unreachable!()
        };
        tokio::spawn(async move {
            peer.call_tool(CallToolRequestParams::new("mark_once").with_arguments(args))
                .await
        })
    };
    wait_until("the held call wrote its mark", || p.marks().len() == 1).await;
    a.kill().await;
    assert!(held.await.unwrap().is_err(), "the killed server answered");
    p.hold("deploy", false);

    // A restart and a new client: the same call does not run again.
    let b = p.serve(&["--toolset", "work"]).await;
    let again = b.call("mark_once", deploy.clone(), None).await;
    assert_eq!(
        (again.is_error, again.error_type.as_deref()),
        (true, Some("UNKNOWN_OUTCOME")),
        "{}",
        again.text
    );
    let mut ops = operation_ids(&again.text);
    ops.dedup();
    assert_eq!(ops.len(), 1, "{}", again.text);
    let op = &ops[0];
    assert!(
        again.text.contains(&format!(
            "was cut off by a crash before it reported a result, so it may have taken effect and running it again could do it twice. Verify before repeating; once you know, `toolgate journal resolve {op} --as succeeded|failed` (or the runtime's reconcile hook) settles it, and then this call runs"
        )),
        "{}",
        again.text
    );
    assert_eq!(p.marks().len(), 1, "it ran again: {:?}", p.marks());

    // After the restart, the journal still shows what was refused before the kill, with the
    // rule chain that refused it.
    let listed = p.ok(&["journal", "list"]);
    let denied = listed
        .lines()
        .find(|l| l.contains("POLICY_DENIED"))
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(
        denied.ends_with(
            "deny by rule no-forbidden-marks [no-forbidden-marks (deny matched), test-marks-run (allow matched)]"
        ),
        "{denied}"
    );
    assert!(listed.contains("mark_twice"), "{listed}");
    let calls = p.json(&["journal", "list", "--error-type", "POLICY_DENIED"]);
    let chain: Vec<(String, bool)> = calls[0]["permission"]["chain"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_owned(),
                r["matched"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        chain,
        vec![
            ("no-forbidden-marks".to_owned(), true),
            ("test-marks-run".to_owned(), true)
        ]
    );
    assert_eq!(
        calls[0]["summary"],
        "mark_once was denied by policy rule `no-forbidden-marks` (Forbidden marks are never written)."
    );

    // A person checks (one line: it did run), says so while `serve` keeps running; the call
    // then runs (a new request: the first one took effect, this one is asked for again).
    let resolved = p.ok(&[
        "journal",
        "resolve",
        op,
        "--as",
        "succeeded",
        "--note",
        "its line is in marks",
    ]);
    assert!(
        resolved.starts_with(&format!("{op} (mark_once call ")),
        "{resolved}"
    );
    let ran = b.call("mark_once", deploy.clone(), None).await;
    assert_eq!(
        (ran.is_error, ran.status.as_str()),
        (false, "success"),
        "{}",
        ran.text
    );
    assert_eq!(p.marks().len(), 2);
    b.close().await;

    let shown = p.ok(&["journal", "show", op]);
    assert!(
        shown.contains(
            "unknown_outcome by recovery: mark_once is not idempotent and started before the crash"
        ),
        "{shown}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_key_names_one_request_across_connections() {
    let p = Project::new();
    // Client keys are scoped per session without a principal: both connections name it.
    let alice = ["--toolset", "work", "--session", "alice"];
    let a = p.serve(&alice).await;
    let first = a
        .call("mark_once", json!({"name": "release"}), Some("req-7f3a"))
        .await;
    assert_eq!(first.status, "success", "{}", first.text);
    // The tool saw the client's key.
    assert_eq!(p.marks(), vec!["release req-7f3a".to_owned()]);
    a.close().await;

    // A new process and connection, the same key and arguments: the recorded result.
    let b = p.serve(&alice).await;
    let retry = b
        .call("mark_once", json!({"name": "release"}), Some("req-7f3a"))
        .await;
    assert_eq!((retry.is_error, retry.status.as_str()), (false, "success"));
    assert!(retry.text.contains("marked release"), "{}", retry.text);
    assert_eq!(p.marks().len(), 1, "the retry ran again");
    // The same key with other arguments is the client's mistake.
    let reused = b
        .call("mark_once", json!({"name": "other"}), Some("req-7f3a"))
        .await;
    assert_eq!(reused.error_type.as_deref(), Some("INVALID_ARGUMENTS"));
    assert!(
        reused
            .text
            .contains("the idempotency key `req-7f3a` was already used with other arguments"),
        "{}",
        reused.text
    );
    // An unusable key is refused before anything runs.
    let bad = b
        .call("mark_once", json!({"name": "x"}), Some(&"k".repeat(300)))
        .await;
    assert_eq!(bad.error_type.as_deref(), Some("INVALID_ARGUMENTS"));
    // Without a key, the same call made again on purpose after the first finished runs again:
    // a finished call is not a reason to refuse or replay another request.
    for _ in 0..2 {
        let r = b.call("mark_once", json!({"name": "twice"}), None).await;
        assert_eq!(r.status, "success", "{}", r.text);
    }
    assert_eq!(
        p.marks().iter().filter(|l| l.starts_with("twice ")).count(),
        2
    );
    b.close().await;

    // Another session sending alice's key: its own request, run afresh — never alice's
    // recorded result, and no answer names anything of alice's call.
    let alice_ops = operation_ids(
        &p.json(&["journal", "list", "--session", "alice"])
            .to_string(),
    );
    assert!(!alice_ops.is_empty());
    let bob = p.serve(&["--toolset", "work", "--session", "bob"]).await;
    let same = bob
        .call("mark_once", json!({"name": "release"}), Some("req-7f3a"))
        .await;
    assert_eq!(same.status, "success", "{}", same.text);
    assert_eq!(
        p.marks()
            .iter()
            .filter(|l| l.starts_with("release "))
            .count(),
        2,
        "bob got alice's result instead of a run of his own"
    );
    let other = bob
        .call("mark_once", json!({"name": "bobs"}), Some("req-7f3a"))
        .await;
    // Within bob's scope the key now names his first call: his own mismatch, naming his call.
    assert_eq!(other.error_type.as_deref(), Some("INVALID_ARGUMENTS"));
    for answer in [&same, &other] {
        for op in &alice_ops {
            assert!(!answer.text.contains(op.as_str()), "{}", answer.text);
        }
        assert!(!answer.text.contains("alice"), "{}", answer.text);
    }
    bob.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_share_the_journal_and_never_settle_each_others_running_calls() {
    let p = Project::new();
    let a = p.serve(&["--toolset", "work", "--session", "alpha"]).await;
    p.hold("long", true);
    let held = {
        let peer = a.client().peer().clone();
        tokio::spawn(async move {
            let Value::Object(args) = json!({"name": "long"}) else {
                unreachable!()
            };
            peer.call_tool(CallToolRequestParams::new("mark_once").with_arguments(args))
                .await
        })
    };
    wait_until("the held call wrote its mark", || p.marks().len() == 1).await;

    // A second server on the same project starts (no "journal in use"), recovers, and serves.
    let b = p.serve(&["--toolset", "work", "--session", "beta"]).await;
    let r = b.call("mark_once", json!({"name": "other"}), None).await;
    assert_eq!(r.status, "success", "{}", r.text);
    // `toolgate call` while both run.
    let o = p.toolgate(&["call", "read_file", "--args", r#"{"path": "marks"}"#]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    // The first server's call is running, not cut off: nobody settled it.
    let running = p.json(&["journal", "list", "--operations", "--status", "started"]);
    let running = running.as_array().unwrap();
    assert_eq!(running.len(), 1, "{running:?}");
    assert_eq!(running[0]["session_id"], "alpha");
    let op = running[0]["operation_id"].as_str().unwrap().to_owned();
    assert!(
        p.ok(&["journal", "show", &op])
            .contains(&format!("running      in toolgate process {}", a.pid())),
    );
    let o = p.toolgate(&["journal", "recover"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "recovery: no unfinished operations\n"
    );
    let o = p.toolgate(&["journal", "resolve", &op, "--as", "failed"]);
    assert_eq!(
        String::from_utf8(o.stderr).unwrap(),
        format!(
            "toolgate: journal: operation {op} is still running in toolgate process {}; it can be settled once it has finished or that process has ended\n",
            a.pid()
        )
    );
    // The same call from the other server while it runs: its outcome is not known yet.
    let dup = b.call("mark_once", json!({"name": "long"}), None).await;
    assert_eq!(
        dup.error_type.as_deref(),
        Some("UNKNOWN_OUTCOME"),
        "{}",
        dup.text
    );
    assert!(
        dup.text.contains(&format!("(operation {op}, call mcp-"))
            && dup.text.contains(&format!(
                "of session alpha) is still running in toolgate process {}",
                a.pid()
            )),
        "{}",
        dup.text
    );
    assert_eq!(p.marks().len(), 2);

    // It finishes; then the same call, asked for again, runs.
    p.hold("long", false);
    let done = held.await.unwrap().unwrap();
    assert_eq!(done.is_error, Some(false), "{:?}", done);
    let again = b.call("mark_once", json!({"name": "long"}), None).await;
    assert_eq!(again.status, "success", "{}", again.text);
    assert_eq!(p.marks().len(), 3);
    a.close().await;
    b.close().await;
    let sessions: Vec<String> = p
        .json(&["journal", "list", "--tool", "mark_once"])
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["session_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(sessions, vec!["alpha", "beta", "beta", "beta"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_what_the_operator_chose_is_served_and_other_tools_are_observations() {
    // No choice: read-only tools only, and the startup line says which and why.
    let p = Project::new();
    let s = p.serve(&[]).await;
    assert_eq!(s.tools().await, vec!["glob", "read_file"]);
    wait_until("serve said what it serves", || {
        s.said().lines().count() >= 2
    })
    .await;
    let said = s.said();
    let ws = p.ws().display();
    assert_eq!(
        said,
        format!(
            "toolgate serve: 2 tool(s) over MCP on stdio (workspace {ws}, session one per connection): glob, read_file\n  served: no toolset was chosen, so only tools that neither run processes nor write or delete; left out: mark_once (runs a process), write_file (local_write). Choose with --toolset NAME, `serve: {{toolset: NAME}}` in toolgate.yaml, or --all\n"
        )
    );
    // A tool that exists but is not served, and one that does not exist: results, not errors.
    let w = s
        .call("write_file", json!({"path": "a.txt", "content": "x"}), None)
        .await;
    assert_eq!(
        (w.is_error, w.status.as_str(), w.error_type.as_deref()),
        (true, "error", Some("UNKNOWN_TOOL"))
    );
    assert!(
        w.text
            .contains("Tool 'write_file' is not available in the toolset 'read-only default'."),
        "{}",
        w.text
    );
    let u = s.call("read_files", json!({"path": "a.txt"}), None).await;
    assert_eq!(u.error_type.as_deref(), Some("UNKNOWN_TOOL"));
    assert!(u.text.contains("Unknown tool 'read_files'."), "{}", u.text);
    assert!(u.text.contains("read_file"), "{}", u.text);
    assert!(!p.ws().join("a.txt").exists());
    s.close().await;
    let unknown = p.json(&["journal", "list", "--error-type", "UNKNOWN_TOOL"]);
    assert_eq!(
        unknown
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["tool"].as_str().unwrap())
            .collect::<Vec<_>>(),
        vec!["write_file", "read_files"]
    );

    // toolgate.yaml's `serve.toolset`, and --all.
    let p = Project::with_config("serve-toolset.yaml");
    let s = p.serve(&[]).await;
    assert_eq!(s.tools().await, vec!["mark_once", "read_file"]);
    wait_until("serve said what it serves", || {
        s.said().lines().count() >= 2
    })
    .await;
    assert!(
        s.said()
            .ends_with("  served: the toolset `work`, chosen by toolgate.yaml's serve.toolset\n"),
        "{}",
        s.said()
    );
    s.close().await;
    let s = p.serve(&["--all", "--session", "ops"]).await;
    assert_eq!(
        s.tools().await,
        vec!["glob", "mark_once", "read_file", "write_file"]
    );
    wait_until("serve said what it serves", || {
        s.said().lines().count() >= 2
    })
    .await;
    assert!(s.said().contains("session `ops`"), "{}", s.said());
    assert!(
        s.said().ends_with("  served: every tool (--all)\n"),
        "{}",
        s.said()
    );
    s.close().await;
}

/// What a `kill -9` loses of the audit: the calls answered last, whose batch was not yet
/// committed (the writer commits within its linger of 10 ms). A graceful end loses nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_loses_at_most_its_last_batch_to_a_kill() {
    const CALLS: usize = 200;
    let p = Project::new();
    let names = |prefix: &str| -> Vec<String> {
        (0..CALLS)
            .map(|i| format!("forbidden-{prefix}-{i}"))
            .collect()
    };
    // Graceful: every call is in the audit.
    let s = p
        .serve(&["--toolset", "work", "--session", "graceful"])
        .await;
    for n in names("g") {
        let r = s.call("mark_once", json!({"name": n}), None).await;
        assert_eq!(r.error_type.as_deref(), Some("POLICY_DENIED"));
    }
    s.close().await;
    let count = |session: &str| {
        p.json(&["journal", "list", "--session", session, "--limit", "100000"])
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(count("graceful"), CALLS);

    // kill -9 right after the last answer: what is lost is the tail.
    let s = p.serve(&["--toolset", "work", "--session", "killed"]).await;
    let started = Instant::now();
    for n in names("k") {
        s.call("mark_once", json!({"name": n}), None).await;
    }
    let took = started.elapsed();
    s.kill().await;
    let kept: Vec<usize> = p
        .json(&[
            "journal",
            "list",
            "--session",
            "killed",
            "--limit",
            "100000",
        ])
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            c["call_id"]
                .as_str()
                .unwrap()
                .rsplit('-')
                .next()
                .unwrap()
                .parse::<usize>()
                .unwrap()
        })
        .collect();
    let lost = CALLS - kept.len();
    println!(
        "audit under kill -9: {CALLS} refused calls in {took:?} ({:.0} µs each); {lost} lost (the last batch)",
        took.as_micros() as f64 / CALLS as f64
    );
    // What survived is a prefix: the calls answered first (JSON-RPC ids count up from the
    // initialize request's 0; tools/call requests are 1..=CALLS).
    assert_eq!(kept, (1..=kept.len()).collect::<Vec<_>>());
}
