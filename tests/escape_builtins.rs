//! The escape suite, builtin tools: every route by which a builtin could hand a protected byte
//! to the model, or write into `.git`, in the hostile workspace — protected targets named
//! outright, searches used as an oracle, walks over the tree, hard links, links swapped in
//! while calls run, FIFOs. (A 1 GiB file and the artifact budgets: tests/escape_budgets.rs.)
//!
//! Calls go through the whole runtime. Where the permission stage would refuse a path argument
//! first, the routes use spellings it cannot see (walks, hard links, swaps, nested `.git`
//! folders); the builtins' own unit tests run them below the permission stage.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use common::escape::{HostileWorkspace, WORKSPACE_SECRETS};
use common::{Scripted, call, run1};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use toolgate::ir::{ErrorType, Status};
use toolgate::runtime::extend::ApprovalOutcome;
use toolgate::runtime::{Session, ToolResult, ToolRuntime};

fn session(id: &str) -> Session {
    Session::new(id, "interactive")
}

fn approving(ws: &HostileWorkspace) -> ToolRuntime {
    ws.fixture
        .builder()
        .approver(Scripted::new(ApprovalOutcome::AllowOnce))
        .build()
        .unwrap()
}

async fn call1(rt: &ToolRuntime, tool: &str, args: Value) -> ToolResult {
    run1(rt, &session("s"), call("c", tool, args)).await
}

/// The paths a result names (glob's `paths`, search_files' `files`, list_dir's `entries`).
fn names(r: &ToolResult) -> Vec<String> {
    let s = r.structured().unwrap();
    let list = s
        .get("paths")
        .or_else(|| s.get("files"))
        .or_else(|| s.get("entries"))
        .unwrap();
    list.as_array()
        .unwrap()
        .iter()
        .map(|v| match v {
            Value::String(p) => p.clone(),
            v => v
                .get("path")
                .or_else(|| v.get("name"))
                .and_then(Value::as_str)
                .unwrap()
                .to_owned(),
        })
        .collect()
}

/// Route: a protected target named outright — read, written, patched. Every one is denied,
/// nothing leaks and nothing is written (the nested repository's `.git` and `keys/id_rsa`
/// are outside the contracts' own deny globs: the builtins refuse them themselves).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protected_targets_are_refused_by_every_file_builtin() {
    let ws = HostileWorkspace::new();
    let rt = approving(&ws);
    let targets: Vec<&str> = WORKSPACE_SECRETS
        .iter()
        .copied()
        .chain([
            ".git/config",
            "vendor/lib/.git/config",
            "vendor/lib/.git/HEAD",
        ])
        .collect();
    for path in &targets {
        let before = std::fs::read(ws.path().join(path)).unwrap();
        let hash = blake3::hash(&before).to_hex().to_string();
        for (tool, args) in [
            ("read_file", json!({"path": path})),
            (
                "write_file",
                json!({"path": path, "content": "pwned\n", "overwrite": true}),
            ),
            (
                "apply_patch",
                json!({"path": path, "expected_hash": hash, "edits": [{"old_text": "=", "new_text": "+"}]}),
            ),
        ] {
            let r = call1(&rt, tool, args).await;
            let route = format!("{tool} {path}");
            ws.assert_result_clean(&route, &rt, &r);
            assert_eq!(
                (r.status(), r.error_type()),
                (Status::Denied, Some(ErrorType::PolicyDenied)),
                "{route}: {}",
                r.summary()
            );
        }
        assert_eq!(
            std::fs::read(ws.path().join(path)).unwrap(),
            before,
            "{path}"
        );
    }
    for hook in [".git/hooks/pre-commit", "vendor/lib/.git/hooks/pre-commit"] {
        let r = call1(
            &rt,
            "write_file",
            json!({"path": hook, "content": "#!/bin/sh\necho pwned\n"}),
        )
        .await;
        assert_eq!(r.error_type(), Some(ErrorType::PolicyDenied), "{hook}");
        assert!(!ws.path().join(hook).exists(), "{hook}");
    }
}

