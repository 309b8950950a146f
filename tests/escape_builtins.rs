//! The escape suite, builtin tools: every route by which a builtin could hand a protected byte
//! to the model, or write into `.git`, in the hostile workspace — protected targets named
//! outright, searches used as an oracle, walks over the tree, hard links, links swapped in
//! while calls run, FIFOs, a 1 GiB file — and the artifact budgets.
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
use common::{Counters, Fixture, Scripted, bind_handlers, call, run1, shim};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use toolgate::ir::{Bundle, ErrorType, Status};
use toolgate::runtime::approval::ApprovalOutcome;
use toolgate::runtime::{RuntimeBuilder, Session, ToolResult, ToolRuntime};

fn session(id: &str) -> Session {
    Session::new(id, "interactive")
}

/// A runtime over the fixture project with the bundle changed (budgets, timeouts), writes
/// approved.
fn runtime_with(f: &Fixture, edit: impl FnOnce(&mut Bundle)) -> ToolRuntime {
    let mut bundle = (*common::bundle()).clone();
    edit(&mut bundle);
    let b = RuntimeBuilder::from_bundle(bundle)
        .workspace(f.path())
        .state_dir(f.state.path())
        .shim(shim())
        .approver(Scripted::new(ApprovalOutcome::AllowOnce));
    bind_handlers(b, Arc::new(Counters::default()))
        .build()
        .unwrap()
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
    let mut withheld = Vec::new();
    for pattern in [
        "**/*",
        "**/.env",
        "**/*.pem",
        "**/.git/**",
        ".git/**",
        "vendor/lib/.git/**",
        "deploy/**",
        "keys/*",
    ] {
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
            ("**/.git/**", 5),
            (".git/**", 1),
            ("vendor/lib/.git/**", 1),
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
/// one: a process tool, the person, a checkout). read_file refuses it, search_files withholds
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

/// The child half of the 1 GiB test, run in a process of its own so its peak RSS is its own.
const RSS_CHILD: &str = "TOOLGATE_RSS_CHILD";

fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Route: a 1 GiB file. With the default budgets read_file refuses it at once (OUTPUT_LIMIT);
/// with `budgets.read_file_size` raised it streams it — the whole file hashed — and its peak
/// RSS grows by a few MiB at most, measured in a child process (VmHWM, reset before the read).
#[test]
fn a_1gib_file_is_read_in_bounded_memory() {
    const GIB: u64 = 1 << 30;
    if let Ok(dir) = std::env::var(RSS_CHILD) {
        let f = Fixture {
            ws: tempfile::TempDir::new_in(&dir).unwrap(),
            state: tempfile::TempDir::new_in(&dir).unwrap(),
        };
        std::fs::File::create(f.path().join("huge.log"))
            .unwrap()
            .set_len(GIB)
            .unwrap();
        f.write("small.txt", "warm up\n");
        let rt = runtime_with(&f, |b| {
            b.project.budgets.read_file_size = 2 * GIB;
            for t in &mut b.tools {
                if t.name == "read_file" {
                    t.timeout_ms = 600_000;
                }
            }
        });
        let tokio = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        tokio.block_on(async {
            let warm = call1(&rt, "read_file", json!({"path": "small.txt"})).await;
            assert!(warm.is_success(), "{}", warm.summary());
            // Reset the peak to the current RSS (Linux ≥ 4.0); else the peak so far stands.
            let _ = std::fs::write("/proc/self/clear_refs", "5");
            let before = status_kib("VmHWM:");
            let r = call1(&rt, "read_file", json!({"path": "huge.log"})).await;
            let after = status_kib("VmHWM:");
            assert!(r.is_success(), "{}", r.summary());
            let s = r.structured().unwrap();
            assert_eq!(
                (s["total_lines"].as_u64(), s["truncated"].as_bool()),
                (Some(1), Some(true))
            );
            println!("\nPEAK-RSS-KIB {before} {after}");
        });
        return;
    }
    // The default cap refuses the file without reading it.
    let f = Fixture::new();
    std::fs::File::create(f.path().join("huge.log"))
        .unwrap()
        .set_len(GIB)
        .unwrap();
    let rt = runtime_with(&f, |_| {});
    let r = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(call1(&rt, "read_file", json!({"path": "huge.log"})));
    assert_eq!(
        (r.error_type(), r.summary()),
        (
            Some(ErrorType::OutputLimit),
            "`huge.log` is 1 GiB (1073741824 bytes); read_file works on files up to 256 MiB (budgets.read_file_size in toolgate.yaml). Search it with search_files, or read a part with a process tool."
        )
    );
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_1gib_file_is_read_in_bounded_memory",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(RSS_CHILD, env!("CARGO_TARGET_TMPDIR"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("PEAK-RSS-KIB "))
        .unwrap_or_else(|| panic!("no measurement in:\n{stdout}"));
    let kib: Vec<u64> = line.split(' ').map(|n| n.parse().unwrap()).collect();
    let grew = kib[1].saturating_sub(kib[0]);
    eprintln!(
        "read_file of 1 GiB: peak RSS {} KiB before, {} KiB after (+{grew} KiB)",
        kib[0], kib[1]
    );
    assert!(grew < 16 * 1024, "peak RSS grew by {grew} KiB");
}

/// Budgets: an allowed command printing far more than the per-call artifact budget keeps an
/// artifact of exactly the budget, and the result says how much was dropped; once the
/// session's budget is spent, no artifact is kept and the result says why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn artifact_budgets_stop_what_a_call_and_a_session_keep() {
    let f = Fixture::new();
    let rt = runtime_with(&f, |b| {
        b.project.budgets.call_artifacts = 1 << 20;
        b.project.budgets.session_artifacts = (5 << 20) / 2;
    });
    let s = session("budget");
    let big = |i: u32| {
        call(
            &format!("b{i}"),
            "shell",
            json!({"command": "head -c 6000000 /dev/urandom | base64"}),
        )
    };
    let r = run1(&rt, &s, big(1)).await;
    assert!(r.is_success(), "{}", r.summary());
    assert_eq!(r.artifacts().len(), 1, "{}", r.summary());
    assert_eq!(r.artifacts()[0].size, 1 << 20);
    let stored = rt.artifacts().get(&r.artifacts()[0].id).unwrap();
    assert_eq!(stored.len(), 1 << 20);
    assert!(
        r.summary().contains(
            "the full stdout could not be kept: the artifact keeps the first 1 MiB (1048576 bytes): the per-call artifact budget (budgets.call_artifacts, 1 MiB) was reached; "
        ),
        "{}",
        r.summary()
    );
    let r = run1(&rt, &s, big(2)).await;
    assert_eq!(r.artifacts()[0].size, 1 << 20);
    let r = run1(&rt, &s, big(3)).await;
    assert_eq!(r.artifacts()[0].size, 1 << 19, "{}", r.summary());
    assert!(
        r.summary().contains(
            "this session's artifact budget (budgets.session_artifacts, 2.5 MiB) was reached"
        ),
        "{}",
        r.summary()
    );
    let r = run1(&rt, &s, big(4)).await;
    assert_eq!(r.artifacts().len(), 0, "{}", r.summary());
    assert!(
        r.summary().contains("the full stdout could not be kept: no artifact was kept: this session's artifact budget"),
        "{}",
        r.summary()
    );
    // Output and summary still come from the whole stream.
    assert!(r.output().unwrap().contains("omitted"));
    // Another session starts with its own budget.
    let r = run1(&rt, &session("other"), big(5)).await;
    assert_eq!(r.artifacts()[0].size, 1 << 20);
}

/// `budgets` in toolgate.yaml: sizes in the size syntax, absent keys at their defaults; a size
/// that does not parse is an error located in the file.
#[test]
fn budgets_are_read_from_toolgate_yaml() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("toolgate.yaml");
    let load = || {
        toolgate::check::check_specs(&toolgate::spec::load::LoadOptions {
            paths: vec![common::repo().join("tool-specs/read_file.yaml")],
            config: Some(project.clone()),
            cwd: dir.path().to_path_buf(),
        })
    };
    std::fs::write(
        &project,
        "budgets: {call_artifacts: 64MiB, artifact_store: 10GB, read_file_size: 4096}\n",
    )
    .unwrap();
    let budgets = load().unwrap().bundle().unwrap().project.budgets;
    let defaults = toolgate::ir::Budgets::default();
    assert_eq!(
        budgets,
        toolgate::ir::Budgets {
            call_artifacts: 64 << 20,
            artifact_store: 10_000_000_000,
            read_file_size: 4096,
            ..defaults
        }
    );
    std::fs::write(&project, "budgets: {session_artifacts: 1TiB}\n").unwrap();
    let message = match load() {
        Ok(checked) => format!("{:?}", checked.diagnostics),
        Err(e) => e.to_string(),
    };
    assert!(message.contains("unknown size unit `TiB`"), "{message}");
}