/// Route: search_files as an oracle. Searching for each secret's exact marker, for a prefix
/// of it and for something absent gives the same answer over the tree and over every part of
/// it: no file is reported, and the withheld count does not move with the pattern.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_files_answers_nothing_about_protected_files() {
    let ws = HostileWorkspace::new();
    let rt = ws.runtime();
    for root in [".", "keys", "config", "deploy", "vendor", "vendor/lib"] {
        let mut answers = Vec::new();
        for secret in &ws.secrets {
            // Patterns that match the marker (or would, with one more guess) without holding
            // it: the result echoes the pattern, which is the model's own guess, not a leak.
            let m = &secret.marker;
            for pattern in [
                format!("[{}]{}", &m[..1], &m[1..]),
                m[..m.len() - 4].to_owned(),
                format!("[{}]{}-absent", &m[..1], &m[1..]),
            ] {
                let r = call1(
                    &rt,
                    "search_files",
                    json!({"pattern": pattern, "path": root}),
                )
                .await;
                ws.assert_result_clean(&format!("search_files {root} /{pattern}/"), &rt, &r);
                answers.push(r.structured().unwrap().clone());
            }
        }
        let first = answers[0].clone();
        assert_eq!(first["total_files"], 0, "{root}");
        assert!(answers.iter().all(|a| *a == first), "{root}: {answers:?}");
    }
    // Rooted at a protected file or folder: refused, whatever the pattern.
    for path in [
        ".env",
        "keys/id_rsa",
        "deploy/.aws",
        ".git",
        "vendor/lib/.git",
    ] {
        let r = call1(
            &rt,
            "search_files",
            json!({"pattern": "TGSECRET", "path": path}),
        )
        .await;
        ws.assert_result_clean(&format!("search_files {path}"), &rt, &r);
        assert_eq!(r.error_type(), Some(ErrorType::PolicyDenied), "{path}");
    }
    // An .env that .gitignore does not list is skipped all the same.
    ws.fixture.write(".gitignore", "");
    let r = call1(&rt, "search_files", json!({"pattern": "TGSECRET"})).await;
    ws.assert_result_clean("search_files without .gitignore", &rt, &r);
    assert_eq!(r.structured().unwrap()["total_files"], 0);
}

/// Route: glob and list_dir over the tree. No protected name and nothing inside any `.git`
/// (the nested repository's included) is listed; the results count what they withheld.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn glob_and_list_dir_withhold_protected_entries() {
    let ws = HostileWorkspace::new();
    let rt = ws.runtime();
    let leaks = |names: &[String]| {
        names
            .iter()
            .filter(|n| {
                n.split('/').any(|c| c == ".git")
                    || WORKSPACE_SECRETS
                        .iter()
                        .any(|s| n.as_str() == *s || n.ends_with(&format!("/{s}")))
                    || n.contains(".aws")
            })
            .cloned()
            .collect::<Vec<_>>()
    };
    // Patterns into a `.git` folder never reach the builtin: the glob tool's own
    // `no-repository-internals` rule denies them first (the builtin's withholding of `.git` is
    // covered by the walks below and by the builtin's unit tests).
    for pattern in ["**/.git/**", ".git/**", "vendor/lib/.git/**"] {
        let r = call1(&rt, "glob", json!({"pattern": pattern})).await;
        ws.assert_result_clean(&format!("glob {pattern}"), &rt, &r);
        assert_eq!(
            r.error_type(),
            Some(toolgate::ir::ErrorType::PolicyDenied),
            "glob {pattern}: {}",
            r.summary()
        );
    }
    let mut withheld = Vec::new();
    for pattern in ["**/*", "**/.env", "**/*.pem", "deploy/**", "keys/*"] {
        let r = call1(&rt, "glob", json!({"pattern": pattern})).await;
        ws.assert_result_clean(&format!("glob {pattern}"), &rt, &r);
        let listed = names(&r);
        assert_eq!(leaks(&listed), Vec::<String>::new(), "glob {pattern}");
        withheld.push((
            pattern,
            r.structured().unwrap()["withheld"].as_u64().unwrap(),
        ));
    }
    // The walk honours .gitignore before it judges protection: the workspace ignores `.env`
    // and `*.pem`, so those are skipped as ignored, and `**/*` withholds .git,
    // config/.env.production, deploy/.aws, keys/id_rsa and vendor/lib/.git. The count does
    // not depend on the pattern.
    assert_eq!(
        withheld,
        vec![
            ("**/*", 5),
            ("**/.env", 5),
            ("**/*.pem", 5),
            ("deploy/**", 1),
            ("keys/*", 1),
        ]
    );
    let r = call1(&rt, "glob", json!({"pattern": "**/*"})).await;
    assert_eq!(
        names(&r),
        vec!["README.md", "src/app.py", "vendor/lib/lib.py"]
    );

    for (path, entries, count) in [
        (
            ".",
            vec![
                "config",
                "deploy",
                "keys",
                "src",
                "vendor",
                ".gitignore",
                "README.md",
            ],
            2,
        ),
        ("keys", vec![], 2),
        ("vendor/lib", vec!["lib.py"], 2),
        ("deploy", vec![], 1),
    ] {
        let r = call1(&rt, "list_dir", json!({"path": path})).await;
        ws.assert_result_clean(&format!("list_dir {path}"), &rt, &r);
        assert_eq!(
            (names(&r), r.structured().unwrap()["withheld"].as_u64()),
            (
                entries.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                Some(count)
            ),
            "list_dir {path}"
        );
    }
    for path in [".git", ".git/hooks", "vendor/lib/.git", "deploy/.aws"] {
        let r = call1(&rt, "list_dir", json!({"path": path})).await;
        assert_eq!(
            r.error_type(),
            Some(ErrorType::PolicyDenied),
            "list_dir {path}"
        );
    }
}

/// Route: a hard link to `.env` under an innocent name (made by anything that can make
/// one: a command tool, the person, a checkout). read_file refuses it, search_files withholds
/// it without matching it, list_dir does not list it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hard_link_to_a_secret_is_refused_and_withheld() {
    let ws = HostileWorkspace::new();
    let rt = ws.runtime();
    std::fs::hard_link(ws.path().join(".env"), ws.path().join("src/notes.txt")).unwrap();
    let marker = &ws.secrets[0].marker;
    let guess = format!("[{}]{}", &marker[..1], &marker[1..]);
    let r = call1(&rt, "read_file", json!({"path": "src/notes.txt"})).await;
    ws.assert_result_clean("read_file of a hard link", &rt, &r);
    assert_eq!(
        (r.error_type(), r.summary()),
        (
            Some(ErrorType::PolicyDenied),
            "`src/notes.txt` is another name (a hard link) of a protected file (`.env`): Secrets are never readable or writable by tools; nothing was read"
        )
    );
    for pattern in [guess.as_str(), "absent-pattern"] {
        let r = call1(
            &rt,
            "search_files",
            json!({"pattern": pattern, "path": "src"}),
        )
        .await;
        ws.assert_result_clean("search_files over a hard link", &rt, &r);
        let s = r.structured().unwrap();
        assert_eq!(
            (s["total_files"].as_u64(), s["withheld"].as_u64()),
            (Some(0), Some(1)),
            "{pattern}"
        );
    }
    let r = call1(&rt, "list_dir", json!({"path": "src"})).await;
    assert_eq!(names(&r), vec!["app.py"]);
    // Made after the index was first built: found too.
    std::fs::hard_link(
        ws.path().join("keys/id_rsa"),
        ws.path().join("src/later.txt"),
    )
    .unwrap();
    let r = call1(&rt, "read_file", json!({"path": "src/later.txt"})).await;
    ws.assert_result_clean("read_file of a later hard link", &rt, &r);
    assert_eq!(r.error_type(), Some(ErrorType::PolicyDenied));
}

/// Swaps two entries back and forth atomically until stopped.
fn swapper(root: &Path, a: &str, b: &str, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    let (a, b) = (root.join(a), root.join(b));
    std::thread::spawn(move || {
        let mut swaps = 0u64;
        while !stop.load(Ordering::Relaxed) {
            rustix::fs::renameat_with(
                rustix::fs::CWD,
                &a,
                rustix::fs::CWD,
                &b,
                rustix::fs::RenameFlags::EXCHANGE,
            )
            .unwrap();
            swaps += 1;
        }
        swaps
    })
}

/// What the calls of a race ended as.
#[derive(Debug, Default)]
struct Tally {
    ok: u32,
    denied: u32,
    sandbox: u32,
    other: Vec<String>,
}

impl Tally {
    fn add(&mut self, r: &ToolResult) {
        match r.status() {
            Status::Success => self.ok += 1,
            Status::Denied => self.denied += 1,
            Status::SandboxViolation => self.sandbox += 1,
            _ => self.other.push(r.summary().to_owned()),
        }
    }
}

/// Route: links swapped in between the check and the open, by a thread exchanging a file with
/// a link to `.env` and a folder with a link to `deploy/.aws`, while concurrent read_file
/// calls run through the runtime: no secret byte reaches the model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_racing_link_swaps_never_leak() {
    let ws = HostileWorkspace::new();
    let rt = Arc::new(ws.runtime());
    ws.fixture.write("data.txt", "harmless\n");
    symlink(".env", ws.path().join("data.alt")).unwrap();
    ws.fixture.write("dir/credentials", "harmless\n");
    symlink("deploy/.aws", ws.path().join("dir.alt")).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let threads = [
        swapper(ws.path(), "data.txt", "data.alt", stop.clone()),
        swapper(ws.path(), "dir", "dir.alt", stop.clone()),
    ];
    let mut tasks = Vec::new();
    for t in 0..10 {
        let rt = rt.clone();
        tasks.push(tokio::spawn(async move {
            let mut results = Vec::new();
            for i in 0..30 {
                let path = if i % 2 == 0 {
                    "data.txt"
                } else {
                    "dir/credentials"
                };
                let s = session(&format!("r{t}"));
                let c = call(&format!("c{t}-{i}"), "read_file", json!({"path": path}));
                results.push(run1(&rt, &s, c).await);
            }
            results
        }));
    }
    let mut tally = Tally::default();
    for task in tasks {
        for r in task.await.unwrap() {
            ws.assert_result_clean("read_file racing a link swap", &rt, &r);
            if r.status() == Status::Success {
                assert!(
                    r.structured().unwrap()["content"]
                        .as_str()
                        .unwrap()
                        .contains("harmless")
                );
            }
            tally.add(&r);
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    eprintln!("300 reads racing {swaps} swaps: {tally:?}");
    assert_eq!(tally.other, Vec::<String>::new());
    assert_eq!(tally.ok + tally.denied + tally.sandbox, 300);
}

/// Route: writes racing a folder exchanged with a link into `.git/hooks` (and the nested
/// repository's): no write lands in either, whatever the interleaving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_racing_link_swaps_never_land_in_git() {
    let ws = HostileWorkspace::new();
    let rt = Arc::new(approving(&ws));
    std::fs::create_dir_all(ws.path().join(".git/hooks")).unwrap();
    std::fs::create_dir_all(ws.path().join("vendor/lib/.git/hooks")).unwrap();
    std::fs::create_dir(ws.path().join("out")).unwrap();
    symlink(".git/hooks", ws.path().join("out.alt")).unwrap();
    std::fs::create_dir(ws.path().join("out2")).unwrap();
    symlink("vendor/lib/.git/hooks", ws.path().join("out2.alt")).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let threads = [
        swapper(ws.path(), "out", "out.alt", stop.clone()),
        swapper(ws.path(), "out2", "out2.alt", stop.clone()),
    ];
    let mut tasks = Vec::new();
    for t in 0..10 {
        let rt = rt.clone();
        tasks.push(tokio::spawn(async move {
            let mut results = Vec::new();
            for i in 0..25 {
                let folder = if i % 2 == 0 { "out" } else { "out2" };
                let s = session(&format!("w{t}"));
                let c = call(
                    &format!("w{t}-{i}"),
                    "write_file",
                    json!({"path": format!("{folder}/pre-commit"), "content": "#!/bin/sh\necho pwned\n", "overwrite": true}),
                );
                results.push(run1(&rt, &s, c).await);
            }
            results
        }));
    }
    let mut tally = Tally::default();
    for task in tasks {
        for r in task.await.unwrap() {
            tally.add(&r);
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    eprintln!("250 writes racing {swaps} swaps: {tally:?}");
    for hook in [".git/hooks/pre-commit", "vendor/lib/.git/hooks/pre-commit"] {
        assert!(!ws.path().join(hook).exists(), "a write landed in {hook}");
    }
    let leftovers: Vec<_> = std::fs::read_dir(ws.path().join(".git/hooks"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n.to_string_lossy().starts_with(".toolgate"))
        .collect();
    assert_eq!(leftovers, Vec::<std::ffi::OsString>::new());
    assert_eq!(tally.other, Vec::<String>::new());
    assert_eq!(tally.ok + tally.denied + tally.sandbox, 250);
}

/// Route: a FIFO in the workspace. read_file returns at once with a clear error (it used to
/// block past its timeout); search_files, glob and list_dir walk past it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_never_blocks_a_builtin() {
    let ws = HostileWorkspace::new();
    let rt = ws.runtime();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        ws.path().join("src/pipe"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let r = call1(&rt, "read_file", json!({"path": "src/pipe"})).await;
    assert_eq!(
        (r.error_type(), r.summary()),
        (
            Some(ErrorType::SemanticValidationError),
            "`src/pipe` is a FIFO (named pipe), not a regular file; nothing was read"
        )
    );
    let r = call1(&rt, "search_files", json!({"pattern": "x", "path": "src"})).await;
    assert!(r.is_success(), "{}", r.summary());
    let r = call1(&rt, "list_dir", json!({"path": "src"})).await;
    assert_eq!(
        r.structured().unwrap()["entries"],
        json!([{"name": "app.py", "kind": "file", "size": 89}, {"name": "pipe", "kind": "other", "size": 0}])
    );
}
